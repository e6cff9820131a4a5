import numpy as np
import pytest
from planted import PlantedReward, auroc, brute_force_shapley

from camab_rag import AttributionSettings, attribute_fn
from camab_rag.errors import InputError
from camab_rag.methods import Auto, Camab, ContextCite, KernelShap
from camab_rag.methods.base import _lasso_path, lasso, lasso_cv_scores, lasso_scores
from camab_rag.methods.registry import method_from_config

SEEDS = range(20)


def recovery(method: str, budget: int, n: int = 40) -> tuple[float, float]:
    """Mean AUROC and precision@|planted| over seeds."""
    aurocs, precisions = [], []
    for seed in SEEDS:
        reward = PlantedReward.make(n, seed)
        result = attribute_fn(
            reward, n, budget=budget, method=method, settings=AttributionSettings(seed=seed)
        )
        assert result.scores.shape == (n,)
        aurocs.append(auroc(result.scores, reward.labels))
        top = set(result.top_k(len(reward.important)))
        precisions.append(len(top & set(reward.important.tolist())) / len(reward.important))
    return float(np.mean(aurocs)), float(np.mean(precisions))


@pytest.mark.parametrize(
    "method, min_auroc, min_precision",
    [
        ("camab", 0.95, 0.85),
        ("kernelshap", 0.85, 0.5),
        ("contextcite", 0.95, 0.9),
        ("loo", 0.95, 0.9),
    ],
)
def test_planted_signal_is_recovered_at_budget_40(method, min_auroc, min_precision):
    mean_auroc, precision = recovery(method, 40)
    assert mean_auroc >= min_auroc
    assert precision >= min_precision


def test_camab_beats_random_and_kernelshap_on_planted_signal():
    camab, _ = recovery("camab", 40)
    random, random_p = recovery("random", 40)
    shap, _ = recovery("kernelshap", 40)
    assert 0.35 <= random <= 0.65 and random_p < 0.3
    assert camab > random + 0.3
    assert camab > shap


def test_camab_is_seedable_and_seeds_matter():
    reward_a, reward_b = PlantedReward.make(20, 1, noise=0), PlantedReward.make(20, 1, noise=0)
    first = attribute_fn(
        reward_a, 20, budget=30, method="camab", settings=AttributionSettings(seed=5)
    )
    again = attribute_fn(
        reward_b, 20, budget=30, method="camab", settings=AttributionSettings(seed=5)
    )
    other = attribute_fn(
        PlantedReward.make(20, 1, noise=0),
        20,
        budget=30,
        method="camab",
        settings=AttributionSettings(seed=6),
    )
    np.testing.assert_array_equal(first.masks, again.masks)
    np.testing.assert_allclose(first.scores, again.scores)
    assert not np.array_equal(first.masks, other.masks)


def test_camab_anytime_prefix_equals_a_shorter_run():
    reward = PlantedReward.make(15, 2, noise=0)
    long_run = attribute_fn(
        reward, 15, budget=60, method="camab", settings=AttributionSettings(seed=3)
    )
    short_run = attribute_fn(
        PlantedReward.make(15, 2, noise=0),
        15,
        budget=20,
        method="camab",
        settings=AttributionSettings(seed=3),
    )
    masks, rewards = long_run.masks[:20], long_run.rewards[:20]
    np.testing.assert_array_equal(masks, short_run.masks)
    np.testing.assert_allclose(Camab().fit(masks, rewards, 3), short_run.scores, atol=1e-9)


def test_camab_scores_are_the_sequential_posterior_mean():
    reward = PlantedReward.make(10, 4, noise=0)
    result = attribute_fn(
        reward, 10, budget=25, method="camab", settings=AttributionSettings(seed=0)
    )
    posterior = result.posterior()
    np.testing.assert_allclose(result.scores, posterior.mean[1:], atol=1e-9)
    assert posterior.correlation()[1:, 1:].shape == (10, 10)
    np.testing.assert_allclose(np.diag(posterior.correlation()[1:, 1:]), 1.0)


def test_auto_result_has_no_camab_posterior():
    # auto's scores here are a LASSO fit: a CAMAB posterior on its rows has another mean.
    reward = PlantedReward.make(10, 4, noise=0)
    result = attribute_fn(reward, 10, budget=25, settings=AttributionSettings(seed=0))
    assert result.method == "auto" and result.method_config["estimator"] == "lasso"
    with pytest.raises(ValueError, match="not CAMAB's posterior mean; run method='camab'"):
        result.posterior()


def test_hierarchical_auto_result_points_at_camab_for_a_posterior():
    from fakes import KeywordScorer

    from camab_rag import attribute

    docs = ["Paris is the capital of France. It is big. Many people live there."]
    docs += [f"Doc {i} is on topic {i}. It has a second sentence. And a third." for i in range(8)]
    result = attribute("Where is Paris?", docs, "Paris is in France.", KeywordScorer(), budget=40)
    assert result.method_config["hierarchical"] is True
    with pytest.raises(ValueError, match="run method='camab'"):
        result.posterior()


def test_camab_subsets_are_the_positive_sampled_weights():
    # Round 1 samples from the prior N(0, I): each segment is kept with probability 1/2.
    reward = PlantedReward.make(200, 0, noise=0)
    result = attribute_fn(
        reward, 200, budget=1, method="camab", settings=AttributionSettings(seed=0)
    )
    first = result.masks[0]
    assert 70 < first.sum() < 130
    w = np.random.default_rng(0).standard_normal(201)
    np.testing.assert_array_equal(first, w[1:] > 0)


def test_batched_thompson_sampling_spends_the_same_budget():
    reward = PlantedReward.make(30, 3)
    result = attribute_fn(
        reward, 30, budget=40, method=Camab(batch_size=4), settings=AttributionSettings(seed=1)
    )
    assert result.n_evaluations == 40
    assert auroc(result.scores, reward.labels) > 0.9


def test_kernelshap_is_exact_shapley_when_budget_covers_every_coalition():
    n = 4
    weights = np.array([0.5, 0.2, 0.0, 0.9])

    def value(mask):
        return float(weights @ mask + 1.0 * mask[0] * mask[1])

    result = attribute_fn(value, n, budget=2**n, method="kernelshap")
    # Exact Shapley values: the interaction is split evenly between 0 and 1.
    expected = weights + np.array([0.5, 0.5, 0, 0])
    np.testing.assert_allclose(result.scores, expected, atol=1e-9)
    np.testing.assert_allclose(result.scores, brute_force_shapley(value, n), atol=1e-9)


def test_kernelshap_respects_efficiency_and_budget():
    reward = PlantedReward.make(30, 5, noise=0)
    result = attribute_fn(
        reward, 30, budget=40, method="kernelshap", settings=AttributionSettings(seed=0)
    )
    assert result.n_evaluations == 40
    assert result.masks[0].sum() == 0 and result.masks[1].all()
    total = result.reward_of(np.ones(30, bool)) - result.reward_of(np.zeros(30, bool))
    assert result.scores.sum() == pytest.approx(total, abs=1e-9)


def test_leave_one_out_costs_n_plus_one_and_is_exact_for_linear_rewards():
    weights = np.linspace(0, 1, 8)
    result = attribute_fn(lambda m: float(weights @ m), 8, budget=3, method="loo")
    assert result.n_queries == 9
    np.testing.assert_allclose(result.scores, weights)


def test_lasso_matches_soft_thresholding_on_an_orthogonal_design():
    rng = np.random.default_rng(0)
    q, _ = np.linalg.qr(rng.normal(size=(50, 5)))
    x = q * np.sqrt(50)  # columns with x_j^T x_j / m = 1, orthogonal
    beta = np.array([1.0, -0.5, 0.05, 0.0, 2.0])
    y = x @ beta
    fitted = lasso(x, y, alpha=0.1)
    expected = np.sign(beta) * np.maximum(np.abs(beta) - 0.1, 0)
    np.testing.assert_allclose(fitted, expected, atol=1e-6)


def test_the_penalty_path_agrees_with_coordinate_descent_at_every_penalty():
    """The path that picks the cross-validated penalty solves the same problem as
    :func:`lasso` (FISTA, every penalty at once)."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=(32, 12))
    y = x[:, 0] - 0.5 * x[:, 4] + rng.normal(0, 0.2, 32)
    alphas = np.array([0.5, 0.1, 0.01])
    path = _lasso_path(x, y - y.mean(), alphas)
    for k, alpha in enumerate(alphas):
        np.testing.assert_allclose(path[:, k], lasso(x, y - y.mean(), alpha), atol=1e-4)


def test_the_cross_validated_lasso_picks_the_penalty_the_rewards_need():
    """On 32 random halves of 40 segments with two that matter, ContextCite's fixed
    penalty over-shrinks at a small reward scale and keeps noise weights at a large one;
    the cross-validated one reads both scales alike and nearer the truth. It is
    deterministic (a stored run refits the same) and falls back to the fixed penalty on
    too few rows."""
    rng = np.random.default_rng(7)
    masks = rng.random((32, 40)) < 0.5
    weights = np.zeros(40)
    weights[[3, 17]] = [0.08, 0.04]
    noise = rng.normal(0, 0.01, 32)
    errors = []
    for scale in (1.0, 10.0):
        rewards = masks @ (scale * weights) + scale * noise - 2.0
        chosen = lasso_cv_scores(masks, rewards) / scale
        fixed = lasso_scores(masks, rewards) / scale
        assert set(np.argsort(-chosen)[:2]) == {3, 17}
        errors.append(np.abs(chosen - weights).sum())
        assert errors[-1] < np.abs(fixed - weights).sum()
        np.testing.assert_array_equal(lasso_cv_scores(masks, rewards) / scale, chosen)
    assert errors[0] == pytest.approx(errors[1], rel=1e-4)
    np.testing.assert_array_equal(
        lasso_cv_scores(masks[:2], rewards[:2]), lasso_scores(masks[:2], rewards[:2])
    )
    assert not lasso_cv_scores(masks, np.full(32, -2.0)).any()  # nothing to explain
    assert lasso_cv_scores(masks[:, :0], rewards).shape == (0,)
    noise = lasso_cv_scores(masks, rng.normal(-2.0, 0.01, 32))
    assert noise.any()  # rewards that vary: some ranking, never every score zero


def test_contextcite_design_is_bernoulli_half():
    rng = np.random.default_rng(0)
    masks = ContextCite().sampler(50, 400, rng).next_masks()
    assert masks is not None
    assert masks.shape == (400, 50)
    assert abs(masks.mean() - 0.5) < 0.02


def test_camab_fit_many_equals_fit_per_column():
    rng = np.random.default_rng(0)
    masks = rng.random((30, 10)) < 0.5
    rewards = rng.normal(size=(30, 3))
    method = Camab()
    many = method.fit_many(masks, rewards)
    for k in range(3):
        np.testing.assert_allclose(many[k], method.fit(masks, rewards[:, k]), atol=1e-10)


def test_kernelshap_single_segment():
    result = attribute_fn(lambda m: 1.0 + 2.0 * m[0], 1, budget=5, method="kernelshap")
    np.testing.assert_allclose(result.scores, [2.0])
    assert isinstance(KernelShap().name, str)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"budget": 0}, "budget must be >= 1"),
        ({"budget": 2.5}, "budget must be an integer"),
        ({"method": "lime"}, "unknown method"),
        ({"method": "kernelshap", "budget": 1}, "at least 2"),
        ({"method": "camab", "prior_varianc": 1.0}, "bad options"),
        ({"seed": None}, "seed must be an integer"),
        ({"seed": -1}, "seed must be >= 0"),
        ({"seed": 1.5}, "seed must be an integer"),
    ],
)
def test_bad_arguments_get_clear_errors(kwargs, message):
    with pytest.raises(InputError, match=message):
        attribute_fn(lambda m: 0.0, 5, settings=AttributionSettings().with_changes(**kwargs))


def test_bad_value_functions_get_clear_errors():
    with pytest.raises(InputError, match="n_segments must be >= 1"):
        attribute_fn(lambda m: 0.0, 0)
    with pytest.raises(InputError, match="returned nan"):
        attribute_fn(lambda m: float("nan"), 3)
    with pytest.raises(InputError, match="must return a float"):
        attribute_fn(lambda m: "high", 3)


def test_thousands_of_segments_run_and_find_the_signal():
    n = 2000
    weights = np.zeros(n)
    weights[[10, 1500]] = [3.0, 2.0]
    result = attribute_fn(
        lambda m: float(weights @ m), n, budget=30, settings=AttributionSettings(seed=0)
    )
    assert result.scores.shape == (n,)
    assert np.all(np.isfinite(result.scores))
    assert set(result.top_k(2)) == {10, 1500}


@pytest.mark.parametrize(
    ("name", "config", "named"),
    [
        ("camab", {"early_stop": {"patience": 3}}, "'early_stop', removed"),
        ("auto", {"halves_estimator": "flat_intercept"}, "'halves_estimator', removed"),
        ("auto", {"estimator": "posterior_mean"}, "unknown estimator 'posterior_mean'"),
    ],
)
def test_a_stored_config_with_a_removed_option_is_refused_by_name(name, config, named) -> None:
    """A result stored before an option went is refused naming it, not silently refit
    another way; the option at what runs now (None, "lasso") is dropped."""
    with pytest.raises(InputError, match=named):
        method_from_config(name, config)
    assert method_from_config("camab", {"early_stop": None}) == Camab()
    assert method_from_config("auto", {"halves_estimator": "lasso"}) == Auto()
