"""``method="auto"``: the library's default, chosen for quality per model call.

With ``N`` units and a budget of ``s`` distinct calls:

* ``2**N <= s``: every subset once, exact fit (the engine's rule for every method);
* one level (chunks, or a single document's sentences): three quarters of the budget on
  KernelSHAP's design in one batch when that is at least ``N + 1`` calls (the empty and
  full context, then Shapley-kernel coalitions with their complements:
  :data:`SHAPLEY_OPENING`), then CAMAB's Thompson draws with distinct calls;
* several documents split into sentences: hierarchically (documents first, then the
  sentences of the top documents: :mod:`camab_rag.methods.hierarchical`), each level
  opening with the full context and each unit left out once when ``N + 1 <= s`` (one
  batch, scored concurrently), then Thompson draws for the rest.

Thompson draws per round (``batch_size``, q): unless set, q follows the scorer's parallel
capacity (:func:`~camab_rag.scoring.parallel_requests`: a GPU model's batch size, an HTTP
client's requests in flight, 1 for a model on the CPU), at most :data:`MAX_AUTO_BATCH` (2,
the largest q that did not lose quality against q=1 on our benchmark) and a quarter of the
budget (:func:`auto_batch_size`), so the q draws of a round cost about the time of one and
several posterior updates still steer the run. An explicit ``batch_size`` always wins;
``method="camab"`` keeps the paper's one draw per round.

The scores are read from the evaluated subsets by CAMAB's Gaussian posterior over the
segment weights with a flat prior on the intercept
(:func:`~camab_rag.methods.estimators.flat_intercept_posterior_mean`), level by level in a
hierarchical run. The subsets asked for do not depend on that choice: the Thompson draws
and the choice of documents to refine use CAMAB's posterior as it is.

Why (BENCHMARKS.md, "Quality per model call" and "Small contexts"): with 4-10 chunks,
the common RAG case, spending the budget on distinct subsets and fitting exactly when
every subset fits is what separates the methods from the paper's loop as written. On
HotpotQA sentences, leave-one-out's near-full-context ablations had the best gold
alignment of the peers but cost ``N + 1`` calls; the document level makes them affordable
at the default budget of 40. On one level of a few chunks, leave-one-out rows agree least
with the exact attribution (substitutes hide each other when only one is removed).
Thompson draws alone find the exact top chunk but crowd around the near-full subsets the
posterior favours, so the order below the top is read from few informative rows; opening
with KernelSHAP's design (coalitions of every size) and leaving a quarter of the budget
to the draws kept the top chunk and ordered the rest closer to the exact attribution
(:data:`SHAPLEY_OPENING`).

The estimator (BENCHMARKS.md, "Estimator choice: auto's subsets re-fitted", re-fits of
the 50 stored HotpotQA/SmolLM2 auto runs, no model call except the new top-3 removals):
CAMAB's N(0, 1) prior on the intercept pulls it towards 0 while the reward without any
segment sits far below (a mean log-prob of -1 to -3); the leave-one-out openings make
the intercept nearly collinear with the common level of the weights, so the pull shifts
every weight by a common, design-dependent amount and the document shares of unrefined
documents stop being comparable with the sentence scores of refined ones. Dropping that
prior raised the gold AUROC from 0.590 to 0.668 at 20 calls (paired +0.077 ± 0.054,
p 0.006, the same in both halves of the examples) and from 0.604 to 0.650 at 40 (+0.045
± 0.036, p 0.014), with the top-3 log-prob drop unchanged (+0.002 and +0.003). Least
squares did as well. No LASSO (context-cite's alpha 0.01, 0.001, or 0.1 sd(rewards)) and
no fit of context-cite's logit-of-the-response-probability target did significantly
better: the best, LASSO 0.001 over both levels at once, +0.017 ± 0.043 AUROC at 20 calls
(p 0.43) with an alpha picked from three on the same data. One joint fit over both levels
gained 0.014 AUROC but lost 0.033 of drop@3 at 20 calls (neither significant;
``joint_fit=True`` keeps it). Checked on the 20 stored Qwen2.5-0.5B runs: the flat intercept
raised the AUROC there too (+0.027 at 20 calls, +0.025 at 40, not significant), and the
joint fit gained more (+0.089 ± 0.093 at 20 calls, p 0.06) with drop@3 unchanged; the
level-by-level read stays, as chosen on SmolLM2 before the Qwen check.

Where the benchmark does not back it: on all 50 HotpotQA dev examples (SmolLM2, sentence
granularity) ``auto`` at 20 calls now has a higher mean gold AUROC than leave-one-out
(41 calls), the ContextCite fit and KernelSHAP at 20, but none of these gaps survives Holm
correction, and its top-3 log-prob drop still trails the ContextCite fit, the
context-cite package and leave-one-out. On the 20 Qwen2.5-0.5B examples it is ahead of
every peer at 20 and 40 calls in the mean but behind leave-one-out, again with no gap
surviving Holm. On CNN/DailyMail (30 articles, one level of sentences) it beats
KernelSHAP's top-3 log-prob drop at 20 calls after Holm, and trails the ContextCite fit at
40 calls (not after Holm); on TyDi QA (2-8 passages) every method ties. With 20-50
examples a gap must be about 0.1 AUROC to survive Holm over those tables ("Holm needs"
there); ours are 0.02-0.06. The tables in BENCHMARKS.md say so.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from camab_rag.methods.base import FloatArray, Masks, Method, Sampler
from camab_rag.methods.camab import Camab, CamabSampler
from camab_rag.methods.estimators import flat_intercept_posterior_mean
from camab_rag.methods.kernelshap import KernelShap

AUTO_ESTIMATORS = ("flat_intercept", "posterior_mean")
REFINE_OPENINGS = ("leave_one_out", "shapley")
MAX_AUTO_BATCH = 2
"""The most Thompson draws per round ``auto`` takes from a scorer's parallel capacity.

Measured against q=1 (BENCHMARKS.md): on one level of 6-10 HotpotQA chunks at 40 calls
(measured when ``auto`` made Thompson draws only there, before :data:`SHAPLEY_OPENING`;
"Small contexts", 8 example-sizes x 20 seeds)
q=2 kept the rank agreement with the exact Shapley values (+0.001) and the exact top chunk
in 96% of runs against 98% (-0.019 +- 0.063), while q=4 found it in 89% (-0.094 +- 0.144,
not significant over 8 example-sizes, but the loss is not ruled out). On HotpotQA
sentences ("Quality per model call", the q=4 table; 20 examples) q=4 changed no quality
measure: gold AUROC +0.005 +- 0.016 at 20 calls and +0.021 +- 0.045 at 40, top-3 log-prob
drop +0.003 +- 0.004 and -0.007 +- 0.010; auto's hierarchical runs there spend most calls
on the leave-one-out openings and make few Thompson draws. A larger q pays in wall time
only where the draws are scored side by side, and buys fewer posterior updates per call."""


SHAPLEY_OPENING = 0.75
"""The share of a one-level run's budget ``auto`` opens with KernelSHAP's design.

Measured on the exact small-context tables (BENCHMARKS.md, "Small contexts", the
one-level designs table: HotpotQA chunks, N = 6-10, every subset scored by the model, 14
example-sizes x 20 seeds), against Thompson draws only: rank agreement with the exact
Shapley values +0.102 +- 0.054 at 40 calls and +0.076 +- 0.039 at 20 (p 0.001 both),
the top-3 removal's share of the largest possible drop +0.075 +- 0.091 and +0.041 +-
0.038, and the exact top chunk found about as often (-0.025 +- 0.060 and +0.004 +-
0.061). The share was picked from 0.25, 0.5, 0.75 and 1 (KernelSHAP's design alone) on a
first look at 10 seeds and fewer tables, where 0.75 kept the top chunk best; on the full
tables 1.0 agrees a little more with Shapley (+0.137 at 40 calls) at the same top-chunk
rate: the two are within noise of each other, and the Thompson quarter keeps draws where
Thompson did better than KernelSHAP's design on longer single documents (CNN/DailyMail,
"Quality per model call" and "Design or estimator?"). On those documents, and on TyDi QA,
the opening changed nothing measurable. Checked after the choice on 14 new tables of sizes
it was not chosen on (N = 7 and 9, same table): rank agreement +0.085 +- 0.058 at 40 calls
(p 0.007) and +0.041 +- 0.046 at 20 (p 0.08), top chunk +0.025 at both (ns)."""


def auto_batch_size(parallel: int, budget: int) -> int:
    """Thompson draws per round for ``auto`` when ``batch_size`` is not set: the scorer's
    parallel capacity ``parallel``, at most :data:`MAX_AUTO_BATCH` and ``budget // 4``
    (so a run still makes several posterior updates), at least 1."""
    return max(1, min(int(parallel), MAX_AUTO_BATCH, int(budget) // 4))


class AutoSampler(Sampler):
    """One opening batch when it fits (leave-one-out rows when asked, else KernelSHAP's
    design over :attr:`Auto.shapley_opening` of the budget, when that share leaves room
    for at least ``N + 1`` rows), then distinct Thompson draws."""

    def __init__(self, method: Auto, n_segments: int, budget: int, rng: np.random.Generator):
        self.thompson = CamabSampler(method.bandit(), n_segments, budget, rng)
        self.opening: Masks | None = None
        if method.leave_one_out_first:
            if n_segments + 1 <= budget:
                opening = np.ones((n_segments + 1, n_segments), dtype=bool)
                opening[np.arange(1, n_segments + 1), np.arange(n_segments)] = False
                self.opening = opening
        elif n_segments + 1 <= (size := min(budget, round(method.shapley_opening * budget))):
            self.opening = KernelShap().sampler(n_segments, size, rng).next_masks()

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
        batch_size: Thompson samples per round after the opening batch, scored
            concurrently. ``None`` (default): the engine picks it from the scorer's
            parallel capacity (:meth:`for_scorer`; 1 with a model on the CPU or a plain
            reward function); an explicit value always wins.
        noise_variance, prior_variance: CAMAB's posterior settings.
        leave_one_out_first: open with the full context and each unit left out once when
            that fits the budget (the engine sets it for the levels of a hierarchical run
            and clears it for a one-level run).
        shapley_opening: without the leave-one-out opening (a one-level run), the share
            of the budget first spent on KernelSHAP's design (the empty and the full
            context, then coalitions drawn from the Shapley kernel, each with its
            complement) in one batch, before the Thompson draws, when that share is at
            least ``N + 1`` calls (with fewer, the kernel's one-segment coalitions cannot
            touch every segment and Thompson's random-looking early draws do better); 0
            for Thompson draws only (auto's one-level design before it was measured).
        estimator: how the scores are read from the evaluated subsets.
            ``"flat_intercept"`` (default): CAMAB's posterior over the weights with a flat
            prior on the intercept
            (:func:`~camab_rag.methods.estimators.flat_intercept_posterior_mean`);
            ``"posterior_mean"``: CAMAB's posterior means as they are (auto's estimator
            before it was measured). The subsets asked for do not depend on it.
        refine_opening: how a hierarchical run's second level (the sentences inside the
            top documents) opens: ``"leave_one_out"`` (default: each sentence left out
            once) or ``"shapley"`` (KernelSHAP's design over :attr:`shapley_opening` of
            that level's calls, as a one-level run opens). Measured on the 50 HotpotQA
            runs (BENCHMARKS.md, "Quality per model call"): ``"shapley"`` lowered the gold
            AUROC (-0.047 +- 0.053 at 20 calls, -0.048 +- 0.053 at 40, p 0.08) and left
            drop@3 within noise (-0.020 at 20, +0.028 at 40): a sentence's leave-one-out
            row is what agrees best with the cited facts, so the default stays.
        joint_fit: in a hierarchical run, read every segment's score from one fit over
            every evaluated subset (``True``) instead of documents and sentences level by
            level (``False``, default; :meth:`~camab_rag.methods.hierarchical.Hierarchical.fit`).
    """

    batch_size: int | None = None
    noise_variance: float = 0.01
    prior_variance: float = 1.0
    leave_one_out_first: bool = True
    shapley_opening: float = SHAPLEY_OPENING
    estimator: str = "flat_intercept"
    joint_fit: bool = False
    refine_opening: str = "leave_one_out"

    name = "auto"
    #: a prefix is a valid fit, but not the run a smaller budget would make (that one
    #: would open with fewer leave-one-out rows)
    anytime = False

    def __post_init__(self) -> None:
        if self.estimator not in AUTO_ESTIMATORS:
            raise ValueError(
                f"unknown estimator {self.estimator!r}; choose one of {AUTO_ESTIMATORS}"
            )
        if self.batch_size is not None and (
            isinstance(self.batch_size, bool) or not isinstance(self.batch_size, (int, np.integer))
        ):
            raise ValueError(f"batch_size must be an integer or None, got {self.batch_size!r}")
        if self.batch_size is not None and self.batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {self.batch_size}")
        if self.refine_opening not in REFINE_OPENINGS:
            raise ValueError(
                f"unknown refine_opening {self.refine_opening!r}; choose one of {REFINE_OPENINGS}"
            )
        share = self.shapley_opening
        if (
            isinstance(share, bool)
            or not isinstance(share, (int, float, np.integer, np.floating))
            or not 0 <= share <= 1
        ):
            raise ValueError(
                f"shapley_opening must be a share of the budget in [0, 1], got "
                f"{self.shapley_opening!r}"
            )

    def for_scorer(self, parallel: int, budget: int) -> Auto:
        """These settings with ``batch_size`` chosen for a scorer that runs ``parallel``
        requests at once (:func:`auto_batch_size`), unless it is already set."""
        if self.batch_size is not None:
            return self
        return replace(self, batch_size=auto_batch_size(parallel, budget))

    def refinement(self) -> Auto:
        """The settings of a hierarchical run's second level (the segments inside the top
        documents): the same, opening with KernelSHAP's design like a one-level run when
        ``refine_opening="shapley"``."""
        if self.refine_opening == "shapley":
            return replace(self, leave_one_out_first=False)
        return self

    def bandit(self) -> Camab:
        return Camab(
            noise_variance=self.noise_variance,
            prior_variance=self.prior_variance,
            batch_size=self.batch_size or 1,
        )

    def sampler(self, n_segments: int, budget: int, rng: np.random.Generator) -> Sampler:
        return AutoSampler(self, n_segments, budget, rng)

    def design_fit(self, masks: Masks, rewards: FloatArray, seed: int = 0) -> FloatArray:
        """The scores that steer the design (which documents a hierarchical run refines):
        CAMAB's posterior means, the posterior the Thompson draws come from. Kept apart
        from :meth:`fit` so a change of estimator does not change the subsets asked for."""
        return self.bandit().fit(masks, rewards, seed)

    def fit(self, masks: Masks, rewards: FloatArray, seed: int = 0) -> FloatArray:
        return np.asarray(self.fit_many(masks, rewards[:, None], seed)[0], dtype=float)

    def fit_many(self, masks: Masks, rewards: FloatArray, seed: int = 0) -> FloatArray:
        if self.estimator == "posterior_mean":
            return self.bandit().fit_many(masks, rewards, seed)
        return flat_intercept_posterior_mean(
            masks,
            rewards,
            noise_variance=self.noise_variance,
            prior_variance=self.prior_variance,
        )

    def config(self) -> dict[str, Any]:
        return {
            "batch_size": self.batch_size,
            "noise_variance": self.noise_variance,
            "prior_variance": self.prior_variance,
            "leave_one_out_first": self.leave_one_out_first,
            "shapley_opening": self.shapley_opening,
            "estimator": self.estimator,
            "joint_fit": self.joint_fit,
            "refine_opening": self.refine_opening,
        }
