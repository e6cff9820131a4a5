"""The kernel every framework integration builds on: a captured chain call in, a result
(and what to attach to the framework's answer) out (:mod:`camab_rag.integration.kernel`)."""

from __future__ import annotations

from camab_rag.integration.kernel import (
    METADATA_KEY,
    Attachment,
    AttributorOptions,
    ChainCall,
    ChainOptions,
    ProgressRelay,
    Runs,
    attribution_of,
    chat_messages,
    groundedness_of,
    local_answer,
    native_citations,
    prompt_holds,
    top_documents,
)
from camab_rag.scorers.base import Prompt
from camab_rag.steps import Steps

__all__ = [
    "METADATA_KEY",
    "Attachment",
    "AttributorOptions",
    "ChainCall",
    "ChainOptions",
    "ProgressRelay",
    "Prompt",
    "Runs",
    "Steps",
    "attribution_of",
    "chat_messages",
    "groundedness_of",
    "local_answer",
    "native_citations",
    "prompt_holds",
    "top_documents",
]
