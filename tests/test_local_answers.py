"""Answering with an in-process model (camab_rag.integration.local_answers through
camab_rag.integration): the generator checked, its answer cut at a stop marker, streamed
word by word; a fake generator (pure logic: the real model's chat model is tested in the
LangChain package's standard suite)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from fakes import KeywordScorer

from camab_rag.integration import (
    answer_text,
    checked_generator,
    generator_name,
    generator_scorer,
    word_pieces,
)


class Generator(KeywordScorer):
    name = "tiny"

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[object] = []

    def generate(self, prompts: Sequence[object], *, max_new_tokens: int = 8) -> list[str]:
        self.asked.append((prompts[0], max_new_tokens))
        return ["Paris.\nQuestion: next"]


def test_the_answer_is_cut_at_the_first_stop_marker() -> None:
    generator = Generator()
    assert answer_text(generator, "Q?", 5, ["\nQuestion:", ""]) == "Paris."
    assert answer_text(generator, "Q?", 5) == "Paris.\nQuestion: next"
    assert generator.asked == [("Q?", 5), ("Q?", 5)]


def test_a_generator_is_checked_and_lends_its_scorer() -> None:
    generator = Generator()
    checked_generator(generator, "Model")
    assert generator_scorer(generator) is generator and generator_name(generator) == "tiny"
    with pytest.raises(TypeError, match="Model needs generator= an object with generate"):
        checked_generator(object(), "Model")
    with pytest.raises(TypeError, match="object cannot score: it has no score"):
        generator_scorer(object())
    assert generator_name(object()) == "object"


def test_text_streams_word_by_word() -> None:
    assert word_pieces("Paris is  big.") == ["Paris", " is", "  big."]
    assert "".join(word_pieces(" a b ")) == " a b"
    assert word_pieces("") == [""]
