"""Exceptions raised by camab-rag."""

from __future__ import annotations

import sys
import warnings
from types import FrameType


class CamabError(Exception):
    """Base class of every camab-rag error."""


class InputError(CamabError, ValueError):
    """The caller's input cannot be attributed (named in the message)."""


class ScorerUnavailableError(InputError):
    """No scorer could be built from what was given (the message says what to pass;
    ``reason``: the cause alone, for ``scored_by.reason`` when a proxy takes over)."""

    def __init__(self, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason or message


class WrongTypeError(InputError, TypeError):
    """An argument of the wrong type: an :class:`InputError` (as every other bad input)
    that ``except TypeError`` also catches."""


class TextError(InputError):
    """A text the input gate (:mod:`camab_rag.text_gate`) refused: a lone surrogate, a NUL
    character, too long, or structured input nested too deep.

    Attributes:
        field: the field, as the caller named it (``"the question"``,
            ``"documents[2].title"``).
        position: the character offset of the bad character in that text (``None`` for a
            length, depth or type problem).
        reason: ``"surrogate"``, ``"nul"``, ``"size"``, ``"depth"`` or ``"type"``.
    """

    def __init__(
        self, message: str, *, field: str = "", position: int | None = None, reason: str = ""
    ) -> None:
        super().__init__(message)
        self.field = field
        self.position = position
        self.reason = reason


class TextTypeError(TextError, WrongTypeError):
    """A field that must hold text (or text inside lists and mappings) holds another type:
    a :class:`TextError` that ``except TypeError`` also catches."""


class AttributionWarning(UserWarning):
    """The attribution ran, but its result can say little (the message says why and what
    to pass instead)."""


CALLERS_SKIPPED = ("camab_rag", "langchain", "langgraph", "llama_index", "asyncio", "threading")
"""Top-level module names (prefixes) whose frames are not the user's line: camab-rag, its
integrations (``langchain_camab``, ``llama_index.*.camab``), the frameworks that call them
(``langchain_core``, ``llama_index_instrumentation``...) and the event loop or thread that
runs them."""


def warn_caller(message: str, category: type[Warning] = AttributionWarning) -> None:
    """Warn at the user's line: the first frame outside camab-rag and the frameworks
    that called it, however deep in the library's steps the cause was found (the
    outermost frame when there is none, e.g. in a background thread)."""
    frame: FrameType | None = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_back is not None:
        top = str(frame.f_globals.get("__name__", "")).split(".")[0]
        if not top.startswith(CALLERS_SKIPPED):
            break
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level + 1)


class AttributionPendingError(CamabError, KeyError):
    """A result was read before its attribution finished (a background or streamed
    answer's ``{"status": "pending"}`` placeholder): wait for it first, as the message
    says. A ``KeyError`` too, as reading an answer with no attribution is."""

    def __str__(self) -> str:  # KeyError's would quote the message
        return str(self.args[0]) if self.args else ""


class AttributionCancelledError(AttributionPendingError):
    """A result was read whose attribution was cancelled before it finished (its event
    loop ended first: ``{"status": "cancelled"}``); it will never finish, and the message
    says how to keep the next one running."""


class ScorerError(CamabError, RuntimeError):
    """A scorer could not return log-probabilities for a request."""


class DeadlineExceededError(CamabError):
    """An attribution ran past its deadline (``deadline_s``) and was stopped."""


class TransientScorerError(ScorerError):
    """A scorer's server kept failing in a way that may pass (a timeout, a connection
    error, HTTP 429 or 5xx, a malformed response) until its retries ran out.

    Attributes:
        status_code: the last HTTP status, if the server answered with one.
        retry_after: the server's last ``Retry-After`` hint, in seconds.
        unreachable: the server never answered (connection refused, timed out).
    """

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        retry_after: float | None = None,
        unreachable: bool = False,
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.retry_after = retry_after
        self.unreachable = unreachable


class CredentialsRefusedError(ScorerError):
    """The scorer's server refused its credentials (HTTP 401 or 403): retrying will not
    help, the right key will."""


class CannotScoreError(ScorerError):
    """The model cannot score a given text at all (a hosted chat API that returns no
    prompt log-probabilities, a server without a completions endpoint, chat prompts with no
    chat template to render them): retrying will not help, a proxy scorer can.

    ``reason`` is the cause alone (what a proxy that takes over records in
    ``scored_by.reason``); the message leads with the fix."""

    def __init__(self, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason or message


class NoContextError(InputError):
    """No retrieved context reached the model (nothing retrieved, or every retrieved
    document discarded before the answer): the answer cannot be attributed to any, and is
    not grounded in retrieved context. Results that fail this way have
    ``status="no_context"``."""
