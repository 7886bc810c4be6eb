import os

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


@pytest.fixture(autouse=True)
def mascot_home(tmp_path, monkeypatch):
    """Every test gets its own empty user data folder."""
    home = tmp_path / "mascot-home"
    monkeypatch.setenv("MASCOT_HOME", str(home))
    monkeypatch.delenv("MASCOT_REGION", raising=False)
    # no voices adapter: a test runs on the plain bundled model (building the voices model takes
    # seconds per data folder); tests/test_voices_model.py gives one when it tests it
    monkeypatch.setenv("MASCOT_VOICES_ADAPTER", str(tmp_path / "no-voices-adapter.gguf"))
    return home


@pytest.fixture(scope="session")
def pool():
    """One llama.cpp runtime for the bundled model, shared by the whole test session."""
    from engine.llm.runtime import RuntimePool

    return RuntimePool(n_ctx=2048)


@pytest.fixture(scope="session")
def bundled_path():
    from engine.models.registry import bundled_model_path

    return bundled_model_path()


@pytest.fixture
def real_backend_for(pool, bundled_path):
    def factory(model=None):
        return pool.get(model or bundled_path)

    return factory


@pytest.fixture
def store():
    from engine.storage import Store

    s = Store()
    yield s
    s.close()


# -- the voices model (engine/models/voices.py) --------------------------------------------------


@pytest.fixture(scope="session")
def voices_adapter(tmp_path_factory, bundled_path):
    """A deterministic stand-in for the trained voices adapter: random rank-16 LoRA matrices on
    all seven projections of every layer (alpha 32), laid out as training/adapter_gguf.py writes
    them, strong enough to change most of the bundled model's replies."""
    from engine.llm.adapters import synthetic_adapter
    from engine.models.voices import ADAPTER_FILE

    path = tmp_path_factory.mktemp("voices-adapter") / ADAPTER_FILE
    return synthetic_adapter(bundled_path, path, rank=16, alpha=32, seed=7, scale=0.04)


@pytest.fixture(scope="session")
def voices_built(tmp_path_factory, voices_adapter):
    """The voices model built once from the stand-in adapter: a data folder's ``models/``."""
    from engine.models.voices import ensure_voices

    home = tmp_path_factory.mktemp("voices-home")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MASCOT_HOME", str(home))
        mp.setenv("MASCOT_VOICES_ADAPTER", str(voices_adapter))
        result = ensure_voices()
    assert result.status == "built", result.message
    return home / "models"


@pytest.fixture
def voices_home(mascot_home, monkeypatch, voices_adapter):
    """A data folder where the stand-in is the shipped voices adapter (nothing built yet)."""
    monkeypatch.setenv("MASCOT_VOICES_ADAPTER", str(voices_adapter))
    return mascot_home


@pytest.fixture
def voices_ready(voices_home, voices_built):
    """A data folder where the voices model was built on an earlier run."""
    import shutil

    shutil.copytree(voices_built, voices_home / "models")
    return voices_home
