"""Answering with an in-process camab-rag model, for a framework's chat-model class.

The embedded model (``camab_rag.default_scorer()``) both generates and scores, so a chain
that answers with it is attributed by the very weights that wrote the answer. A
framework's chat model over it (LangChain's ``CamabChatModel``) keeps its own types; the
checks, the decoding call, the stop markers and the streamed pieces are here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from camab_rag.scorers.base import Prompt


def checked_generator(generator: object, owner: str) -> None:
    """Refuse a ``generator`` without ``generate(prompts, max_new_tokens=...)``."""
    if not callable(getattr(generator, "generate", None)):
        raise TypeError(
            f"{owner} needs generator= an object with generate(prompts, "
            "max_new_tokens=...), e.g. camab_rag.default_scorer()"
        )


def generator_scorer(generator: object) -> Any:
    """The scorer of the generator's weights: the generator itself, when it can score."""
    if not callable(getattr(generator, "score", None)):
        raise TypeError(f"{type(generator).__name__} cannot score: it has no score()")
    return generator


def generator_name(generator: object) -> str:
    """The model's name (its ``name``, else its class name)."""
    return str(getattr(generator, "name", type(generator).__name__))


def answer_text(
    generator: Any, prompt: Prompt, max_new_tokens: int, stop: Sequence[str] | None = None
) -> str:
    """The generator's answer to ``prompt``, cut before the first ``stop`` marker found."""
    text = str(generator.generate([prompt], max_new_tokens=max_new_tokens)[0])
    for marker in stop or []:
        if marker and marker in text:
            text = text[: text.index(marker)]
    return text


def word_pieces(text: str) -> list[str]:
    """``text`` in streamed pieces, word by word (each with its leading space), as a
    server's tokens would come."""
    return re.findall(r"\s*\S+", text) or [text]


__all__ = ["answer_text", "checked_generator", "generator_name", "generator_scorer", "word_pieces"]
