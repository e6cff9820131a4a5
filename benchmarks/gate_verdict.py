"""The calibrated verdict (issue 48), replayed from the stored rows: fitted on FRANK CNN/DM
``valid`` and the HaluEval dev half (the *choice* rows), the library's ``DEFAULT_CALIBRATION``
(``default_calibration.json``), and reported on FRANK ``test``, the other half and the
hand-written short set."""

from __future__ import annotations

import copy
import json
import math
from dataclasses import dataclass, replace
from typing import Any, TypeVar

import numpy as np

from benchmarks._report import columns, fmt, markdown_table
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
    GroundednessReport,
    read_by,
    support_report,
)
from camab_rag.groundedness.score import informative_words, words
from camab_rag.groundedness.verdict import DEFAULT_CALIBRATION, Calibration, model_input
from camab_rag.groundedness.wordforms import ContextWords
from camab_rag.token_support import TokenSupport

QWEN = "qwen2.5-0.5b"
PASS_QA, PASS_SUMMARY = 0.96, 0.87  # kept passed on the choice rows: the targets + a margin
SUPPORTED_QA, SUPPORTED_SUMMARY = 0.90, 0.75  # correct choice answers left ``supported``
CALIBRATION_FILE = RESULTS / "default_calibration.json"
FITTED_ON = "FRANK valid CNN/DM summaries + HaluEval QA choice half (benchmarks/gate_verdict.py)"
SHIPPED_SET = RESULTS.parent.parent.parent / "camab_rag" / "data" / "calibration.jsonl"
SHIPPED_FORM = ("score_floor", "coverage")
"""The inputs the library's verdict reads (:func:`~camab_rag.groundedness.verdict.model_input`
of the score, and coverage); ``("coverage",)`` alone is the free baseline."""
FACTS = DEFAULT_BLOCK_ON == "facts"  # the default blocks only answers with a fact unchecked
S = TypeVar("S", bound="Sliced")


class Sliced:
    """A dataclass of per-row columns (lists, arrays)."""

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
    figures: dict[str, np.ndarray]  # "score", "coverage", "score_floor"
    holds_fact: np.ndarray  # the default rule keeps a block on it (:func:`keeps_block`)

    def x(self, names: tuple[str, ...]) -> np.ndarray:
        return np.column_stack([self.figures[n] for n in names])


def keeps_block(report: GroundednessReport) -> bool:
    """Whether the library's default rule (``read_by``, asked so the benchmark never copies
    it) keeps an ``unsupported`` verdict on ``report``'s answer (a fact left unchecked)."""
    forced = replace(report, verdict="unsupported", grounded=False)
    return read_by(forced, DEFAULT_BLOCK_ON).verdict == "unsupported"


def figures_of(support: TokenSupport, context: str, question: str = "") -> dict[str, float]:
    """One answer's figures from the library's own report: score, coverage, whether it
    abstained and whether the default rule keeps a block on it."""
    present = ContextWords.of([context], question)  # as the library reads one document
    report = support_report(support, None, context_words=present)
    return {
        "score": report.score,
        "coverage": report.coverage if report.coverage is not None else 1.0,
        "abstained": float(report.abstained),
        "holds_fact": float(keeps_block(report)),
    }


def _part(set_name: str, split: str, key: str, dev_questions: set[str]) -> str:
    if set_name == "written":
        return "short"
    return "choice" if split == "valid" or key in dev_questions else "held_out"


def load_table(model: str) -> Table | None:
    """FRANK CNN/DM, HaluEval QA and the hand-written benchmark set for ``model``."""
    dev_questions = halueval_dev_questions()
    ids, keys, kind, part, unsupported, present, holds = [], [], [], [], [], [], []
    figures: dict[str, list[float]] = {"score": [], "coverage": []}
    for set_name in ("frank", "halueval", "written"):
        items = {i.id: i for i in load_items(set_name)}
        rows = {r["id"]: r for r in read_jsonl(store_path(set_name, model)) if r["id"] in items}
        for row in rows.values():
            item = items[row["id"]]
            if item.group not in ("cnndm", "benchmark") and set_name != "halueval":
                continue
            kind.append("summary" if set_name == "frank" else "qa")
            part.append(_part(set_name, item.split, item.context_key, dev_questions))
            support = TokenSupport.from_dict(row["support"], row["answer"])
            values = figures_of(support, item.context, item.question)
            for name, column in figures.items():
                column.append(values[name])
            holds.append(bool(values["holds_fact"]))
            ids.append(item.id)
            keys.append(item.context_key)
            unsupported.append(bool(row["unsupported"]))
            context_words = set(words(item.context))
            present.append(all(w in context_words for w in informative_words(row["answer"])))
    if not ids:
        return None
    figures["score_floor"] = [model_input(v, c) for v, c in zip(*figures.values())]
    arrays = {k: np.array(v, dtype=float) for k, v in figures.items()}
    cols = [np.array(c) for c in (kind, part, unsupported, present)]
    return Table(ids, keys, cols[0], cols[1], cols[2], cols[3], arrays, np.array(holds))


@dataclass(frozen=True)
class Fitted:
    """A logistic model fitted on choice rows: weights, bias and its operating point."""

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


def operating_point(p: np.ndarray, table: Table) -> tuple[float, float]:
    """``block_at`` keeps ``PASS_*`` of the correct answers from ``unsupported``; ``flag_at``
    (at most ``block_at``) leaves ``SUPPORTED_*`` of them ``supported``."""
    block_at = _cut(p, table, {"qa": PASS_QA, "summary": PASS_SUMMARY})
    flag_at = _cut(p, table, {"qa": SUPPORTED_QA, "summary": SUPPORTED_SUMMARY})
    return block_at, min(flag_at, block_at)


def fit_candidate(names: tuple[str, ...], choice: Table) -> Fitted:
    """The logistic fit of ``names`` on the choice rows (kinds weigh alike), at its
    :func:`operating_point`."""
    x, y = choice.x(names), [bool(v) for v in choice.unsupported]
    if x.shape[1] == 1:  # the library fits two inputs
        x = np.column_stack([x, np.zeros(len(y))])
    weights, bias = fit_logistic(x, y, kind_weights(list(choice.kind)))
    fitted = Fitted(names, tuple(weights[: len(names)]), bias, 0.5, 0.5)
    block_at, flag_at = operating_point(fitted.p(choice), choice)
    return replace(fitted, block_at=block_at, flag_at=flag_at)


def as_calibration(choice: Table) -> Calibration:
    """The shipped form fitted by the library's ``fit_calibration`` (with its cross-validated
    figures), rounded to 4 decimals; the cut-offs placed on the rounded model, rounded up."""
    model = fit_candidate(SHIPPED_FORM, choice)
    fitted = fit_calibration(
        list(choice.figures["score"]),
        list(choice.figures["coverage"]),
        list(choice.unsupported),
        groups=choice.keys,
        kinds=list(choice.kind),
        model="smollm2",
        fitted_on=FITTED_ON,
        base=Calibration((0.0, 0.0), 0.0, model.block_at, model.flag_at, "smollm2"),
    )
    rounded = replace(
        fitted,
        weights=(round(fitted.weights[0], 4), round(fitted.weights[1], 4)),
        bias=round(fitted.bias, 4),
        balanced_accuracy=round(fitted.balanced_accuracy, 4),
        auroc=round(fitted.auroc, 4),
    )
    # rounded up: every fully covered answer with no positive score shares one
    # probability, and a cut rounded on its own could fall under it and block them all
    block_at, flag_at = operating_point(calibration_p(rounded, choice), choice)
    block_at = math.ceil(block_at * 1e4) / 1e4
    flag_at = min(math.ceil(flag_at * 1e4) / 1e4, block_at)
    return replace(rounded, block_at=block_at, flag_at=flag_at)


def calibration_p(calibration: Calibration, table: Table) -> np.ndarray:
    figures = zip(table.figures["score"], table.figures["coverage"])
    return np.array([calibration.p_unsupported(s, c) for s, c in figures])


def shipped_replay(model: str) -> Calibration:
    """``calibrate(scorer)`` for ``model`` replayed from the stored rows of the shipped set
    (built so that every row has one), fitted as the library fits."""
    stored: dict[str, dict[str, Any]] = {}
    for set_name in ("frank", "halueval", "written"):
        stored.update({r["id"]: r for r in read_jsonl(store_path(set_name, model))})
    text = SHIPPED_SET.read_text(encoding="utf-8")
    rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    kept = []
    for row, example in zip(rows, shipped_examples()):
        support = TokenSupport.from_dict(stored[row["source_id"]]["support"], example.answer)
        context = example.context if isinstance(example.context, str) else ""
        values = figures_of(support, context, example.question)
        if not values["abstained"]:
            facts = (values["score"], values["coverage"], not example.supported)
            kept.append((*facts, context, example.kind))
    scores, coverages, unsupported, groups, kinds = map(list, zip(*kept))
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


def held_out_row(
    label: str, p: np.ndarray, table: Table, block_at: float, flag_at: float, facts: bool
) -> tuple[list[str], dict[str, float]]:
    """One held-out table row (FRANK, HaluEval, its all-words-present subset, the short set)
    and its figures. Blocked: ``p >= block_at`` (``facts``: and a fact unchecked); flagged:
    ``p >= flag_at``."""
    out: dict[str, float] = {}
    cells = [label]
    blocked, marked = (p >= block_at) & (table.holds_fact if facts else True), p >= flag_at

    def share(hit: np.ndarray, rows: np.ndarray) -> float:
        return float(hit[rows].mean()) if rows.any() else float("nan")

    for kind, name in (("summary", "frank"), ("qa", "halueval")):
        part = (table.part == "held_out") & (table.kind == kind)
        out[f"{name}_auroc"] = auroc(-p[part], table.unsupported[part])
        out[f"{name}_pass"] = share(~blocked, part & ~table.unsupported)
        out[f"{name}_blocked"] = share(blocked, part & table.unsupported)
        out[f"{name}_flagged"] = share(marked, part & table.unsupported)
        out[f"{name}_ba"] = (out[f"{name}_pass"] + out[f"{name}_blocked"]) / 2
        cells += [fmt(out[f"{name}_auroc"])]
        cells += [fmt(out[f"{name}_{k}"], 2) for k in ("pass", "blocked", "flagged")]
        if kind == "qa":
            subset = part & table.all_present
            out["present_auroc"] = auroc(-p[subset], table.unsupported[subset])
            out["present_n"] = float(subset.sum())
            out["present_bad"] = float((subset & table.unsupported).sum())
            cells.append(fmt(out["present_auroc"]))
    short = table.part == "short"
    out["short_pass"] = share(~blocked, short & ~table.unsupported)
    out["short_blocked"] = share(blocked, short & table.unsupported)
    return [*cells, fmt(out["short_pass"], 2), fmt(out["short_blocked"], 2)], out


HEADER = columns(
    "model, verdict|FRANK AUROC|faithful passed|unfaithful blocked|unfaithful flagged|"
    "HaluEval AUROC|right passed|hallucinated blocked|hallucinated flagged|"
    "AUROC, all words in evidence|short set passed|short invented blocked"
)


def qwen_figures(calibration: Calibration, qwen: Table) -> dict[str, float]:
    """Qwen's held-out balanced accuracy (FRANK and HaluEval, the default rule) after
    ``calibrate(scorer)`` (replayed) and fitted on its own choice rows at SmolLM2's cuts."""
    own = fit_candidate(SHIPPED_FORM, qwen.where(qwen.part == "choice"))
    weights = (own.weights[0], own.weights[1])
    own_cal = Calibration(weights, own.bias, calibration.block_at, calibration.flag_at, QWEN)
    replayed = shipped_replay(QWEN)
    out = {}
    for key, cal in (("qwen_shipped_ba", replayed), ("qwen_own_ba", own_cal)):
        p = calibration_p(cal, qwen)
        _, row = held_out_row("", p, qwen, cal.block_at, cal.flag_at, FACTS)
        out[key] = (row["frank_ba"] + row["halueval_ba"]) / 2
    return {**out, "qwen_cv_ba": replayed.balanced_accuracy}


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
    calibration = as_calibration(choice)
    p = calibration_p(calibration, base)
    free = fit_candidate(("coverage",), choice)
    verdicts = (  # (label, P(unsupported), cut points, the default rule)
        (f'smollm2, shipped default (`block_on="{DEFAULT_BLOCK_ON}"`)', p, calibration, FACTS),
        ('smollm2, stricter option (`block_on="any"`)', p, calibration, False),
        ("smollm2, coverage alone (free)", free.p(base), free, False),
    )
    rows, figures = zip(
        *(held_out_row(lb, q, base, m.block_at, m.flag_at, f) for lb, q, m, f in verdicts)
    )
    headline: dict[str, Any] = {**figures[0], "any": figures[1], "free": figures[2]}
    strict = figures[1]
    qwen = load_table(QWEN)
    if qwen is not None:
        headline.update(qwen_figures(calibration, qwen))
    lines = [
        "### The calibrated verdict (issue 48)",
        "",
        "Three verdicts from `P(unsupported)`, a logistic model over the library's score "
        "and how much of the answer's informative words (content words, names, numbers) "
        "the context holds (`camab_rag/groundedness/verdict.py`). Fitted on the choice "
        f"rows (FRANK CNN/DM `valid`, {int((choice.kind == 'summary').sum())} summaries; "
        "HaluEval QA, a seeded half of the questions by row position, "
        f"{int((choice.kind == 'qa').sum())} answers; each kind weighs alike); operating "
        "point `block_at` = the lowest P(unsupported) that keeps "
        f"{PASS_QA:.0%} of the right HaluEval answers and {PASS_SUMMARY:.0%} of the "
        "faithful FRANK summaries of the choice rows from `unsupported` (the targets with a "
        f"margin), `flag_at` the same for {SUPPORTED_QA:.0%} and {SUPPORTED_SUMMARY:.0%} "
        "left `supported` (from it: `uncertain`). Coverage alone, a free signal fitted the "
        "same way, is the baseline. Answer length is never an input. Not pristine: see the "
        "disclosures below the section. The comparison of candidate forms on the choice "
        "rows and the Qwen rows were last written at commit acfeaa6 (git history keeps "
        "them).",
        "",
        "The library ships `score_floor + coverage`. Default: weights "
        f"{calibration.weights[0]:+.3f} (the score, clipped to [-1, 1], no lower than 0 at "
        f"coverage 1) and {calibration.weights[1]:+.3f} (coverage), bias "
        f"{calibration.bias:+.3f}; `block_at` {calibration.block_at:.3f}, `flag_at` "
        f"{calibration.flag_at:.3f} (an answer whose coverage is just under 1 is blocked "
        f"below score {calibration.threshold:.3f}).",
        "",
        f'**The default rule, `block_on="{DEFAULT_BLOCK_ON}"` (issue 48),** in every door '
        "that hands the verdict to a user (`camab_rag.groundedness.report.DEFAULT_BLOCK_ON`):"
        " an answer at or above `block_at` is `unsupported` (blocked) only when it also "
        "states a number, date or name the context never states in any form, or holds a "
        "sentence the context has nothing of (`report.unchecked_facts` less "
        "`report.misread`, read here by the library's own `read_by`); else, and when it "
        "only states a value, negation or opposite the context states otherwise (another "
        'subject\'s number, "open" for "closed": `report.misread`, not blocked: the word '
        "rules misread some right answers too), it is `uncertain` "
        "(shown, flagged). Why: correct answers must not be blocked, and "
        'under the stricter `block_on="any"` (the default before, kept as an option) most '
        "correct paraphrased and mixed answers of the blind set below were. The cost: "
        "fewer hallucinations blocked (HaluEval held-out "
        + " against ".join(fmt(h["halueval_blocked"], 2) for h in (headline, strict))
        + ", FRANK "
        + " against ".join(fmt(h["frank_blocked"], 2) for h in (headline, strict))
        + "); the share flagged is the same under both rules (HaluEval "
        f"{fmt(headline['halueval_flagged'], 2)}, FRANK {fmt(headline['frank_flagged'], 2)})."
        " Not pristine: the rule was made the default after the held-out figures of both "
        "rules had been published; no weight or cut point moved. Misread values stopped "
        "blocking after the blind sets' held-out figures had been published, and after "
        "the kinds of fact behind their blocked answers (counts, no text) had been looked "
        "at. Three variants were replayed on the dev and held-out halves: no misread "
        'blocks (it let a changed value through, "300-euro deposit" for 200: dropped), '
        "misread numbers of another subject alone, and these with misread negations and "
        "opposites (shipped: the most right answers passed on the dev halves, 33 of the "
        "third set's 35 against 31 and 30 before).",
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
    ]
    if write:
        held_out = {
            k: round(float(v), 4)
            for k, v in headline.items()
            if isinstance(v, float) and math.isfinite(v)
        }
        provenance = {
            **calibration.to_dict(),
            "block_on": DEFAULT_BLOCK_ON,
            "held_out_smollm2": held_out,
            "held_out_smollm2_block_on_any": {
                k: round(float(v), 4) for k, v in strict.items() if math.isfinite(float(v))
            },
        }
        CALIBRATION_FILE.write_text(json.dumps(provenance, indent=2) + "\n", encoding="utf-8")
    return lines, {**headline, "calibration": calibration}


SHORT_TARGET = "short / reworded correct answers passed (old set; shaped the word rules)"
TARGETS = [
    ("HaluEval right answers passed", "≥ 0.95", "halueval_pass", 0.95),
    ("HaluEval hallucinated flagged", "≥ 0.70", "halueval_flagged", 0.70),
    ("FRANK CNN/DM faithful passed", "≥ 0.85", "frank_pass", 0.85),
    ("FRANK CNN/DM unfaithful flagged", "≥ 0.50", "frank_flagged", 0.50),
    (SHORT_TARGET, "≥ 0.95", "short_pass", 0.95),
]
"""The held-out verdict targets: name, goal, the held-out row's key, and the least value
met. The issue words the hallucinated and unfaithful targets as *flagged* (``uncertain``
or ``unsupported``, what ``mode="flag"`` marks); the share *blocked* is reported beside
them with no target."""
TARGET_HEADER = ["target", "goal", "measured", "", 'blocked (no target): default / `"any"`']


def verdict_targets(headline: dict[str, Any]) -> list[list[str]]:
    """The issue-48 targets (SmolLM2, shipped default; beside a flagged one the share
    blocked, default then ``"any"``), and Qwen's ``calibrate(scorer)`` against its labels."""

    def row(name: str, goal: str, value: float, least: float, digits: int = 2) -> list[str]:
        met = math.isfinite(value) and value >= least
        return [name, goal, fmt(value, digits), "met" if met else "missed"]

    rows = []
    for name, goal, key, least in TARGETS:
        blocked = key.replace("flagged", "blocked")
        beside = ""
        if blocked != key:
            beside = f"{fmt(headline[blocked], 2)} / {fmt(headline['any'][blocked], 2)}"
        rows.append([*row(name, goal, headline[key], least), beside])
    diff = headline.get("qwen_shipped_ba", math.nan) - headline.get("qwen_own_ba", math.nan)
    name = "Qwen: calibrate(scorer) − own labels, balanced accuracy"
    return [*rows, [*row(name, "≥ −0.03", diff, -0.03, 3), ""]]


def free_figure(headline: dict[str, Any], target: str) -> str:
    """The free baseline (coverage alone, fitted alike) on one target's held-out rows."""
    key = next((key for name, _, key, _ in TARGETS if name == target), None)
    if key is None:
        return "not run"
    return f"coverage alone (0 calls) {fmt(headline['free'][key], 2)}"


def verdict_readme(headline: dict[str, Any]) -> str:
    """README's sentence on what the default verdict (and ``block_on="any"``) passes,
    flags and blocks."""
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
