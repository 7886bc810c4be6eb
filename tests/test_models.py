"""GGUF checks before llama.cpp sees a file, and the model registry."""

import shutil

import pytest

from engine.errors import ModelError
from engine.models.registry import BUNDLED_NAME, ModelRegistry, inspect_gguf


def one_line(err):
    msg = str(err.value)
    assert "\n" not in msg and len(msg) < 300
    return msg


def test_bundled_model_is_inspected(bundled_path):
    info = inspect_gguf(bundled_path)
    assert info.architecture == "llama"
    assert info.quantization == "Q4_1"
    assert info.context_length >= 2048
    assert "<|im_start|>" in info.chat_template
    assert len(info.sha256) == 64 and 90e6 < info.size < 110e6


@pytest.mark.parametrize(
    "content,needle",
    [
        (b"", "empty"),
        (b"not a model" * 100, "not a GGUF"),
        (b"GGUF", "too small"),
    ],
)
def test_bad_files_are_refused_with_one_line(tmp_path, content, needle):
    f = tmp_path / "bad.gguf"
    f.write_bytes(content)
    with pytest.raises(ModelError) as e:
        inspect_gguf(f)
    assert needle in one_line(e)


def test_random_bytes_after_magic(tmp_path):
    import os

    f = tmp_path / "random.gguf"
    f.write_bytes(b"GGUF" + os.urandom(50_000))
    with pytest.raises(ModelError) as e:
        inspect_gguf(f)
    assert "damaged" in one_line(e) or "truncated" in one_line(e)


@pytest.mark.parametrize("fraction", [0.001, 0.5, 0.99])
def test_truncated_model_is_refused(tmp_path, bundled_path, fraction):
    data = bundled_path.read_bytes()
    f = tmp_path / "cut.gguf"
    f.write_bytes(data[: int(len(data) * fraction)])
    with pytest.raises(ModelError) as e:
        inspect_gguf(f)
    assert "truncated" in one_line(e) or "damaged" in one_line(e)


def test_unsupported_architecture_is_refused(tmp_path):
    import gguf
    import numpy as np

    f = tmp_path / "vision.gguf"
    w = gguf.GGUFWriter(str(f), "clip")
    w.add_tensor("t", np.zeros((64, 64), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    with pytest.raises(ModelError) as e:
        inspect_gguf(f)
    assert "architecture 'clip'" in one_line(e)


def test_registry_add_list_verify(store, tmp_path, bundled_path):
    copy = tmp_path / "my-model.gguf"
    shutil.copy(bundled_path, copy)
    reg = ModelRegistry(store)
    info = reg.add(copy, name="mine")
    assert [m.name for m in reg.list()] == [BUNDLED_NAME, "mine"]
    assert reg.get("mine").sha256 == info.sha256
    ok, msg = reg.verify("mine")
    assert ok and "OK" in msg
    with open(copy, "r+b") as f:  # damage one byte of tensor data
        f.seek(len(bundled_path.read_bytes()) - 10)
        f.write(b"\xff")
    ok, msg = reg.verify("mine")
    assert not ok and "sha256 changed" in msg
    copy.unlink()
    ok, msg = reg.verify("mine")
    assert not ok and "gone" in msg


def test_missing_model_name_lists_alternatives(store):
    from engine.errors import NotFound

    with pytest.raises(NotFound) as e:
        ModelRegistry(store).get("nope")
    assert BUNDLED_NAME in one_line(e)


def test_director_options_come_only_from_a_director_manifest(tmp_path):
    """What the app takes from a trained Director's manifest: its directive mode and prior.
    Anything else (another kind of model, a damaged or odd value, no manifest) leaves the app's
    defaults in place instead of failing."""
    import json

    from engine.models.registry import director_options

    gguf = tmp_path / "d.gguf"
    gguf.write_bytes(b"GGUF")
    manifest = tmp_path / "manifest.json"
    assert director_options(gguf) == {} and director_options("") == {}
    manifest.write_text(
        json.dumps({"role": "director", "directive_mode": "menu", "config": {"balance_prior": 3}})
    )
    assert director_options(gguf) == {"directive_mode": "menu", "balance_prior": 3.0}
    manifest.write_text(
        json.dumps(
            {"role": "director", "directive_mode": "poetry", "config": {"balance_prior": -1}}
        )
    )
    assert director_options(gguf) == {}
    manifest.write_text(json.dumps({"role": "director", "config": {"balance_prior": True}}))
    assert director_options(gguf) == {}
    manifest.write_text(
        json.dumps({"persona": "Mia", "group": "support", "directive_mode": "menu"})
    )
    assert director_options(gguf) == {}
    manifest.write_text("{not json")
    assert director_options(gguf) == {}
