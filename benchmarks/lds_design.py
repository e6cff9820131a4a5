"""Why ``auto`` trailed ContextCite-style at 8-16 calls, and the rule that fixes it (issue 51).

Ablations of ``auto`` on ``lds``'s examples and reward stores, one switch at a time against
the adaptive design before issue 51 (INTRO below); ``report`` then chooses the budget rule
on the dev rows (each file's first half when it was chosen, :data:`DEV_ROWS`) and reads it
on the other half.

    .venv/bin/python -m benchmarks lds-design report
    nice -n 10 .venv/bin/python -m benchmarks lds-design run --results hotpotqa_smollm2 --n 8

(``--results hotpotqa_smollm2.span``: a short-answer store, as ``report`` names it.)
"""

from __future__ import annotations

import argparse
import itertools
import json
import logging
import math
import pickle
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import spearmanr

from benchmarks._report import ci_cell as _cell
from benchmarks._report import markdown_table, write_headline, write_section
from benchmarks.bench_lds import (
    ADAPTIVE,
    ANYTIME,
    BUDGETS,
    DROP_KS,
    HELD_OUT_CHECK,
    LABELS,
    MODEL_NAMES,
    NO_LEXICAL,
    SENTENCE_OPENING,
    SHAPES,
    SIZE_ONLY,
    STEMS,
    TITLES_CHECK,
    Case,
    Cells,
    Fit,
    ModelPrice,
    _groups,
    cases,
    checked_ids,
    fits_of,
    fresh_answered,
    full_reward,
    held_out_samples,
    longest_run,
    measure,
    picked,
    stem_shape,
    store_of,
    variant,
)
from benchmarks.data import PricedReward, RewardStore, Unpriced, bits, read_jsonl
from benchmarks.lds_default import (
    DEFAULT_BUDGET,
    TARGET_GAP,
    default_cells,
    default_headlines,
    default_section,
)
from benchmarks.lds_likely import (
    floor_command,
    floor_report_command,
    likely_command,
    likely_report_command,
)
from benchmarks.lds_titles import (
    BEFORE,
    CANDIDATES,
    SHIPPED,
    placed,
    placement_gap,
    switched_auto,
    titles_command,
    titles_section,
)
from benchmarks.stats import lds, line_side, mean_ci, removal_mask, removal_set
from camab_rag import AttributionSettings
from camab_rag.engine import attribute_fn
from camab_rag.lexical import lexical_scores
from camab_rag.methods import Auto, Hierarchical
from camab_rag.methods.auto import (
    HALVES_FOR_EVERY_ANSWER_FROM,
    JOINT_FIT_BELOW,
    ONE_DOCUMENT_HALVES_BELOW,
    SHORT_ANSWER_WORDS,
    SHORT_LEXICAL_BELOW,
    TWO_DRAWS_FROM,
    UNLIKELY_ANSWER,
    UNLIKELY_HALVES_FROM,
    UNLIKELY_HALVES_MIN_CALLS,
)
from camab_rag.methods.base import flat_intercept_posterior_mean, lasso_scores
from camab_rag.methods.prior import posterior, target_weights
from camab_rag.methods.registry import method_from_config

ROOT = Path(__file__).resolve().parent.parent

HALVES = {"design": "random_halves", "halves_fit": "lasso"}
AUTO_HALVES = "halves-lasso-cv"
"""The random halves as ``auto``'s switch for an unlikely answer reads them."""
FREE: dict[str, tuple[str, dict[str, Any]]] = {
    "halves-flat": ("random halves, flat-intercept posterior", HALVES),  # re-fitted
    "halves-lasso": ("random halves, LASSO", HALVES),
    AUTO_HALVES: (
        "random halves, cross-validated LASSO (how auto's switch reads them)",
        {**HALVES, "halves_fit": "lasso_cv"},
    ),
    "documents-first": (
        "adaptive design, each document left out once when D + 1 calls fit",
        {"document_opening": True},
    ),
    "documents-first-joint": (
        "adaptive design, each document left out once when D + 1 calls fit, one fit over "
        "both levels",
        {"document_opening": True, "joint_fit": True},
    ),
    "adaptive-lasso": (
        "adaptive design read with LASSO (one document)",
        {"document_opening": True, "estimator": "lasso"},
    ),
    "lexical": (
        "auto, read with the answer's lexical prior at every budget on one document",
        {
            "document_opening": True,
            "joint_fit_below": JOINT_FIT_BELOW,
            "one_document_halves_below": ONE_DOCUMENT_HALVES_BELOW,
            "lexical_prior_below": math.inf,
        },
    ),
}
"""Variants on subsets the store already holds: (label, ``Auto._variant`` switches)."""
ONE_DOCUMENT_ONLY = ("adaptive-lasso",)
"""Variants fitted on one document's sentences only (candidates of the rule there)."""
FLAT_LEXICAL = "lexical-flat"
"""Over several documents: ``auto``'s subsets re-fitted in one fit with the lexical prior."""
LIKELY = "auto-likely"
"""Over several documents: ``auto`` as shipped, never the halves for an unlikely answer."""
TWO_DRAWS = "auto-two-draws"
"""``auto`` as shipped with two Thompson draws a round at every budget: what a scorer that
runs requests in parallel (a GPU model, an HTTP server) gets from
:data:`camab_rag.methods.auto.TWO_DRAWS_FROM` calls on."""
ESTIMATORS = {"flat": "halves-flat", "LASSO": "halves-lasso"}
"""How the rule's random halves may be read (the variant of each)."""
CUTS = (0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 10.0)
"""Candidate ``random_halves_below`` values (calls per unit, ``N + 1``)."""
METRICS = (("lds_bernoulli", "LDS, Bernoulli ½"), ("lds_keep", "LDS, keep 1-4"))
SAMPLE_TITLES = {**dict(METRICS), "lds_removal": "LDS, remove 2-5"}


def variant_fits(case: Case, reward: PricedReward) -> dict[tuple[str, str], Fit]:
    """The ablation fits of one example; a fit whose subsets are not all in the store is
    left out."""
    lexical = lexical_scores(case.example.segment_texts, str(case.record["response"]))
    several, groups = _n_docs(case) > 1, _groups(case)
    plans: list[tuple[str, dict[str, Any] | None]] = [
        (name, {**sw, "lexical_weights": lexical} if "lexical_prior_below" in sw else sw)
        for name, (_, sw) in FREE.items()
        if not several or name not in ONE_DOCUMENT_ONLY
    ]
    if several:  # auto's own subsets, re-fitted in one fit with the lexical prior
        plans += [(FLAT_LEXICAL, None), (LIKELY, None)]
    plans.append((TWO_DRAWS, None))
    words = _words(case)
    likely = Auto._variant(unlikely_halves_from=math.inf).with_lexical(lexical, words)
    two = Auto(batch_size=2).with_lexical(lexical, words)
    found: dict[tuple[str, str], Fit] = {}
    for name, switches in plans:
        for b in BUDGETS:
            settings = AttributionSettings(seed=int(case.record["seed"]))
            method = variant(switches) if switches is not None else None
            method = {LIKELY: likely, TWO_DRAWS: two}.get(name, method)
            try:
                result = attribute_fn(
                    reward, case.n, budget=b, method=method, groups=groups, settings=settings
                )
            except Unpriced:
                continue
            scores = result.scores
            if name == "halves-flat":  # auto reads its halves with LASSO: re-fitted here
                scores = flat_intercept_posterior_mean(result.masks, result.rewards[:, None])[0]
            if name == FLAT_LEXICAL:
                mean, _ = posterior(result.masks, result.rewards, lexical, Auto().noise_variance)
                scores = target_weights(mean, lexical)
            found[(name, str(b))] = Fit(scores, result.n_queries, result.masks)
    return found


def run_command(args: argparse.Namespace) -> None:
    from camab_rag.scorers import TransformersScorer

    name, shape = stem_shape(args.results)
    found = picked(cases(name, shape), args.offset, args.n, args.results)
    store = store_of(name, shape)
    pricing = ModelPrice(
        lambda: TransformersScorer(
            str(found[0].record["model"]), batch_size=1, num_threads=args.threads
        )
    )
    for index, case in enumerate(found):
        started = time.perf_counter()
        priced = PricedReward(store, case.id, pricing.for_case(case))
        fits = variant_fits(case, priced)
        for fit in fits.values():
            priced.many([removal_mask(case.n, removal_set(fit.scores, k)) for k in DROP_KS])
        print(
            f"{args.results} {index + 1}/{len(found)} {case.id}: {priced.model_calls} model "
            f"calls, {priced.replayed} replayed, {time.perf_counter() - started:.0f} s",
            flush=True,
        )


ANCHOR = "empty-anchor"
UNION = "halves-union"
CONCAVE = "reward-concave"
CONVEX = "reward-convex"
LOCALITY = {
    ANCHOR: "auto, its last call spent on the empty context instead",
    UNION: "auto's subsets at half the budget and ContextCite's at the other half, one LASSO fit",
    CONCAVE: "auto's own fit of -log(top + gap - reward): a reward that saturates",
    CONVEX: "auto's own fit of log(reward - bottom + gap): a reward that takes off",
}
"""Lessons 8-9's replays over several documents (no new subset: the empty context is
KernelSHAP's, the halves ContextCite-style's; lesson 9 re-reads ``auto``'s own subsets)."""
REPLAY_NAMES = {
    ANCHOR: "empty context",
    UNION: "half and half",
    CONCAVE: "saturating reward",
    CONVEX: "take-off reward",
}
REWARD_GAP = 0.2
"""Lesson 9's gap (nats of mean log-prob) past the largest or below the smallest reward
of a run (smaller bends the scale more): a middle one of the gaps 0.02-2 first tried on
two SmolLM2 short-answer files, not chosen for any cell."""


def bent(rewards: np.ndarray, concave: bool, gap: float = REWARD_GAP) -> np.ndarray:
    """``rewards`` on a monotone, bent scale: ``-log(top + gap - r)`` (an increasing
    concave reading: a linear sum of scores that saturates in the reward) or
    ``log(r - bottom + gap)`` (convex). LDS is a rank correlation, so a model whose reward
    is a monotone function of a sum of scores is read right on either scale."""
    values = np.asarray(rewards, dtype=float)
    if concave:
        return np.asarray(-np.log(values.max() + gap - values), dtype=float)
    return np.asarray(np.log(values - values.min() + gap), dtype=float)


def _locality_fits(case: Case, reward: PricedReward) -> dict[tuple[str, str], Fit]:
    """:data:`LOCALITY`'s fits of one example over several documents (replays), at each
    budget whose subsets the store holds: ``auto``'s own fit read with the empty context in
    place of its last call (first, among the document level's rows), one LASSO fit
    over ``auto``'s and ContextCite's subsets at half the budget each, and ``auto``'s own
    fit of its rewards on a bent scale (:func:`bent`)."""
    seed, groups = int(case.record["seed"]), _groups(case)
    response = str(case.record["response"])
    lexical = lexical_scores(case.example.segment_texts, response)
    ours = Auto().with_lexical(lexical, len(response.split()))  # as attribute() runs it
    empty = np.zeros(case.n, dtype=bool)

    def run(method: Any, budget: int) -> Any:
        """The replayed run, ``None`` where a subset is not priced."""
        group = groups if isinstance(method, Auto) else None
        settings = AttributionSettings(seed=seed)
        try:
            return attribute_fn(
                reward, case.n, budget=budget, method=method, groups=group, settings=settings
            )
        except Unpriced:
            return None

    whole = longest_run(lambda top: run("contextcite", top))
    runs = {b: run(ours, b) for b in BUDGETS}
    found: dict[tuple[str, str], Fit] = {}
    for b, result in runs.items():
        if result is None:
            continue
        fitted = method_from_config(result.method, result.method_config)
        for key, concave in ((CONCAVE, True), (CONVEX, False)):
            bent_scores = fitted.fit(result.masks, bent(result.rewards, concave), seed)
            found[(key, str(b))] = Fit(bent_scores, result.n_queries, result.masks)
        try:
            anchor = reward(empty)
        except Unpriced:
            continue
        masks = np.vstack([empty[None], result.masks[:-1]])
        rewards = np.concatenate([[anchor], result.rewards[:-1]])
        fitted = method_from_config(result.method, result.method_config)
        if isinstance(fitted, Hierarchical) and fitted.stage1_calls is not None:
            fitted.stage1_calls += 1  # the empty context: one more document level's row
        found[(ANCHOR, str(b))] = Fit(fitted.fit(masks, rewards, seed), b, masks)
        half = runs.get(b // 2)  # auto at half the budget, with ContextCite's first rows
        if half is None or whole is None or whole.budget < b // 2:
            continue
        masks = np.vstack([half.masks, whole.masks[: b // 2]])
        rewards = np.concatenate([half.rewards, whole.rewards[: b // 2]])
        found[(UNION, str(b))] = Fit(lasso_scores(masks, rewards), len(masks), masks)
    return found


def _ablation_fits(case: Case, reward: PricedReward) -> dict[tuple[str, str], Fit]:
    """The fits :func:`tables` adds to :func:`measure`'s: the variants, and over several
    documents the locality replays."""
    extra = variant_fits(case, reward)
    if _n_docs(case) > 1:
        extra |= _locality_fits(case, reward)
    return extra


def tables(stem: str, cache: Path | None = None) -> tuple[list[Case], list[Cells]]:
    """Every example's cells (main fits and ablations) of a results file or a short-answer
    store (``"<stem>.<shape>"``); with ``cache``, kept in a pickle there until they change."""
    name, shape = stem_shape(stem)
    store: RewardStore = store_of(name, shape)
    if shape != "model" and not store.path.exists():
        return [], []
    found = [c for c in cases(name, shape) if full_reward(c, store) is not None]
    path = cache / f"auto_design_{stem}.pkl" if cache else None
    size = store.path.stat().st_size if store.path.exists() else 0
    shipped = (Auto()._switches, SHORT_ANSWER_WORDS, SHORT_LEXICAL_BELOW, UNLIKELY_ANSWER)
    stamp = (size, [*FREE, FLAT_LEXICAL, LIKELY, TWO_DRAWS, *LOCALITY], len(found), repr(shipped))
    if path is not None and path.exists():
        with open(path, "rb") as handle:
            kept, rows = pickle.load(handle)
        if kept == stamp:
            return found, list(rows)
    rows = []
    for case in found:
        cells, _ = measure(case, store, _ablation_fits(case, PricedReward(store, case.id)))
        rows.append(cells)
    if path is not None:
        with open(path, "wb") as handle:
            pickle.dump((stamp, rows), handle)
    return found, rows


@dataclass(frozen=True)
class Rule:
    """A candidate budget rule (cuts in calls per unit, ``N + 1``): the random halves read
    with ``estimator`` under ``halves`` (several documents) or ``one_document``; on one
    document from ``above``, the variant ``high``; over several documents one joint fit
    under ``joint``; else the adaptive design, documents first."""

    halves: float
    joint: float
    one_document: float
    estimator: str
    above: float = math.inf
    high: str = "adaptive-lasso"

    def key(self, case: Case, budget: int) -> str:
        n_docs = _n_docs(case)
        cut = self.one_document if n_docs <= 1 else self.halves
        if budget < cut * (case.n + 1):
            return ESTIMATORS[self.estimator]
        if n_docs <= 1 and budget >= self.above * (case.n + 1):
            return self.high
        if 1 < n_docs < case.n and budget < self.joint * (case.n + 1):
            return "documents-first-joint"
        return "documents-first"

    def __str__(self) -> str:
        high = "" if math.isinf(self.above) else f", from {self.above}: {FREE[self.high][0]}"
        return (
            f"halves ({self.estimator}) under {self.halves} (several documents) / "
            f"{self.one_document} (one document){high}, joint fit under {self.joint}"
        )


_DOCS: dict[tuple[str, str], int] = {}


def _n_docs(case: Case) -> int:
    key = (case.stem, case.id)
    if key not in _DOCS:
        _DOCS[key] = max(_groups(case)) + 1
    return _DOCS[key]


def _words(case: Case) -> int:
    """The answer's length in words (what ``attribute`` passes ``auto``'s rule)."""
    return len(str(case.record.get("response", "")).split())


def shipped_rule() -> Rule:
    """The rule ``auto`` ships (its default switches, its halves read with LASSO; it has
    no KernelSHAP cut and no halves over several documents, a cut of 0)."""
    switches = Auto()._switches
    return Rule(
        0.0,
        switches.joint_fit_below,
        switches.one_document_halves_below,
        "LASSO",
        above=switches.one_document_lasso_from,
    )


HIGH = ("adaptive-lasso", "halves-lasso")
"""What one document's sentences may use from a rule's ``above`` cut on (the lexical
prior is chosen after the rule, :func:`lexical_sweep`)."""
KEYS = ("documents-first", "documents-first-joint", "halves-flat", *HIGH)
"""The variants a :class:`Rule` picks from (their index in :func:`_arrays`)."""


@dataclass(frozen=True)
class _Arrays:
    """One file's cells as ``values[key, example, budget, metric]`` (nan where any variant
    lacks the cell, so every rule is read on the same examples), with N + 1, one document
    and several documents per example."""

    values: np.ndarray
    units: np.ndarray
    one: np.ndarray
    several: np.ndarray


def _arrays(found: list[Case], table: list[Cells]) -> _Arrays:
    values = np.full((len(KEYS), len(found), len(BUDGETS), len(METRICS)), np.nan)
    for k, key in enumerate(KEYS):
        for c, cells in enumerate(table):
            for b, budget in enumerate(BUDGETS):
                cell = cells.get((key, str(budget)), {})
                for m, (metric, _) in enumerate(METRICS):
                    value = cell.get(metric)
                    values[k, c, b, m] = math.nan if value is None else value
    docs = np.array([_n_docs(c) for c in found])
    several = [k for k, key in enumerate(KEYS) if key not in ONE_DOCUMENT_ONLY]
    missing = np.isnan(values).any(axis=0), np.isnan(values[several]).any(axis=0)
    values[:, np.where((docs <= 1)[:, None, None], *missing)] = np.nan
    n = np.array([c.n for c in found])
    return _Arrays(values, n + 1.0, docs <= 1, (docs > 1) & (docs < n))


def _objective(arrays: _Arrays, rule: Rule) -> float:
    budgets = np.array(BUDGETS, dtype=float)[None, :]

    def under(one: float, several: float | np.ndarray) -> np.ndarray:
        cut = np.where(arrays.one, one, several)[:, None]
        return np.asarray(budgets < cut * arrays.units[:, None])

    halves = under(rule.one_document, rule.halves)
    high = arrays.one[:, None] & (budgets >= rule.above * arrays.units[:, None])
    joint = under(math.inf, rule.joint) & arrays.several[:, None]
    index = np.select(
        [halves, high, joint],
        [KEYS.index(ESTIMATORS[rule.estimator]), KEYS.index(rule.high), 1],
        default=0,
    )
    picked = np.take_along_axis(arrays.values, index[None, :, :, None], axis=0)[0]
    kept = ~np.isnan(picked)
    counts = kept.sum(axis=0)
    if not counts.any():
        return math.nan
    sums = np.where(kept, picked, 0.0).sum(axis=0)
    return float(np.mean(sums[counts > 0] / counts[counts > 0]))


ABOVE = (*CUTS, math.inf)
"""Candidate ``above`` cuts (``inf``: never)."""


MIN_RULE_ROWS = 8
"""The fewest examples a file needed to enter the rule's search (4 dev rows): a file is
one term of the objective whatever its size, and one row is mostly noise."""

DEV_ROWS = {
    "hotpotqa_smollm2": 25,
    "hotpotqa_qwen2.5-0.5b": 10,
    "cnn_dailymail_smollm2": 15,
    "hotpotqa_smollm2.span": 6,
    "hotpotqa_smollm2.sentence": 6,
    "hotpotqa_qwen2.5-0.5b.span": 3,
    "hotpotqa_qwen2.5-0.5b.sentence": 3,
}
"""Each file's dev rows when the rule and the lexical cuts were chosen (its first half
then). Rows priced since join the other half and a file added since has none, so new
rows are read as evidence and never tuned on."""


def search(parts: dict[str, tuple[list[Case], list[Cells]]]) -> list[tuple[float, Rule]]:
    """Candidate rules with their objective (mean over results files) on ``parts``, in two
    stages, the second at the best rule of the first: the halves' and the joint fit's
    cuts and the estimator; then one document's cuts and its ``high`` variant."""
    arrays = [_arrays(f, t) for f, t in parts.values()]

    def scored(rules: Any) -> list[tuple[float, Rule]]:
        return [(float(np.nanmean([_objective(a, r) for a in arrays])), r) for r in rules]

    first = scored(
        Rule(halves, joint, one, estimator)
        for estimator in ESTIMATORS
        for halves, joint, one in itertools.product(CUTS, repeat=3)
    )
    best = max(first, key=lambda pair: pair[0])[1]
    second = scored(
        replace(best, one_document=one, above=above, high=high)
        for one, above, high in itertools.product(CUTS, ABOVE, HIGH)
    )
    return first + second


def target_table(
    dev: dict[str, tuple[list[Case], list[Cells]]],
    check: dict[str, tuple[list[Case], list[Cells]]],
    rule: Rule,
) -> tuple[str, str]:
    """``auto`` as shipped (the rule, read with the lexical prior where it applies), the
    rule without the prior, auto before issue 51 and the best peer, per file, budget and
    LDS sample, on the other half and on all rows; 'gap' = auto minus best peer. With a
    sentence: how many cells miss on all rows, and how many of those are settled."""
    rows, sides = [], []
    for stem in check:
        halves = [("other half", check[stem])] if dev[stem][0] else []
        every = (dev[stem][0] + check[stem][0], dev[stem][1] + check[stem][1])
        for rows_name, (found, table) in [*halves, ("all", every)]:
            for b in BUDGETS:
                for metric, title in METRICS:
                    both = [  # the examples with auto's cell (the peers on the same)
                        (c, t)
                        for c, t in zip(found, table)
                        if metric in t.get(("auto", str(b)), {})
                    ]
                    if not both:
                        continue
                    paired_found, paired = [c for c, _ in both], [t for _, t in both]
                    ours = _values([t.get(("auto", str(b)), {}) for t in paired], metric)
                    picked = [
                        t.get((rule.key(c, b), str(b)), {}) for c, t in zip(paired_found, paired)
                    ]
                    bare = _values(picked, metric)
                    old = _values([t.get((ADAPTIVE, str(b)), {}) for t in paired], metric)
                    peers = {
                        m: _values([t.get((m, str(b)), {}) for t in paired], metric)
                        for m in ANYTIME
                    }
                    best = max(peers, key=lambda m: np.mean(peers[m]) if peers[m] else -9.0)
                    if not ours or not peers[best]:
                        continue
                    gap = float(np.mean(ours) - np.mean(peers[best]))
                    means = [f"{np.mean(v):.3f}" if v else "not priced" for v in (ours, bare, old)]
                    best_mean = f"{LABELS[best]} {np.mean(peers[best]):.3f}"
                    within = "yes" if gap >= TARGET_GAP else "**no**"
                    rows.append([stem, rows_name, b, title, len(ours), *means, best_mean])
                    interval, side = _gap_interval(paired, b, metric, best)
                    rows[-1] += [f"{gap:+.3f}", within, interval]
                    if rows_name == "all" and gap < TARGET_GAP:
                        sides.append(side)
    header = "file|rows|budget|LDS|examples|auto|rule without the lexical prior|auto before"
    titles = ["best peer", "gap", "within 0.02", "gap, 95% CI (paired): the line"]
    cells = f"{len(sides)} cell misses" if len(sides) == 1 else f"{len(sides)} cells miss"
    words = (
        f"On all rows {cells} the target; the 95% interval of the gap lies wholly below "
        f"the line in {sides.count('below')} of them, and the others are not settled by "
        "these examples."
    )
    return markdown_table([*header.split("|"), *titles], rows), words


def _gap_interval(table: list[Cells], budget: int, metric: str, peer: str) -> tuple[str, str]:
    """The 95% interval (Student t) of ``auto`` minus ``peer`` over the examples with
    both cells, and where it lies against the target's line: a cell whose interval
    straddles the line is not settled by these examples."""
    key = str(budget)
    pairs = [(t[("auto", key)].get(metric), t.get((peer, key), {}).get(metric)) for t in table]
    mean, half, n = mean_ci([a - p for a, p in pairs if a is not None and p is not None])
    if n < 2 or math.isnan(half):
        return "–", "unknown"
    side = line_side(mean, half, TARGET_GAP)
    return f"{mean - half:+.3f} to {mean + half:+.3f}: {side}", side


Part = dict[str, tuple[list[Case], list[Cells]]]
Pick = Any  # (case, budget) -> the (variant, budget label) cell ``auto`` would read


def _picked_objective(part: Part, pick: Pick, several: bool) -> float:
    """As the rule's objective, over the examples on one document (or over several): the
    cell ``pick(case, budget)`` of each."""
    files = []
    for found, table in part.values():
        cells = [
            _values(
                [
                    t.get(pick(c, b), {})
                    for c, t in zip(found, table)
                    if (_n_docs(c) > 1) == several
                ],
                metric,
            )
            for b in BUDGETS
            for metric, _ in METRICS
        ]
        if any(cells):
            files.append(np.mean([np.mean(v) for v in cells if v]))
    return float(np.mean(files)) if files else math.nan


def _values(cells: list[dict[str, float]], metric: str) -> list[float]:
    found = (c.get(metric) for c in cells)
    return [v for v in found if v is not None and not math.isnan(v)]


def _shown(value: float) -> str:
    return "–" if math.isnan(value) else f"{value:.3f}"


def lexical_sweep(dev: Part, check: Part) -> tuple[str, float]:
    """On one document's sentences, the objective of reading ``auto``'s scores with the
    lexical prior under ``c * (N + 1)`` calls, on the dev rows and the other half; with
    the (smallest) cut of the best dev objective."""
    rows, best = [], (-math.inf, 0.0)
    for cut in CUTS:

        def pick(c: Case, b: int, cut: float = cut) -> tuple[str, str]:
            return ("lexical" if b < cut * (c.n + 1) else NO_LEXICAL, str(b))

        ours, other = (_picked_objective(part, pick, False) for part in (dev, check))
        rows.append([cut, _shown(ours), _shown(other)])
        if not math.isnan(ours):
            best = max(best, (ours, -cut))
    return markdown_table(["c", "dev", "other half"], rows), -best[1]


WORD_CUTS = (0, 1, 2, 3, 4, 6, 8, 12, 16, math.inf)
"""Candidate answer lengths (words) under which several documents read the prior."""


def _several_key(case: Case, budget: int, words: float, cut: float) -> tuple[str, str]:
    """Over several documents: the re-fit with the prior for an answer of at most
    ``words`` words under ``cut * (N + 1)`` calls, else ``auto`` without the prior."""
    use = _words(case) <= words and budget < cut * (case.n + 1)
    return (FLAT_LEXICAL if use else NO_LEXICAL, str(budget))


def _worst_cell(part: Part, words: float, cut: float) -> tuple[float, str]:
    """The cell (file, budget, LDS sample) of ``part`` that loses most against ``auto``
    without the prior under (``words``, ``cut``)."""
    worst = (math.inf, "none")
    for stem, (found, table) in part.items():
        for b in BUDGETS:
            for metric, title in METRICS:
                pairs = [
                    (t[(NO_LEXICAL, str(b))], t.get(_several_key(c, b, words, cut), {}))
                    for c, t in zip(found, table)
                    if _n_docs(c) > 1 and (NO_LEXICAL, str(b)) in t
                ]
                diffs = [y.get(metric, math.nan) - x.get(metric, math.nan) for x, y in pairs]
                diffs = [d for d in diffs if not math.isnan(d)]
                if diffs and float(np.mean(diffs)) < worst[0]:
                    change = float(np.mean(diffs))
                    worst = (change, f"{change:+.3f} ({stem}, {b} calls, {title})")
    return worst


def _missed(part: Part, pick: Pick) -> set[tuple[str, int, str]]:
    """The cells (over several documents) where the variant ``pick`` names misses the
    target (:data:`TARGET_GAP` against the best peer's mean on the same examples)."""
    missed = set()
    for stem, (found, table) in part.items():
        several = [(c, t) for c, t in zip(found, table) if _n_docs(c) > 1]
        for b in BUDGETS:
            for metric, _ in METRICS:
                ours = _values([t.get(pick(c, b), {}) for c, t in several], metric)
                peers = [
                    _values([t.get((m, str(b)), {}) for _, t in several], metric) for m in ANYTIME
                ]
                best = max((float(np.mean(v)) for v in peers if v), default=math.nan)
                if ours and not math.isnan(best) and np.mean(ours) < best + TARGET_GAP:
                    missed.add((stem, b, metric))
    return missed


def _grid(
    dev: Part,
    check: Part,
    cuts: tuple[float, ...],
    key: Callable[[Case, int, float, float], tuple[str, str]],
    baseline: Pick,
    best: tuple[float, tuple[float, float]],
    worst: bool = False,
    rows_of: tuple[float, ...] = WORD_CUTS,
    title: str = "T",
) -> tuple[str, tuple[float, float]]:
    """Every (T, c) of :data:`WORD_CUTS` x ``cuts`` read through ``key(case, budget, T, c)``
    over several documents: dev / other half objectives (with ``worst``, the dev cell that
    loses most against the baseline) and missed cells, and the (T, c) of the best dev
    objective above ``best``'s among those that miss no dev cell ``baseline`` meets."""
    kept = _missed(dev, baseline)
    rows = []
    for words in rows_of:
        row: list[object] = [words]
        for cut in cuts:

            def pick(c: Case, b: int, w: float = words, x: float = cut) -> tuple[str, str]:
                return key(c, b, w, x)

            ours, other = (_picked_objective(part, pick, True) for part in (dev, check))
            missed = [_missed(part, pick) for part in (dev, check)]
            moved = f"{_worst_cell(dev, words, cut)[0]:+.3f}; " if worst else ""
            row.append(f"{ours:.3f} / {other:.3f} ({moved}{len(missed[0])} / {len(missed[1])})")
            if missed[0] <= kept and ours > best[0]:
                best = (ours, (words, cut))
        rows.append(row)
    return markdown_table([title] + [str(c) for c in cuts], rows), best[1]


def several_lexical_sweep(dev: Part, check: Part) -> tuple[str, tuple[float, float], str, str]:
    """Over several documents, the lexical prior for answers of at most ``T`` words under
    ``c * (N + 1)`` calls: the (T, c) of the best dev objective among those that miss no
    dev cell ``auto`` without the prior meets, and its worst cell on either half."""

    def bare(c: Case, b: int) -> tuple[str, str]:
        return (NO_LEXICAL, str(b))

    table, chosen = _grid(dev, check, CUTS, _several_key, bare, (-math.inf, (0.0, 0.0)), True)
    return table, chosen, _worst_cell(dev, *chosen)[1], _worst_cell(check, *chosen)[1]


SHORT_HALVES = (0.0, math.inf)
"""What ``auto`` ships for :func:`short_halves_sweep` (T, c): it has no such switch."""
HALVES_FROM = (0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, math.inf)
"""Candidate cuts (calls per unit) from which a short answer over several documents may
take the random halves (inf: never)."""


def _short_halves_key(case: Case, budget: int, words: float, cut: float) -> tuple[str, str]:
    """Over several documents: the random halves read with LASSO for an answer of at most
    ``words`` words from ``cut * (N + 1)`` calls on, else ``auto`` as shipped."""
    use = _words(case) <= words and budget >= cut * (case.n + 1)
    return ("halves-lasso" if use else LIKELY, str(budget))


def short_halves_sweep(dev: Part, check: Part) -> tuple[str, tuple[float, float]]:
    """Over several documents, the random halves for answers of at most ``T`` words from
    ``c * (N + 1)`` calls on, else ``auto`` as shipped: the (T, c) of the best dev
    objective among those that miss no dev cell ``auto`` meets, if above ``auto``'s own
    (ties: the fewest words, then the earliest cut)."""

    def shipped(c: Case, b: int) -> tuple[str, str]:
        return (LIKELY, str(b))

    start = (_picked_objective(dev, shipped, True), SHORT_HALVES)
    return _grid(dev, check, HALVES_FROM, _short_halves_key, shipped, start)


UNLIKELY_CUTS = (0.25, 0.5, 0.7, 1.0, 1.5, 2.0, math.inf)
"""Candidate cuts L (nats a token): an answer whose mean log-prob at the full context is
under -L is one the model would not give itself (inf: none is)."""
UNLIKELY_FROM = tuple(c for c in HALVES_FROM if c >= 1.0)
"""Candidate cuts (calls a unit) for it: at least one, so LASSO reads as many rows as units."""
SHIPPED_UNLIKELY = (-UNLIKELY_ANSWER, UNLIKELY_HALVES_FROM)
SHIPPED_FLOOR = min(b for b in BUDGETS if b >= UNLIKELY_HALVES_MIN_CALLS)
"""The shipped floor as the tables' budgets read it (a floor of 40 acts as 64 there)."""
_FULL: dict[tuple[str, str, str], float] = {}


def _full(case: Case) -> float:
    """The answer's mean log-prob at the full context (the stored run's, else the store's)."""
    key = (case.stem, case.shape, case.id)
    if key not in _FULL:
        value = full_reward(case, store_of(case.stem, case.shape))
        _FULL[key] = math.nan if value is None else float(value)
    return _FULL[key]


def _unlikely_key(
    case: Case, budget: int, cut_nats: float, cut: float, floor: int = UNLIKELY_HALVES_MIN_CALLS
) -> tuple[str, str]:
    """Over several documents: the random halves read as ``auto`` reads them
    (:data:`AUTO_HALVES`) for an answer under ``-cut_nats`` a token at the full context,
    from ``cut * (N + 1)`` calls and ``floor`` calls on, else ``auto`` without that switch."""
    least = max(cut * (case.n + 1), floor)
    use = _full(case) < -cut_nats and budget >= least
    return (AUTO_HALVES if use else LIKELY, str(budget))


def _likelihoods(every: Part) -> str:
    """Each file's median of :func:`_full` over its examples on several documents."""
    medians = []
    for stem, (found, _) in every.items():
        values = [_full(c) for c in found if _n_docs(c) > 1 and not math.isnan(_full(c))]
        if values:
            medians.append(f"{stem} {float(np.median(values)):.2f}")
    return ", ".join(medians)


def unlikely_halves_sweep(dev: Part, check: Part) -> tuple[str, tuple[float, float]]:
    """Over several documents, the random halves for an answer the model finds unlikely
    (:func:`_unlikely_key`), as :func:`short_halves_sweep` chooses: the (L, c) of the best
    dev objective among those that miss no dev cell ``auto`` without the switch meets."""

    start = (_picked_objective(dev, _without_switch, True), (math.inf, math.inf))
    return _grid(
        dev,
        check,
        UNLIKELY_FROM,
        _unlikely_key,
        _without_switch,
        start,
        rows_of=UNLIKELY_CUTS,
        title="L",
    )


FLOORS = (16, 32, 64)
"""Candidate floors (calls) of the unlikely-answer switch for :func:`floor_table`."""
FLOOR_CUTS = (0.25, 0.5, 1.0)
"""Calls a unit read beside each floor: under one, LASSO reads fewer rows than units (as
ContextCite does), which a floor under 64 needs to reach HotpotQA's ~40 sentences."""


def _without_switch(case: Case, budget: int) -> tuple[str, str]:
    """``auto`` as shipped but never the halves for an unlikely answer."""
    return (LIKELY, str(budget))


def floor_table(dev: Part, check: Part, outside: Part) -> tuple[str, list[tuple[int, float]]]:
    """The unlikely-answer switch at the shipped L, per floor and calls a unit: the
    objective and the missed cells on the dev rows, the other half and the files outside
    the rule's search (none of their rows chose a cut), and the dev cells missed that
    ``auto`` without the switch meets; each part's best (floor, c) (ties: the higher floor,
    then the smaller c), then the dev rows' choice by the other sweeps' rule (the best dev
    objective among those that miss no such cell)."""
    rows, best, parts = [], [(-math.inf, (0, 0.0))] * 4, (dev, check, outside)
    kept = _missed(dev, _without_switch)
    for floor in FLOORS:
        for cut in FLOOR_CUTS:

            def pick(c: Case, b: int, x: float = cut, f: int = floor) -> tuple[str, str]:
                return _unlikely_key(c, b, SHIPPED_UNLIKELY[0], x, f)

            scores = [_picked_objective(p, pick, True) for p in parts]
            missed = [_missed(p, pick) for p in parts]
            new = len(missed[0] - kept)
            scores_kept = [*scores, scores[0] if new == 0 else -math.inf]
            best = [max(old, (v, (floor, cut)), key=_ranked) for old, v in zip(best, scores_kept)]
            counts = " / ".join(str(len(m)) for m in missed)
            rows.append([floor, cut, *(f"{v:.3f}" for v in scores), counts, new])
    header = ["floor", "c", "dev", "other half", "files outside the search"]
    header += ["cells missing the target", "new dev cells missing"]
    return markdown_table(header, rows), [b[1] for b in best]


def _ranked(entry: tuple[float, tuple[int, float]]) -> tuple[float, int]:
    return entry[0], entry[1][0]


def _floor_origin() -> str:
    """Where the shipped floor and c of the switch for an unlikely answer come from."""
    floor, cut = SHIPPED
    if SHIPPED == BEFORE:
        calls, candidate = CANDIDATES[DEFAULT_BUDGET]
        return (
            f"The floor of {floor} calls and c = {cut} are where the rule was measured. A "
            f"floor of {calls} calls and c = {candidate}, fixed before any row was read at "
            "the default budget, failed one of the three tests written down then ('The "
            "library's default budget') and does not ship."
        )
    return (
        f"The floor of {floor} calls and c = {cut} were fixed before any row was read at "
        "the default budget and ship because they passed the three tests written down "
        "then ('The library's default budget'; on a second reading of the rows that failed "
        "them, with the halves read by the cross-validated LASSO); this sweep did not choose "
        "them. On these "
        f"budgets they act as {SHIPPED_FLOOR} calls and c = {cut}."
    )


def _floor_verdict(best: list[tuple[int, float]]) -> str:
    """Whether the shipped floor stands, from :func:`floor_table`'s best (floor, c) on the
    dev rows, the other half and the files outside the search, and the dev rows' choice."""
    dev, check, outside, chosen = best
    missed = "a dev cell `auto` without the switch meets"
    said = [] if dev == chosen else [f"the dev rows score highest at {dev}, which misses {missed}"]
    if chosen[0] == 0:  # no candidate kept every such cell
        said.append(f"every (floor, c) misses {missed}")
    else:
        shipped = (SHIPPED_FLOOR, SHIPPED_UNLIKELY[1])
        said.append(
            "by the rule of the sweeps above (the best dev objective among the (floor, c) that "
            f"miss no such cell) the dev rows choose {chosen}, "
            + (
                "the shipped rule as these budgets read it"
                if chosen == shipped
                else "the shipped floor"
                if chosen[0] == shipped[0]
                else "**not** the shipped floor"
            )
        )
    said.append(
        f"the other half scores highest at {check}, the files outside the search at {outside}"
    )
    return ": " + "; ".join(said)


def floor_moves(every: Part, chosen: tuple[int, float]) -> tuple[str, str]:
    """What the dev rows' (floor, c) would change below the shipped floor, on all rows:
    per file (several documents) where it moves anything, the mean change of each LDS
    sample over the budgets from its floor to under :data:`UNLIKELY_HALVES_MIN_CALLS`
    (examples it does not switch count as no change); and the verdict: the
    floor moves only where the choice raises the two target samples on more files than it
    lowers them."""
    shipped = (UNLIKELY_HALVES_MIN_CALLS, SHIPPED_UNLIKELY[1])
    if chosen[0] == 0 or chosen[0] >= shipped[0]:
        return "", ""
    rows: list[list[object]] = []
    up: list[str] = []
    down: list[str] = []
    lower_removal = 0
    for stem, (found, table) in every.items():
        diffs: dict[str, list[float]] = {metric: [] for metric in SAMPLE_TITLES}
        for c, t in zip(found, table):
            for b in [b for b in BUDGETS if chosen[0] <= b < shipped[0] and _n_docs(c) > 1]:
                old = t.get(_unlikely_key(c, b, SHIPPED_UNLIKELY[0], shipped[1], shipped[0]))
                new = t.get(_unlikely_key(c, b, SHIPPED_UNLIKELY[0], chosen[1], chosen[0]))
                for metric, values in diffs.items():
                    change = (new or {}).get(metric, math.nan) - (old or {}).get(metric, math.nan)
                    if not math.isnan(change):
                        values.append(change)
        changes = [float(np.mean(v)) if v else 0.0 for v in diffs.values()]
        if not any(changes):
            continue
        rows.append([stem, *(f"{v:+.3f}" for v in changes)])
        (up if changes[0] + changes[1] > 0 else down).append(stem)
        lower_removal += changes[2] < 0
    verdict = "the floor stays" if len(down) >= len(up) else "**the floor should move to it**"
    words = (
        f"From {chosen[0]} to under {shipped[0]} calls, the dev rows' {chosen} raises the two "
        f"target samples on {len(up)} of {len(rows)} files ({', '.join(up) or 'none'}) and "
        f"lowers them on {len(down)}, and lowers remove 2-5 on {lower_removal}: {verdict}."
    )
    header = ["file", *(f"{t}: change" for t in SAMPLE_TITLES.values())]
    return markdown_table(header, rows), words


LIKELY_DESIGN = (
    "the halves for every answer from "
    f"{HALVES_FOR_EVERY_ANSWER_FROM:g} calls, past its cut the adaptive design"
    if SHIPPED_FLOOR >= HALVES_FOR_EVERY_ANSWER_FROM
    else "the adaptive design"
)
"""What ``auto`` does with a likely answer at :data:`SHIPPED_FLOOR` calls."""
SPLIT_GROUPS: tuple[tuple[str, Callable[[Case], bool]], ...] = (
    ("the switch fires", lambda c: _fires(c)),
    ("unlikely, N + 1 past its cut", lambda c: _unlikely(c) and not _fires(c)),
    (f"likely: {LIKELY_DESIGN}", lambda c: not _unlikely(c)),
)
""":func:`split_table`'s groups of examples over several documents at the shipped floor."""


def _unlikely(case: Case) -> bool:
    """Whether the model finds the answer unlikely at the full context (the switch's cut)."""
    return _full(case) < UNLIKELY_ANSWER


def _fires(case: Case) -> bool:
    """Whether the shipped switch hands the example the halves at :data:`SHIPPED_FLOOR`."""
    key = _unlikely_key(case, SHIPPED_FLOOR, *SHIPPED_UNLIKELY)
    return key[0] == AUTO_HALVES


def split_table(every: Part, peer: str = "contextcite") -> tuple[str, str]:
    """Where ``auto`` trails ``peer`` at the shipped floor (:data:`SHIPPED_FLOOR` calls):
    per file over several documents, its examples split by :data:`SPLIT_GROUPS` (the
    switch for an unlikely answer fires, an unlikely answer over too many units for it,
    a likely answer), ``auto``, ``peer`` and the paired gap on the two target samples; and
    a sentence counting the groups whose gap is within the target's 0.02."""
    rows: list[list[object]] = []
    within: dict[str, list[int]] = {name: [0, 0] for name, _ in SPLIT_GROUPS}
    for stem, (found, table) in every.items():
        for name, pick in SPLIT_GROUPS:
            picked = [(c, t) for c, t in zip(found, table) if pick(c)]
            cases_, cells = [c for c, _ in picked], [t for _, t in picked]
            row: list[object] = [stem, name]
            shown = False
            for metric, _ in METRICS:
                pairs = _paired(cases_, cells, ("auto", peer), SHIPPED_FLOOR, metric, True)
                gaps = [x - y for x, y in pairs]
                if gaps:
                    shown = True
                    within[name][0] += float(np.mean(gaps)) >= TARGET_GAP
                    within[name][1] += 1
                row += [
                    len(pairs),
                    _cell([x for x, _ in pairs]),
                    _cell([y for _, y in pairs]),
                    _cell(gaps),
                ]
            if shown:
                rows.append(row)
    header = ["file", "group"]
    for _, title in METRICS:
        header += [f"{title}: examples", "auto", LABELS[peer], "gap (paired)"]
    counts = "; ".join(f"{name}: {k} of {n}" for name, (k, n) in within.items() if n)
    words = (
        f"Cells (file and sample) whose mean gap at {SHIPPED_FLOOR} calls is within 0.02 of "
        f"{LABELS[peer]} or above, per group: {counts}."
    )
    fired, *others = within.values()
    if fired[1] and fired[0] == fired[1] and any(k < n for k, n in others):
        words += (
            " Where the switch fires, `auto` reads ContextCite's own subsets and keeps up; "
            "what it trails by at this budget sits in the answers it leaves on its "
            "adaptive design."
        )
    return markdown_table(header, rows), words


def prior_moves_table(every: Part) -> str:
    """Over several documents, ``auto`` as shipped against ``auto`` without the prior, per
    file, budget and LDS sample (the three held-out samples), on all rows; the cells the
    prior moves only."""
    return moves_table(every, NO_LEXICAL, "auto without the prior", SAMPLE_TITLES)


MOVED_TITLES = {**SAMPLE_TITLES, "drop@3": "drop@3", "auroc": "gold AUROC"}
"""What :func:`moves_table` reads of the unlikely-answer switch (not only what it was chosen on)."""


def _paired(
    found: list[Case], table: list[Cells], keys: tuple[str, str], b: int, metric: str, several: bool
) -> list[tuple[float, float]]:
    """``metric`` of the two variants ``keys`` at budget ``b``, per example that has both as
    numbers (with ``several``, over several documents only)."""
    pairs = [
        (t[(keys[0], str(b))].get(metric, math.nan), t[(keys[1], str(b))].get(metric, math.nan))
        for c, t in zip(found, table)
        if (not several or _n_docs(c) > 1) and (keys[0], str(b)) in t and (keys[1], str(b)) in t
    ]
    return [(x, y) for x, y in pairs if not (math.isnan(x) or math.isnan(y))]


def moves_table(every: Part, base: str, label: str, metrics: dict[str, str]) -> str:
    """Over several documents, ``auto`` as shipped against the variant ``base`` (``label``),
    per file, budget and metric, on all rows with both priced; the cells that move only."""
    rows = []
    for stem, (found, table) in every.items():
        for b in BUDGETS:
            for metric, title in metrics.items():
                kept = _paired(found, table, (base, "auto"), b, metric, several=True)
                if kept and any(x != y for x, y in kept):
                    bare, ours = np.mean(kept, axis=0)
                    rows.append([stem, b, title, len(kept), f"{bare:.3f}", f"{ours:.3f}"])
                    rows[-1].append(f"{ours - bare:+.3f}")
    header = ["file", "budget", "measure", "examples", label, "auto", "change"]
    return markdown_table(header, rows) if rows else "No cell moves."


def kept_table(every: Part) -> str:
    """Over several documents, the mean share of the context kept by the subsets of
    ``auto`` and of each anytime peer, per file and budget (all rows)."""
    keys = ("auto", *ANYTIME)
    rows = []
    for stem, (found, table) in every.items():
        cells = [t for c, t in zip(found, table) if _n_docs(c) > 1]
        for b in BUDGETS:
            shares = [_values([t.get((k, str(b)), {}) for t in cells], "kept") for k in keys]
            if all(shares):
                rows.append([stem, b, *(f"{np.mean(v):.2f}" for v in shares)])
    return markdown_table(["file", "budget", *(LABELS[k] for k in keys)], rows)


def _complete(cells: list[Cells], keys: Any, metric: str) -> list[Cells]:
    """The examples' cells in which every one of ``keys`` (method, budget label) has a
    number for ``metric``."""
    return [
        t for t in cells if all(not math.isnan(t.get(k, {}).get(metric, math.nan)) for k in keys)
    ]


SIZE_READ_FROM = 0.1
"""The equal-scores LDS from which lesson 7 names a file (the size explains a share)."""


def size_table(every: Part) -> tuple[str, list[str]]:
    """Over several documents, per file: LDS of the equal-scores row (a subset's predicted
    reward is its size) beside ``auto`` and ContextCite-style at 64 calls, on the examples
    that have all three; and the files whose equal-scores keep 1-4 LDS reaches
    :data:`SIZE_READ_FROM`."""
    keys = [SIZE_ONLY, ("auto", "64"), ("contextcite", "64")]
    rows, sized = [], []
    for stem, (found, table) in every.items():
        cells = [t for c, t in zip(found, table) if _n_docs(c) > 1]
        row: list[object] = [stem]
        for metric, _ in METRICS:
            both = _complete(cells, keys, metric)
            means = [
                float(np.mean([t[k][metric] for t in both])) if both else math.nan for k in keys
            ]
            row += [len(both), *(_shown(m) for m in means)]
            if metric == "lds_keep" and both and means[0] >= SIZE_READ_FROM:
                sized.append(stem)
        if row[1]:  # Bernoulli ½ pairs
            rows.append(row)
    names = ["equal scores", "auto@64", "ContextCite-style@64"]
    header = ["file"] + [f"{t}: {x}" for _, t in METRICS for x in ["examples", *names]]
    return markdown_table(header, rows), sized


def locality_table(
    every: Part, replays: tuple[str, ...] = (ANCHOR, UNION)
) -> tuple[str, dict[str, dict[str, list[int]]]]:
    """Over several documents, per file and budget: the mean LDS of ``auto``, of the
    ``replays`` (:data:`LOCALITY`) and of the best anytime peer (the highest mean), in each
    held-out sample, over the examples where all of them have one (the half-and-half fit
    from 16 calls on); with, per replay and sample, [cells above ``auto``, cells]."""
    rows = []
    counts = {k: {m: [0, 0] for m in (*SAMPLE_TITLES, "all")} for k in replays}
    width = len(replays) + 3
    for stem, (found, table) in every.items():
        cells = [t for c, t in zip(found, table) if _n_docs(c) > 1]
        for b in BUDGETS:
            here = [k for k in replays if k != UNION or b // 2 in BUDGETS]
            keys = ("auto", *here, *ANYTIME)
            row: list[object] = [stem, b]
            above: dict[str, list[bool]] = {k: [] for k in here}  # per sample
            for metric in SAMPLE_TITLES:
                have = _complete(cells, [(k, str(b)) for k in keys], metric)
                if not have:
                    row += [0, *["–"] * (width - 1)]
                    continue
                means = {k: float(np.mean([t[(k, str(b))][metric] for t in have])) for k in keys}
                peer = max(means[k] for k in ANYTIME)
                shown = [means.get(k, math.nan) for k in ("auto", *replays)] + [peer]
                row += [len(have), *(_shown(v) for v in shown)]
                for k in here:
                    counts[k][metric][0] += int(means[k] > means["auto"])
                    counts[k][metric][1] += 1
                    above[k].append(means[k] > means["auto"])
            for k, wins in above.items():
                if len(wins) == len(SAMPLE_TITLES):
                    counts[k]["all"][0] += int(all(wins))
                    counts[k]["all"][1] += 1
            if any(row[2::width]):
                rows.append(row)
    names = ["examples", "auto", *(REPLAY_NAMES[k] for k in replays), "best peer"]
    header = ["file", "budget"] + [f"{t}: {x}" for t in SAMPLE_TITLES.values() for x in names]
    return markdown_table(header, rows), counts


def _moved(counts: dict[str, dict[str, list[int]]]) -> str:
    """Lessons 8-9's counts in words: per replay, the cells above ``auto`` in each sample
    and in all three at once."""
    titles = {**SAMPLE_TITLES, "all": "all three at once"}
    return "; ".join(
        f"the {REPLAY_NAMES[k]} is above `auto` in "
        + ", ".join(f"{won} of {n} cells on {titles[m]}" for m, (won, n) in c.items())
        for k, c in counts.items()
    )


def _trade(counts: dict[str, dict[str, list[int]]]) -> str:
    """Per replay, the samples where it is above ``auto`` in most cells and those where it
    is below in most; whether any replay is above in all three at once in most cells."""
    said = []
    for k, c in counts.items():
        up = [SAMPLE_TITLES[m] for m in SAMPLE_TITLES if 2 * c[m][0] > c[m][1]]
        down = [SAMPLE_TITLES[m] for m in SAMPLE_TITLES if 2 * c[m][0] < c[m][1]]
        said.append(
            f"the {REPLAY_NAMES[k]} raises {' and '.join(up) or 'no sample'} and lowers "
            f"{' and '.join(down) or 'no sample'} in most cells"
        )
    every = any(2 * c["all"][0] > c["all"][1] for c in counts.values())
    verdict = "one of them gains" if every else "neither gains"
    return "; ".join(said) + f", and {verdict} all three samples at once in most cells"


def two_draws_pooled(dev: Part, check: Part) -> str:
    """Two draws a round minus one on LDS, Bernoulli ½, pooled over the examples with
    several documents, per budget on the dev rows and the other half; and the cut
    ``auto`` ships (:data:`TWO_DRAWS_FROM`)."""
    cells = []
    for b in BUDGETS:
        halves = []
        for part in (dev, check):
            diffs = [
                y - x
                for found, table in part.values()
                for x, y in _paired(found, table, ("auto", TWO_DRAWS), b, "lds_bernoulli", True)
            ]
            halves.append(_cell(diffs))
        cells.append(f"{b} calls {halves[0]} / {halves[1]}")
    return (
        "Pooled over the examples with several documents, two draws minus one on LDS, "
        f"Bernoulli ½, dev / other half: {'; '.join(cells)}. `auto` takes two draws a round "
        f"from {TWO_DRAWS_FROM} calls on and one under it."
    )


SIGNALS = {
    "full": "the answer's mean log-prob at the full context (no call; the switch's)",
    "gain": "its gain over the empty context (one call)",
    "drop": "the largest loss from leaving one document out (the document opening's D calls)",
}
"""Lesson 10: what a run could read about an example before it chooses its design."""
SIGNAL_BUDGETS = (32, 64)


def _signals(case: Case) -> dict[str, float] | None:
    """:data:`SIGNALS` of one example over several documents, from its store; ``None``
    where a subset they need is not priced."""
    store, groups = store_of(case.stem, case.shape), np.asarray(_groups(case))
    empty = store.get(case.id, np.zeros(case.n, dtype=bool))
    found = [store.get(case.id, groups != d) for d in range(int(groups.max()) + 1)]
    left = [v for v in found if v is not None]
    full = _full(case)
    if math.isnan(full) or empty is None or len(left) < len(found):
        return None
    return {"full": full, "gain": full - empty, "drop": full - min(left)}


def signal_table(every: Part) -> tuple[str, str]:
    """Per file and budget: the random halves' lead over ``auto`` without the switch (mean
    of the Bernoulli ½ and keep 1-4 LDS) and, per signal, its median and its rank
    correlation with that lead across the file's examples; a sentence on the signs."""
    rows: list[list[object]] = []
    rhos: dict[str, list[float]] = {k: [] for k in SIGNALS}
    for stem, (found, table) in every.items():
        for b in SIGNAL_BUDGETS:
            leads: list[float] = []
            seen: list[dict[str, float]] = []
            for case, cells in zip(found, table):
                halves, ours = cells.get((AUTO_HALVES, str(b))), cells.get((LIKELY, str(b)))
                signals = _signals(case) if _n_docs(case) > 1 and halves and ours else None
                if signals is None or halves is None or ours is None:
                    continue
                lead = float(np.mean([halves[m] - ours[m] for m, _ in METRICS]))
                if not math.isnan(lead):
                    leads.append(lead)
                    seen.append(signals)
            if len(leads) < MIN_RULE_ROWS:
                continue
            row: list[object] = [stem, b, len(leads), f"{np.mean(leads):+.3f}"]
            for k in SIGNALS:
                values = [s[k] for s in seen]
                rho = float(spearmanr(values, leads)[0])
                rhos[k].append(rho)
                row.append(f"{np.median(values):.2f} ({rho:+.2f})")
            rows.append(row)
    ranges = "; ".join(
        f"{k} from {min(r):+.2f} to {max(r):+.2f} (above zero in {sum(x > 0 for x in r)} of "
        f"{len(r)})"
        for k, r in rhos.items()
        if r
    )
    steady = [k for k, r in rhos.items() if r and (min(r) > 0 or max(r) < 0)]
    words = f"Within a file the correlations run: {ranges}. " + (
        f"Only {' and '.join(steady)} {'keeps' if len(steady) == 1 else 'keep'} one sign in "
        "every file and budget."
        if steady
        else "No signal keeps one sign across the files and budgets: a cut on any of them "
        "sorts files (models and answer shapes), not the examples within one."
    )
    header = ["file", "budget", "examples", "halves minus auto", *SIGNALS]
    return markdown_table(header, rows), words


TOKEN_PARTS = {
    "whole": "whole answer",
    "span": "the span's tokens",
    "template": f"'{SENTENCE_OPENING.strip()}' and '.'",
}
"""The parts of a ``sentence``-shaped answer whose mean log-prob lesson 12 ranks."""
TOKEN_SAMPLES = ("bernoulli", "keep")


def span_tokens(response: str, offsets: Any) -> np.ndarray:
    """Which tokens (their character ``offsets``) of a ``sentence``-shaped answer (the gold
    span between :data:`SENTENCE_OPENING` and a final ``.``) carry the span's characters."""
    start, end = len(SENTENCE_OPENING), len(response) - 1
    return np.array([b > start and a < end for a, b in offsets], dtype=bool)


def _token_logprobs(store: RewardStore) -> dict[str, dict[str, list[float]]]:
    """Per example and subset, the answer's per-token log-probs the store kept."""
    found: dict[str, dict[str, list[float]]] = {}
    for row in read_jsonl(store.path):
        if row.get("logprobs"):
            found.setdefault(str(row["id"]), {})[str(row["mask"])] = list(row["logprobs"])
    return found


def _part_gaps(
    case: Case, span: np.ndarray, kept: dict[str, list[float]]
) -> tuple[dict[tuple[str, int, str], float], float | None]:
    """``auto`` minus ContextCite-style LDS per (sample, budget, part of the answer) of one
    example, on the held-out subsets and fits of the tables (a sample is left out unless
    every subset kept its per-token log-probs); and the share of the reward's variance over
    the Bernoulli ½ subsets that the tokens outside the span carry."""
    gaps: dict[tuple[str, int, str], float] = {}
    share = None
    if span.all() or not span.any():
        return gaps, share
    store = store_of(case.stem, case.shape)
    reward = PricedReward(store, case.id)
    fits = fits_of(case, reward, partial=True) | _ablation_fits(case, reward)
    for kind, masks in held_out_samples(case, store, fits).items():
        rows = [kept.get(bits(m)) for m in masks] if kind in TOKEN_SAMPLES else []
        if not rows:
            continue
        if any(row is None or len(row) != span.size for row in rows):
            continue
        tokens = np.array(rows, dtype=float)
        parts = {
            "whole": np.array([float(store.get(case.id, m) or 0.0) for m in masks]),
            "span": tokens[:, span].mean(axis=1),
            "template": tokens[:, ~span].mean(axis=1),
        }
        spread = float(np.var(tokens.mean(axis=1)))
        if kind == "bernoulli" and spread > 0:
            share = float(np.var(tokens[:, ~span].sum(axis=1) / span.size)) / spread
        for b in BUDGETS:
            ours, peer = fits.get(("auto", str(b))), fits.get(("contextcite", str(b)))
            if ours is None or peer is None:
                continue
            for part, values in parts.items():
                gap = lds(ours.scores, masks, list(values)) - lds(peer.scores, masks, list(values))
                gaps[(kind, b, part)] = gap
    return gaps, share


def token_table(every: Part) -> tuple[str, str]:
    """Lesson 12: on each ``sentence``-shaped file, ``auto`` minus ContextCite-style LDS on
    the whole answer, on its span's tokens and on the rest (the opening and the ``.``),
    from the per-token log-probs the store kept (no new call); a sentence that counts
    the cells and the rest's median share of the reward's variance over the halves."""
    from transformers import AutoTokenizer

    from camab_rag.scorers.models import resolve_model_path

    rows: list[list[object]] = []
    behind = {"span": 0, "template": 0}
    trailing, shares = 0, dict[str, list[float]]()
    for stem, (found, _) in every.items():
        if not stem.endswith(".sentence") or not found:
            continue
        name = stem_shape(stem)[0]
        model = next((m for m in MODEL_NAMES if name.endswith(f"_{m}")), None)
        if model is None:
            continue
        tokenizer = AutoTokenizer.from_pretrained(resolve_model_path(model), local_files_only=True)
        kept = _token_logprobs(store_of(name, "sentence"))
        gaps: dict[tuple[str, int, str], list[float]] = {}
        for case in found:
            response = str(case.record["response"])
            encoded = tokenizer(response, return_offsets_mapping=True, add_special_tokens=False)
            span = span_tokens(response, encoded["offset_mapping"])
            found_gaps, share = _part_gaps(case, span, kept.get(case.id, {}))
            if share is not None:
                shares.setdefault(stem, []).append(share)
            for key, gap in found_gaps.items():
                gaps.setdefault(key, []).append(gap)
        for kind in TOKEN_SAMPLES:
            for b in BUDGETS:
                cells = {p: gaps.get((kind, b, p), []) for p in TOKEN_PARTS}
                if len(cells["whole"]) < MIN_RULE_ROWS:
                    continue
                title = SAMPLE_TITLES[f"lds_{kind}"]
                rows.append(
                    [stem, title, b, len(cells["whole"])] + [_cell(v) for v in cells.values()]
                )
                if np.mean(cells["whole"]) < TARGET_GAP:
                    trailing += 1
                    for part in behind:
                        behind[part] += int(np.mean(cells[part]) < TARGET_GAP)
    header = [
        "file",
        "sample",
        "budget",
        "examples",
        *(f"{t}: auto − ContextCite-style" for t in TOKEN_PARTS.values()),
    ]
    medians = ", ".join(f"{k} {np.median(v):.2f}" for k, v in shares.items())
    counted = (
        f"Of the {trailing} cells where `auto` trails ContextCite-style by more "
        f"than {-TARGET_GAP} on the whole answer, it trails by more than that on the span's "
        f"tokens alone in {behind['span']} and on the opening and the '.' in "
        f"{behind['template']}."
        if trailing
        else f"`auto` trails ContextCite-style by more than {-TARGET_GAP} on the whole answer "
        "in no cell."
    )
    words = (
        f"{counted} Those template tokens come from no source; over the "
        f"Bernoulli ½ halves the median share of the reward's variance they carry is "
        f"{medians or 'not measured'}."
    )
    return markdown_table(header, rows), words


def two_draws_table(every: Part) -> tuple[str, str]:
    """Per file, budget and measure: ``auto`` with one Thompson draw a round against two
    (:data:`TWO_DRAWS`), paired on the examples that have both; the cells that move, and a
    sentence counting those whose 95% interval lies below zero, above it, or on it."""
    rows, sides = [], [0, 0, 0]
    for stem, (found, table) in every.items():
        for b in BUDGETS:
            for metric, title in MOVED_TITLES.items():
                kept = _paired(found, table, ("auto", TWO_DRAWS), b, metric, several=False)
                if not kept or all(x == y for x, y in kept):
                    continue
                one, two = np.mean(kept, axis=0)
                diffs = [y - x for x, y in kept]
                mean, half, n = mean_ci(diffs)
                sides[0 if mean + half < 0 else 1 if mean - half > 0 else 2] += 1
                rows.append([stem, b, title, n, f"{one:.3f}", f"{two:.3f}", _cell(diffs)])
    header = [
        "file",
        "budget",
        "measure",
        "examples",
        "one draw a round",
        "two draws",
        "two minus one",
    ]
    words = (
        f"Of the {sum(sides)} cells that move, the 95% interval of two draws minus one lies "
        f"wholly below zero in {sides[0]}, wholly above it in {sides[1]}, and straddles it in "
        f"{sides[2]}; were two draws no different, about {0.05 * sum(sides):.1f} of "
        f"{sum(sides)} intervals would miss zero by chance."
    )
    return (markdown_table(header, rows) if rows else "No cell moves."), words


EVERY_METHOD = ("auto", *ANYTIME)


def every_method_table(every: Part) -> tuple[str, str]:
    """Issue 51's target read for each method in turn: per method, the cells (file,
    budget, LDS sample) where its mean is more than :data:`TARGET_GAP` below the best
    other method's (``auto`` among them), over the examples where all of them have the
    cell; by sample and budget range, remove 2-5 (no target) beside; and a sentence on
    the target samples' totals."""
    misses = {k: {m: [0, 0, 0, 0] for m in SAMPLE_TITLES} for k in EVERY_METHOD}
    for _, table in every.values():
        for b in BUDGETS:
            for metric in SAMPLE_TITLES:
                have = _complete(table, [(k, str(b)) for k in EVERY_METHOD], metric)
                if not have:
                    continue
                means = {k: np.mean([t[(k, str(b))][metric] for t in have]) for k in EVERY_METHOD}
                for k in EVERY_METHOD:
                    other = max(means[o] for o in EVERY_METHOD if o != k)
                    tally = misses[k][metric]
                    tally[2 * (b > 16) + 1] += 1
                    tally[2 * (b > 16)] += int(means[k] - other < TARGET_GAP)
    rows = [
        [LABELS[k], *(f"{c[0]} of {c[1]} / {c[2]} of {c[3]}" for c in misses[k].values())]
        for k in EVERY_METHOD
    ]
    titles = [f"{t}: 8-16 / 32-64 calls" for t in SAMPLE_TITLES.values()]
    totals = {
        k: (sum(misses[k][m][0] + misses[k][m][2] for m, _ in METRICS), LABELS[k])
        for k in EVERY_METHOD
    }
    cells = sum(misses["auto"][m][1] + misses["auto"][m][3] for m, _ in METRICS)
    ranked = sorted(totals.values(), key=lambda pair: pair[0])  # ties: auto, then the peers
    missed = ", ".join(f"{label} {n}" for n, label in ranked)
    words = f"Target cells (Bernoulli ½ and keep 1-4) missed, of {cells}: {missed}."
    return markdown_table(["method", *titles], rows), words


def report_command(args: argparse.Namespace) -> None:
    label = {ADAPTIVE: "adaptive design, flat-intercept posterior (auto before issue 51)"}
    label |= {k: v[0] for k, v in FREE.items()}
    label |= {m: LABELS[m] for m in ANYTIME}
    parts, dev, check = [], {}, {}
    for stem in args.results_list:
        found, table = tables(stem, args.cache)
        if not found:
            continue
        half = DEV_ROWS.get(stem, 0)
        dev[stem] = (found[:half], table[:half])
        check[stem] = (found[half:], table[half:])
        rows = []
        for key in (ADAPTIVE, *FREE, *ANYTIME):
            for b in BUDGETS:
                cells = [t[(key, str(b))] for t in table if (key, str(b)) in t]
                if not cells:
                    continue
                row: list[object] = [label[key], b, len(cells)]
                for metric in (*SAMPLE_TITLES, "drop@3"):
                    values = [c[metric] for c in cells if not math.isnan(c.get(metric, math.nan))]
                    shown = _cell(values)
                    if metric == "drop@3" and values and len(values) < len(cells):
                        shown += f" ({len(values)} priced)"
                    row.append(shown)
                rows.append(row)
        n_mean = np.mean([c.n for c in found])
        parts += [
            f"### {stem}: {len(found)} examples (N = {n_mean:.1f} segments on average)",
            "",
            markdown_table(
                ["variant", "budget", "examples", *SAMPLE_TITLES.values(), "drop@3"], rows
            ),
            "",
        ]
    every = {stem: (dev[stem][0] + check[stem][0], dev[stem][1] + check[stem][1]) for stem in dev}
    defaults = {stem: default_cells(stem, args.cache) for stem in args.results_list}
    parts += [
        LEARNED,
        "",
        "The share of the context the subsets keep (mean over subsets and examples, several "
        "documents; lesson 6):",
        "",
        kept_table(every),
        "",
    ]
    sizes, sized = size_table(every)
    locality, moved = locality_table(every)
    bent_table, bent_moved = locality_table(every, (CONCAVE, CONVEX))
    every_table, every_words = every_method_table(every)
    signals, signal_words = signal_table(every)
    two_table, two_words = two_draws_table(every)
    token_rows, token_words = token_table(every)
    listed = ", ".join(sized) if sized else "none"
    parts += [
        "(7) How much of an LDS the subsets' sizes explain: the equal-scores row gives every "
        "segment one score, so it ranks subsets by size alone and has no order of segments. "
        "Where its keep 1-4 LDS reaches "
        f"{SIZE_READ_FROM} (here: {listed}), the model's reward grows with the size of a small "
        "context, so there part of any method's keep 1-4 LDS comes from the level of its "
        "scores, not from their order; citations read only the order. Mean LDS over the "
        "examples that have all three fits (several documents):",
        "",
        sizes,
        "",
        "(8) Two replays test lessons 6-7 on `auto`'s and the peers' own subsets, with no "
        "new call. 'Empty context': `auto`'s fit with the empty context's reward "
        "(KernelSHAP's anchor) in place of its last call, which tells the fit how much "
        "any context adds. 'Half and half': `auto`'s subsets at half the budget and "
        "ContextCite-style's halves at the other half, one LASSO fit. Counting the cells "
        "(file and budget) where each is above `auto`: "
        f"{_moved(moved)}. Where a replay gains keep 1-4 (small kept contexts), it mostly "
        "loses Bernoulli ½ or remove 2-5: one linear fit over `auto`'s near-full subsets "
        "and small or half contexts trades the samples against each other, so the keep "
        "1-4 cells `auto` misses at 32-64 calls are not won back without a cost elsewhere. "
        "Mean "
        "LDS over the examples that have every fit (several documents; best peer: the "
        "highest of CAMAB, ContextCite-style and KernelSHAP):",
        "",
        locality,
        "",
        "(9) Is the trade in the reward's scale? LDS is a rank correlation within each "
        "sample, so if the reward were a monotone function of a sum of segment scores "
        "(say, it saturates once the answer's evidence is in, which would also explain why "
        "leaving out one of two redundant paragraphs costs nothing), a linear fit on the "
        "right scale would rank near-full, half and small contexts alike. Two more replays "
        "re-read `auto`'s own subsets and fit with its rewards bent, "
        f"{REWARD_GAP} nats past the run's extreme (a middle one of the gaps 0.02-2 first "
        "tried on SmolLM2's two short-answer files, not chosen for any cell): 'saturating "
        "reward' fits -log(top + gap - reward), 'take-off reward' fits log(reward - bottom "
        f"+ gap). Counting the cells where each is above `auto`: {_moved(bent_moved)}. "
        f"So {_trade(bent_moved)}: a bent scale moves the trade between the samples; "
        "what each sample rewards is in the subsets a design draws. Mean LDS over the "
        "examples that have every fit (several documents):",
        "",
        bent_table,
        "",
        "(10) Could a run tell from its example which design will win? The random halves' "
        "lead over `auto` without the unlikely-answer switch (the mean of its Bernoulli ½ "
        "and keep 1-4 LDS gaps; positive: the halves win) per file, beside three signals a "
        f"run could read before it chooses: {'; '.join(f'{k}, {v}' for k, v in SIGNALS.items())}. "
        "Each as its median over the file's examples (several documents) and, in brackets, "
        "its rank correlation with the lead across them:",
        "",
        signals,
        "",
        signal_words,
        "",
        "(11) The batch size: a scorer that runs requests in parallel (a GPU model, an HTTP "
        "server) may take two Thompson draws a round, which it scores in about the time of "
        "one, so the posterior steers the design half as often; a CPU model, as in every "
        "table above, takes one. `auto` with two draws a round at every budget, replayed and "
        "priced as the variants above (`lds-design run`), against one, on the examples "
        "priced so far:",
        "",
        two_table,
        "",
        two_words,
        "",
        two_draws_pooled(dev, check),
        "",
        "(12) Where the gap on 'The answer is X.' sits. That answer is the gold span (the "
        "gold-span file's answer) between 'The answer is' and '.'. The stores kept each "
        "subset's per-token log-probs, so each held-out reward splits into the span's tokens "
        "and the rest, with no new call. `auto` − ContextCite-style LDS on each part's mean "
        "log-prob, with the fits and held-out subsets of the tables above (the examples "
        "whose subsets all kept their tokens):",
        "",
        token_rows,
        "",
        token_words,
        "",
        "### A held-out check on new rows",
        "",
        "HotpotQA rows no results file holds, the gold answer as the answer, sentences, "
        "SmolLM2: `auto` and ContextCite-style through `camab_rag.attribute` at 8, 16, "
        "32 and 64 calls (32 and 64 on the later rows only: column 'rows'), LDS on 32 "
        "Bernoulli ½ subsets "
        "of their own seed, by `nice -n 10 "
        ".venv/bin/python -m benchmarks lds-design heldout --offset M --n K` (the first K "
        "rows from row M that the check does not hold yet; `auto` as it was when each row "
        "was added, so the earlier rows read older versions of it, and a column reads the "
        "rows priced with `auto` as it ships alone); mean ± 95% CI over few rows, no claim "
        "of significance:",
        "",
        heldout_table(),
        "",
        "#### Where a title stands: the check against the LDS files",
        "",
        titles_section(),
        "",
        pooled_checks(),
        "",
        "#### The model's own answers, both placements",
        "",
        titles_section("model"),
        "",
        f"### The library's default budget: {DEFAULT_BUDGET} calls",
        "",
        default_section(defaults),
        "",
    ]
    searched = [s for s in dev if 2 * len(dev[s][0]) >= MIN_RULE_ROWS]  # as at the choice
    scored = search({stem: dev[stem] for stem in searched})
    best_score, best = max(scored, key=lambda pair: pair[0])
    target, target_words = target_table(dev, check, shipped_rule())
    dev_arrays = [_arrays(*dev[stem]) for stem in searched]
    check_arrays = [_arrays(*check[stem]) for stem in searched]

    def both(rule: Rule) -> list[str]:
        """The rule's objective on the dev rows and on the other half."""
        return [f"{np.nanmean([_objective(a, rule) for a in x]):.3f}" for x in arrays]

    arrays, chosen = (dev_arrays, check_arrays), best

    def sweep(name: str) -> list[list[object]]:
        """The objective as one cut moves, the others at the chosen rule."""
        moved: list[dict[str, Any]] = [{name: cut} for cut in CUTS]
        return [
            [cut, *(v for e in ESTIMATORS for v in both(replace(chosen, estimator=e, **m)))]
            for cut, m in zip(CUTS, moved)
        ]

    header = ["c"] + [f"halves {e}, {rows}" for e in ESTIMATORS for rows in ("dev", "other half")]
    parts += [
        "### The rule, chosen on the dev rows",
        "",
        "Mean over files (of at least "
        f"{MIN_RULE_ROWS} examples at the choice: {', '.join(searched)}), budgets and the two LDS "
        "samples (Bernoulli ½, keep 1-4) of the mean over the first half of each file "
        "when the rule was chosen ('dev'; the rest beside it as the other half), for "
        f"``auto`` under each of {len(scored)} rules: "
        "the random halves (flat or LASSO) under ``c * (N + 1)`` calls, one cut over "
        "several documents and one on one document (c = 10: always); over several "
        "documents, one joint fit under a third cut; else the adaptive design, documents "
        "first (c = 0: never). Searched in two stages, the second at the best rule of the "
        "first; each table moves one cut, the others at the chosen rule. Candidates never "
        "chosen (KernelSHAP's design, a cut on the answer's length) were last written at "
        "commit 8824f1f by `python -m benchmarks lds-design report`.",
        "",
        "Random halves over several documents:",
        "",
        markdown_table(header, sweep("halves")),
        "",
        "One fit over both levels (several documents):",
        "",
        markdown_table(header, sweep("joint")),
        "",
        "Random halves on one document's sentences:",
        "",
        markdown_table(header, sweep("one_document")),
        "",
        "One document's sentences from a second cut on (``c * (N + 1)`` calls; inf: "
        "never; checked after the halves), each candidate: the adaptive design read with "
        "LASSO, or the random halves read with LASSO:",
        "",
        markdown_table(
            ["c"] + [f"{FREE[h][0]}, {rows}" for h in HIGH for rows in ("dev", "other half")],
            [
                [c] + [v for h in HIGH for v in both(replace(chosen, above=c, high=h))]
                for c in ABOVE
            ],
        ),
        "",
        f"The search's best: {best} (dev objective {best_score:.3f}, other half "
        f"{both(best)[1]}). "
        f"Chosen: {chosen}; `auto` ships {shipped_rule()}"
        f"{' (the same)' if shipped_rule() == chosen else ' (**not** the chosen rule)'}. "
        "Below: the shipped rule against the best peer at each budget (ContextCite-style, "
        "KernelSHAP or CAMAB, whichever has the higher mean), on the other half of each "
        "file (rows the rule was not chosen on, rows priced since included) and on all "
        "rows (a file priced after the choice on all rows alone):",
        "",
        target,
        "",
        target_words,
        "",
        "The same target read for every method in turn: the cells (file, budget) where a "
        f"method's mean is more than {-TARGET_GAP} below the best other method's, `auto` "
        "among the others, on all rows (examples where all four have the cell; remove 2-5 "
        "has no target and stands beside):",
        "",
        every_table,
        "",
        every_words,
    ]
    rule_dev = {stem: dev[stem] for stem in searched}
    rule_check = {stem: check[stem] for stem in searched}
    sweep_table, lexical_cut = lexical_sweep(rule_dev, rule_check)
    several_table, several_cut, worst_dev, worst_check = several_lexical_sweep(rule_dev, rule_check)
    halves_table, halves_cut = short_halves_sweep(rule_dev, rule_check)
    unlikely_table, unlikely_cut = unlikely_halves_sweep(rule_dev, rule_check)
    outside = {  # the switch acts over several documents only
        stem: every[stem]
        for stem in dev
        if stem not in searched and any(_n_docs(c) > 1 for c in every[stem][0])
    }
    floors, floor_best = floor_table(rule_dev, rule_check, outside)
    moved_floor, moved_words = floor_moves(every, floor_best[3])
    split_rows, split_words = split_table(every)
    shipped_several = (float(SHORT_ANSWER_WORDS), SHORT_LEXICAL_BELOW)
    same_l = (
        " (the same L)" if unlikely_cut[0] == SHIPPED_UNLIKELY[0] else " (**not** the chosen L)"
    )
    same_c = (
        " (the same c)"
        if unlikely_cut[1] == SHIPPED_UNLIKELY[1]
        else ", which this grid does not hold: the floor table below reads it"
    )
    shipped_cut = Auto()._switches.lexical_prior_below
    parts += [
        "",
        "### A prior from zero calls: the answer's lexical scores",
        "",
        "`auto` may read its subsets with each segment's TF-IDF cosine with the answer (no "
        "call) as the free weights of `camab_rag.methods.prior`: `V(S) = b + a * (w_lex . "
        "x_S) + d . x_S`, `a` and the corrections' variance learned from the calls; the "
        "subsets do not change. The cut on one document's sentences (CNN/DailyMail), the "
        "smallest of the best dev objective:",
        "",
        sweep_table,
        "",
        f"Chosen on the dev rows: c = {lexical_cut}; `auto` ships c = {shipped_cut}"
        f"{' (the same)' if lexical_cut == shipped_cut else ' (**not** the chosen cut)'}. "
        "The table above gives `auto` with it beside the rule without it.",
        "",
        "Over several documents (HotpotQA and its short answers), `auto`'s own subsets "
        "re-fitted in one fit with the prior, for answers of at most T words (rows) under "
        "``c * (N + 1)`` calls (columns): dev / other half (the dev cell that loses most "
        "against `auto` without the prior; cells missing the target, dev / other half):",
        "",
        several_table,
        "",
        "Chosen: the best dev objective among the (T, c) that miss the target (within "
        f"{-TARGET_GAP} of the best peer's mean) in no dev cell `auto` without the prior "
        f"meets: T = {several_cut[0]:g}, c = {several_cut[1]}; its worst cell moves "
        f"by {worst_dev} on the dev rows, by {worst_check} on the other half. `auto` ships "
        f"T = {shipped_several[0]:g}, c = {shipped_several[1]}"
        f"{' (the same)' if shipped_several == several_cut else ' (**not** the chosen cut)'}. "
        "The cells it moves (all rows, the three held-out samples; remove 2-5 was not "
        "among the samples the cut was chosen on):",
        "",
        prior_moves_table(every),
        "",
        "### Short answers at 32 and 64 calls: ContextCite's random halves?",
        "",
        'Over several documents, `method="contextcite"`\'s subsets read with LASSO (the '
        "variant 'random halves, LASSO') for answers of at most T words (rows) from "
        "``c * (N + 1)`` calls on (columns; inf: never), else `auto` as shipped: dev / "
        "other half (cells missing the target, dev / other half):",
        "",
        halves_table,
        "",
        "Chosen: the best dev objective among the (T, c) that miss no dev cell `auto` "
        f"meets: T = {halves_cut[0]:g}, c = {halves_cut[1]}; `auto` ships T = "
        f"{SHORT_HALVES[0]:g}, c = {SHORT_HALVES[1]}"
        f"{' (the same)' if halves_cut == SHORT_HALVES else ' (**not** the chosen cut)'}.",
        "",
        "### An answer the model would not give itself: the random halves from "
        f"{UNLIKELY_HALVES_MIN_CALLS} calls",
        "",
        "The answer's length does not tell a given answer from the model's own: Qwen's own "
        "answers are as short as the gold spans, and the halves lose on them. Its "
        "likelihood does. The median mean log-prob a token at the full context, per file "
        f"(several documents): {_likelihoods(every)}. Over several documents, "
        "the random halves read as `auto` reads them (a LASSO whose penalty is chosen by "
        "5-fold cross-validation on the run's own rows; ContextCite's fixed penalty until "
        "session 57) for an answer under -L nats a token at the full "
        "context (rows; inf: never) from ``c * (N + 1)`` calls on (columns: at least one "
        "call a unit, so LASSO reads as many rows as units) and from "
        f"{UNLIKELY_HALVES_MIN_CALLS} calls (of these budgets, {SHIPPED_FLOOR} only; this "
        "grid was fixed when the floor was 64 calls: at fewer, only small contexts reach "
        "N + 1 calls, and a reviewed answer over six sentences cited nothing with the "
        "halves at 8 calls), else `auto` without this switch, "
        "chosen and read as above: dev / other half (cells missing the target, dev / "
        "other half):",
        "",
        unlikely_table,
        "",
        "Chosen: the best dev objective among the (L, c) that miss no dev cell `auto` "
        f"without the switch meets: L = {unlikely_cut[0]:g}, c = {unlikely_cut[1]}; `auto` "
        f"ships L = {SHIPPED_UNLIKELY[0]:g}"
        f"{same_l} and c = {SHIPPED_UNLIKELY[1]}{same_c}. "
        "It scores the full context first (a call its design reuses: the halves take the "
        "rest of the budget), so the rule costs no call.",
        "",
        _floor_origin() + " Read as a cut of its own: the switch at L = "
        f"{SHIPPED_UNLIKELY[0]:g} from each floor (rows) and ``c * (N + 1)`` calls, c under "
        "one included (a floor under 64 reaches HotpotQA's ~40 sentences only so), on the "
        "dev rows, the other half and the files outside the rule's search "
        f"({', '.join(outside) or 'none'}; all their rows), objectives and cells missing "
        "the target in that order:",
        "",
        floors,
        "",
        f"`auto` ships {(UNLIKELY_HALVES_MIN_CALLS, SHIPPED_UNLIKELY[1])}, read here as "
        f"{(SHIPPED_FLOOR, SHIPPED_UNLIKELY[1])}{_floor_verdict(floor_best)}.",
        "",
        *([moved_floor, "", moved_words, ""] if moved_words else []),
        "The cells the switch moves, on all rows "
        "where both fits and the measure are priced (gold AUROC: HotpotQA's supporting "
        "sentences, human labels; remove 2-5, drop@3 and gold AUROC were not among what "
        "the cut was chosen on):",
        "",
        moves_table(every, LIKELY, "auto without the switch", MOVED_TITLES),
        "",
        f"(13) Where `auto` still trails at {SHIPPED_FLOOR} calls: on all rows over several "
        "documents, its examples split by what the switch does with them (it fires; the "
        f"answer is unlikely but {SHIPPED_FLOOR} calls fall short of the switch's "
        f"{SHIPPED_UNLIKELY[1]:g} call a unit, so it does not; the answer is likely: "
        f"{LIKELY_DESIGN}), `auto` beside "
        "ContextCite-style; mean ± 95% CI (paired for the gap):",
        "",
        split_rows,
        "",
        split_words,
    ]
    text = "\n".join(parts)
    print(text)
    if args.write:
        write_section(
            "auto_design",
            "Fewer calls: ablations of auto and the budget rule",
            INTRO + "\n\n" + text,
        )
        write_headline("auto_design", default_headlines(defaults))


INTRO = (
    "Issue 51: with the embedded SmolLM2, `auto` trailed ContextCite-style at 8-16 calls. "
    "Variants of `auto`, replayed without the model on the examples, stores and held-out "
    "samples of 'Quality per model call: LDS and top-k drop', beside `auto` before issue "
    "51 (documents then sentences, each level opening with every unit left out once, then "
    "Thompson draws, one flat-intercept fit per level): 'random halves' (the whole budget "
    "as `method=\"contextcite\"`'s subsets, read flat or with LASSO), 'documents first' "
    "(each document left out once whenever D + 1 calls fit, alone or with one joint fit) "
    "and, on one document, the adaptive design read with LASSO. The rule switches under "
    "`c * (N + 1)` calls, with cuts for one document and for several; it is chosen on the "
    "first half of each file as it was then (file order, never by id) and read on the "
    "rest, rows priced since included. A fit "
    "whose subsets are not all priced is left out ('examples'); new subsets are priced "
    "by `nice -n 10 .venv/bin/python -m benchmarks lds-design run --results RESULTS`."
)

LEARNED = (
    "What we learn ((1)-(3): the one-switch ablations last written at commit 8824f1f by "
    "`python -m benchmarks lds-design report`). (1) Over ~40 sentences in 10 documents, "
    "each document left out once whenever D + 1 calls fit is the largest gain at 16 "
    "calls; one fit over both levels adds to it at 8. (2) CAMAB's posterior mean loses to "
    "the flat intercept at 8-16 calls; one level loses to the hierarchy on HotpotQA. (3) "
    "Random halves lose over several documents; on one document's sentences they win "
    "under a quarter call per sentence, LASSO above it (a flat-intercept fit of as many "
    "weights as rows fits the noise). (4) Handing short answers another design by their "
    "length did not hold on the other half. (5) At 16 calls on 'The answer is X.' "
    "(replays of the stored subsets, no new call), `auto` spends 11 calls leaving each "
    "document out once and 5 on the top document's sentences; most of that answer's "
    "tokens depend on how much context is left more than on any one document, so effects "
    "at the full context rank half-contexts poorly. Re-fitting `auto`'s own subsets in one "
    "fit (flat or LASSO) did not help; ContextCite's random halves after the document "
    "opening helped that shape but lost on the gold spans and the model's own answers. "
    "What holds is the answer's lexical prior (its weight sits on the answer's content "
    "words) for answers of up to T words under c calls per unit (below); it costs Qwen's "
    "short answers some LDS at 16 calls, where `auto` stays far ahead of every peer, and "
    "lowers LDS on remove 2-5, which the cut was not chosen on and where the lexical "
    "ranking is itself weakest. (6) At 32 and 64 calls on SmolLM2's short gold answers, "
    "and at 64 on Qwen's, `auto` trails ContextCite-style on keep 1-4 or Bernoulli ½ (at "
    "32 calls it leads on Qwen's): its document openings and Thompson draws stay near the full "
    "context (the share-kept table below; the peers keep about half), so its scores "
    "predict small kept contexts poorly, where random halves cover them. Handing short "
    "answers the random halves from a cut on (the last table) helps 'The answer is X.' "
    "but loses on Qwen's own short answers and on the first gold spans; the dev rows' "
    "best (T, c) gains too little to tell from noise, so `auto` ships no switch by length. "
    "Length does not tell a given answer from the model's own (Qwen's own answers are as "
    "short as the spans); the answer's likelihood at the full context does, and handing "
    "an unlikely answer the halves from N + 1 calls on holds on the other half (the last "
    "table): `auto` ships that switch. What it moves is in the table under it: it loses "
    "LDS remove 2-5 (the near-full subsets go) and gains the top-3 drop on every short "
    "file; Bernoulli ½ and keep 1-4 rise on SmolLM2's and move little on Qwen's. (7) The "
    "same switch from 40 calls and half a call a unit, fixed before any row was read at "
    "the default budget, passed the three tests written down with it and shipped; two "
    "Qwen rows later it failed test (b) ('The library's default budget'), so it was "
    "withdrawn and `auto` keeps the switch from 64 calls. A test read again each time rows "
    "are added is passed by chance sooner or later: such a test is now read once, at a row "
    "count fixed when the test is written. (8) Read a second time on the same rows once "
    "`auto` read the halves with the cross-validated LASSO (session 57), it passed all "
    "three (a second reading, not a pristine one) and ships (session 58), after the "
    "citations benchmark's rows where it fires were re-priced under it and its held-out "
    "targets held."
)


CHECK_METHODS = ("auto", "contextcite")
CHECK_BUDGETS = (8, 16, 32, 64)
"""The budgets of the check (the first rows have 8 and 16 only)."""
SHIPPED_FROM = 79
"""The first row (0-based, in file order) of the check priced with ``auto`` as it ships:
rows 79+ were added from 2026-12-03 on, after ``camab_rag/methods/auto.py`` last changed
(8901958, 2026-12-01: two draws a round from 16 calls); earlier rows read the ``auto``
of their day (rows 72-78 may too: they were priced around that change). These rows ran
the switch for an unlikely answer as it shipped then (``lds_titles.BEFORE``):
:func:`_ships_alike` keeps a row at a budget only where that switch and the one that
ships now read alike."""


def _ships_alike(n: int, budget: int) -> bool:
    """Whether ``auto``'s switch as it ships and as it shipped when the check's rows were
    priced (``lds_titles.BEFORE``) take the same design over ``n`` sentences in several
    documents at ``budget`` calls, whatever the answer's likelihood."""
    then, now = switched_auto(BEFORE), switched_auto(SHIPPED)
    return then.reads_full_reward(n, budget, 2) == now.reads_full_reward(n, budget, 2)


CV_FROM = 143
"""The first row (0-based) of the check priced after ``auto`` read its random halves with
the cross-validated LASSO (2bc2729); an earlier row that took the halves at a budget read
them with ContextCite's fixed penalty, not as ``auto`` does now."""


def _shipped_gaps(lines: list[dict[str, Any]], budget: int) -> list[float]:
    """:func:`_check_gaps` on the rows priced with ``auto`` as it ships (from
    :data:`SHIPPED_FROM` on, where its switch reads alike, and where it took the halves,
    from :data:`CV_FROM` on)."""
    key = f"auto@{budget}"

    def alike(i: int) -> bool:
        halves = lines[i].get("designs", {}).get(key) == "random_halves"
        n = int(lines[i].get("n", 0))
        return i >= SHIPPED_FROM and _ships_alike(n, budget) and (i >= CV_FROM or not halves)

    return [g for i, g in _check_gaps(lines, budget) if alike(i)]


def heldout_command(args: argparse.Namespace) -> None:
    """New HotpotQA rows, the gold answer as the answer: ``auto`` and ContextCite-style
    through ``camab_rag.attribute`` at :data:`CHECK_BUDGETS` calls, read by LDS on 32 Bernoulli ½
    subsets of their own seed; appended to :data:`HELD_OUT_CHECK` row by row."""
    from benchmarks.stats import bernoulli_subsets, lds, subset_seed
    from camab_rag import attribute
    from camab_rag.prompts import TemplatePromptBuilder
    from camab_rag.rewards import mean_logprob
    from camab_rag.scorers import default_scorer
    from camab_rag.scorers.base import ScoreRequest
    from camab_rag.segments import segment_documents, to_documents

    scorer = default_scorer()
    # every check's rows, not this one's only: a row the titles checks read is not new here
    for example in fresh_answered(args.offset, args.n, checked_ids()):
        started = time.perf_counter()
        docs = placed(example, "text")[0]  # each title in its paragraph's text
        answer = example.answers[0].strip()
        documents = to_documents(docs)
        segments = segment_documents(documents, "sentence")
        builder = TemplatePromptBuilder(example.question, documents, segments)

        fits: dict[str, Any] = {
            f"{method}@{budget}": attribute(
                example.question, docs, answer, scorer, budget=budget, method=method
            )
            for method in CHECK_METHODS
            for budget in CHECK_BUDGETS
        }
        for result in fits.values():
            assert [s.text for s in result.segments] == [s.text for s in segments]
        trained = {m.tobytes() for r in fits.values() for m in r.masks}
        held = [
            m
            for m in bernoulli_subsets(len(segments), 64, subset_seed(example.id, "check"))
            if m.tobytes() not in trained
        ][:32]
        requests = [ScoreRequest(builder.build(m), answer) for m in held]
        rewards = [mean_logprob(scored.logprobs) for scored in scorer.score(requests)]
        line = {
            "id": example.id,
            "n": len(segments),
            "answer": answer,
            "held_out": len(held),
            "lds": {key: lds(r.scores, np.array(held), rewards) for key, r in fits.items()},
            "calls": {key: r.n_queries for key, r in fits.items()},
            "designs": {key: r.method_config.get("design") for key, r in fits.items()},
            "seconds": round(time.perf_counter() - started),
        }
        with open(HELD_OUT_CHECK, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(line) + "\n")
        print(json.dumps(line), flush=True)


def heldout_table() -> str:
    """The stored held-out check: mean LDS per method and budget, and the paired gap, on
    all rows and on the rows from :data:`SHIPPED_FROM` on."""
    if not HELD_OUT_CHECK.exists():
        return "No row stored yet."
    lines = read_jsonl(HELD_OUT_CHECK)
    rows = []
    for budget in CHECK_BUDGETS:
        with_it = [x for x in lines if f"auto@{budget}" in x["lds"]]
        ours = [x["lds"][f"auto@{budget}"] for x in with_it]
        theirs = [x["lds"][f"contextcite@{budget}"] for x in with_it]
        gaps = _check_gaps(lines, budget)
        diffs = [d for _, d in gaps]
        shipped = _shipped_gaps(lines, budget)
        now = f"{len(shipped)}: {_cell(shipped)}" if shipped else "–"
        designs = [x.get("designs", {}).get(f"auto@{budget}") for x in with_it]
        designs = [d for d in designs if d]  # the rows that record it
        halves = f"{designs.count('random_halves')} of {len(designs)}"
        if with_it:
            cells = [_cell(ours), _cell(theirs), _cell(diffs), now, halves]
            rows.append([budget, len(with_it), *cells])
    header = ["budget", "rows", "auto", "ContextCite-style", "auto − ContextCite-style (paired)"]
    header.append(
        f"the same on the rows priced with auto as it ships (rows {SHIPPED_FROM + 1}+, "
        "where its switch for an unlikely answer reads as it did then and, where it took "
        f"the random halves, rows {CV_FROM + 1}+: earlier ones read them with a fixed penalty)"
    )
    header.append("auto took the random halves (rows that record it)")
    return markdown_table(header, rows)


def _check_gaps(lines: list[dict[str, Any]], budget: int) -> list[tuple[int, float]]:
    """Per row of the check that prices ``budget`` calls and reads both LDS: its index in
    file order and ``auto`` − ContextCite-style."""
    key, theirs = f"auto@{budget}", f"contextcite@{budget}"
    gaps = [(i, x["lds"][key] - x["lds"][theirs]) for i, x in enumerate(lines) if key in x["lds"]]
    return [(i, g) for i, g in gaps if not math.isnan(g)]


def pooled_check(budget: int = 32) -> str:
    """The check's gap at ``budget`` calls on every row that prices it the check's way with
    ``auto`` as it ships: its rows from :data:`SHIPPED_FROM` on and the titles rows with
    the title in the text, read against issue 51's line (:data:`TARGET_GAP`)."""
    gaps = _shipped_gaps(read_jsonl(HELD_OUT_CHECK), budget)
    titled = [placement_gap(x, "text") for x in read_jsonl(TITLES_CHECK) if x["budget"] == budget]
    gaps += [g for g in titled if not math.isnan(g)]
    if not gaps:
        return ""
    mean, half, count = mean_ci(gaps)
    what = {
        "below": "wholly below the line: `auto` misses the target there",
        "above": "wholly at or above the line: `auto` meets the target there",
        "on it": "across the line: the rows neither show a miss nor rule one out",
    }[line_side(mean, half, TARGET_GAP)]
    return (
        f"The titles rows with the title in the text are the check's design on new rows (the "
        f"held-out subsets exclude only the {budget}-call fits' subsets, not every budget's). "
        f"Pooled with the check's {budget}-call rows priced with `auto` as it ships, "
        f"`auto` − ContextCite-style at {budget} calls is {mean:+.3f} ± {half:.3f} over "
        f"{count} rows (mean ± 95% CI; the line: {TARGET_GAP}), {what}."
    )


def pooled_checks() -> str:
    """:func:`pooled_check` at each budget of :data:`CHECK_BUDGETS` the titles rows price
    (32 when none does)."""
    priced = {int(x["budget"]) for x in read_jsonl(TITLES_CHECK)}
    budgets = sorted(priced & set(CHECK_BUDGETS)) or [32]
    return "\n\n".join(s for s in (pooled_check(b) for b in budgets) if s)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run_parser = sub.add_parser("run", help="price the variants that ask for new subsets")
    run_parser.add_argument("--results", default=STEMS[0])
    run_parser.add_argument("--offset", type=int, default=0)
    run_parser.add_argument("--n", type=int, default=8)
    run_parser.add_argument("--threads", type=int, default=1)
    check_parser = sub.add_parser("heldout", help="the held-out check on new HotpotQA rows")
    check_parser.add_argument("--offset", type=int, default=0)
    check_parser.add_argument("--n", type=int, default=3)
    titles_parser = sub.add_parser("titles", help="new rows, each title in its text and not")
    titles_parser.add_argument("--offset", type=int, default=0)
    titles_parser.add_argument("--n", type=int, default=3)
    titles_parser.add_argument("--budget", type=int, default=32)
    titles_parser.add_argument("--answer", choices=("gold", "model"), default="gold")
    likely_parser = sub.add_parser("likely", help="new rows: the halves for a likely answer")
    likely_parser.add_argument("--shard", default="0/1", help="i/k: every k-th row from the i-th")
    likely_report = sub.add_parser("likely-report", help="the likely-answer rows' test")
    likely_report.add_argument("--no-write", dest="write", action="store_false")
    floor_parser = sub.add_parser("floor", help="new rows: the unlikely switch from 32 calls")
    floor_parser.add_argument("--shard", default="0/1", help="i/k: every k-th row from the i-th")
    floor_report = sub.add_parser("floor-report", help="the 32-call floor rows' test")
    floor_report.add_argument("--no-write", dest="write", action="store_false")
    report_parser = sub.add_parser("report", help="the tables, replayed from the stores")
    short = [f"{stem}.{shape}" for stem in STEMS for shape in SHAPES if shape != "model"]
    report_parser.add_argument("--results-list", nargs="+", default=[*STEMS, *short])
    report_parser.add_argument("--no-write", dest="write", action="store_false")
    report_parser.add_argument("--cache", type=Path, default=None, help="a folder for the cells")
    args = parser.parse_args()
    logging.getLogger("camab_rag").setLevel(logging.ERROR)
    commands = {"run": run_command, "report": report_command, "heldout": heldout_command}
    commands["titles"] = titles_command
    commands |= {"likely": likely_command, "likely-report": likely_report_command}
    commands |= {"floor": floor_command, "floor-report": floor_report_command}
    commands[args.command](args)


if __name__ == "__main__":
    main()
