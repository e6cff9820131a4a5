"""The gate's two anchor calls: the answer scored with the full context and with none.

In a chat prompt the earlier turns are context too, so the empty prompt also drops every
message before the last user message; the token support keeps the system prompt and the
user's earlier questions, whose words count as context (:func:`conversation_of`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from camab_rag.errors import InputError, ScorerError
from camab_rag.groundedness.wordforms import ContextWords
from camab_rag.prompts import (
    DEFAULT_SYSTEM_PROMPT,
    DEFAULT_USER_TEMPLATE,
    PromptBuilder,
    TemplatePromptBuilder,
)
from camab_rag.result import AttributionResult
from camab_rag.rewards import ScorerOracle, finite_reward
from camab_rag.scorers.base import Prompt, ResponseLogprobs, ScoreRequest
from camab_rag.segments import segment_documents, to_documents
from camab_rag.sentences import split_sentences
from camab_rag.steps import ScoreCall, Steps
from camab_rag.token_support import TokenSupport

_DIGITS = re.compile(r"\d+")


@dataclass(frozen=True)
class AnchorPrompts:
    """The full-context and the empty-context prompt of one answer."""

    full: Prompt
    empty: Prompt
    earlier_turns: int
    """Chat messages before the last user message (earlier turns), dropped from ``empty``."""
    conversation: tuple[str, ...] = ()
    """What the messages before the last user message hold as evidence."""

    def requests(self, response: str) -> list[ScoreRequest]:
        return [ScoreRequest(self.full, response), ScoreRequest(self.empty, response)]


def _last_user(messages: Sequence[Mapping[str, str]]) -> int:
    return max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)


def conversation_of(prompt: Prompt) -> tuple[str, ...]:
    """What a chat prompt's messages before the last user message hold as evidence: the
    system messages and the user's earlier questions (numbers cut out). What the user
    asserted and the assistant's answers are no evidence."""
    if isinstance(prompt, str):
        return ()
    messages = list(prompt)
    kept: list[str] = []
    for message in messages[: max(_last_user(messages), 0)]:
        text = str(message.get("content", ""))
        if message.get("role") == "system":
            kept.append(text)
        elif message.get("role") == "user":
            asked = [
                text[a:b] for a, b in split_sentences(text) if text[a:b].rstrip().endswith("?")
            ]
            kept += [_DIGITS.sub("", q) for q in asked]
    return tuple(kept)


def anchor_prompts(builder: PromptBuilder) -> AnchorPrompts:
    """The two anchor prompts of ``builder``: every segment, and none with the messages
    between the system message(s) and the last user message dropped."""
    n = builder.n_segments
    bare = builder.build(np.zeros(n, dtype=bool))
    full = builder.build(np.ones(n, dtype=bool))
    if isinstance(bare, str):
        return AnchorPrompts(full, bare, 0)
    last_user = _last_user(bare)
    kept = [m for i, m in enumerate(bare) if i >= last_user or m.get("role") == "system"]
    return AnchorPrompts(full, kept, len(bare) - len(kept), conversation_of(bare))


def default_builder(
    question: str,
    context: object,
    *,
    user_template: str = DEFAULT_USER_TEMPLATE,
    system_prompt: str | None = DEFAULT_SYSTEM_PROMPT,
    history: Sequence[Mapping[str, str]] | None = None,
) -> TemplatePromptBuilder:
    """The default template over ``context``'s documents, after ``history``."""
    if not isinstance(question, str):
        raise InputError(f"question must be a string, got {type(question).__name__}")
    documents = to_documents(context)
    return TemplatePromptBuilder(
        question,
        documents,
        segment_documents(documents, "chunk"),
        user_template=user_template,
        system_prompt=system_prompt,
        history=history,
    )


def context_words(
    context: object = None,
    *,
    result: AttributionResult | None = None,
    builder: PromptBuilder | None = None,
) -> ContextWords:
    """The :class:`~camab_rag.groundedness.wordforms.ContextWords` the answer is judged
    against: ``context``'s, else the attribution's segments', else the builder's documents'
    or full prompt's; with the question's subject."""
    if context is not None:
        texts = [d.text for d in to_documents(context)]
    elif result is not None and result.segments:
        texts = [s.text for s in result.segments]
    elif isinstance(builder, TemplatePromptBuilder):
        texts = [d.text for d in builder.documents]
    elif builder is not None:
        prompt = builder.build(np.ones(builder.n_segments, dtype=bool))
        texts = [prompt] if isinstance(prompt, str) else [str(m.get("content", "")) for m in prompt]
    else:
        texts = []
    question = result.question if result is not None else getattr(builder, "question", "")
    return ContextWords.of(texts, question if isinstance(question, str) else "")


def support_of(
    response: str,
    results: Sequence[object],
    earlier_turns: int = 0,
    conversation: Sequence[str] = (),
) -> TokenSupport:
    """The :class:`TokenSupport` of the two anchor results (full, empty), checked."""
    pair = [r for r in results if isinstance(r, ResponseLogprobs)]
    if len(pair) != 2 or len(results) != 2:
        raise ScorerError("the scorer did not return two ResponseLogprobs for the anchors")
    full, empty = pair
    return TokenSupport.from_logprobs(response, full, empty, earlier_turns, conversation)


def anchor_steps(prompts: AnchorPrompts, scorer: Any, response: str) -> Steps[TokenSupport]:
    """Score ``response`` under both anchor prompts (one batch of two requests)."""
    results = yield ScoreCall(scorer, prompts.requests(response))
    return support_of(response, results, prompts.earlier_turns, prompts.conversation)


def oracle_anchor_steps(oracle: ScorerOracle) -> Steps[tuple[TokenSupport, float, float]]:
    """Both anchors of an attribution's oracle, reusing the subsets it already scored (at
    most two more calls): the token support and the two rewards."""
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
    support = TokenSupport.from_logprobs(
        oracle.response, full, empty, prompts.earlier_turns, prompts.conversation
    )
    rewards = [
        finite_reward(oracle.reward_fn(lp.logprobs), "the reward function", mask)
        for lp, mask in ((full, full_mask), (empty, empty_mask))
    ]
    return support, rewards[0], rewards[1]
