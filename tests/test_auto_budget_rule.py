"""``auto``'s budget rule (issue 51): random halves when calls are scarce per unit, the
adaptive design otherwise (pure logic on planted rewards; no model)."""

import numpy as np
import pytest

from camab_rag import AttributionSettings, attribute_fn
from camab_rag.methods import Auto
from camab_rag.methods.auto import (
    HALVES_FOR_EVERY_ANSWER_FROM,
    JOINT_FIT_BELOW,
    UNLIKELY_ANSWER,
    UNLIKELY_HALVES_FROM,
    UNLIKELY_HALVES_MIN_CALLS,
    _Switches,
    budget_rule,
)
from camab_rag.methods.base import lasso_cv_scores, lasso_scores
from camab_rag.methods.baselines import ContextCite
from camab_rag.methods.registry import method_from_config

N = 40
GROUPS = [i // 4 for i in range(N)]  # 10 documents of 4 sentences, as HotpotQA
WEIGHTS = np.where(np.arange(N) % 7 == 0, 0.3, 0.0)


def planted(mask: np.ndarray) -> float:
    return float(WEIGHTS @ mask) - 2.0


@pytest.mark.parametrize(
    ("n_segments", "budget", "below", "expected"),
    [
        (40, 8, 1.0, True),
        (40, 40, 1.0, True),
        (40, 41, 1.0, False),
        (40, 64, 0.5, False),
        (40, 20, 0.5, True),
        (40, 21, 0.5, False),
        (4, 8, 1.0, False),
        (40, 8, 0.0, False),
    ],
)
def test_the_rule_compares_the_budget_with_calls_per_unit(n_segments, budget, below, expected):
    assert (
        budget_rule(_Switches(joint_fit_below=below), n_segments, budget, 2).joint_fit is expected
    )


def test_the_shipped_cuts() -> None:
    """The shipped cuts (chosen on the dev rows, BENCHMARKS "Fewer calls"): one fit over
    both levels at 8 calls on a HotpotQA-sized context, one per level from 16 on;
    on one document, ContextCite's random halves under a quarter call per sentence and
    the adaptive design read with LASSO from there (CNN/DM), never over several
    documents."""
    switches = Auto()._switches
    assert [budget_rule(switches, 40, b, 10).joint_fit for b in (8, 16, 32)] == [
        True,
        False,
        False,
    ]
    assert [budget_rule(switches, 20, b, 1).design for b in (8, 16, 32)] == ["adaptive"] * 3
    assert [budget_rule(switches, 40, b, 1).design for b in (8, 16)] == [
        "random_halves",
        "adaptive",
    ]
    assert {budget_rule(switches, 20, b, 1).estimator for b in (8, 16, 32, 64)} == {"lasso"}
    assert budget_rule(switches, 5, 32, 1).estimator == "flat_intercept"  # every subset
    assert budget_rule(switches, 40, 64, 10).estimator == "flat_intercept"
    assert {budget_rule(switches, 40, b, 10).design for b in (4, 8, 16, 64)} == {"adaptive"}
    assert 8 < JOINT_FIT_BELOW * 41 <= 16
    # KernelSHAP's design was searched and not chosen on the dev rows: never shipped
    assert {
        budget_rule(switches, n, b, d).design
        for n, d in ((20, 1), (40, 10))
        for b in (2, 8, 16, 64)
    } <= {"adaptive", "random_halves"}


def run(method=None, budget=8):
    return attribute_fn(
        planted,
        N,
        budget=budget,
        method=method,
        groups=GROUPS,
        settings=AttributionSettings(seed=5),
    )


def test_under_the_cut_auto_fits_both_levels_at_once_on_the_same_subsets():
    ours, old = run(), run(Auto._variant(joint_fit_below=0.0))
    assert ours.method == "auto"
    assert ours.method_config["hierarchical"] and ours.method_config["joint_fit"]
    assert not old.method_config["joint_fit"]
    np.testing.assert_array_equal(ours.masks, old.masks)  # the estimator alone changed
    assert ours.n_queries == old.n_queries <= 8
    assert not np.allclose(ours.scores, old.scores)
    refit = method_from_config(ours.method, ours.method_config)
    np.testing.assert_allclose(refit.fit(ours.masks, ours.rewards), ours.scores, atol=1e-12)


def test_above_the_cut_auto_keeps_one_fit_per_level():
    result = run(budget=int(np.ceil(JOINT_FIT_BELOW * (N + 1))) + 1)
    assert result.n_queries > 8
    assert result.method_config["hierarchical"] and not result.method_config["joint_fit"]
    assert result.method_config["design"] == "adaptive"


def test_the_random_halves_ask_for_contextcites_subsets_on_one_level():
    """``auto``'s halves are ContextCite's subsets, read with a cross-validated LASSO
    (with ``halves_fit="lasso"``, ContextCite's own fit)."""
    ours = run(Auto._variant(design="random_halves"), budget=16)
    fixed = run(Auto._variant(design="random_halves", halves_fit="lasso"), budget=16)
    theirs = attribute_fn(
        planted, N, budget=16, method="contextcite", settings=AttributionSettings(seed=5)
    )
    assert not ours.method_config.get("hierarchical")
    np.testing.assert_array_equal(ours.masks, theirs.masks)
    np.testing.assert_allclose(fixed.scores, theirs.scores, atol=1e-12)
    np.testing.assert_allclose(
        ours.scores, lasso_cv_scores(theirs.masks, theirs.rewards), atol=1e-12
    )


RULE = _Switches(joint_fit_below=1.0, one_document_halves_below=2.0)


@pytest.mark.parametrize(
    ("n_segments", "budget", "n_docs", "design", "joint_fit"),
    [
        (40, 8, 10, "adaptive", True),  # over several documents: never the halves
        (40, 30, 10, "adaptive", True),  # one joint fit under 1.0 * 41
        (40, 41, 10, "adaptive", False),
        (20, 16, 1, "random_halves", False),  # one document: its own cut, 2 * 21
        (20, 41, 1, "random_halves", False),
        (20, 42, 1, "adaptive", False),
        (20, 16, 0, "random_halves", False),  # no documents given: as one document
        (6, 3, 6, "adaptive", False),  # whole documents (chunks): as several documents
        (6, 6, 6, "adaptive", False),  # chunks never take the joint fit (one level)
    ],
)
def test_the_budget_rule_reads_budget_units_and_documents(
    n_segments, budget, n_docs, design, joint_fit
):
    chosen = budget_rule(RULE, n_segments, budget, n_docs)
    assert (chosen.design, chosen.joint_fit) == (design, joint_fit)
    none = _Switches(
        joint_fit_below=0,
        one_document_halves_below=0,
        one_document_lasso_from=float("inf"),
        lexical_prior_below=0.0,
    )
    assert budget_rule(none, n_segments, budget, n_docs) == none


def test_the_halves_read_with_lasso_are_contextcite_on_one_document() -> None:
    """Under the one-document cut ``auto`` asks for ContextCite's subsets and reads them
    with LASSO: the very scores of ``method="contextcite"``."""
    rule = Auto._variant(one_document_halves_below=1.0)
    ours = attribute_fn(
        planted, N, budget=16, method=rule, groups=[0] * N, settings=AttributionSettings(seed=5)
    )
    theirs = attribute_fn(
        planted, N, budget=16, method="contextcite", settings=AttributionSettings(seed=5)
    )
    assert ours.method_config["design"] == "random_halves"
    assert ours.method_config["halves_fit"] == "lasso"  # too few rows to cross-validate
    np.testing.assert_allclose(ours.scores, theirs.scores, atol=1e-12)
    above = attribute_fn(
        planted, N, budget=48, method=rule, groups=[0] * N, settings=AttributionSettings(seed=5)
    )
    assert above.method_config["design"] == "adaptive"


def test_one_documents_adaptive_design_is_read_with_lasso() -> None:
    """From the cut on, one document's run asks for the adaptive design's subsets (those
    of the flat fit) and reads them with ContextCite's LASSO; the stored config refits."""
    ours, flat = (
        attribute_fn(
            planted,
            N,
            budget=48,
            method=method,
            groups=[0] * N,
            settings=AttributionSettings(seed=5),
        )
        for method in (None, Auto._variant(one_document_lasso_from=float("inf")))
    )
    assert ours.method_config["estimator"] == "lasso"
    assert flat.method_config["estimator"] == "flat_intercept"
    np.testing.assert_array_equal(ours.masks, flat.masks)
    np.testing.assert_allclose(ours.scores, lasso_scores(ours.masks, ours.rewards), atol=1e-12)
    assert not np.allclose(ours.scores, flat.scores)
    refit = method_from_config(ours.method, ours.method_config)
    np.testing.assert_allclose(refit.fit(ours.masks, ours.rewards), ours.scores, atol=1e-12)


@pytest.mark.parametrize(
    "switches",
    [
        {"design": "halves"},
        {"estimator": "ols"},
    ],
)
def test_bad_rule_switches_are_refused(switches):
    with pytest.raises(ValueError, match=next(iter(switches))):
        Auto._variant(**switches)


def test_a_stored_config_with_retired_switches_still_refits() -> None:
    """Results stored before the research switches went carry them; they chose subsets,
    not the fit, so the config rebuilds the same estimator."""
    ours = run(budget=16)
    old = {
        **ours.method_config,
        "shapley_opening": 0.75,
        "refine_opening": "leave_one_out",
        "random_halves_below": 0.0,
        "kernelshap_below": 0.0,
        "one_document_kernelshap_below": 0.0,
    }
    refit = method_from_config(ours.method, old)
    np.testing.assert_allclose(refit.fit(ours.masks, ours.rewards), ours.scores, atol=1e-12)


# ------------------------------------------- an answer the model would not give itself


def unlikely(mask: np.ndarray) -> float:
    """The planted rewards, 2 nats a token lower: -2.2 at the full context."""
    return planted(mask) - 2.0


@pytest.mark.parametrize(
    ("full", "n_segments", "budget", "n_docs", "design"),
    [
        (-2.2, 40, 64, 10, "random_halves"),  # N + 1 calls and 64: the halves
        (-2.2, 70, 40, 10, "random_halves"),  # (N + 1) / 2 calls and 40: the halves
        (-2.2, 40, 39, 10, "adaptive"),  # under 40 calls
        (-2.2, 80, 40, 10, "adaptive"),  # under (N + 1) / 2 calls
        (-2.2, 130, 64, 10, "adaptive"),  # under (N + 1) / 2 calls
        (-1.4, 40, 63, 10, "adaptive"),  # likely enough (the model's own) under 64 calls
        (-1.4, 40, 64, 10, "random_halves"),  # from 64 calls, every answer
        (-1.4, 130, 64, 10, "adaptive"),  # under (N + 1) / 2 calls
        (None, 40, 64, 10, "adaptive"),  # not read
        (-2.2, 40, 64, 40, "adaptive"),  # one segment a document
        (-2.2, 5, 64, 2, "adaptive"),  # every subset fits
    ],
)
def test_an_unlikely_answer_takes_the_halves_over_several_documents(
    full, n_segments, budget, n_docs, design
):
    assert budget_rule(_Switches(), n_segments, budget, n_docs, None, full).design == design
    assert UNLIKELY_ANSWER == -1.5 and UNLIKELY_HALVES_FROM == 0.5
    assert UNLIKELY_HALVES_MIN_CALLS == 40 and HALVES_FOR_EVERY_ANSWER_FROM == 64
    assert budget_rule(_Switches(), 40, 64, 1, None, -2.2).estimator == "lasso"  # one document


def test_an_unlikely_answer_is_read_from_the_full_context_then_contextcites_halves():
    """One call on the full context first; for an unlikely answer the halves take the rest
    of the budget (no call more) and a cross-validated LASSO reads them with it; else the
    run's hierarchical design reuses that call."""
    ours = attribute_fn(unlikely, N, budget=64, groups=GROUPS, settings=AttributionSettings(seed=5))
    assert ours.n_queries == 64 and ours.masks.shape == (64, N)
    assert ours.masks[0].all() and ours.method_config["design"] == "random_halves"
    assert ours.method_config["halves_fit"] == "lasso_cv"  # what reads the halves
    assert ours.method_config["full_reward"] == pytest.approx(ours.rewards[0]) == -2.2
    halves = ContextCite().sampler(N, 63, np.random.default_rng(5)).next_masks()
    np.testing.assert_array_equal(ours.masks[1:], halves)
    np.testing.assert_allclose(ours.scores, lasso_cv_scores(ours.masks, ours.rewards), atol=1e-12)
    assert not np.allclose(ours.scores, lasso_scores(ours.masks, ours.rewards), atol=1e-3)
    refit = method_from_config(ours.method, ours.method_config)
    np.testing.assert_allclose(refit.fit(ours.masks, ours.rewards), ours.scores, atol=1e-12)
    assert sorted(np.argsort(-ours.scores)[:6].tolist()) == np.flatnonzero(WEIGHTS).tolist()

    likely = run(budget=63)
    assert likely.n_queries == 63 and likely.method_config["hierarchical"]
    assert likely.method_config["design"] == "adaptive"
    assert "halves_fit" not in likely.method_config  # no halves fitted
    assert likely.method_config["full_reward"] == pytest.approx(-0.2)
    default = attribute_fn(
        unlikely, N, budget=40, groups=GROUPS, settings=AttributionSettings(seed=5)
    )
    assert default.n_queries == 40 and default.method_config["design"] == "random_halves"
    assert default.method_config["halves_fit"] == "lasso_cv"
    below = attribute_fn(
        unlikely, N, budget=39, groups=GROUPS, settings=AttributionSettings(seed=5)
    )
    assert below.method_config["hierarchical"] and below.n_queries <= 39
    assert "full_reward" not in below.method_config  # not read under 40 calls


def test_from_64_calls_every_answer_takes_the_halves_after_the_full_context():
    """From 64 calls over several documents a likely answer (the model's own) is read as an
    unlikely one is: the full context, then ContextCite's halves, a cross-validated LASSO;
    the switch turned off keeps the hierarchical design, and a config refits either."""
    ours = run(budget=64)
    assert ours.n_queries == 64 and ours.masks[0].all()
    assert ours.method_config["design"] == "random_halves"
    assert ours.method_config["full_reward"] == pytest.approx(-0.2)
    assert "every_answer_halves_from" not in ours.method_config  # the usual: not stored
    halves = ContextCite().sampler(N, 63, np.random.default_rng(5)).next_masks()
    np.testing.assert_array_equal(ours.masks[1:], halves)
    np.testing.assert_allclose(ours.scores, lasso_cv_scores(ours.masks, ours.rewards), atol=1e-12)
    assert sorted(np.argsort(-ours.scores)[:6].tolist()) == np.flatnonzero(WEIGHTS).tolist()
    off = Auto._variant(every_answer_halves_from=float("inf"))
    before = run(method=off, budget=64)
    assert before.method_config["hierarchical"] and before.method_config["design"] == "adaptive"
    assert before.method_config["every_answer_halves_from"] == float("inf")
    for result in (ours, before):
        refit = method_from_config(result.method, result.method_config)
        np.testing.assert_allclose(
            refit.fit(result.masks, result.rewards), result.scores, atol=1e-12
        )


def test_the_unlikely_answer_floor_is_a_switch_the_config_keeps():
    """A variant's floor and cut move where the halves start (benchmarks replay candidate
    rules this way); the stored config rebuilds the same variant."""
    assert _Switches().unlikely_halves_min_calls == UNLIKELY_HALVES_MIN_CALLS
    early = Auto._variant(unlikely_halves_from=0.25, unlikely_halves_min_calls=32)
    assert early.reads_full_reward(40, 32, 10) and not Auto().reads_full_reward(40, 32, 10)
    assert not early.reads_full_reward(40, 31, 10)  # under its floor
    assert not early.reads_full_reward(200, 32, 10)  # under 0.25 (N + 1) calls
    ours = attribute_fn(
        unlikely, N, budget=32, method=early, groups=GROUPS, settings=AttributionSettings(seed=5)
    )
    assert ours.n_queries == 32 and ours.method_config["design"] == "random_halves"
    assert ours.method_config["unlikely_halves_min_calls"] == 32
    refit = method_from_config(ours.method, ours.method_config)
    np.testing.assert_allclose(refit.fit(ours.masks, ours.rewards), ours.scores, atol=1e-12)
    assert isinstance(refit, Auto) and refit.reads_full_reward(40, 32, 10)


def test_a_config_stored_before_the_halves_fit_was_a_switch_refits_with_lasso():
    """Runs stored before the halves were read with a cross-validated LASSO carry no
    ``halves_fit``; they were read with ContextCite's LASSO, and refit so."""
    ours = attribute_fn(unlikely, N, budget=64, groups=GROUPS, settings=AttributionSettings(seed=5))
    old = {k: v for k, v in ours.method_config.items() if k != "halves_fit"}
    refit = method_from_config(ours.method, old)
    np.testing.assert_allclose(
        refit.fit(ours.masks, ours.rewards), lasso_scores(ours.masks, ours.rewards), atol=1e-12
    )
    assert method_from_config("auto", {}) == Auto()  # a partial config: what runs now


def test_only_the_default_reward_is_read_against_the_cut():
    """The cut is in mean log-prob a token: another reward keeps the hierarchical design
    and makes no call first."""
    settings = AttributionSettings(seed=5, reward="sum_logprob")
    result = attribute_fn(unlikely, N, budget=64, groups=GROUPS, settings=settings)
    assert result.method_config["hierarchical"] and result.method_config["design"] == "adaptive"
    off = Auto._variant(unlikely_halves_from=float("inf"))
    same = attribute_fn(unlikely, N, budget=64, method=off, groups=GROUPS, settings=settings)
    np.testing.assert_array_equal(result.masks, same.masks)


def test_half_sized_draws_keep_half_and_skip_a_long_unit_opening() -> None:
    """The benchmarks' variant (``draws_keep="half"``, benchmarks/lds_draws.py): each
    Thompson draw keeps the heavier half of the units; a level opens with each unit left
    out once only where that takes the whole level or at most half of it."""
    rng = np.random.default_rng(0)
    half = Auto._variant(draws_keep="half")
    sampler = half.sampler(12, 40, rng)  # 13 opening rows fit in half of 40: it opens
    opening = sampler.next_masks()
    assert opening is not None and opening.shape == (13, 12)
    sampler.observe(opening, np.array([planted(np.resize(row, N)) for row in opening]))
    draw = sampler.next_masks()
    assert draw is not None and draw.sum(axis=1).tolist() == [6]
    skipped = half.sampler(30, 40, rng).next_masks()  # 31 opening rows: over half of 40
    assert skipped is not None and skipped.shape == (1, 30) and skipped.sum() == 15
    opened = Auto().sampler(30, 40, rng).next_masks()  # auto as it ships opens
    assert opened is not None and opened.shape == (31, 30)
    with pytest.raises(Exception, match="unknown draws_keep"):
        Auto._variant(draws_keep="third")
    result = attribute_fn(planted, N, budget=32, method=half, groups=GROUPS)
    assert result.n_queries == 32


@pytest.mark.parametrize(
    ("cut", "budget", "words", "prior"),
    [
        (0.5, 16, 4, True),  # 16 < 0.5 * 41: as it ships
        (0.25, 16, 4, False),  # 16 >= 0.25 * 41: the benchmarks' candidate drops it
        (0.25, 8, 4, True),
        (0.5, 16, 7, False),  # a longer answer: no prior over several documents
    ],
)
def test_the_short_answers_prior_over_several_documents_stops_at_its_cut(cut, budget, words, prior):
    switches = _Switches(short_lexical_below=cut)
    assert budget_rule(switches, 40, budget, 10, words).lexical_prior is prior
    assert "short_lexical_below" not in Auto().config()  # as stored runs hold them
    assert Auto._variant(short_lexical_below=0.25).config()["short_lexical_below"] == 0.25
