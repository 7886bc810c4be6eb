"""``mascot-bench --shape NAME``: the group's speed and memory on a random-weight model with the
shape of a catalog entry (``mascot_cli.shapes``: same layers, heads, FFN, vocabulary size and
quantization as the real file, built once and cached), beside the way single-cache front ends
play the same conversation.

Measured in one run, on one model file:

* the 3-companion conversation with the Director (``bench_conversation.conversation_rounds``,
  as in ``mascot-bench``): ``prefill_ratio``, ``ttft_growth``, the Director's share of round
  time and round time;
* peer baselines replaying that conversation's transcript on one shared llama.cpp cache, the
  way SillyTavern's group modes build prompts (``replay_single_cache``): "swap" (the speaker's
  card first, then the chat) and "join" (every card joined up front, then the chat); both keep the
  newest messages that fit the context, as SillyTavern does. Prefilled tokens are counted for every
  turn (the prompt less its common start with what the cache holds: the previous prompt and its
  reply); time to first token is measured only at a few rounds (``--baseline-rounds``), for the
  round's first speaker, up to the first sampled token, because a whole-prompt reprocess of a
  3B model on 2 cores takes a minute;
* raw llama.cpp prefill and decode, and the app's decode per companion;
* memory of one process chatting with 1 and with 4 companions (PSS, ``memory_ratio_4_agents``);
* the KV cache: f16 (the app's) against q8_0 K and V (llama.cpp needs flash attention for a
  quantized V cache, so q8_0 runs with it, and f16 with flash attention is shown too): the KV
  buffer for the context, the bytes of one companion's saved KV slot after ``--kv-tokens`` tokens
  (what the app copies per companion), the process memory a context adds, prefill and decode speed;
* a persona on a LoRA adapter (rank 16 on all seven projections, like the persona adapters):
  decode with and without it (``engine.llm.adapters.adapter_costs``).

Random weights write random text; the shape's special and end-of-turn tokens are never sampled
(``mascot_cli.shapes``), so every companion reply runs to its token limit and the rounds of
different runs are the same length."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from engine.llm.adapters import adapter_costs, mem_kb
from engine.llm.batch import common_prefix
from engine.llm.chat_format import ChatFormat
from engine.llm.runtime import LlamaRuntime, default_threads
from engine.models.catalog import entry_need, load_catalog
from engine.models.registry import inspect_gguf
from mascot_cli.bench_conversation import conversation_rounds
from mascot_cli.bench_parts import USER_LINES, median, raw_speed
from mascot_cli.shapes import build_shape, describe

SHAPE_TARGETS = {
    "prefill_ratio": ("<=", 1.2),
    "ttft_growth": ("<=", 1.5),
    "memory_ratio_4_agents": ("<=", 1.3),
    "director_share": ("<=", 0.15),
    "adapter_decode_ratio": (">=", 0.85),
}
BASELINE_ROUNDS = (1, 5, 10, 20, 30)


def peer_prompt(
    mode: str,
    speaker: str,
    history: list[tuple[str, str, str]],
    cards: dict[str, str],
    names: list[str],
) -> list[dict[str, str]]:
    """The chat a single-cache front end sends for ``speaker``'s turn: SillyTavern's group chat
    with "Swap" (the speaker's card) or "Join" (all cards, joined) as the system prompt, then the
    messages as they were said (the user as user, every companion as assistant, names in front)."""
    system = cards[speaker] if mode == "swap" else "\n\n".join(cards[n] for n in names)
    msgs = [{"role": "system", "content": system}]
    for role, who, text in history:
        msgs.append(
            {"role": "user" if role == "user" else "assistant", "content": f"{who}: {text}"}
        )
    return msgs


def replay_single_cache(
    model: str,
    template: str | None,
    n_ctx: int,
    threads: int,
    transcript: list[tuple[str, str, str]],
    cards: dict[str, str],
    names: list[str],
    modes: tuple[str, ...] = ("swap", "join"),
    timed_rounds: tuple[int, ...] = BASELINE_ROUNDS,
    reserve: int = 48,
    log: Any = None,
) -> dict[str, list[dict[str, Any]]]:
    """Replay ``transcript`` ((role, speaker, text) in order) on one shared llama.cpp cache per
    mode. For every companion turn: the prompt's tokens, and how many of them the cache lacks
    (``prefilled``: the prompt less its common start with the previous turn's prompt and reply);
    at ``timed_rounds``, for the round's first speaker, the time from the request to the first
    sampled token (``ttft_ms``: evaluating what the cache lacks, then sampling)."""
    import llama_cpp

    fmt = ChatFormat(template, name=Path(model).name)
    llm = llama_cpp.Llama(
        model_path=model,
        n_ctx=n_ctx,
        n_batch=256,
        n_threads=threads,
        n_threads_batch=threads,
        seed=1,
        verbose=False,
    )
    budget = n_ctx - reserve

    def tokens_of(msgs: list[dict[str, str]]) -> list[int]:
        return llm.tokenize(fmt.render(msgs).encode("utf-8"), add_bos=True, special=True)

    out: dict[str, list[dict[str, Any]]] = {}
    try:
        for mode in modes:
            rows: list[dict[str, Any]] = []
            state: list[int] = []  # what the shared cache holds before this turn (in the front end)
            cached: list[int] = []  # what our llama.cpp context holds now
            rnd, first_in_round, dropped = 0, False, 0
            for i, (role, who, _text) in enumerate(transcript):
                if role == "user":
                    rnd += 1
                    first_in_round = True
                    continue
                history = transcript[dropped:i]
                prompt = tokens_of(peer_prompt(mode, who, history, cards, names))
                while len(prompt) > budget and dropped < i - 1:  # the oldest messages go first
                    dropped += 1
                    prompt = tokens_of(peer_prompt(mode, who, transcript[dropped:i], cards, names))
                common = min(common_prefix(state, prompt), len(prompt) - 1)
                row = {
                    "round": rnd,
                    "speaker": who,
                    "prompt": len(prompt),
                    "prefilled": len(prompt) - common,
                    "dropped_messages": dropped,
                }
                if rnd in timed_rounds and first_in_round:
                    # the cache as the front end has it (the common start), untimed ...
                    have = common_prefix(cached, prompt[:common])
                    llm.n_tokens = have
                    llm._ctx.kv_cache_seq_rm(-1, have, -1)
                    if common > have:
                        llm.eval(prompt[have:common])
                    # ... then what this turn must evaluate, and its first token
                    t0 = time.perf_counter()
                    llm.eval(prompt[common:])
                    llm.sample(temp=0.7, top_k=40, top_p=0.9, repeat_penalty=1.1)
                    row["ttft_ms"] = (time.perf_counter() - t0) * 1000
                    cached = list(prompt)
                    if log:
                        log(
                            f"baseline {mode}, round {rnd}: {row['prefilled']} of {row['prompt']} tokens "
                            f"prefilled, first token {row['ttft_ms'] / 1000:.1f} s"
                        )
                first_in_round = False
                rows.append(row)
                reply = llm.tokenize(
                    f"{who}: {_text}".encode("utf-8"), add_bos=False, special=False
                )
                state = prompt + reply
            out[mode] = rows
    finally:
        llm.close()
    return out


KV_TYPES = {"f16": 1, "q8_0": 8}  # GGML_TYPE_F16, GGML_TYPE_Q8_0


def kv_cache(
    model: str,
    n_ctx: int,
    threads: int,
    fill_tokens: int = 1024,
    decode_tokens: int = 16,
    layers: int = 0,
    kv_dim: int = 0,
) -> list[dict[str, Any]]:
    """KV cache f16 and q8_0 (K and V) on one loaded model: for each, a llama.cpp context of
    ``n_ctx`` on it, filled with ``fill_tokens`` tokens of chat: the KV buffer's size (computed
    from the shape: layers x n_ctx x KV width x 2 x bytes per value), the process memory the
    context added (PSS), the bytes of the sequence's saved state (a companion's KV slot in the
    app), prefill and decode tokens/s."""
    import llama_cpp
    from llama_cpp import _internals

    base = llama_cpp.Llama(
        model_path=model,
        n_ctx=256,
        n_batch=256,
        n_threads=threads,
        n_threads_batch=threads,
        verbose=False,
    )
    text = " ".join(USER_LINES) * 40
    toks = base.tokenize(text.encode(), add_bos=True)[:fill_tokens]
    rows = []
    try:
        for label, kv, fa in (
            ("f16", "f16", False),
            ("f16, flash attention", "f16", True),
            ("q8_0, flash attention", "q8_0", True),
        ):
            p = type(base.context_params).from_buffer_copy(
                base.context_params
            )  # the app's settings ...
            p.n_ctx = n_ctx
            p.type_k = p.type_v = KV_TYPES[kv]
            p.flash_attn_type = (
                llama_cpp.LLAMA_FLASH_ATTN_TYPE_ENABLED
                if fa
                else llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED
            )
            before = mem_kb()
            ctx = _internals.LlamaContext(model=base._model, params=p, verbose=False)
            made = mem_kb()
            batch = _internals.LlamaBatch(n_tokens=256, embd=0, n_seq_max=1, verbose=False)
            t0 = time.perf_counter()
            for a in range(0, len(toks), 256):
                batch.set_batch(toks[a : a + 256], n_past=a, logits_all=False)
                ctx.decode(batch)
            prefill = len(toks) / (time.perf_counter() - t0)
            t0 = time.perf_counter()
            for k in range(decode_tokens):
                batch.set_batch([toks[k % len(toks)]], n_past=len(toks) + k, logits_all=True)
                ctx.decode(batch)
            decode = decode_tokens / (time.perf_counter() - t0)
            slot = llama_cpp.llama_state_seq_get_size(ctx.ctx, 0)
            per_value = 2.0 if kv == "f16" else 34 / 32
            rows.append(
                {
                    "kv": label,
                    "type": kv,
                    "flash_attn": fa,
                    "kv_buffer_mb": round(layers * n_ctx * kv_dim * 2 * per_value / 2**20, 1)
                    if layers
                    else None,
                    "context_pss_mb": round((made["pss"] - before["pss"]) / 1024, 1),
                    "slot_mb": round(slot / 2**20, 2),
                    "slot_tokens": len(toks) + decode_tokens,
                    "prefill_tps": round(prefill, 2),
                    "decode_tps": round(decode, 2),
                }
            )
            batch.close() if hasattr(batch, "close") else None
            ctx.close() if hasattr(ctx, "close") else None
            del ctx, batch
    finally:
        base.close()
    return rows


def _memory_probe(n: int, threads: int, n_ctx: int, model: str) -> dict[str, float]:
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
            "--probe-model",
            model,
        ],
        capture_output=True,
        text=True,
        timeout=3600,
    )
    if out.returncode != 0:
        raise RuntimeError(f"memory probe ({n} companions) failed: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_shape(args: Any) -> dict[str, Any]:
    def log(s: str) -> None:
        print(f"mascot-bench: {s}", file=sys.stderr, flush=True)

    threads = args.threads or default_threads()
    n_ctx, rounds = args.n_ctx, args.rounds or (10 if args.quick else 30)
    model_path, adapter_path = build_shape(args.shape, log=log, threads=threads)
    model = str(model_path)
    shape = describe(args.shape)
    info = inspect_gguf(model, compute_hash=False)
    log(
        f"shape {args.shape} ({model_path.stat().st_size / 1e9:.2f} GB), {threads} threads, n_ctx {n_ctx}, "
        f"{rounds} rounds"
    )
    t_start = time.perf_counter()
    steps = conversation_rounds(
        rounds,
        threads,
        n_ctx,
        max_tokens=args.max_tokens,
        history_tokens=args.history_tokens,
        raw_probe=False,
        model=model,
        keep_transcript=True,
    )
    while True:
        try:
            r = next(steps)
            log(f"round {r} done ({time.perf_counter() - t_start:.0f} s)")
        except StopIteration as done:
            conv = done.value
            break
    turns = conv["turns"]
    later = [t for t in turns if t["round"] > 1]
    q = max(1, len(later) // 4)
    ttft_early = median([t["ttft_ms"] for t in later[:q]])
    ttft_late = median([t["ttft_ms"] for t in later[-q:]])
    round_total = sum(r["seconds"] for r in conv["rounds"])
    if args.baseline_rounds:
        timed = tuple(sorted({int(x) for x in args.baseline_rounds.split(",") if int(x) <= rounds}))
    else:
        timed = tuple(sorted({r for r in BASELINE_ROUNDS if r <= rounds} | {rounds}))
    if args.json:  # the conversation's figures, in case a later part fails or is stopped
        partial = args.json.with_name(args.json.name + ".partial")
        partial.parent.mkdir(parents=True, exist_ok=True)
        partial.write_text(
            json.dumps(
                {
                    "shape": shape,
                    "ttft_early_ms": ttft_early,
                    "ttft_late_ms": ttft_late,
                    "rounds_detail": conv["rounds"],
                    "turns": turns,
                },
                indent=2,
            )
        )
    log(
        f"peer baselines (prefilled tokens every turn, first token timed at rounds {list(timed)}) ..."
    )
    baselines = replay_single_cache(
        model,
        info.chat_template or None,
        n_ctx,
        threads,
        conv["transcript"],
        conv["cards"],
        conv["names"],
        timed_rounds=timed,
        reserve=args.max_tokens,
        log=log,
    )
    log("raw llama.cpp speed ...")
    raw = raw_speed(
        model,
        n_ctx,
        threads,
        prompt_tokens=400,
        gen_tokens=32,
        decode_context=int(median([t["prompt"] for t in later] or [400])),
    )
    log("KV cache f16 / q8_0 ...")
    kv = kv_cache(
        model,
        n_ctx,
        threads,
        fill_tokens=args.kv_tokens,
        layers=shape["layers"],
        kv_dim=shape["kv_heads"] * shape["head_dim"],
    )
    log("memory with 1 and 4 companions ...")
    mem = {n: _memory_probe(n, threads, n_ctx, model) for n in (1, 4)}
    log("LoRA adapter ...")
    rt = LlamaRuntime(model, n_ctx=2048, n_threads=threads)
    try:
        adapters = adapter_costs(rt, adapter_path, decode_tokens=32)
    finally:
        rt.close()
    need = None
    entry = {e.id: e for e in load_catalog()}.get(args.shape)
    if entry is not None:
        need = (
            entry_need(entry, n_ctx=n_ctx, companions=4, history_tokens=args.history_tokens).total
            / 2**20
        )
    return {
        "shape": shape,
        "model_file": model,
        "model_bytes": model_path.stat().st_size,
        "adapter_file": str(adapter_path),
        "threads": threads,
        "n_ctx": n_ctx,
        "rounds": rounds,
        "max_tokens": args.max_tokens,
        "history_tokens": args.history_tokens,
        "prefill_ratio": sum(t["prefilled"] for t in later) / max(1, sum(t["new"] for t in later)),
        "prefilled_per_turn": median([t["prefilled"] for t in later]),
        "prefilled_in_turn_per_turn": median([t["prefilled_in_turn"] for t in later]),
        "new_per_turn": median([t["new"] for t in later]),
        "prompt_per_turn": median([t["prompt"] for t in later]),
        "reply_tokens_median": median([t["tokens"] for t in turns]),
        "ttft_early_ms": ttft_early,
        "ttft_late_ms": ttft_late,
        "ttft_growth": ttft_late / ttft_early,
        "director_share": sum(r["director_s"] for r in conv["rounds"]) / max(1e-6, round_total),
        "director_seconds_median": median([r["director_s"] for r in conv["rounds"]]),
        "round_seconds_median": median([r["seconds"] for r in conv["rounds"]]),
        "read_ahead_seconds_median": median([r["read_ahead_s"] for r in conv["rounds"][1:]]),
        "app_decode_tps": median(
            [t["decode_tps"] for t in turns if t["tokens"] >= 8 and t["decode_tps"] > 0]
        ),
        "raw_prefill_tps": raw["prefill_tps"],
        "raw_decode_tps": raw["decode_tps"],
        "rss_1_mb": mem[1]["rss_mb"],
        "pss_1_mb": mem[1]["pss_mb"],
        "rss_4_mb": mem[4]["rss_mb"],
        "pss_4_mb": mem[4]["pss_mb"],
        "memory_ratio_4_agents": mem[4]["pss_mb"] / mem[1]["pss_mb"],
        "catalog_estimate_4_mb": need,
        "kv_cache": kv,
        "adapters": adapters,
        "adapter_decode_ratio": adapters["decode_tps_adapter"]
        / max(1e-9, adapters["decode_tps_plain"]),
        "baselines": baselines,
        "rounds_detail": conv["rounds"],
        "turns": turns,
        "transcript": conv["transcript"],
    }


def side_by_side(r: dict[str, Any]) -> list[dict[str, Any]]:
    """Per timed round (the round's first speaker): prompt, prefilled tokens and time to first
    token for Mascot, Swap and Join."""
    rows = []
    swap = {(t["round"], t["speaker"]): t for t in r["baselines"].get("swap", []) if "ttft_ms" in t}
    join = {(t["round"], t["speaker"]): t for t in r["baselines"].get("join", []) if "ttft_ms" in t}
    firsts: dict[int, dict[str, Any]] = {}
    for t in r["turns"]:
        firsts.setdefault(t["round"], t)
    for (rnd, who), s in sorted(swap.items()):
        m = firsts.get(rnd)
        j = join.get((rnd, who))
        if m is None or m["speaker"] != who or j is None:
            continue
        rows.append(
            {
                "round": rnd,
                "speaker": who,
                "mascot_prompt": m["prompt"],
                "mascot_prefilled": m["prefilled"],
                "mascot_prefilled_in_turn": m["prefilled_in_turn"],
                "mascot_ttft_ms": m["ttft_ms"],
                "swap_prompt": s["prompt"],
                "swap_prefilled": s["prefilled"],
                "swap_ttft_ms": s["ttft_ms"],
                "join_prompt": j["prompt"],
                "join_prefilled": j["prefilled"],
                "join_ttft_ms": j["ttft_ms"],
            }
        )
    return rows


def shape_table(r: dict[str, Any]) -> str:
    def t(key: str) -> str:
        op, v = SHAPE_TARGETS[key]
        ok = r[key] >= v if op == ">=" else r[key] <= v
        return f"{op} {v}  {'ok' if ok else 'MISSED'}"

    s = r["shape"]
    a = r["adapters"]
    rows = [
        (
            "shape",
            f"{s['name']}: {s['layers']} layers, hidden {s['hidden']}, {s['heads']} heads / "
            f"{s['kv_heads']} KV heads x {s['head_dim']}, FFN {s['ffn']}, "
            f"vocab {s['vocab'] or 'of the stand-in'}, {s['quantization']}, "
            f"{r['model_bytes'] / 1e9:.2f} GB",
            "",
        ),
        (
            "raw llama.cpp prefill / decode",
            f"{r['raw_prefill_tps']:.1f} / {r['raw_decode_tps']:.2f} tok/s",
            "",
        ),
        ("app decode per companion (median)", f"{r['app_decode_tps']:.2f} tok/s", ""),
        ("prompt tokens per turn (median)", f"{r['prompt_per_turn']:.0f}", ""),
        (
            "prefilled per turn / new per turn (median, with the read-ahead)",
            f"{r['prefilled_per_turn']:.0f} / {r['new_per_turn']:.0f}",
            "",
        ),
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
        (
            "Director share of round time",
            f"{r['director_share'] * 100:.1f}% ({r['director_seconds_median']:.1f} s a round)",
            t("director_share"),
        ),
        (
            "round time (median; 3 replies of {} tokens)".format(r["max_tokens"]),
            f"{r['round_seconds_median']:.1f} s",
            "",
        ),
        (
            "read-ahead between rounds, while the user types (median)",
            f"{r['read_ahead_seconds_median']:.1f} s",
            "",
        ),
        ("RSS / PSS, 1 companion", f"{r['rss_1_mb']:.0f} / {r['pss_1_mb']:.0f} MB", ""),
        (
            "RSS / PSS, 4 companions",
            f"{r['rss_4_mb']:.0f} / {r['pss_4_mb']:.0f} MB"
            + (
                f" (the Get-models page estimates {r['catalog_estimate_4_mb']:.0f} MB)"
                if r.get("catalog_estimate_4_mb")
                else ""
            ),
            "",
        ),
        (
            "memory_ratio_4_agents (PSS)",
            f"{r['memory_ratio_4_agents']:.3f}",
            t("memory_ratio_4_agents"),
        ),
        (
            "decode with / without a rank-16 LoRA adapter",
            f"{a['decode_tps_adapter']:.2f} / {a['decode_tps_plain']:.2f} tok/s",
            "",
        ),
        ("adapter_decode_ratio", f"{r['adapter_decode_ratio']:.3f}", t("adapter_decode_ratio")),
    ]
    for k in r["kv_cache"]:
        rows.append(
            (
                f"KV cache {k['kv']}: buffer at n_ctx {r['n_ctx']} / context PSS / one slot of "
                f"{k['slot_tokens']} tokens",
                f"{k['kv_buffer_mb']} / {k['context_pss_mb']} / {k['slot_mb']} MB",
                "",
            )
        )
        rows.append(
            (
                f"KV cache {k['kv']}: prefill / decode at {k['slot_tokens']} tokens",
                f"{k['prefill_tps']:.1f} / {k['decode_tps']:.2f} tok/s",
                "",
            )
        )
    longest = max(t["prompt"] for t in r["turns"])
    per = {k["type"]: k["slot_mb"] / k["slot_tokens"] for k in r["kv_cache"]}
    rows.append(
        (
            f"one companion's saved KV slot at the longest prompt here ({longest} tokens): f16 / q8_0",
            f"{per['f16'] * longest:.0f} / {per['q8_0'] * longest:.0f} MB",
            "",
        )
    )
    for mode in ("swap", "join"):
        b = [x for x in r["baselines"].get(mode, []) if x["round"] > 1]
        if b:
            rows.append(
                (
                    f"peer {mode}: prefilled per turn (median, rounds 2+) / total vs Mascot's total",
                    f"{median([x['prefilled'] for x in b]):.0f} / {sum(x['prefilled'] for x in b)} vs "
                    f"{sum(t['prefilled'] for t in r['turns'] if t['round'] > 1)}",
                    "",
                )
            )
    w = max(len(x) for x, _, _ in rows)
    lines = [f"| {'measure'.ljust(w)} | value | target |", f"|{'-' * (w + 2)}|---|---|"]
    lines += [f"| {x.ljust(w)} | {y} | {z} |" for x, y, z in rows]
    lines += [
        "",
        "Time to first token, the round's first speaker (prefilled tokens of the prompt):",
        "",
        "| round | Mascot | SillyTavern Swap | SillyTavern Join |",
        "|---|---|---|---|",
    ]
    for x in side_by_side(r):
        ahead = x["mascot_prefilled"] - x["mascot_prefilled_in_turn"]
        lines.append(
            f"| {x['round']} | {x['mascot_ttft_ms'] / 1000:.2f} s ({x['mascot_prefilled_in_turn']} of "
            f"{x['mascot_prompt']}; {ahead} read ahead) "
            f"| {x['swap_ttft_ms'] / 1000:.2f} s ({x['swap_prefilled']} of {x['swap_prompt']}) "
            f"| {x['join_ttft_ms'] / 1000:.2f} s ({x['join_prefilled']} of {x['join_prompt']}) |"
        )
    return "\n".join(lines)
