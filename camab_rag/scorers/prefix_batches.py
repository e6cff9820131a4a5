"""Shared-prefix reuse for the in-process scorer: each prefix a call's requests share is
computed once and kept across calls in a :class:`PrefixStore` (a prefix tree in a memory
budget); the rest of each request runs in right-padded batches on the broadcast prefix."""

from __future__ import annotations

import contextlib
import contextvars
import functools
import inspect
import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from camab_rag import deadline

if TYPE_CHECKING:
    import torch

LayerKV = list[tuple["torch.Tensor", "torch.Tensor"]]  # per layer [heads, tokens, head_dim]
IMPLEMENTATION = "camab_sdpa"  # the attention implementation registered with transformers

_FORWARD = "a forward pass of the in-process model"
_PLAIN_CAUSAL = contextvars.ContextVar("camab_plain_causal", default=False)


@contextlib.contextmanager
def plain_causal() -> Iterator[None]:
    """Mark the forward passes inside as plain causal over a cached prefix (no padding)."""
    token = _PLAIN_CAUSAL.set(True)
    try:
        yield
    finally:
        _PLAIN_CAUSAL.reset(token)


def _attention(module: Any, query: Any, key: Any, value: Any, *args: Any, **kwargs: Any) -> Any:
    """transformers' SDPA attention, lower-right causal inside :func:`plain_causal`."""
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
        return sdpa_attention_forward(module, query, key, value, *args, **kwargs)
    groups = int(getattr(module, "num_key_value_groups", 1))
    if groups > 1:
        key, value = repeat_kv(key, groups), repeat_kv(value, groups)
    mask, dropout = causal_lower_right(q_len, kv_len), kwargs.get("dropout", 0.0)
    out = torch.nn.functional.scaled_dot_product_attention(
        query, key, value, attn_mask=mask, dropout_p=dropout, scale=kwargs.get("scaling")
    )
    return out.transpose(1, 2).contiguous(), None


def use_lower_right(model: Any) -> bool:
    """Switch a ``sdpa`` model with full attention on every layer to :data:`IMPLEMENTATION`
    (flash-eligible lower-right causal on a GPU); whether it did."""
    config = getattr(model, "config", None)
    if getattr(config, "_attn_implementation", None) != "sdpa":
        return False
    if any(t != "full_attention" for t in getattr(config, "layer_types", None) or ()):
        return False
    window = getattr(config, "sliding_window", None)
    if window is not None and getattr(config, "use_sliding_window", True) is not False:
        return False
    try:
        from transformers import AttentionInterface
        from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, AttentionMaskInterface

        AttentionInterface.register(IMPLEMENTATION, _attention)
        AttentionMaskInterface.register(IMPLEMENTATION, ALL_MASK_ATTENTION_FUNCTIONS["sdpa"])
        model.set_attn_implementation(IMPLEMENTATION)
    except Exception:  # a transformers without this interface
        return False
    return bool(getattr(model.config, "_attn_implementation", None) == IMPLEMENTATION)


def common_prefix(a: Sequence[int], b: Sequence[int], limit: int) -> int:
    n = min(len(a), len(b), limit)
    return next((k for k in range(n) if a[k] != b[k]), n)


@dataclass(eq=False)
class _Node:
    tokens: tuple[int, ...]
    kv: LayerKV
    parent: _Node | None
    children: dict[int, _Node] = field(default_factory=dict)
    used: int = 0


def _nbytes(kv: LayerKV) -> int:
    return sum(k.element_size() * k.nelement() + v.element_size() * v.nelement() for k, v in kv)


class PrefixStore:
    """Prefix tree of token ids with their keys/values, at most ``max_bytes`` of tensors
    (least recently used unpinned leaves dropped first)."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes, self._clock = max_bytes, 0
        self.clear()

    def clear(self) -> None:
        self.root, self.nbytes = _Node((), [], None), 0
        self._pinned: set[_Node] = set()

    def walk(self, ids: Sequence[int], limit: int) -> tuple[int, list[tuple[_Node, int]]]:
        """The longest stored prefix of ``ids[:limit]``: its length, and the nodes along it
        with how many of their tokens it covers."""
        path: list[tuple[_Node, int]] = []
        node, pos = self.root, 0
        while pos < limit:
            child = node.children.get(ids[pos])
            if child is None:
                break
            n = common_prefix(child.tokens, ids[pos:limit], limit - pos)
            path.append((child, n))
            pos += n
            if n < len(child.tokens):
                break
            node = child
        return pos, path

    def lookup(self, ids: Sequence[int], limit: int) -> tuple[int, LayerKV]:
        """The longest stored prefix of ``ids[:limit]``: its length and keys/values."""
        import torch

        length, path = self.walk(ids, limit)
        if not path:
            return 0, []
        self._clock += 1
        for node, _ in path:
            node.used = self._clock

        def joined(layer: int, which: int) -> torch.Tensor:  # which: 0 keys, 1 values
            parts = [node.kv[layer][which][:, :n] for node, n in path]
            return parts[0] if len(parts) == 1 else torch.cat(parts, dim=1)

        return length, [(joined(i, 0), joined(i, 1)) for i in range(len(path[0][0].kv))]

    def pin(self, ids: Sequence[int], length: int) -> None:
        """Keep the stored prefix ``ids[:length]`` until :meth:`unpin_all`."""
        self._pinned.update(node for node, _ in self.walk(ids, length)[1])

    def unpin_all(self) -> None:
        self._pinned.clear()
        self._evict(None)

    def insert(self, ids: Sequence[int], start: int, kv: LayerKV, *, force: bool = False) -> None:
        """Store ``ids`` whose keys/values from ``start`` on are ``kv``, under the stored
        ``ids[:start]`` (when it is still there, and it fits or ``force``)."""
        end = len(ids)
        pos, path = self.walk(ids, end)
        if pos < start or pos == end:
            return
        offset = pos - start
        part = [(k[:, offset:].clone(), v[:, offset:].clone()) for k, v in kv]
        size = _nbytes(part)
        if size > self.max_bytes and not force:
            return
        if path and path[-1][1] < len(path[-1][0].tokens):
            parent = self._split(path[-1][0], path[-1][1])
        else:
            parent = path[-1][0] if path else self.root
        self._clock += 1
        node = _Node(tuple(ids[pos:]), part, parent, used=self._clock)
        parent.children[node.tokens[0]] = node
        self.nbytes += size
        for above, _ in path:
            above.used = self._clock
        self._evict(node)

    def _split(self, node: _Node, at: int) -> _Node:
        assert node.parent is not None and 0 < at < len(node.tokens)
        head_kv = [(k[:, :at].clone(), v[:, :at].clone()) for k, v in node.kv]
        tail_kv = [(k[:, at:].clone(), v[:, at:].clone()) for k, v in node.kv]
        head = _Node(node.tokens[:at], head_kv, node.parent, {}, node.used)
        node.parent.children[node.tokens[0]] = head
        node.tokens, node.kv, node.parent = node.tokens[at:], tail_kv, head
        head.children[node.tokens[0]] = node
        if node in self._pinned:
            self._pinned.add(head)
        return head

    def _evict(self, keep: _Node | None) -> None:
        while self.nbytes > self.max_bytes:
            leaves, stack = [], list(self.root.children.values())
            while stack:
                node = stack.pop()
                stack.extend(node.children.values())
                if not node.children and node not in self._pinned and node is not keep:
                    leaves.append(node)
            if not leaves:
                return
            victim = min(leaves, key=lambda n: n.used)
            assert victim.parent is not None
            del victim.parent.children[victim.tokens[0]]
            self.nbytes -= _nbytes(victim.kv)


@functools.cache
def _layer_class() -> Any:
    """A ``DynamicLayer`` from given keys/values, keeping new ones if ``keep``."""
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


def _cache_from(kv: LayerKV, keep: bool, rows: int = 0) -> Any:
    """A ``DynamicCache`` starting from ``kv`` (or one sequence's, broadcast over ``rows``)."""
    from transformers import DynamicCache

    cache: Any = DynamicCache()
    if not kv:
        return cache
    layers = []
    for k, v in kv:
        layer = _layer_class()()
        if rows:
            k, v = k.unsqueeze(0).expand(rows, -1, -1, -1), v.unsqueeze(0).expand(rows, -1, -1, -1)
        layer.keys, layer.values, layer.keep = k, v, keep
        layer.is_initialized, layer.device = True, k.device
        layers.append(layer)
    cache.layers, cache.layer_class_to_replicate = layers, None
    return cache


def cache_kv(cache: Any, row: int, start: int, end: int) -> LayerKV:
    return [
        (layer.keys[row, :, start:end], layer.values[row, :, start:end]) for layer in cache.layers
    ]


class PrefixBatcher:
    """Scores on a :class:`PrefixStore`, counting real ``computed_tokens`` and right
    ``padding_tokens``; off the CPU (``merge_forks``) the requests left over from groups
    on one prefix share batches."""

    def __init__(self, model: Any, device: str, pad_token_id: int, cache_mib: float) -> None:
        self.model, self.device, self.pad_token_id = model, device, pad_token_id
        self.store = PrefixStore(int(cache_mib * 2**20))
        forward = inspect.signature(model.forward).parameters
        self.keeps_logits = "logits_to_keep" in forward
        # transformers 5.x renames ``past_key_values`` to ``cache``
        self.cache_arg = "cache" if "cache" in forward else "past_key_values"
        config = getattr(model.config, "get_text_config", lambda: None)() or model.config
        heads = int(getattr(config, "num_attention_heads", 1) or 1)
        kv_heads = int(getattr(config, "num_key_value_heads", None) or heads)
        head_dim = int(getattr(config, "head_dim", None) or int(config.hidden_size) // heads)
        element = next(model.parameters()).element_size()
        self.bytes_per_token = 2 * int(config.num_hidden_layers) * kv_heads * head_dim * element
        self.merge_forks = device != "cpu"
        self.computed_tokens = self.padding_tokens = 0

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
        results: dict[int, np.ndarray] = {}
        try:
            for i in order:
                stored = self.store.walk(seqs[i], limits[i])[0]
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
                rows = self._run(
                    [seqs[i] for i in chunk], [limits[i] for i in chunk], [starts[i] for i in chunk]
                )
                results.update(zip(chunk, rows))
        finally:
            self.store.unpin_all()
        return [results[i] for i in range(len(seqs))]

    def _extend(self, ids: Sequence[int], stored: int, upto: int) -> None:
        """Compute ``ids[stored:upto]`` on the stored prefix ``ids[:stored]`` and store it."""
        import torch

        start, kv = self.store.lookup(ids, stored)
        cache = _cache_from(kv, True, 1)
        options: dict[str, Any] = {"logits_to_keep": 1} if self.keeps_logits else {}
        tokens = torch.tensor([list(ids[start:upto])], dtype=torch.long, device=self.device)
        with torch.inference_mode(), plain_causal():
            self.model(input_ids=tokens, use_cache=True, **{self.cache_arg: cache}, **options)
        self.computed_tokens += upto - start
        # kept even over the budget: the call's requests start from it (they pin it)
        self.store.insert(ids[:upto], start, cache_kv(cache, 0, start, upto), force=True)

    def _run(
        self, seqs: Sequence[Sequence[int]], limits: Sequence[int], prefixes: Sequence[int]
    ) -> list[np.ndarray]:
        """One pass over ``seqs`` from their stored prefixes: each row's response log-probs."""
        import torch

        shared = all(s[:p] == seqs[0][: prefixes[0]] for s, p in zip(seqs, prefixes))
        if shared:
            looked = [self.store.lookup(seqs[0], prefixes[0])] * len(seqs)
        else:
            looked = [self.store.lookup(s, p) for s, p in zip(seqs, prefixes)]
        starts = [t for t, _ in looked]
        cached = max(starts)
        shared = shared or cached == 0  # none of the prefixes may be stored any more
        rows, lengths = len(seqs), [len(s) - t for s, t in zip(seqs, starts)]
        width = max(lengths)
        # keep the rows' keys/values (to store their prompts) only when they fit the budget
        keep = rows * (cached + width) * self.bytes_per_token <= self.store.max_bytes
        input_ids = torch.full((rows, width), self.pad_token_id, dtype=torch.long)
        for row, (seq, t) in enumerate(zip(seqs, starts)):
            input_ids[row, : len(seq) - t] = torch.tensor(list(seq[t:]), dtype=torch.long)
        # position i (counted from the row's start t) predicts token t + i + 1
        wanted = [range(lim - t, len(s) - 1 - t) for s, lim, t in zip(seqs, limits, starts)]
        inputs: dict[str, Any] = {"use_cache": True}
        with torch.inference_mode(), plain_causal() if shared else contextlib.nullcontext():
            if shared:
                kv = looked[0][1]
                cache = _cache_from(kv, keep, rows) if kv or keep else None
                inputs["use_cache"] = cache is not None
            else:
                layers: LayerKV = []
                template = next(kv for _, kv in looked if kv)
                for layer, pair in enumerate(template):
                    keys, values = (
                        x.new_zeros((rows, x.shape[0], cached, x.shape[2])) for x in pair
                    )
                    for row, (t, kv) in enumerate(looked):
                        if t:
                            keys[row, :, cached - t :], values[row, :, cached - t :] = kv[layer]
                    layers.append((keys, values))
                cache = _cache_from(layers, keep)
                mask = torch.zeros((rows, cached + width), dtype=torch.long)
                positions = torch.zeros((rows, width), dtype=torch.long)
                for row, (t, n) in enumerate(zip(starts, lengths)):
                    mask[row, cached - t : cached + n] = 1
                    positions[row] = torch.arange(t, t + width)
                inputs["attention_mask"] = mask.to(self.device)
                inputs["position_ids"] = positions.to(self.device)
            inputs[self.cache_arg] = cache
            kept = sorted({t for w in wanted for t in w})  # only these through the LM head
            column = {t: k if self.keeps_logits else t for k, t in enumerate(kept)}
            if self.keeps_logits:
                inputs["logits_to_keep"] = torch.tensor(kept, dtype=torch.long, device=self.device)
            logits = self.model(input_ids=input_ids.to(self.device), **inputs).logits
            results = []
            for row, (w, seq, lim) in enumerate(zip(wanted, seqs, limits)):
                logp = torch.log_softmax(logits[row, [column[t] for t in w], :].float(), dim=-1)
                target = torch.tensor(list(seq[lim + 1 :]), device=logp.device).unsqueeze(-1)
                results.append(logp.gather(-1, target).squeeze(-1).double().cpu().numpy())
            self.computed_tokens += sum(lengths)
            self.padding_tokens += rows * width - sum(lengths)
            for row, (seq, lim, t) in enumerate(zip(seqs, limits, starts)):
                if keep and lim > t:
                    self.store.insert(seq[:lim], t, cache_kv(cache, row, cached, cached + lim - t))
        return results
