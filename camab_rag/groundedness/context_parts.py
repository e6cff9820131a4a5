"""Which parts of the context an answer's words come from: documents or conversation.

Everything the model saw is context. Besides the retrieved documents, a chat prompt holds a
system prompt and earlier turns; the gate's empty anchor leaves the earlier turns out
(:mod:`~camab_rag.groundedness.anchors`), and their words, like the documents', are not
unexplained words (:func:`~camab_rag.groundedness.score.absent_pieces`). A sentence is
said to rest on the part whose content words it takes (documents first): no model call.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Literal

from camab_rag.groundedness.score import STOPWORDS, words
from camab_rag.token_support import TokenSupport

ContextPart = Literal["documents", "conversation"]


def conversation_words(support: TokenSupport) -> frozenset[str]:
    """The words of the chat messages before the question (system prompt, earlier turns)
    that ``support`` records."""
    return frozenset(w for text in support.conversation for w in words(text))


def judged_words(
    document_words: Collection[str] | None, support: TokenSupport
) -> frozenset[str] | None:
    """The words the answer is judged against: the documents' and the conversation's
    (``None`` stays ``None``: the documents are unknown, no word is discounted)."""
    if document_words is None:
        return None
    return frozenset(document_words) | conversation_words(support)


def support_parts(
    text: str, document_words: Collection[str] | None, conversation: Collection[str]
) -> tuple[ContextPart, ...]:
    """The parts of the context ``text`` takes its content words from: ``"documents"``
    when one of its content words is in a document, ``"conversation"`` when one that no
    document holds is in the conversation; empty when it takes none (or the documents are
    unknown)."""
    if document_words is None:
        return ()
    content = [w for w in words(text) if w not in STOPWORDS]
    parts: list[ContextPart] = []
    if any(w in document_words for w in content):
        parts.append("documents")
    if any(w in conversation and w not in document_words for w in content):
        parts.append("conversation")
    return tuple(parts)


__all__ = ["ContextPart", "conversation_words", "judged_words", "support_parts"]
