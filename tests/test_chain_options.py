"""The options every integration object takes, checked once and built into its runs
(camab_rag.integration)."""

from __future__ import annotations

import pytest
from fakes import KeywordScorer

from camab_rag.errors import InputError, ScorerUnavailableError
from camab_rag.groundedness import GroundednessFilter
from camab_rag.integration import AttributorOptions, ChainOptions, Runs
from camab_rag.settings import CHAIN_SETTINGS


def test_the_options_build_the_settings_the_scorer_choice_and_the_runs() -> None:
    scorer, settings = KeywordScorer(), CHAIN_SETTINGS.with_changes(budget=6)
    options = {"settings": settings, "strict": True, "background": True}
    runs = Runs.of("Step", scorer, {**options, "scorer_options": {"timeout": 1}})
    assert runs.settings is settings
    assert runs.strict and runs.background and not runs.citations
    assert runs.scorers.get() is scorer
    assert runs.scorers.options == {"timeout": 1}
    default = Runs.of("Step", None, {})
    assert default.settings is CHAIN_SETTINGS and default.keep == 1000
    with pytest.raises(TypeError, match="max_results"):  # a test-only switch, removed
        Runs.of("Step", None, {"max_results": 2})


def test_the_knobs_are_options_of_every_object_and_win_over_settings() -> None:
    """budget, method, granularity, deadline_s, groundedness: keywords of every
    integration object, merged into the settings (default CHAIN_SETTINGS) by the core's one
    resolver; a keyword given wins over the settings' field, the rest is kept."""
    gate = GroundednessFilter()
    knobs = {"budget": 8, "method": "camab", "granularity": "sentence", "deadline_s": 5}
    for listed in (AttributorOptions, ChainOptions):
        settings = Runs.of("Engine", None, {**knobs, "groundedness": gate}, listed=listed).settings
        assert (settings.budget, settings.method_instance.name) == (8, "camab")
        assert (settings.granularity, settings.deadline_s) == ("sentence", 5.0)
    runs = Runs.of("Step", None, {**knobs, "groundedness": gate})
    assert runs.gate is gate  # held beside the settings
    assert isinstance(Runs.of("Step", None, {"groundedness": True}).gate, type(gate))
    only_budget = Runs.of("Step", None, {"budget": 12}).settings
    assert only_budget == CHAIN_SETTINGS.with_changes(budget=12)  # chunks, 120 s kept
    given = CHAIN_SETTINGS.with_changes(budget=40, seed=3, deadline_s=30)
    merged = Runs.of("Step", None, {"settings": given, "budget": 6}).settings
    assert (merged.budget, merged.seed, merged.deadline_s) == (6, 3, 30.0)
    with pytest.raises(InputError, match="budget must be >= 1"):
        Runs.of("Step", None, {"budget": -1})
    with pytest.raises(InputError, match="deadline_s must be a positive number"):
        Runs.of("Engine", None, {"deadline_s": 0}, listed=AttributorOptions)
    with pytest.raises(InputError, match="granularity must be"):
        Runs.of("Engine", None, {"granularity": "word"}, listed=AttributorOptions)


def test_bad_options_are_refused_by_name() -> None:
    with pytest.raises(
        TypeError,
        match=r"^Step\(\) got an unexpected keyword argument 'budjet' \(did you mean 'budget'\?\)$",
    ):
        Runs.of("Step", None, {"budjet": 8})
    with pytest.raises(InputError, match="settings must be an AttributionSettings, got dict"):
        Runs.of("Step", None, {"settings": {"budget": 8}})
    blocking = GroundednessFilter(mode="block")
    with pytest.raises(InputError, match="refused here: it observes only"):
        Runs.of("Handler", None, {"groundedness": blocking}, blocking_refused="it observes only")
    assert Runs.of("Step", None, {"groundedness": blocking}).gate is blocking
    with pytest.raises(InputError, match="budget=0 attributes nothing"):
        Runs.of("Step", None, {"budget": 0})  # judge-only needs a filter


def test_every_object_takes_one_list_of_options_checked_one_way() -> None:
    assert set(AttributorOptions.__annotations__) < set(ChainOptions.__annotations__)
    assert Runs.of("Engine", None, {}, listed=AttributorOptions).settings is CHAIN_SETTINGS
    with pytest.raises(TypeError, match=r"Engine\(\) got an unexpected keyword argument 'strict'"):
        Runs.of("Engine", None, {"strict": True}, listed=AttributorOptions)
    assert Runs.of("Step", None, {"strict": True}).settings is CHAIN_SETTINGS
    with pytest.raises(InputError, match="proxy must have a score"):
        Runs.of("Step", None, {"proxy": object()})
    with pytest.raises(InputError, match="progress must be a function"):
        Runs.of("Step", None, {"progress": "yes"})
    setting = r"'seed': it is a setting, pass settings=CHAIN_SETTINGS.with_changes\(seed="
    with pytest.raises(TypeError, match=setting):
        Runs.of("Engine", None, {"seed": 8}, listed=AttributorOptions)


def test_an_object_that_builds_its_scorers_explains_their_errors() -> None:
    def explain(error: Exception) -> Exception:
        return ScorerUnavailableError(f"{error}: pass llm=")

    assert Runs.of("H", None, {}, explain=explain).explain is explain
    assert Runs.of("H", KeywordScorer(), {}, explain=explain).explain is None  # given one
    assert Runs.of("S", None, {}).explain is None


def test_an_object_that_cannot_see_the_model_needs_a_scorer() -> None:
    with pytest.raises(InputError, match=r"Step needs scorer=.*llm=.*proxy=\.\.\.: it is blind"):
        Runs.of("Step", None, {}, needs_scorer="it is blind")
    assert Runs.of("Step", None, {"proxy": KeywordScorer()}, needs_scorer="x").scorers
