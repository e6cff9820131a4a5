"""The audit summary: unsupported and uncertain answers, documents never cited, cost.

Computed from the whole output file (so a resumed audit reports every record, with the
last line of an id winning, and every bad input line still unfixed, with the line it was
written for) plus what this run did (records audited, bad lines found, wall time).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from camab_cli.audit.outputs import bad_key, is_bad_input, iter_all_lines
from camab_cli.records import RecordError

MAX_LISTED_ERRORS = 1000
_DIGITS = re.compile(r"\d+")
MAX_REASONS = 20
REASON_CHARS = 300


def failure_reasons(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Why the records in error failed: ``[{"reason", "records"}]``, the most frequent
    first (at most :data:`MAX_REASONS`). Reasons that differ only in their numbers
    ("after 3 attempts", "after 4 attempts") count as one, shown by the first of them (cut
    at :data:`REASON_CHARS`)."""
    counts: dict[str, list[Any]] = {}
    for line in lines:
        if line.get("status") != "ok":
            reason = str(line.get("error") or line.get("status"))[:REASON_CHARS]
            entry = counts.setdefault(_DIGITS.sub("N", reason), [reason, 0])
            entry[1] += 1
    ranked = sorted(counts.values(), key=lambda entry: (-entry[1], entry[0]))
    return [{"reason": reason, "records": n} for reason, n in ranked[:MAX_REASONS]]


@dataclass
class RunStats:
    """What one invocation did (the output file holds the rest)."""

    engine: str = "local"
    pending: int = 0  # records this run set out to audit
    audited: int = 0  # result lines this run wrote
    skipped_done: int = 0  # records already in the output
    bad_records: list[RecordError] = field(default_factory=list)
    wall_time_s: float = 0.0
    torn_bytes: int = 0
    gate: dict[str, Any] | None = None
    batching: dict[str, Any] | None = None


def _verdict(groundedness: dict[str, Any]) -> str:
    """A line's verdict; a line written before the three verdicts says ``grounded`` or
    ``ungrounded``."""
    verdict = str(groundedness.get("verdict"))
    return {"grounded": "supported", "ungrounded": "unsupported"}.get(verdict, verdict)


def _share(part: float, whole: float) -> float | None:
    return part / whole if whole else None


def summarize(output: str | Path, run: RunStats) -> dict[str, Any]:
    """The summary of ``output`` after ``run``."""
    last: dict[str, dict[str, Any]] = {}
    bad: dict[tuple[int, str | None], dict[str, Any]] = {}
    for line in iter_all_lines(output):
        if is_bad_input(line):
            bad[bad_key(line)] = line
        else:
            last[str(line["id"])] = line
    lines = list(last.values())
    audited_lines = {line.get("line") for line in lines}  # a line fixed since: a record
    bad_lines = sorted(
        (line for key, line in bad.items() if key[0] not in audited_lines),
        key=lambda line: int(line.get("line") or 0),
    )
    ok = [line for line in lines if line.get("status") == "ok"]
    verdicts = [_verdict(line.get("groundedness", {})) for line in ok]
    unsupported = verdicts.count("unsupported")
    uncertain = verdicts.count("uncertain")
    n_documents = sum(len(line.get("documents", {}).get("scores", [])) for line in ok)
    never = sum(len(line.get("documents", {}).get("never_cited", [])) for line in ok)
    with_uncited = sum(1 for line in ok if line.get("documents", {}).get("never_cited"))
    costs = [line.get("cost", {}) for line in lines]
    counted = [c for c in costs if c.get("queries", 0) is not None]
    queries = sum(int(c.get("queries", 0)) for c in counted)
    tokens = sum(int(c.get("prompt_tokens") or 0) for c in counted)
    record_time = sum(float(line.get("cost", {}).get("wall_time_s", 0.0)) for line in lines)
    methods = sorted({str(line["groundedness"].get("method")) for line in ok})
    gain_sources: dict[str, int] = {}
    for line in ok:
        key = str(line["groundedness"].get("source"))
        gain_sources[key] = gain_sources.get(key, 0) + 1
    return {
        "output": str(output),
        "engine": run.engine,
        "records": {
            "in_output": len(lines),
            "ok": len(ok),
            "error": len(lines) - len(ok),
            "audited_this_run": run.audited,
            "skipped_already_done": run.skipped_done,
            "bad_input_lines": len(bad_lines),
            "bad_input_lines_this_run": len(run.bad_records),
        },
        "bad_records": [
            {"line": line["line"], "field": line.get("field"), "error": line.get("error")}
            for line in bad_lines[:MAX_LISTED_ERRORS]
        ],
        "failures": failure_reasons(lines),
        "errors": [
            {"id": line["id"], "line": line.get("line"), "error": line.get("error")}
            for line in lines
            if line.get("status") != "ok"
        ][:MAX_LISTED_ERRORS],
        "groundedness": {
            "method": methods[0] if len(methods) == 1 else methods,
            "context_gain_from": gain_sources,
            "unsupported": unsupported,
            "uncertain": uncertain,
            "share_unsupported": _share(unsupported, len(ok)),
            "share_flagged": _share(unsupported + uncertain, len(ok)),
        },
        "documents": {
            "total": n_documents,
            "never_cited": never,
            "share_never_cited": _share(never, n_documents),
            "records_with_uncited_documents": with_uncited,
        },
        "cost": {
            "queries": queries,
            "prompt_tokens": tokens,
            "records_not_counted": len(costs) - len(counted),
            "queries_per_record": _share(queries, len(counted)),
            "prompt_tokens_per_record": _share(tokens, len(counted)),
            "record_time_s": record_time,
            "run_wall_time_s": run.wall_time_s,
            "run_records_per_s": _share(run.audited, run.wall_time_s)
            if run.wall_time_s > 0
            else None,
            "gate": run.gate,
            "batching": run.batching,
        },
        "torn_bytes_recovered": run.torn_bytes,
    }


def cost_report(summary: dict[str, Any]) -> str:
    """The final human-readable cost report."""
    records = summary["records"]
    cost = summary["cost"]
    ground = summary["groundedness"]
    docs = summary["documents"]
    rate = cost["run_records_per_s"]
    lines = [
        f"audit: {records['audited_this_run']} records audited this run "
        f"({records['skipped_already_done']} already done, "
        f"{records['bad_input_lines_this_run']} bad input lines written as errors) "
        f"in {cost['run_wall_time_s']:.1f} s" + (f" = {rate:.2f} records/s" if rate else ""),
        f"output: {records['in_output']} records ({records['ok']} ok, {records['error']} error)"
        f" and {records['bad_input_lines']} bad input lines",
        f"cost: {cost['queries']} model queries, {cost['prompt_tokens']} prompt tokens"
        + (
            f" ({cost['queries_per_record']:.1f} queries and "
            f"{cost['prompt_tokens_per_record']:.0f} prompt tokens per record)"
            if cost["queries_per_record"] is not None
            else ""
        )
        + (
            f"; not counted: {cost['records_not_counted']} records that failed part-way"
            if cost["records_not_counted"]
            else ""
        ),
    ]
    if ground["share_unsupported"] is not None:
        lines.append(
            f"groundedness: {ground['unsupported']} of {records['ok']} answers unsupported "
            f"({100 * ground['share_unsupported']:.1f}%), {ground['uncertain']} uncertain"
        )
    if docs["share_never_cited"] is not None:
        lines.append(
            f"documents: {docs['never_cited']} of {docs['total']} retrieved documents never "
            f"cited ({100 * docs['share_never_cited']:.1f}%)"
        )
    for failure in summary.get("failures", [])[:3]:
        lines.append(f"failed: {failure['records']} records: {failure['reason']}")
    gate = cost.get("gate")
    if gate and gate.get("transient_errors"):
        lines.append(
            f"rate limiting: {gate['transient_errors']} transient errors, "
            f"{gate['retries']} retries, concurrency went down to {gate['min_limit']}"
        )
    return "\n".join(lines)
