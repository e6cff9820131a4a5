"""RequestEncoder: a call's requests encoded together get the ids each gets alone."""

from __future__ import annotations

from dataclasses import astuple
from typing import Any, ClassVar

import pytest

from camab_rag.errors import InputError
from camab_rag.scorers import TransformersScorer
from camab_rag.scorers.base import ScoreRequest
from camab_rag.scorers.transformers_scorer import RequestEncoder

CONTEXT = [
    "The Eiffel Tower is in Paris.",
    "It was finished in 1889.",
    "Gustave Eiffel's company built it.",
    "Paris is the capital of France.",
]


def chat(kept: list[int]) -> list[dict[str, str]]:
    context = "\n".join(CONTEXT[i] for i in kept)
    return [
        {"role": "system", "content": "Answer from the context."},
        {"role": "user", "content": f"Context:\n{context}\n\nQuestion: Where is the tower?"},
    ]


REQUESTS = [
    ScoreRequest(chat([0, 1, 2, 3]), "It is in Paris, France."),
    ScoreRequest(chat([1, 2]), "It is in Paris, France."),
    ScoreRequest(chat([]), "It is in Paris, France."),
    ScoreRequest(chat([0, 3]), "\nParis"),
    ScoreRequest("Hello wor", "ld peace."),  # a joint tokenization merges at the boundary
    ScoreRequest("The capital of France is", " Paris."),
    ScoreRequest("", "Paris."),  # empty prompt: the BOS token alone
    ScoreRequest("Ünïcödé prompt →", " 東京 and Zürich."),
]


class CountingTokenizer:
    """The real tokenizer, counting the texts it is asked to encode."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.texts = 0

    def __call__(self, text: Any, **kwargs: Any) -> Any:
        self.texts += len(text) if isinstance(text, list) else 1
        return self.tokenizer(text, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.tokenizer, name)


def test_ids_follow_the_boundary_rule(smollm2_scorer: TransformersScorer) -> None:
    tokenizer = smollm2_scorer.tokenizer
    encoder = RequestEncoder(tokenizer, smollm2_scorer.render_prompt)
    for request, got in zip(REQUESTS, encoder.encode(REQUESTS)):
        text = smollm2_scorer.render_prompt(request.prompt)
        plain = isinstance(request.prompt, str)
        prompt = tokenizer(text, add_special_tokens=plain)["input_ids"] or [tokenizer.bos_token_id]
        assert list(got.prompt_ids) == prompt
        alone = tokenizer(request.response, add_special_tokens=False)["input_ids"]
        assert list(got.response_ids) == alone
        if request.response.isascii():  # a byte-split character shows in each of its tokens
            assert "".join(got.tokens) == request.response


def test_a_batch_equals_each_request_alone(smollm2_scorer: TransformersScorer) -> None:
    batched = RequestEncoder(smollm2_scorer.tokenizer, smollm2_scorer.render_prompt)
    alone = RequestEncoder(smollm2_scorer.tokenizer, smollm2_scorer.render_prompt)
    together = batched.encode(REQUESTS)
    one_by_one = [alone.encode([r])[0] for r in REQUESTS]
    assert together == one_by_one
    assert [astuple(smollm2_scorer.encode(r)) for r in REQUESTS] == [astuple(e) for e in together]


def test_each_distinct_response_is_tokenized_once(smollm2_scorer: TransformersScorer) -> None:
    counting = CountingTokenizer(smollm2_scorer.tokenizer)
    encoder = RequestEncoder(counting, smollm2_scorer.render_prompt, kept_responses=2)
    requests = [ScoreRequest(chat(kept), "It is in Paris.") for kept in ([0], [1], [2], [3])]
    encoder.encode(requests)
    # one batched call for the 4 prompts; the response once; no joint text (the response
    # tokenized alone decodes back to itself)
    assert counting.texts == 4 + 1
    encoder.encode(requests)
    assert counting.texts == 2 * 4 + 1  # the response's tokens were kept
    encoder.encode([ScoreRequest("a", "One."), ScoreRequest("b", "Two.")])
    assert counting.texts == 2 * 4 + 1 + 2 + 2
    encoder.encode([ScoreRequest("a", "It is in Paris.")])  # the oldest was dropped
    assert counting.texts == 2 * 4 + 1 + 2 + 2 + 2


def test_bad_responses_are_named(smollm2_scorer: TransformersScorer) -> None:
    encoder = RequestEncoder(smollm2_scorer.tokenizer, smollm2_scorer.render_prompt)
    with pytest.raises(InputError, match="non-empty string"):
        encoder.encode([ScoreRequest("prompt", "")])
    assert encoder.encode([]) == []


class CharTokenizer:
    """One token per character (pure logic: enough for the encoder's bookkeeping)."""

    added_tokens_decoder: ClassVar[dict[int, Any]] = {}
    bos_token_id = 0

    def __call__(
        self, text: Any, add_special_tokens: bool = False, return_offsets_mapping: bool = False
    ) -> dict[str, Any]:
        if isinstance(text, list):
            rows = [self(t, add_special_tokens, return_offsets_mapping) for t in text]
            return {key: [row[key] for row in rows] for key in rows[0]} if rows else {}
        out: dict[str, Any] = {"input_ids": [ord(c) for c in text]}
        if return_offsets_mapping:
            out["offset_mapping"] = [(i, i + 1) for i in range(len(text))]
        return out

    def decode(self, ids: list[int], **_: Any) -> str:
        return "".join(map(chr, ids))


def test_threads_share_the_kept_responses_safely() -> None:
    import random
    import sys
    import threading

    encoder = RequestEncoder(CharTokenizer(), lambda prompt: str(prompt), kept_responses=4)
    errors: list[BaseException] = []

    def work(seed: int) -> None:
        rng = random.Random(seed)
        try:
            for _ in range(3000):
                encoder.encode([ScoreRequest("prompt", f"r{rng.randint(0, 6)}")])
        except BaseException as error:
            errors.append(error)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:
        threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert errors == []
    assert encoder._response.cache_info().currsize <= 4


class PrefixSpaceTokenizer(CharTokenizer):
    """Decodes a text tokenized alone with a leading space (as a SentencePiece one does)."""

    def decode(self, ids: list[int], **_: Any) -> str:
        return " " + super().decode(ids)


def test_a_response_altered_alone_takes_its_tokens_from_the_joint_text() -> None:
    encoder = RequestEncoder(PrefixSpaceTokenizer(), lambda prompt: str(prompt))
    [got] = encoder.encode([ScoreRequest("Hi", "ok")])
    assert got.prompt_ids == (ord("H"), ord("i"))
    assert got.response_ids == (ord("o"), ord("k"))
    assert got.offsets == (0, 1) and got.tokens == ("o", "k")
