"""Calibrate the gate's verdict for another model, which spreads its scores differently:
``P(unsupported)`` refitted (the cut points stay) on the shipped labelled set or your own."""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from importlib import resources
from typing import Any

import numpy as np
from numpy.typing import NDArray

from camab_rag.errors import InputError, TextTypeError
from camab_rag.groundedness.gain import answer_steps
from camab_rag.groundedness.verdict import DEFAULT_CALIBRATION, Calibration, model_input
from camab_rag.scorers.base import scorer_model_name
from camab_rag.steps import Steps, asynced, synced
from camab_rag.text_gate import check_texts

FloatArray = NDArray[np.float64]
Progress = Callable[[int, int], None]
FOLDS = 5
RIDGE = 1e-3  # L2 penalty of the logistic fit per unit of sample weight: no infinite weights
SHIPPED_SET = "calibration.jsonl"
_FIELDS = ("question", "context", "answer", "supported")


@dataclass(frozen=True)
class LabelledAnswer:
    """One answer with its label: does ``context`` support ``answer`` to ``question``?"""

    question: str
    context: object
    answer: str
    supported: bool
    kind: str = "answer"  # "qa", "summary": kinds weigh alike in the fit


def _labelled(example: object, index: int) -> LabelledAnswer:
    where, kind = f"labelled example {index}", "answer"
    if isinstance(example, LabelledAnswer):
        fields, kind = [getattr(example, k) for k in _FIELDS], example.kind
    elif isinstance(example, Mapping):
        if missing := [k for k in _FIELDS if k not in example]:
            raise InputError(f"{where} has no {missing[0]!r}")
        fields, kind = [example[k] for k in _FIELDS], str(example.get("kind", kind))
    elif isinstance(example, Sequence) and not isinstance(example, str) and len(example) == 4:
        fields = list(example)
    else:
        raise InputError(
            f"{where} must be a LabelledAnswer, a mapping with question, context, answer "
            "and supported, or a (question, context, answer, supported) tuple"
        )
    question, context, answer, supported = fields
    check_texts({f"{where}'s question": question, f"{where}'s answer": answer})
    if not isinstance(supported, (bool, np.bool_)):
        raise InputError(f"{where}: 'supported' must be True or False")
    if not answer.strip():
        raise InputError(f"{where}: the answer is empty")
    return LabelledAnswer(question, context, answer, bool(supported), kind)


def kind_weights(kinds: Sequence[str]) -> FloatArray:
    """Sample weights under which every kind weighs alike (mean weight 1)."""
    counts = Counter(kinds)
    return np.array([len(kinds) / (len(counts) * counts[k]) for k in kinds], dtype=float)


def fit_logistic(
    x: FloatArray, unsupported: Sequence[bool], w: FloatArray
) -> tuple[tuple[float, float], float]:
    """Weighted, L2-penalised logistic regression (Newton): the weights and the bias."""
    y = np.asarray(unsupported, dtype=float)
    a = np.column_stack([x, np.ones(y.size)])
    penalty = np.diag([RIDGE * w.sum()] * x.shape[1] + [0.0])
    beta = np.zeros(a.shape[1])
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-np.clip(a @ beta, -30, 30)))
        gradient = a.T @ (w * (p - y)) + penalty @ beta
        hessian = (a * (w * p * (1 - p))[:, None]).T @ a + penalty + 1e-9 * np.eye(a.shape[1])
        step = np.linalg.solve(hessian, gradient)
        beta -= step
        if float(np.abs(step).max()) < 1e-10:
            break
    return (float(beta[0]), float(beta[1])), float(beta[2])


def out_of_fold(
    x: FloatArray, unsupported: Sequence[bool], groups: Sequence[str], w: FloatArray
) -> FloatArray:
    """Each answer's ``P(unsupported)`` fitted without its fold (a context's answers share one)."""
    y = np.asarray(unsupported, dtype=bool)
    order = list(dict.fromkeys(groups))
    fold_of = {g: i % FOLDS for i, g in enumerate(order)}
    fold = np.array([fold_of[g] for g in groups])
    p = np.zeros(y.size)
    for k in range(min(FOLDS, len(order))):
        test, train = fold == k, fold != k
        if not train.any():  # one context only: nothing to hold out against
            p[test] = 0.5
            continue
        if len(set(y[train].tolist())) < 2:
            p[test] = float(np.average(y[train], weights=w[train]))
            continue
        (w_score, w_coverage), bias = fit_logistic(x[train], y[train], w[train])
        p[test] = 1.0 / (1.0 + np.exp(-(bias + x[test] @ np.array([w_score, w_coverage]))))
    return p


def fit_calibration(
    scores: Sequence[float],
    coverages: Sequence[float],
    unsupported: Sequence[bool],
    *,
    groups: Sequence[str],
    kinds: Sequence[str] | None = None,
    model: str = "",
    fitted_on: str = "",
    base: Calibration = DEFAULT_CALIBRATION,
    n_abstained: int = 0,
) -> Calibration:
    """The verdict model fitted on labelled figures, with ``base``'s cut points."""
    y = [bool(u) for u in unsupported]
    left_out = f" after leaving out {n_abstained} that decline to answer" if n_abstained else ""
    _check_both(len(y) - sum(y), len(y), left_out)
    x = np.array([[model_input(s, c), float(c)] for s, c in zip(scores, coverages)])
    weights = kind_weights(list(kinds) if kinds is not None else ["answer"] * len(y))
    fitted, bias = fit_logistic(x, y, weights)
    held_out = out_of_fold(x, y, groups, weights)
    bad = np.asarray(y, dtype=bool)
    flagged = held_out >= base.block_at
    good_p, bad_p = held_out[~bad][:, None], held_out[bad][None, :]  # AUROC: ties count one half
    auroc = ((bad_p > good_p).sum() + 0.5 * (bad_p == good_p).sum()) / (good_p.size * bad_p.size)
    return replace(
        base,
        weights=fitted,
        bias=bias,
        model=model,
        n_supported=len(y) - sum(y),
        n_unsupported=sum(y),
        balanced_accuracy=float((flagged[bad].mean() + (~flagged[~bad]).mean()) / 2),
        auroc=float(auroc),
        n_abstained=n_abstained,
        fitted_on=fitted_on,
    )


def shipped_examples() -> list[LabelledAnswer]:
    """The labelled set shipped in ``camab_rag/data`` (its README names the sources)."""
    text = resources.files("camab_rag.data").joinpath(SHIPPED_SET).read_text(encoding="utf-8")
    rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    return [LabelledAnswer(*(r[k] for k in (*_FIELDS, "kind"))) for r in rows]


def _printed(done: int, total: int) -> None:
    if done == total or done * 10 // total > (done - 1) * 10 // total:  # a line per tenth
        print(f"calibrating: {done}/{total} answers scored", file=sys.stderr, flush=True)


def calibrate_steps(
    scorer: Any,
    examples: Iterable[object] | None = None,
    *,
    progress: bool | Progress = True,
) -> Steps[Calibration]:
    """:func:`calibrate` as a generator of model calls."""
    if not callable(getattr(scorer, "score", None)):
        swapped = callable(getattr(examples, "score", None))
        hint = " (the scorer comes first: calibrate(scorer, examples))" if swapped else ""
        raise InputError(f"scorer must have a score(requests) method{hint}")
    if examples is None:
        labelled = shipped_examples()
    elif isinstance(examples, (str, bytes, Mapping)) or not isinstance(examples, Iterable):
        raise TextTypeError(
            "examples must be a list of labelled answers (LabelledAnswer objects, mappings "
            f"or (question, context, answer, supported) tuples), got {type(examples).__name__}",
            field="examples",
            reason="type",
        )
    else:
        labelled = [_labelled(e, i) for i, e in enumerate(examples)]
    _check_both(sum(e.supported for e in labelled), len(labelled), "")
    report_progress = _printed if progress is True else (progress if callable(progress) else None)
    kept: list[tuple[LabelledAnswer, float, float]] = []
    for done, example in enumerate(labelled, start=1):
        asked = (example.question, example.context, example.answer, scorer)
        report = yield from answer_steps(*asked, block_on="any")  # the figures, not a verdict
        if not report.abstained:  # never flagged: its score must not move the fit
            covered = 1.0 if report.coverage is None else report.coverage
            kept.append((example, report.score, covered))
        if report_progress is not None:
            report_progress(done, len(labelled))
    fitted_on = (
        "the shipped calibration set" if examples is None else f"{len(labelled)} own answers"
    )
    return fit_calibration(
        [s for _, s, _ in kept],
        [c for _, _, c in kept],
        [not e.supported for e, _, _ in kept],
        groups=[json.dumps(e.context, sort_keys=True, default=str) for e, _, _ in kept],
        kinds=[e.kind for e, _, _ in kept],
        model=scorer_model_name(scorer),
        fitted_on=fitted_on + "; block_at and flag_at kept from the default",
        n_abstained=len(labelled) - len(kept),
    )


def _check_both(n_supported: int, n: int, left_out: str) -> None:
    if n_supported == 0 or n_supported == n:
        raise InputError(
            "calibration needs at least one supported and one unsupported answer, got "
            f"{n_supported} supported of {n}{left_out}"
        )


calibrate = synced(
    calibrate_steps,
    "calibrate",
    """The :class:`~camab_rag.groundedness.verdict.Calibration` of ``scorer``'s model for
    ``GroundednessFilter``, fitted (two calls per answer; the cut points kept) on the shipped
    labelled set or ``examples`` (:class:`LabelledAnswer` objects, mappings or ``(question,
    context, answer, supported)`` tuples). ``progress``: printed, or ``(done, total) -> None``.
    """,
)
acalibrate = asynced(
    calibrate_steps, "acalibrate", "Async :func:`calibrate` (scores with ``scorer.ascore``)."
)
