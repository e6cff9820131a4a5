"""One record's audit result: attribution, citations, groundedness verdict and cost.

The result line is a JSON object::

    {"id", "line", "status": "ok" | "error", "error",
     "attribution": AttributionResult.to_dict(),
     "citations": [{"statement", "start", "end", "segments": [{"segment", "doc_index",
                    "score", "text"}]}],           # top segments per answer sentence
     "documents": {"scores", "cited", "never_cited"},
     "groundedness": {"source", "context_gain", "gain_from", "threshold", "verdict",
                      "flagged"},
     "cost": {"queries", "prompt_tokens", "wall_time_s"}}

Groundedness here is a placeholder until the groundedness module lands: the context gain
``V(full) - V(empty)`` (how much the whole context raises the answer's mean token
log-probability), observed when both subsets were evaluated, else the attribution's
linear surrogate ``sum(scores)`` (its prediction of that same difference).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from camab_rag.audit.config import AuditConfig
from camab_rag.records import Record
from camab_rag.result import AttributionResult

GROUNDEDNESS_SOURCE = "placeholder:context_gain"
TIMING_KEYS = ("wall_time_s",)


def _citations(result: AttributionResult, config: AuditConfig) -> list[dict[str, Any]]:
    statements: list[tuple[str, int, int, np.ndarray]] = [
        (s.text, s.start, s.end, np.asarray(s.scores)) for s in result.statements
    ]
    if not statements:
        statements = [(result.response, 0, len(result.response), result.scores)]
    cited = []
    for text, start, end, scores in statements:
        order = np.argsort(-scores, kind="stable")[: config.top_k]
        segments = [
            {
                "segment": int(i),
                "doc_index": result.segments[i].doc_index,
                "score": float(scores[i]),
                "text": result.segments[i].text,
            }
            for i in order
            if scores[i] > config.min_citation_score
        ]
        cited.append({"statement": text, "start": start, "end": end, "segments": segments})
    return cited


def _groundedness(result: AttributionResult, config: AuditConfig) -> dict[str, Any]:
    n = result.n_segments
    full = result.reward_of(np.ones(n, dtype=bool))
    empty = result.reward_of(np.zeros(n, dtype=bool))
    if full is not None and empty is not None:
        gain, source = full - empty, "observed"
    else:
        gain, source = float(np.sum(result.scores)), "surrogate"
    flagged = gain < config.ungrounded_threshold
    return {
        "source": GROUNDEDNESS_SOURCE,
        "context_gain": gain,
        "gain_from": source,
        "threshold": config.ungrounded_threshold,
        "verdict": "ungrounded" if flagged else "grounded",
        "flagged": bool(flagged),
    }


def result_line(
    record: Record, result: AttributionResult, config: AuditConfig, wall_time_s: float
) -> dict[str, Any]:
    """The output line of one audited record (``status`` ``"error"`` keeps the message)."""
    line: dict[str, Any] = {
        "id": record.id,
        "line": record.line,
        "status": result.status,
        "error": result.error,
        "attribution": result.to_dict(),
    }
    if result.status == "ok":
        citations = _citations(result, config)
        n_docs = len(record.documents)
        cited = sorted({s["doc_index"] for c in citations for s in c["segments"]})
        line["citations"] = citations
        line["documents"] = {
            "scores": [float(s) for s in result.document_scores],
            "cited": cited,
            "never_cited": [d for d in range(n_docs) if d not in set(cited)],
        }
        line["groundedness"] = _groundedness(result, config)
    line["cost"] = {
        "queries": result.n_queries,
        "prompt_tokens": result.prompt_tokens,
        "wall_time_s": wall_time_s,
    }
    return line


def failed_line(record: Record, error: BaseException, wall_time_s: float) -> dict[str, Any]:
    """The output line of a record whose attribution raised."""
    failed = AttributionResult.failed(error, question=record.question, response=record.response)
    return {
        "id": record.id,
        "line": record.line,
        "status": "error",
        "error": failed.error,
        "attribution": failed.to_dict(),
        "cost": {"queries": 0, "prompt_tokens": 0, "wall_time_s": wall_time_s},
    }


def attribute_kwargs(config: AuditConfig) -> dict[str, Any]:
    """Keyword arguments of :func:`camab_rag.aattribute` for ``config``."""
    return {
        "budget": config.budget,
        "method": config.method,
        "granularity": config.granularity,
        "seed": config.seed,
        "reward": config.reward,
        **config.method_options,
    }


async def audit_record(record: Record, scorer: Any, config: AuditConfig) -> dict[str, Any]:
    """Attribute one record and build its line; an error becomes a ``status: error`` line."""
    from camab_rag.engine import aattribute

    started = time.perf_counter()
    try:
        result = await aattribute(
            record.question,
            record.documents,
            record.response or "",
            scorer,
            **attribute_kwargs(config),
        )
    except Exception as exc:
        return failed_line(record, exc, time.perf_counter() - started)
    return result_line(record, result, config, time.perf_counter() - started)


def without_timing(value: Any) -> Any:
    """``value`` with every ``wall_time_s`` removed (to compare runs)."""
    if isinstance(value, dict):
        return {k: without_timing(v) for k, v in value.items() if k not in TIMING_KEYS}
    if isinstance(value, list):
        return [without_timing(v) for v in value]
    return value


__all__ = [
    "GROUNDEDNESS_SOURCE",
    "attribute_kwargs",
    "audit_record",
    "failed_line",
    "result_line",
    "without_timing",
]
