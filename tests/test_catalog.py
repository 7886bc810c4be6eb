"""The curated model catalog and the memory estimate behind its fit labels."""

import json

import pytest
from family_templates import FAMILY_TEMPLATES

from engine.models.catalog import (
    FIT,
    NO_FIT,
    SLOW,
    CatalogError,
    entry_need,
    estimate,
    file_need,
    fit,
    gguf_kv_shape,
    kv_bytes_per_token,
    load_catalog,
    ram_required_gb,
    recommend,
)
from engine.models.hub import check_names

GB = 10**9


def test_the_catalog_covers_the_families_people_run():
    entries = load_catalog()
    assert len(entries) >= 8
    assert {e.family for e in entries} >= {"llama3.2", "qwen2.5", "gemma3", "phi4-mini", "smollm2"}
    for e in entries:
        check_names(e.repo, e.file)  # a valid Hub repo id and .gguf file name
        assert 0.4e9 <= e.parameters <= 4.5e9, e.id
        assert e.family in FAMILY_TEMPLATES, e.id  # every family's real template is tested
        assert e.licence_url.startswith("https://") and e.licence and e.good_for
        # a 4-bit file holds roughly 0.5-0.8 bytes per parameter (embeddings kept larger)
        assert 0.45 < e.size_bytes / e.parameters < 0.9, (e.id, e.size_bytes / e.parameters)
        assert e.ram_required_gb == ram_required_gb(e), e.id  # the documented rule, kept in step
        assert e.context_length >= 8192 and e.quantization.startswith("Q")
    pinned = [e for e in entries if e.sha256]
    assert pinned and all(e.size_exact for e in pinned)


def test_the_estimate_reads_the_kv_shape_from_the_gguf_header(bundled_path):
    layers, kv_heads, head_dim, vocab = gguf_kv_shape(bundled_path)
    assert (layers, kv_heads, head_dim, vocab) == (30, 3, 64, 49152)  # SmolLM2-135M
    assert kv_bytes_per_token(layers, kv_heads, head_dim) == 23040  # ~23 kB a cell (README)
    need = file_need(bundled_path, n_ctx=4096, companions=4)
    assert need.weights == bundled_path.stat().st_size
    assert need.kv_context == 23040 * 4096 and need.kv_director == 23040 * 1024
    assert need.kv_companions == 23040 * (2048 + 512) * 4


def test_more_companions_longer_context_and_ungrouped_kv_heads_need_more():
    entries = {e.id: e for e in load_catalog()}
    base = entry_need(entries["llama-3.2-3b-instruct"]).total
    assert entry_need(entries["llama-3.2-3b-instruct"], companions=1).total < base
    assert entry_need(entries["llama-3.2-3b-instruct"], n_ctx=8192).total > base
    # SmolLM2 1.7B has no grouped KV heads: a smaller file than Llama 3.2 3B, a larger KV cache
    smol, llama = entries["smollm2-1.7b-instruct"], entries["llama-3.2-3b-instruct"]
    assert smol.size_bytes < llama.size_bytes and smol.kv_bytes_per_token > llama.kv_bytes_per_token
    assert entry_need(smol).kv_companions > entry_need(llama).kv_companions


@pytest.mark.parametrize(
    "need,total,available,label",
    [
        (3 * GB, 16 * GB, 8 * GB, FIT),
        (7.5 * GB, 16 * GB, 8 * GB, SLOW),  # more than 90% of what is free, less than 90% of all
        (15 * GB, 16 * GB, 8 * GB, NO_FIT),
        (2 * GB, 4 * GB, 2 * GB, SLOW),
    ],
)
def test_fit_labels_follow_free_and_total_memory(need, total, available, label):
    f = fit(int(need), int(total), int(available))
    assert f.label == label and "GB" in f.reason and "\n" not in f.reason


def test_the_recommended_pick_is_the_best_entry_that_fits():
    entries = load_catalog()
    fits = {e.id: fit(entry_need(e), 8 * GB, 4 * GB) for e in entries}
    pick = recommend(entries, fits)
    assert fits[pick].label == FIT
    better = entries[: [e.id for e in entries].index(pick)]
    assert all(fits[e.id].label != FIT for e in better)
    assert recommend(entries, {e.id: fit(entry_need(e), GB, GB // 2) for e in entries}) is None


def test_the_bundled_model_fits_on_small_machines(bundled_path):
    assert fit(file_need(bundled_path), 2 * GB, GB).label == FIT


@pytest.mark.parametrize(
    "change,needle",
    [
        (lambda d: d["models"][0].pop("repo"), "field 'repo'"),
        (lambda d: d["models"][1].update(size_bytes="big"), "field 'size_bytes'"),
        (lambda d: d["models"][2].update(sha256="ABC"), "field 'sha256'"),
        (lambda d: d["models"][0].update(file="model.bin"), ".gguf"),
        (lambda d: d.update(format=99), "format-1"),
    ],
)
def test_a_damaged_catalog_is_one_line_naming_the_field(tmp_path, change, needle):
    from engine.models.catalog import catalog_path

    data = json.loads(catalog_path().read_text())
    change(data)
    f = tmp_path / "catalog.json"
    f.write_text(json.dumps(data))
    with pytest.raises(CatalogError) as e:
        load_catalog(f)
    msg = str(e.value)
    assert needle in msg and "\n" not in msg and len(msg) < 300


def test_estimate_counts_each_part():
    need = estimate(1000, 10, 100, n_ctx=4096, companions=2, history_tokens=0)
    assert (
        need.kv_context == 40960 and need.kv_companions == 2 * 40960 and need.kv_director == 10240
    )
    assert (
        need.total
        == need.weights + need.kv_context + need.kv_director + need.kv_companions + need.overhead
    )


def test_the_cli_lists_the_catalog_with_fit_labels(capsys, monkeypatch):
    from mascot_cli.main import main

    monkeypatch.setattr("mascot_cli.library.memory_info", lambda: (8 * GB, 4 * GB))
    assert main(["models", "catalog", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in rows] == [e.id for e in load_catalog()]
    assert sum(r["recommended"] for r in rows) == 1 and {r["fit"] for r in rows} >= {FIT, SLOW}
    assert main(["models", "catalog"]) == 0
    out = capsys.readouterr().out
    assert "8.0 GB of memory, 4.0 GB free" in out and "mascot models get" in out


def test_the_cli_gets_a_catalog_model_from_the_stand_in_hub(
    capsys, monkeypatch, tmp_path, bundled_path
):
    import hashlib

    from test_hub import FILE, PATH, REPO, StandInHub

    from engine.models.catalog import catalog_path as real_path
    from engine.storage import Store
    from mascot_cli.main import main

    data = json.loads(real_path().read_text())
    entry = dict(
        data["models"][0],
        id="tiny-pick",
        repo=REPO,
        file=FILE,
        size_bytes=bundled_path.stat().st_size,
        sha256=hashlib.sha256(bundled_path.read_bytes()).hexdigest(),
        md5=None,
    )
    f = tmp_path / "catalog.json"
    f.write_text(json.dumps({**data, "models": [entry], "recommend_order": []}))
    monkeypatch.setattr("engine.models.catalog.catalog_path", lambda: f)
    hub = StandInHub({PATH: bundled_path})
    monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
    try:
        assert main(["models", "get", "tiny-pick"]) == 0
        assert main(["models", "get", "no-such-model"]) != 0
    finally:
        hub.close()
    out, err = capsys.readouterr()
    assert "Downloaded and verified" in out and "--model tiny-pick" in out
    assert "No catalog model 'no-such-model'" in err and "Traceback" not in err
    store = Store()
    try:
        assert [m["name"] for m in store.models()] == ["tiny-pick"]
    finally:
        store.close()


@pytest.mark.parametrize("content", [b"not a model at all" * 10, "cut"])
def test_an_unreadable_header_is_one_line(tmp_path, bundled_path, content):
    from engine.errors import ModelError

    f = tmp_path / "odd.gguf"
    f.write_bytes(bundled_path.read_bytes()[:5000] if content == "cut" else content)
    with pytest.raises(ModelError) as e:
        file_need(f)
    assert "\n" not in str(e.value) and str(f) in str(e.value)
