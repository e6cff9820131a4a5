"""``method="auto"``: the library's default, chosen for quality per model call.

With ``N`` units and a budget of ``s`` distinct calls:

* ``2**N <= s``: every subset once, exact fit (the engine's rule for every method);
* one level (chunks, or a single document's sentences): CAMAB's Thompson draws with
  distinct calls;
* several documents split into sentences: hierarchically (documents first, then the
  sentences of the top documents: :mod:`camab_rag.methods.hierarchical`), each level
  opening with the full context and each unit left out once when ``N + 1 <= s`` (one
  batch, scored concurrently), then Thompson draws for the rest.

The scores are CAMAB's posterior means over every evaluated subset.

Why (BENCHMARKS.md, "Quality per model call" and "Small contexts"): with 4-10 chunks,
the common RAG case, spending the budget on distinct subsets and fitting exactly when
every subset fits is what separates the methods from the paper's loop as written. On
HotpotQA sentences, leave-one-out's near-full-context ablations had the best gold
alignment of the peers but cost ``N + 1`` calls; the document level makes them affordable
at the default budget of 40. On one level of a few chunks, leave-one-out rows agree least
with the exact attribution (substitutes hide each other when only one is removed), so a
one-level run uses Thompson draws only.

Where the benchmark does not back it: on all 50 HotpotQA dev examples (SmolLM2, sentence
granularity) ``auto``'s gold AUROC (0.590 at 20 calls, 0.604 at 40) trails leave-one-out
(0.643 at 41 calls), the ContextCite fit (0.617-0.636) and the context-cite package
(0.654 at 40); none of these gaps survives Holm correction, and on the 14 correctly
answered examples ``auto`` at 40 calls ties leave-one-out and beats Algorithm 1 on the
top-3 log-prob drop (Holm p 0.045). The tables in BENCHMARKS.md say so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from camab_rag.methods.base import FloatArray, Masks, Method, Sampler
from camab_rag.methods.camab import Camab, CamabSampler


class AutoSampler(Sampler):
    """Leave-one-out rows first when asked and they fit, then distinct Thompson draws."""

    def __init__(self, method: Auto, n_segments: int, budget: int, rng: np.random.Generator):
        self.thompson = CamabSampler(method.bandit(), n_segments, budget, rng)
        self.opening: Masks | None = None
        if method.leave_one_out_first and n_segments + 1 <= budget:
            opening = np.ones((n_segments + 1, n_segments), dtype=bool)
            opening[np.arange(1, n_segments + 1), np.arange(n_segments)] = False
            self.opening = opening

    def next_masks(self) -> Masks | None:
        if self.opening is not None:
            opening, self.opening = self.opening, None
            return opening
        return self.thompson.next_masks()

    def observe(self, masks: Masks, rewards: FloatArray) -> None:
        self.thompson.observe(masks, rewards)
        self.n_redrawn = self.thompson.n_redrawn
        self.stopped_early = self.thompson.stopped_early


@dataclass
class Auto(Method):
    """The default method (see module docstring).

    Args:
        batch_size: Thompson samples per round after the opening batch.
        noise_variance, prior_variance: CAMAB's posterior settings.
        leave_one_out_first: open with the full context and each unit left out once when
            that fits the budget (the engine sets it for the levels of a hierarchical run
            and clears it for a one-level run).
    """

    batch_size: int = 1
    noise_variance: float = 0.01
    prior_variance: float = 1.0
    leave_one_out_first: bool = True

    name = "auto"
    #: a prefix is a valid fit, but not the run a smaller budget would make (that one
    #: would open with fewer leave-one-out rows)
    anytime = False

    def bandit(self) -> Camab:
        return Camab(
            noise_variance=self.noise_variance,
            prior_variance=self.prior_variance,
            batch_size=self.batch_size,
        )

    def sampler(self, n_segments: int, budget: int, rng: np.random.Generator) -> Sampler:
        return AutoSampler(self, n_segments, budget, rng)

    def fit(self, masks: Masks, rewards: FloatArray, seed: int = 0) -> FloatArray:
        return self.bandit().fit(masks, rewards, seed)

    def fit_many(self, masks: Masks, rewards: FloatArray, seed: int = 0) -> FloatArray:
        return self.bandit().fit_many(masks, rewards, seed)

    def config(self) -> dict[str, Any]:
        return {
            "batch_size": self.batch_size,
            "noise_variance": self.noise_variance,
            "prior_variance": self.prior_variance,
            "leave_one_out_first": self.leave_one_out_first,
        }
