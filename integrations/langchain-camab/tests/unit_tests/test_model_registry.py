"""Live in-process models found by their key (camab_rag.integration.model_registry through
camab_rag.integration): distinct keys, the model while it lives, nothing once it is gone."""

from __future__ import annotations

import gc

from langchain_camab.registry import ModelRegistry


class Model:
    """An in-process model (any object that can be weakly referenced)."""


def test_a_model_is_found_by_its_key_while_it_lives() -> None:
    registry: ModelRegistry[Model] = ModelRegistry("m")
    first, second = Model(), Model()
    keys = registry.add(first), registry.add(second)
    assert keys == ("m-0", "m-1")
    assert registry.get("m-1") is second and registry.get(None) is None
    del second
    gc.collect()
    assert registry.get("m-1") is None and registry.get("m-0") is first
