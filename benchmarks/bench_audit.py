"""Batch audit throughput on one machine: ``camab audit`` with the in-process scorer, then
through a local vLLM server; what and how: benchmarks/results/speed/README.md.

Each part's text is kept in ``--cache`` (benchmarks/results/speed/audit.json); with
``--reuse`` a part found there is replayed, not measured."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks import argument_parser
from benchmarks._report import columns, markdown_table, write_section
from benchmarks.data import hotpot_rows
from camab_cli.audit import AuditConfig, ScorerSpec, audit

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "benchmarks" / "results" / "speed" / "audit.json"
CONCURRENCY = (1, 4, 16)


def hotpot_records(n: int, n_docs: int) -> list[dict[str, Any]]:
    """``n`` logged records: question, the first ``n_docs`` paragraphs, gold answer."""
    return [
        {
            "id": row["id"],
            "question": row["question"],
            "documents": [f"{t}: {''.join(s).strip()}" for t, s in row["context"][:n_docs]],
            "response": str(row["answer"]),
        }
        for row in hotpot_rows(n)
    ]


def run_local(
    records: list[dict[str, Any]], config: AuditConfig, concurrency: int, **kwargs: Any
) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "in.jsonl"
        source.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        started = time.perf_counter()
        summary = audit(
            source,
            Path(tmp) / "out.jsonl",
            config=config,
            concurrency=concurrency,
            progress=False,
            **kwargs,
        )
        wall = time.perf_counter() - started
    cost = summary["cost"]
    assert summary["records"]["ok"] == len(records), summary["errors"]
    return {
        "concurrency": concurrency,
        "records": len(records),
        "wall_s": wall,
        "records_per_s": len(records) / wall,
        "queries": cost["queries"],
        "prompt_tokens": cost["prompt_tokens"],
        "tokens_per_query": cost["prompt_tokens"] / max(cost["queries"], 1),
        "mean_batch": (cost.get("batching") or {}).get("mean_batch", 0.0),
    }


def local_table(rows: list[dict[str, float]]) -> str:
    header = "records in flight|records/s|wall s|queries|prompt tokens/query|mean model batch"
    cells = (
        "{concurrency:.0f}|{records_per_s:.3f}|{wall_s:.1f}|{queries:.0f}|{tokens_per_query:.0f}"
    )
    return markdown_table(
        columns(header),
        [
            [*columns(cells.format(**r)), f"{r['mean_batch']:.2f}" if r["mean_batch"] else "-"]
            for r in rows
        ],
    )


def part_in_process(args: argparse.Namespace) -> str:
    from camab_rag.scorers import default_scorer

    records = hotpot_records(args.records, args.docs)
    config = AuditConfig(budget=args.budget, granularity="chunk")
    scorer = default_scorer()
    run_local(records[:1], config, 1, scorer=scorer)  # warm-up, not timed
    rows = [run_local(records, config, c, scorer=scorer) for c in CONCURRENCY]
    return (
        f"{len(records)} HotpotQA records ({args.docs} paragraphs each, chunk granularity, "
        f"s={args.budget}, plus at most 2 queries each for the groundedness verdict), "
        "embedded SmolLM2-135M in float32 on the CPU, one model call at a time (calls of "
        "the records in flight merged into batches):\n\n" + local_table(rows)
    )


def part_vllm(args: argparse.Namespace) -> str:
    sys.path.insert(0, str(ROOT / "tests"))
    from vllm_server import VLLMServer, smollm2_dir, vllm_missing_reason

    reason = vllm_missing_reason()
    if reason:
        return f"Not measured: {reason}."
    records = hotpot_records(args.records, args.docs)
    config = AuditConfig(budget=args.budget, granularity="chunk")
    with VLLMServer(smollm2_dir(), "smollm2") as server:
        spec = ScorerSpec(
            kind="http",
            base_urls=(server.base_url,),
            model_name="smollm2",
            options={"max_retries": 0, "timeout": 600},
        )
        run_local(records[:1], config, 1, spec=spec)  # warm-up
        rows = [run_local(records, config, c, spec=spec) for c in CONCURRENCY]
    return (
        "Same records through a local vLLM server (CPU build, SmolLM2-135M, float32, prefix "
        "cache on) with the HTTP scorer and the audit's shared rate gate:\n\n" + local_table(rows)
    )


def main() -> None:
    parser = argument_parser(__doc__)
    add = parser.add_argument
    add("--records", type=int, default=6, help="HotpotQA records audited")
    add("--docs", type=int, default=4, help="paragraphs per record")
    add("--budget", type=int, default=6, help="model calls per record (s)")
    add("--cache", type=Path, default=CACHE, help="where each part's text is kept")
    add("--reuse", action="store_true", help="replay the parts found in --cache")
    add("--no-vllm", action="store_true", help="leave out the vLLM server part")
    add("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    reused = args.reuse and args.cache.exists()
    cache = dict(json.loads(args.cache.read_text(encoding="utf-8"))) if reused else {}
    parts = [("in_process", "One machine, in-process scorer", part_in_process)]
    if not args.no_vllm:
        parts.append(("vllm", "One machine, local vLLM server", part_vllm))
    sections = []
    for key, title, measure in parts:
        if key not in cache:
            try:
                cache[key] = measure(args)
            except Exception as exc:  # a server that cannot start here is reported, not fatal
                if key != "vllm":
                    raise
                text = f"Not measured: the vLLM server run failed ({exc})."
                sections.append(f"### {title}\n\n{text}")
                continue
            args.cache.parent.mkdir(parents=True, exist_ok=True)
            args.cache.write_text(json.dumps(cache, indent=1) + "\n", encoding="utf-8")
        print(cache[key], flush=True)
        sections.append(f"### {title}\n\n{cache[key]}")
    if not args.no_write:
        write_section("audit", "Batch audit throughput", "\n\n".join(sections))
