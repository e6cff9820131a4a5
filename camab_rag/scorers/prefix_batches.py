"""Shared-prefix reuse for the in-process scorer: exact log-probs, prompts computed once.

:class:`PrefixBatcher` computes each prefix that requests of a call share once (extending
what the :class:`~camab_rag.scorers.prefix_store.PrefixStore` keeps across calls), then
runs the requests' remaining tokens in right-padded batches on the broadcast prefix (or,
with ``merge_forks``, rows on different prefixes in one left-padded, masked cache). A
request's last prompt token and its response are always computed for it.
"""

from __future__ import annotations

import functools
import inspect
import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from camab_rag import deadline
from camab_rag.scorers.attention import plain_causal
from camab_rag.scorers.prefix_store import LayerKV, PrefixStore, common_prefix

_FORWARD = "a forward pass of the in-process model"

if TYPE_CHECKING:
    import torch


def supports_prefix_reuse() -> bool:
    """Whether the installed transformers has per-layer dynamic caches (4.56 and later),
    on which the prefix reuse is built."""
    try:
        from transformers.cache_utils import DynamicLayer  # noqa: F401
    except ImportError:
        return False
    return True


@functools.cache
def _layer_class() -> Any:
    """A ``DynamicLayer`` that starts from given keys/values and keeps new ones only when
    ``keep`` is set (saving a batch's memory)."""
    import torch
    from transformers.cache_utils import DynamicLayer

    def update(
        self: Any, key_states: torch.Tensor, value_states: torch.Tensor, *_: Any, **__: Any
    ) -> tuple[torch.Tensor, torch.Tensor]:
        keys = torch.cat([self.keys, key_states], dim=-2)
        values = torch.cat([self.values, value_states], dim=-2)
        if self.keep:
            self.keys, self.values = keys, values
        return keys, values

    return type("PrefixLayer", (DynamicLayer,), {"update": update})


def _prefix_cache(kv: LayerKV, rows: int, keep: bool) -> Any:
    """A ``DynamicCache`` whose layers start with ``kv`` broadcast over ``rows`` rows (a
    view, not a copy); with ``keep=False`` it does not keep the new tokens."""
    expanded = [
        (k.unsqueeze(0).expand(rows, -1, -1, -1), v.unsqueeze(0).expand(rows, -1, -1, -1))
        for k, v in kv
    ]
    return _cache_from(expanded, keep)


def _cache_from(kv: LayerKV, keep: bool) -> Any:
    """A ``DynamicCache`` whose layers start with ``kv`` (per layer ``[rows, heads,
    tokens, head_dim]``); with ``keep=False`` it does not keep the new tokens."""
    from transformers import DynamicCache

    cache: Any = DynamicCache()
    if not kv:
        return cache
    layers = []
    for k, v in kv:
        layer = _layer_class()()
        layer.keys, layer.values = k, v
        layer.keep = keep
        layer.is_initialized = True
        layer.device = k.device
        layers.append(layer)
    cache.layers = layers
    cache.layer_class_to_replicate = None
    return cache


def cache_kv(cache: Any, row: int, start: int, end: int) -> LayerKV:
    """Keys/values of positions ``start:end`` of one row of a ``DynamicCache``."""
    return [
        (layer.keys[row, :, start:end], layer.values[row, :, start:end]) for layer in cache.layers
    ]


def kv_bytes_per_token(model: Any) -> int:
    """Bytes of keys and values one token takes over all layers of ``model``."""
    config = model.config.get_text_config() if hasattr(model.config, "get_text_config") else None
    config = config or model.config
    heads = int(getattr(config, "num_attention_heads", 1) or 1)
    kv_heads = int(getattr(config, "num_key_value_heads", None) or heads)
    head_dim = getattr(config, "head_dim", None) or int(config.hidden_size) // heads
    layers = int(config.num_hidden_layers)
    element = next(model.parameters()).element_size()
    return int(2 * layers * kv_heads * int(head_dim) * element)


def response_logprobs(logits: torch.Tensor, response_ids: Sequence[int]) -> np.ndarray:
    """Log-probability of each response token under the logits that predict it (one row
    of logits per response token)."""
    import torch

    logp = torch.log_softmax(logits.float(), dim=-1)
    target = torch.tensor(list(response_ids), device=logp.device).unsqueeze(-1)
    return np.asarray(logp.gather(-1, target).squeeze(-1).double().cpu().numpy())


def right_padded(rows: Sequence[Sequence[int]], pad: int) -> torch.Tensor:
    """Token id rows as one right-padded ``[rows, longest]`` tensor."""
    import torch

    ids = torch.full((len(rows), max(len(r) for r in rows)), pad, dtype=torch.long)
    for row, seq in enumerate(rows):
        ids[row, : len(seq)] = torch.tensor(list(seq), dtype=torch.long)
    return ids


class PrefixBatcher:
    """Scores and greedily decodes on a :class:`PrefixStore`, counting real
    ``computed_tokens`` and right ``padding_tokens``."""

    def __init__(
        self,
        model: Any,
        device: str,
        pad_token_id: int,
        keeps_logits: bool,
        max_bytes: int,
        *,
        merge_forks: bool = False,
    ) -> None:
        self.model = model
        self.device = device
        self.pad_token_id = pad_token_id
        self.keeps_logits = keeps_logits
        self.store = PrefixStore(max_bytes)
        # transformers 5.x renames ``past_key_values`` to ``cache``
        forward = inspect.signature(model.forward).parameters
        self.cache_arg = "cache" if "cache" in forward else "past_key_values"
        self.bytes_per_token = kv_bytes_per_token(model)
        self.merge_forks = merge_forks
        self.computed_tokens = 0
        self.padding_tokens = 0

    def score(
        self, requests: Sequence[tuple[Sequence[int], Sequence[int]]], batch_size: int
    ) -> list[np.ndarray]:
        """Log-probs of each ``(prompt_ids, response_ids)`` request's response tokens."""
        seqs = [(*p, *r) for p, r in requests]
        limits = [len(p) - 1 for p, _ in requests]  # reusable: the prompt but its last token
        order = sorted(range(len(seqs)), key=lambda i: seqs[i])
        shared = [0] * len(seqs)
        for a, b in itertools.pairwise(order):
            k = common_prefix(seqs[a], seqs[b], min(limits[a], limits[b]))
            shared[a], shared[b] = max(shared[a], k), max(shared[b], k)
        starts: list[int] = [0] * len(seqs)
        results: list[np.ndarray | None] = [None] * len(seqs)
        try:
            for i in order:
                stored = self.store.match(seqs[i], limits[i])
                if shared[i] > stored:
                    deadline.check(_FORWARD)
                    self._extend(seqs[i], stored, shared[i])
                starts[i] = max(stored, shared[i])
                self.store.pin(seqs[i], starts[i])
            groups: dict[tuple[int, ...], list[int]] = {}
            for i in order:
                groups.setdefault(seqs[i][: starts[i]], []).append(i)
            chunks: list[list[int]] = []
            rest: list[int] = []  # requests left from groups smaller than a batch
            for members in groups.values():
                members.sort(key=lambda i: len(seqs[i]))
                # without merge_forks every group runs alone, its last batch short
                whole = len(members) - len(members) % batch_size * self.merge_forks
                chunks += [members[f : f + batch_size] for f in range(0, whole, batch_size)]
                rest += members[whole:]
            rest.sort(key=lambda i: len(seqs[i]) - starts[i])
            chunks += [rest[f : f + batch_size] for f in range(0, len(rest), batch_size)]
            for chunk in chunks:
                deadline.check(_FORWARD)  # a long call overshoots by one pass at most
                first = seqs[chunk[0]][: starts[chunk[0]]]
                run = (
                    self._run
                    if all(seqs[i][: starts[i]] == first for i in chunk)
                    else self._run_mixed
                )
                rows = run(
                    [seqs[i] for i in chunk],
                    [limits[i] for i in chunk],
                    [requests[i][1] for i in chunk],
                    [starts[i] for i in chunk],
                )
                for i, logprobs in zip(chunk, rows):
                    results[i] = logprobs
        finally:
            self.store.unpin_all()
        return [r for r in results if r is not None]

    def _extend(self, ids: Sequence[int], stored: int, upto: int) -> None:
        """Compute ``ids[stored:upto]`` on the stored prefix ``ids[:stored]`` and store it."""
        import torch

        start, kv = self.store.lookup(ids, stored)
        cache = _prefix_cache(kv, 1, keep=True)
        options: dict[str, Any] = {"logits_to_keep": 1} if self.keeps_logits else {}
        with torch.inference_mode(), plain_causal():
            self.model(
                input_ids=torch.tensor([ids[start:upto]], dtype=torch.long, device=self.device),
                use_cache=True,
                **{self.cache_arg: cache},
                **options,
            )
        self.computed_tokens += upto - start
        # kept even over the budget: the call's requests start from it (they pin it)
        self.store.insert(ids[:upto], start, cache_kv(cache, 0, start, upto), force=True)

    def _run(
        self,
        seqs: Sequence[Sequence[int]],
        limits: Sequence[int],
        responses: Sequence[Sequence[int]],
        prefixes: Sequence[int],
    ) -> list[np.ndarray]:
        """One pass over ``seqs`` (sharing ``seqs[0][:prefix]``) from the stored part of that
        prefix; each row's response log-probs. Rows' prompts are stored when they fit the budget."""
        import torch

        start, kv = self.store.lookup(seqs[0], prefixes[0])
        width = max(len(s) for s in seqs) - start
        rows = len(seqs)
        # keep the rows' keys/values (to store their prompts) only when they fit the budget
        keep = rows * (start + width) * self.bytes_per_token <= self.store.max_bytes
        cache = _prefix_cache(kv, rows, keep=keep) if kv or keep else None
        input_ids = right_padded([seq[start:] for seq in seqs], self.pad_token_id)
        # position t (counted from ``start``) predicts token start + t + 1
        wanted = [range(lim - start, len(s) - 1 - start) for s, lim in zip(seqs, limits)]
        real = sum(len(s) - start for s in seqs)
        # right pads only (after each row's real tokens): the attention is plain causal
        with torch.inference_mode(), plain_causal():
            results = self.forward(
                input_ids, wanted, responses, use_cache=cache is not None, **{self.cache_arg: cache}
            )
            self.computed_tokens += real
            self.padding_tokens += rows * width - real
            if keep:
                for row, (seq, lim) in enumerate(zip(seqs, limits)):
                    if lim > start:
                        self.store.insert(seq[:lim], start, cache_kv(cache, row, start, lim))
        return results

    def forward(
        self,
        input_ids: torch.Tensor,
        wanted: Sequence[range],
        responses: Sequence[Sequence[int]],
        **inputs: Any,
    ) -> list[np.ndarray]:
        """One forward pass (inside ``torch.inference_mode``): each row's log-probs of its
        ``responses`` tokens, predicted at its ``wanted`` positions (only those go through
        the LM head when the model takes ``logits_to_keep``)."""
        import torch

        keep = sorted({t for positions in wanted for t in positions})
        column = {t: k for k, t in enumerate(keep)}
        if self.keeps_logits:
            inputs["logits_to_keep"] = torch.tensor(keep, dtype=torch.long, device=self.device)
        logits = self.model(input_ids=input_ids.to(self.device), **inputs).logits
        return [
            response_logprobs(
                logits[row, [column[t] if self.keeps_logits else t for t in positions], :], response
            )
            for row, (positions, response) in enumerate(zip(wanted, responses))
        ]

    def _run_mixed(
        self,
        seqs: Sequence[Sequence[int]],
        limits: Sequence[int],
        responses: Sequence[Sequence[int]],
        prefixes: Sequence[int],
    ) -> list[np.ndarray]:
        """Like :meth:`_run` for rows on different stored prefixes: each right-aligned in a
        left-padded, masked cache, its tokens at their true positions."""
        import torch

        looked = [self.store.lookup(s, p) for s, p in zip(seqs, prefixes)]
        starts = [t for t, _ in looked]
        cached = max(starts)
        if cached == 0:  # none of the prefixes is stored any more
            return self._run(seqs, limits, responses, starts)
        rows = len(seqs)
        lengths = [len(s) - t for s, t in zip(seqs, starts)]
        width = max(lengths)
        keep = rows * (cached + width) * self.bytes_per_token <= self.store.max_bytes
        template = next(kv for _, kv in looked if kv)
        with torch.inference_mode():
            layers: LayerKV = []
            for layer, (k0, v0) in enumerate(template):
                keys = k0.new_zeros((rows, k0.shape[0], cached, k0.shape[2]))
                values = v0.new_zeros((rows, v0.shape[0], cached, v0.shape[2]))
                for row, (t, kv) in enumerate(looked):
                    if t:
                        keys[row, :, cached - t :] = kv[layer][0]
                        values[row, :, cached - t :] = kv[layer][1]
                layers.append((keys, values))
            cache = _cache_from(layers, keep)
            input_ids = right_padded([seq[t:] for seq, t in zip(seqs, starts)], self.pad_token_id)
            mask = torch.zeros((rows, cached + width), dtype=torch.long)
            positions = torch.zeros((rows, width), dtype=torch.long)
            for row, (t, n) in enumerate(zip(starts, lengths)):
                mask[row, cached - t : cached + n] = 1
                positions[row] = torch.arange(t, t + width)
            wanted = [range(lim - t, len(s) - 1 - t) for s, lim, t in zip(seqs, limits, starts)]
            results = self.forward(
                input_ids,
                wanted,
                responses,
                attention_mask=mask.to(self.device),
                position_ids=positions.to(self.device),
                use_cache=True,
                **{self.cache_arg: cache},
            )
            self.computed_tokens += sum(lengths)
            self.padding_tokens += rows * width - sum(lengths)
            if keep:
                for row, (seq, lim, t) in enumerate(zip(seqs, limits, starts)):
                    if lim > t:
                        kv_row = cache_kv(cache, row, cached, cached + lim - t)
                        self.store.insert(seq[:lim], t, kv_row)
        return results

    def generate(self, prompt_ids: Sequence[int], max_new_tokens: int, eos: set[int]) -> list[int]:
        """Greedy decoding of one prompt from its longest stored prefix; the prompt (but its
        last token) is stored. The generated ids, the stopping EOS included."""
        import torch

        start, kv = self.store.lookup(prompt_ids, len(prompt_ids) - 1)
        cache = _prefix_cache(kv, 1, keep=True)
        step_ids = list(prompt_ids[start:])
        new: list[int] = []
        options: dict[str, Any] = {"logits_to_keep": 1} if self.keeps_logits else {}
        with torch.inference_mode(), plain_causal():
            while True:
                out = self.model(
                    input_ids=torch.tensor([step_ids], dtype=torch.long, device=self.device),
                    use_cache=True,
                    **{self.cache_arg: cache},
                    **options,
                )
                self.computed_tokens += len(step_ids)
                token = int(out.logits[0, -1].argmax())
                new.append(token)
                if token in eos or len(new) == max_new_tokens:
                    break
                step_ids = [token]
        end = len(prompt_ids) - 1
        if end > start:
            self.store.insert(prompt_ids[:end], start, cache_kv(cache, 0, start, end))
        return new
