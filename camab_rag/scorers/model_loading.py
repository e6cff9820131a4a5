"""The in-process scorer's model and tokenizer, loaded from local files only.

:func:`load_causal_lm` takes an embedded model's short name, a transformers directory, a
``.gguf`` file, a hub id in the local cache, or a loaded model; the offline flags are set
before transformers is imported.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from camab_rag.errors import InputError
from camab_rag.scorers.attention import use_lower_right
from camab_rag.scorers.models import (
    MODELS,
    ensure_gguf_converted,
    ensure_model,
    set_offline_flags,
)

DTYPES = ("float32", "bfloat16", "float16")
"""The dtypes a model can be loaded in."""


@dataclass(frozen=True)
class LoadedModel:
    """A causal LM ready to score: in eval mode on ``device``, in ``dtype``."""

    model: Any
    tokenizer: Any
    name: str
    """The name it was asked by, or a loaded model's ``name_or_path``."""
    path: str
    """The local directory it was loaded from (empty for a model loaded by the caller)."""
    device: str
    dtype: str


def load_causal_lm(
    model: str | os.PathLike[str] | Any,
    *,
    tokenizer: Any = None,
    dtype: str | None = None,
    device: str = "auto",
) -> LoadedModel:
    """Load ``model`` (as :class:`~camab_rag.scorers.transformers_scorer.TransformersScorer`
    takes it) from local files, or check and adopt a loaded one; float32 by default, and on
    CUDA ``sdpa`` attention becomes :mod:`camab_rag.scorers.attention`'s."""
    if isinstance(model, (str, os.PathLike)):
        loaded = _load_by_name(model, tokenizer, dtype or "float32", device)
    else:
        adopted, device, own_dtype = _adopted(model, tokenizer, dtype, device)
        name = str(getattr(model, "name_or_path", "") or type(model).__name__)
        loaded = LoadedModel(adopted, tokenizer, name, "", device, own_dtype)
    loaded.model.eval()
    if str(loaded.device).split(":")[0] == "cuda":
        # the cached-prefix passes run flash attention (BENCHMARKS.md, "Attention
        # kernel on a GPU"); the model's attention is otherwise unchanged
        use_lower_right(loaded.model)
    return loaded


def _load_by_name(
    model: str | os.PathLike[str], tokenizer: Any, dtype: str, device: str
) -> LoadedModel:
    set_offline_flags()  # before transformers is imported (a loaded model's user owns it)
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    name = str(model)
    path = resolve_model_path(model)
    try:
        tokenizer = (
            tokenizer
            if tokenizer is not None
            else AutoTokenizer.from_pretrained(path, local_files_only=True)
        )
        loaded: Any = AutoModelForCausalLM.from_pretrained(
            path, dtype=getattr(torch, dtype), local_files_only=True
        )
    except OSError as error:
        raise InputError(
            f"cannot load model {name!r} from local files (nothing is "
            f"fetched from a model hub): {error}"
        ) from error
    return LoadedModel(loaded.to(device), tokenizer, name, path, device, dtype)


def _adopted(model: Any, tokenizer: Any, dtype: str | None, device: str) -> tuple[Any, str, str]:
    """A loaded causal LM, checked: (model, device, dtype); another ``device`` moves it."""
    if tokenizer is None:
        raise InputError(
            "a loaded model needs its tokenizer: TransformersScorer(model, tokenizer=tokenizer), "
            "or pass a model name or directory"
        )
    if getattr(model, "config", None) is None or not callable(getattr(model, "forward", None)):
        raise InputError(
            f"model must be a transformers causal LM (with a config), a model name or a "
            f"directory, got {type(model).__name__}"
        )
    own_dtype = str(getattr(model, "dtype", "")).removeprefix("torch.")
    if dtype is not None and dtype != own_dtype:
        raise InputError(
            f"the loaded model is {own_dtype}; dtype={dtype!r} cannot change it (load the "
            "model in that dtype, or leave dtype out)"
        )
    dispatched = bool(getattr(model, "hf_device_map", None))
    if dispatched and device != "auto":
        raise InputError(
            "the model is dispatched over devices (device_map): it stays where it is, so "
            "leave device='auto'"
        )
    if device == "auto" or dispatched:
        return model, str(model.device), own_dtype
    return model.to(device), device, own_dtype


def resolve_model_path(model: str | os.PathLike[str]) -> str:
    """A local directory (or cached hub id) transformers can load for ``model``."""
    text = str(model)
    if text in MODELS:
        return str(ensure_model(text))
    path = Path(text).expanduser()
    if path.suffix.lower() == ".gguf":
        return str(ensure_gguf_converted(path))
    if path.is_dir():
        return str(path)
    if path.exists():
        raise InputError(
            f"model {text!r} is a file but not a .gguf; pass a directory, a GGUF file, a hub "
            f"id, or one of the short names {', '.join(sorted(MODELS))}"
        )
    if text.startswith((".", "/", "~")) or text.count("/") > 1:
        raise InputError(
            f"model path {text!r} does not exist; known short names: {', '.join(sorted(MODELS))}"
        )
    return text  # a hub id: loads only if it is already in the local Hugging Face cache
