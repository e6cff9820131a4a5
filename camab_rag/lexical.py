"""A zero-call lexical ranking: each segment's TF-IDF cosine with a text (the answer); the
free baseline of every benchmark, and ``method="auto"``'s prior when calls are scarce."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

_WORD = re.compile(r"\w+")


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def lexical_scores(segments: Sequence[str], query: str) -> NDArray[np.float64]:
    """TF-IDF cosine of each segment with ``query`` (sublinear tf, idf over the segments)."""
    counts = [Counter(_words(s)) for s in segments]
    n = len(counts)
    frequency = Counter(w for c in counts for w in c)
    idf = {w: math.log((n + 1) / (f + 0.5)) for w, f in frequency.items()}

    def vector(c: Counter[str]) -> dict[str, float]:
        return {w: (1 + math.log(v)) * idf.get(w, math.log(n + 1)) for w, v in c.items()}

    q = vector(Counter(_words(query)))
    q_norm = math.sqrt(sum(v * v for v in q.values())) or 1.0
    out = []
    for c in counts:
        d = vector(c)
        d_norm = math.sqrt(sum(v * v for v in d.values())) or 1.0
        out.append(sum(v * q.get(w, 0.0) for w, v in d.items()) / (d_norm * q_norm))
    return np.asarray(out, dtype=float)
