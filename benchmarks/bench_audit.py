"""Batch audit throughput: one machine, a simulated cluster, and the cost of 1M records;
what and how: benchmarks/results/speed/README.md."""

from __future__ import annotations

import argparse
import functools
import json
import logging
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks._report import columns, markdown_table, write_section
from benchmarks.data import hotpot_rows
from camab_cli.audit import AuditConfig, ScorerSpec, audit

ROOT = Path(__file__).resolve().parent.parent
CONCURRENCY = (1, 4, 16)
ACTORS = (1, 2, 4, 8)


def stamp_line(stamps: list[float], _line: dict[str, Any]) -> None:
    """A line sink that records when each output line arrived."""
    stamps.append(time.time())


def hotpot_records(n: int, n_docs: int, offset: int = 0) -> list[dict[str, Any]]:
    """``n`` logged records: question, the first ``n_docs`` paragraphs, gold answer."""
    return [
        {
            "id": row["id"],
            "question": row["question"],
            "documents": [f"{t}: {''.join(s).strip()}" for t, s in row["context"][:n_docs]],
            "response": str(row["answer"]),
        }
        for row in hotpot_rows(offset + n, offset)
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


# ----------------------------------------------------------------- part 1: in-process
def part_in_process(args: argparse.Namespace) -> tuple[list[dict[str, float]], str]:
    from camab_rag.scorers import default_scorer

    records = hotpot_records(args.records, args.docs)
    config = AuditConfig(budget=args.budget, granularity="chunk")
    scorer = default_scorer()
    run_local(records[:1], config, 1, scorer=scorer)  # warm-up, not timed
    rows = [run_local(records, config, c, scorer=scorer) for c in CONCURRENCY]
    text = (
        f"{len(records)} HotpotQA records ({args.docs} paragraphs each, chunk granularity, "
        f"s={args.budget}, plus at most 2 queries each for the groundedness verdict), "
        "embedded SmolLM2-135M in float32 on the CPU, one model call at a time (calls of "
        "the records in flight merged into batches):\n\n" + local_table(rows)
    )
    return rows, text


# ----------------------------------------------------------------- part 2: vLLM server
def part_vllm(args: argparse.Namespace) -> tuple[dict[str, float] | None, str]:
    sys.path.insert(0, str(ROOT / "tests"))
    from vllm_server import VLLMServer, smollm2_dir, vllm_missing_reason

    reason = vllm_missing_reason()
    if reason:
        return None, f"Not measured: {reason}."
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
    one, many = rows[0], rows[-1]
    figures = {
        "latency_s": one["wall_s"] / one["queries"],  # one query at a time
        "tokens_per_s": many["prompt_tokens"] / many["wall_s"],  # 16 records in flight
        "tokens_per_query": one["tokens_per_query"],
    }
    text = (
        "Same records through a local vLLM server (CPU build, SmolLM2-135M, float32, prefix "
        "cache on) with the HTTP scorer and the audit's shared rate gate:\n\n"
        + local_table(rows)
        + f"\n\nMeasured server figures used by the simulation below: "
        f"{figures['latency_s']:.3f} s per query with one query in flight "
        f"({figures['tokens_per_query']:.0f} prompt tokens), "
        f"{figures['tokens_per_s']:.0f} prompt tokens/s with 16 records in flight."
    )
    return figures, text


# ----------------------------------------------------------------- part 3: Ray scaling
def part_ray(args: argparse.Namespace, figures: dict[str, float], origin: str) -> str:
    import ray

    from camab_cli.audit.ray_engine import run_ray
    from camab_cli.records import parse_record

    speedup = args.sim_speedup
    service = figures["tokens_per_query"] / figures["tokens_per_s"]  # saturated server time
    fixed = max(figures["latency_s"] - service, 0.0)
    config = AuditConfig(budget=40, granularity="sentence")
    ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.WARNING)
    rows = []
    try:
        for actors in args.actors:
            n = args.sim_records_per_actor * actors
            records = [
                parse_record(r, i + 1) for i, r in enumerate(hotpot_records(n, 10, offset=100))
            ]
            spec = ScorerSpec(
                kind="simulated",
                options={
                    "tokens_per_s": figures["tokens_per_s"] * speedup,
                    "latency_s": fixed / speedup,
                    "replicas": args.sim_servers,
                    "server": f"bench-audit-{actors}-{time.time_ns()}",
                    "shared": "ray",
                },
            )
            stamps: list[float] = []
            with tempfile.TemporaryDirectory() as tmp:
                started = time.perf_counter()
                run_ray(
                    records,
                    spec,
                    config,
                    functools.partial(stamp_line, stamps),
                    work_dir=Path(tmp) / "work",
                    actors=actors,
                    concurrency=1,
                    batch_size=1,
                    cpus_per_actor=1.5 / max(args.actors),
                    total_hint=n,
                )
            server = ray.get_actor(spec.options["server"])
            stats = ray.get(server.stats.remote())
            ray.kill(server)
            rate = steady_rate(sorted(stamps), list(stats["first_seen"].values()), actors)
            rows.append(
                {
                    "actors": actors,
                    "records": n,
                    "clients_seen": len(stats["first_seen"]),
                    "wall_s": time.perf_counter() - started,
                    "tokens_per_query": stats["tokens"] / max(stats["requests"], 1),
                    "sim_records_per_s": rate,
                    "real_records_per_s": rate / speedup,
                }
            )
            print(f"ray actors={actors}: {rows[-1]}", flush=True)
    finally:
        ray.shutdown()
    tokens_per_query = sum(r["tokens_per_query"] for r in rows) / len(rows)
    queries_per_record = 42  # s=40 plus at most 2 for the groundedness verdict
    capacity = args.sim_servers * figures["tokens_per_s"] / (queries_per_record * tokens_per_query)
    per_actor = 1 / (queries_per_record * (fixed + tokens_per_query / figures["tokens_per_s"]))
    one = rows[0]["real_records_per_s"]
    cells = "{actors:.0f}|{records:.0f}|{real_records_per_s:.4f}|{gain:.2f}|{wall_s:.1f}"
    table = markdown_table(
        columns("actors|records|records/s (real time)|x 1 actor|run wall s (simulated)"),
        [columns(cells.format(**r, gain=r["real_records_per_s"] / one)) for r in rows],
    )
    return (
        f"Server model ({origin}): {figures['latency_s']:.3f} s per query alone, "
        f"{figures['tokens_per_s']:.0f} prompt tokens/s when saturated "
        f"({figures['tokens_per_query']:.0f} prompt tokens per measured query; "
        f"{tokens_per_query:.0f} per simulated query); a pool of {args.sim_servers} such "
        f"servers (least-loaded balancing), run {speedup:g}x faster than real and converted "
        "back. Each Ray actor holds one client and audits one record at a time (CAMAB s=40, "
        "sentence granularity, ten HotpotQA paragraphs per record, one query per round). "
        "Records/s counted while every actor is working (from the last actor's first query "
        "to the start of the drain), so actor start-up is excluded.\n\n"
        + table
        + f"\n\nModel prediction: one actor is latency-bound at {per_actor:.4f} records/s; the "
        f"pool saturates at {capacity:.4f} records/s, i.e. beyond about "
        f"{capacity / per_actor:.1f} actors more actors add nothing (add servers instead). "
        "On this 2-core machine the actors' own CPU work (bandit, prompts, Ray calls) is "
        "shared by every actor, which can cap the growth earlier."
    )


def steady_rate(stamps: list[float], first_seen: list[float], actors: int) -> float:
    """Completions per second while all actors work: from the moment the last actor sent
    its first query to the completion after which some actor must be idle."""
    start = max(first_seen)
    end = stamps[max(len(stamps) - actors, 0) - 1] if len(stamps) > actors else stamps[-1]
    inside = [t for t in stamps if start < t <= end]
    if len(inside) >= 2 and end > start:
        return len(inside) / (end - start)
    return len(stamps) / max(stamps[-1] - min(first_seen), 1e-9)


# ----------------------------------------------------------------- part 4: on paper
def part_paper(args: argparse.Namespace, tokens_per_query: float) -> str:
    records = 1_000_000
    queries = records * 42
    tokens = queries * tokens_per_query
    gpu_hours = tokens / args.gpu_tokens_per_s / 3600
    dollars = gpu_hours * args.gpu_dollars_per_hour
    return (
        f"Auditing {records:,} records at s=40 (+ at most 2 queries each for the verdict): "
        f"{queries:,} queries x {tokens_per_query:.0f} prompt tokens (a full HotpotQA-size "
        f"prompt, --sim-tokens-per-query; bench_http measured ~1,400 at full context) "
        f"= {tokens / 1e9:.1f} billion prompt tokens. At an assumed serving rate of "
        f"{args.gpu_tokens_per_s:,.0f} prompt tokens/s per GPU (prefill-bound scoring, one "
        f"generated token, no prefix-cache savings counted) that is {gpu_hours:,.0f} GPU-hours"
        f", about ${dollars:,.0f} at an assumed ${args.gpu_dollars_per_hour:.2f} per "
        f"GPU-hour; {gpu_hours / 24:,.1f} days on one GPU, {gpu_hours / 24 / 64:,.2f} days on "
        "64. The rate and price are assumptions stated on the command line, not measured here."
    )


def save_cache(args: argparse.Namespace, part: str, value: Any) -> None:
    data = json.loads(args.cache.read_text(encoding="utf-8")) if args.cache.exists() else {}
    data[part] = value
    args.cache.parent.mkdir(parents=True, exist_ok=True)
    args.cache.write_text(json.dumps(data, indent=1), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    options: list[tuple[str, type, object]] = [
        ("--records", int, 6),  # records for parts 1 and 2
        ("--docs", int, 4),  # paragraphs per record (parts 1 and 2)
        ("--budget", int, 6),  # s for parts 1 and 2
        ("--sim-tokens-per-query", float, 1300.0),
        ("--sim-servers", int, 2),
        ("--sim-speedup", float, None),
        ("--sim-records-per-actor", int, 5),
        ("--gpu-tokens-per-s", float, 20_000.0),
        ("--gpu-dollars-per-hour", float, 2.50),
        ("--cache", Path, Path(tempfile.gettempdir()) / "camab-bench-audit.json"),
    ]
    for flag, kind, default in options:
        parser.add_argument(flag, type=kind, default=default)
    for flag in ("--no-vllm", "--no-write", "--reuse"):
        parser.add_argument(flag, action="store_true")  # --reuse: parts 1 and 2 from --cache
    parser.add_argument(
        "--actors", type=lambda text: [int(x) for x in text.split(",")], default=list(ACTORS)
    )
    args = parser.parse_args()
    sections: list[str] = []
    in_process_rows: list[dict[str, float]] = []
    # parts 1 and 2 measured by an earlier run (--reuse)
    reused = args.reuse and args.cache.exists()
    cache = dict(json.loads(args.cache.read_text(encoding="utf-8"))) if reused else {}
    if "in_process" in cache:
        in_process_rows, text = cache["in_process"]
        sections.append("### One machine, in-process scorer\n\n" + text)
    else:
        rows, text = part_in_process(args)
        save_cache(args, "in_process", [rows, text])
        in_process_rows = rows
        print(text, flush=True)
        sections.append("### One machine, in-process scorer\n\n" + text)
    figures: dict[str, float] | None = None
    origin = "measured in part 2"
    if "vllm" in cache:
        figures, text = cache["vllm"]
        sections.append("### One machine, local vLLM server\n\n" + text)
    elif not args.no_vllm:
        try:
            figures, text = part_vllm(args)
            save_cache(args, "vllm", [figures, text])
        except Exception as exc:  # a server that cannot start here is reported, not fatal
            figures, text = None, f"Not measured: the vLLM server run failed ({exc})."
        print(text, flush=True)
        sections.append("### One machine, local vLLM server\n\n" + text)
    if figures is None:
        one, many = in_process_rows[0], in_process_rows[-1]
        figures = {
            "latency_s": one["wall_s"] / one["queries"],
            "tokens_per_s": many["prompt_tokens"] / many["wall_s"],
            "tokens_per_query": one["tokens_per_query"],
        }
        origin = "measured in part 1 with the in-process scorer, as no vLLM figures were measured"
    if args.sim_speedup is None:
        args.sim_speedup = max(figures["latency_s"] / 0.05, 1.0)  # ~50 ms per simulated query
    text = part_ray(args, figures, origin)
    print(text, flush=True)
    sections.append("### Many machines, simulated: Ray Data actors\n\n" + text)
    # The measured records above are shortened (--docs paragraphs); a real audit of HotpotQA-
    # size records pays for full prompts, so the estimate uses the full prompt size.
    text = part_paper(args, args.sim_tokens_per_query)
    print(text, flush=True)
    sections.append("### On paper: 1 million records\n\n" + text)
    load = os.getloadavg()
    sections.append(
        f"Load average at the end of the run: {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} "
        f"(1/5/15 min) on {os.cpu_count()} cores: the machine was shared, so absolute "
        "figures are pessimistic and noisy."
    )
    if not args.no_write:
        write_section("audit", "Batch audit throughput", "\n\n".join(sections))
