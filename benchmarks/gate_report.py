"""The gate benchmark's report, replayed from the stored rows (``gate run``), no model call.

Sections, in order: the calibrated verdict and its targets (:mod:`benchmarks.gate_verdict`),
then the score behind it, its two-verdict threshold and its comparisons with a same-model
judge and the free baselines. A new section is a function returning lines, added in
:func:`report`.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from benchmarks._report import (
    BENCHMARKS_MD,
    columns,
    fmt,
    markdown_table,
    write_headline,
    write_section,
)
from benchmarks.bench_gate import JUDGE_QUESTION, RESULTS, store_path
from benchmarks.data import read_jsonl
from benchmarks.gate_fresh_report import (
    blind_headline_rows,
    fresh_section,
    measure,
    readme_sentence,
)
from benchmarks.gate_sets import FRANK_QUESTION, load_items
from benchmarks.gate_verdict import (
    TARGET_HEADER,
    Sliced,
    free_figure,
    verdict_readme,
    verdict_section,
    verdict_targets,
)
from benchmarks.stats import at_threshold, auroc_ci, fitted_threshold, resamples
from benchmarks.stats import flag_auroc as auroc
from camab_rag.groundedness.abstention import is_abstention
from camab_rag.groundedness.report import DEFAULT_THRESHOLD, support_report
from camab_rag.groundedness.score import SCORE_NAME, STOPWORDS, support_score, words
from camab_rag.groundedness.wordforms import ContextWords
from camab_rag.scorers.models import MODELS
from camab_rag.token_support import TokenSupport

MODELS_RUN = ("smollm2", "qwen2.5-0.5b")
SELECTION_MODEL = "smollm2"
PREVIOUS = "min_sentence_explained"
"""The score the library shipped before ``SCORE_NAME`` (issue 38)."""
BASELINES = ("judge", "lexical", "length")
THRESHOLD_FILE = RESULTS / "default_threshold.json"


def lexical(answer: str, context: str) -> float:
    """Share of the answer's content words that occur in the context (1.0 when none)."""
    needed = [w for w in words(answer) if w not in STOPWORDS and not w.isdigit()]
    present = set(words(context))
    return sum(w in present for w in needed) / len(needed) if needed else 1.0


def length(answer: str, context: str) -> float:
    """Minus the word count: a longer answer ranks as less supported."""
    return -float(len(words(answer)))


def support_of(row: dict[str, Any]) -> TokenSupport:
    return TokenSupport.from_dict(row["support"], row["answer"])


def features(row: dict[str, Any], context: str) -> dict[str, float]:
    """One stored row's scores and baselines (higher = better supported): the library's
    score (``shipped``), the previous one, the judge's log P(yes) − log P(no), lexical
    overlap and length."""
    support = support_of(row)
    shares = [support_score(support.within([(s.start, s.end)])) for s in support.sentences()]
    judge = row["judge"]
    out = {
        PREVIOUS: float(min(shares)) if shares else support_score(support),
        "shipped": support_report(support, 0.0, context_words=ContextWords.of([context])).score,
        "judge": float(
            np.logaddexp(judge["Yes"], judge["yes"]) - np.logaddexp(judge["No"], judge["no"])
        ),
        "lexical": lexical(row["answer"], context),
        "length": length(row["answer"], context),
    }
    return {k: (v if math.isfinite(v) else 0.0) for k, v in out.items()}


@dataclass
class Rows(Sliced):
    """One set's stored rows for one model, with every figure per row."""

    rows: list[dict[str, Any]]
    figures: dict[str, np.ndarray]
    unsupported: np.ndarray
    keys: list[str]
    contexts: list[str]

    def column(self, field: str) -> np.ndarray:
        return np.array([r[field] for r in self.rows])

    def __len__(self) -> int:
        return len(self.rows)


def load(set_name: str, model: str) -> Rows | None:
    items = {i.id: i for i in load_items(set_name)}
    stored = {r["id"]: r for r in read_jsonl(store_path(set_name, model)) if r["id"] in items}
    rows = list(stored.values())  # the last copy of a row wins
    if not rows:
        return None
    table = [features(r, items[r["id"]].context) for r in rows]
    return Rows(
        rows,
        {k: np.array([t[k] for t in table]) for k in table[0]},
        np.array([bool(r["unsupported"]) for r in rows]),
        [items[r["id"]].context_key for r in rows],
        [items[r["id"]].context for r in rows],
    )


def _ci(value: tuple[float, float, float]) -> str:
    return f"{fmt(value[0])} [{fmt(value[1], 2)}, {fmt(value[2], 2)}]"


def fit_rows(data: Rows) -> Rows:
    """The rows every threshold is fitted on: FRANK valid, CNN/DM."""
    return data.where((data.column("split") == "valid") & (data.column("group") == "cnndm"))


def cut_for(frank: dict[str, Rows | None], model: str) -> float:
    """The score's threshold fitted on ``model``'s CNN/DM valid rows (the per-model
    calibration ``calibrate()`` does); SmolLM2's is the library's default, rounded."""
    data = frank[model] or frank[SELECTION_MODEL]
    if data is None:
        raise SystemExit("no stored FRANK rows for the selection model")
    valid = fit_rows(data)
    cut = fitted_threshold(valid.figures["shipped"], valid.unsupported)
    return round(cut, 3) if model == SELECTION_MODEL else cut


def threshold_section(frank: dict[str, Rows | None]) -> tuple[list[str], dict[str, Any]]:
    """The score's history line and the two-verdict default threshold (with its file's
    provenance)."""
    base = frank[SELECTION_MODEL]
    if base is None:
        raise SystemExit("no stored FRANK rows for the selection model")
    fit = fit_rows(base)
    cut = cut_for(frank, SELECTION_MODEL)
    provenance: dict[str, Any] = {
        "threshold": cut,
        "score": SCORE_NAME,
        "model": SELECTION_MODEL,
        "fitted_on": "FRANK valid, CNN/DM summaries, balanced accuracy",
        "n_valid": len(fit),
    }
    valid = base.where(base.column("split") == "valid")
    pooled = fitted_threshold(valid.figures["shipped"], valid.unsupported)

    def at(group: str) -> Any:
        part = valid.where(valid.column("group") == group)
        return at_threshold(part.figures["shipped"], part.unsupported, pooled)

    def median(group: str) -> float:
        faithful = valid.where((valid.column("group") == group) & ~valid.unsupported)
        return float(np.median(faithful.figures["shipped"]))

    same = abs(DEFAULT_THRESHOLD - cut) < 5e-4
    lines = [
        "### The score and the two-verdict threshold (issue 38)",
        "",
        f"The verdict's model figure is the library's score, `{SCORE_NAME}` "
        "(`camab_rag.groundedness.score`): the least supported sentence's share of its "
        "no-context surprisal that the context removes, a content word absent from the "
        "context explaining nothing (how it was chosen: below the section). Below: the "
        f"score beside the previous one (`{PREVIOUS}`), a same-model judge and the free "
        "baselines, on held-out rows.",
        "",
        f"Default threshold: **{cut:.3f}** (`{SCORE_NAME}` ≥ threshold passes, the "
        "two-verdict rule of `threshold=`), the balanced-accuracy optimum on the "
        f"{len(fit)} CNN/DM summaries of FRANK valid with SmolLM2; written to "
        f"`benchmarks/results/groundedness/{THRESHOLD_FILE.name}`; the library's "
        f"`DEFAULT_THRESHOLD` is {DEFAULT_THRESHOLD}"
        + (" (the same)." if same else " (NOT the same: update the library)."),
        "",
        "Why CNN/DM alone: BBC's XSum summaries are one abstractive sentence whose faithful "
        f"examples the context explains far less (median `{SCORE_NAME}` {median('bbc'):.2f} "
        f"for faithful BBC summaries vs {median('cnndm'):.2f} for CNN/DM), and 90% of them "
        f"are unfaithful: fitted on both sources pooled, the threshold ({pooled:.3f}) "
        f"separates the sources more than faithful from unfaithful (on valid it passes "
        f"{at('bbc').pass_supported:.0%} of faithful BBC summaries and flags "
        f"{at('cnndm').flag_unsupported:.0%} of unfaithful CNN/DM ones). Every other score "
        "and baseline gets its own threshold fitted the same way (CNN/DM valid); Qwen gets "
        "its own, as `calibrate()` would give it.",
        "",
    ]
    return lines, provenance


def score_section(frank: dict[str, Rows | None]) -> tuple[list[str], dict[str, Any]]:
    """The score beside the previous one, the judge and the free baselines on the held-out
    rows, and its decisions at each model's threshold; SmolLM2's figures at the default
    for BENCHMARKS.md and the threshold file."""
    rows, headline = [], {}
    for model in MODELS_RUN:
        data, halueval = frank[model], load("halueval", model)
        if data is None or halueval is None:
            continue
        cut = cut_for(frank, model)
        test = data.where(data.column("split") == "test")
        for label, part in (
            ("FRANK CNN/DM test", test.where(test.column("group") == "cnndm")),
            ("FRANK BBC test", test.where(test.column("group") == "bbc")),
            ("FRANK pooled test", test),
            ("HaluEval QA", halueval),
        ):
            ours = auroc_ci(part.figures["shipped"], part.unsupported, resamples(part.keys))
            decided = at_threshold(part.figures["shipped"], part.unsupported, cut)
            others = [auroc(part.figures[n], part.unsupported) for n in (PREVIOUS, *BASELINES)]
            rows.append(
                [
                    label,
                    f"`{model}`",
                    f"{len(part)} ({int(part.unsupported.sum())})",
                    _ci(ours),
                    *(fmt(v) for v in others),
                    f"{cut:+.3f}",
                    *(fmt(v) for v in (decided.balanced_accuracy, decided.pass_supported)),
                    fmt(decided.flag_unsupported),
                ]
            )
            if model == SELECTION_MODEL and label in ("FRANK CNN/DM test", "HaluEval QA"):
                headline[label] = {"auroc": ours, "lexical": others[2], "decided": decided}
    header = columns(
        f"rows|model|answers (unsupported)|`{SCORE_NAME}` ROC AUC [95% CI]|`{PREVIOUS}`|"
        "`judge`|`lexical`|`length`|threshold|balanced acc.|supported passed|unsupported flagged"
    )
    lines = [
        "Held-out ROC AUC (positive = unsupported) of the score, the previous score, the "
        "judge and the free baselines on the same rows; the score's decisions at the "
        "model's threshold (fitted on its CNN/DM valid rows as above; SmolLM2's is the "
        "default). HaluEval QA: right, hallucinated and multi-turn hallucinated answers.",
        "",
        markdown_table(header, rows),
        "",
    ]
    return lines, headline


def sentence_lines(data: Rows, model: str, threshold: float) -> list[str]:
    """Per-sentence figures of the HaluEval long answers, each sentence labelled by the
    part it lies in, and where the unsupported spans fall."""
    figures: dict[str, list[float]] = {"ours": [], "lexical": [], "length": []}
    labels, keys, caught = [], [], []
    span_chars = {True: 0, False: 0}
    with_span: dict[bool, list[bool]] = {True: [], False: []}
    for row, context in zip(data.rows, data.contexts):
        present = ContextWords.of([context])  # as the library reads it
        report = support_report(support_of(row), threshold, context_words=present)
        for start, end, invented in row["parts"]:
            inside = [s for s in report.unsupported_spans if start <= s.start < end]
            span_chars[bool(invented)] += sum(s.end - s.start for s in inside)
            with_span[bool(invented)].append(bool(inside))
        per_answer = []
        for sentence in report.sentences:
            part = next(
                (p for p in row["parts"] if p[0] <= sentence.start < p[1]), row["parts"][-1]
            )
            figures["ours"].append(float(sentence.score or 0.0))
            figures["lexical"].append(lexical(sentence.text, context))
            figures["length"].append(length(sentence.text, context))
            labels.append(bool(part[2]))
            keys.append(row["id"])
            per_answer.append((float(sentence.score or 0.0), bool(part[2])))
        if len({label for _, label in per_answer}) == 2:
            caught.append(min(per_answer)[1])
    unsupported = np.array(labels)
    draws = resamples(keys)
    ci = {k: _ci(auroc_ci(np.array(v), unsupported, draws)) for k, v in figures.items()}
    flagged = at_threshold(np.array(figures["ours"]), unsupported, threshold)
    precision = span_chars[True] / max(span_chars[True] + span_chars[False], 1)
    return [
        f"- HaluEval long answers, `{model}` ({len(data.rows)} answers, {len(labels)} "
        "sentences; each answer = one question's right answer + another's hallucinated "
        "answer, over both evidence paragraphs and both questions): per-sentence ROC AUC "
        f"ours {ci['ours']}, lexical {ci['lexical']}, length {ci['length']}; the answer's "
        "least supported sentence is the invented one in "
        f"{fmt(float(np.mean(caught)) if caught else math.nan, 2)} of answers; at the "
        f"default threshold {fmt(flagged.flag_unsupported, 2)} of invented sentences are "
        f"flagged and {fmt(flagged.pass_supported, 2)} of right ones pass; unsupported "
        f"spans: {fmt(precision, 2)} of their characters lie in the invented part, found "
        f"in {fmt(float(np.mean(with_span[True])), 2)} of invented parts and "
        f"{fmt(float(np.mean(with_span[False])), 2)} of right ones",
    ]


def sentence_section(threshold: float) -> list[str]:
    lines = ["### Per sentence", ""]
    for model in MODELS_RUN:
        data = load("halueval_long", model)
        lines += sentence_lines(data, model, threshold) if data is not None else []
    return [*lines, ""]


def report(write: bool = True) -> None:
    """Print the gate's sections; with ``write``, store them, the fitted defaults
    (``default_threshold.json``, ``default_calibration.json``), README's figures and
    BENCHMARKS.md's rows."""
    verdict_lines, verdict = verdict_section(write)
    fresh = measure(SELECTION_MODEL, record=write)  # the blind sets, read once
    lines = [
        "The gate judges answers written by other systems (FRANK's summarisers, HaluEval's "
        "ChatGPT): the scoring model did not write them. Prompts: the library's default "
        f'template (question for FRANK: "{FRANK_QUESTION}"); the judge asks, in the same '
        f'template, "{JUDGE_QUESTION.splitlines()[0]}" and reads log P(yes) − log P(no) '
        "(each summed over `Yes`/`yes`). Calls per answer: the gate two (full context, no "
        "context), the judge one, lexical overlap and length none. `length` below 0.5: on "
        "CNN/DM the longer summaries are more often the faithful ones.",
        "",
        "Models: `smollm2` (SmolLM2-135M-Instruct, the embedded default) and `qwen2.5-0.5b` "
        f"({MODELS['qwen2.5-0.5b'].description}; one GGUF split into six PyPI pieces, "
        f"sha256 `{MODELS['qwen2.5-0.5b'].sha256}`).",
        "",
        *verdict_lines,
        "### Targets (issue 48: the verdict at the shipped default, SmolLM2, held-out rows)",
        "",
        "As the issue words them, the hallucinated and unfaithful targets count answers "
        '*flagged* (`uncertain` or `unsupported`: what `mode="flag"` marks); the share '
        '*blocked* (`unsupported`: what `mode="block"` hides) is reported beside them, '
        'under the default rule and under `block_on="any"`, with no target.',
        "",
        markdown_table(TARGET_HEADER, verdict_targets(verdict)),
        "",
        *fresh_section(fresh),
    ]
    frank = {m: load("frank", m) for m in MODELS_RUN}
    threshold_lines, provenance = threshold_section(frank)
    score_lines, headline = score_section(frank)
    abstentions = sum(
        is_abstention(r["answer"])
        for name in ("frank", "halueval")
        for r in read_jsonl(store_path(name, SELECTION_MODEL))
    )
    lines += [
        *threshold_lines,
        *score_lines,
        *sentence_section(provenance["threshold"]),
        f"Labelled answers recognised as abstentions (and so passed unscored): {abstentions}.",
    ]
    body = "\n".join(lines)
    print(body)
    if not write:
        return

    def rounded(decided: Any, *names: str) -> dict[str, float]:
        return {name: round(float(getattr(decided, name)), 4) for name in names}

    frank_test = headline["FRANK CNN/DM test"]
    provenance["frank_cnndm_test"] = {
        **rounded(frank_test["decided"], "flag_unsupported", "pass_supported", "balanced_accuracy"),
        "auroc": round(float(frank_test["auroc"][0]), 4),
    }
    decided = headline["HaluEval QA"]["decided"]
    provenance["halueval_qa"] = rounded(decided, "flag_unsupported", "pass_supported")
    THRESHOLD_FILE.write_text(json.dumps(provenance, indent=2) + "\n", encoding="utf-8")
    write_readme_block(verdict_readme(verdict) + readme_sentence(fresh))
    write_section("gate", "Groundedness gate on human-labelled answers (FRANK, HaluEval)", body)
    write_headline("gate", headline_rows(headline["FRANK CNN/DM test"], verdict, fresh))


def headline_rows(
    frank: dict[str, Any], verdict: dict[str, Any], fresh: dict[str, Any]
) -> list[list[str]]:
    """BENCHMARKS.md's rows: the ROC AUC beside lexical overlap's, then the verdict's
    held-out targets beside coverage alone (a free rule fitted like the shipped one)."""
    ours = float(frank["auroc"][0])
    rows = [
        [
            "ROC AUC, FRANK CNN/DM test (SmolLM2)",
            fmt(ours),
            f"lexical overlap {fmt(frank['lexical'])}",
            "≥ 0.80 " + ("met" if ours >= 0.80 else "missed"),
        ]
    ]
    rows += [
        [
            r[0],
            r[2] + (f' (blocked: default / `"any"` {r[4]})' if r[4] else ""),
            free_figure(verdict, r[0]),
            f"{r[1]} {r[3]}",
        ]
        for r in verdict_targets(verdict)
    ]
    return rows + blind_headline_rows(fresh)


README = BENCHMARKS_MD.parent / "README.md"
README_MARKERS = ("<!-- gate:figures -->", "<!-- /gate:figures -->")


def write_readme_block(text: str) -> None:
    """Put ``text`` between README.md's gate markers."""
    start, end = README_MARKERS
    readme = README.read_text(encoding="utf-8")
    if start not in readme or end not in readme:
        raise SystemExit(f"README.md has no {start} ... {end} block to write the figures in")
    head, rest = readme.split(start, 1)
    _, tail = rest.split(end, 1)
    README.write_text(f"{head}{start}\n{text}\n{end}{tail}", encoding="utf-8")
