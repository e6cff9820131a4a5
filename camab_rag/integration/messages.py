"""A framework's chat messages as prompts, an in-process model answering (the weights
that write the answer also attribute it) and an attribution's progress."""

from __future__ import annotations

import asyncio
import inspect
import logging
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from camab_rag.scorers.base import Prompt

logger = logging.getLogger(__name__)

ROLES = {"human": "user", "ai": "assistant"}


def content_text(content: object) -> str:
    """The plain text of a message's content: a string, or its text blocks joined."""
    if isinstance(content, str):
        return content
    blocks: Sequence[Any] = content if isinstance(content, Sequence) else ()
    return "".join(
        b if isinstance(b, str) else str(b.get("text", ""))
        for b in blocks
        if isinstance(b, str) or (isinstance(b, dict) and b.get("type") == "text")
    )


def chat_messages(
    messages: Iterable[Any], role_of: Callable[[Any], str] | None = None
) -> list[dict[str, str]]:
    """``[{"role", "content"}]`` of a framework's messages (by default read from ``role``
    and ``content`` attributes, LlamaIndex's)."""
    role = role_of or (lambda m: str(getattr(m.role, "value", m.role)))
    return [
        {"role": ROLES.get(role(m), role(m)), "content": content_text(m.content)} for m in messages
    ]


class LocalModel:
    """An in-process model (e.g. ``camab_rag.default_scorer()``) a framework's chat model
    answers with; ``owner`` names the framework's class in errors."""

    def __init__(self, generator: object, owner: str) -> None:
        if not callable(getattr(generator, "generate", None)):
            raise TypeError(
                f"{owner} needs generator= an object with generate(prompts, "
                "max_new_tokens=...), e.g. camab_rag.default_scorer()"
            )
        self.generator: Any = generator

    @property
    def name(self) -> str:
        return str(getattr(self.generator, "name", type(self.generator).__name__))

    @property
    def scorer(self) -> Any:
        """The scorer of the same weights: the generator itself, when it can score."""
        if not callable(getattr(self.generator, "score", None)):
            raise TypeError(f"{type(self.generator).__name__} cannot score: it has no score()")
        return self.generator

    def answer(self, prompt: Prompt, max_new_tokens: int, stop: Sequence[str] | None = None) -> str:
        """The answer to ``prompt``, cut before the first ``stop`` marker found."""
        text = str(self.generator.generate([prompt], max_new_tokens=max_new_tokens)[0])
        for marker in stop or []:
            if marker and marker in text:
                text = text[: text.index(marker)]
        return text

    @staticmethod
    def pieces(text: str) -> list[str]:
        """``text`` word by word, as a server's tokens would come."""
        return re.findall(r"\s*\S+", text) or [text]


ProgressHook = Callable[[int, int], object]


class ProgressRelay:
    """One attribution's progress: ``hook(calls, total)``, then ``emit({"run_id", "calls",
    "total"})`` (an awaitable it returns runs as a task: :meth:`drain` awaits them)."""

    def __init__(
        self,
        hook: ProgressHook | None,
        emit: Callable[[dict[str, Any]], object] | None,
        run_id: str | None,
    ) -> None:
        self.hook, self.emit, self.run_id = hook, emit, run_id
        self._tasks: list[asyncio.Future[Any]] = []

    def __call__(self, calls: int, total: int) -> None:
        if self.hook is not None:
            self.hook(calls, total)
        if self.emit is None:
            return
        sent = self.emit({"run_id": self.run_id, "calls": calls, "total": total})
        if inspect.isawaitable(sent):
            self._tasks.append(asyncio.ensure_future(sent))

    async def drain(self) -> None:
        """Wait until every event sent so far is delivered (a failure is logged)."""
        tasks, self._tasks = self._tasks, []
        for outcome in await asyncio.gather(*tasks, return_exceptions=True):
            if isinstance(outcome, BaseException):
                logger.warning("camab: a progress event failed: %s", outcome)
