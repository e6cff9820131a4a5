"""Fit the gate's threshold to your own model on a handful of labelled answers.

The shipped :data:`~camab_rag.groundedness.report.DEFAULT_THRESHOLD` was fitted for the embedded
SmolLM2 on FRANK (``BENCHMARKS.md``, "Groundedness gate"); another model spreads its
scores differently. :func:`calibrate` judges each labelled answer with
:func:`~camab_rag.groundedness.assess_answer` (two model calls each) and returns the
threshold that best separates the supported answers from the unsupported ones (highest
balanced accuracy), with the figures it was chosen on. Answers that decline to answer
("I don't know") are left out of the fit and counted: the gate never flags them, whatever
their score.
:meth:`GroundednessFilter.calibrate <camab_rag.groundedness.GroundednessFilter.calibrate>`
returns a filter that uses it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from camab_rag.errors import InputError
from camab_rag.groundedness.gain import answer_steps
from camab_rag.prompts import DEFAULT_SYSTEM_PROMPT, DEFAULT_USER_TEMPLATE
from camab_rag.scorers.base import scorer_model_name
from camab_rag.steps import Steps, asynced, synced
from camab_rag.text_gate import check_examples


@dataclass(frozen=True)
class LabelledAnswer:
    """One answer with its label: does ``context`` support ``answer`` to ``question``?"""

    question: str
    context: object
    answer: str
    supported: bool


@dataclass(frozen=True)
class Calibration:
    """A threshold fitted on labelled answers, and what it was fitted on.

    ``balanced_accuracy`` and ``auroc`` are in-sample (the threshold was chosen on the same
    answers), so optimistic on a handful of examples. ``n_abstained``: answers left out
    because they decline to answer.
    """

    threshold: float
    n_supported: int
    n_unsupported: int
    balanced_accuracy: float
    auroc: float
    model: str
    n_abstained: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "threshold": self.threshold,
            "n_supported": self.n_supported,
            "n_unsupported": self.n_unsupported,
            "balanced_accuracy": self.balanced_accuracy,
            "auroc": self.auroc,
            "model": self.model,
            "n_abstained": self.n_abstained,
        }


def _labelled(example: object, index: int) -> LabelledAnswer:
    if isinstance(example, LabelledAnswer):
        return example
    if isinstance(example, Mapping):
        try:
            fields = [example[k] for k in ("question", "context", "answer", "supported")]
        except KeyError as missing:
            raise InputError(f"labelled example {index} has no {missing.args[0]!r}") from None
    elif isinstance(example, Sequence) and not isinstance(example, str) and len(example) == 4:
        fields = list(example)
    else:
        raise InputError(
            f"labelled example {index} must be a LabelledAnswer, a mapping with question, "
            "context, answer and supported, or a (question, context, answer, supported) tuple"
        )
    question, context, answer, supported = fields
    if not isinstance(supported, (bool, np.bool_)):
        raise InputError(f"labelled example {index}: 'supported' must be True or False")
    if not isinstance(answer, str) or not answer.strip():
        raise InputError(f"labelled example {index}: the answer is empty")
    return LabelledAnswer(str(question), context, answer, bool(supported))


def auroc(supported_scores: Sequence[float], unsupported_scores: Sequence[float]) -> float:
    """P(a supported answer scores above an unsupported one); ties count one half."""
    pos = np.asarray(supported_scores, dtype=float)[:, None]
    neg = np.asarray(unsupported_scores, dtype=float)[None, :]
    return float(((pos > neg).sum() + 0.5 * (pos == neg).sum()) / (pos.size * neg.size))


def fit_threshold(
    supported_scores: Sequence[float], unsupported_scores: Sequence[float]
) -> tuple[float, float]:
    """The threshold (a midpoint between adjacent scores) with the highest balanced
    accuracy of ``score >= threshold`` for supported, and that accuracy. Ties go to the
    middle of the best run of candidates."""
    pos = np.asarray(supported_scores, dtype=float)
    neg = np.asarray(unsupported_scores, dtype=float)
    values = np.unique(np.concatenate([pos, neg]))
    candidates = np.concatenate(
        [[values[0] - 1.0], (values[:-1] + values[1:]) / 2, [values[-1] + 1.0]]
    )
    accuracy = np.array(
        [((pos >= t).mean() + (neg < t).mean()) / 2 for t in candidates], dtype=float
    )
    best = np.flatnonzero(accuracy >= accuracy.max() - 1e-12)
    chosen = float(candidates[best[len(best) // 2]])
    return chosen, float(accuracy.max())


def calibrate_steps(
    examples: Iterable[object],
    scorer: Any,
    *,
    user_template: str = DEFAULT_USER_TEMPLATE,
    system_prompt: str | None = DEFAULT_SYSTEM_PROMPT,
) -> Steps[Calibration]:
    """:func:`calibrate` as a generator of model calls."""
    examples = check_examples(examples)  # a list, questions and answers through the gate
    labelled = [_labelled(example, i) for i, example in enumerate(examples)]
    _check_both(sum(e.supported for e in labelled), len(labelled), "")
    scores: dict[bool, list[float]] = {True: [], False: []}
    abstained = 0
    for example in labelled:
        report = yield from answer_steps(
            example.question,
            example.context,
            example.answer,
            scorer,
            user_template=user_template,
            system_prompt=system_prompt,
        )
        if report.abstained:  # the gate never flags it: its score must not move the threshold
            abstained += 1
            continue
        scores[example.supported].append(report.score)
    left_out = f" after leaving out {abstained} that decline to answer" if abstained else ""
    _check_both(len(scores[True]), len(scores[True]) + len(scores[False]), left_out)
    threshold, accuracy = fit_threshold(scores[True], scores[False])
    return Calibration(
        threshold=threshold,
        n_supported=len(scores[True]),
        n_unsupported=len(scores[False]),
        balanced_accuracy=accuracy,
        auroc=auroc(scores[True], scores[False]),
        model=scorer_model_name(scorer),
        n_abstained=abstained,
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
    """Fit the gate's threshold for ``scorer``'s model on labelled answers (two model calls
    per answer).

    ``examples``: :class:`LabelledAnswer` objects, mappings with ``question``,
    ``context``, ``answer`` and ``supported``, or ``(question, context, answer,
    supported)`` tuples; at least one supported and one unsupported. A few dozen answers
    like the ones your application gives (same model, same kind of context) are enough to
    place the threshold; more make it steadier. Returns a :class:`Calibration`; pass its
    ``threshold`` to :class:`~camab_rag.groundedness.GroundednessFilter`, or use
    :meth:`GroundednessFilter.calibrate`.
    """,
)
acalibrate = asynced(
    calibrate_steps, "acalibrate", "Async :func:`calibrate` (scores with ``scorer.ascore``)."
)


__all__ = [
    "Calibration",
    "LabelledAnswer",
    "acalibrate",
    "auroc",
    "calibrate",
    "calibrate_steps",
    "fit_threshold",
]
