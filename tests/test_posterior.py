import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from camab_rag.methods import Camab
from camab_rag.posterior import GaussianLinearPosterior


def closed_form_posterior(
    features, values, *, prior_mean=0.0, prior_variance=1.0, noise_variance=0.01
):
    """The batch posterior ``(mean, precision)``: the rows of ``features`` fed at once."""
    x = np.atleast_2d(np.asarray(features, dtype=float))
    v = np.asarray(values, dtype=float).reshape(-1)
    mu0 = np.broadcast_to(np.asarray(prior_mean, dtype=float), (x.shape[1],))
    precision = np.eye(x.shape[1]) / prior_variance + x.T @ x / noise_variance
    information = mu0 / prior_variance + x.T @ v / noise_variance
    return np.linalg.solve(precision, information), precision


@st.composite
def histories(draw):
    dim = draw(st.integers(1, 12))
    rounds = draw(st.integers(0, 30))
    x = draw(arrays(np.bool_, (rounds, dim - 1) if dim > 1 else (rounds, 0)))
    features = np.hstack([np.ones((rounds, 1)), x.astype(float)])
    values = draw(
        arrays(np.float64, rounds, elements=st.floats(-10, 10, allow_nan=False, width=64))
    )
    prior_variance = draw(st.floats(0.1, 10))
    noise_variance = draw(st.floats(1e-3, 1))
    prior_mean = draw(st.floats(-1, 1))
    return features, values, prior_mean, prior_variance, noise_variance


@settings(max_examples=200, deadline=None)
@given(histories())
def test_incremental_posterior_equals_closed_form(history):
    features, values, prior_mean, prior_variance, noise_variance = history
    posterior = GaussianLinearPosterior(
        features.shape[1],
        prior_mean=prior_mean,
        prior_variance=prior_variance,
        noise_variance=noise_variance,
    )
    for x, v in zip(features, values):
        posterior.update(x, v)
    mean, precision = closed_form_posterior(
        features,
        values,
        prior_mean=prior_mean,
        prior_variance=prior_variance,
        noise_variance=noise_variance,
    )
    np.testing.assert_allclose(posterior.mean, mean, rtol=1e-7, atol=1e-7)
    covariance = np.linalg.inv(precision)
    variance = posterior.predictive_variance(np.eye(len(mean)))
    np.testing.assert_allclose(variance, np.diag(covariance), rtol=1e-6, atol=1e-9)
    std = np.sqrt(np.diag(covariance))
    expected = covariance / np.outer(std, std)
    np.testing.assert_allclose(posterior.correlation(), expected, rtol=1e-6, atol=1e-6)


def test_stable_for_a_thousand_segments():
    rng = np.random.default_rng(0)
    dim = 1001
    posterior = GaussianLinearPosterior(dim)
    features = np.hstack([np.ones((60, 1)), rng.random((60, dim - 1)) < 0.5])
    values = rng.normal(-2, 0.5, 60)
    for x, v in zip(features, values):
        posterior.update(x, v)
    mean, _ = closed_form_posterior(features, values)
    np.testing.assert_allclose(posterior.mean, mean, rtol=1e-6, atol=1e-8)
    assert np.all(np.isfinite(posterior.sample(rng, 3)))


def test_samples_follow_the_posterior():
    rng = np.random.default_rng(1)
    posterior = GaussianLinearPosterior(3, noise_variance=0.5)
    for x, v in [([1, 1, 0], 1.0), ([1, 0, 1], -1.0), ([1, 1, 1], 0.5)]:
        posterior.update(x, v)
    draws = posterior.sample(rng, 200_000)
    np.testing.assert_allclose(draws.mean(axis=0), posterior.mean, atol=0.01)
    np.testing.assert_allclose(
        draws.var(axis=0), posterior.predictive_variance(np.eye(3)), atol=0.01
    )
    np.testing.assert_allclose(np.corrcoef(draws.T), posterior.correlation(), atol=0.01)


def test_correlation_has_unit_diagonal_and_is_symmetric():
    posterior = GaussianLinearPosterior(4)
    posterior.update([1, 1, 1, 0], 0.3)
    corr = posterior.correlation()
    np.testing.assert_allclose(np.diag(corr), 1.0)
    np.testing.assert_allclose(corr, corr.T)
    assert corr[1, 2] < -0.1  # co-selected segments trade off: negative correlation


@pytest.mark.parametrize(
    "kwargs, message",
    [({"prior_variance": 0}, "positive"), ({"noise_variance": -1}, "positive")],
)
def test_bad_hyperparameters(kwargs, message):
    with pytest.raises(ValueError, match=message):  # checked once, by the method
        Camab(**kwargs)


def test_bad_observation_shape_and_value():
    posterior = GaussianLinearPosterior(3)
    with pytest.raises(ValueError, match="shape"):
        posterior.update([1, 0], 1.0)
    with pytest.raises(ValueError, match="finite"):
        posterior.update([1, 0, 1], float("nan"))
