"""Flash-eligible attention for the scorer's cached-prefix forward passes.

A pass marked :func:`plain_causal` (right-padded rows on one shared prefix) uses the
lower-right causal mask, which PyTorch runs with flash attention, instead of the dense
mask transformers builds; every other call is unchanged. Speed: BENCHMARKS.md.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
from collections.abc import Iterator
from typing import Any

IMPLEMENTATION = "camab_sdpa"
"""The attention implementation name registered with transformers."""

_PLAIN_CAUSAL: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "camab_plain_causal", default=False
)


@contextlib.contextmanager
def plain_causal() -> Iterator[None]:
    """Mark the forward passes inside as plain causal over a cached prefix (no padding
    mask): their attention may run as lower-right causal instead of a dense mask."""
    token = _PLAIN_CAUSAL.set(True)
    try:
        yield
    finally:
        _PLAIN_CAUSAL.reset(token)


def _attention(
    module: Any,
    query: Any,
    key: Any,
    value: Any,
    attention_mask: Any,
    dropout: float = 0.0,
    scaling: float | None = None,
    **kwargs: Any,
) -> tuple[Any, None]:
    """transformers' SDPA attention, but lower-right causal (flash-eligible) inside
    :func:`plain_causal` when the queries continue a cached prefix."""
    import torch
    from torch.nn.attention.bias import causal_lower_right
    from transformers.integrations.sdpa_attention import repeat_kv, sdpa_attention_forward

    q_len, kv_len = query.shape[2], key.shape[2]
    plain = (
        _PLAIN_CAUSAL.get()
        and 1 < q_len < kv_len
        and kwargs.get("position_bias") is None
        and kwargs.get("softcap") is None
        and getattr(module, "is_causal", True)
    )
    if not plain:
        return sdpa_attention_forward(
            module, query, key, value, attention_mask, dropout=dropout, scaling=scaling, **kwargs
        )
    groups = int(getattr(module, "num_key_value_groups", 1))
    if groups > 1:
        key, value = repeat_kv(key, groups), repeat_kv(value, groups)
    out = torch.nn.functional.scaled_dot_product_attention(
        query,
        key,
        value,
        attn_mask=causal_lower_right(q_len, kv_len),
        dropout_p=dropout,
        scale=scaling,
    )
    return out.transpose(1, 2).contiguous(), None


@functools.cache
def _register() -> None:
    from transformers import AttentionInterface
    from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, AttentionMaskInterface

    AttentionInterface.register(IMPLEMENTATION, _attention)
    AttentionMaskInterface.register(IMPLEMENTATION, ALL_MASK_ATTENTION_FUNCTIONS["sdpa"])


def _full_attention_only(config: Any) -> bool:
    """No sliding window or chunked layers (their masks are not plain causal)."""
    layer_types = getattr(config, "layer_types", None) or ()
    if any(t != "full_attention" for t in layer_types):
        return False
    window = getattr(config, "sliding_window", None)
    return window is None or getattr(config, "use_sliding_window", True) is False


def use_lower_right(model: Any) -> bool:
    """Switch a ``sdpa`` model with full attention on every layer to :data:`IMPLEMENTATION`;
    whether it did (anything unexpected leaves it as it was)."""
    config = getattr(model, "config", None)
    if getattr(config, "_attn_implementation", None) != "sdpa":
        return False
    if not _full_attention_only(config):
        return False
    try:
        _register()
        model.set_attn_implementation(IMPLEMENTATION)
    except Exception:  # an older or newer transformers without this interface
        return False
    return bool(getattr(model.config, "_attn_implementation", None) == IMPLEMENTATION)


def restore_sdpa(model: Any) -> None:
    """Undo :func:`use_lower_right` (benchmarks compare the two)."""
    if getattr(model.config, "_attn_implementation", None) == IMPLEMENTATION:
        model.set_attn_implementation("sdpa")
