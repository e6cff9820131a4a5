"""Quality per model call: ``method="auto"`` against the stored peers, at equal distinct calls.

``run`` attributes each example of a stored benchmark run (same responses, prompts and
model) with the library's current methods (``auto`` by default) at each budget, and
measures what the benchmark measures: gold alignment (no model call) and the top-k
log-prob drop (one call per distinct top-k set). Records append to
``benchmarks/results/calls/<results>.<variant>.jsonl`` (resumable; shard with
``--offset/--n``, every shard appends to the same file, one line per example).
The peers (CAMAB, KernelSHAP, ContextCite-style, leave-one-out, the real packages) are
read from the stored run, not re-queried: their designs already make distinct calls at
N ~ 40 segments. A subset some stored run of the example already scored is answered from
that reward, not by the model (``--no-replay`` asks again): most of auto's subsets
(leave-one-out rows, earlier budgets) are there, so a new budget costs a few model calls
per example. An example whose line lacks some of ``--budgets`` runs only those.

``report`` prints the tables (paired differences with 95% CIs and Holm over the table, on
all examples and on the correctly answered ones; calls needed to reach leave-one-out; auto
at q=4 Thompson draws a round against q=1 where ``auto-q4`` ran) and writes them to
BENCHMARKS.md with a plot.

    .venv/bin/python benchmarks/bench_calls.py run --results hotpotqa_smollm2 --offset 0 --n 25
    .venv/bin/python benchmarks/bench_calls.py report
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.stats import t as student_t

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks._report import markdown_table, write_section  # noqa: E402
from benchmarks.bench_design_drop import CACHE, read_cache  # noqa: E402
from benchmarks.bench_estimators import current_auto_fit  # noqa: E402
from benchmarks.bench_lds import bernoulli_rows  # noqa: E402
from benchmarks.data import Example, load_examples  # noqa: E402
from benchmarks.evaluation.lds import lds  # noqa: E402
from benchmarks.evaluation.metrics import (  # noqa: E402
    gold_alignment,
    holm_adjust,
    logprob_drop,
    mean_ci,
    paired_t_pvalue,
    removal_mask,
    removal_set,
)
from benchmarks.evaluation.runner import (  # noqa: E402
    KS,
    append_record,
    make_builder,
    masks_from_bits,
    read_results,
)
from benchmarks.evaluation.store import from_bits, stored_subsets  # noqa: E402
from camab_rag import AttributionSettings  # noqa: E402
from camab_rag.engine import attribute  # noqa: E402
from camab_rag.methods.auto import Auto  # noqa: E402
from camab_rag.rewards import mean_logprob  # noqa: E402
from camab_rag.scorers.base import (  # noqa: E402
    BaseScorer,
    ResponseLogprobs,
    ScoreRequest,
    parallel_requests,
)

RESULTS = ROOT / "benchmarks" / "results"
OUT = RESULTS / "calls"
VARIANTS: dict[str, dict[str, Any]] = {
    "auto": {"method": "auto"},
    "auto-flat": {"method": "auto", "hierarchical": False},
    "camab-hier": {"method": "camab", "hierarchical": True},
    "auto-q4": {"method": "auto", "batch_size": 4},
    "auto-thompson": {"method": Auto._variant(shapley_opening=0.0)},
    "auto-refine-shapley": {"method": Auto._variant(refine_opening="shapley")},
}
BATCHED = "auto-q4"
"""auto with 4 Thompson draws a round, compared with the default runs' q=1 (#24 item 3)."""
BEFORE = "auto-before"
"""auto's stored runs read as they were run (CAMAB's posterior mean, level by level)."""
PEERS = ("camab", "kernelshap", "contextcite", "contextcite-pkg", "shap-pkg")
LABELS = {
    "auto": "auto (ours, default)",
    "auto-flat": "auto without the document level",
    "camab-hier": "CAMAB, hierarchical",
    "auto-q4": "auto, 4 Thompson draws a round (q=4)",
    "auto-thompson": "auto before the Shapley opening (one level: Thompson draws only)",
    "auto-refine-shapley": "auto, sentences opened with KernelSHAP's design",
    "auto-before": "auto before the estimator choice",
    "camab": "CAMAB (Algorithm 1)",
    "kernelshap": "KernelSHAP",
    "contextcite": "ContextCite-style",
    "contextcite-pkg": "context-cite package",
    "shap-pkg": "shap package",
    "loo": "leave-one-out",
}


class MemoScorer(BaseScorer):
    """Serves a request seen before (same prompt and response) from memory. The budgets of
    one example share model time this way; each run still counts every distinct subset it
    asks for as a call, as a fresh run would.

    ``replay`` holds rewards the stored runs already measured with the same model, prompt
    builder and response (prompt key -> mean token log-prob): such a request is answered
    from it, as a response of the template's token count whose every token has that
    log-prob (the mean, the only thing ``statements=False`` reads, is the stored reward).
    ``model_calls`` and ``replayed`` count where the answers came from."""

    def __init__(self, scorer: Any, replay: dict[str, float] | None = None) -> None:
        self.scorer = scorer
        self.memory: dict[str, ResponseLogprobs] = {}
        self.replay = replay or {}
        self.template: ResponseLogprobs | None = None
        self.model_calls = 0
        self.replayed = 0

    @property
    def parallel_requests(self) -> int:
        """The model scorer's parallel capacity (1 on the CPU, so ``auto`` keeps q=1)."""
        return parallel_requests(self.scorer)

    @staticmethod
    def key(request: ScoreRequest) -> str:
        return json.dumps([str(request.prompt), request.response], sort_keys=True, default=str)

    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        keys = [self.key(r) for r in requests]
        todo = {k: r for k, r in zip(keys, requests) if k not in self.memory}
        if self.template is not None:
            for k in [k for k in todo if k in self.replay]:
                del todo[k]
                self.memory[k] = self._replayed(self.replay[k], self.template)
                self.replayed += 1
        if todo:
            answers = self.scorer.score(list(todo.values()))
            self.model_calls += len(todo)
            self.memory.update(zip(todo, answers))
            self.template = self.template or answers[0]
        return [self.memory[k] for k in keys]

    @staticmethod
    def _replayed(reward: float, template: ResponseLogprobs) -> ResponseLogprobs:
        return ResponseLogprobs(
            logprobs=np.full(template.logprobs.shape, reward),
            token_offsets=template.token_offsets,
            tokens=template.tokens,
        )


def stored_rewards(
    record: dict[str, Any], lines: list[dict[str, Any]], removals: dict[Any, float]
) -> list[tuple[NDArray[np.bool_], float]]:
    """Every subset a stored run of this example scored, with its reward
    (:func:`benchmarks.evaluation.store.stored_subsets`: the peers' runs, our earlier lines
    of any variant and budget, the removal sets the design benchmarks scored
    (``design_drop/scored_sets.jsonl``) and those behind stored drops)."""
    mine = [
        (removed, v)
        for (_, example_id, removed), v in removals.items()
        if example_id == record["id"]
    ]
    return [(from_bits(mask), reward) for mask, reward, _ in stored_subsets(record, lines, mine)]


def examples_by_id(records: list[dict[str, Any]]) -> dict[str, Example]:
    wanted = {r["id"] for r in records}
    loaded = load_examples(records[0]["dataset"], len(records) + 200)
    return {e.id: e for e in loaded if e.id in wanted}


def run(args: argparse.Namespace) -> None:
    from camab_rag.scorers import TransformersScorer

    records = [
        r for r in read_results(RESULTS / f"{args.results}.jsonl") if r.get("status") == "ok"
    ]
    records = records[args.offset : args.offset + args.n]
    examples = examples_by_id(records)
    model = records[0]["model"]
    out = OUT / f"{args.results}.{args.variant}.jsonl"
    earlier: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(OUT.glob(f"{args.results}.*.jsonl")):
        for stored in read_results(path):
            earlier.setdefault(stored["id"], []).append(stored)
    model_scorer = TransformersScorer(
        model, batch_size=1, num_threads=args.threads, prefix_cache=True
    )
    options = VARIANTS[args.variant]
    removals = {key: value for key, value in read_cache(CACHE).items() if key[0] == args.results}
    for record in records:
        ours = [x for x in earlier.get(record["id"], []) if x["variant"] == args.variant]
        kept = dict(ours[-1]["budgets"]) if ours else {}
        budgets = [b for b in args.budgets if str(b) not in kept]
        if not budgets:
            continue
        example = examples[record["id"]]
        builder = make_builder(example)
        n = builder.n_segments
        response = record["response"]
        replay: dict[str, float] = {}
        if args.replay:
            for mask, reward in stored_rewards(record, earlier.get(record["id"], []), removals):
                replay[MemoScorer.key(ScoreRequest(builder.build(mask), response))] = reward
        scorer = MemoScorer(model_scorer, replay)
        # One real call first: its token offsets are the template replayed answers copy.
        scorer.score([ScoreRequest(builder.build(np.ones(n, dtype=bool)), response)])
        line: dict[str, Any] = {"id": record["id"], "variant": args.variant, "budgets": kept}
        for budget in budgets:
            started = time.perf_counter()
            result = attribute(
                example.question,
                example.documents,
                response,
                scorer,
                granularity=example.granularity(),
                settings=AttributionSettings().with_changes(
                    budget=budget,
                    seed=record["seed"],
                    prompt_builder=lambda *_a, fixed=builder: fixed,
                    statements=False,
                    **options,
                ),
            )
            removed = {k: removal_set(result.scores, k) for k in KS}
            requests = [
                ScoreRequest(builder.build(removal_mask(n, r)), response) for r in removed.values()
            ]
            dropped = [mean_logprob(x.logprobs) for x in scorer.score(requests)]
            line["budgets"][str(budget)] = {
                "scores": [round(float(s), 6) for s in result.scores],
                "cost": result.n_queries,
                "n_redrawn": result.n_redrawn,
                "method_config": result.method_config,
                "masks": ["".join("1" if b else "0" for b in m) for m in result.masks],
                "rewards": [round(float(v), 6) for v in result.rewards],
                "prompt_tokens": result.prompt_tokens,
                "wall_time_s": round(time.perf_counter() - started, 3),
                "gold": {
                    k: round(v, 6) for k, v in gold_alignment(result.scores, example.gold).items()
                }
                if example.gold
                else {},  # CNN/DailyMail has no gold segments: drops only
                "drop": {
                    str(k): round(logprob_drop(record["full_logprob"], v), 6)
                    for k, v in zip(KS, dropped)
                },
            }
        line["model_calls"] = scorer.model_calls
        line["replayed"] = scorer.replayed
        append_record(out, line)
        print(
            f"{record['id']}: {scorer.model_calls} model calls, {scorer.replayed} replayed; "
            + ", ".join(
                f"s={b} auroc {v['gold'].get('auroc', float('nan')):.3f} "
                f"drop3 {v['drop']['3']:.3f} calls {v['cost']}"
                for b, v in line["budgets"].items()
            ),
            flush=True,
        )


# ---------------------------------------------------------------------- report
Fits = dict[str, dict[tuple[str, str], dict[str, Any]]]
"""example id -> (method, budget label) -> that fit's entry."""


def _value(fit: dict[str, Any] | None, metric: str) -> float | None:
    if fit is None:
        return None
    group, key = {"drop@3": ("drop", "3"), "lds": ("lds", "bernoulli")}.get(
        metric, ("gold", metric)
    )
    value = fit.get(group, {}).get(key)
    return None if value is None else float(value)


def column(
    fits: Fits, records: list[dict[str, Any]], method: str, label: str, metric: str
) -> list[float]:
    """One value per example that has the cell."""
    found = (_value(fits[r["id"]].get((method, label)), metric) for r in records)
    return [v for v in found if v is not None]


def cells(
    record: dict[str, Any], ours: dict[str, dict[str, Any]]
) -> dict[tuple[str, str], dict[str, Any]]:
    """Every (method, budget label) fit of one example, ours and the stored peers'."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for method, entry in record["methods"].items():
        for label, fit in entry["budgets"].items():
            found[(method, label)] = fit
    for variant, line in ours.items():
        for label, fit in line["budgets"].items():
            found[(variant, label)] = fit
    return found


def read_with_current_estimator(
    stem: str, records: list[dict[str, Any]], ours: dict[str, dict[str, dict[str, Any]]]
) -> None:
    """Read each stored auto run with the library's current estimator (its scores, gold
    alignment and drop@3 replaced in place); the stored reading is kept as ``BEFORE``
    where it differs (runs made after the estimator choice read the same and get none)."""
    for record in records:
        line = ours[record["id"]]["auto"]
        budgets = {
            label: current_auto_fit(stem, record, fit) for label, fit in line["budgets"].items()
        }
        if any(
            not np.allclose(budgets[label]["scores"], fit["scores"], atol=1e-5)
            for label, fit in line["budgets"].items()
        ):
            ours[record["id"]][BEFORE] = {**line, "variant": BEFORE}
        ours[record["id"]]["auto"] = {**line, "budgets": budgets}


def add_lds(records: list[dict[str, Any]], fits: Fits, budgets: list[int]) -> None:
    """LDS (Bernoulli ½) of every fit, in place (``fit["lds"]["bernoulli"]``), on the
    held-out rows of each example's stored ContextCite-style design (``bench_lds``: rows
    65-100, with their stored rewards) that no fit shown here trained on: the stored
    peers' first ``max(budgets)`` rows, leave-one-out's and the real packages' subsets,
    every auto line's. No model call."""
    shown = max(budgets)
    for record in records:
        masks, rewards = bernoulli_rows(record)
        trained = [m for e in record["methods"].values() for m in e.get("masks", [])[:shown]]
        trained += [m for fit in fits[record["id"]].values() for m in fit.get("masks", [])]
        seen = set(trained)
        keep = [i for i, row in enumerate(masks) if row not in seen]
        held, values = masks_from_bits([masks[i] for i in keep]), [rewards[i] for i in keep]
        for fit in fits[record["id"]].values():
            if keep:
                value = lds(fit["scores"], held, values)
                fit["lds"] = {"bernoulli": None if np.isnan(value) else value}


def report(args: argparse.Namespace) -> None:
    body = []
    for stem in args.results_list:
        records = [r for r in read_results(RESULTS / f"{stem}.jsonl") if r.get("status") == "ok"]
        ours: dict[str, dict[str, dict[str, Any]]] = {}
        for path in sorted(OUT.glob(f"{stem}.*.jsonl")):
            for line in read_results(path):
                ours.setdefault(line["id"], {})[line["variant"]] = line
        records = [r for r in records if "auto" in ours.get(r["id"], {})]
        if records:
            read_with_current_estimator(stem, records, ours)
            body.append(section(stem, records, ours))
    intro = (
        "The runs, one process per core: hotpotqa_smollm2 `.venv/bin/python "
        "benchmarks/bench_calls.py run --results hotpotqa_smollm2 --offset 0 --n 25 "
        "--threads 1 --budgets 20,40` and the same with `--offset 25`; its q=4 check "
        "`... --variant auto-q4 --offset 0 --n 20 --budgets 20,40`; hotpotqa_qwen2.5-0.5b "
        "`... --results hotpotqa_qwen2.5-0.5b --offset 0 --n 10 --threads 1 --budgets 20` "
        "and the same with `--offset 10`, then its 40-call runs `... --results "
        "hotpotqa_qwen2.5-0.5b --offset 0 --n 20 --threads 2 --budgets 20,40` (an example "
        "that has some budgets runs only the missing ones). Since that run, `run` answers a "
        "subset the stored runs of the example already scored (the peers' masks and "
        "rewards, our earlier budgets and variants, the design benchmarks' removal sets: same "
        "model, prompt and response) from the stored reward instead of asking the model "
        "again; each line records `model_calls` and `replayed`. Calls below still count "
        "every distinct subset a run asked for. Replaying auto@40 on 3 SmolLM2 examples gave "
        "exactly the subsets of their fresh runs. TyDi QA and CNN/DailyMail (SmolLM2, "
        "with replay): `... --results tydiqa_smollm2 --offset 0 --n 34 --threads 1 "
        "--budgets 20,40` and the same with `--results cnn_dailymail_smollm2 --n 30`; "
        "CNN/DailyMail has no gold segments, so only its log-prob drops are reported, and "
        "TyDi QA's contexts are so small (N = 2 to 8, mean 4.2) that most runs there score "
        "every subset. The examples below are those the "
        "runs finished. The peers are read from the stored run `RESULTS.jsonl` (same "
        "responses, prompts and model); their budgets are prefixes of one run, auto runs "
        "once per budget. Calls are distinct model calls; leave-one-out makes N + 1."
    )
    text = "\n\n".join([intro, *body])
    print(text)
    write_section("calls", 'Quality per model call (method="auto")', text)


def _mean_cell(vals: list[float]) -> str:
    mean, half, n = mean_ci(vals)
    return f"{mean:.3f} ± {half:.3f}" if n else "–"


def _cost(fits: Fits, records: list[dict[str, Any]], method: str, label: str) -> float:
    costs = [
        fits[r["id"]][(method, label)]["cost"] for r in records if (method, label) in fits[r["id"]]
    ]
    return float(np.mean(costs)) if costs else float("nan")


def budgets_of(fits: Fits, records: list[dict[str, Any]], method: str) -> list[int]:
    labels = {lab for r in records for (m, lab) in fits[r["id"]] if m == method and lab.isdigit()}
    return sorted(int(b) for b in labels)


def holm_margin(diffs: list[float], n_tests: int) -> float:
    """The mean paired difference that would pass Holm's strictest step (two-sided
    p < 0.05 / n_tests) at the spread ``diffs`` show: what a method would have to gain for
    the comparison to survive Holm over this many tests with this many examples."""
    sd = float(np.std(diffs, ddof=1))
    return float(student_t.ppf(1 - 0.025 / n_tests, len(diffs) - 1) * sd / np.sqrt(len(diffs)))


def paired_tests(
    fits: Fits, subset: list[dict[str, Any]], budgets: list[int]
) -> list[tuple[str, float, float, float, list[float]]]:
    """auto minus each peer at equal calls (leave-one-out at its own N + 1), with the
    paired differences."""
    tests = []
    for b in budgets:
        for peer in (*PEERS, "loo"):
            label, at = ("own", "") if peer == "loo" else (str(b), f"@{b}")
            for metric in ("lds", "drop@3", "auroc"):
                diffs = []
                for r in subset:
                    ours = _value(fits[r["id"]].get(("auto", str(b))), metric)
                    theirs = _value(fits[r["id"]].get((peer, label)), metric)
                    if ours is not None and theirs is not None:
                        diffs.append(ours - theirs)
                if len(diffs) >= 3:
                    mean, half, _ = mean_ci(diffs)
                    name = f"auto@{b} − {LABELS[peer]}{at} ({metric})"
                    tests.append((name, mean, half, paired_t_pvalue(diffs), diffs))
    return tests


def variant_table(
    fits: Fits, records: list[dict[str, Any]], budgets: list[int], variant: str, intro: str
) -> list[str]:
    """``variant`` minus auto (the default runs) on the examples both ran, with how often
    the two asked for the same subsets."""
    rows: list[list[object]] = []
    tests = []
    for b in budgets:
        pairs = [
            (fits[r["id"]][(variant, str(b))], fits[r["id"]][("auto", str(b))])
            for r in records
            if (variant, str(b)) in fits[r["id"]] and ("auto", str(b)) in fits[r["id"]]
        ]
        if len(pairs) < 3:
            continue
        same = sum(set(other["masks"]) == set(ours["masks"]) for other, ours in pairs)
        for metric in ("auroc", "drop@3"):
            found = [(_value(other, metric), _value(ours, metric)) for other, ours in pairs]
            diffs = [a - c for a, c in found if a is not None and c is not None]
            if len(diffs) < 3:
                continue
            mean, half, _ = mean_ci(diffs)
            p = paired_t_pvalue(diffs)
            tests.append(p)
            rows.append([b, metric, len(diffs), f"{same} of {len(pairs)}", mean, half, p])
    if not rows:
        return []
    table = [
        [b, metric, n, same, f"{mean:+.3f} ± {half:.3f}", f"{p:.3g}", f"{q:.3g}"]
        for (b, metric, n, same, mean, half, p), q in zip(rows, holm_adjust(tests))
    ]
    return [
        "",
        f"{LABELS[variant]} minus auto (the default runs above) on the examples both ran, "
        f"Holm over the {len(tests)} tests. 'same subsets': runs whose two designs asked "
        f"for exactly the same subsets. {intro}",
        "",
        markdown_table(
            [
                "budget",
                "metric",
                "examples",
                "same subsets",
                "other − auto ± 95% CI",
                "p",
                "Holm p",
            ],
            table,
        ),
    ]


def section(
    stem: str, records: list[dict[str, Any]], ours: dict[str, dict[str, dict[str, Any]]]
) -> str:
    variants = [v for v in (*VARIANTS, BEFORE) if any(v in ours[r["id"]] for r in records)]
    fits: Fits = {r["id"]: cells(r, ours[r["id"]]) for r in records}
    budgets = budgets_of(fits, records, "auto")
    correct = [r for r in records if r.get("answer_correct")]
    add_lds(records, fits, budgets)
    metrics = ("lds", "drop@3", "auroc", "p@1", "ap")
    methods = [*variants, *PEERS]
    lines = [f"### {stem}: {len(records)} examples ({len(correct)} answered correctly)", ""]
    rows: list[list[object]] = []
    for method in methods:
        for b in budgets:
            if any(column(fits, records, method, str(b), m) for m in ("lds", "auroc", "drop@3")):
                rows.append(
                    [LABELS.get(method, method), b, f"{_cost(fits, records, method, str(b)):.1f}"]
                    + [_mean_cell(column(fits, records, method, str(b), m)) for m in metrics]
                )
    loo_cost = _cost(fits, records, "loo", "own")
    loo_cells = [_mean_cell(column(fits, records, "loo", "own", m)) for m in metrics]
    rows.append(["leave-one-out", "own", f"{loo_cost:.1f}", *loo_cells])
    lines += ["Mean ± 95% CI over examples (calls = distinct model calls made).", ""]
    lines.append(
        markdown_table(["method", "budget", "calls", "LDS", "drop@3", "AUROC", "P@1", "AP"], rows)
    )
    for subset_name, subset in (("all examples", records), ("correctly answered", correct)):
        tests = paired_tests(fits, subset, budgets)
        if not tests:
            continue
        table: list[list[object]] = []
        for (name, mean, half, p, diffs), q in zip(tests, holm_adjust([t[3] for t in tests])):
            verdict = (
                "no difference after Holm"
                if q >= 0.05
                else ("auto better" if mean > 0 else "auto worse")
            )
            needed = f"±{holm_margin(diffs, len(tests)):.3f}"
            found = f"{mean:+.3f} ± {half:.3f}"
            table.append([name, found, f"{p:.3g}", f"{q:.3g}", needed, verdict])
        lines += [
            "",
            f"Paired differences, {subset_name} ({len(subset)}), Holm over the {len(tests)} "
            "tests; 'Holm needs': the mean difference that would pass Holm's strictest step "
            "at the spread these examples show:",
            "",
            markdown_table(
                ["comparison", "mean ± 95% CI", "p", "Holm p", "Holm needs", "verdict"], table
            ),
        ]
    lines += variant_table(
        fits,
        records,
        budgets,
        BATCHED,
        "q changes only the Thompson rounds, which follow the leave-one-out openings of "
        f"each level. Run with `run --variant {BATCHED} --offset 0 --n 20 --threads 1 "
        "--budgets 20,40`; its rows in the first table average only the examples it ran.",
    )
    lines += variant_table(
        fits,
        records,
        budgets,
        "auto-thompson",
        "The one-level runs (a single document's sentences, or chunks) are the only ones "
        "the Shapley opening changes; these lines are auto's runs from before it.",
    )
    lines += variant_table(
        fits,
        records,
        budgets,
        "auto-refine-shapley",
        "Only the hierarchical runs (HotpotQA) differ: the sentence level opens with "
        "KernelSHAP's design instead of leaving each sentence out once (`refine_opening="
        "'shapley'`); the document level is the same. Run with `run --variant "
        "auto-refine-shapley --offset 0 --n 25 --threads 1 --budgets 20,40` and the same "
        "with `--offset 25`, one process per core.",
    )
    lines += [
        "",
        "Calls needed to reach leave-one-out's mean (leave-one-out itself makes "
        f"{loo_cost:.1f} calls on average): the smallest budget whose mean reaches it.",
        "",
    ]
    eff_rows = []
    for method in methods:
        row = [LABELS.get(method, method)]
        for metric in ("lds", "drop@3", "auroc"):
            if not column(fits, records, "loo", "own", metric):
                row.append("–")  # no gold segments: no AUROC
                continue
            target = float(np.mean(column(fits, records, "loo", "own", metric)))
            tried = budgets_of(fits, records, method)
            reached = f"not within {max(tried)}" if tried else "–"
            for b in tried:
                vals = column(fits, records, method, str(b), metric)
                if vals and np.mean(vals) >= target:
                    reached = str(b)
                    break
            row.append(reached)
        eff_rows.append(row)
    lines.append(markdown_table(["method", "LDS", "drop@3", "AUROC"], eff_rows))
    lines += [
        "",
        "auto's rows are read with the library's current estimator from the stored runs' "
        "subsets (the design does not depend on it; 'Estimator choice: auto's subsets "
        "re-fitted' replays every run and compares the estimators); 'auto before the "
        "estimator choice' is the same subsets read as they were run (CAMAB's posterior "
        "mean, document and sentence levels apart).",
    ]
    plot_path = plot(stem, records, fits, methods)
    if plot_path:
        lines += ["", f"![calls vs quality]({plot_path.relative_to(ROOT)})"]
    return "\n".join(lines)


def plot(stem: str, records: list[dict[str, Any]], fits: Fits, methods: list[str]) -> Path | None:
    """Mean AUROC and drop@3 against the mean distinct calls, per method."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    figure, axes = plt.subplots(1, 2, figsize=(10, 4))
    for axis, metric in zip(axes, ("auroc", "drop@3")):
        for method in methods:
            points = [
                (_cost(fits, records, method, str(b)), np.mean(vals))
                for b in budgets_of(fits, records, method)
                if (vals := column(fits, records, method, str(b), metric))
            ]
            if points:
                xs, ys = zip(*points)
                axis.plot(xs, ys, marker="o", label=LABELS.get(method, method))
        if column(fits, records, "loo", "own", metric):
            target = float(np.mean(column(fits, records, "loo", "own", metric)))
            axis.axhline(target, color="black", linestyle="--", label="leave-one-out (N+1 calls)")
        axis.set_xlabel("distinct model calls")
        axis.set_ylabel(metric)
        axis.set_title(f"{stem}: {metric}")
    axes[0].legend(fontsize=7)
    path = RESULTS / "plots" / f"calls_{stem}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run_parser = sub.add_parser("run")
    run_parser.add_argument("--results", default="hotpotqa_smollm2")
    run_parser.add_argument("--variant", default="auto", choices=sorted(VARIANTS))
    run_parser.add_argument(
        "--budgets", type=lambda t: [int(x) for x in t.split(",")], default=[20, 40]
    )
    run_parser.add_argument("--offset", type=int, default=0)
    run_parser.add_argument("--n", type=int, default=50)
    run_parser.add_argument("--threads", type=int, default=1)
    run_parser.add_argument(
        "--no-replay",
        dest="replay",
        action="store_false",
        help="ask the model again for subsets the stored runs already scored",
    )
    report_parser = sub.add_parser("report")
    report_parser.add_argument(
        "--results-list",
        nargs="+",
        default=[
            "hotpotqa_smollm2",
            "hotpotqa_qwen2.5-0.5b",
            "tydiqa_smollm2",
            "cnn_dailymail_smollm2",
        ],
    )
    args = parser.parse_args()
    if args.command == "run":
        run(args)
    else:
        report(args)


if __name__ == "__main__":
    main()
