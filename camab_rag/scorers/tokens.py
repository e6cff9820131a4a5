"""Token counting for budgets and cost reports.

:class:`TokenCounter` counts with tiktoken when its encoding can be loaded. tiktoken fetches
encodings from the internet on first use (then caches them), so on an offline machine it
fails; the counter then falls back, with a single warning per process, to a model tokenizer
(if one was given) or to a character-based estimate. The counts are for budgets and
reports only; the scorers never use them to slice log-probabilities.
"""

from __future__ import annotations

import logging
import math
import threading
import warnings
from collections.abc import Callable, Sequence
from typing import Any, Protocol

logger = logging.getLogger(__name__)

DEFAULT_ENCODING = "o200k_base"
"""tiktoken encoding used when the model is unknown to tiktoken (GPT-4o family's)."""

CHARS_PER_TOKEN = 4.0
"""The estimate's ratio: about four characters of English text per token."""

_warned_lock = threading.Lock()
_warned = False


class _Encoder(Protocol):
    def encode(self, text: str) -> Sequence[int]: ...


def _warn_once(message: str) -> None:
    """Emit the offline fallback warning at most once per process."""
    global _warned
    with _warned_lock:
        if _warned:
            return
        _warned = True
    warnings.warn(message, RuntimeWarning, stacklevel=3)
    logger.warning(message)


def estimate_tokens(text: str, chars_per_token: float = CHARS_PER_TOKEN) -> int:
    """A rough token count: characters / ``chars_per_token``, at least one per word."""
    if not text:
        return 0
    return max(math.ceil(len(text) / chars_per_token), len(text.split()))


def _load_tiktoken(encoding: str | None, model: str | None, timeout: float) -> _Encoder:
    """Load a tiktoken encoding in a daemon thread so a hanging download cannot block us."""
    result: dict[str, Any] = {}

    def load() -> None:
        try:
            import tiktoken

            if encoding is not None:
                result["enc"] = tiktoken.get_encoding(encoding)
            else:
                try:
                    name = tiktoken.encoding_name_for_model(model or "")
                except KeyError:
                    name = DEFAULT_ENCODING
                result["enc"] = tiktoken.get_encoding(name)
        except BaseException as exc:  # network, import and cache errors alike
            result["error"] = exc

    thread = threading.Thread(target=load, name="camab-tiktoken-load", daemon=True)
    thread.start()
    thread.join(timeout)
    if "enc" in result:
        enc: _Encoder = result["enc"]
        return enc
    if "error" in result:
        error = result["error"]
        raise RuntimeError(f"{type(error).__name__}: {error}") from error
    raise RuntimeError(f"loading the tiktoken encoding took more than {timeout:g} s")


class TokenCounter:
    """Counts tokens with tiktoken, else a model tokenizer, else an estimate.

    Args:
        model: a model name tiktoken may know (e.g. ``"gpt-4o"``); picks its encoding.
        encoding: a tiktoken encoding name, or an encoding object (anything with
            ``encode(text)``, e.g. a ``tiktoken.Encoding`` built from local files);
            overrides ``model``.
        tokenizer: fallback when tiktoken is unavailable: anything with
            ``encode(text) -> list[int]`` (a Hugging Face tokenizer) or a callable
            ``text -> int``.
        use_tiktoken: set ``False`` to skip tiktoken (e.g. to count with the scorer's own
            tokenizer).
        load_timeout: seconds to wait for tiktoken to load its encoding.

    The attribute :attr:`method` says which of ``"tiktoken:<encoding>"``, ``"tokenizer"``
    or ``"estimate"`` is in use, so a report can say how its counts were made.
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        encoding: str | _Encoder | None = None,
        tokenizer: _Encoder | Callable[[str], int] | None = None,
        use_tiktoken: bool = True,
        load_timeout: float = 10.0,
    ) -> None:
        self._encoder: _Encoder | None = None
        self._count_fn: Callable[[str], int] | None = None
        self.method = "estimate"
        failure = "tiktoken disabled"
        if encoding is not None and not isinstance(encoding, str):
            if not hasattr(encoding, "encode"):
                raise TypeError("TokenCounter: encoding must be a name or have encode(text)")
            self._encoder = encoding
            self.method = f"tiktoken:{getattr(encoding, 'name', '?')}"
            return
        if use_tiktoken:
            try:
                self._encoder = _load_tiktoken(encoding, model, load_timeout)
                label = getattr(self._encoder, "name", encoding or "?")
                self.method = f"tiktoken:{label}"
                return
            except RuntimeError as exc:
                failure = str(exc)
        if tokenizer is not None:
            if hasattr(tokenizer, "encode"):
                enc = tokenizer

                def count_with_tokenizer(text: str) -> int:
                    try:  # a Hugging Face tokenizer: count the text's own tokens only
                        ids = enc.encode(text, add_special_tokens=False)  # type: ignore[call-arg]
                    except TypeError:
                        ids = enc.encode(text)
                    return len(ids)

                self._count_fn = count_with_tokenizer
            elif callable(tokenizer):
                self._count_fn = tokenizer
            else:
                raise TypeError(
                    "TokenCounter: tokenizer must have encode(text) or be a callable "
                    f"text -> int, got {type(tokenizer).__name__}"
                )
            self.method = "tokenizer"
        if use_tiktoken:
            fallback = "the model tokenizer" if tokenizer is not None else "an estimate"
            _warn_once(
                f"tiktoken could not load its encoding ({failure}); token counts use "
                f"{fallback} instead. To use tiktoken offline, copy its cache and set "
                "TIKTOKEN_CACHE_DIR."
            )

    def count(self, text: str) -> int:
        """Number of tokens in ``text``."""
        if not isinstance(text, str):
            raise TypeError(f"TokenCounter.count: expected str, got {type(text).__name__}")
        if self._encoder is not None:
            return len(self._encoder.encode(text))
        if self._count_fn is not None:
            return int(self._count_fn(text))
        return estimate_tokens(text)

    def __repr__(self) -> str:
        return f"TokenCounter(method={self.method!r})"


_default_lock = threading.Lock()
_default_counters: dict[str | None, TokenCounter] = {}


def count_tokens(text: str, model: str | None = None) -> int:
    """Count the tokens of ``text`` with a shared :class:`TokenCounter` for ``model``."""
    with _default_lock:
        counter = _default_counters.get(model)
        if counter is None:
            counter = _default_counters[model] = TokenCounter(model)
    return counter.count(text)
