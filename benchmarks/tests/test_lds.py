"""LDS and the reward store of the quality benchmarks, on synthetic reward functions."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from benchmarks.data import PricedReward, RewardStore, Unpriced, bits
from benchmarks.stats import (
    bernoulli_subsets,
    held_out,
    held_out_draws,
    keep_subsets,
    lds,
    predicted_rewards,
    removal_subsets,
    subset_seed,
)
from camab_rag import AttributionSettings, attribute_fn

WEIGHTS = np.random.default_rng(42).normal(size=10)  # no two subsets tie


def linear(mask: np.ndarray) -> float:
    return float(-2.0 + WEIGHTS @ mask)


def test_lds_of_a_linear_reward_read_exactly_is_one() -> None:
    n = WEIGHTS.size
    # 2**10 <= budget: every subset is scored and the fit is exact
    result = attribute_fn(linear, n, budget=1024, method="kernelshap")
    masks = bernoulli_subsets(n, 40, seed=1)
    rewards = [linear(m) for m in masks]
    assert lds(result.scores, masks, rewards) == pytest.approx(1.0)
    assert lds(-result.scores, masks, rewards) == pytest.approx(-1.0)


@pytest.mark.parametrize("method", ["auto", "contextcite", "camab", "kernelshap"])
def test_every_method_predicts_a_linear_reward_on_held_out_subsets(method: str) -> None:
    n = WEIGHTS.size
    result = attribute_fn(linear, n, budget=64, method=method, settings=AttributionSettings(seed=3))
    masks = held_out(bernoulli_subsets(n, 64, seed=2), result.masks)
    assert len(masks) >= 32
    assert lds(result.scores, masks, [linear(m) for m in masks]) > 0.9


def test_lds_of_a_shuffled_reward_is_near_zero() -> None:
    n = WEIGHTS.size
    masks = bernoulli_subsets(n, 600, seed=5)
    rewards = np.array([linear(m) for m in masks])
    shuffled = np.random.default_rng(0).permutation(rewards)
    assert lds(WEIGHTS, masks, rewards) == pytest.approx(1.0)
    assert abs(lds(WEIGHTS, masks, shuffled)) < 0.1


def test_lds_is_nan_without_enough_subsets_or_without_an_order() -> None:
    masks = bernoulli_subsets(10, 20, seed=0)
    rewards = [linear(m) for m in masks]
    assert math.isnan(lds(np.zeros(10), masks, rewards))  # predicts no order
    assert math.isnan(lds(WEIGHTS, masks[:5], rewards[:5]))  # too few
    assert math.isnan(lds(WEIGHTS, masks, np.ones(20)))  # the model sees no difference
    with pytest.raises(ValueError, match="masks must be"):
        predicted_rewards(WEIGHTS, masks[:, :4])


def test_bernoulli_subsets_are_distinct_prefix_stable_and_never_the_ends() -> None:
    masks = bernoulli_subsets(12, 40, seed=7)
    assert masks.shape == (40, 12)
    assert len({m.tobytes() for m in masks}) == 40
    assert all(0 < m.sum() < 12 for m in masks)
    np.testing.assert_array_equal(bernoulli_subsets(12, 25, seed=7), masks[:25])
    assert 0.4 < masks.mean() < 0.6
    assert bernoulli_subsets(3, 40, seed=0).shape == (6, 3)  # 2**3 - 2 subsets exist


def test_removal_subsets_cycle_through_the_sizes_and_are_prefix_stable() -> None:
    masks = removal_subsets(20, 32, seed=subset_seed("ex1", "removal"))
    removed = (~masks).sum(axis=1)
    assert removed.tolist() == [2, 3, 4, 5] * 8
    assert len({m.tobytes() for m in masks}) == 32
    np.testing.assert_array_equal(
        removal_subsets(20, 12, seed=subset_seed("ex1", "removal")), masks[:12]
    )
    assert subset_seed("ex1", "removal") != subset_seed("ex2", "removal")
    small = removal_subsets(4, 32, seed=1)  # C(4,2) + C(4,3) = 10 subsets remove 2-3 of 4
    assert small.shape == (10, 4)
    assert sorted((~small).sum(axis=1).tolist()) == [2] * 6 + [3] * 4


def test_keep_subsets_keep_one_to_four_segments_and_are_prefix_stable() -> None:
    masks = keep_subsets(20, 32, seed=subset_seed("ex1", "keep"))
    assert masks.sum(axis=1).tolist() == [1, 2, 3, 4] * 8
    assert len({m.tobytes() for m in masks}) == 32
    np.testing.assert_array_equal(keep_subsets(20, 12, seed=subset_seed("ex1", "keep")), masks[:12])
    # the same draws as the removals of the same seed, the other way round
    removed = removal_subsets(20, 32, seed=5, sizes=(1, 2, 3, 4))
    np.testing.assert_array_equal(keep_subsets(20, 32, seed=5), ~removed)
    tiny = keep_subsets(3, 32, seed=1)  # 3 singletons and 3 pairs; keeping 3 of 3 is the full
    assert sorted(tiny.sum(axis=1).tolist()) == [1, 1, 1, 2, 2, 2]


def test_held_out_draws_give_every_kind_its_own_seeded_sample() -> None:
    drawn = held_out_draws("ex1", 20, 16)
    assert set(drawn) == {"bernoulli", "removal", "keep"}
    assert all(m.shape == (16, 20) for m in drawn.values())
    np.testing.assert_array_equal(
        drawn["keep"], keep_subsets(20, 16, seed=subset_seed("ex1", "keep"))
    )
    np.testing.assert_array_equal(
        drawn["removal"], removal_subsets(20, 16, seed=subset_seed("ex1", "removal"))
    )
    assert not (drawn["keep"] == held_out_draws("ex2", 20, 16)["keep"]).all()


def test_lds_on_small_kept_contexts_tells_a_ranking_from_its_reverse() -> None:
    n = WEIGHTS.size
    masks = keep_subsets(n, 32, seed=3)
    rewards = [linear(m) for m in masks]
    assert lds(WEIGHTS, masks, rewards) == pytest.approx(1.0)
    assert lds(-WEIGHTS, masks, rewards) == pytest.approx(-1.0)


def test_held_out_drops_the_subsets_a_method_trained_on() -> None:
    masks = bernoulli_subsets(8, 10, seed=0)
    kept = held_out(masks, [masks[2], masks[5], np.ones(8, dtype=bool)])
    assert len(kept) == 8
    assert masks[2].tobytes() not in {m.tobytes() for m in kept}


# ---------------------------------------------------------------------- the store
def test_store_prices_each_subset_once_and_a_replay_needs_no_model(tmp_path: Path) -> None:
    path = tmp_path / "rewards" / "x.jsonl"
    calls: list[str] = []

    def price(mask: np.ndarray) -> tuple[float, list[float]]:
        calls.append(bits(mask))
        return linear(mask) + 1e-9, [linear(mask)] * 2

    store = RewardStore(path)
    priced = PricedReward(store, "ex", price)
    first = attribute_fn(priced, 10, budget=24, method="auto", settings=AttributionSettings(seed=1))
    assert priced.model_calls == len(calls) == first.n_queries == 24
    # a second run of another budget asks the model only for subsets it has not seen
    again = PricedReward(store, "ex", price)
    attribute_fn(again, 10, budget=32, method="auto", settings=AttributionSettings(seed=1))
    assert again.model_calls == len(set(calls)) - 24 == len(calls) - 24
    # reopened from disk, without a model: the same run, the same subsets and scores
    replay = PricedReward(RewardStore(path), "ex")
    replayed = attribute_fn(
        replay, 10, budget=24, method="auto", settings=AttributionSettings(seed=1)
    )
    np.testing.assert_array_equal(replayed.masks, first.masks)
    np.testing.assert_allclose(replayed.scores, first.scores)
    assert replay.model_calls == 0
    with pytest.raises(Unpriced, match="not priced"):
        attribute_fn(PricedReward(RewardStore(path), "ex"), 10, budget=64, method="camab")
    with pytest.raises(Unpriced):
        PricedReward(RewardStore(path), "other")(np.ones(10, dtype=bool))


def test_store_keeps_the_first_value_rounded_and_notes_a_second(tmp_path: Path) -> None:
    store = RewardStore(tmp_path / "s.jsonl")
    assert store.put("a", "101", -1.23456789, source="x") == -1.234568
    assert store.put("a", "101", -1.5, source="y") == -1.234568
    assert store.conflicts == [pytest.approx(0.265432)]
    assert store.put("a", "111", -0.5, source="z") == -0.5
    reopened = RewardStore(tmp_path / "s.jsonl")
    assert (reopened.get("a", "101"), reopened.get("a", "111"), len(reopened)) == (
        -1.234568,
        -0.5,
        2,
    )
    with pytest.raises(ValueError, match="finite"):
        store.put("a", "000", math.nan, source="x")


# ---------------------------------------------------------------------- camab bench
def test_an_answer_without_a_stored_run_is_finished_without_leave_one_out() -> None:
    """The report's 'Not finished' flag: a short answer and another model's answer to a
    stored run's example (``lds answers``, no stored design) need auto and the three peers
    at 8, 16, 32 and 64 calls, not leave-one-out; the stored run's answer needs N + 1 too;
    auto's ablation rows are never required."""
    from benchmarks.bench_lds import Case, finished_keys

    short = Case("test", {"id": "s", "n_segments": 40, "shape": "span", "methods": {}}, None)  # type: ignore[arg-type]
    answered = Case("test", {"id": "a", "n_segments": 40, "methods": {}}, None)  # type: ignore[arg-type]
    stored: dict[str, object] = {"contextcite": {"masks": []}}
    model = Case("test", {"id": "m", "n_segments": 40, "methods": stored}, None)  # type: ignore[arg-type]
    assert {b for _, b in finished_keys(short)} == {"8", "16", "32", "64", "0"}
    assert len(finished_keys(short)) == 4 * 4 + 2  # auto, 3 peers; random, lexical
    assert finished_keys(answered) == finished_keys(short)
    assert ("loo", "own") in finished_keys(model) and ("loo", "own") not in finished_keys(short)
    assert len(finished_keys(model)) == 4 * 4 + 3
    assert not any(m.startswith("auto-") for m, _ in finished_keys(model))


def sentences_case(n: int, gold: list[int] | None = None, documents: int = 1) -> Any:
    """An example of ``documents`` copies of one document of ``n`` one-sentence segments,
    answered "It is 3."."""
    from benchmarks.bench_lds import Case
    from benchmarks.data import Example

    texts = [f"Sentence {i} says {i}." for i in range(n)]
    starts = np.cumsum([0] + [len(t) + 1 for t in texts[:-1]])
    spans = [(int(a), int(a) + len(t)) for a, t in zip(starts, texts)]
    docs = [{"title": chr(65 + d), "text": " ".join(texts)} for d in range(documents)]
    example = Example("e", "What is it?", docs, [spans] * documents, gold, ["it"])
    total = n * documents
    record = {"id": "e", "seed": 3, "n_segments": total, "response": "It is 3.", "methods": {}}
    return Case("test", record, example)


def test_a_replay_reads_the_peers_from_the_longest_run_priced_so_far(tmp_path: Path) -> None:
    """A file priced to 32 calls replays its peers at 8, 16 and 32 from the 32-call run (a
    longer run's prefix is the shorter run), and leaves 64 out until it is priced."""
    from benchmarks.bench_lds import fits_of

    case = sentences_case(12, documents=2)
    store = RewardStore(tmp_path / "r.jsonl")
    weights = np.linspace(-1.0, 1.0, case.n)

    def price(mask: np.ndarray) -> tuple[float, list[float]]:
        return float(weights @ mask) / case.n, [0.0]

    priced = fits_of(case, PricedReward(store, "e", price), budgets=(8, 16, 32), ablations=False)
    assert {b for (m, b) in priced if m == "contextcite"} == {"8", "16", "32"}
    replayed = fits_of(case, PricedReward(store, "e"), partial=True)
    for method in ("camab", "contextcite", "kernelshap"):
        assert {b for (m, b) in replayed if m == method} == {"8", "16", "32"}
        for b in ("8", "16", "32"):
            np.testing.assert_allclose(replayed[(method, b)].scores, priced[(method, b)].scores)
    assert ("auto", "32") in replayed and ("auto", "64") not in replayed
    assert not any(m.startswith("auto-") for m, _ in priced)  # no ablations


def test_a_short_answer_section_names_the_top_up_only_when_more_draws_are_priced() -> None:
    """The report says how a short-answer file's held-out draws were priced: the first 16
    of each kind with its first run, the command that topped them up to 32 only when more
    than 16 a kind are priced (the counts come from the store, never typed in)."""
    from benchmarks.bench_lds import section

    def text(per_kind: int) -> str:
        sizes = [{"bernoulli": per_kind, "removal": per_kind, "keep": per_kind}] * 2
        return section("hotpotqa_smollm2", [], sizes, (0, set()), shape="span")

    first, topped = text(16), text(30)
    assert "--held-out 32" not in first and "16 of each kind at first" in first
    assert "--phases bernoulli,keep,removal --held-out 32" in topped
    assert "30.0 Bernoulli ½, 30.0 removals" in topped


def test_the_equal_scores_row_reads_a_size_only_reward_and_has_no_top_k(tmp_path: Path) -> None:
    """The free 'equal scores' row predicts a subset's reward from its size: exact (LDS 1)
    on a reward that counts the kept segments, none on one that ignores the size; it has
    no order, so no drop@k and no AUROC."""
    from benchmarks.bench_lds import DROP_KS, SIZE_ONLY, measure
    from benchmarks.stats import held_out_draws, removal_mask, removal_set

    case = sentences_case(10, gold=[3])

    def read(reward) -> dict[str, float]:
        store = RewardStore(tmp_path / f"{reward.__name__}.jsonl")
        priced = PricedReward(store, "e", lambda m: (reward(m), [0.0]))
        for masks in held_out_draws("e", case.n, 32).values():
            priced.many(masks)
        priced(np.ones(case.n, dtype=bool))
        priced.many(removal_mask(case.n, removal_set(np.ones(case.n), k)) for k in DROP_KS)
        cells, _ = measure(case, store)
        return cells[SIZE_ONLY]

    def counted(mask: np.ndarray) -> float:
        return float(mask.sum()) / 10

    def ranked(mask: np.ndarray) -> float:
        return float(WEIGHTS @ mask - WEIGHTS.mean() * mask.sum())

    sized = read(counted)
    assert sized["lds_keep"] == pytest.approx(1.0) and sized["lds_removal"] == pytest.approx(1.0)
    assert not any(k.startswith("drop@") or k == "auroc" for k in sized)
    assert abs(read(ranked)["lds_bernoulli"]) < 0.5


def test_the_drops_phase_prices_every_fits_top_k_but_not_the_equal_scores_row(
    tmp_path: Path,
) -> None:
    """``lds run``'s drops phase asks for drop@1 and drop@3 of every replayed fit, and of the
    equal-scores row none (its scores have no order)."""
    from benchmarks.bench_lds import DROP_KS, SIZE_ONLY, drop_masks, fits_of

    case = sentences_case(6)
    store = RewardStore(tmp_path / "r.jsonl")
    priced = PricedReward(store, "e", lambda m: (float(WEIGHTS[:6] @ m), [0.0]))
    fits_of(case, priced, budgets=(8,), ablations=False)
    replayed = fits_of(case, PricedReward(store, "e"), partial=True)
    assert SIZE_ONLY in replayed and ("auto", "8") in replayed
    masks = drop_masks(case, store)
    assert len(masks) == len(DROP_KS) * (len(replayed) - 1)


def test_an_offset_past_the_file_names_its_size() -> None:
    """``lds run`` past the last example says so (no IndexError deep in the run)."""
    import pytest

    from benchmarks.bench_lds import picked

    found = [sentences_case(4), sentences_case(6)]
    assert picked(found, 1, 5, "f") == found[1:]
    with pytest.raises(SystemExit, match="f: no example at offset 2 \\(2 examples\\)"):
        picked(found, 2, 1, "f")


def test_a_generated_file_gives_the_one_run_command_of_its_later_examples() -> None:
    """A file another model answered gives both ways its examples were priced: in stages
    (its first examples) and in one run each (those answered later); a short-answer file,
    priced in stages only, does not."""
    from benchmarks.bench_lds import section

    sizes = [{"bernoulli": 32, "removal": 32, "keep": 32}] * 2
    source = ("cnn_dailymail_smollm2", "qwen2.5-0.5b")
    generated = section("cnn_dailymail_qwen2.5-0.5b", [], sizes, (0, set()), "model", source)
    short = section("hotpotqa_smollm2", [], sizes, (0, set()), shape="span")
    one_run = "--phases fits,drops,keep,removal,bernoulli --no-ablations --threads 1 --offset K"
    assert "Priced with `nice -n 10" in generated and "; the examples answered later" in generated
    assert f"lds run --results cnn_dailymail_qwen2.5-0.5b {one_run}" in generated
    assert "the examples answered later" not in short


def test_the_auto_phase_prices_auto_alone_at_the_budget_asked(tmp_path: Path) -> None:
    """``lds run --phases auto --budgets 40`` prices the full context and ``auto`` as
    ``attribute`` runs it at 40 calls, and no peer; a replay then reads that fit without the
    model, the same scores as a fit on the model's rewards."""
    from argparse import Namespace

    from benchmarks.bench_lds import fits_of, price_phase

    case = sentences_case(12, documents=4)
    store = RewardStore(tmp_path / "r.jsonl")
    weights = np.random.default_rng(7).normal(size=case.n)
    calls: list[int] = []

    def price(mask: np.ndarray) -> tuple[float, list[float]]:
        calls.append(1)
        return float(weights @ mask) / case.n, [0.0]

    args = Namespace(budgets=(40,), ablations=False, held_out=16)
    price_phase("auto", case, PricedReward(store, "e", price), store, args)
    assert 1 < len(calls) <= 41  # the full context, then at most the budget
    replayed = fits_of(case, PricedReward(store, "e"), partial=True, budgets=(40,))
    assert ("auto", "40") in replayed
    assert not any(m in replayed for m in (("contextcite", "40"), ("kernelshap", "40")))
    fresh = fits_of(
        case, PricedReward(RewardStore(tmp_path / "f.jsonl"), "e", price), only=(), budgets=(40,)
    )
    np.testing.assert_allclose(replayed[("auto", "40")].scores, fresh[("auto", "40")].scores)
