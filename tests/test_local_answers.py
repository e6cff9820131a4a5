"""Answering with an in-process model (camab_rag.integration.local_answer): its answer cut
at a stop marker; a fake generator (pure logic: the chat models over it are tested in
their packages, the generator's checks in langchain-camab's test_scorer)."""

from __future__ import annotations

from collections.abc import Sequence

from fakes import KeywordScorer

from camab_rag.integration import local_answer


class Generator(KeywordScorer):
    def __init__(self) -> None:
        super().__init__()
        self.asked: list[object] = []

    def generate(self, prompts: Sequence[object], *, max_new_tokens: int = 8) -> list[str]:
        self.asked.append((prompts[0], max_new_tokens))
        return ["Paris.\nQuestion: next"]


def test_the_answer_is_cut_at_the_first_stop_marker() -> None:
    generator = Generator()
    assert local_answer(generator, "Q?", 5, ["\nQuestion:", ""]) == "Paris."
    assert local_answer(generator, "Q?", 5) == "Paris.\nQuestion: next"
    assert generator.asked == [("Q?", 5), ("Q?", 5)]
