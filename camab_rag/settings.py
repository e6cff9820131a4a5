"""The one settings object, plain frozen data; its knobs are keywords of every door too."""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np

from camab_rag.deadline import check_deadline
from camab_rag.errors import InputError
from camab_rag.groundedness import GroundednessFilter
from camab_rag.groundedness.filter import check_groundedness_filter
from camab_rag.methods import METHODS, Method
from camab_rag.methods.registry import get_method
from camab_rag.prompts import DEFAULT_SYSTEM_PROMPT, DEFAULT_USER_TEMPLATE, check_user_template
from camab_rag.rewards import RewardFn, get_reward
from camab_rag.runs import JUDGE_ONLY, whole_number
from camab_rag.segments import Granularity


@dataclass(frozen=True, kw_only=True)
class AttributionSettings:
    """How an answer is attributed, plain data validated once (live objects are the
    Attributor's arguments). ``budget``: distinct model calls per answer (``0``: only the
    verdict, in the integrations); ``method``: a name or a Method; ``granularity``:
    ``"sentence"``, ``"chunk"`` or a splitter; ``hierarchical``: documents first (``None``:
    ``"auto"`` decides); ``reward``: a name or a function of the answer's log-probs;
    ``anchors``: score the full and empty contexts; ``statements``: attribute each answer
    sentence (no extra call); ``deadline_s``: the most seconds one attribution may take."""

    budget: int = 40
    method: str | Method = "auto"
    granularity: Granularity = "sentence"
    seed: int = 0
    hierarchical: bool | None = None
    reward: str | RewardFn = "mean_logprob"
    user_template: str = DEFAULT_USER_TEMPLATE
    system_prompt: str | None = DEFAULT_SYSTEM_PROMPT
    anchors: bool = False
    statements: bool = True
    deadline_s: float | None = None

    method_instance: Method = field(init=False, repr=False, compare=False)

    def __new__(cls, *args: Any, **kwargs: Any) -> AttributionSettings:
        if "groundedness" in kwargs:
            raise InputError(
                "groundedness is a live filter, not a setting: pass groundedness=... to "
                "attribute(), the Attributor or the integration object"
            )
        return super().__new__(cls)

    def __post_init__(self) -> None:
        if not self.judge_only:  # budget=0 is checked beside its filter
            whole_number(self.budget, "budget", 1, " model call")
        whole_number(self.seed, "seed", 0)
        if not callable(self.granularity) and self.granularity not in ("chunk", "sentence"):
            raise InputError(
                f"granularity must be 'chunk', 'sentence' or a splitter, got {self.granularity!r}"
            )
        for name in ("anchors", "statements"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise InputError(f"{name} must be True or False, got {getattr(self, name)!r}")
        if self.hierarchical is not None and not isinstance(self.hierarchical, bool):
            raise InputError(f"hierarchical must be True, False or None, got {self.hierarchical!r}")
        check_user_template(self.user_template)
        get_reward(self.reward)
        check_deadline(self.deadline_s)
        object.__setattr__(self, "method_instance", get_method(self.method))

    def with_changes(self, **changes: Any) -> AttributionSettings:
        """These settings with fields replaced, validated again; a keyword that is not a
        field is an option of the method (``with_changes(budget=8, batch_size=4)``)."""
        if not changes:
            return self
        names = {f.name for f in fields(self) if f.init}  # groundedness: refused by __new__
        options = {k: v for k, v in changes.items() if k not in names and k != "groundedness"}
        given = {k: v for k, v in changes.items() if k not in options}
        if options:
            method = given.get("method", self.method)
            if isinstance(method, str) and method in METHODS:
                unknown = sorted(set(options) - set(inspect.signature(METHODS[method]).parameters))
                if unknown:
                    raise InputError(
                        f"bad options for method {method!r}: {', '.join(unknown)} is not a "
                        f"field of AttributionSettings ({', '.join(sorted(names))}) nor an "
                        "option of the method"
                    )
            given["method"] = get_method(method, **options)
        return replace(self, **given)

    @property
    def judge_only(self) -> bool:
        """``budget=0``: no attribution, only the groundedness verdict."""
        budget = self.budget
        return isinstance(budget, (int, np.integer)) and budget is not False and budget == 0


CHAIN_SETTINGS = AttributionSettings(granularity="chunk", deadline_s=120.0)
"""The integrations' defaults: whole documents (what a chain cites) and a deadline."""
DEFAULT_SETTINGS = AttributionSettings()
FIELD_KNOBS = ("budget", "method", "granularity", "deadline_s")


def groundedness_filter(
    groundedness: object, settings: AttributionSettings, *, blocking_refused: str | None = None
) -> GroundednessFilter | None:
    """The filter ``groundedness=`` stands for; ``blocking_refused``: why it cannot block."""
    gate = GroundednessFilter() if groundedness is True else groundedness
    gate = None if gate is False else gate
    check_groundedness_filter(gate, blocking_refused=blocking_refused)
    if settings.judge_only and gate is None:
        raise InputError(JUDGE_ONLY)
    return gate if isinstance(gate, GroundednessFilter) else None


def resolve_settings(
    settings: object = None, default: AttributionSettings = DEFAULT_SETTINGS, **knobs: Any
) -> AttributionSettings:
    """``settings`` (``None``: ``default``) with each knob that is not ``None`` in its field."""
    if unknown := sorted(set(knobs) - set(FIELD_KNOBS)):
        raise TypeError(
            f"unexpected keyword argument {unknown[0]!r}: the keywords are "
            f"{', '.join(FIELD_KNOBS)}; the other settings go in settings=AttributionSettings(...)"
        )
    chosen = default if settings is None else settings
    if not isinstance(chosen, AttributionSettings):
        raise InputError(
            f"settings must be an AttributionSettings, got {type(chosen).__name__} "
            "(e.g. settings=camab_rag.AttributionSettings(seed=1))"
        )
    return chosen.with_changes(**{k: v for k, v in knobs.items() if v is not None})
