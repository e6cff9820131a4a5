"""The calibrated verdict (issue 48): choose it, fit the default, report it held out.

Replayed from the stored rows. Candidates are fitted and chosen on FRANK CNN/DM ``valid``
and the HaluEval dev half, and reported on FRANK ``test``, the other half and the
hand-written short set (the section states the protocol). The shipped fit is the library's
:data:`~camab_rag.groundedness.verdict.DEFAULT_CALIBRATION` (``default_calibration.json``).
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

import numpy as np

from benchmarks._report import columns, markdown_table
from benchmarks.bench_gate import RESULTS, store_path
from benchmarks.data import read_jsonl
from benchmarks.gate_sets import halueval_dev_questions, load_items
from benchmarks.stats import flag_auroc as auroc
from camab_rag.groundedness.calibration import (
    fit_calibration,
    fit_logistic,
    kind_weights,
    shipped_examples,
)
from camab_rag.groundedness.report import (
    DEFAULT_BLOCK_ON,
    DEFAULT_THRESHOLD,
    GroundednessReport,
    read_by,
    support_report,
)
from camab_rag.groundedness.score import informative_words, words
from camab_rag.groundedness.verdict import (
    DEFAULT_CALIBRATION,
    Calibration,
    clipped,
    model_input,
)
from camab_rag.groundedness.wordforms import ContextWords
from camab_rag.token_support import TokenSupport

MODELS = ("smollm2", "qwen2.5-0.5b")
QWEN = "qwen2.5-0.5b"
PASS_QA = 0.96
PASS_SUMMARY = 0.87
"""Pass rates kept on the choice rows: the targets (0.95, 0.85) with a margin."""
SUPPORTED_QA = 0.90
SUPPORTED_SUMMARY = 0.75
"""Shares of the correct choice answers left ``supported`` (unmarked) by ``flag_at``."""
CALIBRATION_FILE = RESULTS / "default_calibration.json"
SHIPPED_SET = RESULTS.parent.parent.parent / "camab_rag" / "data" / "calibration.jsonl"
FEATURES = ("score", "informative", "coverage", "coverage_stem")
CANDIDATES: dict[str, tuple[str, ...]] = {
    "score": ("score",),
    "informative": ("informative",),
    "score + coverage": ("score", "coverage"),
    "score + coverage_stem": ("score", "coverage_stem"),
    "informative + coverage": ("informative", "coverage"),
    "informative + coverage_stem": ("informative", "coverage_stem"),
    "score_floor + coverage": ("score_floor", "coverage"),
    "informative_floor + coverage": ("informative_floor", "coverage"),
}
"""``*_floor``: the figure as :func:`~camab_rag.groundedness.verdict.model_input` reads
it (no lower than 0 when ``coverage`` is 1)."""
SHIPPED_FORM = "score_floor + coverage"
"""The one form the library computes (:mod:`camab_rag.groundedness.verdict`)."""
S = TypeVar("S", bound="Sliced")


class Sliced:
    """A dataclass of per-row columns (lists, arrays, dicts of arrays)."""

    def where(self: S, mask: np.ndarray) -> S:
        """The rows where ``mask`` holds."""
        index = np.flatnonzero(mask)
        kept = copy.copy(self)
        for name, value in vars(self).items():
            if isinstance(value, dict):
                value = {k: v[index] for k, v in value.items()}
            elif isinstance(value, list):
                value = [value[i] for i in index]
            else:
                value = value[index]
            setattr(kept, name, value)
        return kept


@dataclass
class Table(Sliced):
    """Per-answer figures of one model's stored rows."""

    ids: list[str]
    keys: list[str]
    kind: np.ndarray  # "summary" / "qa"
    part: np.ndarray  # "choice" / "held_out" / "short"
    unsupported: np.ndarray
    all_present: np.ndarray
    figures: dict[str, np.ndarray]
    holds_fact: np.ndarray
    """The answer leaves a fact unchecked: the library's default rule
    (:data:`~camab_rag.groundedness.report.DEFAULT_BLOCK_ON`) keeps an ``unsupported``
    verdict on it (:func:`keeps_block`)."""

    def x(self, names: Sequence[str]) -> np.ndarray:
        return np.column_stack(
            [
                np.array([clipped(v) for v in self.figures[n]])
                if n in ("score", "informative")
                else self.figures[n]
                for n in names
            ]
        )


def _stem(word: str) -> str:
    if word.isdigit() or len(word) <= 4:
        return word
    for suffix in ("ing", "ies", "es", "ed", "ly", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def keeps_block(report: GroundednessReport) -> bool:
    """Whether the library's default rule (``read_by(report)``: ``block_on="facts"``,
    :func:`~camab_rag.groundedness.report.facts_only`) keeps an ``unsupported`` verdict on
    ``report``'s answer: it leaves a fact unchecked (``report.unchecked_facts``). Asked of
    the library itself, so the benchmark never copies its rule."""
    forced = replace(report, verdict="unsupported", grounded=False)
    return read_by(forced, DEFAULT_BLOCK_ON).verdict == "unsupported"


def figures_of(support: TokenSupport, context: str, question: str = "") -> dict[str, float]:
    """One answer's figures: the library's own report (score, informative, coverage) and
    ``coverage_stem``, whole words compared by a crude stem (``costs`` matches ``cost``)."""
    present = ContextWords.of([context], question)  # as the library reads one document
    report = support_report(support, None, context_words=present)
    sentences = [s.text for s in report.sentences if not s.abstention] or [support.response]
    stems = {_stem(w) for w in present}

    def stem_coverage(text: str) -> float:
        needed = informative_words(text)
        return sum(_stem(w) in stems for w in needed) / len(needed) if needed else 1.0

    return {
        "score": report.score,
        "informative": report.informative if report.informative is not None else 0.0,
        "coverage": report.coverage if report.coverage is not None else 1.0,
        "coverage_stem": min(stem_coverage(t) for t in sentences),
        "abstained": float(report.abstained),
        "holds_fact": float(keeps_block(report)),
    }


def load_table(model: str) -> Table | None:
    """FRANK CNN/DM, HaluEval QA and the hand-written benchmark set for ``model``."""
    dev_questions = halueval_dev_questions()
    ids, keys, kind, part, unsupported, present, holds = [], [], [], [], [], [], []
    figures: dict[str, list[float]] = {f: [] for f in FEATURES}
    for set_name in ("frank", "halueval", "written"):
        items = {i.id: i for i in load_items(set_name)}
        rows = {r["id"]: r for r in read_jsonl(store_path(set_name, model)) if r["id"] in items}
        for row in rows.values():
            item = items[row["id"]]
            if item.group not in ("cnndm", "benchmark") and set_name != "halueval":
                continue
            kind.append("summary" if set_name == "frank" else "qa")
            if set_name == "written":
                part.append("short")
            elif item.split == "valid" or item.context_key in dev_questions:
                part.append("choice")
            else:
                part.append("held_out")
            support = TokenSupport.from_dict(row["support"], row["answer"])
            values = figures_of(support, item.context, item.question)
            for name in FEATURES:
                figures[name].append(values[name])
            holds.append(bool(values["holds_fact"]))
            ids.append(item.id)
            keys.append(item.context_key)
            unsupported.append(bool(row["unsupported"]))
            context_words = set(words(item.context))
            present.append(all(w in context_words for w in informative_words(row["answer"])))
    if not ids:
        return None
    for name in ("score", "informative"):
        figures[f"{name}_floor"] = [
            model_input(v, c) for v, c in zip(figures[name], figures["coverage"])
        ]
    return Table(
        ids,
        keys,
        np.array(kind),
        np.array(part),
        np.array(unsupported),
        np.array(present),
        {k: np.array(v, dtype=float) for k, v in figures.items()},
        np.array(holds),
    )


@dataclass(frozen=True)
class Fitted:
    """A candidate fitted on choice rows: weights, bias and its operating point."""

    names: tuple[str, ...]
    weights: tuple[float, ...]
    bias: float
    block_at: float
    flag_at: float

    def p(self, table: Table) -> np.ndarray:
        z = table.x(self.names) @ np.array(self.weights) + self.bias
        return np.asarray(1.0 / (1.0 + np.exp(-np.clip(z, -30, 30))), dtype=float)


def _cut(p: np.ndarray, table: Table, rates: dict[str, float]) -> float:
    """The lowest cut under which each kind keeps its share of correct answers."""
    cuts = []
    for kind, rate in rates.items():
        correct = np.sort(p[(table.kind == kind) & ~table.unsupported])
        if correct.size:
            cuts.append(float(correct[min(math.ceil(rate * correct.size), correct.size) - 1]))
    return float(np.nextafter(max(cuts), 1.0))


def fit_candidate(names: tuple[str, ...], choice: Table) -> Fitted:
    """The logistic fit on the choice rows (each kind weighing alike) and its operating
    point: ``block_at`` keeps :data:`PASS_QA` / :data:`PASS_SUMMARY` of the correct answers
    from ``unsupported``, ``flag_at`` (at most ``block_at``) leaves :data:`SUPPORTED_QA` /
    :data:`SUPPORTED_SUMMARY` ``supported``."""
    x, y = choice.x(names), [bool(v) for v in choice.unsupported]
    if x.shape[1] == 1:  # the library fits two inputs
        (first, _), bias = fit_logistic(
            np.column_stack([x, np.zeros(len(y))]), y, kind_weights(list(choice.kind))
        )
        weights: tuple[float, ...] = (first,)
    else:
        weights, bias = fit_logistic(x, y, kind_weights(list(choice.kind)))
    block_at, flag_at = operating_point(Fitted(names, weights, bias, 0.5, 0.5).p(choice), choice)
    return Fitted(names, weights, bias, block_at, flag_at)


def operating_point(p: np.ndarray, table: Table) -> tuple[float, float]:
    """``block_at`` and ``flag_at`` (at most ``block_at``) for the probabilities ``p``."""
    block_at = _cut(p, table, {"qa": PASS_QA, "summary": PASS_SUMMARY})
    flag_at = _cut(p, table, {"qa": SUPPORTED_QA, "summary": SUPPORTED_SUMMARY})
    return block_at, min(flag_at, block_at)


def flagged(p: np.ndarray, unsupported: np.ndarray, cut: float) -> float:
    return float((p[unsupported] >= cut).mean()) if unsupported.any() else float("nan")


def passed(p: np.ndarray, unsupported: np.ndarray, cut: float) -> float:
    return float((p[~unsupported] < cut).mean()) if (~unsupported).any() else float("nan")


def choose(choice: Table) -> tuple[str, dict[str, Fitted], list[list[str]]]:
    """Every candidate fitted on the choice rows, the chosen one (the highest mean share
    of unsupported answers blocked over the two kinds) and the choice table."""
    fitted = {name: fit_candidate(names, choice) for name, names in CANDIDATES.items()}
    fitted["coverage"] = fit_candidate(("coverage",), choice)  # the free baseline
    rows, criterion = [], {}
    for name, model in fitted.items():
        p = model.p(choice)
        cells, blocked = [f"`{name}`"], []
        for kind in ("summary", "qa"):
            part = choice.kind == kind
            y, q = choice.unsupported[part], p[part]
            blocked.append(flagged(q, y, model.block_at))
            cells.append(
                f"{auroc(-q, y):.3f} / {passed(q, y, model.block_at):.2f} / {blocked[-1]:.2f}"
            )
        criterion[name] = (blocked[0] + blocked[1]) / 2
        rows.append([*cells, f"{criterion[name]:.3f}"])
    return max(CANDIDATES, key=lambda n: criterion[n]), fitted, rows


def as_calibration(model: Fitted, choice: Table) -> Calibration:
    """The chosen fit as the library's :class:`Calibration`, fitted by the library's own
    :func:`~camab_rag.groundedness.calibration.fit_calibration` (the same weights, plus
    its cross-validated figures), rounded to 4 decimals; the cut-offs are placed on the
    rounded model's probabilities (:func:`operating_point`) and rounded up."""
    if model.names != CANDIDATES[SHIPPED_FORM]:
        raise SystemExit(f"the form {model.names} is not the one the library computes")
    fitted = fit_calibration(
        list(choice.figures["score"]),
        list(choice.figures["coverage"]),
        list(choice.unsupported),
        groups=choice.keys,
        kinds=list(choice.kind),
        model="smollm2",
        fitted_on=(
            "FRANK valid CNN/DM summaries + HaluEval QA choice half (benchmarks/gate_verdict.py)"
        ),
        base=Calibration((0.0, 0.0), 0.0, model.block_at, model.flag_at, "smollm2"),
    )
    rounded = replace(
        fitted,
        weights=(round(fitted.weights[0], 4), round(fitted.weights[1], 4)),
        bias=round(fitted.bias, 4),
        balanced_accuracy=round(fitted.balanced_accuracy, 4),
        auroc=round(fitted.auroc, 4),
    )
    # the cut-offs are placed on what the rounded model gives, and rounded up: every
    # fully covered answer with no positive score shares one probability, and a cut
    # rounded on its own could fall under it and block them all
    block_at, flag_at = operating_point(calibration_p(rounded, choice), choice)
    block_at = math.ceil(block_at * 1e4) / 1e4
    return replace(
        rounded, block_at=block_at, flag_at=min(math.ceil(flag_at * 1e4) / 1e4, block_at)
    )


def calibration_p(calibration: Calibration, table: Table) -> np.ndarray:
    figures = zip(table.figures["score"], table.figures["coverage"])
    return np.array([calibration.p_unsupported(s, c) for s, c in figures])


def shipped_replay(model: str) -> Calibration:
    """``calibrate(scorer)`` for ``model`` replayed: the shipped set's rows read from the
    stored rows (the set is built so that every row has one), fitted as the library
    fits."""
    stored: dict[str, dict[str, Any]] = {}
    for set_name in ("frank", "halueval", "written"):
        stored.update({r["id"]: r for r in read_jsonl(store_path(set_name, model))})
    text = SHIPPED_SET.read_text(encoding="utf-8")
    rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    scores, coverages, unsupported, groups, kinds = [], [], [], [], []
    for row, example in zip(rows, shipped_examples()):
        support = TokenSupport.from_dict(stored[row["source_id"]]["support"], example.answer)
        context = example.context if isinstance(example.context, str) else ""
        values = figures_of(support, context, example.question)
        if values["abstained"]:
            continue
        scores.append(values["score"])
        coverages.append(values["coverage"])
        unsupported.append(not example.supported)
        groups.append(context)
        kinds.append(example.kind)
    return fit_calibration(
        scores,
        coverages,
        unsupported,
        groups=groups,
        kinds=kinds,
        model=model,
        fitted_on="the shipped calibration set (replayed)",
        base=DEFAULT_CALIBRATION,
    )


def _f(value: float, digits: int = 2) -> str:
    return "–" if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


def blocked_by(p: np.ndarray, table: Table, block_at: float, facts: bool) -> np.ndarray:
    """Which answers are blocked (``unsupported``): ``p >= block_at``, and with ``facts``
    (the default rule, ``block_on="facts"``) only those that leave a fact unchecked
    (:attr:`Table.holds_fact`); without it, the stricter ``block_on="any"``."""
    return (p >= block_at) & (table.holds_fact if facts else True)


def held_out_row(
    label: str,
    p: np.ndarray,
    table: Table,
    block_at: float,
    flag_at: float,
    *,
    facts: bool = False,
) -> tuple[list[str], dict[str, float]]:
    """One row of the held-out table: FRANK, HaluEval (and its all-words-present subset),
    the short-answer set; and its figures by name. *pass*: not blocked (:func:`blocked_by`,
    ``facts`` the rule); *blocked*; *flagged*: ``p >= flag_at`` (``uncertain`` or
    ``unsupported``: the same under both rules)."""
    out: dict[str, float] = {}
    cells = [label]
    blocked, marked = blocked_by(p, table, block_at, facts), p >= flag_at

    def share(hit: np.ndarray, rows: np.ndarray) -> float:
        return float(hit[rows].mean()) if rows.any() else float("nan")

    for kind, name in (("summary", "frank"), ("qa", "halueval")):
        part = (table.part == "held_out") & (table.kind == kind)
        y, q = table.unsupported[part], p[part]
        out[f"{name}_auroc"] = auroc(-q, y)
        out[f"{name}_pass"] = share(~blocked, part & ~table.unsupported)
        out[f"{name}_blocked"] = share(blocked, part & table.unsupported)
        out[f"{name}_flagged"] = share(marked, part & table.unsupported)
        out[f"{name}_ba"] = (out[f"{name}_pass"] + out[f"{name}_blocked"]) / 2
        cells += [_f(out[f"{name}_auroc"], 3)]
        cells += [_f(out[f"{name}_{k}"]) for k in ("pass", "blocked", "flagged")]
        if kind == "qa":
            subset = part & table.all_present
            out["present_auroc"] = auroc(-p[subset], table.unsupported[subset])
            out["present_n"] = float(subset.sum())
            out["present_bad"] = float((subset & table.unsupported).sum())
            cells.append(_f(out["present_auroc"], 3))
    short = table.part == "short"
    out["short_pass"] = share(~blocked, short & ~table.unsupported)
    out["short_blocked"] = share(blocked, short & table.unsupported)
    return [*cells, _f(out["short_pass"]), _f(out["short_blocked"])], out


def misses(table: Table, p: np.ndarray, calibration: Calibration) -> list[str]:
    """Why the missed targets are missed at the shipped default (``block_on="facts"``),
    read from the rows (never typed by hand)."""
    answers = {i.id: i.answer for i in load_items("written")}
    blocked = blocked_by(p, table, calibration.block_at, facts=True)
    short = (table.part == "short") & ~table.unsupported & blocked
    shown = [
        f'"{answers[table.ids[i]]}" (coverage {table.figures["coverage"][i]:.2f})'
        for i in np.flatnonzero(short)
    ]
    lines = []
    if shown:
        lines.append(
            "Short correct answers blocked at the default (SmolLM2): "
            + "; ".join(shown)
            + ": a reworded answer that brings a word the document lacks loses coverage, "
            "which the verdict weighs heavily."
        )
    frank = (table.part == "held_out") & (table.kind == "summary")
    covered = frank & (table.figures["coverage"] >= 1.0)
    frank_y = table.unsupported[frank]
    faithful_passed = float((~blocked[frank][~frank_y]).mean())
    unfaithful_flagged = float((p[frank][frank_y] >= calibration.flag_at).mean())
    if faithful_passed < 0.85 or unfaithful_flagged < 0.5:
        share = (covered & table.unsupported).sum() / max((frank & table.unsupported).sum(), 1)
        lines.append(
            "FRANK: the summaries are abstractive and lower-cased; "
            f"{covered.sum() / max(frank.sum(), 1):.0%} of the held-out CNN/DM summaries use "
            f"only words of their article (coverage 1), unfaithful ones {share:.0%} of the "
            "time, so there the model's figure alone decides: its ROC AUC on those "
            f"summaries is {auroc(-p[covered], table.unsupported[covered]):.3f}, too weak to "
            "flag half of the unfaithful ones while passing the faithful ones."
        )
    return [*lines, ""]


HEADER = columns(
    "model, verdict|FRANK AUROC|faithful passed|unfaithful blocked|unfaithful flagged|"
    "HaluEval AUROC|right passed|hallucinated blocked|hallucinated flagged|"
    "AUROC, all words in evidence|short set passed|short invented blocked"
)


def qwen_rows(calibration: Calibration, qwen: Table) -> tuple[list[list[str]], dict[str, Any]]:
    """Qwen at SmolLM2's default, calibrated on its own choice rows, and after
    ``calibrate(scorer)`` on the shipped set (replayed)."""
    own = fit_candidate(CANDIDATES[SHIPPED_FORM], qwen.where(qwen.part == "choice"))
    weights = (own.weights[0], own.weights[1])
    own_cal = Calibration(weights, own.bias, calibration.block_at, calibration.flag_at, QWEN)
    replayed = shipped_replay(QWEN)
    rows, out, strict = [], {}, {}
    for key, label, cal in (
        ("default", f"{QWEN}, SmolLM2's default", calibration),
        ("own", f"{QWEN}, calibrated on its choice rows", own_cal),
        ("shipped", f"{QWEN}, `calibrate(scorer)` (shipped set, replayed)", replayed),
    ):
        p = calibration_p(cal, qwen)
        facts = DEFAULT_BLOCK_ON == "facts"
        cells, out[key] = held_out_row(label, p, qwen, cal.block_at, cal.flag_at, facts=facts)
        rows.append(cells)
        strict[key] = held_out_row(label, p, qwen, cal.block_at, cal.flag_at)[1]

    def balanced(figures: dict[str, float]) -> float:
        return (figures["frank_ba"] + figures["halueval_ba"]) / 2

    shipped_ba, own_ba = balanced(out["shipped"]), balanced(out["own"])
    strict_shipped, strict_own = balanced(strict["shipped"]), balanced(strict["own"])
    passes = {k: out[k]["halueval_pass"] for k in ("shipped", "own", "default")}
    if max(passes["shipped"], passes["own"]) < passes["default"]:
        pass_line = (
            "The balanced accuracies agree, but both Qwen fits pass fewer right HaluEval "
            f"answers than SmolLM2's default does on Qwen ({_f(passes['shipped'])} after "
            f"`calibrate(scorer)`, {_f(passes['default'])} with SmolLM2's default): the cut "
            "points stay the default's while the fit moves, and the shipped set holds only "
            f"{sum(e.supported and e.kind == 'qa' for e in shipped_examples())} correct QA "
            "answers to place it."
        )
    else:
        pass_line = (
            "Right HaluEval answers passed: "
            f"{_f(passes['shipped'])} after `calibrate(scorer)`, {_f(passes['own'])} fitted "
            f"on its own rows, {_f(passes['default'])} with SmolLM2's default."
        )
    lines = [
        "Calibration with no labels of one's own (Qwen2.5-Coder-0.5B, replayed; the Qwen "
        f'rows are read with the default rule, `block_on="{DEFAULT_BLOCK_ON}"`): held-out '
        "balanced accuracy of passed and blocked (mean of FRANK and HaluEval) "
        f"{_f(shipped_ba, 3)} after `calibrate(scorer)` on the shipped set, {_f(own_ba, 3)} "
        "when fitted on the benchmark's own choice rows (difference "
        f'{_f(shipped_ba - own_ba, 3)}; under `block_on="any"` {_f(strict_shipped, 3)} '
        f"and {_f(strict_own, 3)}, difference {_f(strict_shipped - strict_own, 3)}); the "
        "`Calibration`'s own cross-validated figure: "
        f"{_f(replayed.balanced_accuracy, 3)}. {pass_line}",
        "",
    ]
    cv_ba = replayed.balanced_accuracy
    return rows, {
        "lines": lines,
        "qwen_shipped_ba": shipped_ba,
        "qwen_own_ba": own_ba,
        "qwen_cv_ba": cv_ba,
    }


def verdict_section(write: bool) -> tuple[list[str], dict[str, Any]]:
    """The section's lines and the headline figures (SmolLM2 at the shipped default);
    with ``write``, the fit goes to ``default_calibration.json``."""
    base = load_table("smollm2")
    if base is None:
        raise SystemExit("no stored rows for smollm2")
    shipped_ids = {json.loads(line)["source_id"] for line in SHIPPED_SET.open(encoding="utf-8")}
    if shipped_ids & {i for i, part in zip(base.ids, base.part) if part != "choice"}:
        raise SystemExit("a row of the shipped calibration set is among the reported rows")
    choice = base.where(base.part == "choice")
    chosen, fitted, choice_rows = choose(choice)
    calibration = as_calibration(fitted[SHIPPED_FORM], choice)
    p = calibration_p(calibration, base)
    cells, smollm2 = held_out_row(
        f'smollm2, shipped default (`block_on="{DEFAULT_BLOCK_ON}"`)',
        p,
        base,
        calibration.block_at,
        calibration.flag_at,
        facts=DEFAULT_BLOCK_ON == "facts",
    )
    strict_cells, strict = held_out_row(
        'smollm2, stricter option (`block_on="any"`)',
        p,
        base,
        calibration.block_at,
        calibration.flag_at,
    )
    rows: list[list[str]] = [cells, strict_cells]
    headline: dict[str, Any] = dict(smollm2)
    headline["any"] = strict
    if chosen != SHIPPED_FORM:
        model = fitted[chosen]
        rows.append(
            held_out_row(
                f"smollm2, `{chosen}`", model.p(base), base, model.block_at, model.flag_at
            )[0]
        )
    free = fitted["coverage"]
    cells, headline["free"] = held_out_row(
        "smollm2, coverage alone (free)", free.p(base), base, free.block_at, free.flag_at
    )
    rows.append(cells)
    score = base.figures["score"]
    cells, previous = held_out_row(
        f"smollm2, current score ≥ {DEFAULT_THRESHOLD}", -score, base, -DEFAULT_THRESHOLD, 1e9
    )
    cells[4] = cells[8] = "–"  # no uncertain band
    rows.append(cells)
    qwen_lines: list[str] = []
    qwen = load_table(QWEN)
    if qwen is not None:
        more, figures = qwen_rows(calibration, qwen)
        rows += more
        qwen_lines = figures.pop("lines")
        headline.update(figures)
    lines = [
        "### The calibrated verdict (issue 48)",
        "",
        "Three verdicts from `P(unsupported)`, a logistic model over a model-based figure "
        "and, or not, how much of the answer's informative words (content words, names, "
        "numbers) the context holds, anywhere and in the one clause about the answer's "
        "subject (`camab_rag/groundedness/verdict.py`). Protocol "
        "(`benchmarks/gate_verdict.py`): candidates fitted on the choice rows "
        f"(FRANK CNN/DM `valid`, {int((choice.kind == 'summary').sum())} summaries; "
        "HaluEval QA, a seeded half of the questions by row position, "
        f"{int((choice.kind == 'qa').sum())} answers; each kind weighs alike); operating "
        "point `block_at` = the lowest P(unsupported) that keeps "
        f"{PASS_QA:.0%} of the right HaluEval answers and {PASS_SUMMARY:.0%} of the "
        "faithful FRANK summaries of the choice rows from `unsupported` (the targets with a "
        f"margin), `flag_at` the same for {SUPPORTED_QA:.0%} and {SUPPORTED_SUMMARY:.0%} "
        "left `supported` (from it: `uncertain`); the choice: the highest mean flagged "
        "share of the two kinds at `block_at` (coverage alone, a free signal, is the "
        "baseline, not a candidate). Candidates: `score` (the library's score), "
        "`informative` (its explained share over the tokens of content words, names and "
        "numbers only), `*_floor` (either, read as 0 below 0 when coverage is 1), "
        "`coverage` (the library's share of informative words the context holds, compared "
        "by form) and `coverage_stem` (whole words compared by a crude stem). Answer length "
        "is never an input. Not pristine: see the disclosures below the section.",
        "",
        "Choice rows, SmolLM2 (ROC AUC / correct passed / unsupported blocked, at the "
        "candidate's own operating point):",
        "",
        markdown_table(
            ["candidate", "FRANK valid", "HaluEval choice half", "mean blocked"], choice_rows
        ),
        "",
        f"Chosen: `{chosen}`. The library ships `{SHIPPED_FORM}`"
        + ("." if chosen == SHIPPED_FORM else f" (the form it computes; `{chosen}` beside it).")
        + f" Default: weights {calibration.weights[0]:+.3f} (the score, clipped to "
        "[-1, 1], no lower than 0 at coverage 1) "
        f"and {calibration.weights[1]:+.3f} (coverage), bias {calibration.bias:+.3f}; "
        f"`block_at` {calibration.block_at:.3f}, `flag_at` {calibration.flag_at:.3f} "
        "(an answer whose coverage is just under 1 is blocked below score "
        f"{calibration.threshold:.3f}).",
        "",
        f'**The default rule, `block_on="{DEFAULT_BLOCK_ON}"` (issue 48).** The shipped '
        "default reads this verdict with one rule in every door that hands it to a user "
        "(`GroundednessFilter`, `assess_answer`, `assess_groundedness`, `cite()`, "
        "`camab attribute` / `camab audit`; `camab_rag.groundedness.report.DEFAULT_BLOCK_ON`):"
        " an answer at or above `block_at` is `unsupported` (blocked) only when it also "
        "leaves a number, date, negation or name unchecked, states a value the sources "
        "state otherwise, or holds a sentence the context has nothing of "
        "(`report.unchecked_facts`, read here from the stored token log-probs by the "
        "library's own `facts_only`); else it is `uncertain` (shown, flagged). Why: the "
        "issue's first priority is that correct answers are not blocked, and under the "
        'stricter rule (`block_on="any"`, the default before, kept as an option) most '
        "correct paraphrased and mixed answers of the blind set below were blocked. The "
        "cost: fewer hallucinations blocked (HaluEval held-out "
        f"{_f(headline['halueval_blocked'])} against {_f(strict['halueval_blocked'])}, "
        f"FRANK {_f(headline['frank_blocked'])} against {_f(strict['frank_blocked'])}); the "
        "share flagged (`uncertain` or `unsupported`) is the same under both rules "
        f"(HaluEval {_f(headline['halueval_flagged'])}, FRANK "
        f"{_f(headline['frank_flagged'])}). Not pristine: the rule was chosen as the default "
        "after the held-out figures of both rules (this table and the blind set's) had "
        "been published; no weight or cut point moved, only which `unsupported` answers "
        "the default blocks.",
        "",
        "Held-out rows (FRANK CNN/DM `test`; the other HaluEval half; the hand-written "
        "short-answer set of `benchmarks/results/gate_written_cases.json`, one-document "
        "contexts, "
        f"{int((base.part == 'short').sum()) // 2} correct answers and their invented-"
        'detail counterparts). *Passed*: not blocked under the row\'s rule (`mode="block"` '
        "shows it); *blocked*: `unsupported` under the row's rule (the default: "
        'P(unsupported) ≥ `block_at` and a fact unchecked; `block_on="any"`: '
        "P(unsupported) ≥ `block_at`); *flagged*: `uncertain` or `unsupported` "
        '(P(unsupported) ≥ `flag_at`; `mode="flag"` marks it; the same under both '
        "rules). *AUROC, all words in evidence*: HaluEval held-out "
        "answers whose informative words all occur in the evidence "
        f"({int(headline['present_n'])} answers, {int(headline['present_bad'])} "
        "hallucinated), where neither length nor word overlap can tell them apart. "
        "The calibration set's rows are choice rows: none is in this table.",
        "",
        markdown_table(HEADER, rows),
        "",
        *misses(base, p, calibration),
        *qwen_lines,
    ]
    if write:
        held_out = {
            k: round(float(v), 4)
            for k, v in headline.items()
            if isinstance(v, float) and math.isfinite(v)
        }
        strict_figures = {
            k: round(float(v), 4) for k, v in strict.items() if math.isfinite(float(v))
        }
        provenance = {
            **calibration.to_dict(),
            "block_on": DEFAULT_BLOCK_ON,
            "held_out_smollm2": held_out,
            "held_out_smollm2_block_on_any": strict_figures,
        }
        CALIBRATION_FILE.write_text(json.dumps(provenance, indent=2) + "\n", encoding="utf-8")
    return lines, {**headline, "previous": previous, "calibration": calibration}


_TARGETS: list[tuple[str, str, str, Callable[[float], bool]]] = [
    ("HaluEval right answers passed", "≥ 0.95", "halueval_pass", lambda v: v >= 0.95),
    ("HaluEval hallucinated flagged", "≥ 0.70", "halueval_flagged", lambda v: v >= 0.70),
    ("FRANK CNN/DM faithful passed", "≥ 0.85", "frank_pass", lambda v: v >= 0.85),
    ("FRANK CNN/DM unfaithful flagged", "≥ 0.50", "frank_flagged", lambda v: v >= 0.50),
    (
        "short / reworded correct answers passed (old set; shaped the word rules)",
        "≥ 0.95",
        "short_pass",
        lambda v: v >= 0.95,
    ),
]
"""The held-out verdict targets: name, goal, the held-out row's key, and the test. The
issue words the hallucinated and unfaithful targets as *flagged* (``uncertain`` or
``unsupported``, what ``mode="flag"`` marks); the share *blocked* is reported beside them
(:data:`BLOCKED_BESIDE`) with no target."""
BLOCKED_BESIDE = {"halueval_flagged": "halueval_blocked", "frank_flagged": "frank_blocked"}
TARGET_HEADER = ["target", "goal", "measured", "", 'blocked (no target): default / `"any"`']


def verdict_targets(headline: dict[str, Any]) -> list[list[str]]:
    """The issue-48 targets this section measures (SmolLM2, shipped default), each with
    the share blocked beside a flagged target (the default rule, then
    ``block_on="any"``)."""

    def row(name: str, goal: str, value: float, ok: bool, digits: int = 2) -> list[str]:
        return [name, goal, _f(value, digits), "met" if math.isfinite(value) and ok else "missed"]

    def beside(key: str) -> str:
        blocked = BLOCKED_BESIDE.get(key)
        if blocked is None:
            return ""
        strict = headline.get("any", {}).get(blocked, math.nan)
        return f"{_f(headline[blocked])} / {_f(strict)}"

    diff = headline.get("qwen_shipped_ba", math.nan) - headline.get("qwen_own_ba", math.nan)
    rows = [
        [*row(name, goal, headline[key], ok(headline[key])), beside(key)]
        for name, goal, key, ok in _TARGETS
    ]
    name = "Qwen: calibrate(scorer) − own labels, balanced accuracy"
    return [*rows, [*row(name, "≥ −0.03", diff, diff >= -0.03, 3), ""]]


def free_figure(headline: dict[str, Any], target: str) -> str:
    """The free baseline (coverage alone, no model call, fitted like the shipped verdict)
    on the held-out rows of one of :func:`verdict_targets`' targets."""
    key = next((key for name, _, key, _ in _TARGETS if name == target), None)
    if key is None or key not in headline.get("free", {}):
        return "not run"
    return f"coverage alone (0 calls) {_f(headline['free'][key], 2)}"


def verdict_readme(headline: dict[str, Any]) -> str:
    """The README's sentence on what the default verdict passes, flags and blocks, and
    what the stricter ``block_on="any"`` blocks."""
    calibration: Calibration = headline["calibration"]
    strict = headline["any"]
    return (
        "The default verdict (`block_at` "
        f"**{calibration.block_at:.3f}**, `flag_at` {calibration.flag_at:.3f}, "
        f'`block_on="{DEFAULT_BLOCK_ON}"`) was fitted with the embedded SmolLM2 on FRANK\'s '
        "CNN/DM `valid` summaries and half of the HaluEval QA questions. On held-out rows "
        f"it passes {headline['halueval_pass']:.0%} of HaluEval's right answers and flags "
        f"{headline['halueval_flagged']:.0%} of the hallucinated ones (blocks "
        f"{headline['halueval_blocked']:.0%}); it passes {headline['frank_pass']:.0%} of "
        "FRANK's faithful CNN/DM summaries and flags "
        f"{headline['frank_flagged']:.0%} of those with a factual error (blocks "
        f"{headline['frank_blocked']:.0%}; ROC AUC {headline['frank_auroc']:.2f}); it "
        f"passes {headline['short_pass']:.0%} of a hand-written set of short and reworded "
        f"correct answers and blocks {headline['short_blocked']:.0%} of their "
        'invented-detail counterparts. The stricter `block_on="any"` blocks '
        f"{strict['halueval_blocked']:.0%} of the hallucinated HaluEval answers and "
        f"{strict['frank_blocked']:.0%} of the unfaithful summaries, passing "
        f"{strict['halueval_pass']:.0%} and {strict['frank_pass']:.0%} of the right ones."
    )
