"""mascot-bench --memory-compare plays the two conditions round by round (fake conversations):
the order alternates as asked and the figures come from each condition's own rounds."""

from __future__ import annotations

import argparse

import pytest

from mascot_cli import bench


def test_memory_compare_takes_turns_round_by_round(monkeypatch):
    played = []

    def fake_rounds(
        rounds, threads, n_ctx, max_tokens=48, history_tokens=0, memory=False, raw_probe=True
    ):
        assert not raw_probe
        secs = 2.0 if memory else 1.0
        out = {"turns": [], "rounds": []}
        for r in range(rounds):
            played.append(("on" if memory else "off", r + 1))
            out["turns"].append(
                {
                    "round": r + 1,
                    "prompt": 100,
                    "prefilled": 10,
                    "prefilled_in_turn": 10,
                    "new": 10,
                    "tokens": 5,
                    "ttft_ms": 50.0,
                    "note_tokens": 8 if memory else 0,
                    "decode_tps": 100.0,
                }
            )
            out["rounds"].append(
                {
                    "round": r + 1,
                    "seconds": secs,
                    "director_s": 0.1,
                    "read_ahead_s": 0.0,
                    "note_s": 0.1 if memory else 0.0,
                }
            )
            yield r + 1
        return out

    monkeypatch.setattr(bench, "conversation_rounds", fake_rounds)
    args = argparse.Namespace(threads=1, rounds=3, n_ctx=1024, history_tokens=0, on_first=False)
    r = bench.memory_compare(args)
    assert played == [("off", 1), ("on", 1), ("off", 2), ("on", 2), ("off", 3), ("on", 3)]
    assert r["round_time_growth"] == 2.0 and r["memory_on"]["prefill_ratio"] == 1.0
    assert "load_1min" in r and "round time on/off" in bench.memory_table(r)
    assert r["memory_on"]["reply_tokens_per_turn"] == 5 and len(r["memory_on_turns"]) == 3
    # memory's own cost: 0.1 s making notes + 8 note tokens at 10 tokens per 50 ms, in a 2 s round
    assert r["memory_on"]["memory_share"] == pytest.approx((0.1 + 0.04) / 2.0)
    assert r["memory_off"]["memory_share"] == 0.0
    played.clear()
    bench.memory_compare(argparse.Namespace(**{**vars(args), "on_first": True}))
    assert played[:2] == [("on", 1), ("off", 1)]
