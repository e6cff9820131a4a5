"""One settings object end to end (issue 40 item 1): the entry points take a short keyword
list plus ``settings=``, the keywords override the settings through the one validated
path, the method is built once (with the settings) and the prompt is planned once."""

from __future__ import annotations

import inspect
from dataclasses import fields
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fakes import KeywordScorer, attribute_captured

import camab_rag
import camab_rag.engine
import camab_rag.prompts
import camab_rag.settings
from camab_rag import AttributionSettings, aattribute, attribute, attribute_fn
from camab_rag.attributor import Attributor, _attribute_steps
from camab_rag.errors import InputError
from camab_rag.groundedness import GroundednessFilter
from camab_rag.methods import Auto, Camab
from camab_rag.result import AttributionResult
from camab_rag.settings import CHAIN_SETTINGS, DEFAULT_SETTINGS, FIELD_KNOBS, resolve_settings

DOCS = ["Paris is the capital of France.", "Bananas are yellow.", "The Seine is in Paris."]
QUESTION = "What is the capital of France?"
ANSWER = "Paris is the capital of France."
MANY = [f"Fact {i} is here. Paris is the capital of France." for i in range(4)]
PROMPT = "Context:\n" + "\n".join(DOCS) + f"\nQ: {QUESTION}"


class WideScorer(KeywordScorer):
    """The keyword scorer, claiming to run 8 requests at once (``auto`` then draws 2)."""

    parallel_requests = 8


def test_the_entry_points_share_one_short_signature() -> None:
    names = list(inspect.signature(attribute).parameters)
    # 4 inputs, the 5 everyday knobs (as every integration takes them), prompt,
    # progress, history (the conversation before the question), settings
    assert len(names) <= 13 and names[-1] == "settings"
    assert {*FIELD_KNOBS, "groundedness"} <= set(names)
    for function in (aattribute, _attribute_steps):
        assert list(inspect.signature(function).parameters) == names
    # the keyword list is written once: both shells run the one steps generator
    assert attribute.__wrapped__ is aattribute.__wrapped__ is _attribute_steps  # type: ignore[attr-defined]
    assert len(inspect.signature(attribute_fn).parameters) <= 10
    for function in (attribute, aattribute, _attribute_steps, attribute_fn):
        kinds = {p.kind for p in inspect.signature(function).parameters.values()}
        assert inspect.Parameter.VAR_KEYWORD not in kinds


def test_keywords_override_the_settings_and_keep_the_rest() -> None:
    settings = AttributionSettings(budget=30, method="camab", seed=4, statements=False)
    base = attribute(QUESTION, DOCS, ANSWER, KeywordScorer(), settings=settings)
    assert (base.budget, base.method, base.seed, base.statements) == (30, "camab", 4, [])
    smaller = attribute(QUESTION, DOCS, ANSWER, KeywordScorer(), budget=5, settings=settings)
    assert (smaller.budget, smaller.method, smaller.seed, smaller.statements) == (
        5,
        "camab",
        4,
        [],
    )
    direct = AttributionSettings(budget=5, method="camab", seed=4, statements=False)
    same = attribute(QUESTION, MANY, ANSWER, KeywordScorer(), settings=direct)
    overridden = attribute(QUESTION, MANY, ANSWER, KeywordScorer(), budget=5, settings=settings)
    np.testing.assert_array_equal(overridden.masks, same.masks)  # the same settings
    chunks = attribute(QUESTION, DOCS, ANSWER, KeywordScorer(), granularity="chunk", budget=8)
    assert len(chunks.segments) == 3 and chunks.seed == 0  # defaults: AttributionSettings()


def test_every_knob_is_a_keyword_of_attribute_and_wins_over_the_settings() -> None:
    """deadline_s and groundedness too: a keyword given replaces the settings' field (the
    documented rule), the other fields stay."""
    gate = GroundednessFilter()
    settings = AttributionSettings(budget=30, seed=4, deadline_s=60.0)
    chosen = resolve_settings(settings, deadline_s=5, budget=None)
    assert (chosen.budget, chosen.seed, chosen.deadline_s) == (30, 4, 5.0)
    assert resolve_settings(settings) is settings and resolve_settings() is DEFAULT_SETTINGS
    assert resolve_settings(None, CHAIN_SETTINGS, budget=8).granularity == "chunk"
    plain = attribute(QUESTION, DOCS, ANSWER, KeywordScorer(), budget=8)
    assert not plain.anchor_rewards
    judged = attribute(QUESTION, DOCS, ANSWER, KeywordScorer(), budget=8, groundedness=gate)
    assert set(judged.anchor_rewards) == {"full", "empty"}  # so judge(result) is free
    assert gate.judge(judged).grounded is True
    # the result carries its verdict, and cite() shows it (issue 49: not only in chains)
    assert isinstance(judged, AttributionResult) and judged.groundedness is not None
    assert judged.groundedness.grounded is True
    assert camab_rag.cite(judged, DOCS).groundedness is not None
    assert camab_rag.cite(plain, DOCS).groundedness is None
    with pytest.raises(InputError, match="deadline_s must be a positive number"):
        attribute(QUESTION, DOCS, ANSWER, KeywordScorer(), deadline_s=-1)
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'seed'.*settings="):
        resolve_settings(seed=3)


@pytest.mark.parametrize(
    ("keywords", "message"),
    [
        ({"budget": -1}, "budget must be >= 1"),
        ({"budget": 2.5}, "budget must be an integer"),
        ({"method": "lime"}, "unknown method 'lime'"),
        ({"granularity": "word"}, "granularity must be"),
    ],
)
def test_an_overriding_keyword_is_validated_like_a_field(
    keywords: dict[str, Any], message: str
) -> None:
    with pytest.raises(InputError, match=message):
        attribute(QUESTION, DOCS, ANSWER, KeywordScorer(), **keywords)
    with pytest.raises(InputError, match=message):
        AttributionSettings().with_changes(**keywords)


def test_the_method_is_built_once_with_the_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = AttributionSettings(budget=16, method=Auto(), seed=1)
    built = settings.method_instance
    assert built is settings.method

    def no_rebuild(*args: object, **kwargs: object) -> None:
        raise AssertionError("the method was built again")

    monkeypatch.setattr(camab_rag.settings, "get_method", no_rebuild)
    result = attribute(QUESTION, DOCS, ANSWER, WideScorer(), settings=settings)
    assert result.method_config["batch_size"] == 2  # specialised for the scorer...
    assert built.batch_size is None and settings.method_instance is built  # ...on a copy
    again = attribute_fn(lambda mask: float(mask[0]), 4, settings=settings)
    assert again.method == "auto" and again.seed == 1


def test_a_name_stands_for_the_method_with_its_default_options() -> None:
    assert AttributionSettings(method="camab").method_instance == Camab()
    flat = AttributionSettings().with_changes(method="camab", batch_size=3, seed=2)
    assert flat.method_instance == Camab(batch_size=3) and flat.seed == 2
    with pytest.raises(InputError, match="only accepted with a method name"):
        AttributionSettings(method=Auto()).with_changes(batch_size=3)


def test_the_captured_prompt_is_planned_once(monkeypatch: pytest.MonkeyPatch) -> None:
    plans: list[object] = []
    plan_prompt = camab_rag.prompts.plan_prompt

    def counted(*args: Any) -> Any:
        plans.append(args)
        return plan_prompt(*args)

    monkeypatch.setattr(camab_rag.engine, "plan_prompt", counted)  # the one place it plans
    settings = CHAIN_SETTINGS.with_changes(budget=6)
    captured = attribute_captured(
        QUESTION, DOCS, ANSWER, KeywordScorer(), settings, prompts=[PROMPT]
    )
    assert len(plans) == 1
    assert captured.prompt_mode == "captured"


def test_the_integrations_defaults_are_chunks_and_a_deadline() -> None:
    assert (CHAIN_SETTINGS.granularity, CHAIN_SETTINGS.deadline_s) == ("chunk", 120.0)
    differ = {
        f.name
        for f in fields(AttributionSettings)
        if f.init and getattr(CHAIN_SETTINGS, f.name) != getattr(DEFAULT_SETTINGS, f.name)
    }
    assert differ == {"granularity", "deadline_s"}  # only these, and the README says why
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    why = readme.split("### Settings", 1)[1].split("\n* ", 1)[0]
    assert '(`granularity="chunk"`), because' in why and "`deadline_s=120`, because" in why
    assert (AttributionSettings().granularity, AttributionSettings().deadline_s) == (
        "sentence",
        None,
    )
    captured = attribute_captured(QUESTION, DOCS, ANSWER, KeywordScorer(), prompts=[PROMPT])
    assert len(captured.segments) == len(DOCS)


def test_a_groundedness_filter_makes_the_run_score_its_anchors() -> None:
    plain = AttributionSettings(budget=4)
    assert not plain.anchors
    result = attribute(
        QUESTION, DOCS, ANSWER, KeywordScorer(), settings=plain, groundedness=GroundednessFilter()
    )
    assert set(result.anchor_rewards) == {"full", "empty"}


def test_a_prompt_and_a_prompt_builder_are_refused_together() -> None:
    door = Attributor(KeywordScorer(), prompt_builder=lambda *parts: None)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="pass prompt="):
        door.run(QUESTION, DOCS, ANSWER, prompt=PROMPT)


def test_settings_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        AttributionSettings(8)  # type: ignore[misc]


def test_wrong_settings_get_typed_errors_that_name_the_fix() -> None:
    """A dict for ``settings=``, a misspelled field, and ``budget=0`` outside the
    integrations: each an InputError naming what to do instead."""
    scorer = KeywordScorer()
    with pytest.raises(InputError, match="settings must be an AttributionSettings"):
        attribute("Q?", ["a", "b"], "a", scorer, settings={"seed": 1})  # type: ignore[arg-type]
    with pytest.raises(InputError, match="budgett is not a field of AttributionSettings"):
        AttributionSettings().with_changes(budgett=8)
    judge_only = AttributionSettings(budget=0)
    with pytest.raises(InputError, match="assess_answer"):
        attribute("Q?", ["a", "b"], "a", scorer, settings=judge_only)
    with pytest.raises(InputError, match="assess_answer"):
        attribute("Q?", ["a", "b"], "a", scorer, settings=judge_only, groundedness=True)


def test_a_groundedness_of_the_wrong_type_is_an_input_error_naming_it() -> None:
    """Fresh-user review 6b: ``groundedness="yes"`` was refused with "must be a
    GroundednessFilter", which hides that ``True`` is the short way to ask for one."""
    accepted = "must be True (the default filter, GroundednessFilter()), False or None"
    for gate in ("yes", "flag", 0.5):
        for door in ("attribute", "Attributor"):
            with pytest.raises(InputError) as caught:
                if door == "attribute":
                    attribute("Q?", ["a"], "a", KeywordScorer(), groundedness=gate)  # type: ignore[arg-type]
                else:
                    Attributor(KeywordScorer(), groundedness=gate)  # type: ignore[arg-type]
            message = str(caught.value)
            assert accepted in message and "camab_rag.GroundednessFilter(...)" in message
            assert message.endswith(f"got {gate!r}")
            assert isinstance(caught.value, TypeError)  # except TypeError catches it too


def test_a_user_template_without_its_fields_is_refused_when_the_settings_are_built() -> None:
    with pytest.raises(InputError, match=r"user_template must contain the field \{context\}"):
        AttributionSettings(user_template="Q: {question}")
    with pytest.raises(InputError, match="must be a string"):
        AttributionSettings().with_changes(user_template=None)


def test_a_prior_refuses_a_method_it_would_ignore() -> None:
    with pytest.raises(InputError, match=r"method='loo' would be ignored"):
        Attributor(KeywordScorer(), prior=KeywordScorer(), method="loo")
    door = Attributor(KeywordScorer(), prior=KeywordScorer())
    with pytest.raises(InputError, match="would be ignored"):
        door.run(QUESTION, DOCS, ANSWER, method="kernelshap")
    assert Attributor(KeywordScorer(), prior=KeywordScorer(), method="camab").prior is not None


def test_settings_are_plain_data() -> None:
    """Issue 49: no live object in the settings (a prior scorer, a prompt builder); they
    are arguments of the Attributor."""
    names = {f.name for f in fields(AttributionSettings)}
    assert not names & {"prior", "prompt_builder", "groundedness"}
    with pytest.raises(InputError, match="live filter"):  # review 5: the reason, typed
        AttributionSettings(groundedness=GroundednessFilter())  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        AttributionSettings(prior=KeywordScorer())  # type: ignore[call-arg]


def test_groundedness_is_refused_as_a_setting_with_the_reason() -> None:
    """Review 5: ``AttributionSettings(groundedness=...)`` gave a bare TypeError; it gives
    the InputError ``with_changes(groundedness=...)`` gives, naming where the filter goes."""
    for make in (
        lambda: AttributionSettings(groundedness=GroundednessFilter()),  # type: ignore[call-arg]
        lambda: AttributionSettings().with_changes(groundedness=GroundednessFilter()),
    ):
        with pytest.raises(InputError, match="live filter, not a setting: pass groundedness="):
            make()
    assert AttributionSettings(budget=8).budget == 8  # other keywords still work


def test_a_result_without_a_filter_reads_groundedness_as_none() -> None:
    """Review 5: ``r.groundedness`` raised AttributeError on a plain result (attribute()
    without a filter, or a run with groundedness=False); it reads None."""
    plain = attribute(QUESTION, DOCS, ANSWER, KeywordScorer(), budget=8)
    assert type(plain) is AttributionResult and plain.groundedness is None
    off = Attributor(KeywordScorer(), budget=8, groundedness=True).run(
        QUESTION, DOCS, ANSWER, groundedness=False
    )
    assert off.groundedness is None
    judged = attribute(QUESTION, DOCS, ANSWER, KeywordScorer(), budget=8, groundedness=True)
    assert judged.groundedness is not None  # a filtered run still holds its verdict
    assert AttributionResult.from_dict(plain.to_dict()).groundedness is None
