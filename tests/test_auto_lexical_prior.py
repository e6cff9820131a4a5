"""``auto``'s lexical prior (issue 51): on one document under ``LEXICAL_PRIOR_BELOW`` calls
per unit its scores are the prior fit with the answer's zero-call lexical scores as the
free weights; a prior that agrees is trusted, one that disagrees is turned down, and with
the prior off the scores are ``auto``'s own (pure logic on planted rewards; no model)."""

import numpy as np
import pytest
from fakes import KeywordScorer
from scipy.stats import spearmanr

import camab_rag
from camab_rag import AttributionSettings, attribute_fn
from camab_rag.errors import InputError
from camab_rag.lexical import lexical_scores
from camab_rag.methods import Auto
from camab_rag.methods.prior import posterior, target_weights
from camab_rag.methods.registry import method_from_config

N = 20
WEIGHTS = np.where(np.arange(N) % 5 == 0, 0.4, 0.02 * np.arange(N) / N)


def planted(mask: np.ndarray) -> float:
    return float(WEIGHTS @ mask) - 2.0


def run(method="auto", budget=8, groups=None, seed=0):
    settings = AttributionSettings(seed=seed)
    return attribute_fn(planted, N, budget=budget, method=method, groups=groups, settings=settings)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_prior_that_agrees_is_trusted(seed):
    agreeing = WEIGHTS / WEIGHTS.max()  # the right ranking, on another scale
    ours, bare = run(Auto().with_lexical(agreeing), seed=seed), run(seed=seed)
    assert ours.method_config["lexical_prior"] and not bare.method_config["lexical_prior"]
    mean, tau2 = posterior(ours.masks, ours.rewards, agreeing, 0.01)
    assert mean[1] == pytest.approx(WEIGHTS.max(), rel=0.05)  # the agreement a
    assert tau2 == 1e-4  # corrections kept small
    assert spearmanr(ours.scores, WEIGHTS)[0] > 0.95
    assert spearmanr(ours.scores, WEIGHTS)[0] > spearmanr(bare.scores, WEIGHTS)[0] + 0.2


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_prior_that_disagrees_is_turned_down(seed):
    wrong = np.roll(WEIGHTS, 2) / WEIGHTS.max()  # the weight on the wrong segments
    ours = run(Auto().with_lexical(wrong), seed=seed)
    mean, tau2 = posterior(ours.masks, ours.rewards, wrong, 0.01)
    assert mean[1] < 0.35 * WEIGHTS.max()  # a -> 0
    assert tau2 >= 1e-2  # the corrections carry the weights (agreeing: 1e-4)
    assert spearmanr(ours.scores, WEIGHTS)[0] > 0.2  # 8 calls, 20 segments, a wrong prior


@pytest.mark.parametrize(
    ("budget", "groups", "switches"),
    [
        (32, None, {}),  # 32 calls >= 1.25 * (N + 1): off
        (64, None, {}),
        (8, [i // 4 for i in range(N)], {}),  # several documents: off
        (8, None, {"lexical_prior_below": 0.0}),  # the cut at 0: never
    ],
)
def test_with_the_prior_off_the_scores_are_autos_own(budget, groups, switches):
    lexical = WEIGHTS / WEIGHTS.max()
    ours = run(Auto._variant(**switches).with_lexical(lexical), budget=budget, groups=groups)
    bare = run(Auto._variant(**switches), budget=budget, groups=groups)
    assert not ours.method_config["lexical_prior"]
    np.testing.assert_array_equal(ours.scores, bare.scores)
    np.testing.assert_array_equal(ours.masks, bare.masks)


def test_the_prior_changes_the_estimator_not_the_subsets():
    ours, bare = run(Auto().with_lexical(WEIGHTS / WEIGHTS.max())), run()
    np.testing.assert_array_equal(ours.masks, bare.masks)
    assert not np.allclose(ours.scores, bare.scores)


def test_attribute_computes_the_answers_lexical_scores_itself():
    sentences = [f"Fact {i}: the {w} is near the river." for i, w in enumerate("abcdef")]
    sentences[3] = "The old mill was built in 1820 by Hanna Berg."
    doc = " ".join(sentences)
    answer = "Hanna Berg built the mill in 1820."
    scorer = KeywordScorer()
    result = camab_rag.attribute("Who built the mill?", [doc], answer, scorer, budget=4)
    expected = lexical_scores([s.text for s in result.segments], answer)
    assert result.method_config["lexical_prior"]  # 4 calls < 1.25 * (6 + 1)
    np.testing.assert_allclose(result.method_config["lexical_weights"], expected, atol=1e-6)
    assert int(np.argmax(result.scores)) == 3
    rebuilt = method_from_config(result.method, result.method_config)  # a stored result
    refit = rebuilt.fit(result.masks, result.rewards)
    np.testing.assert_allclose(refit, result.scores, atol=1e-4)
    later = camab_rag.attribute("Who built the mill?", [doc], answer, scorer, budget=9)
    assert not later.method_config["lexical_prior"] and "lexical_weights" in later.method_config


def test_bad_lexical_scores_get_a_typed_error():
    with pytest.raises(InputError, match="finite"):
        Auto().with_lexical([0.1, float("nan")])
    with pytest.raises(InputError, match="3 lexical scores for 20 segments"):
        run(Auto().with_lexical([0.1, 0.2, 0.3]))


def test_the_embedded_model_on_one_short_article(smollm2_scorer):
    """The real model on one 8-sentence article at 6 calls (under 1.25 * 9): the prior is
    read and the sentence the answer restates ranks first, with the calls paid as asked."""
    sentences = [
        "The town council met on Monday evening.",
        "Roadworks on the main street will start in May.",
        "The library will close for two weeks in June.",
        "The new bridge over the Ouse cost 12 million pounds.",
        "Local schools reported higher attendance this year.",
        "A farmers' market opens every Saturday in the square.",
        "The mayor thanked volunteers for cleaning the park.",
        "Bus fares will not change this year.",
    ]
    answer = "The new bridge over the Ouse cost 12 million pounds."
    result = camab_rag.attribute(
        "How much did the bridge cost?", [" ".join(sentences)], answer, smollm2_scorer, budget=6
    )
    assert result.method_config["lexical_prior"]
    assert result.n_queries == 6
    assert result.top_k(1) == [3]


def test_over_several_documents_a_short_answer_reads_the_prior_in_one_fit():
    """Over several documents an answer of at most ``SHORT_ANSWER_WORDS`` words, under
    ``SHORT_LEXICAL_BELOW`` calls per unit, is read with the prior over every segment at
    once; the subsets asked for do not change, and a longer answer or a larger budget
    keeps ``auto``'s own scores."""
    groups = [i // 4 for i in range(N)]
    lexical = WEIGHTS / WEIGHTS.max()
    short = run(Auto().with_lexical(lexical, answer_words=6), budget=10, groups=groups)
    bare = run(budget=10, groups=groups)
    assert short.method_config["lexical_prior"] and short.method_config["hierarchical"]
    np.testing.assert_array_equal(short.masks, bare.masks)
    mean, _ = posterior(short.masks, short.rewards, lexical, 0.01)
    np.testing.assert_allclose(short.scores, target_weights(mean, lexical))
    for words, budget in ((7, 10), (2, 11), (None, 10)):  # 11 calls > 0.5 * (N + 1)
        other = run(Auto().with_lexical(lexical, answer_words=words), budget=budget, groups=groups)
        same = run(budget=budget, groups=groups)
        assert not other.method_config["lexical_prior"]
        np.testing.assert_array_equal(other.scores, same.scores)


def test_attribute_passes_the_answers_length_in_words():
    docs = [
        "The old mill was built in 1820 by Hanna Berg. It stands by the river.",
        "The bridge was built in 1901. It was painted red in 1950.",
        "The church is older than the mill. Its tower fell in 1780.",
    ]
    scorer = KeywordScorer()
    short = camab_rag.attribute("Who built the mill?", docs, "Hanna Berg", scorer, budget=3)
    answer = "Hanna Berg built it by the river."
    long_ = camab_rag.attribute("Who built the mill?", docs, answer, scorer, budget=3)
    assert short.method_config["lexical_prior"]  # 2 words, 3 calls < 0.5 * (6 + 1)
    assert not long_.method_config["lexical_prior"]  # 7 words
