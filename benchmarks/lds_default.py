"""Attribution quality at the library's default budget, which the LDS tables do not hold.

``lds report`` reads every method at 8, 16, 32 and 64 calls; a user who sets nothing gets
``AttributionSettings().budget`` calls (40). This replays ``auto`` at that budget, as
``attribute`` runs it, with its switch for an unlikely answer from 64 calls (as it shipped
before) and from 40 (:data:`CANDIDATE`, as it ships), and the anytime peers
from the first 40 rows of their 64-call runs, on the same examples, stores and held-out
samples; ``auto``'s few new subsets are priced by

    nice -n 10 .venv/bin/python -m benchmarks lds run --results RESULTS --shape SHAPE \\
        --phases auto --budgets 40 --no-ablations --threads 1
"""

from __future__ import annotations

import math
import pickle
from pathlib import Path

import numpy as np

from benchmarks._report import ci_cell, markdown_table
from benchmarks.bench_lds import (
    ANYTIME,
    BUDGETS,
    HEADLINE_STEMS,
    LABELS,
    SHAPES,
    SIZE_ONLY,
    Case,
    Cells,
    Fit,
    _groups,
    cases,
    fits_of,
    full_reward,
    measure,
    stem_shape,
    store_of,
)
from benchmarks.data import PricedReward, Unpriced
from benchmarks.lds_titles import BEFORE, CANDIDATES, SHIPPED, candidate_ships, switched_auto
from benchmarks.stats import line_side, mean_ci
from camab_rag import AttributionSettings
from camab_rag.engine import attribute_fn
from camab_rag.lexical import lexical_scores
from camab_rag.methods.auto import UNLIKELY_HALVES_FROM, UNLIKELY_HALVES_MIN_CALLS, Auto

DEFAULT_BUDGET = AttributionSettings().budget
"""The calls a run makes when its caller sets none."""
TARGET_GAP = -0.02
"""Issue 51's line: a cell (file, budget, LDS sample) meets the target when ``auto``'s
mean is at least the best peer's plus this."""
MEASURES = {
    "lds_bernoulli": "LDS, Bernoulli ½",
    "lds_keep": "LDS, keep 1-4",
    "lds_removal": "LDS, remove 2-5",
    "auroc": "gold AUROC",
}
TARGETS = ("lds_bernoulli", "lds_keep")
"""The measures issue 51's target reads (the others stand beside them)."""
CANDIDATE = CANDIDATES[40]
"""A rule fixed before any row was read at this budget (session 47): ``auto``'s switch
for an unlikely answer from 40 calls and 0.5 calls a unit (it shipped from 64 and 1.0; 0.5
is the cut the floor table's dev rows chose), so that a run at the default budget reads an
answer the model would not give itself with the random halves. It ships if, at 40 calls,
(a) its mean over files of the two target samples is at least ``auto``'s, (b) it misses
no (file, target sample) cell that ``auto`` meets, and (c) on new titles rows priced at
40 calls (``lds-design titles --budget 40``) it passes that check's rule. It passed on
29 Qwen rows and shipped (eeb90d9); read again on 31 it failed (b) and was withdrawn. A
test read each time rows are added passes by chance sooner or later, so the next such
rule fixes with its tests the row count at which they are read, once. Read a second time on
the same rows with the halves read by the cross-validated LASSO (session 57), it passed
all three; it shipped (session 58) once the citations benchmark's rows where it fires were
re-priced under it and that benchmark's held-out targets still held (:data:`CITED`)."""
SWITCHED = "auto-switch-40"
"""The key of :data:`CANDIDATE`'s fits."""
UNSWITCHED = "auto-switch-64"
"""The key of the fits with the switch as it shipped before (``lds_titles.BEFORE``)."""


def _default_fits(case: Case, reward: PricedReward) -> dict[tuple[str, str], Fit]:
    """``auto`` at :data:`DEFAULT_BUDGET` as it ships and with each switch (:data:`CANDIDATE`,
    ``BEFORE``), and each anytime peer's prefix of that length; none where ``auto``'s
    subsets are not all priced yet."""
    budgets = (DEFAULT_BUDGET, max(BUDGETS))
    fits = fits_of(case, reward, partial=True, only=ANYTIME, budgets=budgets, ablations=False)
    label = str(DEFAULT_BUDGET)
    if ("auto", label) not in fits:
        return {}
    found = {key: fit for key, fit in fits.items() if key[1] == label}
    response = str(case.record["response"])
    lexical = lexical_scores(case.example.segment_texts, response)
    settings = AttributionSettings(seed=int(case.record["seed"]))
    for key, floor in ((SWITCHED, CANDIDATE), (UNSWITCHED, BEFORE)):
        if floor == SHIPPED:  # the run fits_of made already
            found[(key, label)] = found[("auto", label)]
            continue
        method = switched_auto(floor).with_lexical(lexical, len(response.split()))
        try:
            result = attribute_fn(
                reward,
                case.n,
                budget=DEFAULT_BUDGET,
                method=method,
                groups=_groups(case),
                settings=settings,
            )
        except Unpriced:
            continue
        found[(key, label)] = Fit(result.scores, result.n_queries, result.masks)
    return found


def default_cells(file: str, cache: Path | None = None) -> list[Cells]:
    """The cells of every example of ``file`` (``"<stem>"`` or ``"<stem>.<shape>"``) whose
    default-budget fits replay, the main fits beside them (one held-out sample for all);
    with ``cache``, kept in a pickle there until the store changes."""
    stem, shape = stem_shape(file)
    store = store_of(stem, shape)
    if not store.path.exists():
        return []
    found = [c for c in cases(stem, shape) if full_reward(c, store) is not None]
    path = cache / f"default_budget_{file}.pkl" if cache else None
    stamp = (store.path.stat().st_size, len(found), DEFAULT_BUDGET, repr(Auto()._switches))
    if path is not None and path.exists():
        with open(path, "rb") as handle:
            kept, rows = pickle.load(handle)
        if kept == stamp:
            return list(rows)
    rows = []
    for case in found:
        extra = _default_fits(case, PricedReward(store, case.id))
        if extra:
            rows.append(measure(case, store, extra)[0])
    if path is not None:
        with open(path, "wb") as handle:
            pickle.dump((stamp, rows), handle)
    return rows


def _values(table: list[Cells], key: tuple[str, str], metric: str) -> list[float]:
    return [t[key].get(metric, math.nan) for t in table if key in t]


def _complete(table: list[Cells]) -> tuple[list[Cells], tuple[str, ...]]:
    """The examples with ``auto`` (as it ships, before, :data:`CANDIDATE`) at the default
    budget, and the anytime peers priced there on every one of them (a peer whose longer
    run some example lacks is left out of the file's comparison)."""
    label = str(DEFAULT_BUDGET)
    kept = [t for t in table if all((k, label) in t for k in ("auto", UNSWITCHED, SWITCHED))]
    peers = tuple(m for m in ANYTIME if kept and all((m, label) in t for t in kept))
    return kept, peers


def _gap(ours: list[float], theirs: list[float], metric: str) -> str:
    """The paired gap and, on a target sample, its interval against the line."""
    gap, half, _ = mean_ci([a - b for a, b in zip(ours, theirs)])
    side = line_side(gap, half, TARGET_GAP) if metric in TARGETS else "no target"
    return f"{gap:+.3f} ± {half:.3f} ({side})"


def default_rows(file: str, table: list[Cells]) -> list[list[object]]:
    """One row a measure: ``auto`` with the switch from 64 calls and from 40
    (:data:`CANDIDATE`) and each peer at the default budget, the lexical ranking (no call),
    and each of ours minus the best peer by the mean, paired, against the line on the
    target samples."""
    label = str(DEFAULT_BUDGET)
    table, priced = _complete(table)
    rows: list[list[object]] = []
    for metric, title in MEASURES.items():
        ours, switched = (_values(table, (k, label), metric) for k in (UNSWITCHED, SWITCHED))
        if not ours or all(math.isnan(v) for v in ours) or not priced:
            continue
        peers = {m: _values(table, (m, label), metric) for m in priced}
        best = max(peers, key=lambda m: float(np.nanmean(peers[m])))
        rows.append(
            [
                file,
                len(ours),
                title,
                ci_cell(ours),
                ci_cell(switched),
                *(f"{np.nanmean(peers[m]):.3f}" if m in peers else "–" for m in ANYTIME),
                f"{np.nanmean(_values(table, ('lexical', '0'), metric)):.3f}",
                LABELS[best],
                _gap(ours, peers[best], metric),
                _gap(switched, peers[best], metric),
            ]
        )
    return rows


def _then() -> str:
    """How the switch from ``BEFORE``'s calls stands: shipped now, or before."""
    return "as it ships" if SHIPPED == BEFORE else "as it shipped before"


def free_ahead(tables: dict[str, list[Cells]]) -> str:
    """A sentence on the (file, measure) cells where the lexical ranking (no call) has a
    higher mean than ``auto`` as it ships, on :func:`_complete`'s rows."""
    label, ahead = str(DEFAULT_BUDGET), []
    for file, table in tables.items():
        kept, priced = _complete(table)
        for metric, title in MEASURES.items():
            ours = mean_ci(_values(kept, ("auto", label), metric))[0]
            free = mean_ci(_values(kept, ("lexical", "0"), metric))[0]
            if priced and free > ours:  # a NaN mean (no value) compares false
                ahead.append(f"{file} {title}")
    if not ahead:
        return "The lexical ranking (no call) is ahead of `auto` on no row."
    return (
        "The lexical ranking (no call; question and answer words) is ahead of `auto` on: "
        + "; ".join(ahead)
        + ". Gold AUROC asks whether the scores rank HotpotQA's annotated supporting "
        "sentences first, and those sentences hold the answer's words; LDS asks which "
        "segments the model's reward depends on."
    )


def candidate_tests(tables: dict[str, list[Cells]]) -> tuple[bool, bool, str]:
    """:data:`CANDIDATE`'s tests (a) and (b) on the LDS files, and a sentence on them."""
    label = str(DEFAULT_BUDGET)
    objective: dict[str, list[float]] = {UNSWITCHED: [], SWITCHED: []}
    lost = []
    for file, table in tables.items():
        table, priced = _complete(table)
        if not table or not priced:
            continue
        means: dict[str, list[float]] = {k: [] for k in objective}
        for metric in TARGETS:
            mean = {k: float(np.nanmean(_values(table, (k, label), metric))) for k in priced}
            best = max(mean.values())
            for key in objective:
                value = float(np.nanmean(_values(table, (key, label), metric)))
                means[key].append(value)
                mean[key] = value
            if mean[UNSWITCHED] - best >= TARGET_GAP > mean[SWITCHED] - best:
                lost.append(f"{file} {MEASURES[metric]}")
        for key in objective:
            objective[key].append(float(np.mean(means[key])))
    ours, switched = (float(np.mean(objective[k])) for k in objective)
    raised, kept = switched >= ours, not lost
    words = (
        f"(a) The mean over {len(objective[UNSWITCHED])} files of the two target samples: "
        f"the switch from {BEFORE[0]} calls {ours:.3f}, from {CANDIDATE[0]} calls "
        f"{switched:.3f}: "
        + ("passed" if raised else "failed")
        + f". (b) Target cells the switch from {BEFORE[0]} calls meets and the one from "
        f"{CANDIDATE[0]} misses: "
        + (", ".join(lost) if lost else "none")
        + ": "
        + ("passed" if kept else "failed")
        + "."
    )
    return raised, kept, words


NOT_YET = (
    "at this budget it changes what the citations benchmark measures ('The answer is X.' "
    "attributed with the defaults): it ships once that benchmark's rows where it fires are "
    "re-priced under it and the citation targets still hold"
)
"""Why a candidate that passes its tests does not ship yet (issue 51)."""


CITED = (
    "the citations benchmark measures the defaults, so its rows where the switch fires were "
    "re-priced under it before it shipped, and its held-out targets still hold ('Citation "
    "precision and recall', benchmarks/results/citations/README.md)"
)
"""What shipping the candidate waited on besides its tests (issue 51)."""


def _verdict(passes: bool, shipped: bool) -> str:
    """What ships at the default budget: the candidate (``shipped``), or the switch as it
    ships, and why a candidate that ``passes`` does not ship yet (:data:`NOT_YET`)."""
    if shipped:
        return f"`auto` ships the switch from {CANDIDATE[0]} calls: {CITED}"
    said = (
        f"`auto` ships it from {UNLIKELY_HALVES_MIN_CALLS} calls and "
        f"{UNLIKELY_HALVES_FROM} calls a unit"
    )
    return said + (f" for now: {NOT_YET}" if passes else "")


def default_headlines(tables: dict[str, list[Cells]]) -> list[list[str]]:
    """BENCHMARKS.md's rows: ``auto`` as it ships at the default budget, LDS on Bernoulli ½,
    per file of :data:`~benchmarks.bench_lds.HEADLINE_STEMS` (with its short answers),
    beside the zero-call lexical ranking and equal scores, against the best peer's mean."""
    label, rows = str(DEFAULT_BUDGET), []
    for file, table in tables.items():
        stem, shape = stem_shape(file)
        kept, priced = _complete(table)
        if stem not in HEADLINE_STEMS or not kept or not priced:
            continue
        metric = "lds_bernoulli"
        peers = {m: float(np.nanmean(_values(kept, (m, label), metric))) for m in priced}
        best = max(peers, key=lambda m: peers[m])
        ours = _values(kept, ("auto", label), metric)
        met = "met" if float(np.nanmean(ours)) >= peers[best] + TARGET_GAP else "missed"
        name = stem if shape == "model" else f"{stem}, {SHAPES[shape]}"
        free = (
            f"lexical TF-IDF {ci_cell(_values(kept, ('lexical', '0'), metric))}; equal "
            f"scores (size only) {ci_cell(_values(kept, SIZE_ONLY, metric))}"
        )
        rows.append(
            [
                f"LDS, Bernoulli ½ at {DEFAULT_BUDGET} calls (the default budget), {name}",
                ci_cell(ours),
                free,
                f"within 0.02 of {LABELS[best]} ({peers[best]:.3f}) {met}",
            ]
        )
    return rows


def default_section(tables: dict[str, list[Cells]]) -> str:
    """The default budget's table over the files of ``tables`` (:func:`default_cells` of
    each, ``"<stem>"`` or ``"<stem>.<shape>"``), those with ``auto``'s fits priced there,
    and what the candidate's tests say."""
    rows = [row for f, table in tables.items() for row in default_rows(f, table)]
    calls, cut = CANDIDATE
    header = [
        "file",
        "examples",
        "measure",
        f"auto, switch from {BEFORE[0]} calls ({_then()})",
        f"auto, switch from {calls} calls",
        *(LABELS[m] for m in ANYTIME),
        "lexical TF-IDF (no call)",
        "best peer",
        f"from {BEFORE[0]} − best peer (paired)",
        f"from {calls} − best peer (paired)",
    ]
    table = markdown_table(header, rows) if rows else "No file has auto's fits at this budget."
    raised, kept, words = candidate_tests(tables)
    titles = candidate_ships(calls)
    checked = {
        None: "(c) No titles row is priced at this budget yet: not read.",
        True: "(c) The titles rows at this budget ('Where a title stands' above): passed.",
        False: "(c) The titles rows at this budget ('Where a title stands' above): failed.",
    }[titles]
    ships = raised and kept and bool(titles)
    verdict = _verdict(ships, SHIPPED == CANDIDATE)
    tested = (
        f"The switch for an unlikely answer from {calls} calls and {cut} calls a unit, "
        "fixed before any row was read at this budget, ships only if it passes three tests: "
        f"{words} {checked} So it " + ("passes" if ships else "does not pass") + f"; {verdict}."
    )
    return (
        f"`attribute` makes {DEFAULT_BUDGET} calls unless told otherwise, a budget the "
        "tables above do not hold. `auto` replayed there as `attribute` runs it, with its "
        f"switch for an unlikely answer from {BEFORE[0]} calls ({_then()}) and "
        f"from {calls} (the candidate below), the anytime "
        f"peers from the first {DEFAULT_BUDGET} rows of their {max(BUDGETS)}-call runs, on "
        "the examples, stores and held-out samples of 'Quality per model call' (subsets any "
        "fit of an example trained on left out of its samples); `auto`'s few subsets "
        "not priced by an earlier run were priced by `nice -n 10 .venv/bin/python -m "
        f"benchmarks lds run --results RESULTS --shape SHAPE --phases auto --budgets "
        f"{DEFAULT_BUDGET} --no-ablations --threads 1`. Mean ± 95% CI over examples for "
        "`auto`, means for the peers and the lexical ranking ('–': a peer whose longer run "
        "some example lacks, left out of that file's comparison); each gap is paired, "
        "against the best peer by the mean, and read against issue 51's line "
        f"({TARGET_GAP}) on the two "
        "target samples: 'above' (the interval at or above it), 'below' (wholly under it) "
        "or 'on it':\n\n" + table + "\n\n" + free_ahead(tables) + "\n\n" + tested
    )
