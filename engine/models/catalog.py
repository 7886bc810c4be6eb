"""The curated model catalog (``assets/models/catalog.json``) and whether a model fits this computer.

The catalog lists instruct models people run at 0.5-4B (format in docs/models.md). ``estimate``
says how much memory a model needs in Mascot for a context size and a number of companions:

* the GGUF file (llama.cpp maps the weights once for everyone);
* the KV cache of the shared context (``n_ctx`` cells, allocated in full by llama.cpp), of the
  Director's own context (``director_lane_ctx``), and of each companion's saved slot (the cells
  it uses: its persona plus the recent-history window, at most ``n_ctx``);
* llama.cpp's compute buffers and the app (a fixed allowance plus the output logits).

KV bytes per token = 2 (K and V) x layers x KV heads x head size x 2 bytes (f16), from the GGUF
header of a file on disk or from the catalog for one not downloaded yet. Gemma 3 keeps most
layers to a sliding window, which llama.cpp stores smaller; the estimate ignores that (it
overstates Gemma's need).

``fit`` compares the need with this computer's memory the way Jan does: ``fits`` within 90% of
the memory available now, ``may be slow`` within 90% of all memory (other programs must give
way, or the weights get paged), otherwise ``won't fit``.
"""

from __future__ import annotations

import json
import math
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.errors import MascotError, ModelError
from engine.llm.backend import director_lane_ctx
from engine.paths import assets_dir

CATALOG_FORMAT = 1
FIT, SLOW, NO_FIT = "fits", "may be slow", "won't fit"
APP_BYTES = 350 * 1024 * 1024  # Python, Qt, llama.cpp's compute graph (docs/models.md)
DEFAULT_PERSONA_TOKENS = 512  # a persona's system prompt and turn notes, roughly
HEADROOM = 0.9  # only 90% of memory counts (Jan's rule)

_REQUIRED = {
    "id": str,
    "name": str,
    "family": str,
    "architecture": str,
    "repo": str,
    "file": str,
    "quantization": str,
    "size_bytes": int,
    "parameters": int,
    "context_length": int,
    "layers": int,
    "kv_heads": int,
    "head_dim": int,
    "vocab": int,
    "licence": str,
    "licence_url": str,
    "good_for": str,
    "ram_required_gb": (int, float),
}


class CatalogError(MascotError):
    """The catalog file is missing or malformed (one line naming the entry and field)."""


@dataclass
class CatalogEntry:
    id: str
    name: str
    family: str
    architecture: str
    repo: str
    file: str
    quantization: str
    size_bytes: int
    parameters: int
    context_length: int
    layers: int
    kv_heads: int
    head_dim: int
    vocab: int
    licence: str
    licence_url: str
    good_for: str
    ram_required_gb: float
    revision: str = "main"
    size_exact: bool = False
    size_source: str = ""
    sha256: str | None = None
    md5: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def kv_bytes_per_token(self) -> int:
        return kv_bytes_per_token(self.layers, self.kv_heads, self.head_dim)

    @property
    def params_label(self) -> str:
        b = self.parameters / 1e9
        return f"{b:.1f}B" if b >= 1 else f"{self.parameters / 1e6:.0f}M"


def catalog_path() -> Path:
    frozen = getattr(sys, "_MEIPASS", None)
    if frozen and (Path(frozen) / "assets" / "models" / "catalog.json").is_file():
        return Path(frozen) / "assets" / "models" / "catalog.json"
    return assets_dir() / "models" / "catalog.json"


def load_catalog(path: str | Path | None = None) -> list[CatalogEntry]:
    """The catalog's entries in ``recommend_order`` (best first). CatalogError (one line)."""
    p = Path(path) if path else catalog_path()
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except OSError as e:
        raise CatalogError(f"{p}: cannot read the model catalog ({e.strerror or e}).") from None
    except ValueError as e:
        raise CatalogError(f"{p}: the model catalog is not valid JSON ({str(e)[:80]}).") from None
    if (
        not isinstance(data, dict)
        or data.get("format") != CATALOG_FORMAT
        or not isinstance(data.get("models"), list)
    ):
        raise CatalogError(
            f'{p}: not a format-{CATALOG_FORMAT} model catalog (needs "format" and "models").'
        )
    entries: list[CatalogEntry] = []
    known = {f for f in CatalogEntry.__dataclass_fields__ if f != "extra"}
    for i, raw in enumerate(data["models"]):
        label = f"models[{i}]" + (
            f" '{raw.get('id')}'" if isinstance(raw, dict) and raw.get("id") else ""
        )
        if not isinstance(raw, dict):
            raise CatalogError(f"{p}: {label} is not an object.")
        for key, kind in _REQUIRED.items():
            value = raw.get(key)
            if not isinstance(value, kind) or isinstance(value, bool) or value in ("", None):
                raise CatalogError(
                    f"{p}: {label}: field '{key}' is missing or not a {getattr(kind, '__name__', 'number')}."
                )
        for key in ("sha256", "md5"):
            v = raw.get(key)
            n = 64 if key == "sha256" else 32
            if v is not None and (
                not isinstance(v, str) or len(v) != n or any(c not in "0123456789abcdef" for c in v)
            ):
                raise CatalogError(
                    f"{p}: {label}: field '{key}' must be {n} lowercase hex digits or null."
                )
        if not raw["file"].lower().endswith(".gguf"):
            raise CatalogError(f"{p}: {label}: field 'file' must name a .gguf file.")
        entry = CatalogEntry(
            **{k: v for k, v in raw.items() if k in known},
            extra={k: v for k, v in raw.items() if k not in known},
        )
        entries.append(entry)
    ids = [e.id for e in entries]
    if len(set(ids)) != len(ids):
        raise CatalogError(f"{p}: an id appears twice in the model catalog.")
    order = [x for x in data.get("recommend_order", []) if x in ids]
    rank = {x: i for i, x in enumerate(order)}
    return sorted(entries, key=lambda e: rank.get(e.id, len(rank)))


# -- memory ----------------------------------------------------------------------------------


def kv_bytes_per_token(layers: int, kv_heads: int, head_dim: int, type_bytes: int = 2) -> int:
    return 2 * layers * kv_heads * head_dim * type_bytes


_SCALARS = {
    0: "<B",
    1: "<b",
    2: "<H",
    3: "<h",
    4: "<I",
    5: "<i",
    6: "<f",
    7: "<?",
    10: "<Q",
    11: "<q",
    12: "<d",
}


def _header_values(path: str | Path, wanted: set[str]) -> dict[str, Any]:
    """Values of some header keys of a GGUF file, read straight from its key/value section
    (milliseconds; the ``gguf`` package's reader parses the whole vocabulary, seconds). A numeric
    array of up to 4,096 values is returned as a list, any other array as its length. Stops once
    every wanted key is found."""
    import mmap
    import struct

    out: dict[str, Any] = {}
    try:
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            if m[:4] != b"GGUF":
                raise ModelError(f"{path}: not a GGUF model file.")
            n_kv = struct.unpack_from("<Q", m, 16)[0]
            at = 24

            def string(at: int) -> tuple[str, int]:
                n = struct.unpack_from("<Q", m, at)[0]
                return m[at + 8 : at + 8 + n].decode("utf-8", "replace"), at + 8 + n

            def skip(kind: int, at: int) -> tuple[Any, int]:
                if kind in _SCALARS:
                    fmt = _SCALARS[kind]
                    return struct.unpack_from(fmt, m, at)[0], at + struct.calcsize(fmt)
                if kind == 8:
                    return string(at)
                if kind == 9:
                    sub, count = struct.unpack_from("<IQ", m, at)
                    at += 12
                    if sub in _SCALARS:  # small numeric arrays (per-layer head counts) are read
                        size = struct.calcsize(_SCALARS[sub])
                        values = (
                            list(struct.unpack_from(f"<{count}{_SCALARS[sub][1]}", m, at))
                            if count <= 4096
                            else count
                        )
                        return values, at + count * size
                    for _ in range(count):
                        _, at = skip(sub, at)
                    return count, at
                raise ModelError(f"{path}: unknown GGUF value type {kind}.")

            for _ in range(n_kv):
                key, at = string(at)
                kind = struct.unpack_from("<I", m, at)[0]
                value, at = skip(kind, at + 4)
                if key in wanted:
                    out[key] = value
                    if len(out) == len(wanted):
                        break
    except (OSError, ValueError, struct.error) as e:
        raise ModelError(f"{path}: cannot read the GGUF header ({type(e).__name__}).") from None
    return out


def gguf_kv_shape(path: str | Path) -> tuple[int, int, int, int]:
    """(layers, KV heads, head size, vocab) from a GGUF header. ModelError if unreadable."""
    arch = _header_values(path, {"general.architecture"}).get("general.architecture") or ""
    keys = [
        f"{arch}.block_count",
        f"{arch}.attention.head_count",
        f"{arch}.attention.head_count_kv",
        f"{arch}.embedding_length",
        f"{arch}.attention.key_length",
        f"{arch}.vocab_size",
        "tokenizer.ggml.tokens",
    ]
    f = {k: None for k in keys} | _header_values(path, set(keys))
    layers = int(f[keys[0]] or 0)

    def most(v: Any) -> Any:  # per-layer counts: the largest
        return max(v) if isinstance(v, list) and v else v

    heads = int(most(f[keys[1]]) or 1)
    kv = int(most(f[keys[2]]) or heads)
    head_dim = int(f[keys[4]] or (int(f[keys[3]] or 0) // max(1, heads)))
    vocab = int(f[keys[5]] or f["tokenizer.ggml.tokens"] or 0)
    return layers, kv, head_dim, vocab


@dataclass
class MemoryNeed:
    weights: int
    kv_context: int
    kv_director: int
    kv_companions: int
    overhead: int

    @property
    def total(self) -> int:
        return (
            self.weights + self.kv_context + self.kv_director + self.kv_companions + self.overhead
        )


def estimate(
    size_bytes: int,
    kv_per_token: int,
    vocab: int,
    *,
    n_ctx: int = 4096,
    companions: int = 4,
    history_tokens: int = 2048,
) -> MemoryNeed:
    """Memory Mascot needs to run a model of ``size_bytes`` for ``companions`` companions and
    the Director, with ``n_ctx`` tokens of context and a ``history_tokens`` window (0 = all)."""
    slot = n_ctx if history_tokens <= 0 else min(n_ctx, history_tokens + DEFAULT_PERSONA_TOKENS)
    logits = 4 * vocab * 2  # llama.cpp's float logits for the last token, and a copy in Python
    return MemoryNeed(
        weights=size_bytes,
        kv_context=kv_per_token * n_ctx,
        kv_director=kv_per_token * director_lane_ctx(n_ctx),
        kv_companions=kv_per_token * slot * max(0, companions),
        overhead=APP_BYTES + logits + size_bytes // 20,
    )


def entry_need(entry: CatalogEntry, **kw: Any) -> MemoryNeed:
    return estimate(entry.size_bytes, entry.kv_bytes_per_token, entry.vocab, **kw)


def file_need(path: str | Path, **kw: Any) -> MemoryNeed:
    """The same estimate for a GGUF on disk, from its header."""
    layers, kv, head_dim, vocab = gguf_kv_shape(path)
    return estimate(
        Path(path).stat().st_size, kv_bytes_per_token(layers, kv, head_dim), vocab, **kw
    )


def memory_info() -> tuple[int, int]:
    """(total, available) bytes of memory on this computer; available falls back to total / 2
    where the system does not say."""
    total = avail = 0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            key, _, rest = line.partition(":")
            if key == "MemTotal":
                total = int(rest.split()[0]) * 1024
            elif key == "MemAvailable":
                avail = int(rest.split()[0]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    if not total:
        try:
            total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError, AttributeError):
            total = 0
    if not total and sys.platform == "darwin":
        import subprocess

        try:
            total = int(
                subprocess.run(
                    ["sysctl", "-n", "hw.memsize"], capture_output=True, text=True, timeout=5
                ).stdout.strip()
            )
        except (OSError, ValueError, subprocess.SubprocessError):
            total = 0
    if not total and sys.platform == "win32":
        import ctypes

        class MemoryStatus(ctypes.Structure):
            _fields_ = [
                ("dwLength", ctypes.c_ulong),
                ("dwMemoryLoad", ctypes.c_ulong),
                ("ullTotalPhys", ctypes.c_ulonglong),
                ("ullAvailPhys", ctypes.c_ulonglong),
                ("ullTotalPageFile", ctypes.c_ulonglong),
                ("ullAvailPageFile", ctypes.c_ulonglong),
                ("ullTotalVirtual", ctypes.c_ulonglong),
                ("ullAvailVirtual", ctypes.c_ulonglong),
                ("ullAvailExtendedVirtual", ctypes.c_ulonglong),
            ]

        st = MemoryStatus()
        st.dwLength = ctypes.sizeof(st)
        if ctypes.windll.kernel32.GlobalMemoryStatusEx(ctypes.byref(st)):  # type: ignore[attr-defined]
            total, avail = int(st.ullTotalPhys), int(st.ullAvailPhys)
    return total, avail or total // 2


@dataclass
class Fit:
    label: str  # FIT, SLOW or NO_FIT
    need: int  # bytes
    reason: str  # one line for a tooltip


def gb(n: float) -> str:
    return f"{n / 1e9:.1f} GB"


def fit(need: MemoryNeed | int, total: int, available: int) -> Fit:
    n = need.total if isinstance(need, MemoryNeed) else int(need)
    if n <= HEADROOM * available:
        return Fit(FIT, n, f"needs about {gb(n)}; {gb(available)} of memory is free now")
    if n <= HEADROOM * total:
        return Fit(
            SLOW,
            n,
            f"needs about {gb(n)}, more than the {gb(available)} free now "
            f"(of {gb(total)}): close other programs, or expect paging",
        )
    return Fit(NO_FIT, n, f"needs about {gb(n)}; this computer has {gb(total)}")


def ram_required_gb(entry: CatalogEntry) -> int:
    """The catalog's ``ram_required_gb`` rule: the estimate at the app's defaults (4,096 tokens,
    four companions, 2,048-token history), rounded up to a whole GB."""
    return math.ceil(entry_need(entry).total / 1e9)


def recommend(entries: list[CatalogEntry], fits: dict[str, Fit]) -> str | None:
    """The first entry (catalog order, best first) that fits; else None."""
    return next((e.id for e in entries if fits.get(e.id) and fits[e.id].label == FIT), None)
