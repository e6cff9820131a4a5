import json

import numpy as np
import pytest
from fakes import FailingScorer, KeywordScorer

import camab_rag
from camab_rag import AttributionResult, AttributionSettings, aattribute, attribute
from camab_rag.errors import ContextTooLongError, InputError
from camab_rag.methods import Camab
from camab_rag.scorers.base import ResponseLogprobs

CONTEXT = [
    "The Eiffel Tower is in Paris. It was completed in 1889.",
    "Bananas are yellow. Apples can be red.",
    "Gustave Eiffel's company designed the tower. Engineers built it quickly.",
]
QUESTION = "Where is the Eiffel Tower and who designed it?"
RESPONSE = "It stands in Paris. Gustave Eiffel's company designed it."


def test_public_api_names():
    for name in ("attribute", "attribute_fn", "AttributionResult", "aattribute"):
        assert callable(getattr(camab_rag, name))


@pytest.mark.parametrize("method", ["camab", "kernelshap", "contextcite", "loo"])
def test_text_attribution_finds_the_supporting_sentences(method):
    scorer = KeywordScorer()
    result = attribute(QUESTION, CONTEXT, RESPONSE, scorer, budget=30, method=method)
    texts = [s.text for s in result.segments]
    assert len(texts) == 6
    top2 = {texts[i] for i in result.top_k(2)}
    assert top2 == {"The Eiffel Tower is in Paris.", "Gustave Eiffel's company designed the tower."}
    assert result.top_documents(1) in ([0], [2])
    assert result.document_scores[1] < result.document_scores[0]
    # every paid query is one scorer call for a distinct subset
    assert result.n_queries == len(scorer.calls)
    assert len({json.dumps(c.prompt) for c in scorer.calls}) == result.n_queries
    assert result.prompt_tokens > 0 and result.wall_time_s > 0


def test_each_answer_sentence_gets_its_own_attribution_without_extra_calls():
    scorer = KeywordScorer()
    result = attribute(
        QUESTION, CONTEXT, RESPONSE, scorer, budget=40, settings=AttributionSettings(seed=1)
    )
    calls = len(scorer.calls)
    assert [s.text for s in result.statements] == [
        "It stands in Paris.",
        "Gustave Eiffel's company designed it.",
    ]
    texts = [s.text for s in result.segments]
    first, second = result.statements
    assert texts[first.top_k(1)[0]] == "The Eiffel Tower is in Paris."
    assert texts[second.top_k(1)[0]] == "Gustave Eiffel's company designed the tower."
    assert len(scorer.calls) == calls


def test_repeated_subsets_are_never_paid_twice():
    scorer = KeywordScorer()
    result = attribute(
        QUESTION, ["Paris.", "Bananas."], "Paris", scorer, budget=40, method=Camab(redraw=False)
    )
    assert result.n_evaluations == 40  # the paper's loop: 40 rounds, repeats from cache
    assert result.n_queries == len(scorer.calls) <= 4  # only 4 subsets exist
    assert not result.exact


def test_small_context_is_enumerated_once_and_fitted_exactly():
    for method in ("auto", "camab", "kernelshap", "contextcite"):
        scorer = KeywordScorer()
        result = attribute(
            QUESTION, ["Paris.", "Bananas."], "Paris", scorer, budget=40, method=method
        )
        assert result.exact and result.n_evaluations == result.n_queries == len(scorer.calls) == 4


async def test_async_matches_sync():
    args = (QUESTION, CONTEXT, RESPONSE)
    settings = AttributionSettings(seed=3)
    sync = attribute(*args, KeywordScorer(), budget=20, settings=settings)
    async_result = await aattribute(*args, KeywordScorer(), budget=20, settings=settings)
    np.testing.assert_allclose(sync.scores, async_result.scores)
    np.testing.assert_array_equal(sync.masks, async_result.masks)


def test_json_round_trip_is_exact():
    result = attribute(
        QUESTION,
        CONTEXT,
        RESPONSE,
        KeywordScorer(),
        budget=15,
        method="camab",
        settings=AttributionSettings(seed=2),
    )
    data = json.loads(json.dumps(result.to_dict()))
    restored = AttributionResult.from_dict(data)
    assert restored.to_dict() == data
    np.testing.assert_array_equal(restored.scores, result.scores)
    np.testing.assert_array_equal(restored.masks, result.masks)
    assert restored.segments == result.segments
    correlation = result.posterior().correlation()
    np.testing.assert_allclose(restored.posterior().correlation(), correlation)
    assert data["schema_version"] == 1 and data["method"] == "camab"


def test_duplicate_and_single_segments():
    dup = attribute("Q?", ["Paris is big.", "Paris is big."], "Paris", KeywordScorer(), budget=10)
    assert dup.scores.shape == (2,)
    assert np.all(dup.scores > 0.3)  # substitutes: each alone carries the answer
    exact = attribute(
        "Q?",
        ["Paris is big.", "Paris is big."],
        "Paris",
        KeywordScorer(),
        budget=4,
        method="kernelshap",
    )
    np.testing.assert_allclose(exact.scores, [1.45, 1.45])  # Shapley splits evenly
    single = attribute("Q?", "Paris is big.", "Paris", KeywordScorer(), budget=5)
    assert single.scores.shape == (1,) and single.scores[0] > 1.0


def test_chunk_granularity_gives_one_segment_per_document():
    result = attribute(QUESTION, CONTEXT, RESPONSE, KeywordScorer(), granularity="chunk")
    assert [s.doc_index for s in result.segments] == [0, 1, 2]
    np.testing.assert_allclose(result.document_scores, result.scores)


@pytest.mark.parametrize(
    "args, message",
    [
        (("Q?", [], "answer"), "context is empty"),
        (("Q?", ["  "], "answer"), "context is empty"),
        (("Q?", ["doc"], "   "), "response is empty"),
        (("Q?", ["doc"], ""), "response is empty"),
        ((None, ["doc"], "answer"), "question must be a string"),
    ],
)
def test_bad_input_gets_a_clear_error(args, message):
    with pytest.raises(InputError, match=message):
        attribute(*args, KeywordScorer())


def test_bad_scorer_and_budget():
    with pytest.raises(InputError, match="score"):
        attribute("Q?", ["doc"], "answer", object())
    with pytest.raises(InputError, match="budget"):
        attribute("Q?", ["doc"], "answer", KeywordScorer(), budget=0)


def test_scorer_failures_propagate_from_the_core():
    # The core raises; the integrations catch and record (see their tests).
    with pytest.raises(RuntimeError, match="scorer is down"):
        attribute("Q?", ["doc"], "answer", FailingScorer())


def test_failed_result_records_the_error():
    failed = AttributionResult.failed(RuntimeError("boom"), question="Q?")
    assert failed.status == "error" and failed.error == "RuntimeError: boom"
    assert AttributionResult.from_dict(failed.to_dict()).error == "RuntimeError: boom"


def test_thousands_of_sentence_segments():
    context = [
        " ".join(f"Fact number {i * 10 + j} is noted." for j in range(10)) for i in range(150)
    ]
    context[77] += " Zebras live in Kenya."
    result = attribute(
        "Where?",
        context,
        "Zebras Kenya",
        KeywordScorer(),
        budget=20,
        method="camab",
        settings=AttributionSettings(statements=False),
    )
    assert result.scores.shape == (1501,)
    assert result.segments[result.top_k(1)[0]].text == "Zebras live in Kenya."


def test_a_budget_too_small_to_compare_anything_is_said(caplog):
    docs = ["Paris is big.", "Rome is old.", "Oslo is cold."]
    long = "Paris is big and old and it is lovely there"
    one = attribute("Where?", docs, long, KeywordScorer(), budget=1, granularity="chunk")
    assert one.n_queries == 1 and not np.any(one.scores)
    assert "every score is 0 (a budget of at least 4" in caplog.text
    # a short answer's scores at so few calls are its word overlap (auto's lexical prior)
    caplog.clear()
    short = attribute(
        "Where?", docs, "Paris is big", KeywordScorer(), budget=1, granularity="chunk"
    )
    assert short.n_queries == 1 and short.top_documents(1) == [0]
    assert "every score is 0" not in caplog.text
    assert "word overlap with each segment (no model call)" in (short.uninformative or "")
    caplog.clear()
    attribute("Where?", docs, "Paris is big", KeywordScorer(), budget=2, granularity="chunk")
    assert "every score is 0" not in caplog.text
    baseline = attribute("Where?", docs, "Paris", KeywordScorer(), budget=3, method="random")
    assert baseline.uninformative is not None
    assert baseline.uninformative.startswith("no subset of the context was scored")


def test_a_lone_surrogate_is_an_input_error_naming_the_document_and_position():
    """Issue 37: json.loads('"\\ud800"') gives a str no tokenizer can encode; on main it
    crashed inside the tokenizer with an untyped TypeError."""
    broken = json.loads('"Paris is in France.\\ud800 It is big."')
    docs = ["Rome is in Italy.", {"text": broken, "title": "Paris"}]
    with pytest.raises(
        InputError, match=r"document 1 \('Paris'\) holds a lone surrogate U\+D800 at character 19"
    ):
        attribute("Where is Paris?", docs, "In France.", KeywordScorer(), budget=4)
    with pytest.raises(InputError, match=r"the response holds a lone surrogate U\+DC00 at char"):
        attribute("Where?", ["Paris."], "In \udc00.", KeywordScorer(), budget=4)


class ConstantScorer(KeywordScorer):
    """A model whose likelihood of the answer never changes with the context."""

    def score(self, requests):
        return [ResponseLogprobs(np.full(2, -1.0), np.array([0, 1]), ("a", "b")) for _ in requests]


@pytest.mark.parametrize(
    ("scorer", "budget", "reason"),
    [
        (KeywordScorer, 1, "budget 1 scored 1 subset of the context"),
        (ConstantScorer, 8, "every one of the 8 subsets scored the same reward"),
    ],
)
def test_scores_without_information_say_so_on_the_result_and_in_every_rendering(
    scorer, budget, reason
):
    """Issue 37: on main budget 1 (or a reward that never moves) gave all-zero scores with
    only a log line, and nothing on the result or the rendered citations."""
    from camab_rag.citations import cite

    result = attribute(QUESTION, CONTEXT, RESPONSE, scorer(), budget=budget, method="camab")
    assert result.uninformative is not None and reason in result.uninformative
    assert AttributionResult.from_dict(result.to_dict()).uninformative == result.uninformative
    cited = cite(result, CONTEXT)
    assert cited.to_dict()["uninformative"] == result.uninformative
    for shown in (cited.to_markdown(), cited.to_html(), cited.to_terminal(color=False)):
        assert "These citations carry no information" in shown and reason in shown
    informative = attribute(QUESTION, CONTEXT, RESPONSE, KeywordScorer(), budget=8)
    assert informative.uninformative is None
    assert "carry no information" not in cite(informative, CONTEXT).to_markdown()


def test_one_document_by_chunk_warns_that_it_can_say_little():
    import warnings

    from camab_rag.errors import AttributionWarning

    joined = "Paris is the capital of France.\n\nBerlin is the capital of Germany."
    with pytest.warns(AttributionWarning, match="formatted into one string") as caught:
        result = attribute("Capital?", joined, "Paris", KeywordScorer(), granularity="chunk")
    assert caught[0].filename == __file__  # the user's line, not the library's
    assert result.status == "ok" and len(result.scores) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", AttributionWarning)
        attribute("Capital?", joined, "Paris", KeywordScorer(), granularity="sentence")
        attribute("Capital?", joined.split("\n\n"), "Paris", KeywordScorer(), granularity="chunk")


def test_a_document_too_long_for_the_model_is_named_with_the_fix(smollm2_scorer, monkeypatch):
    """A 2 MB document's error named the token count, not the document nor what to do
    (fresh-user review 24)."""
    monkeypatch.setattr(smollm2_scorer, "max_length", 300)  # the embedded model's, made small
    docs = ["Opening hours: 9 am to 5 pm.", "Kennels. " + "A kennel keeps a dog dry. " * 80]
    with pytest.raises(ContextTooLongError) as raised:  # an InputError: never retried
        attribute("When do you open?", docs, "At 9 am.", smollm2_scorer, budget=4)
    message = str(raised.value)
    assert "more than the model's limit 300" in message
    assert f"the longest document is context[1] ({len(docs[1]):,} characters)" in message
    assert "split long documents into chunks" in message


def test_from_dict_names_a_malformed_result_with_a_typed_error():
    with pytest.raises(InputError, match="no 'scores'"):
        AttributionResult.from_dict({})
    with pytest.raises(InputError, match="not a valid attribution result's dict: ValueError"):
        AttributionResult.from_dict({"scores": "x"})
    good = attribute("Q?", ["Paris is big.", "Rome is old."], "Paris", KeywordScorer(), budget=6)
    data = good.to_dict()
    with pytest.raises(InputError, match="not a valid attribution result's dict"):
        AttributionResult.from_dict({**data, "masks": ["1"]})  # one unit for two segments
