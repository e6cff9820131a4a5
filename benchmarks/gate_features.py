"""Per-answer figures the gate benchmark compares, all replayed from stored rows.

Every candidate is a *support* score (higher = better supported); a table's ROC AUC takes
"unsupported" as the positive class, so it ranks by the negated score.

* model-based, from the two anchor calls' token log-probs (:class:`TokenSupport`):
  ``gain`` (mean per-token context gain), ``explained`` (the share of the answer's
  no-context surprisal the context removes), ``full`` (mean log-prob with the context),
  ``min_sentence_gain`` / ``min_sentence_explained`` (the least supported sentence's gain
  or explained share), ``supported_tokens`` (share of tokens outside the unsupported
  spans), ``shipped`` (the library's own score, through its report);
* the same-model judge: ``log P(yes) - log P(no)`` (each summed over ``Yes``/``yes``);
* free baselines: ``lexical`` (share of the answer's content words present in the
  context), ``numbers`` (share of its numbers present), ``names`` (share of its
  capitalised words, sentence openers aside, present), ``length`` (minus the word count:
  a longer answer ranks as less supported).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks.gate_candidates import answer_candidates
from camab_rag.groundedness.report import support_report
from camab_rag.groundedness.score import STOPWORDS, support_score, words
from camab_rag.groundedness.wordforms import ContextWords
from camab_rag.token_support import TokenSupport

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_CAPITALISED = re.compile(r"\b[A-Z][\w'-]*")
_OPENER = re.compile(r"(?:^|[.!?]\s+)([A-Z][\w'-]*)")


def content_words(text: str) -> list[str]:
    return [w for w in words(text) if w not in STOPWORDS and not w.isdigit()]


def share_present(needles: list[str], haystack: set[str]) -> float:
    """Share of ``needles`` found in ``haystack`` (1.0 when there are none)."""
    if not needles:
        return 1.0
    return sum(n in haystack for n in needles) / len(needles)


def lexical(answer: str, context: str) -> float:
    """Share of the answer's content words that occur in the context (the issue's
    baseline is one minus this: the share absent)."""
    return share_present(content_words(answer), set(words(context)))


def numbers(answer: str, context: str) -> float:
    """Share of the answer's numbers that occur in the context."""
    found = set(_NUMBER.findall(context))
    return share_present(_NUMBER.findall(answer), found)


def names(answer: str, context: str) -> float:
    """Share of the answer's capitalised words (names, places; a word that opens a
    sentence is left out unless every capitalised word does) whose words all occur in
    the context."""
    openers = {m.group(1).lower() for m in _OPENER.finditer(answer)}
    capitalised = [w.lower() for w in _CAPITALISED.findall(answer)]
    inner = [w for w in capitalised if w not in openers] or capitalised
    found = set(words(context))
    if not inner:
        return 1.0
    return sum(all(p in found for p in words(w)) for w in inner) / len(inner)


def length(answer: str, context: str) -> float:
    return -float(len(words(answer)))


def judge(row: dict[str, Any]) -> float:
    j = row["judge"]
    return float(np.logaddexp(j["Yes"], j["yes"]) - np.logaddexp(j["No"], j["no"]))


def support_of(row: dict[str, Any]) -> TokenSupport:
    return TokenSupport.from_dict(row["support"], row["answer"])


def _explained(s: TokenSupport) -> float:
    surprisal = -s.mean_logprob("empty")
    return s.gain() / surprisal if surprisal > 0 else 0.0


def _min_sentence_gain(s: TokenSupport) -> float:
    gains = [span.gain for span in s.sentences()]
    return float(min(gains)) if gains else s.gain()


def _min_sentence_explained(s: TokenSupport) -> float:
    shares = [support_score(s.within([(x.start, x.end)])) for x in s.sentences()]
    return float(min(shares)) if shares else support_score(s)


def _supported_tokens(s: TokenSupport) -> float:
    mask = s.unsupported_mask()
    return 1.0 - float(s.counts[mask].sum() / s.counts.sum())


MODEL_SCORES: dict[str, Callable[[TokenSupport], float]] = {
    "gain": lambda s: s.gain(),
    "explained": _explained,
    "full": lambda s: s.mean_logprob("full"),
    "min_sentence_gain": _min_sentence_gain,
    "min_sentence_explained": _min_sentence_explained,
    "supported_tokens": _supported_tokens,
}
TEXT_SCORES: dict[str, Callable[[str, str], float]] = {
    "lexical": lexical,
    "numbers": numbers,
    "names": names,
    "length": length,
}


def features(row: dict[str, Any], context: str, threshold: float = 0.0) -> dict[str, float]:
    """Every candidate and baseline of one stored row."""
    support = support_of(row)
    out = {name: float(f(support)) for name, f in MODEL_SCORES.items()}
    present = ContextWords.of([context])  # as the library reads it
    out["shipped"] = support_report(support, threshold, context_words=present).score
    out.update(answer_candidates(support, context))
    out["judge"] = judge(row)
    for name, f in TEXT_SCORES.items():
        out[name] = float(f(row["answer"], context))
    return {k: (v if math.isfinite(v) else 0.0) for k, v in out.items()}
