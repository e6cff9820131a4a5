"""The gate's two anchor calls: the answer scored with the full context and with none (in
a chat, without the earlier turns too, whose system prompt and questions count as context)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from camab_rag.errors import ScorerError
from camab_rag.groundedness.wordforms import (
    CALENDAR,
    FOLLOW_UP,
    STOPWORDS,
    ContextWords,
    numbered_names,
    subject_forms,
)
from camab_rag.prompts import PromptBuilder, TemplatePromptBuilder
from camab_rag.result import AttributionResult
from camab_rag.rewards import ScorerOracle, finite_reward
from camab_rag.scorers.base import Prompt, ResponseLogprobs, ScoreRequest, prompt_texts
from camab_rag.segments import segment_documents, to_documents
from camab_rag.sentences import split_sentences
from camab_rag.steps import ScoreCall, Steps
from camab_rag.token_support import TokenSupport

_DIGITS = re.compile(r"\d+")


@dataclass(frozen=True)
class AnchorPrompts:
    """The full- and empty-context prompts; the chat messages dropped, their evidence and
    the user's own statements in them."""

    full: Prompt
    empty: Prompt
    earlier_turns: int
    conversation: tuple[str, ...] = ()
    told: tuple[str, ...] = ()

    def requests(self, response: str) -> list[ScoreRequest]:
        return [ScoreRequest(self.full, response), ScoreRequest(self.empty, response)]


def anchor_prompts(builder: PromptBuilder) -> AnchorPrompts:
    """The two anchor prompts of ``builder``: every segment, and none without the messages
    between the system message(s) and the last user message."""
    n = builder.n_segments
    bare = builder.build(np.zeros(n, dtype=bool))
    full = builder.build(np.ones(n, dtype=bool))
    if isinstance(bare, str):
        return AnchorPrompts(full, bare, 0)
    last = max((i for i, m in enumerate(bare) if m.get("role") == "user"), default=-1)
    kept = [m for i, m in enumerate(bare) if i >= last or m.get("role") == "system"]
    evidence: list[str] = []  # system messages and the user's earlier questions (numbers cut out)
    told: list[str] = []  # the user's statements ("Our wedding is in 45 days"), as asked
    for message in bare[: max(last, 0)]:
        text = str(message.get("content", ""))
        if message.get("role") == "system":
            evidence.append(text)
        elif message.get("role") == "user":
            said = [text[a:b] for a, b in split_sentences(text)]
            evidence += [_DIGITS.sub("", q) for q in said if q.rstrip().endswith("?")]
            told += [q for q in said if not q.rstrip().endswith("?")]
    return AnchorPrompts(full, kept, len(bare) - len(kept), tuple(evidence), tuple(told))


def default_builder(
    question: str, context: object, history: Sequence[Mapping[str, str]] | None = None
) -> TemplatePromptBuilder:
    """The default template over ``context``'s documents, after ``history``."""
    documents = to_documents(context)
    chunks = segment_documents(documents, "chunk")
    return TemplatePromptBuilder(question, documents, chunks, history=history)


def context_words(
    context: object = None,
    *,
    result: AttributionResult | None = None,
    builder: PromptBuilder | None = None,
    history: Sequence[Mapping[str, str]] | None = None,
) -> ContextWords:
    """The words the answer is judged against: ``context``'s, else the attribution's
    segments', else the builder's documents' or full prompt's; with the question's subject
    (and that of the question before it in ``history`` or the builder's, when it follows
    that one up; else the result's ``asked``)."""
    pages = None  # each text's document, where texts are segments
    if context is not None:
        texts = [d.text for d in to_documents(context)]
    elif result is not None and result.segments:
        texts = [s.text for s in result.segments]
        pages = [s.doc_index for s in result.segments]
    elif isinstance(builder, TemplatePromptBuilder):
        texts = [d.text for d in builder.documents]
    elif builder is not None:
        texts = prompt_texts(builder.build(np.ones(builder.n_segments, dtype=bool)))
    else:
        texts = []
    question = result.question if result is not None else getattr(builder, "question", "")
    question = question if isinstance(question, str) else ""
    history = history or getattr(builder, "history", None)
    if not history and result is not None and result.asked:  # read as it was attributed
        return ContextWords.of(texts, result.asked, pages)
    return ContextWords.of(texts, followed_up(question, history, texts), pages)


_OTHER = re.compile(r"\bthe other ([a-z]+)\b", re.IGNORECASE)


def followed_up(
    question: str, history: Sequence[Mapping[str, str]] | None, texts: Sequence[str] = ()
) -> str:
    """``question``, after the user's previous question when it follows that one up ("And
    on Sundays?": the recycling centre asked about before; no subject of its own but days),
    with the place it named swapped for the one the follow-up asks about (:func:`_other`)
    and its days left out when the follow-up names others ("on weekdays", then "And on
    Sundays?")."""
    earlier = [str(m.get("content", "")) for m in history or () if m.get("role") == "user"]
    own = subject_forms(question) - CALENDAR
    if earlier and (FOLLOW_UP.match(question) or not own):
        before = _other(earlier[-1], question, texts)
        before = _DAYS.sub("", before) if _DAYS.search(question) else before
        return f"{before} {question}"
    return question


_DAYS = re.compile(
    r"\s*\b(?:(?:on|at|during|over)\s+)?(?:the\s+)?(?:(?:mon|tues|wednes|thurs|fri|satur|sun)"
    r"days?|week-?days?|week-?ends?|(?:public\s+)?holidays?)\b",
    re.IGNORECASE,
)
"""The days a question names, with their preposition ("on weekdays", "at the weekend")."""


def _other(earlier: str, question: str, texts: Sequence[str]) -> str:
    """``earlier`` with its place swapped for the one ``question`` asks about: one it names
    that ``texts`` name too ("And at the Central gym?" or "And the Central one?" after "How
    much is the Harbour gym membership?"), or for "the other clinic" the one other place
    ``texts`` name before "clinic"; a numbered name for another of its word, "What about
    Line 14?" after a question on Line 4."""
    if (renumbered := _renumbered(earlier, question)) != earlier:
        return renumbered
    for name, noun in _NAMED.findall(question):  # "the Harbour one": a noun asked before
        name = _unled(name)
        for said in re.findall(r"[A-Za-z]+", earlier) if noun == "one" else [noun]:
            before = _names(earlier, said)
            placed = {n for t in texts for n in _names(t, said)}  # "FitZone Central" too
            if len(before) == 1 and name not in before and _among(name, placed):
                return _swapped(earlier, before.pop(), name)
    asked = _OTHER.search(question)
    if asked is None:
        return earlier
    before = _names(earlier, asked[1])
    runs = {n for t in texts for n in _names(t, asked[1])}
    others = {n for n in runs if not any(_among(b, {n}) for b in before)}
    if len(before) != 1 or len(others) != 1:
        return earlier
    return _swapped(earlier, before.pop(), others.pop())


def _renumbered(earlier: str, question: str) -> str:
    """``earlier`` with the one name it numbers ("Line 4") swapped for the name ``question``
    numbers with the same word ("Line 14")."""
    before = numbered_names(earlier)
    for name in sorted(numbered_names(question) - before):
        word, number = name.rsplit(" ", 1)
        same = [b for b in before if b.rsplit(" ", 1)[0] == word]
        asked = re.search(rf"\b{re.escape(word)}\s+{number}\b", question, re.IGNORECASE)
        if len(same) == 1 and asked and not word.isdigit():
            old = rf"\b{re.escape(word)}\s+{same[0].rsplit(' ', 1)[1]}\b"
            return re.sub(old, asked[0], earlier, flags=re.IGNORECASE)
    return earlier


def _swapped(text: str, name: str, other: str) -> str:
    """``text`` with the place ``name`` (whole words) put as ``other``."""
    return re.sub(rf"\b{re.escape(name)}\b", other, text)


_CAPITALISED = r"[A-Z][\w'-]*"
_NAMED = re.compile(rf"(?=\b((?:{_CAPITALISED}\s+)*{_CAPITALISED})\s+([A-Za-z]+)\b)")
"""A run of capitalised words and the word after it ("Old Town shop", "Hilltop Pool"), from
each capitalised word on (overlapping)."""


def _names(text: str, noun: str) -> set[str]:
    """The runs of capitalised words of ``text`` just before ``noun`` ("Old Town" of "the Old
    Town shop"), small words at their start aside ("Does Hilltop Pool": "Hilltop")."""
    run = rf"\b((?:{_CAPITALISED}\s+)*{_CAPITALISED})\s+(?i:{re.escape(noun)})s?\b"
    return {name for name in map(_unled, re.findall(run, text)) if name}


def _among(name: str, runs: set[str]) -> bool:
    """Whether ``name`` is one of ``runs`` or ends one ("Central" of "FitZone Central")."""
    return any(run == name or run.endswith(" " + name) for run in runs)


def _unled(run: str) -> str:
    """``run`` without the small words it starts with ("And", "The", "Does")."""
    words = run.split()
    while words and words[0].lower() in STOPWORDS:
        words.pop(0)
    return " ".join(words)


def support_of(response: str, results: Sequence[object], prompts: AnchorPrompts) -> TokenSupport:
    """The :class:`TokenSupport` of the two anchor results (full, empty), checked."""
    pair = [r for r in results if isinstance(r, ResponseLogprobs)]
    if len(pair) != 2 or len(results) != 2:
        raise ScorerError("the scorer did not return two ResponseLogprobs for the anchors")
    full, empty = pair
    return TokenSupport.from_logprobs(
        response, full, empty, prompts.earlier_turns, prompts.conversation, prompts.told
    )


def anchor_steps(prompts: AnchorPrompts, scorer: Any, response: str) -> Steps[TokenSupport]:
    """Score ``response`` under both anchor prompts (one batch of two requests)."""
    results = yield ScoreCall(scorer, prompts.requests(response))
    return support_of(response, results, prompts)


def oracle_anchor_steps(oracle: ScorerOracle) -> Steps[tuple[TokenSupport, float, float]]:
    """The anchors' token support and two rewards, from the subsets the oracle scored."""
    prompts = anchor_prompts(oracle.builder)
    n = oracle.builder.n_segments
    full_mask, empty_mask = np.ones(n, dtype=bool), np.zeros(n, dtype=bool)
    masks = [full_mask] if prompts.earlier_turns else [full_mask, empty_mask]
    yield from oracle.rewards(np.array(masks))
    full = oracle.logprobs(full_mask)
    if prompts.earlier_turns:
        empty = yield from oracle.prompt_logprobs("empty without earlier turns", prompts.empty)
    else:
        empty = oracle.logprobs(empty_mask)
    support = support_of(oracle.response, [full, empty], prompts)
    rewards = [
        finite_reward(oracle.reward_fn(lp.logprobs), "the reward function", mask)
        for lp, mask in ((full, full_mask), (empty, empty_mask))
    ]
    return support, rewards[0], rewards[1]
