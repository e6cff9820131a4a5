"""What the callback handlers record while a chain runs: :class:`RunTree` files every run
under its root (concurrent roots never mix), and :class:`RunReading` decides, when a root
ends, what to attribute (the question, the unique documents, the LLM call whose prompt
held them) or why there is nothing to attribute."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from langchain_core.documents import Document

from camab_rag.errors import InputError, NoContextError, WrongTypeError
from camab_rag.integration import ChainCall, prompt_holds
from langchain_camab.native import chat_of, last_user_text

if TYPE_CHECKING:
    from camab_rag.integration import Prompt

QUESTION_KEYS = ("input", "question", "query")
CONTEXT_KEYS = ("context", "documents", "docs")


@dataclass
class LLMCall:
    """One LLM call inside a root run: the exact prompt, what identifies its model, and
    once it ends the answer and the answer object (``message``, to attach the result to)."""

    prompt: Prompt
    model: Any = None
    answer: str | None = None
    message: Any = None


@dataclass
class RootRun:
    """Everything recorded under one root run."""

    run_id: Hashable
    inputs: Any = None
    metadata: dict[str, Any] | None = None
    queries: list[str] = field(default_factory=list)
    documents: list[Document] = field(default_factory=list)
    tool_documents: list[Document] = field(default_factory=list)
    llm_calls: list[LLMCall] = field(default_factory=list)
    descendants: set[Hashable] = field(default_factory=set)
    llm_by_run: dict[Hashable, LLMCall] = field(default_factory=dict)


class RunTree:
    """Thread-safe map of root run id -> :class:`RootRun`, and run id -> root id."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._roots: dict[Hashable, RootRun] = {}
        self._root_of: dict[Hashable, Hashable] = {}

    def __len__(self) -> int:
        with self._lock:
            return len(self._roots)

    def track(
        self,
        run_id: Hashable,
        parent_id: Hashable | None,
        *,
        inputs: Any = None,
        metadata: dict[str, Any] | None = None,
    ) -> RootRun:
        """File ``run_id`` under its root (a run with no known parent is a root)."""
        with self._lock:
            root = self._root_of.get(parent_id) if parent_id is not None else None
            if root is None or root not in self._roots:
                run = self._roots.setdefault(run_id, RootRun(run_id, inputs, metadata))
                self._root_of[run_id] = run_id
                return run
            self._root_of[run_id] = root
            run = self._roots[root]
            run.descendants.add(run_id)
            return run

    def is_root(self, run_id: Hashable) -> bool:
        with self._lock:
            return self._root_of.get(run_id) == run_id

    def _root(self, run_id: Hashable) -> RootRun | None:
        root = self._root_of.get(run_id)
        return self._roots.get(root) if root is not None else None

    def get(self, run_id: Hashable) -> RootRun | None:
        """The root run ``run_id`` descends from (``None`` if untracked)."""
        with self._lock:
            return self._root(run_id)

    def add_documents(
        self, run_id: Hashable, documents: Sequence[Document], *, tool: bool = False
    ) -> None:
        with self._lock:
            run = self._root(run_id)
            if run is not None:
                (run.tool_documents if tool else run.documents).extend(documents)

    def add_llm_call(self, run_id: Hashable, call: LLMCall) -> None:
        with self._lock:
            run = self._root(run_id)
            if run is not None:
                run.llm_calls.append(call)
                run.llm_by_run[run_id] = call

    def llm_call(self, run_id: Hashable) -> LLMCall | None:
        with self._lock:
            run = self._root(run_id)
            return run.llm_by_run.get(run_id) if run is not None else None

    def pop(self, root_id: Hashable) -> RootRun | None:
        """Forget a finished root run and all its descendants; return it."""
        with self._lock:
            run = self._roots.pop(root_id, None)
            if run is None:
                return None
            for run_id in (*run.descendants, root_id):
                self._root_of.pop(run_id, None)
            return run


@dataclass
class ClosedRun:
    """A finished root run, read: what to attribute, or why it cannot be."""

    run: RootRun
    question: str
    documents: list[Document]
    call: LLMCall | None
    problem: Exception | None

    def chain_call(
        self, scorer: Callable[[], Any], progress: Callable[[int, int], object] | None = None
    ) -> ChainCall:
        """The kernel's :class:`~camab_rag.integration.ChainCall` for this run."""
        call = self.call
        return ChainCall(
            self.question,
            (call.answer or "") if call is not None else "",
            self.documents,
            scorer=scorer,
            prompts=[call.prompt] if call is not None else [],
            progress=progress,
            problem=self.problem,
        )


def input_keys(option: str, keys: str | Sequence[str]) -> tuple[str, ...]:
    """``keys`` as a tuple of input keys: one string is one key (never its characters);
    anything but strings is a :class:`~camab_rag.errors.WrongTypeError` naming ``option``."""
    found = (keys,) if isinstance(keys, str) else tuple(keys)
    if not found or not all(isinstance(k, str) for k in found):
        raise WrongTypeError(f"{option} must be a key (a string) or a list of them, got {keys!r}")
    return found


@dataclass(frozen=True)
class RunReading:
    """How to read root runs: the input keys holding the question and the documents."""

    question_keys: Sequence[str] = QUESTION_KEYS  # a tuple once built (input_keys)
    context_keys: Sequence[str] = CONTEXT_KEYS

    def __post_init__(self) -> None:
        object.__setattr__(self, "question_keys", input_keys("question_keys", self.question_keys))
        object.__setattr__(self, "context_keys", input_keys("context_keys", self.context_keys))

    def question(self, run: RootRun) -> str:
        """The root input itself when it is a string, else the first of ``question_keys``
        holding a string, else the last user message of the input's ``messages`` (chat
        models, agents) or of the input, else the first retriever query, else ``""``."""
        inputs = run.inputs
        if isinstance(inputs, str):
            return inputs
        if isinstance(inputs, Mapping):
            for key in self.question_keys:
                if isinstance(inputs.get(key), str):
                    return str(inputs[key])
            asked = last_user_text(chat_of(inputs.get("messages")))
            if asked:
                return asked
        return last_user_text(chat_of(inputs)) or (run.queries[0] if run.queries else "")

    def documents(self, run: RootRun) -> list[Document]:
        """Retrieved documents in retrieval order, exact duplicates (same text) once; when
        no retriever ran, what the run's tools returned (an agent's retrieval tool), else
        the documents passed in the root input under ``context_keys``."""
        documents = list(run.documents) or list(run.tool_documents)
        if not documents and isinstance(run.inputs, Mapping):
            for key in self.context_keys:
                value = run.inputs.get(key)
                given = value if isinstance(value, Sequence) else ()
                if given and all(isinstance(d, Document) for d in given):
                    documents = list(given)
                    break
        seen: set[str] = set()
        unique: list[Document] = []
        for doc in documents:
            if doc.page_content not in seen:
                seen.add(doc.page_content)
                unique.append(doc)
        return unique

    def chosen_call(self, run: RootRun, documents: Sequence[Document]) -> LLMCall | None:
        """The LLM call to attribute: the last answered one whose prompt holds every
        document's text (the answer step of a RAG chain), else the last one answered."""
        calls = [c for c in run.llm_calls if c.answer is not None and c.answer.strip()]
        if not calls:
            return None
        chosen = (c for c in reversed(calls) if prompt_holds([c.prompt], documents))
        return next(chosen, calls[-1])

    def problem(
        self, run: RootRun, call: LLMCall | None, documents: list[Document]
    ) -> Exception | None:
        """Why a root run cannot be attributed (``None``: it can)."""
        if call is None or call.answer is None:
            return InputError(
                "no LLM answer was captured in this run: there is nothing to attribute"
            )
        if not documents and run.queries:
            return NoContextError(
                "the retriever ran and returned no documents: the answer has no retrieved "
                "context to come from"
            )
        if not documents:
            return InputError(
                "no documents were captured in this run (no retriever ran and the input has "
                f"none of the keys {list(self.context_keys)} holding Documents)"
            )
        return None

    def close(self, run: RootRun) -> ClosedRun | None:
        """What to attribute of a finished root run; ``None`` when it is not a RAG run
        (no LLM call and no retriever ran: nothing to report)."""
        if not run.llm_calls and not run.documents:
            return None
        documents = self.documents(run)
        call = self.chosen_call(run, documents)
        return ClosedRun(
            run, self.question(run), documents, call, self.problem(run, call, documents)
        )
