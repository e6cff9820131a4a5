"""Live in-process models by a key of their own.

A framework's callbacks see a chat model only through its invocation parameters, not as
the object; an in-process model (whose weights also score) puts its key there, and the
integration finds the model, hence its scorer, by that key. Held weakly: a model nobody
holds any more is gone, and its key then finds nothing.
"""

from __future__ import annotations

import itertools
import threading
import weakref
from typing import Generic, TypeVar

T = TypeVar("T")


class ModelRegistry(Generic[T]):
    """Thread-safe, weak map of key -> model; keys are ``"<prefix>-<n>"``."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self._models: weakref.WeakValueDictionary[str, T] = weakref.WeakValueDictionary()
        self._counter = itertools.count()
        self._lock = threading.Lock()

    def add(self, model: T) -> str:
        """Register ``model``; return its key."""
        with self._lock:
            key = f"{self.prefix}-{next(self._counter)}"
            self._models[key] = model
            return key

    def get(self, key: object) -> T | None:
        """The live model registered under ``key`` (``None`` if gone or never)."""
        with self._lock:
            return self._models.get(str(key)) if key is not None else None
