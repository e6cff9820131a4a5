"""Attribution methods by name (:data:`METHODS`): ``auto`` (the default), ``camab``,
``kernelshap``, ``contextcite``, ``loo`` and ``random``, each also hierarchical."""

from __future__ import annotations

from camab_rag.methods.auto import Auto
from camab_rag.methods.base import Method
from camab_rag.methods.baselines import ContextCite, KernelShap, LeaveOneOut, RandomScores
from camab_rag.methods.camab import Camab
from camab_rag.methods.hierarchical import Hierarchical
from camab_rag.methods.registry import METHODS

__all__ = [
    "METHODS",
    "Auto",
    "Camab",
    "ContextCite",
    "Hierarchical",
    "KernelShap",
    "LeaveOneOut",
    "Method",
    "RandomScores",
]
