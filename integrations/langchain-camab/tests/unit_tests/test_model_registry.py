"""Live in-process chat models found by their key (``langchain_camab.chat_models.MODELS``):
distinct keys, the model while it lives, nothing once it is gone."""

from __future__ import annotations

import gc
from collections.abc import Sequence
from typing import Any

from langchain_camab.chat_models import MODEL_KEY, MODELS, CamabChatModel


class Generator:
    """An in-process model that answers and scores (what callbacks find by key)."""

    def generate(self, prompts: Sequence[Any], max_new_tokens: int = 8) -> list[str]:
        return ["Paris."] * len(prompts)

    def score(self, requests: Sequence[Any]) -> list[Any]:
        return []


def test_a_model_is_found_by_its_key_while_it_lives() -> None:
    first, second = CamabChatModel(generator=Generator()), CamabChatModel(generator=Generator())
    keys = [m._identifying_params[MODEL_KEY] for m in (first, second)]
    assert len(set(keys)) == 2 and all(k.startswith("camab-") for k in keys)
    assert MODELS.get(keys[1]) is second and MODELS.get("camab-none") is None
    del second
    gc.collect()
    assert MODELS.get(keys[1]) is None and MODELS.get(keys[0]) is first
