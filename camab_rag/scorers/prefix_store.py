"""A prefix tree of token ids holding the keys/values a model computed for them.

Kept across calls within a memory budget (least recently used leaves dropped first); nodes
a batch in flight relies on are pinned until it ends.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

LayerKV = list[tuple["torch.Tensor", "torch.Tensor"]]
"""Keys and values per layer, each ``[heads, tokens, head_dim]`` (one sequence)."""


def common_prefix(a: Sequence[int], b: Sequence[int], limit: int) -> int:
    """Length of the common prefix of ``a`` and ``b``, at most ``limit``."""
    n = min(len(a), len(b), limit)
    k = 0
    while k < n and a[k] == b[k]:
        k += 1
    return k


@dataclass(eq=False)
class _Node:
    tokens: tuple[int, ...]
    kv: LayerKV
    parent: _Node | None
    children: dict[int, _Node] = field(default_factory=dict)
    used: int = 0
    nbytes: int = 0
    pinned: bool = False


def _nbytes(kv: LayerKV) -> int:
    return sum(k.element_size() * k.nelement() + v.element_size() * v.nelement() for k, v in kv)


class PrefixStore:
    """Prefix tree of token ids with their keys/values, at most ``max_bytes`` of tensors
    (least recently used leaves are dropped; pinned nodes only once unpinned)."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.root = _Node((), [], None)
        self.nbytes = 0
        self._clock = 0
        self._pinned: list[_Node] = []

    def clear(self) -> None:
        self.root = _Node((), [], None)
        self.nbytes = 0
        self._pinned = []

    def _nodes(self) -> Iterator[_Node]:
        stack = list(self.root.children.values())
        while stack:
            node = stack.pop()
            yield node
            stack.extend(node.children.values())

    def _walk(self, ids: Sequence[int], limit: int) -> tuple[int, list[tuple[_Node, int]]]:
        """The longest stored prefix of ``ids[:limit]``: its length, and the nodes along it
        with how many of each node's tokens it covers."""
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

    def match(self, ids: Sequence[int], limit: int) -> int:
        """Length of the longest stored prefix of ``ids[:limit]``."""
        return self._walk(ids, limit)[0]

    def lookup(self, ids: Sequence[int], limit: int) -> tuple[int, LayerKV]:
        """The longest stored prefix of ``ids[:limit]``: its length and keys/values (an
        empty list for none). Marks it used."""
        import torch

        length, path = self._walk(ids, limit)
        if not path:
            return 0, []
        self._clock += 1
        for node, _ in path:
            node.used = self._clock
        layers: LayerKV = []
        for layer in range(len(path[0][0].kv)):
            keys = [node.kv[layer][0][:, :n] for node, n in path]
            values = [node.kv[layer][1][:, :n] for node, n in path]
            layers.append(
                (
                    keys[0] if len(keys) == 1 else torch.cat(keys, dim=1),
                    values[0] if len(values) == 1 else torch.cat(values, dim=1),
                )
            )
        return length, layers

    def pin(self, ids: Sequence[int], length: int) -> None:
        """Keep the stored prefix ``ids[:length]`` until :meth:`unpin_all`."""
        for node, _ in self._walk(ids, length)[1]:
            if not node.pinned:
                node.pinned = True
                self._pinned.append(node)

    def unpin_all(self) -> None:
        for node in self._pinned:
            node.pinned = False
        self._pinned = []
        self._evict(None)

    def insert(self, ids: Sequence[int], start: int, kv: LayerKV, *, force: bool = False) -> None:
        """Store ``ids`` whose keys/values from ``start`` on are ``kv``, under the stored prefix
        ``ids[:start]``; nothing when that prefix is gone or it does not fit (unless ``force``)."""
        end = len(ids)
        pos, path = self._walk(ids, end)
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
        node = _Node(tuple(ids[pos:]), part, parent, used=self._clock, nbytes=size)
        parent.children[node.tokens[0]] = node
        self.nbytes += size
        for above, _ in path:
            above.used = self._clock
        self._evict(node)

    def _split(self, node: _Node, at: int) -> _Node:
        """Cut ``node`` after ``at`` tokens; returns the new head node."""
        assert node.parent is not None and 0 < at < len(node.tokens)
        head_kv = [(k[:, :at].clone(), v[:, :at].clone()) for k, v in node.kv]
        tail_kv = [(k[:, at:].clone(), v[:, at:].clone()) for k, v in node.kv]
        head = _Node(node.tokens[:at], head_kv, node.parent, used=node.used, pinned=node.pinned)
        head.nbytes = _nbytes(head_kv)
        node.parent.children[node.tokens[0]] = head
        node.tokens, node.kv, node.parent = node.tokens[at:], tail_kv, head
        node.nbytes = _nbytes(tail_kv)
        head.children[node.tokens[0]] = node
        if head.pinned:
            self._pinned.append(head)
        return head

    def _evict(self, keep: _Node | None) -> None:
        while self.nbytes > self.max_bytes:
            leaves = [n for n in self._nodes() if not n.children and not n.pinned and n is not keep]
            if not leaves:
                return
            victim = min(leaves, key=lambda n: n.used)
            assert victim.parent is not None
            del victim.parent.children[victim.tokens[0]]
            self.nbytes -= victim.nbytes
