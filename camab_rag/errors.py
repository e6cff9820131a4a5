"""Exceptions raised by camab-rag."""

from __future__ import annotations

import sys
import warnings
from types import FrameType


class CamabError(Exception):
    """Base class of every camab-rag error."""


class InputError(CamabError, ValueError):
    """The caller's input cannot be attributed (named in the message)."""


class _Reason(Exception):
    """An error whose ``reason`` is the cause alone (the message leads with the fix)."""

    def __init__(self, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason or message


class ScorerUnavailableError(_Reason, InputError):
    """No scorer could be built from what was given."""


class WrongTypeError(InputError, TypeError):
    """An argument of the wrong type: an :class:`InputError` that is also a ``TypeError``."""


class TextError(InputError):
    """A text the input gate refused: its ``field``, the bad character's ``position`` and
    the ``reason`` (``"surrogate"``, ``"nul"``, ``"size"``, ``"depth"``, ``"type"``)."""

    def __init__(
        self, message: str, *, field: str = "", position: int | None = None, reason: str = ""
    ) -> None:
        super().__init__(message)
        self.field, self.position, self.reason = field, position, reason


class TextTypeError(TextError, WrongTypeError):
    """A field that must hold text holds another type (also a ``TypeError``)."""


class AttributionWarning(UserWarning):
    """The attribution ran, but its result can say little (the message says why)."""


def warn_caller(message: str, category: type[Warning] = AttributionWarning) -> None:
    """Warn at the user's line: the first frame outside camab-rag, the frameworks, asyncio."""
    skipped = ("camab_rag", "langchain", "langgraph", "llama_index", "asyncio", "threading")
    frame: FrameType | None = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_back is not None:
        top = str(frame.f_globals.get("__name__", "")).split(".")[0]
        if not top.startswith(skipped):
            break
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level + 1)


class AttributionPendingError(CamabError, KeyError):
    """A result was read before its attribution finished (also a ``KeyError``)."""

    def __str__(self) -> str:  # KeyError's would quote the message
        return str(self.args[0]) if self.args else ""


class AttributionCancelledError(AttributionPendingError):
    """A result was read whose attribution was cancelled."""


class ScorerError(CamabError, RuntimeError):
    """A scorer could not return log-probabilities for a request."""


class DeadlineExceededError(CamabError):
    """An attribution ran past its deadline (``deadline_s``) and was stopped."""


class TransientScorerError(ScorerError):
    """A scorer's server kept failing in a way that may pass (timeout, 429, 5xx) until its
    retries ran out: the last ``status_code``, ``retry_after`` and ``unreachable``."""

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        retry_after: float | None = None,
        unreachable: bool = False,
    ) -> None:
        super().__init__(message)
        self.status_code, self.retry_after, self.unreachable = status_code, retry_after, unreachable


class ServerRefusedError(TransientScorerError):
    """Every connection to the scorer's server was refused (it is down, or the URL is wrong)."""


class ServerNotFoundError(ScorerError):
    """No OpenAI-compatible server at the scorer's base URL (``/v1/models`` is a 404)."""


class CredentialsRefusedError(ScorerError):
    """The scorer's server refused its credentials (HTTP 401 or 403)."""


class ModelNotServedError(ScorerError):
    """The scorer's server does not serve the model it was given; ``served``: what it does."""

    def __init__(self, message: str, served: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.served = served


class CannotScoreError(_Reason, ScorerError):
    """The model cannot score a given text at all (a hosted chat API): a proxy scorer can."""


class ContextTooLongError(InputError):
    """A request is longer than the model's context: the attribution names the longest
    document and how to shorten it; a retry fails the same."""


class NoContextError(InputError):
    """No retrieved context reached the model: results have ``status="no_context"``."""
