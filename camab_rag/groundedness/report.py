"""The groundedness verdict of one answer, and the figures it is built from."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from camab_rag.errors import InputError
from camab_rag.groundedness.abstention import is_abstention
from camab_rag.groundedness.score import (
    SCORE_NAME,
    STOPWORDS,
    UNCHECKED,
    absent_pieces,
    answer_score,
    checked_coverage,
    explained,
    informative_score,
    misread_words,
    support_score,
    taken_pieces,
    unasked_facts,
    unchecked_facts,
    words,
)
from camab_rag.groundedness.verdict import DEFAULT_CALIBRATION, Calibration, Verdict
from camab_rag.groundedness.wordforms import (
    CLOCK,
    ContextWords,
    other_kinds_of,
    outdated,
    price_disputes,
    rival_spans,
    unled,
)
from camab_rag.methods import METHODS
from camab_rag.result import AttributionResult, StatementAttribution, cast_fields, fields_dict
from camab_rag.scorers.base import ScoredBy
from camab_rag.token_support import Span, TokenSupport

GainSource = Literal["observed", "measured", "surrogate"]
BlockOn = Literal["any", "facts"]
ContextPart = Literal["documents", "conversation"]

DEFAULT_BLOCK_ON: BlockOn = "facts"  # the rule every verdict a user sees is read with
DEFAULT_THRESHOLD = 0.49  # two-verdict rule of a surrogate report (benchmarks gate report)


@dataclass(frozen=True)
class SentenceGroundedness:
    """One answer sentence's figures and verdict, read as the answer's; ``support_from``: the
    parts of the context its words come from; ``contested``: its numbers two sources state
    differently (at most ``uncertain``), ``outdated`` those of them only out-of-date pages
    state (the answer took history); ``misread``: its ``unchecked_facts`` the context
    states otherwise (another subject's number, an opposite), which never block;
    ``elsewhere``: those contested or misread words only pages about another kind of what
    is asked state, and those kinds (``elsewhere_kinds``: "South district").
    ``grounded`` is ``False`` only for ``unsupported`` (it passes the gate, as the report's
    ``grounded``); ``supported`` reads the verdict: ``None`` for ``uncertain``."""

    text: str
    start: int
    end: int
    gain: float
    top_share: float
    grounded: bool
    source: Literal["measured", "surrogate"] = "surrogate"
    abstention: bool = False
    support_from: tuple[ContextPart, ...] = ()
    score: float | None = None
    verdict: Verdict | None = None
    p_unsupported: float | None = None
    coverage: float | None = None
    informative: float | None = None
    unchecked_facts: tuple[str, ...] | None = None
    contested: tuple[str, ...] | None = None
    misread: tuple[str, ...] = ()
    outdated: tuple[str, ...] = ()
    elsewhere: tuple[str, ...] = ()
    elsewhere_kinds: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.verdict is None:
            object.__setattr__(self, "verdict", "supported" if self.grounded else "unsupported")

    @property
    def supported(self) -> bool | None:
        """``True`` for ``supported``, ``False`` for ``unsupported``, ``None`` for
        ``uncertain`` (a source disputes it, or it is worded differently), as
        ``CitedSentence.supported``."""
        return {"supported": True, "unsupported": False}.get(str(self.verdict))

    def __repr__(self) -> str:
        p = "" if self.p_unsupported is None else f", p_unsupported={self.p_unsupported:.2f}"
        text = self.text if len(self.text) <= 40 else self.text[:37] + "..."
        return f"SentenceGroundedness({text!r}, {self.verdict}{p})"

    def to_dict(self) -> dict[str, Any]:
        return _plain(self) | {"supported": self.supported}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SentenceGroundedness:
        done = {k: _optional_words(data.get(k)) for k in ("unchecked_facts", "contested")}
        parts = {
            k: tuple(data.get(k) or ())
            for k in ("support_from", "misread", "outdated", "elsewhere", "elsewhere_kinds")
        }
        # without "grounded": the verdict says it, else (stored before the rename)
        # "supported" held the pass bit
        verdict = data.get("verdict")
        passes = bool(data.get("supported")) if verdict is None else verdict != "unsupported"
        passed = {} if "grounded" in data else {"grounded": passes}
        return cls(**cast_fields(cls, data, {**done, **parts, **passed}))


@dataclass(frozen=True)
class GroundednessReport:
    """The groundedness verdict of one answer: ``score`` (the share of its least supported
    sentence's surprisal that the context explains), ``verdict`` (from the calibrated
    ``p_unsupported``, or ``score >= threshold`` when one was given), ``coverage`` (the share
    of informative words the context holds), ``sentences``, ``unsupported_spans`` and
    ``unchecked_facts`` (``None`` when the context's words are unknown)."""

    score: float
    threshold: float
    grounded: bool
    source: GainSource
    full_reward: float | None
    empty_reward: float | None
    top_share: float
    top_k: int
    top_segments: list[int] = field(default_factory=list)
    sentences: list[SentenceGroundedness] = field(default_factory=list)
    extra_queries: int = 0
    token_support: TokenSupport | None = None
    unsupported_spans: list[Span] = field(default_factory=list)
    abstained: bool = False
    scored_by: ScoredBy | None = None
    verdict: Verdict | None = None
    p_unsupported: float | None = None
    coverage: float | None = None
    informative: float | None = None
    calibration: Calibration | None = None
    unchecked_facts: tuple[str, ...] | None = None
    misread: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.verdict is None:
            object.__setattr__(self, "verdict", "supported" if self.grounded else "unsupported")

    def __repr__(self) -> str:
        p = "" if self.p_unsupported is None else f", p_unsupported={self.p_unsupported:.2f}"
        flagged = f"{len(self.unsupported_sentences)} unsupported"
        contested = [w for s in self.sentences for w in s.contested or ()]
        flagged += f", contested: {', '.join(map(repr, contested))}" if contested else ""
        return (
            f"GroundednessReport({'abstained' if self.abstained else self.verdict}{p}, "
            f"score={self.score:.3f}, {len(self.sentences)} sentence(s), {flagged})"
        )

    @property
    def unsupported_sentences(self) -> list[SentenceGroundedness]:
        return [s for s in self.sentences if not s.grounded]

    @property
    def earlier_turns(self) -> int:
        """Earlier chat messages counted as context (left out of the empty anchor)."""
        return self.token_support.earlier_turns if self.token_support is not None else 0

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON; ``decided_by``: ``"calibration"`` or ``"threshold"``."""
        calibrated = self.calibration is not None
        return {
            **_plain(self),
            "score_name": SCORE_NAME,
            "decided_by": "calibration" if calibrated else "threshold",
            "threshold": None if calibrated else self.threshold,
            "earlier_turns": self.earlier_turns,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GroundednessReport:
        support, threshold, fit = (
            data.get(k) for k in ("token_support", "threshold", "calibration")
        )
        done = {
            "threshold": float(DEFAULT_THRESHOLD if threshold is None else threshold),
            "top_segments": [int(i) for i in data.get("top_segments", [])],
            "sentences": [SentenceGroundedness.from_dict(x) for x in data.get("sentences", [])],
            "token_support": TokenSupport.from_dict(support) if support else None,
            "unsupported_spans": [Span(**x) for x in data.get("unsupported_spans", [])],
            "scored_by": ScoredBy.from_dict(data["scored_by"]) if data.get("scored_by") else None,
            "calibration": Calibration.from_dict(fit) if fit else None,
            "unchecked_facts": _optional_words(data.get("unchecked_facts")),
            "misread": tuple(data.get("misread") or ()),
        }
        return cls(**cast_fields(cls, data, done))


def _plain(report: object) -> dict[str, Any]:
    """A report's fields as JSON: tuples as lists, nested objects by their ``to_dict``."""

    def plain(value: Any) -> Any:
        if isinstance(value, (list, tuple)):
            return [plain(v) for v in value]
        return value.to_dict() if hasattr(value, "to_dict") else value

    return {k: plain(v) for k, v in fields_dict(report).items()}


def _optional_words(value: Any) -> tuple[str, ...] | None:
    return None if value is None else tuple(str(w) for w in value)


def top_share(scores: Sequence[float] | NDArray[np.float64], k: int) -> float:
    """Share of the positive score mass carried by the ``k`` largest scores (0 if none)."""
    if k < 1:
        raise InputError(f"top_k must be >= 1, got {k}")
    positive = np.clip(np.asarray(scores, dtype=float), 0.0, None)
    total = float(positive.sum())
    if total <= 0.0:
        return 0.0
    return float(np.sort(positive)[::-1][:k].sum() / total)


def _top(result: AttributionResult | None, k: int) -> dict[str, Any]:
    if result is None or not result.n_segments:
        return {"top_share": 0.0, "top_k": k, "top_segments": []}
    top = result.top_k(min(k, result.n_segments))
    return {"top_share": top_share(result.scores, k), "top_k": k, "top_segments": top}


def context_gain(result: AttributionResult) -> tuple[float, float, GainSource]:
    """``L(C)`` and ``L(empty)``: ``"observed"`` in the attribution history, else as the
    linear surrogate ``V(S) = w0 + sum(w_i, i in S)`` predicts them."""
    n = result.n_segments
    full, empty = result.reward_of(np.ones(n, bool)), result.reward_of(np.zeros(n, bool))
    if full is not None and empty is not None:
        return full, empty, "observed"
    if not getattr(METHODS.get(result.method), "models_reward", True):
        raise InputError(
            f"{result.method} scores carry no estimate of the context gain: pass scorer= "
            "and context= to measure it"
        )
    if result.rewards.size == 0 or result.masks.shape[0] != result.rewards.size:
        raise InputError("the attribution holds no evaluated subsets to estimate the score from")
    scores = np.asarray(result.scores, dtype=float)
    intercept = float(result.rewards.mean() - result.masks.mean(axis=0) @ scores)
    return intercept + float(scores.sum()), intercept, "surrogate"


def _abstained(answer: str, sentences: Sequence[SentenceGroundedness]) -> bool:
    return all(s.abstention for s in sentences) if sentences else is_abstention(answer)


def build_report(
    result: AttributionResult, threshold: float | None, top_k: int
) -> GroundednessReport:
    """The report of an attribution without token support: each sentence's gain is the sum
    of its statement scores (a lone claim takes the observed gain), read against
    ``L(empty)``; ``score >= threshold`` decides."""
    threshold = DEFAULT_THRESHOLD if threshold is None else threshold
    full, empty, source = context_gain(result)
    claims = [i for i, s in enumerate(result.statements) if not is_abstention(s.text)]
    known = ContextWords.of([s.text for s in result.segments], result.question)
    sentences = []
    for i, s in enumerate(result.statements):
        gain = full - empty if source == "observed" and claims == [i] else float(np.sum(s.scores))
        abstention, score = i not in claims, explained(empty + gain, empty)
        own = () if abstention else tuple(unchecked_facts(s.text, known))
        sentences.append(
            SentenceGroundedness(
                text=s.text,
                start=s.start,
                end=s.end,
                gain=gain,
                top_share=top_share(s.scores, top_k),
                grounded=bool(abstention or score >= threshold),
                abstention=abstention,
                score=score,
                unchecked_facts=own if result.segments else None,
                misread=misread_words(s.text, known) if own else (),
            )
        )
    abstained = _abstained(result.response, sentences)
    facts = [w for s in sentences if not s.abstention for w in s.unchecked_facts or ()]
    if not result.statements:
        facts = unchecked_facts(result.response, known)
    claimed = [s.score for s in sentences if not s.abstention and s.score is not None]
    score = answer_score(claimed, explained(full, empty))
    return GroundednessReport(
        score=score,
        threshold=float(threshold),
        grounded=bool(abstained or score >= threshold),
        source=source,
        full_reward=full,
        empty_reward=empty,
        **_top(result, top_k),
        sentences=sentences,
        abstained=abstained,
        scored_by=result.scored_by,
        unchecked_facts=tuple(dict.fromkeys(facts)) if result.segments else None,
        misread=tuple(dict.fromkeys(w for s in sentences for w in s.misread)),
    )


def _judged(
    score: float,
    covered: float | None,
    threshold: float | None,
    calibration: Calibration,
    contested: Sequence[str] | None = None,
) -> tuple[Verdict, float | None]:
    """Calibrated verdict and ``P(unsupported)`` (``supported`` at most ``uncertain`` when a
    value is ``contested``), or two verdicts: ``score >= threshold``."""
    p = None if covered is None else calibration.p_unsupported(score, covered)
    cut = DEFAULT_THRESHOLD if threshold is None else threshold
    verdict: Verdict = "supported" if score >= cut else "unsupported"
    if threshold is not None or p is None:
        return verdict, p
    verdict = calibration.verdict(p)
    return ("uncertain" if verdict == "supported" and contested else verdict), p


def _decided(
    report: GroundednessReport, threshold: float | None, calibration: Calibration
) -> GroundednessReport:
    """``report`` with its verdicts; a disputed value or an unchecked fact (a number, date
    or name the context does not state) is never ``supported``."""
    sentences = []
    for s in report.sentences:
        doubts = [*(s.contested or ()), *(s.unchecked_facts or ())]
        verdict, p = (
            ("supported", 0.0)
            if s.abstention or s.score is None
            else _judged(s.score, s.coverage, threshold, calibration, doubts)
        )
        sentences.append(
            replace(s, verdict=verdict, p_unsupported=p, grounded=verdict != "unsupported")
        )
    contested = [w for s in sentences if not s.abstention for w in s.contested or ()]
    contested += report.unchecked_facts or ()
    verdict, p = _judged(report.score, report.coverage, threshold, calibration, contested)
    if report.abstained:
        verdict, p = "supported", 0.0
    return replace(
        report,
        sentences=sentences,
        verdict=verdict,
        p_unsupported=p,
        grounded=verdict != "unsupported",
        calibration=calibration if threshold is None and p is not None else None,
    )


def support_parts(
    text: str, document_words: Collection[str] | None, conversation: Collection[str]
) -> tuple[ContextPart, ...]:
    """The parts of the context ``text`` takes content words from: ``"documents"``, and
    ``"conversation"`` for one no document holds."""
    if document_words is None:
        return ()
    content = [w for w in words(text) if w not in STOPWORDS]
    parts: list[ContextPart] = ["documents"] if any(w in document_words for w in content) else []
    if any(w in conversation and w not in document_words for w in content):
        parts.append("conversation")
    return tuple(parts)


def _elsewhere(found: Sequence[str], context: Collection[str], sentence: str) -> dict[str, Any]:
    """``elsewhere`` and ``elsewhere_kinds`` of a sentence whose contested or misread words
    are ``found`` (:func:`other_kinds_of`)."""
    kinds = {w: other_kinds_of(w, context, sentence) for w in dict.fromkeys(found)}
    return {
        "elsewhere": tuple(w for w, of in kinds.items() if of),
        "elsewhere_kinds": tuple(dict.fromkeys(k for of in kinds.values() for k in of)),
    }


def support_report(
    support: TokenSupport,
    threshold: float | None = None,
    *,
    source: GainSource = "measured",
    extra_queries: int = 0,
    scored_by: ScoredBy | None = None,
    result: AttributionResult | None = None,
    top_k: int = 2,
    context_words: Collection[str] | None = None,
) -> GroundednessReport:
    """The report from the two anchor calls' token log-probs (scores, coverage, verdicts,
    unsupported spans); ``result`` adds the top shares; ``context_words`` (default:
    ``result``'s segments; with the conversation's) discount words the context lacks."""
    if context_words is None and result is not None and result.segments:
        context_words = ContextWords.of([s.text for s in result.segments])
    said = ContextWords.of([], " ".join(support.told))  # the user's earlier statements:
    told = ContextWords(asked_values=said.asked_values, told=said.told)  # numbers as asked
    documents, conversation = context_words, ContextWords.of(support.conversation) | told
    # "from the conversation" only where there was one (a first turn's system prompt is none)
    said_before = conversation if support.earlier_turns else frozenset()
    if documents is not None:
        known = documents if isinstance(documents, ContextWords) else ContextWords(documents)
        context_words = known | conversation
    statements: Sequence[StatementAttribution] = result.statements if result is not None else ()
    shares = {(s.start, s.end): top_share(s.scores, top_k) for s in statements}
    sentences: list[SentenceGroundedness] = []
    before = ""
    known_words = context_words or ()
    unasked = () if context_words is None else tuple(unasked_facts(support.response, context_words))
    for span in support.sentences():
        abstention = is_abstention(span.text)
        within = support.within([(span.start, span.end)])
        score = support_score(within, context_words)
        covered = None if context_words is None else checked_coverage(span.text, context_words)
        facts = contested = None
        if context_words is not None:
            facts = () if abstention else tuple(unchecked_facts(span.text, context_words))
            facts += unasked  # a bare "Yes."
            rivals = () if abstention else rival_spans(span.text, context_words, before)
            priced = {} if abstention else price_disputes(span.text, context_words)  # "is free"
            contested = tuple(
                dict.fromkeys(
                    [
                        *(span.text[a:b] for a, b in rivals),
                        *(w for ws in priced.values() for w in ws),
                    ]
                )
            )
        before = span.text
        misread = misread_words(span.text, known_words) if facts else ()
        sentences.append(
            SentenceGroundedness(
                text=span.text,
                start=span.start,
                end=span.end,
                gain=span.gain,
                top_share=shares.get((span.start, span.end), 0.0),
                grounded=True,  # verdicts: _decided
                source="measured",
                abstention=abstention,
                support_from=support_parts(span.text, documents, said_before),
                score=score,
                coverage=covered,
                informative=informative_score(within, context_words),
                unchecked_facts=facts,
                contested=contested,
                misread=misread,
                outdated=tuple(w for w in contested or () if outdated(w, known_words, span.text)),
                **_elsewhere([*(contested or ()), *misread], known_words, span.text),
            )
        )
    abstained = _abstained(support.response, sentences)
    claims = [s for s in sentences if not s.abstention and s.score is not None]
    claimed = [s.score for s in claims if s.score is not None]
    score = answer_score(claimed, support_score(support, context_words))
    informative = answer_score(
        [s.informative for s in claims if s.informative is not None],
        informative_score(support, context_words),
    )
    if context_words is None:
        covered, found, facts = None, support.unsupported_spans(), None
    else:  # spans of unchecked words alone ("get in") are dropped
        covered = min(
            (float(s.coverage) for s in claims if s.coverage is not None),
            default=checked_coverage(support.response, context_words),
        )
        taken, absent = taken_pieces(support, context_words), absent_pieces(support, context_words)
        found = support.unsupported_spans(taken=taken, absent=absent)
        # a clock mark alone ("pm" of a held "6 pm") is the time's spelling, not a claim
        found = [s for s in found if not all(w in UNCHECKED | CLOCK for w in words(s.text))]
        claimed_text = unled(support.response)  # "Based on the context, ...": no claim
        found = [s for s in found if claimed_text[s.start : s.end].strip()]
        facts = tuple(dict.fromkeys(w for s in claims for w in s.unchecked_facts or ()))
    quiet = [(s.start, s.end) for s in sentences if s.abstention]  # abstentions flag nothing
    spans = [span for span in found if not any(a <= span.start < b for a, b in quiet)]
    report = GroundednessReport(
        score=score,
        threshold=float(DEFAULT_THRESHOLD if threshold is None else threshold),
        grounded=True,
        source=source,
        full_reward=support.mean_logprob("full"),
        empty_reward=support.mean_logprob("empty"),
        **_top(result, top_k),
        sentences=sentences,
        extra_queries=extra_queries,
        token_support=support,
        unsupported_spans=spans,
        abstained=abstained,
        scored_by=scored_by,
        coverage=covered,
        informative=informative,
        unchecked_facts=facts,
        misread=tuple(dict.fromkeys(w for s in claims for w in s.misread)),
    )
    return _decided(report, threshold, DEFAULT_CALIBRATION)


def read_by(report: GroundednessReport, block_on: BlockOn = DEFAULT_BLOCK_ON) -> GroundednessReport:
    """``report`` read with the rule ``block_on`` (every verdict a user sees is read here):
    under ``"facts"`` an ``unsupported`` sentence (or answer) whose ``unchecked_facts`` the
    context lacks in every form is blocked; with none, or only ``misread`` ones, it is
    ``uncertain`` (reworded, or a value to check)."""
    if block_on != "facts" or report.unchecked_facts is None:
        return report
    sentences = [
        replace(s, verdict="uncertain", grounded=True)
        if s.verdict == "unsupported" and not s.abstention and not _absent(s)
        else s
        for s in report.sentences
    ]
    if report.verdict != "unsupported" or _absent(report):
        return replace(report, sentences=sentences)
    return replace(report, sentences=sentences, verdict="uncertain", grounded=True)


def _absent(judged: SentenceGroundedness | GroundednessReport) -> bool:
    return any(w not in judged.misread for w in judged.unchecked_facts or ())


def recalibrated(report: GroundednessReport, calibration: Calibration) -> GroundednessReport:
    """``report`` with its verdicts read with ``calibration`` (as is without coverage)."""
    return report if report.coverage is None else _decided(report, None, calibration)
