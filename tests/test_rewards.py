import numpy as np
import pytest
from fakes import KeywordScorer

from camab_rag import AttributionSettings, attribute
from camab_rag.errors import InputError
from camab_rag.rewards import get_reward, mean_logit, mean_logprob, sum_logprob

LOGPROBS = np.log(np.array([0.5, 0.25, 0.9]))


def test_reward_values():
    assert mean_logprob(LOGPROBS) == pytest.approx(np.log([0.5, 0.25, 0.9]).mean())
    assert sum_logprob(LOGPROBS) == pytest.approx(np.log(0.5 * 0.25 * 0.9))
    expected = np.mean([np.log(p / (1 - p)) for p in (0.5, 0.25, 0.9)])
    assert mean_logit(LOGPROBS) == pytest.approx(expected)
    assert np.isfinite(mean_logit(np.array([0.0, -1e-20])))  # p == 1 is capped, not inf


def test_rewards_are_selectable_and_change_the_scores():
    args = ("Where?", ["Paris is big.", "Rome is old."], "Paris is big", KeywordScorer())
    mean = attribute(
        *args, budget=12, method="loo", settings=AttributionSettings(reward="mean_logprob")
    )
    total = attribute(
        *args, budget=12, method="loo", settings=AttributionSettings(reward="sum_logprob")
    )
    custom = attribute(
        *args,
        budget=12,
        method="loo",
        settings=AttributionSettings(reward=lambda lp: float(lp.min())),
    )
    # "Paris" and "big" both come from segment 0: the sum counts them twice over the mean.
    assert total.scores[0] == pytest.approx(3 * mean.scores[0])
    assert total.reward == "sum_logprob" and custom.reward == "<lambda>"
    assert mean.top_k(1) == total.top_k(1) == [0]


def test_unknown_reward():
    with pytest.raises(InputError, match="unknown reward"):
        get_reward("rouge")


@pytest.mark.parametrize("method", ["auto", "camab", "loo"])
@pytest.mark.parametrize("budget", [8, 40])  # 40 scores every subset of 3 segments
def test_a_reward_that_is_not_a_finite_float_is_refused(method, budget):
    args = ("Where?", ["Paris is big.", "Rome is old.", "Oslo is cold."], "Paris is big")
    with pytest.raises(InputError, match="reward function returned nan for subset"):
        attribute(
            *args,
            KeywordScorer(),
            budget=budget,
            method=method,
            settings=AttributionSettings(reward=lambda lp: np.nan),
        )
    with pytest.raises(InputError, match="reward function must return a float"):
        attribute(
            *args,
            KeywordScorer(),
            budget=budget,
            method=method,
            settings=AttributionSettings(reward=lambda lp: "high"),
        )
