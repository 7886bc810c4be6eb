"""Stage ``bundled``: teach the bundled model the companions' voices from the persona corpus.

    mascot-train bundled                       # the shipped set-up: one LoRA shared by all personas
    mascot-train bundled --mode full           # full fine-tune (compared in docs/voices.md)
    mascot-train bundled --persona Ruth        # one persona's own adapter (per-persona set-up)
    mascot-train bundled --steps 40 --tag try  # a short run under OUT/voices/try/

Supervised fine-tuning on ``assets/corpus/train`` (training/corpus.py): every written reply is
one example, its input the exact request the app sends that companion at that point of the
round (``companion_prompt``: card, transcript, directive) rendered with the model's own chat
template, and the loss on the reply's tokens (and its end-of-message) only.

Speed on CPU: the prompt (about 530 tokens) is read without gradients and only the reply
(about 40 tokens) is read with them, so gradients reach the adapter through the reply's own
positions, not back through the prompt's keys and values. Examples are batched by their system
message (one companion's card in one group), which is read once per batch. docs/voices.md has
the measured cost and the comparison with full back-propagation.

Resumable: ``OUT/voices/<tag>/checkpoint.pt`` (trainable weights, optimiser, step) is written
every ``checkpoint_every`` steps and at the end; a stopped run started again continues from the
last checkpoint. The finished run writes ``adapter/`` (PEFT) or ``hf/`` (full), ``metrics.json``
and ``DONE``.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import random
import sys
import time
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.llm.chat_format import ChatFormat
from engine.paths import assets_dir
from training.adapter_gguf import write_lora_gguf
from training.base_model import run as base_run
from training.common import TrainError, read_json, set_threads, sha256_files, write_json
from training.config import BaseConfig, LoraSettings
from training.corpus import Corpus, Example, corpus_dir
from training.layout import CONFIG, METRICS, hf_dir, is_done, mark_done
from training.lora import peft_config

END = "<|im_end|>"
MODES = ("shared", "full")


@dataclass
class Item:
    """One example as token ids: the prompt (system prefix first) and the target reply."""

    key: str  # the system message: examples sharing it share the prefix read
    prefix: list[int]
    prompt: list[int]
    target: list[int]
    persona: str
    invented: bool
    round_id: str


def voices_dir(out: Path, tag: str) -> Path:
    return Path(out) / "voices" / tag


def _tokenizer(out: Path) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(hf_dir(out)))


def chat_format(tok: Any) -> ChatFormat:
    return ChatFormat(tok.chat_template, name="bundled")


def encode(ex: Example, tok: Any, fmt: ChatFormat, persona: Any = None) -> Item:
    """``ex`` as the app would send it (to ``persona`` instead of its own, for the contrast)."""

    def count(s: str) -> int:
        return len(tok(s, add_special_tokens=False)["input_ids"])

    if persona is not None:
        ex = copy.copy(ex)
        ex.persona = persona
    req = ex.request(count)
    msgs = req.messages
    text = fmt.render(msgs)
    ids = tok(text, add_special_tokens=False)["input_ids"]
    prefix: list[int] = []
    if msgs and msgs[0].get("role") == "system":
        head = tok(fmt.render(msgs[:1]), add_special_tokens=False)["input_ids"]
        # The system block ends with end-of-message then newline; keep what is a true prefix.
        n = 0
        while n < len(head) and n < len(ids) - 1 and head[n] == ids[n]:
            n += 1
        prefix = ids[:n]
    target = tok(ex.target + END, add_special_tokens=False)["input_ids"]
    key = json.dumps(prefix)
    return Item(key, prefix, ids, target, ex.persona.name, ex.round.invented, ex.round.id)


def load_items(split: str, tok: Any, persona: str = "", limit: int = 0) -> list[Item]:
    """The split's replies (of ``persona`` only, when given; ``limit`` of them spread evenly
    over the corpus when given) as token ids."""
    fmt = chat_format(tok)
    exs = [ex for ex in Corpus(split).examples() if not persona or ex.persona.name == persona]
    return [encode(ex, tok, fmt) for ex in pick(exs, limit)]


def batches(items: list[Item], size: int, seed: int) -> list[list[int]]:
    """Indices of ``items`` in batches that share a system prefix, in a seeded order."""
    rng = random.Random(seed)
    groups: dict[str, list[int]] = defaultdict(list)
    for i, it in enumerate(items):
        groups[it.key].append(i)
    out: list[list[int]] = []
    for key in sorted(groups):
        idx = groups[key]
        rng.shuffle(idx)
        out.extend(idx[i : i + size] for i in range(0, len(idx), size))
    rng.shuffle(out)
    return out


# -- the model -------------------------------------------------------------------------------------


def load_model(out: Path, mode: str, lora: LoraSettings, adapter: Path | None = None) -> Any:
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(hf_dir(out)), dtype=torch.float32)
    if mode == "full":
        return model
    from peft import PeftModel, get_peft_model

    if adapter is not None:
        return PeftModel.from_pretrained(model, str(adapter), is_trainable=True)
    return get_peft_model(model, peft_config(lora))


def _prefix_cache(model: Any, prefix: list[int]) -> Any:
    import torch

    if not prefix:
        return None
    with torch.no_grad():
        return model(torch.tensor([prefix]), use_cache=True).past_key_values


def item_loss(model: Any, it: Item, cache: Any, grad: bool) -> tuple[Any, int]:
    """Summed negative log-likelihood of ``it``'s target after its prompt, and its token count.
    ``cache`` holds the prompt's system prefix (or None); it is copied, never changed."""
    with warnings.catch_warnings():
        # transformers 5 warns on every ``past_key_values=`` call (renamed ``cache``); the
        # keyword works on every supported version, so the warning is silenced here only.
        warnings.filterwarnings("ignore", message=".*past_key_values.*")
        return _item_loss(model, it, cache, grad)


def _item_loss(model: Any, it: Item, cache: Any, grad: bool) -> tuple[Any, int]:
    import torch
    import torch.nn.functional as F

    cache = copy.deepcopy(cache) if cache is not None else None
    start = len(it.prefix) if cache is not None else 0
    rest = it.prompt[start:-1]
    with torch.no_grad():
        if rest:
            cache = model(torch.tensor([rest]), past_key_values=cache, use_cache=True)
            cache = cache.past_key_values
    inp = torch.tensor([[it.prompt[-1], *it.target]])
    with torch.set_grad_enabled(grad):
        logits = model(inp, past_key_values=cache, use_cache=True).logits[0, :-1]
        nll = F.cross_entropy(logits.float(), torch.tensor(it.target), reduction="sum")
    return nll, len(it.target)


def lr_at(step: int, total: int, peak: float, warmup: int) -> float:
    if step < warmup:
        return peak * (step + 1) / warmup
    frac = (step - warmup) / max(1, total - warmup)
    return peak * 0.5 * (1 + math.cos(math.pi * min(1.0, frac)))


# -- evaluation ------------------------------------------------------------------------------------


def pick(items: list[Any], n: int) -> list[Any]:
    """``n`` items spread evenly over the list (the same ones for every run)."""
    if n <= 0 or n >= len(items):
        return list(items)
    step = len(items) / n
    return [items[int(i * step)] for i in range(n)]


def reply_nll(model: Any, items: Iterable[Item]) -> dict[str, float]:
    """Mean per-token NLL of the written replies (lower = the model writes them more readily),
    for the bundled companions and for invented personas separately."""
    import torch

    model.eval()
    sums: dict[str, list[float]] = {"bundled": [0.0, 0], "invented": [0.0, 0]}
    by_key: dict[str, list[Item]] = defaultdict(list)
    for it in items:
        by_key[it.key].append(it)
    with torch.no_grad():
        for group in by_key.values():
            cache = _prefix_cache(model, group[0].prefix)
            for it in group:
                nll, n = item_loss(model, it, cache, grad=False)
                s = sums["invented" if it.invented else "bundled"]
                s[0] += float(nll)
                s[1] += n
    return {k: round(v[0] / v[1], 4) for k, v in sums.items() if v[1]}


def contrast_items(split: str, tok: Any, n: int) -> list[tuple[Item, list[Item]]]:
    """For ``n`` test replies: the reply as its own persona's request, and the same reply as
    each other group member's request (same transcript, same directive)."""
    fmt = chat_format(tok)
    corpus = Corpus(split)
    exs = [ex for ex in corpus.examples()]
    step = max(1, len(exs) // max(1, n))
    out = []
    for ex in exs[::step][:n]:
        others = [p for p in ex.group.members if p.name != ex.persona.name]
        out.append((encode(ex, tok, fmt), [encode(ex, tok, fmt, persona=p) for p in others]))
    return out


def persona_contrast(model: Any, pairs: list[tuple[Item, list[Item]]]) -> dict[str, float]:
    """Share of test replies the model finds likelier under their own persona's card than under
    every other member's: does the reply it would write depend on whose card it reads?"""
    import torch

    model.eval()
    hits = {"bundled": [0, 0], "invented": [0, 0]}
    margins: list[float] = []
    with torch.no_grad():
        for own, others in pairs:
            nll_own, n = item_loss(model, own, _prefix_cache(model, own.prefix), grad=False)
            rivals = [
                float(item_loss(model, o, _prefix_cache(model, o.prefix), grad=False)[0])
                for o in others
            ]
            h = hits["invented" if own.invented else "bundled"]
            h[0] += int(float(nll_own) < min(rivals))
            h[1] += 1
            margins.append((min(rivals) - float(nll_own)) / n)
    res = {k: round(v[0] / v[1], 3) for k, v in hits.items() if v[1]}
    res["margin"] = round(sum(margins) / max(1, len(margins)), 4)
    return res


# -- training --------------------------------------------------------------------------------------


def _trainable(model: Any) -> list[Any]:
    return [p for p in model.parameters() if p.requires_grad]


def _save_ckpt(path: Path, model: Any, opt: Any, step: int, history: list[dict[str, Any]]) -> None:
    import torch

    state = {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}
    tmp = path.with_suffix(".part")
    torch.save({"params": state, "opt": opt.state_dict(), "step": step, "history": history}, tmp)
    tmp.replace(path)


def _load_ckpt(path: Path, model: Any, opt: Any) -> tuple[int, list[dict[str, Any]]]:
    import torch

    ck = torch.load(path, weights_only=False)
    named = dict(model.named_parameters())
    with torch.no_grad():
        for n, v in ck["params"].items():
            named[n].copy_(v)
    opt.load_state_dict(ck["opt"])
    return int(ck["step"]), list(ck.get("history", []))


def train(
    out: Path,
    tag: str,
    cfg: Any,
    log: Callable[[str], None] = print,
) -> Path:
    """Run (or resume) one SFT run; returns its folder."""
    import torch

    folder = voices_dir(out, tag)
    if is_done(folder):
        log(f"{folder}: already done")
        return folder
    if not (hf_dir(out) / "config.json").is_file():
        raise TrainError(f"{out}: no base model yet; run: mascot-train base --out {out}")
    if cfg.mode not in MODES:
        raise TrainError(f"--mode {cfg.mode}: choose one of {', '.join(MODES)}.")
    set_threads(cfg.threads)
    torch.manual_seed(cfg.seed)
    folder.mkdir(parents=True, exist_ok=True)
    write_json(folder / CONFIG, dataclasses.asdict(cfg))
    tok = _tokenizer(out)
    items = load_items("train", tok, cfg.persona, cfg.max_train)
    if not items:
        raise TrainError(f"No training replies for {cfg.persona or 'any persona'} in the corpus.")
    test = load_items("test", tok, cfg.persona, cfg.eval_examples)
    per_epoch = len(batches(items, cfg.batch, cfg.seed))
    total = cfg.steps or max(1, round(per_epoch * cfg.epochs))
    model = load_model(out, cfg.mode, cfg.lora)
    peak = cfg.lr or (2e-5 if cfg.mode == "full" else 3e-4)
    opt = torch.optim.AdamW(_trainable(model), lr=peak, weight_decay=0.0)
    ckpt = folder / "checkpoint.pt"
    step, history = 0, []
    if ckpt.is_file():
        step, history = _load_ckpt(ckpt, model, opt)
        log(f"resuming {tag} at step {step}/{total}")
    if step == 0 and not history and cfg.eval_before:
        history.append({"step": 0, "test_nll": reply_nll(model, test)})
        log(f"step 0 test nll {history[-1]['test_nll']}")
    t0, seen = time.time(), 0
    while step < total:
        epoch, pos = divmod(step, per_epoch)
        order = batches(items, cfg.batch, cfg.seed + epoch)
        batch = [items[i] for i in order[pos]]
        for g in opt.param_groups:
            g["lr"] = lr_at(step, total, peak, cfg.warmup)
        model.train()
        cache = _prefix_cache(model, batch[0].prefix)
        tokens = sum(len(it.target) for it in batch)
        loss_sum = 0.0
        for it in batch:
            nll, _ = item_loss(model, it, cache, grad=True)
            (nll / tokens).backward()
            loss_sum += float(nll.detach())
        torch.nn.utils.clip_grad_norm_(_trainable(model), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        step += 1
        seen += len(batch)
        row = {"step": step, "loss": round(loss_sum / tokens, 4), "lr": g["lr"]}
        if step % cfg.log_every == 0 or step == total:
            rate = (time.time() - t0) / max(1, seen)
            log(f"step {step}/{total} loss {row['loss']:.3f} ({rate:.2f} s/example)")
        if cfg.eval_every and (step % cfg.eval_every == 0 or step == total):
            row["test_nll"] = reply_nll(model, test)
            log(f"step {step} test nll {row['test_nll']}")
        history.append(row)
        if step % cfg.checkpoint_every == 0 or step == total:
            _save_ckpt(ckpt, model, opt, step, history)
    final = history[-1].get("test_nll") or reply_nll(model, test)
    contrast = persona_contrast(model, contrast_items("test", tok, cfg.contrast_examples))
    if cfg.mode == "full":
        model.save_pretrained(str(folder / "hf"))
        tok.save_pretrained(str(folder / "hf"))
    else:
        model.save_pretrained(str(folder / "adapter"))
    metrics = {
        "mode": cfg.mode,
        "persona": cfg.persona,
        "train_examples": len(items),
        "steps": total,
        "epochs": round(total / per_epoch, 3),
        "test_examples": len(test),
        "test_nll": final,
        "persona_contrast": contrast,
        "history": history,
    }
    write_json(folder / METRICS, metrics)
    mark_done(folder, {"test_nll": final, "persona_contrast": contrast})
    return folder


def read_metrics(folder: Path) -> dict[str, Any]:
    return read_json(folder / METRICS)


def measure_plain(out: Path, cfg: Any) -> dict[str, Any]:
    """The untrained model on the same test replies: the row every run is compared with."""
    folder = voices_dir(out, "plain")
    if is_done(folder):
        return read_metrics(folder)
    set_threads(cfg.threads)
    tok = _tokenizer(out)
    model = load_model(out, "full", cfg.lora)
    test = load_items("test", tok, cfg.persona, cfg.eval_examples)
    metrics = {
        "mode": "plain",
        "test_examples": len(test),
        "test_nll": reply_nll(model, test),
        "persona_contrast": persona_contrast(
            model, contrast_items("test", tok, cfg.contrast_examples)
        ),
    }
    write_json(folder / METRICS, metrics)
    mark_done(folder, metrics)
    return metrics


# -- the shipped weights ---------------------------------------------------------------------------


def shipped_dir() -> Path:
    return assets_dir() / "models" / "voices"


SHIPPED = "mascot-voices-lora.gguf"


def ship(out: Path, folder: Path, dest: Path | None = None) -> Path:
    """Write a finished shared run's adapter as the llama.cpp LoRA GGUF the app merges into the
    bundled model, with a manifest of how it was made."""
    if not is_done(folder) or not (folder / "adapter").is_dir():
        raise TrainError(f"{folder}: no finished shared adapter to ship.")
    dest = dest or shipped_dir()
    dest.mkdir(parents=True, exist_ok=True)
    gguf = write_lora_gguf(folder / "adapter", dest / (SHIPPED + ".part"), base=hf_dir(out))
    Path(gguf).replace(dest / SHIPPED)
    m = read_metrics(folder)
    write_json(
        dest / "manifest.json",
        {
            "file": SHIPPED,
            "base": "SmolLM2-135M-Instruct (the bundled Q4_1, dequantized)",
            "trained_on": "assets/corpus/train",
            "corpus_sha256": sha256_files(sorted(corpus_dir().glob("train/**/*.jsonl"))),
            "config": read_json(folder / CONFIG),
            "metrics": {k: m[k] for k in ("train_examples", "steps", "epochs", "test_nll")},
            "persona_contrast": m.get("persona_contrast"),
            "rebuild": "mascot-train bundled",
        },
    )
    return dest / SHIPPED


def run(cfg: Any, out: Path, tiny: bool = False) -> dict[str, Any]:
    """``mascot-train bundled``: the base model (when missing), the SFT run, and for a shared
    run over every persona, the shipped adapter."""
    base_run(BaseConfig(tiny=tiny), out)
    tag = cfg.tag or cfg.persona or cfg.mode
    folder = train(out, tag, cfg, log=lambda m: print(m, file=sys.stderr, flush=True))
    result: dict[str, Any] = {"run": str(folder), **read_metrics(folder)}
    result.pop("history", None)
    if cfg.ship and cfg.mode == "shared" and not cfg.persona and not tiny:
        result["shipped"] = str(ship(out, folder))
    return result
