"""In-process scorer throughput on a HotpotQA-size prompt, against the raw forward pass
(on a lent GPU with ``--shape``); what and how: benchmarks/results/speed/README.md."""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from benchmarks import argument_parser
from benchmarks._report import columns, markdown_table, write_headline, write_section
from benchmarks.workload import add_shape_arguments, hotpot_requests, shaped_model

ROOT = Path(__file__).resolve().parent.parent
BATCH_SIZES = (1, 8, 32)
RAW_SEQUENCES = 8


def load_scorer(args: argparse.Namespace) -> Any:
    """An embedded model by name, or with ``--shape`` a random-init model of that shape."""
    from camab_rag.scorers.transformers_scorer import TransformersScorer

    if not args.shape:
        return TransformersScorer(args.worker, num_threads=args.threads)
    model, tokenizer = shaped_model(
        args.shape, args.device, args.dtype, args.tokenizer, args.threads
    )
    scorer = TransformersScorer(model, tokenizer=tokenizer)
    if args.attention == "dense":
        scorer.model.set_attn_implementation("sdpa")
    return scorer


def worker(args: argparse.Namespace) -> dict[str, object]:
    """Measure one model (runs in a subprocess); returns the figures as a dict."""
    import torch

    started = time.perf_counter()
    scorer = load_scorer(args)
    model = args.shape or args.worker
    load_s = time.perf_counter() - started
    on_gpu = str(scorer.device).startswith("cuda")

    def clock() -> float:  # CPU seconds of this process (load does not move them); GPU: wall
        if on_gpu:
            torch.cuda.synchronize()
            return time.perf_counter()
        return time.process_time()

    requests = hotpot_requests(args.requests, args.pattern)
    sequences = [list(e.prompt_ids) + list(e.response_ids) for e in map(scorer.encode, requests)]
    total_tokens = sum(len(s) for s in sequences)
    raw_tokens = sum(len(s) for s in sequences[:RAW_SEQUENCES])
    scorer.score(requests[:1])  # warm-up (first-call allocations), not timed

    def raw_pass() -> float:
        with torch.inference_mode():
            started = clock()
            for seq in sequences[:RAW_SEQUENCES]:
                scorer.model(input_ids=torch.tensor([seq], device=scorer.device), use_cache=False)
            return clock() - started

    raw_pass()  # warm-up of the raw pass too (on a GPU its first run pays kernel set-up)
    # Each scorer pass is paired with a raw pass just before it, so the ratio holds even
    # when other processes' load on the machine drifts during the run.
    passes: dict[str, dict[str, float]] = {}
    raw_total = 0.0
    for batch_size in [b for b in BATCH_SIZES if b <= args.requests]:
        scorer.batch_size = batch_size
        rounds = []  # (scorer s, raw s, wall s, computed, pads) per repeat
        for _ in range(args.repeats):
            raw_s = raw_pass()
            scorer.clear_prefix_cache()
            before = scorer.prefix.computed_tokens, scorer.prefix.padding_tokens
            started, cpu_started = time.perf_counter(), clock()
            scorer.score(requests)
            scorer_s = clock() - cpu_started
            computed = scorer.prefix.computed_tokens - before[0]
            pads = scorer.prefix.padding_tokens - before[1]
            rounds.append((scorer_s, raw_s, time.perf_counter() - started, computed, pads))
        # the median round by scorer time, with the raw pass run just before it
        scorer_s, raw_s, wall_s, computed, pads = sorted(rounds)[len(rounds) // 2]
        raw_total += raw_s
        passes[str(batch_size)] = {
            "requested_tps": total_tokens / scorer_s,
            "computed_tps": computed / scorer_s,
            "raw_tps": raw_tokens / raw_s,
            "computed_share": computed / total_tokens,
            "padding_share": pads / total_tokens,
            "wall_s": wall_s,
            "cpu_s": scorer_s,
        }
        print(f"{model} b={batch_size}: {passes[str(batch_size)]}", file=sys.stderr, flush=True)
    return {
        "model": model,
        "load_s": load_s,
        "mean_tokens": total_tokens / len(sequences),
        "raw_tps": raw_tokens * len(passes) / raw_total,
        "requests": args.requests,
        "repeats": args.repeats,
        "passes": passes,
        "loadavg": os.getloadavg()[0],
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "threads": torch.get_num_threads(),
        "prefix_cache_mib": scorer.prefix_cache_mib,
        "device": torch.cuda.get_device_name() if on_gpu else "CPU",
        "dtype": scorer.dtype,
        "random_init": bool(args.shape),
        "attention": str(getattr(scorer.model.config, "_attn_implementation", "")),
    }


def _section(r: dict[str, Any], args: argparse.Namespace, env: dict[str, str], load: float) -> str:
    header = columns(
        "model|batch size|tokens/request|computed / requested|right pads / requested|"
        "raw forward tok/s|scorer requested tok/s (of raw)|scorer computed tok/s (of raw)"
    )
    rows = [
        [r["model"], b, f"{r['mean_tokens']:.0f}", f"{f['computed_share']:.3f}"]
        + [f"{f['padding_share']:.3f}", f"{f['raw_tps']:.0f}"]
        + [f"{f[k]:.0f} ({f[k] / f['raw_tps']:.0%})" for k in ("requested_tps", "computed_tps")]
        for b, f in r["passes"].items()
    ]
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
    return markdown_table(header, rows) + (
        f"\n\n{r['requests']} requests per pass (one HotpotQA distractor prompt, {shape}; "
        f"each figure the median of {r.get('repeats', 1)} pass(es), each after its own raw "
        "pass), the default scorer (prefix reuse "
        f"on, {r['prefix_cache_mib']:g} MiB of kept prefixes, dropped before each pass), "
        f"{where}, {r['threads']} torch threads, "
        f"OMP_WAIT_POLICY={env['OMP_WAIT_POLICY']}. {clock}. Requested tok/s = prompt + "
        "response tokens of every request per second; computed tok/s = the tokens the scorer "
        "really ran (reused prefixes and right pads excluded) per second. Raw = one unpadded "
        f"forward pass per sequence with full logits over the first {RAW_SEQUENCES} "
        "sequences (the limit for a scorer that runs every token); the percentage is the "
        "scorer's rate over the raw rate of a raw pass run just before it. Peak RSS "
        f"{r['peak_rss_mib']:.0f} MiB for the whole worker process (model, activations, "
        f"tokenizer, kept prefixes); model load {r['load_s']:.1f} s. {args.jobs} model(s) "
        f"measured at a time; load average (1 min) {load:.1f} at the start, "
        f"{r['loadavg']:.1f} at the end."
    )


def main() -> None:
    parser = argument_parser(__doc__)
    parser.add_argument("--models", nargs="+", default=["smollm2", "qwen2.5-0.5b"])
    parser.add_argument("--threads", type=int, default=None, help="torch threads")
    parser.add_argument("--jobs", type=int, default=1, help="models measured at once")
    parser.add_argument("--requests", type=int, default=32, help="requests per pass")
    parser.add_argument("--no-write", action="store_true", help="print only")
    parser.add_argument("--repeats", type=int, default=1, help="passes per batch size")
    parser.add_argument("--pattern", choices=("loo", "random"), default="loo")
    add_shape_arguments(parser, default=None)
    parser.add_argument("--attention", choices=("auto", "dense"), default="auto")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        from camab_rag.scorers.models import ModelNotInstalledError

        try:
            print(json.dumps(worker(args)))
        except ModelNotInstalledError as error:
            print(json.dumps({"skipped": str(error)}))
        return
    models = [args.shape] if args.shape else args.models
    load_before = os.getloadavg()[0]
    # idle OpenMP threads sleep instead of spinning (spinning slows a shared machine)
    env = {**os.environ, "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "PASSIVE")}
    forwarded = [a for a in sys.argv[1:] if a not in ("--no-write",)]

    def measure(model: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "benchmarks", "scorer", *forwarded, "--worker", model]
        return subprocess.run(command, stdout=subprocess.PIPE, text=True, cwd=ROOT, env=env)

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        finished = dict(zip(models, pool.map(measure, models)))
    for model in models:
        done = finished[model]
        result = json.loads(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 else {}
        if "passes" not in result:
            print(f"Skipped {model}: {result.get('skipped', f'exit {done.returncode}')}")
            continue
        body = _section(result, args, env, load_before)
        print(json.dumps(result), body, sep="\n")
        if args.no_write:
            continue
        suffix = "" if args.pattern == "loo" else "-random"
        what = "" if args.pattern == "loo" else ", random half subsets"
        if result["device"] != "CPU":
            dense = args.attention == "dense"
            suffix += "-gpu" + ("-dense" if dense else "")
            what += f", {result['device']}" + (", transformers' dense-mask SDPA" * dense)
        name = f"scorer-{result['model']}{suffix}"
        title = f"In-process scorer throughput, {result['model']} (HotpotQA-size prompt{what})"
        write_section(name, title, body)
        best = max(result["passes"].values(), key=lambda f: float(f["requested_tps"]))
        figure = f"scorer tokens/s, {result['model']} (HotpotQA prompt{what})"
        row = [figure, f"{best['requested_tps']:.0f}", f"raw forward pass {best['raw_tps']:.0f}"]
        write_headline(name, [[*row, "–"]])


if __name__ == "__main__":
    main()
