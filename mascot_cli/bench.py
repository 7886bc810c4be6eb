"""``mascot-bench``: how close group turns come to raw llama.cpp speed, on the bundled model.

Measured side by side in one run (same model file, threads, context and batch settings):

* raw llama.cpp prefill and decode tokens/s vs the app's per-companion decode speed
  (``decode_ratio``: for every companion turn, the app's decode speed (tokens/s after the first
  token, as the chat layer received them) over raw llama.cpp's at that round's context length,
  measured right after the round in the same process with the same settings and sampler
  (``RawDecodeProbe``), so that both see the machine in the same state; the median over turns.
  Decode slows as the context grows, so a single raw number would compare unlike things. Raw
  decode is also measured after the conversation at five context lengths (median of 3 runs
  each) and shown by context, with the ratio against those, interpolated, for comparison);
* a long conversation (30 rounds, 3 companions; 10 with ``--quick``): tokens prefilled per
  companion turn vs tokens that are new to that companion since its last turn
  (``prefill_ratio``, after the first round), and time to first token per turn
  (``ttft_growth`` = median of the last quarter of turns / median of the first quarter after
  round 1);
* share of round time spent in the Director;
* as in the app, before each round every companion and the Director read what is new into
  their KV caches (``GroupChat.warm``: the app does it while the user reads and types); that
  read-ahead is not round time, but its tokens count in ``prefill_ratio`` and its time is shown;
* memory (RSS and PSS, from /proc/self/smaps_rollup) of a process chatting with 1 and with 4
  companions on the same model file (``memory_ratio_4_agents`` = PSS 4 / PSS 1);
* cold start: a fresh process from launch to the first streamed token.

Usage::

    mascot-bench [--quick] [--json OUT.json] [--rounds N] [--threads N]
    mascot-bench --shape llama-3.2-3b-instruct [--rounds N] [--json OUT.json]

``--shape NAME`` measures on a random-weight model with a catalog entry's shape instead of the
bundled model, beside single-cache front ends replaying the same conversation
(``mascot_cli.bench_shape``).

It prints a table and, with ``--json``, writes the numbers. It is a benchmark, not a test: it
asserts nothing; the targets are shown next to the numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from engine.chat.group import GroupChat
from engine.chat.settings import DEFAULT_HISTORY_TOKENS, ChatSettings
from engine.doctor import cpu_name
from engine.errors import InputError
from engine.llm.adapters import mem_kb
from engine.llm.check import build_features
from engine.llm.runtime import default_threads
from engine.models.registry import bundled_model_path
from engine.persona_files import load_set
from engine.personas import PersonaSet
from mascot_cli.bench_conversation import backend_factory, conversation, conversation_rounds
from mascot_cli.bench_parts import (
    USER_LINES,
    adapter_speed,
    batch_speed,
    cold_start,
    lane_cost,
    median,
    raw_speed,
)
from mascot_cli.bench_shape import run_shape, shape_table

TARGETS = {
    "decode_ratio": (">=", 0.95),
    "prefill_ratio": ("<=", 1.2),
    "ttft_growth": ("<=", 1.5),
    "memory_ratio_4_agents": ("<=", 1.3),
    "director_share": ("<=", 0.20),
}


def _mem() -> dict[str, float]:
    """RSS and PSS in MB (engine.llm.adapters reads /proc/self/smaps_rollup); peak RSS elsewhere."""
    kb = mem_kb()
    if kb["rss"]:
        return {"rss_mb": kb["rss"] / 1024, "pss_mb": kb["pss"] / 1024}
    import resource

    return {"rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "pss_mb": 0.0}


def _probe(n_companions: int, threads: int, n_ctx: int, model: str | None = None) -> None:
    """Child process: chat with N companions on one model file, then report memory."""
    os.environ["MASCOT_THREADS"] = str(threads)
    base = load_set("support")
    pset = PersonaSet(base.name, base.title, base.description, base.members[:n_companions])
    chat = GroupChat(
        pset,
        settings=ChatSettings(policy="all", max_speakers=n_companions, max_tokens=32, seed=3),
        backend_for=backend_factory(model, n_ctx),
    )
    for line in USER_LINES[:3]:
        for _ in chat.send(line):
            pass
    print(json.dumps(_mem()))


def run(args: argparse.Namespace) -> dict[str, Any]:
    threads = args.threads or default_threads()
    n_ctx = args.n_ctx
    rounds = args.rounds or (10 if args.quick else 30)
    model = str(bundled_model_path())
    history = args.history_tokens
    print(
        f"mascot-bench: bundled model, {threads} threads, n_ctx {n_ctx}, {rounds} rounds, "
        f"history window {history or 'all that fits'}",
        file=sys.stderr,
    )
    conv = conversation(rounds, threads, n_ctx, history_tokens=history, memory=args.memory)
    turns = conv["turns"]
    # Decode slows as the KV grows, so each app turn is compared with raw llama.cpp at that
    # turn's own context length (raw measured at a few lengths, interpolated linearly).
    measured = [t for t in turns if t["tokens"] >= 8 and t["decode_tps"] > 0]
    prompts = sorted(t["prompt"] for t in measured) or [64]
    points = sorted(
        {int(prompts[0]), int(median(prompts)), int(prompts[-1])}
        | {int(prompts[int(len(prompts) * q)]) for q in (0.25, 0.75)}
    )
    raw_at = {c: raw_speed(model, n_ctx, threads, decode_context=c) for c in points}
    raw = raw_at[int(median(prompts))]

    def raw_decode(ctx: int) -> float:
        xs = sorted(raw_at)
        if ctx <= xs[0]:
            return raw_at[xs[0]]["decode_tps"]
        for a, b in zip(xs, xs[1:]):
            if ctx <= b:
                w = (ctx - a) / max(1, b - a)
                return raw_at[a]["decode_tps"] * (1 - w) + raw_at[b]["decode_tps"] * w
        return raw_at[xs[-1]]["decode_tps"]

    for t in measured:
        t["raw_decode_tps"] = raw_decode(t["prompt"])
    app_decode = [t["decode_tps"] for t in measured]
    ratios_after = [t["decode_tps"] / t["raw_decode_tps"] for t in measured]
    same = [t for t in measured if t.get("raw_decode_tps_same_round")]
    ratios = [t["decode_tps"] / t["raw_decode_tps_same_round"] for t in same] or ratios_after
    later = [t for t in turns if t["round"] > 1]
    prefill_ratio = sum(t["prefilled"] for t in later) / max(1, sum(t["new"] for t in later))
    q = max(1, len(later) // 4)
    ttft_early = median([t["ttft_ms"] for t in later[:q]])
    ttft_late = median([t["ttft_ms"] for t in later[-q:]])
    round_s = sum(r["seconds"] for r in conv["rounds"])
    director_share = sum(r["director_s"] for r in conv["rounds"]) / max(1e-6, round_s)
    mem = {}
    for n in (1, 4):
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "mascot_cli.bench",
                "--probe",
                str(n),
                "--threads",
                str(threads),
                "--n-ctx",
                str(n_ctx),
            ],
            capture_output=True,
            text=True,
            timeout=900,
        )
        mem[n] = json.loads(out.stdout.strip().splitlines()[-1])
    cold = cold_start(threads, n_ctx)
    batch = batch_speed(model, threads)
    adapters = adapter_speed(model, threads)
    lane = lane_cost(model, threads, n_ctx)
    result = {
        "threads": threads,
        "n_ctx": n_ctx,
        "rounds": rounds,
        "history_tokens": history,
        "memory": args.memory,
        "raw_prefill_tps": raw["prefill_tps"],
        "raw_decode_tps": raw["decode_tps"],
        "app_decode_tps": median(app_decode),
        "decode_ratio": median(ratios),
        "decode_ratio_raw_measured_after": median(ratios_after),
        "raw_decode_by_context": {str(c): round(v["decode_tps"], 2) for c, v in raw_at.items()},
        "prefill_ratio": prefill_ratio,
        "prefilled_per_turn": median([t["prefilled"] for t in later]),
        "new_per_turn": median([t["new"] for t in later]),
        "prompt_per_turn": median([t["prompt"] for t in later]),
        "ttft_early_ms": ttft_early,
        "ttft_late_ms": ttft_late,
        "ttft_growth": ttft_late / ttft_early,
        "director_share": director_share,
        "round_seconds_median": median([r["seconds"] for r in conv["rounds"]]),
        "read_ahead_seconds_median": median([r["read_ahead_s"] for r in conv["rounds"][1:]]),
        "prefilled_in_turn_per_turn": median([t["prefilled_in_turn"] for t in later]),
        "rounds_detail": conv["rounds"],
        "rss_1_mb": mem[1]["rss_mb"],
        "pss_1_mb": mem[1]["pss_mb"],
        "rss_4_mb": mem[4]["rss_mb"],
        "pss_4_mb": mem[4]["pss_mb"],
        "memory_ratio_4_agents": mem[4]["pss_mb"] / mem[1]["pss_mb"],
        "cold_start_first_token_s": cold,
        "batch": batch,
        "adapters": adapters,
        "director_lane": lane,
        "turns": turns,
    }
    return result


def _conversation_figures(conv: dict[str, Any]) -> dict[str, float]:
    later = [t for t in conv["turns"] if t["round"] > 1]
    noted = [t["note_tokens"] for t in conv["turns"] if t.get("note_tokens")]
    rounds = conv["rounds"][1:]
    tokens = sum(t["tokens"] for t in later)
    return {
        "prefill_ratio": sum(t["prefilled"] for t in later) / max(1, sum(t["new"] for t in later)),
        "round_seconds_median": median([r["seconds"] for r in rounds]),
        "round_seconds_mean": sum(r["seconds"] for r in rounds) / max(1, len(rounds)),
        "ms_per_reply_token": 1000 * sum(r["seconds"] for r in rounds) / max(1, tokens),
        "ttft_ms_median": median([t["ttft_ms"] for t in later]),
        "prompt_per_turn": median([t["prompt"] for t in later]),
        "turns_with_note": len(noted) / max(1, len(conv["turns"])),
        "note_tokens_median": median(noted) if noted else 0.0,
        "turns_per_round": len(later) / max(1, len(rounds)),
        "reply_tokens_per_turn": tokens / max(1, len(later)),
        "decode_tps_median": median(
            [t["decode_tps"] for t in later if t.get("decode_tps")] or [0.0]
        ),
        "director_seconds_mean": sum(r["director_s"] for r in rounds) / max(1, len(rounds)),
        # memory's own cost as a share of round time: making the notes, plus prefilling their
        # tokens at the speed that turn prefilled (prefilled tokens / time to first token)
        "memory_share": (
            sum(r.get("note_s", 0.0) for r in rounds)
            + sum(
                t["note_tokens"] * t["ttft_ms"] / 1000 / max(1, t["prefilled_in_turn"])
                for t in later
                if t.get("note_tokens")
            )
        )
        / max(1e-9, sum(r["seconds"] for r in rounds)),
        "note_ms_per_round": 1000 * sum(r.get("note_s", 0.0) for r in rounds) / max(1, len(rounds)),
    }


def memory_compare(args: argparse.Namespace) -> dict[str, Any]:
    """The conversation memory off and memory on (same model, threads and script), taking turns
    round by round (each with its own runtimes and KV caches), so a shared machine's load drifts
    over both alike: prefill ratio, round time and time to first token, and how much the notes
    add. ``--on-first``: memory on plays each round first."""
    threads = args.threads or default_threads()
    rounds = args.rounds or 10
    out: dict[str, Any] = {
        "threads": threads,
        "n_ctx": args.n_ctx,
        "rounds": rounds,
        "history_tokens": args.history_tokens,
        "interleaved": True,
        "on_first": bool(args.on_first),
        "load_before": os.getloadavg(),
    }
    order = (
        (("memory_on", True), ("memory_off", False))
        if args.on_first
        else (("memory_off", False), ("memory_on", True))
    )
    runs = {
        label: conversation_rounds(
            rounds,
            threads,
            args.n_ctx,
            history_tokens=args.history_tokens,
            memory=on,
            raw_probe=False,
        )
        for label, on in order
    }
    results: dict[str, Any] = {}
    loads = []
    while len(results) < len(runs):
        for label, _on in order:
            if label in results:
                continue
            try:
                r = next(runs[label])
                print(f"mascot-bench: {label.replace('_', ' ')}, round {r}", file=sys.stderr)
            except StopIteration as done:
                results[label] = done.value
        loads.append(os.getloadavg()[0])
    for label, _on in order:
        out[label] = _conversation_figures(results[label])
        out[label + "_turns"] = results[label][
            "turns"
        ]  # per turn and per round, to explain the ratios
        out[label + "_rounds"] = results[label]["rounds"]
    out["load_1min"] = {"min": min(loads), "median": median(loads), "max": max(loads)}
    off, on_ = out["memory_off"], out["memory_on"]
    out["round_time_growth"] = on_["round_seconds_mean"] / max(1e-9, off["round_seconds_mean"])
    out["round_time_growth_median"] = on_["round_seconds_median"] / max(
        1e-9, off["round_seconds_median"]
    )
    out["per_token_time_growth"] = on_["ms_per_reply_token"] / max(1e-9, off["ms_per_reply_token"])
    return out


def memory_table(r: dict[str, Any]) -> str:
    keys = [
        "prefill_ratio",
        "round_seconds_mean",
        "round_seconds_median",
        "ms_per_reply_token",
        "ttft_ms_median",
        "prompt_per_turn",
        "turns_with_note",
        "note_tokens_median",
        "turns_per_round",
        "reply_tokens_per_turn",
        "decode_tps_median",
        "director_seconds_mean",
        "note_ms_per_round",
        "memory_share",
    ]
    lines = [f"{'':28} {'memory off':>12} {'memory on':>12}"]
    for k in keys:
        lines.append(f"{k:28} {r['memory_off'][k]:12.3f} {r['memory_on'][k]:12.3f}")
    lines.append(
        f"round time on/off: mean {r['round_time_growth']:.3f}, median "
        f"{r.get('round_time_growth_median', float('nan')):.3f} (target <= 1.10); per reply token: "
        f"{r['per_token_time_growth']:.3f}; prefill ratio with memory on: "
        f"{r['memory_on']['prefill_ratio']:.3f} (target <= 1.2); memory's own share of round time "
        f"(making notes + prefilling them): {r['memory_on']['memory_share']:.1%}"
    )
    if "load_1min" in r:
        lo = r["load_1min"]
        lines.append(
            f"load average (1 min) during the run: {lo['min']:.2f}-{lo['max']:.2f}, median "
            f"{lo['median']:.2f} on {os.cpu_count()} cores"
        )
    return "\n".join(lines)


def table(r: dict[str, Any]) -> str:
    def t(key: str) -> str:
        if key not in TARGETS:
            return ""
        op, v = TARGETS[key]
        ok = r[key] >= v if op == ">=" else r[key] <= v
        return f"{op} {v}  {'ok' if ok else 'MISSED'}"

    rows = [
        ("raw llama.cpp prefill", f"{r['raw_prefill_tps']:.0f} tok/s", ""),
        (
            "raw llama.cpp decode by context (tokens: tok/s)",
            ", ".join(f"{c}: {v:.1f}" for c, v in r.get("raw_decode_by_context", {}).items()),
            "",
        ),
        ("app decode per companion (median over turns)", f"{r['app_decode_tps']:.1f} tok/s", ""),
        (
            "decode_ratio (median over turns of app / raw at that context, raw measured right "
            "after the round)",
            f"{r['decode_ratio']:.3f}",
            t("decode_ratio"),
        ),
        (
            "  the same with raw measured after the conversation (interpolated)",
            f"{r.get('decode_ratio_raw_measured_after', 0):.3f}",
            "",
        ),
        (
            "history window (tokens of recent conversation a companion reads)",
            f"{r.get('history_tokens') or 'all that fits'}",
            "",
        ),
        ("prompt tokens per turn (median)", f"{r['prompt_per_turn']:.0f}", ""),
        (
            "prefilled per turn / new per turn (median; prefilled includes the read-ahead)",
            f"{r['prefilled_per_turn']:.0f} / {r['new_per_turn']:.0f}",
            "",
        ),
        ("prefilled during the turn itself (median)", f"{r['prefilled_in_turn_per_turn']:.0f}", ""),
        (
            "prefill_ratio (prefilled/new, rounds 2+)",
            f"{r['prefill_ratio']:.3f}",
            t("prefill_ratio"),
        ),
        (
            "TTFT early / late (median ms)",
            f"{r['ttft_early_ms']:.0f} / {r['ttft_late_ms']:.0f}",
            "",
        ),
        ("ttft_growth (late/early)", f"{r['ttft_growth']:.3f}", t("ttft_growth")),
        ("Director share of round time", f"{r['director_share'] * 100:.1f}%", t("director_share")),
        ("round time (median)", f"{r['round_seconds_median']:.1f} s", ""),
        (
            "read-ahead between rounds, while the user types (median)",
            f"{r['read_ahead_seconds_median']:.1f} s",
            "",
        ),
        ("RSS / PSS, 1 companion", f"{r['rss_1_mb']:.0f} / {r['pss_1_mb']:.0f} MB", ""),
        ("RSS / PSS, 4 companions", f"{r['rss_4_mb']:.0f} / {r['pss_4_mb']:.0f} MB", ""),
        (
            "memory_ratio_4_agents (PSS)",
            f"{r['memory_ratio_4_agents']:.3f}",
            t("memory_ratio_4_agents"),
        ),
        ("cold start to first token", f"{r['cold_start_first_token_s']:.1f} s", ""),
    ]
    for key, label in (
        ("different_prompts", "4 different prompts"),
        ("one_prompt", "4 samples of one prompt"),
    ):
        b = r.get("batch", {}).get(key)
        if b:
            rows.append(
                (
                    f"batched generation, {label}",
                    f"{b['batched_tok_s']:.1f} vs {b['sequential_tok_s']:.1f} "
                    f"tok/s one by one ({b['speedup']:.2f}x)",
                    "",
                )
            )
    a = r.get("adapters") or {}
    if "switch_ms" in a:
        rows += [
            (
                "LoRA adapter (rank 16): file / PSS added when loaded",
                f"{a['adapter_file_mb']:.1f} / {a['pss_load_mb']:.1f} MB "
                f"(after use: {a['pss_used_mb']:.1f} MB)",
                "",
            ),
            ("LoRA adapter: set + clear on the shared context", f"{a['switch_ms']:.3f} ms", ""),
            (
                "1-token turn: plain -> plain / plain -> adapter / adapter -> plain",
                f"{a['first_token_ms_plain']:.0f} / {a['first_token_ms_to_adapter']:.0f} / "
                f"{a['first_token_ms_from_adapter']:.0f} ms",
                "",
            ),
            (
                "decode with / without adapter",
                f"{a['decode_tps_adapter']:.1f} / {a['decode_tps_plain']:.1f} tok/s",
                "",
            ),
        ]
    d = r.get("director_lane") or {}
    if "slot_switch_ms" in d:
        rows += [
            (
                f"KV slot switch in the shared context ({d['context_tokens']}-token slots)",
                f"{d['slot_switch_ms']:.1f} ms (the Director's own lane avoids two per decision)",
                "",
            ),
            (
                "Director lane (second context on the same file): RSS / PSS added",
                f"{d['lane_rss_mb']:.1f} / {d['lane_pss_mb']:.1f} MB",
                "",
            ),
        ]
    w = max(len(a) for a, _, _ in rows)
    lines = [f"| {'measure'.ljust(w)} | value | target |", f"|{'-' * (w + 2)}|---|---|"]
    lines += [f"| {a.ljust(w)} | {b} | {c} |" for a, b, c in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="mascot-bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="10 rounds instead of 30")
    p.add_argument(
        "--json", type=Path, default=None, help="write the numbers (and per-turn data) here"
    )
    p.add_argument("--rounds", type=int, default=None, help="conversation length in rounds")
    p.add_argument(
        "--threads", type=int, default=None, help="llama.cpp threads (default: all cores, max 8)"
    )
    p.add_argument("--n-ctx", type=int, default=4096, help="context window (the app's default)")
    p.add_argument(
        "--history-tokens",
        type=int,
        default=DEFAULT_HISTORY_TOKENS,
        help=f"recent conversation each companion reads (default: the app's, {DEFAULT_HISTORY_TOKENS}; "
        "0 = all that fits)",
    )
    p.add_argument(
        "--memory",
        action="store_true",
        help="companions read lorebook entries and remembered facts (a scripted lorebook)",
    )
    p.add_argument(
        "--memory-compare",
        action="store_true",
        help="only the conversation, memory off then on (default 10 rounds)",
    )
    p.add_argument(
        "--on-first",
        action="store_true",
        help="with --memory-compare: run memory on first (alternate runs to cancel drift)",
    )
    p.add_argument(
        "--shape",
        default=None,
        metavar="NAME",
        help="measure on a random-weight model with the shape of a catalog entry (e.g. "
        "llama-3.2-3b-instruct; 'tiny' for a test-size one), built once and cached, beside "
        "single-cache front ends' Swap and Join modes replaying the same conversation",
    )
    p.add_argument(
        "--baseline-rounds",
        default=None,
        help="with --shape: rounds at which the peer baselines' first token is timed "
        "(comma-separated; default 1,5,10,20,30 and the last)",
    )
    p.add_argument(
        "--max-tokens", type=int, default=48, help="with --shape: tokens per companion reply"
    )
    p.add_argument(
        "--kv-tokens",
        type=int,
        default=1024,
        help="with --shape: tokens in the context when the KV cache types are compared",
    )
    p.add_argument("--probe", type=int, default=None, help=argparse.SUPPRESS)
    p.add_argument("--probe-model", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.probe:
        _probe(args.probe, args.threads, args.n_ctx, args.probe_model)
        return 0
    if args.memory_compare:
        try:
            r = memory_compare(args)
        except Exception as e:  # noqa: BLE001 - a benchmark failing is still one line
            print(f"Error: benchmark failed ({type(e).__name__}: {e})", file=sys.stderr)
            return 1
        print(memory_table(r))
        if args.json:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps(r, indent=2))
        return 0
    try:
        r = run_shape(args) if args.shape else run(args)
    except InputError as e:  # what was asked cannot be run: say what to do instead
        print(f"Error: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # noqa: BLE001 - a benchmark failing is still one line
        print(f"Error: benchmark failed ({type(e).__name__}: {e})", file=sys.stderr)
        return 1
    r["machine"] = {
        "cpu": cpu_name(),
        "cores": os.cpu_count(),
        "llama_build": [k for k, on in build_features().items() if on],
    }
    r["argv"] = sys.argv[1:] if argv is None else argv
    print(shape_table(r) if args.shape else table(r))
    print(
        f"CPU: {r['machine']['cpu']} ({r['machine']['cores']} cores); llama.cpp build: "
        f"{', '.join(r['machine']['llama_build'])}"
    )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(r, indent=2))
        print(f"wrote {args.json}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    threading.current_thread().name = "mascot-bench"
    sys.exit(main())
