"""What an integration attaches to a chain's answer and documents, framework-neutral.

:class:`ChainAttribution` is a result plus the chain run it belongs to (and its
groundedness verdict); :class:`Attachment` is the answer's summary dict and one entry per
document (:func:`~camab_rag.integration.chain_runs.answer_summary`,
:func:`~camab_rag.captured.document_summary`), either final or ``pending`` placeholders
that a background attribution fills in place, so whoever holds them sees the result.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from camab_rag.captured import CapturedAttribution, document_summary
from camab_rag.groundedness import FilteredAnswer
from camab_rag.integration.background import fill, pending
from camab_rag.integration.chain_runs import ChainRuns, answer_summary
from camab_rag.result import AttributionResult, check_finished

METADATA_KEY = "attribution"
"""The metadata key under which answers and documents carry their attribution."""


@dataclass(frozen=True, repr=False)  # AttributionResult's short repr
class ChainAttribution(AttributionResult):
    """An :class:`~camab_rag.AttributionResult` plus the chain run it belongs to.

    Attributes:
        run_id: the chain's root run or query (``None`` outside a run).
        groundedness: the groundedness filter's verdict (``None`` without one).
        documents: the attributed documents as the chain held them (not in ``to_dict``).
    """

    run_id: str | None = None
    groundedness: FilteredAnswer | None = None
    documents: tuple[Any, ...] = field(default=(), compare=False, repr=False)

    def scored_documents(self) -> list[tuple[Any, float]]:
        """``(document, score)`` pairs, most relied-on first (empty when attribution failed)."""
        if self.status != "ok" or not self.documents:
            return []
        scores = self.document_scores
        order = self.top_documents(min(len(scores), len(self.documents)))
        return [(self.documents[i], float(scores[i])) for i in order]

    @classmethod
    def from_result(cls, result: AttributionResult, **extra: Any) -> ChainAttribution:
        """Wrap a core result (all its fields kept, those in ``extra`` replaced) with the
        chain fields in ``extra``."""
        values = {f.name: getattr(result, f.name) for f in fields(AttributionResult)}
        return cls(**{**values, **extra})

    @classmethod
    def of(
        cls, attributed: CapturedAttribution, run_id: str | None, documents: Sequence[Any]
    ) -> ChainAttribution:
        """The chain's result of a kernel attribution (documents kept only when it is ok)."""
        ok = attributed.result.status == "ok"
        return cls.from_result(
            attributed.result,
            run_id=run_id,
            documents=tuple(documents) if ok else (),
            groundedness=attributed.verdict,
        )

    def to_dict(self) -> dict[str, Any]:
        data = super().to_dict()
        verdict = self.groundedness
        data.update(run_id=self.run_id, groundedness=verdict.to_dict() if verdict else None)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ChainAttribution:
        verdict = data.get("groundedness")
        return cls.from_result(
            AttributionResult.from_dict(data),
            run_id=data.get("run_id"),
            groundedness=FilteredAnswer.from_dict(verdict) if verdict is not None else None,
        )


class KeptResults:
    """``results``, ``last_result`` and ``pending`` of an object whose attributions run in
    ``runs``, and :meth:`await_result`."""

    runs: ChainRuns[ChainAttribution]

    @property
    def results(self) -> Mapping[Any, ChainAttribution]:
        """Results by run id, oldest dropped first."""
        return self.runs.results

    @property
    def last_result(self) -> ChainAttribution | None:
        """The latest result."""
        return self.runs.last_result

    @property
    def pending(self) -> Mapping[Any, Any]:
        """Background attributions by run id (a ``Future`` or an ``asyncio.Task``; a copy)."""
        return self.runs.pending

    async def await_result(self, run_id: object = None) -> ChainAttribution:
        """Await a background attribution (the latest when ``run_id`` is ``None``)."""
        return await self.runs.await_result(run_id)


class WaitedResults(KeptResults):
    """:class:`KeptResults` whose background attributions can also be waited for."""

    def wait(self, run_id: object = None, timeout: float | None = None) -> ChainAttribution:
        """Block until a background attribution (the latest when ``run_id`` is ``None``)
        is done, up to ``timeout`` seconds."""
        return self.runs.wait(run_id, timeout)


def summary(result: AttributionResult, titles: Sequence[str | None] = ()) -> dict[str, Any]:
    """The compact, JSON-ready attribution attached to an answer
    (:func:`~camab_rag.integration.chain_runs.answer_summary`, with the chain's run id and
    verdict)."""
    chain = result if isinstance(result, ChainAttribution) else None
    return answer_summary(
        result,
        titles,
        run_id=chain.run_id if chain else None,
        verdict=chain.groundedness if chain else None,
    )


def titles(documents: Sequence[Any]) -> list[str | None]:
    """Each document's title: its metadata's ``title`` or ``source`` (``None`` if none)."""
    metadata = [getattr(d, "metadata", None) or {} for d in documents]
    names = [
        m.get("title") or m.get("source") if isinstance(m, Mapping) else None for m in metadata
    ]
    return [str(n) if n is not None else None for n in names]


@dataclass
class Attachment:
    """The answer's summary and each document's entry, as attached (``placeholders()``
    pending, then :meth:`fill` in place; or :meth:`of` a finished result)."""

    answer: dict[str, Any]
    documents: list[dict[str, Any]]

    @classmethod
    def placeholders(cls, run_id: str | None, n_documents: int) -> Attachment:
        return cls(pending(run_id), [pending(run_id) for _ in range(n_documents)])

    @classmethod
    def of(cls, result: AttributionResult, documents: Sequence[Any]) -> Attachment:
        """What to attach for ``result`` over ``documents`` (titles from their metadata)."""
        entries = document_summary(result, len(documents))
        return cls(summary(result, titles(documents)), entries)

    def fill(self, result: AttributionResult, documents: Sequence[Any]) -> Attachment:
        """Fill the placeholders in place with what :meth:`of` gives; return self."""
        final = Attachment.of(result, documents)
        fill(self.answer, final.answer)
        for target, values in zip(self.documents, final.documents):
            fill(target, values)
        return self

    def all(self) -> list[dict[str, Any]]:
        return [self.answer, *self.documents]


def groundedness_of(source: object) -> FilteredAnswer:
    """The groundedness verdict of a :class:`ChainAttribution`, of an answer carrying the
    summary in its ``response_metadata`` or ``metadata``, of a chain step's output (a dict
    with ``"attribution"``) or of the summary dict itself.

    Raises:
        AttributionPendingError: the attribution (and so its verdict) is still running.
        KeyError: no verdict there (no ``groundedness=`` filter was set).
    """
    if isinstance(source, ChainAttribution):
        if source.groundedness is None:
            raise KeyError("the result has no groundedness verdict (no groundedness= filter)")
        return source.groundedness
    data: Any = source
    for attr in ("response_metadata", "metadata"):
        metadata = getattr(source, attr, None)
        if isinstance(metadata, Mapping):
            data = metadata.get(METADATA_KEY)
            break
    else:
        if isinstance(source, Mapping) and isinstance(source.get(METADATA_KEY), Mapping):
            data = source[METADATA_KEY]
    check_finished(data)
    verdict = data.get("groundedness") if isinstance(data, Mapping) else None
    if not isinstance(verdict, Mapping):
        raise KeyError("no ['attribution']['groundedness'] verdict (no groundedness= filter)")
    return FilteredAnswer.from_dict(verdict)


__all__ = [
    "METADATA_KEY",
    "Attachment",
    "ChainAttribution",
    "KeptResults",
    "WaitedResults",
    "groundedness_of",
    "summary",
    "titles",
]
