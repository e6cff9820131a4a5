"""``method="auto"``: the library's default, chosen for quality per model call.

With ``N`` units and a budget of ``s`` distinct calls, ``auto`` scores every subset once
when ``2**N <= s`` (an exact fit). Otherwise, on one level (chunks, or one document's
sentences) it opens with KernelSHAP's design over :data:`SHAPLEY_OPENING` of the budget,
then makes CAMAB's Thompson draws; with several documents split into sentences it works
hierarchically (:mod:`camab_rag.methods.hierarchical`): documents first, then the
sentences of the top documents, each level opening with every unit left out once. The
scores are CAMAB's posterior means with a flat prior on the intercept
(:func:`~camab_rag.methods.estimators.flat_intercept_posterior_mean`), one fit per level;
when the budget is under :data:`JOINT_FIT_BELOW` calls per unit (8 calls over 40
sentences), one fit over every subset of both levels instead, as each level then has too
few rows of its own. Whenever the budget affords it, a run over several documents opens
with each document left out once (``D + 1`` calls). On one document's sentences under
:data:`ONE_DOCUMENT_HALVES_BELOW` calls per unit it uses ContextCite's random halves read
with LASSO instead (:func:`budget_rule`; issue 51). KernelSHAP's design was a candidate
of the same rule and is not used (:data:`ONE_DOCUMENT_KERNELSHAP_BELOW`).

Use it by name (``attribute(..., method="auto")``, the default) or as
``Auto(batch_size=2)``. The measurements behind each choice, and where the benchmark does
not back them, are in BENCHMARKS.md: "Quality per model call (method="auto")", "Small
contexts: distinct calls and agreement with exact", "Estimator choice: auto's subsets
re-fitted" and "Fewer calls: ablations of auto and the budget rule". Benchmarks reach the
alternatives measured there through :meth:`Auto._variant`, which is not a public
interface.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

import numpy as np

from camab_rag.methods.base import FloatArray, Masks, Method, Sampler
from camab_rag.methods.camab import Camab, CamabSampler
from camab_rag.methods.contextcite import ContextCite
from camab_rag.methods.estimators import flat_intercept_posterior_mean, lasso_scores
from camab_rag.methods.kernelshap import KernelShap

AUTO_ESTIMATORS = ("flat_intercept", "posterior_mean", "lasso")
AUTO_DESIGNS = ("adaptive", "random_halves", "kernelshap")
REFINE_OPENINGS = ("leave_one_out", "shapley")
MAX_AUTO_BATCH = 2
"""The most Thompson draws per round ``auto`` takes from a scorer's parallel capacity:
q=2 kept q=1's quality, q=4 found the exact top chunk less often (BENCHMARKS.md, "Small
contexts: distinct calls and agreement with exact")."""

SHAPLEY_OPENING = 0.75
"""The share of a one-level run's budget ``auto`` opens with KernelSHAP's design: it
ordered chunks closer to the exact Shapley values than Thompson draws alone, at the same
top chunk (BENCHMARKS.md, "Small contexts: distinct calls and agreement with exact")."""


def auto_batch_size(parallel: int, budget: int) -> int:
    """Thompson draws per round for ``auto`` when ``batch_size`` is not set: the scorer's
    parallel capacity ``parallel``, at most :data:`MAX_AUTO_BATCH` and ``budget // 4``
    (so a run still makes several posterior updates), at least 1."""
    return max(1, min(int(parallel), MAX_AUTO_BATCH, int(budget) // 4))


JOINT_FIT_BELOW = 0.25
"""``auto`` reads a hierarchical run's documents and sentences from one fit over every
subset when its budget is under this many calls per unit (``N + 1``; 8 calls over 40
sentences): with so few calls, one fit per level leaves each level too few rows."""

ONE_DOCUMENT_HALVES_BELOW = 1.0
"""On one document's sentences (no hierarchy), ``auto`` uses the random halves read with
LASSO (ContextCite's design and estimator) when its budget is under this many calls per
unit (``N + 1``; 8 and 16 calls over 20 sentences), where the adaptive design is Thompson
draws alone (its KernelSHAP opening needs ``N + 1`` rows in 75% of the budget).

Both cuts are chosen on the dev half of each stored results file (HotpotQA with two
models, CNN/DailyMail, short answers) among 1458 candidate rules and read on the other
half (BENCHMARKS.md, "Fewer calls: ablations of auto and the budget rule"; issue 51)."""


ONE_DOCUMENT_KERNELSHAP_BELOW = 0.0
"""On one document's sentences, ``auto`` would use KernelSHAP's design and estimator when
its budget is under this many calls per unit (``N + 1``); ``kernelshap_below`` is the same
cut over several documents. Both are candidates of the same search as
:data:`ONE_DOCUMENT_HALVES_BELOW` (issue 51), and the dev rows chose neither: 0, never
(BENCHMARKS.md, "Fewer calls: ablations of auto and the budget rule")."""


def scarce_budget(n_segments: int, budget: int, below: float) -> bool:
    """Whether ``budget`` calls over ``n_segments`` units is under ``below`` calls per unit
    (``N + 1``): the test behind ``auto``'s budget rules (:meth:`Auto.for_budget`)."""
    return budget < below * (n_segments + 1)


def leave_one_out_rows(n_segments: int) -> Masks:
    """The full context, then each unit left out once (``N + 1`` rows)."""
    opening = np.ones((n_segments + 1, n_segments), dtype=bool)
    opening[np.arange(1, n_segments + 1), np.arange(n_segments)] = False
    return opening


def one_level_opening(
    n_segments: int, budget: int, share: float, documents: bool, rng: np.random.Generator
) -> Masks | None:
    """The opening batch of a one-level run: KernelSHAP's design over ``share`` of the
    budget when that is at least ``N + 1`` rows; else, over whole ``documents``, every
    document left out once when ``N + 1`` calls fit (issue 51: a 6-document context at 8
    calls no longer ties two documents that Thompson draws alone never separated)."""
    size = min(budget, round(share * budget))
    if n_segments + 1 <= size:
        return KernelShap().sampler(n_segments, size, rng).next_masks()
    if documents and n_segments + 1 <= budget:
        return leave_one_out_rows(n_segments)
    return None


@dataclass(frozen=True)
class _Switches:
    """The design and estimator choices ``auto`` was measured against (benchmarks only).

    ``leave_one_out_first``: open each level with every unit left out once (the engine
    clears it for a one-level run); ``shapley_opening``: without it, the share of the
    budget opened with KernelSHAP's design (0: Thompson draws only); ``estimator``:
    ``"flat_intercept"`` or CAMAB's ``"posterior_mean"``; ``joint_fit``: one fit over both
    levels of a hierarchical run; ``refine_opening``: ``"leave_one_out"`` or ``"shapley"``
    for the sentences of a hierarchical run; ``design``: ``"adaptive"`` (the openings and
    Thompson draws above) or ``"random_halves"`` (the whole budget as distinct Bernoulli
    ½ subsets on one level, ContextCite's design, read with ``halves_estimator``);
    ``"kernelshap"`` (the whole budget as the very subsets ``method="kernelshap"`` asks for
    with the same seed, on one level, read with KernelSHAP's estimator);
    ``random_halves_below``: the rule that picks ``"random_halves"`` for a run whose
    budget is under that many calls per unit, ``N + 1`` (0: never);
    ``kernelshap_below`` / ``one_document_kernelshap_below``: the same for
    ``"kernelshap"`` over several documents / on one document (checked first); ``joint_fit_below``:
    the same for ``joint_fit`` (:data:`JOINT_FIT_BELOW`); ``document_opening``: open
    with every document left out once whenever the budget affords it (``D + 1`` calls):
    a hierarchical run's document level then takes ``D + 1`` calls even when that leaves
    the sentences under a third of the budget, and a one-level run over whole documents
    (chunks) opens with it where KernelSHAP's design does not fit (issue 51); ``documents``: this
    one-level run's units are whole documents (set by :meth:`Auto.one_level`).
    """

    leave_one_out_first: bool = True
    shapley_opening: float = SHAPLEY_OPENING
    estimator: str = "flat_intercept"
    joint_fit: bool = False
    refine_opening: str = "leave_one_out"
    design: str = "adaptive"
    random_halves_below: float = 0.0
    halves_estimator: str = "lasso"
    joint_fit_below: float = JOINT_FIT_BELOW
    one_document_halves_below: float = ONE_DOCUMENT_HALVES_BELOW
    kernelshap_below: float = 0.0
    one_document_kernelshap_below: float = ONE_DOCUMENT_KERNELSHAP_BELOW
    document_opening: bool = True
    documents: bool = False

    def __post_init__(self) -> None:
        if self.design not in AUTO_DESIGNS:
            raise ValueError(f"unknown design {self.design!r}; choose one of {AUTO_DESIGNS}")
        if self.halves_estimator not in AUTO_ESTIMATORS:
            raise ValueError(
                f"unknown halves_estimator {self.halves_estimator!r}; "
                f"choose one of {AUTO_ESTIMATORS}"
            )
        for name in (
            "random_halves_below",
            "joint_fit_below",
            "one_document_halves_below",
            "kernelshap_below",
            "one_document_kernelshap_below",
        ):
            below = getattr(self, name)
            if isinstance(below, bool) or not isinstance(below, (int, float)) or below < 0:
                raise ValueError(f"{name} must be a number >= 0, got {below!r}")
        if self.estimator not in AUTO_ESTIMATORS:
            raise ValueError(
                f"unknown estimator {self.estimator!r}; choose one of {AUTO_ESTIMATORS}"
            )
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
                f"shapley_opening must be a share of the budget in [0, 1], got {share!r}"
            )


def budget_rule(switches: _Switches, n_segments: int, budget: int, n_docs: int) -> _Switches:
    """``auto``'s design and estimator for one run, from its budget, its ``N`` units and
    their ``n_docs`` documents (each test by :func:`scarce_budget`): KernelSHAP's design
    under ``one_document_kernelshap_below`` calls per unit on one document's sentences
    (``n_docs <= 1``) or ``kernelshap_below`` otherwise (and at least 2 calls, its empty
    and full context); else the random halves (read with ``halves_estimator``) under
    ``one_document_halves_below`` or ``random_halves_below``; else, over several
    documents split into sentences, one fit over both levels under ``joint_fit_below``;
    else ``switches`` as they are. The cuts are chosen on the dev
    half of the stored rows and read on the other half (BENCHMARKS.md, "Fewer calls")."""
    shap_below = (
        switches.one_document_kernelshap_below if n_docs <= 1 else switches.kernelshap_below
    )
    if budget >= 2 and scarce_budget(n_segments, budget, shap_below):
        return replace(switches, design="kernelshap")
    halves_below = (
        switches.one_document_halves_below if n_docs <= 1 else switches.random_halves_below
    )
    if scarce_budget(n_segments, budget, halves_below):
        return replace(switches, design="random_halves")
    if 1 < n_docs < n_segments and scarce_budget(n_segments, budget, switches.joint_fit_below):
        return replace(switches, joint_fit=True)
    return switches


class AutoSampler(Sampler):
    """One opening batch when it fits (each unit left out once, or KernelSHAP's design
    over :data:`SHAPLEY_OPENING` of the budget when that is at least ``N + 1`` rows), then
    distinct Thompson draws."""

    def __init__(self, method: Auto, n_segments: int, budget: int, rng: np.random.Generator):
        switches = method._switches
        self.thompson = CamabSampler(method.bandit(), n_segments, budget, rng)
        self.opening: Masks | None = None
        if switches.design == "random_halves":
            # the very subsets method="contextcite" asks for with the same seed; nothing
            # after them (the whole budget)
            self.opening = ContextCite().sampler(n_segments, budget, rng).next_masks()
            self.thompson = CamabSampler(method.bandit(), n_segments, 0, rng)
        elif switches.design == "kernelshap":
            # the very subsets method="kernelshap" asks for with the same seed (the empty
            # and the full context first); nothing after them
            self.opening = KernelShap().sampler(n_segments, budget, rng).next_masks()
            self.thompson = CamabSampler(method.bandit(), n_segments, 0, rng)
        elif switches.leave_one_out_first:
            if n_segments + 1 <= budget:
                self.opening = leave_one_out_rows(n_segments)
        else:
            self.opening = one_level_opening(
                n_segments, budget, switches.shapley_opening, switches.documents, rng
            )

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
    """The default method (see the module docstring).

    Args:
        batch_size: Thompson draws per round after the opening batch, scored
            concurrently. ``None`` (default): chosen from the scorer's parallel capacity
            (:func:`auto_batch_size`; 1 for a model on the CPU); a value always wins.
        noise_variance, prior_variance: CAMAB's posterior, as in
            :class:`~camab_rag.methods.camab.Camab`.
    """

    batch_size: int | None = None
    noise_variance: float = 0.01
    prior_variance: float = 1.0
    _switches: _Switches = field(default_factory=_Switches, repr=False, kw_only=True)

    name = "auto"
    #: a prefix is a valid fit, but not the run a smaller budget would make (that one
    #: would open with fewer leave-one-out rows)
    anytime = False

    def __post_init__(self) -> None:
        if self.batch_size is not None and (
            isinstance(self.batch_size, bool) or not isinstance(self.batch_size, (int, np.integer))
        ):
            raise ValueError(f"batch_size must be an integer or None, got {self.batch_size!r}")
        if self.batch_size is not None and self.batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {self.batch_size}")

    @classmethod
    def _variant(cls, **options: Any) -> Auto:
        """Experimental, for benchmarks and stored results: ``auto`` with the switches of
        :class:`_Switches` set (plus any public option). Not a public interface."""
        switch_names = {f.name for f in fields(_Switches)}
        switches = {k: v for k, v in options.items() if k in switch_names}
        public = {k: v for k, v in options.items() if k not in switch_names}
        return cls(**public, _switches=_Switches(**switches))

    @property
    def joint_fit(self) -> bool:
        """Whether a hierarchical run reads every score from one fit (benchmarks only)."""
        return self._switches.joint_fit

    def for_scorer(self, parallel: int, budget: int) -> Auto:
        """These settings with ``batch_size`` chosen for a scorer that runs ``parallel``
        requests at once (:func:`auto_batch_size`), unless it is already set."""
        if self.batch_size is not None:
            return self
        return replace(self, batch_size=auto_batch_size(parallel, budget))

    @property
    def random_halves(self) -> bool:
        """Whether this run uses the random-halves design (one level, no Thompson draws)."""
        return self._switches.design == "random_halves"

    @property
    def fixed_design(self) -> bool:
        """Whether this run asks for a fixed design on one level (the random halves or
        KernelSHAP's), no opening and no Thompson draws."""
        return self._switches.design != "adaptive"

    def for_budget(self, n_segments: int, budget: int, n_docs: int = 1) -> Auto:
        """These settings for a run over ``n_segments`` units of ``n_docs`` documents with
        ``budget`` calls (:func:`budget_rule`); unchanged when the rule changes nothing."""
        switches = budget_rule(self._switches, n_segments, budget, n_docs)
        return self if switches == self._switches else replace(self, _switches=switches)

    @property
    def opens_documents(self) -> bool:
        """Whether a run opens with every document left out once whenever the budget
        affords it (``D + 1`` calls; read by :mod:`~camab_rag.methods.hierarchical`)."""
        return self._switches.document_opening

    def one_level(self, documents: bool = False) -> Auto:
        """These settings for a run on one level: open with KernelSHAP's design instead
        of leaving each unit out once; when the units are whole ``documents`` (chunks) and
        :attr:`opens_documents`, every document left out once where KernelSHAP's design
        does not fit but ``N + 1`` calls do (:func:`one_level_opening`; BENCHMARKS.md,
        "Fewer calls")."""
        switches = replace(
            self._switches,
            leave_one_out_first=False,
            documents=bool(documents and self.opens_documents),
        )
        return replace(self, _switches=switches)

    def refinement(self) -> Auto:
        """The settings of a hierarchical run's second level (the segments inside the top
        documents): the same, unless the sentences open as a one-level run does."""
        return self.one_level() if self._switches.refine_opening == "shapley" else self

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
        if self._switches.design == "kernelshap":
            shap = KernelShap()
            return np.stack([shap.fit(masks, column, seed) for column in np.asarray(rewards).T])
        estimator = self._switches.estimator
        if self.random_halves:
            estimator = self._switches.halves_estimator
        if estimator == "posterior_mean":
            return self.bandit().fit_many(masks, rewards, seed)
        if estimator == "lasso":
            return np.stack([lasso_scores(masks, column) for column in np.asarray(rewards).T])
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
            **asdict(self._switches),
        }
