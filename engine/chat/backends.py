"""Which model runs each companion: names and paths resolved to shared llama.cpp runtimes."""

from __future__ import annotations

from typing import Any, Callable

from engine.llm.adapters import AdapterBackend
from engine.llm.backend import Backend
from engine.llm.runtime import RuntimePool
from engine.models.registry import ModelRegistry, bundled_model_path


def default_backend_factory(
    store: Any = None, n_ctx: int = 4096, n_threads: int | None = None
) -> Callable[[str | None], Backend]:
    """Resolve a model name/path (None = bundled) to a shared llama.cpp runtime. A registered
    LoRA adapter resolves to its base model's runtime with the adapter applied per request."""
    pool = RuntimePool(n_ctx=n_ctx, n_threads=n_threads)
    registry = ModelRegistry(store) if store is not None else None
    adapters: dict[tuple[str, str], Backend] = {}

    def factory(model: str | None) -> Backend:
        if not model:
            return pool.get(bundled_model_path())
        if registry is not None:
            info, adapter = registry.resolve(model)
            if adapter is not None:
                runtime = pool.get(info.path)
                key = (runtime.path, adapter.path)
                if key not in adapters:
                    adapters[key] = AdapterBackend(runtime, adapter.path, name=adapter.name)
                return adapters[key]
            return pool.get(info.path)
        return pool.get(model)

    factory.pool = pool  # type: ignore[attr-defined]
    return factory
