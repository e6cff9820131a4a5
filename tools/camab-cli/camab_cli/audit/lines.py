"""One record's audit result: attribution, citations, groundedness verdict and cost.

The result line is a JSON object, first key the marker ``"camab_audit": 1`` (the output
is appended to only when every line is one of these)::

    {"camab_audit": 1, "id", "line", "status": "ok" | "error", "error",
     "attribution": AttributionResult.to_dict(),
     "citations": [{"statement", "start", "end",
                    "cited", "disputed",           # document indices, as cite() decides
                    "segments": [{"segment", "doc_index", "score", "text", "cited"}]}],
                                                   # raw top segments per answer sentence
     "documents": {"scores", "cited", "never_cited"},   # cited: by cite(), any sentence
     "groundedness": assess_groundedness(...).to_dict() + {"method", "source",
                      "context_gain", "verdict", "flagged", "extra_queries"},
     "cost": {"queries", "prompt_tokens", "wall_time_s"}}

An input line that is not a usable record gets an error line of the same shape
(:func:`bad_input_line`: ``"bad_input": true``, ``"field"``, ``"id"`` ``null`` when none
could be read), so the output alone accounts for every non-blank input line.

The groundedness verdict is the library's: :func:`camab_rag.attributor.aassess_answer`
on the record's question, documents and answer (two more queries, counted in the cost),
so a line's ``verdict`` (``supported``, ``uncertain`` or ``unsupported``) and
``p_unsupported`` are those ``assess_answer`` gives on the same input; ``flagged`` is
``verdict != "supported"`` (what ``GroundednessFilter(mode="flag")`` marks), ``blocked``
``verdict == "unsupported"`` (what ``mode="block"`` hides). ``AuditConfig.
ungrounded_threshold`` (a number) replaces the calibrated verdict by ``score >=
threshold``, as ``threshold=`` does in the library; ``AuditConfig.measure_gain=False``
spends no query and reads the linear surrogate's prediction instead (two verdicts).
``context_gain`` is ``L(full) - L(empty)``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from camab_cli.audit.config import AuditConfig
from camab_cli.flags import FATAL, in_flags
from camab_cli.records import Record, RecordError, ascii_safe
from camab_rag import AttributionSettings, deadline
from camab_rag.attributor import aassess_answer
from camab_rag.citations import cite
from camab_rag.groundedness import assess_groundedness
from camab_rag.groundedness.report import GroundednessReport, read_by
from camab_rag.result import AttributionResult
from camab_rag.scorers.base import ResponseLogprobs, ScoreRequest

GROUNDEDNESS_METHOD = "camab_rag.groundedness:assess_answer"
TIMING_KEYS = ("wall_time_s",)
MARKER = "camab_audit"
"""The first key of every result line (value :data:`VERSION`): what makes a line ours."""
VERSION = 1


def _citations(
    record: Record, result: AttributionResult, config: AuditConfig, report: GroundednessReport
) -> tuple[list[dict[str, Any]], list[int]]:
    """Each answer sentence's citations as :func:`camab_rag.citations.cite` decides them
    (``cited``, ``disputed``: document indices; no second rule here), beside its raw top
    ``config.top_k`` segments by score (``segments``, each marked ``cited`` when its
    document is cited for the sentence: raw scores, for developers); and the documents
    cited by any sentence. Read with the line's verdict (``report``), as
    ``cite(attribute(..., groundedness=...))`` is: a sentence it rejects cites nothing."""
    answer = cite(result, record.documents).with_groundedness(report)
    doc_of = {source.number: source.doc_index for source in answer.sources}
    raw = {s.start: np.asarray(s.scores, dtype=float) for s in result.statements}
    rows: list[dict[str, Any]] = []
    for sentence in answer.sentences:
        scores = raw.get(sentence.start, np.asarray(result.scores, dtype=float))
        cited = [doc_of[n] for n in sentence.citations]
        order = np.argsort(-scores, kind="stable")[: config.top_k]
        segments = [
            {
                "segment": int(i),
                "doc_index": result.segments[i].doc_index,
                "score": float(scores[i]),
                "text": result.segments[i].text,
                "cited": result.segments[i].doc_index in cited,
            }
            for i in order
            if scores[i] > config.min_citation_score
        ]
        rows.append(
            {
                "statement": sentence.text,
                "start": sentence.start,
                "end": sentence.end,
                "cited": cited,
                "disputed": [doc_of[n] for n in sentence.disputed],
                "segments": segments,
            }
        )
    return rows, sorted({d for row in rows for d in row["cited"]})


@dataclass(frozen=True)
class Gain:
    """The verdict's report and what it cost (``report`` ``None``: not measured, the
    linear surrogate's prediction is read instead)."""

    report: GroundednessReport | None
    source: str  # "measured" or "surrogate"
    extra_queries: int = 0
    extra_prompt_tokens: int = 0


class _Counted:
    """A scorer that counts the prompt tokens of the requests it forwards (anything
    else, e.g. its model name, is the scorer's own)."""

    def __init__(self, scorer: Any) -> None:
        self.scorer = scorer
        self.prompt_tokens = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.scorer, name)

    def score(self, requests: list[ScoreRequest]) -> list[ResponseLogprobs]:
        results: list[ResponseLogprobs] = self.scorer.score(requests)
        self.prompt_tokens += sum(int(r.prompt_tokens) for r in results)
        return results

    async def ascore(self, requests: list[ScoreRequest]) -> list[ResponseLogprobs]:
        results: list[ResponseLogprobs] = await self.scorer.ascore(requests)
        self.prompt_tokens += sum(int(r.prompt_tokens) for r in results)
        return results


async def context_gain(
    record: Record, result: AttributionResult, scorer: Any, config: AuditConfig
) -> Gain:
    """The library's verdict on the record (:func:`camab_rag.attributor.aassess_answer`:
    two queries), or none when ``config.measure_gain`` is off."""
    if not config.measure_gain or not result.response.strip():
        return Gain(None, "surrogate")
    counted = _Counted(scorer)
    report = await aassess_answer(
        record.question,
        record.documents,
        result.response,
        counted,
        threshold=config.ungrounded_threshold,
        block_on="any",  # read by config.block_on in _groundedness
    )
    return Gain(report, "measured", report.extra_queries, counted.prompt_tokens)


def _groundedness(
    result: AttributionResult, gain: Gain, config: AuditConfig
) -> tuple[dict[str, Any], GroundednessReport]:
    """The verdict's report, and as a dict with the audit's own keys."""
    report = gain.report
    if report is None:
        report = assess_groundedness(
            result, threshold=config.ungrounded_threshold, top_k=config.top_k, block_on="any"
        )
    if config.block_on == "facts":
        report = read_by(report)
    data = report.to_dict()
    full, empty = data["full_reward"], data["empty_reward"]
    data.update(
        {
            "method": GROUNDEDNESS_METHOD if gain.report is not None else "surrogate",
            "source": gain.source,  # measured (two queries) or surrogate (none)
            "context_gain": None if full is None or empty is None else full - empty,
            "flagged": report.verdict != "supported",
            "blocked": report.verdict == "unsupported",
            "extra_queries": gain.extra_queries,
        }
    )
    return data, report


def result_line(
    record: Record,
    result: AttributionResult,
    config: AuditConfig,
    wall_time_s: float,
    gain: Gain | None = None,
) -> dict[str, Any]:
    """The output line of one audited record (``status`` ``"error"`` keeps the message)."""
    line: dict[str, Any] = {
        MARKER: VERSION,
        "id": record.id,
        "line": record.line,
        "status": result.status,
        "error": None if result.error is None else ascii_safe(result.error),
        "attribution": result.to_dict(),
    }
    if result.status == "ok":
        gain = gain or Gain(None, "surrogate")
        line["groundedness"], report = _groundedness(result, gain, config)
        citations, cited = _citations(record, result, config, report)
        n_docs = len(record.documents)
        line["citations"] = citations
        line["documents"] = {
            "scores": [float(s) for s in result.document_scores],
            "cited": cited,
            "never_cited": [d for d in range(n_docs) if d not in set(cited)],
        }
    extra = gain or Gain(None, "surrogate")
    line["cost"] = {
        "queries": result.n_queries + extra.extra_queries,
        "prompt_tokens": result.prompt_tokens + extra.extra_prompt_tokens,
        "attribution_queries": result.n_queries,
        "wall_time_s": wall_time_s,
    }
    return line


IN_AN_AUDIT = (
    "(a record's clock stops while its requests wait behind another record's in-process "
    "model call; against a server it runs while the server is busy with the others, which "
    "a lower --concurrency eases)"
)
"""What a deadline error says in an audit, in place of the chain's note."""


def failed_line(
    record: Record, error: BaseException, wall_time_s: float, config: AuditConfig
) -> dict[str, Any]:
    """The output line of a record whose attribution raised (an ASCII-safe reason), with
    the run's method and budget; its queries are ``null``: calls made before the error
    are not known per record (the summary's batching counts every call)."""
    reason = in_flags(str(error)).replace(deadline.IN_A_CHAIN, IN_AN_AUDIT)
    failed = AttributionResult.failed(
        ascii_safe(f"{type(error).__name__}: {reason}"),
        question=record.question,
        response=record.response,
        method=config.method,
        budget=config.budget,
        wall_time_s=wall_time_s,
    )
    return {
        MARKER: VERSION,
        "id": record.id,
        "line": record.line,
        "status": "error",
        "error": failed.error,
        "attribution": failed.to_dict(),
        "cost": {"queries": None, "prompt_tokens": None, "wall_time_s": wall_time_s},
    }


def unwritable_line(line: dict[str, Any], error: BaseException) -> dict[str, Any]:
    """The error line that replaces a result line that cannot be written (a lone surrogate,
    a non-finite number): ASCII only, so writing it cannot fail the same way."""
    reason = ascii_safe(f"the result could not be written ({type(error).__name__}: {error})")
    failed = AttributionResult.failed(reason)
    found = line.get("cost")
    cost: dict[str, Any] = found if isinstance(found, dict) else {}
    return {
        MARKER: VERSION,
        "id": ascii_safe(str(line.get("id"))),
        "line": int(line.get("line") or 0),
        "status": "error",
        "error": failed.error,
        "attribution": failed.to_dict(),
        "cost": {
            "queries": _count(cost.get("queries")),
            "prompt_tokens": _count(cost.get("prompt_tokens")),
            "wall_time_s": float(cost.get("wall_time_s", 0.0)),
        },
    }


def _count(value: Any) -> int | None:
    return None if value is None else int(value)


def bad_input_line(error: RecordError) -> dict[str, Any]:
    """The error line of an input line that is not a usable record (invalid JSON or
    UTF-8, a lone surrogate, a NUL, deep nesting, wrong types, a huge line, a repeated
    id): ``"bad_input": true``, the field when known, the id when one could be read
    (else ``null``) and an ASCII reason, so ``--out`` alone accounts for every line."""
    reason = ascii_safe(str(error))
    return {
        MARKER: VERSION,
        "id": error.id,
        "line": error.line,
        "status": "error",
        "error": reason,
        "bad_input": True,
        "field": None if error.field is None else ascii_safe(error.field),
        "attribution": AttributionResult.failed(reason).to_dict(),
        "cost": {"queries": 0, "prompt_tokens": 0, "wall_time_s": 0.0},
    }


def attribution_settings(config: AuditConfig) -> AttributionSettings:
    """The :class:`~camab_rag.AttributionSettings` of ``config``'s attributions."""
    return AttributionSettings().with_changes(
        budget=config.budget,
        method=config.method,
        granularity=config.granularity,
        deadline_s=config.deadline_s,
        seed=config.seed,
        reward=config.reward,
        **config.method_options,
    )


async def audit_record(record: Record, scorer: Any, config: AuditConfig) -> dict[str, Any]:
    """Attribute one record and build its line; an error becomes a ``status: error`` line,
    a record past ``config.deadline_s`` too: one clock (:func:`camab_rag.deadline.started`)
    bounds the attribution and the verdict, and stops while the record waits for others."""
    from camab_rag.attributor import aattribute

    started = time.perf_counter()
    try:
        with deadline.started(config.deadline_s):  # the attribution runs on this clock
            result = await aattribute(
                record.question,
                record.documents,
                record.response or "",
                scorer,
                settings=attribution_settings(config),
            )
            verdict = context_gain(record, result, scorer, config)
            gain = await deadline.within(verdict, "the groundedness verdict")
    except FATAL:
        raise  # the same for every record: the engine decides whether the run stops
    except Exception as exc:
        return failed_line(record, exc, time.perf_counter() - started, config)
    return result_line(record, result, config, time.perf_counter() - started, gain)


def without_timing(value: Any) -> Any:
    """``value`` with every ``wall_time_s`` removed (to compare runs)."""
    if isinstance(value, dict):
        return {k: without_timing(v) for k, v in value.items() if k not in TIMING_KEYS}
    if isinstance(value, list):
        return [without_timing(v) for v in value]
    return value
