"""The gate benchmark's tables, replayed from the stored rows (no model call).

Protocol, fixed before the test rows were read: the score is chosen on FRANK's ``valid``
rows with the embedded SmolLM2 (highest pooled ROC AUC among the candidates of
:mod:`benchmarks.gate_features`), the default threshold is the balanced-accuracy
optimum of that score on the same rows, and every other figure is reported as measured,
FRANK on its ``test`` rows. Baselines get their own threshold fitted the same way on
FRANK ``valid``. The chosen threshold goes to ``default_threshold.json`` beside the rows
(the library's :data:`~camab_rag.groundedness.report.DEFAULT_THRESHOLD` is set from it, and a
test checks they agree).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from benchmarks._report import BENCHMARKS_MD, markdown_table, write_headline, write_section
from benchmarks.bench_gate import JUDGE_QUESTION, RESULTS, read_rows, store_path
from benchmarks.gate_candidates import (
    ANSWER_CANDIDATES,
    SENTENCE_FUNCTIONS,
    rank_mean,
    selection_half,
    sentence_candidates,
)
from benchmarks.gate_combination import combination_lines, combine
from benchmarks.gate_features import MODEL_SCORES, features, support_of
from benchmarks.gate_fresh_report import fresh_section
from benchmarks.gate_sets import FRANK_QUESTION, load_items
from benchmarks.gate_verdict import (
    free_figure,
    verdict_readme,
    verdict_section,
    verdict_targets,
)
from benchmarks.stats import (
    at_threshold,
    auroc_ci,
    fitted_threshold,
    holm_adjust,
    paired_difference,
    resamples,
)
from benchmarks.stats import flag_auroc as auroc
from camab_rag.groundedness.abstention import is_abstention
from camab_rag.groundedness.report import DEFAULT_THRESHOLD, support_report
from camab_rag.groundedness.score import SCORE_NAME
from camab_rag.groundedness.wordforms import ContextWords
from camab_rag.scorers.models import MODELS

MODELS_RUN = ("smollm2", "qwen2.5-0.5b")
SELECTION_MODEL = "smollm2"
PREVIOUS = "min_sentence_explained"
"""The score the library shipped before the candidates of :mod:`benchmarks.gate_candidates`."""
CANDIDATES = (*MODEL_SCORES, *(n for n in (SCORE_NAME,) if n not in MODEL_SCORES), "shipped")
BASELINES = ("judge", "lexical", "length")
CALLS = {"judge": 1, "lexical": 0, "length": 0, "numbers": 0}
THRESHOLD_FILE = RESULTS / "default_threshold.json"
MIN_LONG_ANSWERS = 50
"""Long answers a model needs before its per-sentence figures are reported (a run that was
stopped part-way leaves fewer)."""
PUBLISHED = (
    "Published ROC AUC on FRANK (the TRUE benchmark, all of FRANK's annotated summaries, "
    "not this split): T5-11B NLI 89.4, SummaC 89.1, BERTScore 84.3, QuestEval 84.0, "
    "FactCC 76.4 (trained checkers, 0.1 to 11 billion parameters; the models here have "
    "0.135 and 0.5 billion and are not trained for the task)."
)


@dataclass
class Rows:
    """One set's stored rows for one model, with every figure per row."""

    rows: list[dict[str, Any]]
    figures: dict[str, np.ndarray]
    unsupported: np.ndarray
    keys: list[str]
    contexts: list[str]

    def where(self, mask: np.ndarray) -> Rows:
        index = np.flatnonzero(mask)
        return Rows(
            [self.rows[i] for i in index],
            {k: v[index] for k, v in self.figures.items()},
            self.unsupported[index],
            [self.keys[i] for i in index],
            [self.contexts[i] for i in index],
        )

    def column(self, field: str) -> np.ndarray:
        return np.array([r[field] for r in self.rows])

    def __len__(self) -> int:
        return len(self.rows)


def load(set_name: str, model: str) -> Rows | None:
    rows = read_rows(store_path(set_name, model))
    if not rows:
        return None
    items = {i.id: i for i in load_items(set_name)}
    rows = [r for r in rows if r["id"] in items]
    seen: dict[str, dict[str, Any]] = {r["id"]: r for r in rows}  # last copy wins
    rows = list(seen.values())
    table = [features(r, items[r["id"]].context) for r in rows]
    return Rows(
        rows,
        {k: np.array([t[k] for t in table]) for k in table[0]},
        np.array([bool(r["unsupported"]) for r in rows]),
        [items[r["id"]].context_key for r in rows],
        [items[r["id"]].context for r in rows],
    )


def _fmt(value: float, digits: int = 3) -> str:
    return "–" if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


# --------------------------------------------------------------------------- selection
def selection(valid: Rows) -> tuple[str, list[str]]:
    """The candidate with the highest mean of its CNN/DM and BBC ROC AUC on FRANK valid
    (each source weighted alike: pooled, a score is rewarded for telling the sources
    apart, since BBC's summaries are both less explained and mostly unfaithful)."""
    cnndm = valid.where(valid.column("group") == "cnndm")
    reference = [cnndm.figures[name] for name in RANKED]
    valid.figures["rank_lexical"] = rank_mean(reference, [valid.figures[n] for n in RANKED])
    cnndm = valid.where(valid.column("group") == "cnndm")
    bbc = valid.where(valid.column("group") == "bbc")
    table = []
    best, best_auc = "", -1.0
    candidates = (*MODEL_SCORES, *ANSWER_CANDIDATES, "rank_lexical")
    for name in (*candidates, "judge", "lexical", "numbers", "names", "length"):
        per_source = [auroc(part.figures[name], part.unsupported) for part in (cnndm, bbc)]
        mean = float(np.mean(per_source))
        table.append(
            [
                f"`{name}`",
                *(_fmt(v) for v in per_source),
                _fmt(mean),
                _fmt(auroc(valid.figures[name], valid.unsupported)),
            ]
        )
        if name in candidates and mean > best_auc:
            best, best_auc = name, mean
    header = ["score", "CNN/DM valid", "BBC valid", "mean of the two", "pooled valid"]
    return best, [markdown_table(header, table)]


RANKED = (PREVIOUS, "lexical")
"""The two signals ``rank_lexical`` averages the percentiles of."""


def rank_out_of_fold(fit: Rows) -> tuple[list[float], list[float]]:
    """``rank_lexical`` out of fold on CNN/DM valid (reference distributions from the other
    folds, 5 folds grouped by article) and the previous score on the same folds."""
    from sklearn.model_selection import GroupKFold

    ranked, previous = [], []
    for train, held in GroupKFold(5).split(fit.unsupported, fit.unsupported, fit.keys):
        reference = [fit.figures[n][train] for n in RANKED]
        score = rank_mean(reference, [fit.figures[n][held] for n in RANKED])
        ranked.append(auroc(score, fit.unsupported[held]))
        previous.append(auroc(fit.figures[PREVIOUS][held], fit.unsupported[held]))
    return ranked, previous


def fit_rows(data: Rows) -> Rows:
    """The rows every threshold is fitted on: FRANK valid, CNN/DM."""
    return data.where((data.column("split") == "valid") & (data.column("group") == "cnndm"))


def _median(data: Rows, group: str, unsupported: bool) -> float:
    rows = data.where((data.column("group") == group) & (data.unsupported == unsupported))
    return float(np.median(rows.figures["shipped"]))


def _at(data: Rows, group: str, threshold: float) -> Any:
    rows = data.where(data.column("group") == group)
    return at_threshold(rows.figures["shipped"], rows.unsupported, threshold)


# --------------------------------------------------------------------------- main table
def thresholds(valid: Rows, names: Sequence[str]) -> dict[str, float]:
    return {name: fitted_threshold(valid.figures[name], valid.unsupported) for name in names}


def main_table(
    data: Rows, cuts: dict[str, float], seconds: dict[str, float]
) -> tuple[str, dict[str, tuple[float, float, float]]]:
    draws = resamples(data.keys)
    lines = []
    aucs = {}
    for name in (*CANDIDATES, *BASELINES):
        value, low, high = auroc_ci(data.figures[name], data.unsupported, draws)
        aucs[name] = (value, low, high)
        decided = at_threshold(data.figures[name], data.unsupported, cuts[name])
        calls = CALLS.get(name, 2)
        lines.append(
            [
                f"**{name}**" if name == "shipped" else f"`{name}`",
                f"{_fmt(value)} [{_fmt(low, 2)}, {_fmt(high, 2)}]",
                f"{cuts[name]:+.3f}",
                _fmt(decided.balanced_accuracy),
                _fmt(decided.f1),
                _fmt(decided.pass_supported),
                str(calls),
                _fmt(seconds.get(name, 0.0), 2),
            ]
        )
    header = [
        "score",
        "ROC AUC [95% CI]",
        "threshold",
        "balanced acc.",
        "F1 (unsupported)",
        "supported passed",
        "calls",
        "s/answer",
    ]
    return markdown_table(header, lines), aucs


def comparisons(data: Rows, label: str) -> list[tuple[str, float, float, float, float]]:
    draws = resamples(data.keys, seed=1)
    out = []
    for other in (PREVIOUS, *BASELINES):
        diff, low, high, p = paired_difference(
            data.figures["shipped"], data.figures[other], data.unsupported, draws
        )
        out.append((f"{label}: shipped − {other}", diff, low, high, p))
    return out


def seconds_of(data: Rows) -> dict[str, float]:
    gate = float(np.mean(data.column("seconds_gate")))
    out = {name: gate for name in CANDIDATES}
    out["judge"] = float(np.mean(data.column("seconds_judge")))
    return out


# --------------------------------------------------------------------------- sentences
def long_answer_sentences(data: Rows, threshold: float) -> dict[str, Any]:
    """Per-sentence scores of the HaluEval long answers, labelled by the part they lie in."""
    from benchmarks.gate_features import length, lexical

    scores, lexicals, lengths, labels, keys = [], [], [], [], []
    caught = []
    span_chars = {True: 0, False: 0}
    parts_with_span: dict[bool, list[bool]] = {True: [], False: []}
    for row, context in zip(data.rows, data.contexts):
        present = ContextWords.of([context])  # as the library reads it
        report = support_report(support_of(row), threshold, context_words=present)
        for start, end, invented in row["parts"]:
            inside = [s for s in report.unsupported_spans if start <= s.start < end]
            span_chars[bool(invented)] += sum(s.end - s.start for s in inside)
            parts_with_span[bool(invented)].append(bool(inside))
        per_answer = []
        for sentence in report.sentences:
            part = next(
                (p for p in row["parts"] if p[0] <= sentence.start < p[1]), row["parts"][-1]
            )
            scores.append(float(sentence.score or 0.0))
            lexicals.append(lexical(sentence.text, context))
            lengths.append(length(sentence.text, context))
            labels.append(bool(part[2]))
            keys.append(row["id"])
            per_answer.append((float(sentence.score or 0.0), bool(part[2])))
        if len({label for _, label in per_answer}) == 2:
            caught.append(min(per_answer)[1])
    unsupported = np.array(labels)
    draws = resamples(keys)
    return {
        "n_sentences": len(labels),
        "n_answers": len(data.rows),
        "ours": auroc_ci(np.array(scores), unsupported, draws),
        "lexical": auroc_ci(np.array(lexicals), unsupported, draws),
        "length": auroc_ci(np.array(lengths), unsupported, draws),
        "lowest_is_invented": float(np.mean(caught)) if caught else float("nan"),
        "span_precision": span_chars[True] / max(span_chars[True] + span_chars[False], 1),
        "invented_with_span": float(np.mean(parts_with_span[True])),
        "right_with_span": float(np.mean(parts_with_span[False])),
        "flagged": at_threshold(np.array(scores), unsupported, threshold),
    }


def sentence_choice(data: Rows) -> tuple[str, list[str], np.ndarray]:
    """Every sentence function's per-sentence ROC AUC on the HaluEval long answers: the
    choice on a seeded random half (:func:`~benchmarks.gate_candidates.selection_half`),
    the figure on the other half. Returns the choice, the table and the half."""
    from benchmarks.gate_features import length, lexical

    half = selection_half([r["id"] for r in data.rows])
    values: dict[bool, dict[str, list[float]]] = {True: {}, False: {}}
    labels: dict[bool, list[bool]] = {True: [], False: []}
    keys: dict[bool, list[str]] = {True: [], False: []}
    for row, context, chosen in zip(data.rows, data.contexts, half):
        for start, end, figures in sentence_candidates(support_of(row), context):
            part = next((p for p in row["parts"] if p[0] <= start < p[1]), row["parts"][-1])
            text = row["answer"][start:end]
            figures = {
                **figures,
                "lexical": lexical(text, context),
                "length": length(text, context),
            }
            for name, value in figures.items():
                values[bool(chosen)].setdefault(name, []).append(value)
            labels[bool(chosen)].append(bool(part[2]))
            keys[bool(chosen)].append(row["id"])
    aucs = {
        name: auroc(np.array(values[True][name]), np.array(labels[True])) for name in values[True]
    }
    best = max(SENTENCE_FUNCTIONS, key=lambda name: aucs[name])
    draws = resamples(keys[False])
    table = [
        [
            f"`{name}`",
            _fmt(aucs[name]),
            _ci(auroc_ci(np.array(values[False][name]), np.array(labels[False]), draws)),
        ]
        for name in values[True]
    ]
    header = [
        "sentence score",
        f"selection half ({len(labels[True])} sentences)",
        f"other half ({len(labels[False])} sentences) [95% CI]",
    ]
    return best, [markdown_table(header, table)], half


def frank_sentences(data: Rows, threshold: float) -> dict[str, Any]:
    """FRANK summaries of two or more sentences: the least supported sentence's score
    against the summary's label (and every sentence given its summary's label)."""
    least, whole, labels, keys = [], [], [], []
    every, every_labels, every_keys = [], [], []
    for row, key, context in zip(data.rows, data.keys, data.contexts):
        present = ContextWords.of([context])  # as the library reads it
        report = support_report(support_of(row), threshold, context_words=present)
        sentence_scores = [float(s.score or 0.0) for s in report.sentences]
        if len(sentence_scores) < 2:
            continue
        least.append(min(sentence_scores))
        whole.append(report.score)
        labels.append(bool(row["unsupported"]))
        keys.append(key)
        every += sentence_scores
        every_labels += [bool(row["unsupported"])] * len(sentence_scores)
        every_keys += [key] * len(sentence_scores)
    unsupported = np.array(labels)
    return {
        "n_summaries": len(labels),
        "least": auroc_ci(np.array(least), unsupported, resamples(keys)),
        "whole": auroc_ci(np.array(whole), unsupported, resamples(keys)),
        "every": auroc_ci(np.array(every), np.array(every_labels), resamples(every_keys)),
        "n_sentences": len(every),
    }


# --------------------------------------------------------------------------- the report
def _ci(value: tuple[float, float, float]) -> str:
    return f"{_fmt(value[0])} [{_fmt(value[1], 2)}, {_fmt(value[2], 2)}]"


def report(write: bool = True) -> None:
    lines: list[str] = [
        "The gate judges answers written by other systems (FRANK's summarisers, HaluEval's "
        "ChatGPT), so every verdict below is a proxy verdict: the scoring model did not "
        "write the answer. Prompts: the library's default template "
        f'(question for FRANK: "{FRANK_QUESTION}"); the judge asks, in the same template, '
        f'"{JUDGE_QUESTION.splitlines()[0]}" and reads log P(yes) − log P(no) '
        "(each summed over `Yes`/`yes`). Ours costs the two anchor calls per answer "
        "(full context, no context); the judge one; lexical overlap and length none. "
        "Seconds per answer: mean wall time on this 2-core machine shared with other "
        "jobs, one torch thread; the answers of one article are scored together (the "
        "prefix cache computes the article once), the gate first: its seconds include "
        "computing the article, the judge's reuse it, so the judge alone would take "
        "longer than its figure. `length` below 0.5: on CNN/DM the longer summaries are "
        "more often the faithful ones.",
        "",
        "Models: `smollm2` (SmolLM2-135M-Instruct, the embedded default) and `qwen2.5-0.5b` "
        f"({MODELS['qwen2.5-0.5b'].description}; one GGUF split into six PyPI pieces, "
        f"sha256 `{MODELS['qwen2.5-0.5b'].sha256}`).",
        "",
    ]
    verdict_lines, verdict_headline = verdict_section(write)
    lines += [
        *verdict_lines,
        "### Targets (issue 48: the verdict at the shipped default, SmolLM2, held-out rows)",
        "",
        markdown_table(["target", "goal", "measured", ""], verdict_targets(verdict_headline)),
        "",
        "The sections below are the score's own history (issue 38): the gate's score, its "
        "threshold for the two-verdict rule (`threshold=`), and its comparisons.",
        "",
    ]
    frank = {m: load("frank", m) for m in MODELS_RUN}
    base = frank[SELECTION_MODEL]
    if base is None:
        raise SystemExit("no stored FRANK rows for the selection model")
    valid = base.where(base.column("split") == "valid")
    chosen, choice_table = selection(valid)
    ranked, previous = rank_out_of_fold(fit_rows(base))
    lines += [
        "### Choosing the score (FRANK `valid`, SmolLM2)",
        "",
        "ROC AUC, positive = unsupported (a summary with a factual error), each score "
        "read so that low = unsupported. Candidates (from the same two calls): `gain` "
        "mean per-token log-prob the context adds; `explained` the share of the answer's "
        "no-context surprisal the context removes; `full` mean log-prob with the context; "
        "`min_sentence_gain` / `min_sentence_explained` the least supported sentence's "
        "gain / explained share; `supported_tokens` the share of tokens outside the "
        "unsupported spans. Tried next, written down in `benchmarks/gate_candidates.py` "
        "before any of them was computed on `test` (the least supported sentence's value "
        "of each sentence function): `min_sentence_content` the explained share of content "
        "tokens only; `min_sentence_q25_gain` / `min_sentence_q25_token_explained` the "
        "first quartile of per-token gains / of per-token explained shares; "
        "`min_sentence_clipped` gains clipped at 0; `min_sentence_npmi` the mean per-token "
        "normalised PMI; `min_sentence_absent` / `min_sentence_entity` the explained share "
        "with tokens of content words / of numbers and names absent from the article "
        "explaining nothing; `softmin` a surprisal-weighted soft minimum over sentences "
        "(t = 0.1); `rank_lexical` the mean of `min_sentence_explained`'s and `lexical`'s "
        "percentiles on CNN/DM valid (a fitted reference, checked out of fold below). "
        "Free signals: `judge`, `lexical` (share of content words "
        "present in the article), `numbers` (share of numbers present), `names` (share of "
        "capitalised words present), `length` (fewer "
        "words = more supported). The choice: the highest mean of the two sources' ROC "
        "AUC (pooled, a score also gains by telling the sources apart: BBC's summaries "
        "are both less explained and mostly unfaithful).",
        "",
        *choice_table,
        "",
        f"`rank_lexical` out of fold on CNN/DM valid (5 folds grouped by article, "
        f"reference from the other folds): {np.mean(ranked):.3f}, `{PREVIOUS}` on the same "
        f"folds {np.mean(previous):.3f}. Of the candidates tried next, only the chosen one "
        f"is scored on `test` below (beside the first six; `{PREVIOUS}` was the library's "
        "score before).",
        "",
        f"Chosen: `{chosen}`. The library ships `{SCORE_NAME}` "
        "(`camab_rag.groundedness.score`)"
        + (
            " — the same."
            if chosen == SCORE_NAME
            else " — NOT the same: re-run after updating the library."
        ),
        "",
    ]
    names = (*CANDIDATES, *BASELINES)
    fit = fit_rows(base)
    cuts = thresholds(fit, names)
    default_cut = round(cuts["shipped"], 3)
    provenance: dict[str, Any] = {
        "threshold": default_cut,
        "score": SCORE_NAME,
        "model": SELECTION_MODEL,
        "fitted_on": "FRANK valid, CNN/DM summaries, balanced accuracy",
        "n_valid": len(fit),
    }
    pooled_cut = fitted_threshold(valid.figures["shipped"], valid.unsupported)
    lines += [
        f"Default threshold: **{provenance['threshold']:.3f}** "
        f"(`{SCORE_NAME}` ≥ threshold passes), the balanced-accuracy optimum on the "
        f"{len(fit)} CNN/DM summaries of FRANK valid with SmolLM2; written to "
        f"`benchmarks/results/groundedness/{THRESHOLD_FILE.name}`; the library's "
        f"`DEFAULT_THRESHOLD` is {DEFAULT_THRESHOLD}"
        + (
            " (the same)."
            if abs(DEFAULT_THRESHOLD - default_cut) < 5e-4
            else " (NOT the same: update the library)."
        ),
        "",
        "Why CNN/DM alone: BBC's XSum summaries are one abstractive sentence whose faithful "
        "examples the context explains far less (median "
        f"`{SCORE_NAME}` {_median(valid, 'bbc', False):.2f} for faithful BBC summaries vs "
        f"{_median(valid, 'cnndm', False):.2f} for CNN/DM), and 90% of them are unfaithful: "
        "fitted on both sources pooled, the threshold "
        f"({pooled_cut:.3f}) separates the sources more than faithful from unfaithful "
        "(on valid it passes "
        f"{_at(valid, 'bbc', pooled_cut).pass_supported:.0%} of faithful BBC summaries and "
        f"flags {_at(valid, 'cnndm', pooled_cut).flag_unsupported:.0%} of unfaithful "
        "CNN/DM ones). Every other score and baseline gets its own threshold fitted the same "
        "way (CNN/DM valid); Qwen gets its own, as `calibrate()` would give it.",
        "",
    ]
    families: list[tuple[str, float, float, float, float]] = []
    headline: dict[str, Any] = {}
    for model in MODELS_RUN:
        data = frank[model]
        if data is None:
            lines += [f"### {model}: no stored FRANK rows yet", ""]
            continue
        test = data.where(data.column("split") == "test")
        model_fit = fit_rows(data)
        if model == SELECTION_MODEL:
            model_cuts = {**cuts, "shipped": default_cut}
            cut_note = (
                "the shipped default for `shipped`; each other score its own, fitted on "
                "CNN/DM valid"
            )
        elif len(model_fit) and model_fit.unsupported.any() and (~model_fit.unsupported).any():
            model_cuts = thresholds(model_fit, names)
            cut_note = (
                "each score's own threshold fitted on this model's CNN/DM valid rows (the "
                "per-model calibration `calibrate()` does); the SmolLM2 default would give "
                "balanced accuracy "
                + _fmt(
                    at_threshold(
                        test.where(test.column("group") == "cnndm").figures["shipped"],
                        test.where(test.column("group") == "cnndm").unsupported,
                        default_cut,
                    ).balanced_accuracy
                )
                + " on CNN/DM test"
            )
        else:
            lines += [f"### {model}: no FRANK valid rows yet", ""]
            continue
        for label, subset in (
            ("FRANK CNN/DM test", test.where(test.column("group") == "cnndm")),
            ("FRANK BBC test", test.where(test.column("group") == "bbc")),
            ("FRANK pooled test", test),
        ):
            if not len(subset) or subset.unsupported.all() or not subset.unsupported.any():
                lines += [f"### {label}, {model}: not enough rows yet", ""]
                continue
            if label == "FRANK pooled test" and len(set(subset.column("group"))) < 2:
                lines += [f"### {label}, {model}: one source only so far (the table above)", ""]
                continue
            table_text, aucs = main_table(subset, model_cuts, seconds_of(subset))
            lines += [
                f"### {label}, `{model}` ({len(subset)} summaries, "
                f"{int(subset.unsupported.sum())} unsupported)",
                "",
                f"Thresholds: {cut_note}.",
                "",
                table_text,
                "",
            ]
            families += comparisons(subset, f"{label}, {model}")
            copied = subset.where(subset.figures["lexical"] >= 1.0)
            if copied.unsupported.any() and (~copied.unsupported).any():
                lines += [
                    f"Summaries whose content words all occur in the article ({len(copied)}, "
                    f"{int(copied.unsupported.sum())} unsupported: errors that recombine "
                    "the article's own words): ROC AUC ours "
                    f"{_fmt(auroc(copied.figures['shipped'], copied.unsupported))}, judge "
                    f"{_fmt(auroc(copied.figures['judge'], copied.unsupported))}.",
                    "",
                ]
            if model == SELECTION_MODEL and label == "FRANK CNN/DM test":
                decided = at_threshold(subset.figures["shipped"], subset.unsupported, default_cut)
                headline = {
                    "auroc": aucs["shipped"],
                    "balanced_accuracy": decided.balanced_accuracy,
                    "pass_supported": decided.pass_supported,
                    "flag_unsupported": decided.flag_unsupported,
                    "judge": aucs["judge"],
                    "lexical": aucs["lexical"],
                }
    base_test = base.where((base.column("split") == "test") & (base.column("group") == "cnndm"))
    tried = combine(
        fit.figures,
        fit.unsupported,
        fit.keys,
        base_test.figures,
        base_test.unsupported,
        base_test.keys,
    )
    lines += combination_lines(tried, len(fit), len(base_test))
    lines += [PUBLISHED, ""]

    # HaluEval QA
    halueval_headline: dict[str, Any] = {}
    for model in MODELS_RUN:
        data = load("halueval", model)
        if data is None:
            lines += [f"### HaluEval QA, `{model}`: no stored rows yet", ""]
            continue
        model_cuts = (
            {**cuts, "shipped": default_cut}
            if model == SELECTION_MODEL
            else thresholds(fit_rows(frank[model]), names)  # type: ignore[arg-type]
            if frank[model] is not None
            else cuts
        )
        table_text, _ = main_table(data, model_cuts, seconds_of(data))
        hard = data.where(~data.unsupported | (data.figures["lexical"] >= 1.0))
        first = data.where(data.column("group") != "hallucinated_answer_multiturn")
        lines += [
            f"### HaluEval QA, `{model}` ({len(data)} answers: right, hallucinated, "
            "multi-turn hallucinated; thresholds from FRANK valid as above)",
            "",
            table_text,
            "",
            "- right vs the first hallucinated answer only: ROC AUC ours "
            f"{_fmt(auroc(first.figures['shipped'], first.unsupported))}, lexical "
            f"{_fmt(auroc(first.figures['lexical'], first.unsupported))}, judge "
            f"{_fmt(auroc(first.figures['judge'], first.unsupported))}",
            f"- hallucinations whose content words all occur in the evidence "
            f"({int(hard.unsupported.sum())}) vs right answers: ROC AUC ours "
            f"{_fmt(auroc(hard.figures['shipped'], hard.unsupported))}, lexical "
            f"{_fmt(auroc(hard.figures['lexical'], hard.unsupported))}, judge "
            f"{_fmt(auroc(hard.figures['judge'], hard.unsupported))}",
            "",
        ]
        families += comparisons(data, f"HaluEval QA, {model}")
        if model == SELECTION_MODEL:
            decided = at_threshold(data.figures["shipped"], data.unsupported, default_cut)
            halueval_headline = {
                "flag_unsupported": decided.flag_unsupported,
                "pass_supported": decided.pass_supported,
            }

    # per sentence
    lines += ["### Per sentence", ""]
    long_headline: dict[str, Any] = {}
    for model in MODELS_RUN:
        data = load("halueval_long", model)
        if data is None or len(data) < MIN_LONG_ANSWERS:
            stored = 0 if data is None else len(data)
            lines += [
                f"- HaluEval long answers, `{model}`: {stored} of 350 answers stored so far "
                f"(reported from {MIN_LONG_ANSWERS})"
            ]
            continue
        cut = default_cut
        result = long_answer_sentences(data, cut)
        if model == SELECTION_MODEL:
            best, choice_rows, half = sentence_choice(data)
            long_headline = long_answer_sentences(data.where(~half), cut)
            lines += [
                f"Choosing the sentence score (`{model}`, HaluEval long answers): each "
                "sentence function of `benchmarks/gate_candidates.py` (the answer-level "
                "candidates are the least supported sentence's value of each), per-sentence "
                "ROC AUC (positive = a sentence of the invented part), chosen on a seeded "
                "random half of the answers, reported on the other half; `explained` is the "
                f"previous score's. Chosen on the selection half: `{best}`; the library "
                f"ships `{SCORE_NAME}`"
                + (
                    " (the same)."
                    if f"min_sentence_{best}" == SCORE_NAME
                    else " (chosen on FRANK; one function serves the answer and its "
                    "sentences, so an answer is flagged exactly when a sentence is)."
                ),
                "",
                *choice_rows,
                "",
                f"- HaluEval long answers, `{model}`, the other half only "
                f"({long_headline['n_answers']} answers, {long_headline['n_sentences']} "
                f"sentences): per-sentence ROC AUC ours {_ci(long_headline['ours'])}, lexical "
                f"{_ci(long_headline['lexical'])}, length {_ci(long_headline['length'])}",
            ]
        lines += [
            f"- HaluEval long answers, `{model}` ({result['n_answers']} answers, "
            f"{result['n_sentences']} sentences; each answer = one question's right answer "
            "+ another's hallucinated answer, over both evidence paragraphs and both "
            "questions): per-sentence ROC AUC ours "
            f"{_ci(result['ours'])}, lexical {_ci(result['lexical'])}, length "
            f"{_ci(result['length'])}; the answer's least supported sentence is the invented "
            f"one in {_fmt(result['lowest_is_invented'], 2)} of answers; at the default "
            f"threshold {_fmt(result['flagged'].flag_unsupported, 2)} of invented sentences "
            f"are flagged and {_fmt(result['flagged'].pass_supported, 2)} of right ones pass; "
            f"unsupported spans: {_fmt(result['span_precision'], 2)} of their characters lie "
            f"in the invented part, found in {_fmt(result['invented_with_span'], 2)} of "
            f"invented parts and {_fmt(result['right_with_span'], 2)} of right ones",
        ]
    for model in MODELS_RUN:
        data = frank[model]
        if data is None:
            continue
        test = data.where(data.column("split") == "test")
        result = frank_sentences(test, default_cut)
        lines += [
            f"- FRANK test summaries of two or more sentences, `{model}` "
            f"({result['n_summaries']} summaries, {result['n_sentences']} sentences), "
            "against the summary's label: least supported sentence ROC AUC "
            f"{_ci(result['least'])} (whole summary {_ci(result['whole'])}); every sentence "
            f"given its summary's label {_ci(result['every'])}",
        ]
    lines.append("")

    # paired comparisons
    adjusted = holm_adjust([p for *_, p in families])
    table = [
        [
            label,
            f"{diff:+.3f} [{low:+.3f}, {high:+.3f}]",
            _fmt(p, 4),
            _fmt(q, 4),
            "yes" if q < 0.05 and diff > 0 else "no",
        ]
        for (label, diff, low, high, p), q in zip(families, adjusted)
    ]
    lines += [
        "### Paired comparisons (ROC AUC differences on the same answers)",
        "",
        "Cluster bootstrap over articles/questions (2000 resamples), two-sided p, Holm "
        f"over all {len(families)} comparisons.",
        "",
        markdown_table(
            ["comparison", "difference [95% CI]", "p", "p (Holm)", "ours ahead, Holm < 0.05"],
            table,
        ),
        "",
    ]
    lines += fresh_section()
    lines += targets(headline, long_headline, families, adjusted)
    abstentions = sum(
        is_abstention(r["answer"])
        for name in ("frank", "halueval")
        for model in MODELS_RUN[:1]
        for r in (read_rows(store_path(name, model)))
    )
    lines += [
        "",
        f"Labelled answers recognised as abstentions (and so passed unscored): {abstentions}.",
        "",
        "Written from the stored per-token log-probs in `benchmarks/results/groundedness/` "
        "(`<set>_<model>.jsonl`, kept in the repository) by "
        "`.venv/bin/python benchmarks/bench_gate.py report`; the rows come from "
        "`nice -n 10 .venv/bin/python benchmarks/bench_gate.py run --set SET --model MODEL` "
        "for each set and model (resumable, needs `../shared/data`).",
    ]
    body = "\n".join(lines)
    print(body)
    if not write:
        return
    provenance["frank_cnndm_test"] = {
        k: round(float(headline[k]), 4)
        for k in ("flag_unsupported", "pass_supported", "balanced_accuracy")
        if k in headline
    }
    if headline:
        provenance["frank_cnndm_test"]["auroc"] = round(float(headline["auroc"][0]), 4)
    provenance["halueval_qa"] = {k: round(float(v), 4) for k, v in halueval_headline.items()}
    THRESHOLD_FILE.write_text(json.dumps(provenance, indent=2) + "\n", encoding="utf-8")
    write_readme_block(verdict_readme(verdict_headline))
    write_section("gate", "Groundedness gate on human-labelled answers (FRANK, HaluEval)", body)
    write_headline("gate", headline_rows(headline, verdict_headline, families))


def headline_rows(
    headline: dict[str, Any],
    verdict: dict[str, Any],
    families: list[tuple[str, float, float, float, float]],
) -> list[list[str]]:
    """BENCHMARKS.md's rows: the ROC AUC beside lexical overlap's, then the verdict's
    held-out targets beside coverage alone (a free rule fitted like the shipped one)."""
    ours = float(headline["auroc"][0]) if headline else float("nan")
    label = f"FRANK CNN/DM test, {SELECTION_MODEL}: shipped − lexical"
    gap = next((d for name, d, *_ in families if name == label), float("nan"))
    rows = [
        [
            "ROC AUC, FRANK CNN/DM test (SmolLM2)",
            _fmt(ours),
            f"lexical overlap {_fmt(ours - gap)}",
            "≥ 0.80 " + ("met" if ours >= 0.80 else "missed"),
        ]
    ]
    return rows + [
        [r[0], r[2], free_figure(verdict, r[0]), f"{r[1]} {r[3]}"] for r in verdict_targets(verdict)
    ]


def targets(
    headline: dict[str, Any],
    long_headline: dict[str, Any],
    families: list[tuple[str, float, float, float, float]],
    adjusted: list[float],
) -> list[str]:
    if not headline:
        return ["Targets: not measured yet (no SmolLM2 CNN/DM test rows)."]
    ahead = {
        other: any(
            label == f"FRANK CNN/DM test, {SELECTION_MODEL}: shipped − {other}"
            and diff > 0
            and q < 0.05
            for (label, diff, _, _, _), q in zip(families, adjusted)
        )
        for other in ("judge", "lexical")
    }
    sentence = long_headline.get("ours", (float("nan"),))[0]
    rows = [
        [
            "ROC AUC, FRANK CNN/DM test (SmolLM2)",
            "≥ 0.80",
            _fmt(headline["auroc"][0]),
            "met" if headline["auroc"][0] >= 0.80 else "missed",
        ],
        [
            "balanced accuracy at the default",
            "≥ 0.72",
            _fmt(headline["balanced_accuracy"]),
            "met" if headline["balanced_accuracy"] >= 0.72 else "missed",
        ],
        [
            "ahead of the same-model judge (Holm)",
            "yes",
            "yes" if ahead["judge"] else "no",
            "met" if ahead["judge"] else "missed",
        ],
        [
            "ahead of lexical overlap (Holm)",
            "yes",
            "yes" if ahead["lexical"] else "no",
            "met" if ahead["lexical"] else "missed",
        ],
        ["model calls per answer (gate alone)", "≤ 3", "2", "met"],
        [
            "per-sentence ROC AUC, HaluEval long answers, held-out half (SmolLM2)",
            "≥ 0.80",
            _fmt(sentence),
            "met" if sentence >= 0.80 else "missed",
        ],
    ]
    return ["### Targets (issue 38)", "", markdown_table(["target", "goal", "measured", ""], rows)]


README = BENCHMARKS_MD.parent / "README.md"
README_MARKERS = ("<!-- gate:figures -->", "<!-- /gate:figures -->")


def write_readme_block(text: str) -> None:
    start, end = README_MARKERS
    readme = README.read_text(encoding="utf-8")
    if start not in readme or end not in readme:
        raise SystemExit(f"README.md has no {start} ... {end} block to write the figures in")
    head, rest = readme.split(start, 1)
    _, tail = rest.split(end, 1)
    README.write_text(f"{head}{start}\n{text}\n{end}{tail}", encoding="utf-8")


if __name__ == "__main__":
    report()
