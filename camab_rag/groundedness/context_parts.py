"""Which parts of the context an answer's words come from: documents or conversation.

Evidence is what the application gave the model: the retrieved documents and the system
prompt; the user's earlier questions name what is asked about. Their words are not
unexplained words (:func:`~camab_rag.groundedness.score.absent_pieces`); what the user
asserted and the model's own earlier answers are not evidence, so a fact only the user
stated does not support an answer (:func:`~camab_rag.groundedness.anchors.
conversation_of`). A sentence is said to rest on the part whose content words it takes
(documents first; ``"conversation"``: the system prompt, the earlier questions): no model
call.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Literal

from camab_rag.groundedness.score import STOPWORDS, words
from camab_rag.groundedness.wordforms import ContextWords
from camab_rag.token_support import TokenSupport

ContextPart = Literal["documents", "conversation"]


def conversation_words(support: TokenSupport) -> ContextWords:
    """The words of the system prompt and the earlier questions that ``support`` records
    (:func:`~camab_rag.groundedness.anchors.conversation_of`)."""
    return ContextWords.of(support.conversation)


def judged_words(
    document_words: Collection[str] | None, support: TokenSupport
) -> frozenset[str] | None:
    """The words the answer is judged against: the documents' and the conversation's
    (``None`` stays ``None``: the documents are unknown, no word is discounted)."""
    if document_words is None:
        return None
    documents = (
        document_words if isinstance(document_words, ContextWords) else ContextWords(document_words)
    )
    return documents | conversation_words(support)


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
