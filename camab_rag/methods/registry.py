"""Methods by name, and the method of a stored result."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from camab_rag.errors import InputError
from camab_rag.methods.auto import Auto
from camab_rag.methods.base import Method
from camab_rag.methods.baselines import ContextCite, KernelShap, LeaveOneOut, RandomScores
from camab_rag.methods.camab import Camab
from camab_rag.methods.hierarchical import Hierarchical
from camab_rag.methods.prior import FreePrior

METHODS: dict[str, Callable[..., Method]] = {
    "auto": Auto,
    "camab": Camab,
    "kernelshap": KernelShap,
    "contextcite": ContextCite,
    "loo": LeaveOneOut,
    "random": RandomScores,
}


def get_method(method: str | Method, **options: Any) -> Method:
    """A method instance from its name (options go to its constructor) or as given."""
    if isinstance(method, Method):
        if options:
            raise InputError("method options are only accepted with a method name")
        return method
    try:
        factory = METHODS[method]
    except (KeyError, TypeError):
        raise InputError(f"unknown method {method!r}; choose one of {sorted(METHODS)}") from None
    try:
        return factory(**options)
    except (TypeError, ValueError) as error:
        raise InputError(f"bad options for method {method!r}: {error}") from None


_RETIRED = {"early_stop": None, "halves_estimator": "lasso"}


def method_from_config(name: str, config: dict[str, Any]) -> Method:
    """Rebuild the method of a result from its name and ``method_config``."""
    options = dict(config)
    hierarchical = bool(options.pop("hierarchical", False))
    groups = options.pop("groups", None)
    stage1_calls = options.pop("stage1_calls", None)
    options.pop("budget_left", None)  # what the run left unspent, not a setting
    for key, now in _RETIRED.items():  # removed options: harmless at what runs now
        if options.pop(key, now) != now:
            raise InputError(f"method_config holds {key!r}, removed in 0.x (CHANGELOG): drop it")
    if name == "auto" and "design" in options:  # stored before the halves' fit was a switch
        options.setdefault("halves_fit", "lasso")
    if name == "prior":  # a free model's prior: its weights are in the config
        return FreePrior(**options)
    method = Auto._variant(**options) if name == "auto" else get_method(name, **options)
    if hierarchical and groups is not None:
        return Hierarchical(method, groups, stage1_calls)
    return method
