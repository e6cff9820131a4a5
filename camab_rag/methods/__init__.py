"""Attribution methods, selectable by name: ``camab``, ``kernelshap``, ``contextcite``,
``loo`` and ``random``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from camab_rag.errors import InputError
from camab_rag.methods.base import FixedDesignSampler, Method, Sampler
from camab_rag.methods.camab import Camab, CamabSampler, EarlyStop
from camab_rag.methods.contextcite import ContextCite
from camab_rag.methods.kernelshap import KernelShap
from camab_rag.methods.loo import LeaveOneOut
from camab_rag.methods.random_scores import RandomScores

METHODS: dict[str, Callable[..., Method]] = {
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
    except TypeError as error:
        raise InputError(f"bad options for method {method!r}: {error}") from None


__all__ = [
    "METHODS",
    "Camab",
    "CamabSampler",
    "ContextCite",
    "EarlyStop",
    "FixedDesignSampler",
    "KernelShap",
    "LeaveOneOut",
    "Method",
    "RandomScores",
    "Sampler",
    "get_method",
]
