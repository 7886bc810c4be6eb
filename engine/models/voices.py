"""The voices model: the bundled model with the shipped voices LoRA merged into its weights.

Mascot ships one LoRA adapter for the bundled SmolLM2-135M, fine-tuned on the persona corpus so
that every companion sounds like its card (``assets/models/voices/mascot-voices-lora.gguf``,
written by ``training/adapter_gguf.py``). An adapter applied at decode time costs speed, so on
the first run the adapter is merged into a copy of the bundled model instead, in numpy (no
torch): each adapted weight is dequantized, ``alpha / r * B @ A`` is added and the result is
stored as Q8_0; every other tensor and all metadata are copied unchanged (only
``general.file_type`` says Q8_0 now). The file is written to ``<data folder>/models`` as a
``.part`` and renamed when complete, with a manifest beside it (``<file>.manifest.json``) that
records what it was built from, and it is registered as ``mascot-voices-135m``.

``ensure_voices`` does this once: a file whose recorded sources (the adapter's and the bundled
model's sha256) match the shipped ones is kept; a changed adapter or bundled model rebuilds it.
A failure (disk full, damaged adapter) is one line for the user, and the companions run on the
plain model. docs/models.md ("The voices model") has the sizes and speeds.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import shutil
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from engine.errors import Cancelled, MascotError, ModelError
from engine.models.registry import (
    BUNDLED_NAME,
    MERGED_KIND,
    VOICES_NAME,
    ModelRegistry,
    bundled_model_path,
    close_reader,
    inspect_adapter,
    open_reader,
    reader_field,
    sha256_file,
)
from engine.paths import assets_dir, models_dir

log = logging.getLogger("mascot.models")

ADAPTER_FILE = "mascot-voices-lora.gguf"
VOICES_LABEL = "Voices: SmolLM2-135M + Mascot voices adapter (merged)"
PLAIN_LABEL = "Plain SmolLM2-135M"
MERGE_FORMAT = 1  # the merge recipe; a new one rebuilds files made by the old
CHOICES = ("voices", "plain")  # what companions without a model of their own run on
FALLBACK = "Companions use the plain SmolLM2-135M."


class VoicesError(ModelError):
    """The voices model cannot be built; the message says why (one line)."""


def shipped_adapter() -> Path:
    """The voices adapter shipped in ``assets/models/voices/`` (``MASCOT_VOICES_ADAPTER``
    overrides it; a path that does not exist means no adapter is shipped)."""
    env = os.environ.get("MASCOT_VOICES_ADAPTER")
    if env:
        return Path(env).expanduser()
    return assets_dir() / "models" / "voices" / ADAPTER_FILE


def voices_path() -> Path:
    return models_dir() / f"{VOICES_NAME}.gguf"


def manifest_path(model: Path) -> Path:
    return model.with_name(model.name + ".manifest.json")


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _write_json(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_name(path.name + ".part")
    tmp.write_text(json.dumps(data, indent=2), encoding="utf-8")
    os.replace(tmp, path)


# -- the merge ------------------------------------------------------------------------------------


def _lora_pairs(reader: Any) -> dict[str, tuple[Any, Any]]:
    """Adapted weight name -> (A of shape (r, in), B of shape (out, r)) as float32."""
    import numpy as np

    tensors = {t.name: t for t in reader.tensors}
    pairs = {}
    for name, t in tensors.items():
        if not name.endswith(".lora_a"):
            continue
        weight = name[: -len(".lora_a")]
        b = tensors.get(weight + ".lora_b")
        if b is None:
            raise VoicesError(f"the adapter has no lora_b for {weight}")
        pairs[weight] = (np.asarray(t.data, dtype=np.float32), np.asarray(b.data, dtype=np.float32))
    if not pairs:
        raise VoicesError("the adapter holds no LoRA matrices")
    return pairs


def check_adapter(adapter: Path) -> Any:
    """The shipped adapter's ``ModelInfo`` after the registry's checks; VoicesError (one line,
    what is wrong and that a reinstall mends it) for a damaged file."""
    try:
        return inspect_adapter(adapter, compute_hash=False)
    except ModelError as e:
        detail = str(e).removeprefix(f"{adapter}: ").split(";")[0].rstrip(".")
        raise VoicesError(
            f"the shipped voices adapter {adapter} is damaged ({detail}); reinstall Mascot "
            "to repair it"
        ) from None


def merge_lora(
    base: Path,
    adapter: Path,
    dest: Path,
    *,
    cancel: threading.Event | None = None,
) -> dict[str, Any]:
    """Write ``base`` with the LoRA ``adapter`` merged in to ``dest`` (through ``dest.part``,
    renamed when complete). Adapted weights become Q8_0 (F16 where a row does not divide into
    Q8_0 blocks). Returns what was merged. Raises VoicesError (one line) or Cancelled."""
    import gguf
    import numpy as np
    from gguf.quants import dequantize, quant_shape_to_byte_shape, quantize

    info = check_adapter(adapter)
    part = dest.with_name(dest.name + ".part")
    reader = open_reader(base)
    areader = open_reader(adapter)
    writer = None
    try:
        arch = str(reader_field(reader, "general.architecture") or "")
        if info.architecture != arch:
            raise VoicesError(
                f"the voices adapter is for '{info.architecture}' models, the bundled model "
                f"is '{arch}'"
            )
        alpha = float(reader_field(areader, "adapter.lora.alpha") or 0)
        pairs = _lora_pairs(areader)
        ranks = {a.shape[0] for a, _ in pairs.values()}
        if not (alpha > 0 and math.isfinite(alpha)):
            raise VoicesError("the voices adapter has no usable adapter.lora.alpha")
        tensors = {t.name: t for t in reader.tensors}
        missing = sorted(set(pairs) - set(tensors))
        if missing:
            raise VoicesError(
                f"the voices adapter changes '{missing[0]}', which the bundled model lacks "
                "(it was made for another model)"
            )

        q8, f16 = gguf.GGMLQuantizationType.Q8_0, gguf.GGMLQuantizationType.F16
        block = gguf.GGML_QUANT_SIZES[q8][0]
        plan = []  # (tensor, new type or None)
        expected = 0
        for t in reader.tensors:
            if t.name in pairs:
                a, b = pairs[t.name]
                n_in, n_out = int(t.shape[0]), int(t.shape[1])
                if a.shape[1] != n_in or b.shape[0] != n_out or a.shape[0] != b.shape[1]:
                    raise VoicesError(
                        f"the voices adapter's {t.name} is {b.shape[0]}x{a.shape[1]}, the bundled "
                        f"model's is {n_out}x{n_in} (it was made for another model)"
                    )
                if n_in % block == 0:
                    shape = quant_shape_to_byte_shape((n_out, n_in), q8)
                    plan.append((t, q8, shape, int(np.prod(shape))))
                else:
                    plan.append((t, f16, (n_out, n_in), n_out * n_in * 2))
            else:
                plan.append((t, None, t.data.shape, int(t.n_bytes)))
            expected += plan[-1][3]

        dest.parent.mkdir(parents=True, exist_ok=True)
        need = expected + 8 * 1024 * 1024  # the header and the tokenizer's vocabulary
        free = shutil.disk_usage(dest.parent).free
        if free < need:
            raise VoicesError(
                f"not enough disk space in {dest.parent} ({free / 1e6:.0f} MB free, about "
                f"{need / 1e6:.0f} MB needed); free some space and start Mascot again"
            )

        t0 = time.perf_counter()
        writer = gguf.GGUFWriter(str(part), arch)
        for field in reader.fields.values():
            if field.name == gguf.Keys.General.ARCHITECTURE or field.name.startswith("GGUF."):
                continue  # written by GGUFWriter itself
            vtype = field.types[0]
            sub = field.types[-1] if vtype == gguf.GGUFValueType.ARRAY else None
            value = field.contents()
            if field.name == gguf.Keys.General.FILE_TYPE:
                value = int(gguf.LlamaFileType.MOSTLY_Q8_0)
            writer.add_key_value(field.name, value, vtype, sub_type=sub)
        for t, qtype, shape, nbytes in plan:
            if qtype is None:
                writer.add_tensor_info(t.name, t.data.shape, t.data.dtype, nbytes, t.tensor_type)
            elif qtype == f16:
                writer.add_tensor_info(t.name, shape, np.dtype(np.float16), nbytes)
            else:
                writer.add_tensor_info(t.name, shape, np.dtype(np.uint8), nbytes, qtype)
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_ti_data_to_file()
        for t, qtype, _shape, _nbytes in plan:
            if cancel is not None and cancel.is_set():
                raise Cancelled("Building the voices model was stopped.")
            if qtype is None:
                writer.write_tensor_data(t.data, tensor_endianess=reader.endianess)
                continue
            a, b = pairs[t.name]
            w = dequantize(t.data, t.tensor_type).astype(np.float32, copy=False)
            w = w + np.float32(alpha / a.shape[0]) * (b @ a)
            if not np.isfinite(w).all():
                raise VoicesError(f"merging the voices adapter into {t.name} overflows")
            if qtype == f16:
                writer.write_tensor_data(w.astype(np.float16))
            else:
                writer.write_tensor_data(quantize(w, qtype))
        writer.close()
        writer = None
        os.replace(part, dest)
    except OSError as e:
        full = e.errno == 28  # ENOSPC
        raise VoicesError(
            f"not enough disk space in {dest.parent}; free some space and start Mascot again"
            if full
            else f"cannot write {part} ({e.strerror or e})"
        ) from None
    finally:
        if writer is not None:
            try:
                writer.close()
            except OSError:  # the disk is full: the failure above already says so
                pass
        part.unlink(missing_ok=True)
        close_reader(reader)
        close_reader(areader)
    return {
        "merged_tensors": len(pairs),
        "rank": max(ranks),
        "alpha": alpha,
        "quantization": "Q8_0",
        "seconds": round(time.perf_counter() - t0, 2),
    }


# -- once per shipped adapter ---------------------------------------------------------------------


@dataclass
class VoicesResult:
    """What ``ensure_voices`` found or did. ``status``: "ready" (built before, sources match),
    "built" (merged now), "absent" (no adapter shipped), "stale" (needs a build; only with
    ``build=False``) or "failed" (``message`` says why, the plain model is used)."""

    status: str
    path: Path | None = None
    message: str = ""
    manifest: dict[str, Any] | None = None

    @property
    def usable(self) -> bool:
        return self.status in ("ready", "built")


def _source(path: Path, recorded: dict[str, Any] | None, *, hash_changed: bool) -> dict[str, Any]:
    """A source file's identity. Its sha256 is read again only when its size or modification
    time differ from the recorded ones (the rule the GGUF header cache uses); with
    ``hash_changed=False`` such a file gets no sha256 (it must be checked)."""
    st = path.stat()
    out = {"file": path.name, "path": str(path), "size": st.st_size, "mtime_ns": st.st_mtime_ns}
    if recorded and (recorded.get("size"), recorded.get("mtime_ns")) == (
        st.st_size,
        st.st_mtime_ns,
    ):
        out["sha256"] = recorded.get("sha256", "")
    elif hash_changed:
        out["sha256"] = sha256_file(path)
    else:
        out["sha256"] = ""
    return out


def source_key(adapter_sha: str, base_sha: str) -> str:
    return hashlib.sha256(f"{MERGE_FORMAT}:{adapter_sha}:{base_sha}".encode()).hexdigest()


def _register(store: Any, dest: Path, manifest: dict[str, Any]) -> None:
    row = store.model(VOICES_NAME)
    if row and row.get("sha256") == manifest["sha256"] and row.get("path") == str(dest.resolve()):
        return
    ModelRegistry(store).add(dest, name=VOICES_NAME, sha256=manifest["sha256"])


def _forget(store: Any) -> None:
    if store is not None and store.model(VOICES_NAME):
        store.remove_model(VOICES_NAME)


def ensure_voices(
    store: Any = None,
    *,
    build: bool = True,
    progress: Callable[[str], None] | None = None,
    cancel: threading.Event | None = None,
) -> VoicesResult:
    """Make sure the voices model matches the shipped adapter and the bundled model, building it
    when it does not (``build=False``: only look, without reading any file whole). Registers it
    in ``store``'s registry (and forgets a stale registration when it cannot be built).
    ``progress("building")`` is called before a merge starts. Never raises except Cancelled."""
    adapter = shipped_adapter()
    if not adapter.is_file():
        return VoicesResult("absent")
    dest = voices_path()
    try:
        base = bundled_model_path()
        manifest = _read_json(manifest_path(dest))
        old = manifest if manifest and manifest.get("kind") == MERGED_KIND else {}
        a = _source(adapter, old.get("adapter"), hash_changed=build)
        b = _source(base, old.get("base"), hash_changed=build)
        key = source_key(a["sha256"], b["sha256"]) if a["sha256"] and b["sha256"] else ""
        built = dest.is_file() and old and dest.stat().st_size == old.get("size")
        if built and key and old.get("source") == key:
            if store is not None:
                _register(store, dest, old)
            return VoicesResult("ready", dest, manifest=old)
        if not build:
            return VoicesResult("stale", dest)
        check_adapter(adapter)  # a damaged file is one line, before "building" is announced
        if progress is not None:
            progress("building")
        stats = merge_lora(base, adapter, dest, cancel=cancel)
        st = dest.stat()
        manifest = {
            "kind": MERGED_KIND,
            "format": MERGE_FORMAT,
            "name": VOICES_NAME,
            "label": VOICES_LABEL,
            "base": {"name": BUNDLED_NAME, **b},
            "adapter": {"name": adapter.stem, **a},
            "source": key,
            **stats,
            "size": st.st_size,
            "sha256": sha256_file(dest),
            "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        }
        _write_json(manifest_path(dest), manifest)
        if store is not None:
            _register(store, dest, manifest)
        return VoicesResult("built", dest, manifest=manifest)
    except Cancelled:
        raise
    except MascotError as e:
        _forget_quietly(store)
        reason = str(e).rstrip(".")
        return VoicesResult(
            "failed", message=f"Could not build the voices model: {reason}. {FALLBACK}"
        )
    except Exception as e:  # noqa: BLE001 - the app and the CLI must open: one line, details logged
        log.exception("building the voices model failed")
        _forget_quietly(store)
        return VoicesResult(
            "failed",
            message=f"Could not build the voices model ({type(e).__name__}: {str(e)[:120]}). "
            f"{FALLBACK}",
        )


def _forget_quietly(store: Any) -> None:
    try:
        _forget(store)
    except Exception:  # noqa: BLE001 - a failed clean-up must not hide the failure's line
        log.exception("could not forget the stale voices model")


# -- which model companions run on ----------------------------------------------------------------


def voices_model(store: Any = None) -> str | None:
    """What to give as the companions' model for the voices model: its registry name (with a
    store), or its path (without one); None when it is not built."""
    if store is not None:
        row = store.model(VOICES_NAME)
        return VOICES_NAME if row and Path(row["path"]).is_file() else None
    dest = voices_path()
    return str(dest) if dest.is_file() and manifest_path(dest).is_file() else None


def companion_default(store: Any, choice: str = "voices") -> str | None:
    """The model for companions without one of their own: the voices model when it is built and
    ``choice`` is "voices"; the plain bundled model (None) otherwise."""
    if choice == "plain":
        return None
    return voices_model(store)


def describe_model(model: str | None) -> str:
    """What a companion's model is, for people: the voices model and the plain one by label."""
    if not model or model in (BUNDLED_NAME, "default", "bundled"):
        return PLAIN_LABEL
    if model == VOICES_NAME or Path(model).name == f"{VOICES_NAME}.gguf":
        return VOICES_LABEL
    return model
