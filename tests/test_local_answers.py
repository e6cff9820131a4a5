"""Answering with an in-process model (camab_rag.integration.LocalModel): the generator
checked, its answer cut at a stop marker, streamed word by word; a fake generator (pure
logic: the real model's chat model is tested in the LangChain package's standard suite)."""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace

import pytest
from fakes import KeywordScorer

from camab_rag.integration import LocalModel


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
    model = LocalModel(generator, "Model")
    assert model.answer("Q?", 5, ["\nQuestion:", ""]) == "Paris."
    assert model.answer("Q?", 5) == "Paris.\nQuestion: next"
    assert generator.asked == [("Q?", 5), ("Q?", 5)]


def test_a_generator_is_checked_and_lends_its_scorer() -> None:
    generator = Generator()
    model = LocalModel(generator, "Model")
    assert model.scorer is generator and model.name == "tiny"
    with pytest.raises(TypeError, match="Model needs generator= an object with generate"):
        LocalModel(object(), "Model")
    mute = LocalModel(SimpleNamespace(generate=lambda *a, **k: ["x"]), "Model")
    with pytest.raises(TypeError, match="SimpleNamespace cannot score: it has no score"):
        _ = mute.scorer
    assert mute.name == "SimpleNamespace"


def test_text_streams_word_by_word() -> None:
    assert LocalModel.pieces("Paris is  big.") == ["Paris", " is", "  big."]
    assert "".join(LocalModel.pieces(" a b ")) == " a b"
    assert LocalModel.pieces("") == [""]
