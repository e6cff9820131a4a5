"""The attribution of one chain run, and the metadata it leaves on answers and documents."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from camab_rag.integration import (
    AttributionResult,
    ChainRuns,
    FilteredAnswer,
    answer_summary,
)


@dataclass(frozen=True)
class ChainAttribution(AttributionResult):
    """An :class:`~camab_rag.AttributionResult` plus the chain run it belongs to.

    Attributes:
        run_id: the LangChain root run (``None`` outside a run).
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

    def to_dict(self) -> dict[str, Any]:
        data = super().to_dict()
        data.update(
            run_id=self.run_id,
            groundedness=self.groundedness.to_dict() if self.groundedness is not None else None,
        )
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ChainAttribution:
        base = AttributionResult.from_dict(data)
        return cls.from_result(
            base,
            run_id=data.get("run_id"),
            groundedness=(
                FilteredAnswer.from_dict(data["groundedness"])
                if data.get("groundedness") is not None
                else None
            ),
        )


class KeptResults:
    """``results`` and ``last_result`` of an object whose attributions run in ``runs``."""

    runs: ChainRuns[ChainAttribution]

    @property
    def results(self) -> Mapping[Any, ChainAttribution]:
        """Results by run id (a ``UUID`` or its string), oldest dropped first."""
        return self.runs.results

    @property
    def last_result(self) -> ChainAttribution | None:
        """The latest result."""
        return self.runs.last_result


def groundedness_of(source: object) -> FilteredAnswer:
    """The groundedness verdict (a :class:`~camab_rag.groundedness.FilteredAnswer`) of a
    :class:`ChainAttribution`, the step's output, the answer message or the summary dict.

    Raises:
        KeyError: no verdict there (no ``groundedness=`` filter was set).
    """
    if isinstance(source, ChainAttribution):
        if source.groundedness is None:
            raise KeyError("the result has no groundedness verdict (no groundedness= filter)")
        return source.groundedness
    data: Any = source
    metadata = getattr(source, "response_metadata", None)
    if isinstance(metadata, Mapping):
        data = metadata.get("attribution")
    elif isinstance(source, Mapping) and isinstance(source.get("attribution"), Mapping):
        data = source["attribution"]
    verdict = data.get("groundedness") if isinstance(data, Mapping) else None
    if not isinstance(verdict, Mapping):
        raise KeyError("no ['attribution']['groundedness'] verdict (no groundedness= filter)")
    return FilteredAnswer.from_dict(verdict)


def summary(result: AttributionResult, titles: Sequence[str | None] = ()) -> dict[str, Any]:
    """The compact, JSON-ready attribution attached to an answer
    (:func:`camab_rag.integration.answer_summary`, with the chain's run id and verdict)."""
    chain = result if isinstance(result, ChainAttribution) else None
    return answer_summary(
        result,
        titles,
        run_id=chain.run_id if chain else None,
        verdict=chain.groundedness if chain else None,
    )
