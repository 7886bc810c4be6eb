import os

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


@pytest.fixture(autouse=True)
def mascot_home(tmp_path, monkeypatch):
    """Every test gets its own empty user data folder."""
    home = tmp_path / "mascot-home"
    monkeypatch.setenv("MASCOT_HOME", str(home))
    monkeypatch.delenv("MASCOT_REGION", raising=False)
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
