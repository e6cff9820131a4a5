"""One loop for sync and async: code that asks a model is a generator (:data:`Steps`) of
:class:`Call` s; :func:`drive` runs them blocking, :func:`adrive` awaits them."""

from __future__ import annotations

import asyncio
import difflib
import functools
import inspect
import re
import time
from collections.abc import Awaitable, Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any, Generic, ParamSpec, Protocol, TypeVar

T = TypeVar("T")
R = TypeVar("R")
R_co = TypeVar("R_co", covariant=True)
P = ParamSpec("P")


class Call(Protocol[R_co]):
    """One model call (or a local computation) a generator waits on."""

    def run(self) -> R_co: ...

    async def arun(self) -> R_co: ...


Steps = Generator[Call[Any], Any, T]


@dataclass(frozen=True)
class ScoreCall:
    """``scorer.score(requests)``, or ``await scorer.ascore(requests)``."""

    scorer: Any
    requests: Sequence[Any]

    def run(self) -> Any:
        return self.scorer.score(self.requests)

    async def arun(self) -> Any:
        return await self.scorer.ascore(self.requests)


def _resumed(steps: Steps[T], value: Any, error: Exception | None) -> Call[Any] | StopIteration:
    """The next call of ``steps`` given the last one's outcome, or its ``StopIteration``."""
    try:
        return steps.send(value) if error is None else steps.throw(error)
    except StopIteration as done:
        return done


def drive(steps: Steps[T]) -> T:
    """Run ``steps`` to its result with blocking calls."""
    value, error = None, None
    while not isinstance(call := _resumed(steps, value, error), StopIteration):
        try:
            value, error = call.run(), None
        except Exception as raised:
            value, error = None, raised
    return call.value  # type: ignore[no-any-return]


async def adrive(steps: Steps[T]) -> T:
    """Run ``steps`` to its result, awaiting each call (the async twin of :func:`drive`)."""
    value, error = None, None
    while not isinstance(call := _resumed(steps, value, error), StopIteration):
        try:
            value, error = await call.arun(), None
        except Exception as raised:
            value, error = None, raised
    return call.value  # type: ignore[no-any-return]


def guarded(
    steps: Steps[T], check: Callable[[], None], wrap: Callable[[Call[Any]], Call[Any]] = lambda c: c
) -> Steps[T]:
    """``steps`` with ``check()`` before each of its calls, each call wrapped by ``wrap``."""
    value, error = None, None
    while not isinstance(call := _resumed(steps, value, error), StopIteration):
        try:
            check()
        except Exception:
            steps.close()
            raise
        try:
            value, error = (yield wrap(call)), None
        except Exception as raised:
            value, error = None, raised
    return call.value  # type: ignore[no-any-return]


@dataclass(frozen=True)
class BlockingCall(Generic[R]):
    """A blocking function: run in place by :func:`drive`, in a thread by :func:`adrive`."""

    function: Callable[[], R]

    def run(self) -> R:
        return self.function()

    async def arun(self) -> R:
        return await asyncio.to_thread(self.function)


@dataclass(frozen=True)
class Sleep:
    """A pause (e.g. a retry's backoff): ``time.sleep`` or ``await asyncio.sleep``."""

    seconds: float

    def run(self) -> None:
        time.sleep(self.seconds)

    async def arun(self) -> None:
        await asyncio.sleep(self.seconds)


def _named(function: Any, steps: Any, name: str, doc: str | None) -> None:
    function.__name__ = function.__qualname__ = name
    function.__doc__ = steps.__doc__ if doc is None else doc
    signature = inspect.signature(steps)
    returned = signature.return_annotation
    if isinstance(returned, str) and (found := re.fullmatch(r"Steps\[(.*)\]", returned)):
        returned = found.group(1)
        function.__annotations__ = {**function.__annotations__, "return": returned}
    function.__signature__ = signature.replace(return_annotation=returned)


def _started(
    steps: Callable[..., Steps[T]], name: str, args: Any, kwargs: dict[str, Any]
) -> Steps[T]:
    signature = inspect.signature(steps)
    try:
        signature.bind(*args, **kwargs)
    except TypeError as exc:
        unknown = [key for key in kwargs if key not in signature.parameters]
        public = [key for key in signature.parameters if not key.startswith("_")]
        close = difflib.get_close_matches(unknown[0], public, n=1) if unknown else []
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise TypeError(f"{name}() {exc}{hint}") from None
    return steps(*args, **kwargs)


def synced(steps: Callable[P, Steps[T]], name: str, doc: str | None = None) -> Callable[P, T]:
    """A blocking function with the arguments and docstring of the generator ``steps``."""

    @functools.wraps(steps)
    def run(*args: P.args, **kwargs: P.kwargs) -> T:
        return drive(_started(steps, name, args, kwargs))

    _named(run, steps, name, doc)
    return run


def asynced(
    steps: Callable[P, Steps[T]], name: str, doc: str | None = None
) -> Callable[P, Awaitable[T]]:
    """The async twin of :func:`synced`: the generator runs with :func:`adrive`."""

    @functools.wraps(steps)
    async def run(*args: P.args, **kwargs: P.kwargs) -> T:
        return await adrive(_started(steps, name, args, kwargs))

    _named(run, steps, name, doc)
    return run
