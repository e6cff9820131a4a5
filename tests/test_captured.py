"""The core's attribution of what a chain really did (the kernel's Runs.steps): the captured
prompt is ablated in place (or the template is used, and the result says why), settings
are validated once, the per-document summary, and the groundedness verdict; sync and
async give the same result."""

from __future__ import annotations

import numpy as np
import pytest
from fakes import FailingScorer, KeywordScorer, aattribute_captured, attribute_captured

from camab_rag import AttributionSettings, attribute
from camab_rag.attributor import Attributor
from camab_rag.errors import InputError
from camab_rag.groundedness import GroundednessFilter
from camab_rag.integration import document_summary, prompt_holds
from camab_rag.methods import Auto
from camab_rag.result import AttributionResult
from camab_rag.segments import to_documents
from camab_rag.settings import CHAIN_SETTINGS

DOCS = [
    "Paris is the capital of France.",
    "Bananas are yellow and sweet.",
    "The Seine flows through Paris.",
]
QUESTION = "What is the capital of France?"
ANSWER = "Paris is the capital of France."
PROMPT = [
    {"role": "system", "content": "Answer from the context. Be brief."},
    {"role": "user", "content": "Context:\n- " + "\n- ".join(DOCS) + f"\n\nQ: {QUESTION}"},
]


def test_a_captured_prompt_is_ablated_in_place() -> None:
    scorer = KeywordScorer()
    result = attribute(QUESTION, DOCS, ANSWER, scorer, granularity="chunk", prompt=PROMPT)
    assert result.prompt_mode == "captured" and result.prompt_note is None
    assert result.top_documents(1) == [0]
    # every prompt sent keeps the chain's own system message and layout
    assert all(call.prompt[0] == PROMPT[0] for call in scorer.calls)  # type: ignore[index]
    assert any("Q: What is the capital" in call.prompt[1]["content"] for call in scorer.calls)  # type: ignore[index]
    round_trip = AttributionResult.from_dict(result.to_dict())
    assert (round_trip.prompt_mode, round_trip.prompt_note) == ("captured", None)


def test_a_prompt_without_the_documents_falls_back_to_the_template_and_says_so() -> None:
    result = attribute(QUESTION, DOCS, ANSWER, KeywordScorer(), prompt="Q: capital of France?")
    assert result.prompt_mode == "template"
    assert "document(s) 0, 1, 2 was not found verbatim" in (result.prompt_note or "")
    assert attribute(QUESTION, DOCS, ANSWER, KeywordScorer()).prompt_mode == "template"


def test_prompt_and_prompt_builder_are_exclusive() -> None:
    from camab_rag.prompts import TemplatePromptBuilder
    from camab_rag.segments import segment_documents

    documents = to_documents(DOCS)
    builder = TemplatePromptBuilder(QUESTION, documents, segment_documents(documents, "sentence"))
    with pytest.raises(InputError, match="prompt="):
        Attributor(KeywordScorer(), prompt_builder=builder).run(
            QUESTION, DOCS, ANSWER, prompt=PROMPT
        )


def test_the_last_captured_prompt_holding_every_document_is_used() -> None:
    condense = "Rephrase the question: capital of France?"
    scorer = KeywordScorer()
    captured = attribute_captured(
        QUESTION, DOCS, ANSWER, scorer, prompts=[condense, PROMPT, "unrelated summary call"]
    )
    assert captured.prompt_mode == "captured"
    assert "last of 3 captured prompts" in (captured.prompt_note or "")
    assert not any(call.prompt == condense for call in scorer.calls)
    assert prompt_holds([PROMPT], DOCS)
    assert not prompt_holds([condense], DOCS)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"budget": -1}, "budget must be >= 1"),
        ({"budget": True}, "budget must be an integer"),
        ({"method": 3}, "unknown method 3"),
        ({"granularity": "word"}, "granularity must be"),
        ({"anchors": "yes"}, "anchors must be True or False"),
        ({"method": "camba"}, "unknown method 'camba'"),
        ({"reward": "log"}, "unknown reward 'log'"),
        ({"seed": None}, "seed must be an integer"),
    ],
)
def test_settings_are_validated_once(settings: dict[str, object], message: str) -> None:
    with pytest.raises(InputError, match=message):
        AttributionSettings(**settings)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="GroundednessFilter"):
        attribute_captured("q", ["a"], "a", None, groundedness="block")  # type: ignore[arg-type]


def test_flat_keywords_split_into_fields_and_method_options() -> None:
    settings = AttributionSettings().with_changes(
        budget=np.int64(8), batch_size=2, hierarchical=False, statements=False
    )
    assert settings.method_instance == Auto(batch_size=2)
    assert (settings.budget, settings.hierarchical, settings.statements) == (8, False, False)
    with pytest.raises(InputError, match="bad options for method 'auto'"):
        AttributionSettings().with_changes(batchsize=2)


def test_document_summary_ranks_documents_and_names_the_sentences_they_support() -> None:
    result = attribute(QUESTION, DOCS, ANSWER, KeywordScorer(), granularity="chunk", budget=8)
    summary = document_summary(result, len(DOCS), segments=True)
    assert summary[0]["rank"] == 1
    assert summary[0]["supporting_sentences"] == [ANSWER]
    assert summary[1]["supporting_sentences"] == []
    assert summary[0]["score"] == pytest.approx(float(result.document_scores[0]))
    assert summary[2]["segments"] == [{"text": DOCS[2], "score": float(result.scores[2])}]
    assert set(document_summary(result, 3)[0]) == {
        "status",
        "score",
        "rank",
        "supporting_sentences",
        "disputes",
    }
    failed = document_summary(AttributionResult.failed("down"), 2)
    assert failed == [{"status": "error", "error": "down"}] * 2


async def test_sync_and_async_agree_and_the_filter_judges_from_the_result() -> None:
    gate = GroundednessFilter(threshold=0.3, mode="block")
    settings = CHAIN_SETTINGS.with_changes(budget=8)
    sync = attribute_captured(
        QUESTION, DOCS, ANSWER, KeywordScorer(), settings, prompts=[PROMPT], groundedness=gate
    )
    done = await aattribute_captured(
        QUESTION, DOCS, ANSWER, KeywordScorer(), settings, prompts=[PROMPT], groundedness=gate
    )
    np.testing.assert_allclose(sync.scores, done.scores)
    assert sync.groundedness is not None and done.groundedness is not None
    assert sync.groundedness.grounded is True and not sync.groundedness.blocked
    assert sync.groundedness.report is not None and sync.groundedness.report.extra_queries == 0
    assert sync.groundedness.to_dict() == done.groundedness.to_dict()


def test_a_scorer_that_fails_raises_and_the_filter_fails_closed_on_the_failure() -> None:
    gate = GroundednessFilter(mode="block")
    with pytest.raises(RuntimeError, match="scorer is down"):
        attribute_captured(QUESTION, DOCS, ANSWER, FailingScorer(), CHAIN_SETTINGS)
    verdict = gate.judge(AttributionResult.failed(RuntimeError("scorer is down")))
    assert verdict.blocked and verdict.grounded is None


def test_with_a_filter_the_engine_scores_the_anchors_and_no_second_oracle_is_needed() -> None:
    gate = GroundednessFilter(threshold=0.3)
    scorer = KeywordScorer()
    captured = attribute_captured(
        QUESTION, DOCS, ANSWER, scorer, CHAIN_SETTINGS.with_changes(budget=4), groundedness=gate
    )
    result = captured
    assert set(result.anchor_rewards) == {"full", "empty"}
    assert result.n_queries == len(scorer.calls) <= 4 + 2
    assert captured.groundedness is not None and captured.groundedness.report is not None
    assert captured.groundedness.report.source == "observed"
    assert captured.groundedness.report.extra_queries == 0
    again = AttributionResult.from_dict(result.to_dict())
    assert again.anchor_rewards == result.anchor_rewards
    assert again.reward_of(np.zeros(3, dtype=bool)) == result.anchor_rewards["empty"]
    # without a filter, nothing beyond the budget is paid for
    plain = attribute_captured(
        QUESTION, DOCS, ANSWER, KeywordScorer(), CHAIN_SETTINGS.with_changes(budget=4)
    )
    assert plain.anchor_rewards == {} and plain.n_queries == 4


def test_a_captured_chat_prompt_gives_its_follow_up_the_question_before_it() -> None:
    # session 65: a captured prompt's builder had no history, so an integration's result had
    # no `asked` and the gate read "And the Harbour one?" without the question it follows
    shops = [
        "The Riverside shop opens at 9:00.",
        "The Harbour shop opens at 10:00.",
    ]
    earlier = "What time does the Riverside shop open?"
    messages = [
        {"role": "system", "content": "Answer from the context."},
        {"role": "user", "content": earlier},
        {"role": "assistant", "content": "At 9:00."},
        {"role": "user", "content": "Context:\n" + "\n".join(shops) + "\n\nAnd the Harbour one?"},
    ]
    result = attribute("And the Harbour one?", shops, "At 10:00.", KeywordScorer(), prompt=messages)
    assert result.prompt_mode == "captured"
    assert result.asked == "What time does the Harbour shop open? And the Harbour one?"
    plain = attribute(
        "And the Harbour one?", shops, "At 10:00.", KeywordScorer(), prompt=messages[3:]
    )
    assert plain.prompt_mode == "captured" and plain.asked == ""
