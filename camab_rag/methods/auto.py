"""``method="auto"``, the default, chosen for quality per model call: every subset when
``2**N`` calls fit; over several documents, hierarchically, each level opening with every
unit left out once, then CAMAB's Thompson draws read with a flat-intercept posterior; on
one document's sentences, LASSO or ContextCite's random halves; over several documents for
an answer the model would not give itself (unlikely at the full context, e.g. another
model's through a proxy), the random halves from ``(N + 1) / 2`` and 40 calls, and for
every answer from 64, read with a cross-validated LASSO; under few calls a unit, the
answer's lexical scores as a prior.
The rule is :func:`budget_rule`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

import numpy as np

from camab_rag.errors import InputError
from camab_rag.methods.base import (
    FloatArray,
    Masks,
    Method,
    Sampler,
    every_subset_fits,
    flat_intercept_posterior_mean,
    lasso_cv_scores,
    lasso_scores,
    leave_one_out_rows,
)
from camab_rag.methods.baselines import ContextCite, KernelShap
from camab_rag.methods.camab import Camab, CamabSampler
from camab_rag.methods.prior import FreePrior

MAX_AUTO_BATCH = 2  # the most Thompson draws per round
TWO_DRAWS_FROM = 16  # two draws a round from this many calls (under it, one lost LDS)
SHAPLEY_OPENING = 0.75  # the share of a one-level run opened with KernelSHAP's design
# cuts in calls per unit (``N + 1``): a joint fit; one document's halves; its lexical prior
JOINT_FIT_BELOW = 0.25
ONE_DOCUMENT_HALVES_BELOW = 0.25
LEXICAL_PRIOR_BELOW = 1.25
SHORT_ANSWER_WORDS = 6  # over several documents, the prior for answers this short ...
SHORT_LEXICAL_BELOW = 0.5  # ... under this many calls per unit
# over several documents, an answer the model would not give itself (its mean log-prob per
# token at the full context under this) takes the random halves from this many calls a unit
# (the cross-validated LASSO then reads at least half as many rows as units) and this many
# calls (the default budget): a switch fixed before the rows at 40 calls were read, shipped
# once it passed its tests there and the citation targets held under it
UNLIKELY_ANSWER = -1.5
UNLIKELY_HALVES_FROM = 0.5
UNLIKELY_HALVES_MIN_CALLS = 40
# from this many calls, over several documents, every answer takes those halves, a likely
# one too (the model's own): a candidate fixed before its new rows were priced (session
# 70, benchmarks/lds_likely.py), shipped once it passed that test at 64 calls
HALVES_FOR_EVERY_ANSWER_FROM = 64
_CHOICES = {
    "design": ("adaptive", "random_halves"),
    "estimator": ("flat_intercept", "lasso"),
    "halves_fit": ("lasso", "lasso_cv"),
    "draws_keep": ("positive", "half"),
}


def auto_batch_size(parallel: int, budget: int) -> int:
    """Thompson draws per round: ``parallel``, at most 2, and one under
    :data:`TWO_DRAWS_FROM` calls, where half as many posterior updates cost LDS over
    several documents (two draws at 8 calls; none moved beyond chance at 16-64)."""
    if int(budget) < TWO_DRAWS_FROM:
        return 1
    return max(1, min(int(parallel), MAX_AUTO_BATCH))


def separate_ties(
    seen: Masks,
    batch: Masks,
    later: int,
    rng: np.random.Generator,
    fresh: Callable[[np.ndarray, set[bytes]], np.ndarray],
) -> Masks:
    """``batch`` after ``seen``, changed only where it must be so that no two units' columns
    (which any fit scores alike) are identical once the ``later`` rows are spent; a row
    repeating an earlier one is replaced by ``fresh(row, earlier)``."""
    n_segments = batch.shape[1]
    rows = np.asarray(seen, dtype=bool).reshape(-1, n_segments)
    proposed = {r.tobytes() for r in rows}
    out = np.array(batch, dtype=bool, copy=True)
    for i in range(len(out)):
        row = out[i]
        if row.tobytes() in proposed:
            row = np.array(fresh(row, proposed), dtype=bool)
        labels = np.zeros(n_segments, dtype=np.int64)
        if len(rows):  # one label per unit, shared by units of identical columns
            labels = np.unique(rows.T, axis=0, return_inverse=True)[1].reshape(-1)
        most = 2 ** min(max(len(out) - i + later - 1, 0), 62)  # per side of a tied class
        for label in np.flatnonzero(np.bincount(labels) > most):
            members = np.flatnonzero(labels == label)
            inside = members[row[members]]
            larger = inside if 2 * inside.size >= members.size else np.setdiff1d(members, inside)
            if larger.size > most:
                row[rng.choice(larger, size=larger.size - most, replace=False)] ^= True
        out[i] = row
        rows = np.vstack([rows, row])
        proposed.add(row.tobytes())
    return out


@dataclass(frozen=True)
class _Switches:
    """The design and estimator choices ``auto`` was measured against (benchmarks only)."""

    leave_one_out_first: bool = True
    estimator: str = "flat_intercept"
    joint_fit: bool = False
    design: str = "adaptive"
    joint_fit_below: float = JOINT_FIT_BELOW
    one_document_halves_below: float = ONE_DOCUMENT_HALVES_BELOW
    document_opening: bool = True
    documents: bool = False
    lexical_prior_below: float = LEXICAL_PRIOR_BELOW
    lexical_prior: bool = False
    short_lexical_below: float = SHORT_LEXICAL_BELOW  # over several documents, its cut
    one_document_lasso_from: float = 0.0  # one document's LASSO from this cut
    unlikely_halves_from: float = UNLIKELY_HALVES_FROM
    unlikely_halves_min_calls: int = UNLIKELY_HALVES_MIN_CALLS
    every_answer_halves_from: float = HALVES_FOR_EVERY_ANSWER_FROM  # inf: unlikely only
    halves_fit: str = "lasso_cv"  # how the random halves are read ("lasso": ContextCite's)
    draws_keep: str = "positive"  # "half": a draw keeps its heavier half, no unit opening

    def __post_init__(self) -> None:
        for name, allowed in _CHOICES.items():
            if getattr(self, name) not in allowed:
                raise InputError(f"unknown {name} {getattr(self, name)!r}; choose one of {allowed}")


def _reads_full_reward(switches: _Switches, n_segments: int, budget: int, n_docs: int) -> bool:
    """Whether :func:`budget_rule` reads the full context's reward for this run: over
    several documents (not one each), from its cut of calls a unit and its floor of calls
    (:data:`UNLIKELY_HALVES_MIN_CALLS`), when the budget does not cover every subset."""
    several = 1 < n_docs < n_segments
    least = max(
        switches.unlikely_halves_from * (n_segments + 1), switches.unlikely_halves_min_calls
    )
    return several and not every_subset_fits(n_segments, budget) and budget >= least


def budget_rule(
    switches: _Switches,
    n_segments: int,
    budget: int,
    n_docs: int,
    answer_words: int | None = None,
    full_reward: float | None = None,
) -> _Switches:
    """``auto``'s design for one run: on one document the random halves under a cut of
    calls per unit, else LASSO; over several, one joint fit under a cut, and the random
    halves for an answer the model finds unlikely (``full_reward``, the mean log-prob at
    the full context) from a cut, and for every answer from 64 calls, read with a
    cross-validated LASSO; the lexical prior
    under a cut on one document, over several only for a short answer."""
    units = n_segments + 1  # the cuts are in calls per unit
    if (
        full_reward is not None
        and (full_reward < UNLIKELY_ANSWER or budget >= switches.every_answer_halves_from)
        and _reads_full_reward(switches, n_segments, budget, n_docs)
    ):
        return replace(switches, design="random_halves", estimator="lasso", lexical_prior=False)
    short = answer_words is not None and answer_words <= SHORT_ANSWER_WORDS
    cut = switches.lexical_prior_below if n_docs <= 1 else switches.short_lexical_below
    switches = replace(switches, lexical_prior=budget < cut * units and (n_docs <= 1 or short))
    if n_docs <= 1 and budget < switches.one_document_halves_below * units:  # a few rows:
        return replace(switches, design="random_halves", estimator="lasso", halves_fit="lasso")
    enumerated = every_subset_fits(n_segments, budget)
    if n_docs <= 1 and not enumerated and budget >= switches.one_document_lasso_from * units:
        return replace(switches, estimator="lasso")
    if 1 < n_docs < n_segments and budget < switches.joint_fit_below * units:
        return replace(switches, joint_fit=True)
    return switches


class AutoSampler(CamabSampler):
    """One opening batch when it fits, then distinct Thompson draws (:func:`separate_ties`)."""

    def __init__(self, method: Auto, n_segments: int, budget: int, rng: np.random.Generator):
        switches = method._switches
        halves = switches.design == "random_halves"
        super().__init__(method.bandit(), n_segments, 0 if halves else budget, rng)
        self.switches = switches
        self.total = budget
        self.rows = np.zeros((0, n_segments), dtype=bool)
        size = min(budget, round(SHAPLEY_OPENING * budget))  # one level: KernelSHAP's share
        self.opening: Masks | None = None
        if halves and method._full_reward is not None:  # the full context, already scored
            rest = ContextCite().sampler(n_segments, budget - 1, rng).next_masks()
            full = np.ones((1, n_segments), dtype=bool)
            self.opening = full if rest is None else np.vstack([full, rest])
        elif halves:  # method="contextcite"'s subsets for the same seed, nothing after them
            self.opening = ContextCite().sampler(n_segments, budget, rng).next_masks()
        elif switches.leave_one_out_first and self._opens(n_segments, budget):
            self.opening = leave_one_out_rows(n_segments) if n_segments < budget else None
        elif n_segments + 1 <= size:  # one level: KernelSHAP's design when N + 1 rows fit
            self.opening = KernelShap().sampler(n_segments, size, rng).next_masks()
        elif switches.documents and n_segments + 1 <= budget:  # else documents left out once
            self.opening = leave_one_out_rows(n_segments)

    def _opens(self, n_segments: int, budget: int) -> bool:
        """Whether a level opens with each unit left out once: with ``draws_keep="half"``
        only where that takes the whole level (the documents) or at most half of it (else
        the next opening below: KernelSHAP's design when ``N + 1`` rows fit in three
        quarters of the level, or none)."""
        half = self.switches.draws_keep == "half"
        return not half or budget <= n_segments + 1 or 2 * (n_segments + 1) <= budget

    def _kept(self, draws: FloatArray) -> Masks:
        if self.switches.draws_keep != "half":
            return super()._kept(draws)
        weights = draws[:, 1:]
        ranks = np.argsort(np.argsort(-weights, axis=1, kind="stable"), axis=1)
        return np.asarray(ranks < (weights.shape[1] + 1) // 2, dtype=bool)

    def next_masks(self) -> Masks | None:
        batch, self.opening = self.opening, None
        if batch is None:
            batch = super().next_masks()
        if batch is None or len(batch) == 0:
            return batch
        later = self.total - len(self.rows) - len(batch)
        return separate_ties(self.rows, batch, later, self.rng, self._unseen)

    def observe(self, masks: Masks, rewards: FloatArray) -> None:
        self.rows = np.concatenate([self.rows, np.asarray(masks, dtype=bool)])
        super().observe(masks, rewards)


@dataclass
class Auto(Method):
    """The default method; ``batch_size`` Thompson draws per round (``None``: from the
    scorer, :func:`auto_batch_size`), the posterior's variances as :class:`Camab`'s."""

    batch_size: int | None = None
    noise_variance: float = 0.01
    prior_variance: float = 1.0
    _switches: _Switches = field(default_factory=_Switches, repr=False, kw_only=True)
    _lexical: tuple[float, ...] | None = field(default=None, repr=False, kw_only=True)
    _answer_words: int | None = field(default=None, repr=False, kw_only=True)
    _full_reward: float | None = field(default=None, repr=False, kw_only=True)

    name = "auto"

    def __post_init__(self) -> None:
        size = self.batch_size
        if size is not None and (
            isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1
        ):
            raise ValueError(f"batch_size must be an integer >= 1 or None, got {size!r}")

    @classmethod
    def _variant(cls, **options: Any) -> Auto:
        """``auto`` with :class:`_Switches` set (benchmarks, stored configs: old keys dropped)."""
        switch_names = {f.name for f in fields(_Switches)}
        lexical = options.pop("lexical_weights", None)
        switches = {k: v for k, v in options.items() if k in switch_names}
        public = {k: v for k, v in options.items() if k in {f.name for f in fields(cls)}}
        return cls(**public, _switches=_Switches(**switches)).with_lexical(lexical)

    def with_lexical(self, weights: Any, answer_words: int | None = None) -> Auto:
        """These settings with the answer's lexical scores (one a segment), the prior
        :func:`budget_rule` may read with, and its length in words; ``None`` keeps ``self``."""
        if weights is None:
            return self
        values = np.asarray(weights, dtype=float).reshape(-1)
        if not np.all(np.isfinite(values)):
            raise InputError("the lexical scores must be finite numbers, one a segment")
        words = None if answer_words is None else int(answer_words)
        return replace(self, _lexical=tuple(float(v) for v in values), _answer_words=words)

    def reads_full_reward(self, n_segments: int, budget: int, n_docs: int) -> bool:
        """Whether this run's design depends on the full context's reward
        (:meth:`with_full_reward`): over several documents, from a cut of calls a unit
        and :data:`UNLIKELY_HALVES_MIN_CALLS` calls."""
        return _reads_full_reward(self._switches, n_segments, budget, n_docs)

    def with_full_reward(self, reward: float | None) -> Auto:
        """These settings with the full context's reward (the mean log-prob of the answer's
        tokens), which :func:`budget_rule` may read; ``None`` keeps ``self``."""
        if reward is None:
            return self
        if not np.isfinite(reward):
            raise InputError(f"the full context's reward must be a finite number, got {reward}")
        return replace(self, _full_reward=float(reward))

    @property
    def lexical_prior(self) -> bool:
        return self._switches.lexical_prior and self._lexical is not None

    @property
    def joint_fit(self) -> bool:
        """Whether a hierarchical run reads every score from one fit (always with the prior)."""
        return self._switches.joint_fit or self.lexical_prior

    @property
    def fixed_design(self) -> bool:
        """Whether this run asks for the random halves (one level, nothing after them)."""
        return self._switches.design != "adaptive"

    def for_scorer(self, parallel: int, budget: int) -> Auto:
        """These settings with ``batch_size`` for a scorer of ``parallel`` requests, if unset."""
        if self.batch_size is not None:
            return self
        return replace(self, batch_size=auto_batch_size(parallel, budget))

    def for_budget(self, n_segments: int, budget: int, n_docs: int = 1) -> Auto:
        """These settings for a run over ``n_segments`` units of ``n_docs`` documents."""
        switches = budget_rule(
            self._switches, n_segments, budget, n_docs, self._answer_words, self._full_reward
        )
        return replace(self, _switches=switches)

    def one_level(self, documents: bool = False) -> Auto:
        """These settings for a one-level run (``documents``: the units are documents)."""
        documents = bool(documents and self._switches.document_opening)
        switches = replace(self._switches, leave_one_out_first=False, documents=documents)
        return replace(self, _switches=switches)

    def bandit(self) -> Camab:
        """The CAMAB whose draws steer the design (and whose means rank the documents)."""
        return Camab(
            noise_variance=self.noise_variance,
            prior_variance=self.prior_variance,
            batch_size=self.batch_size or 1,
        )

    def sampler(self, n_segments: int, budget: int, rng: np.random.Generator) -> Sampler:
        return AutoSampler(self, n_segments, budget, rng)

    def fit_many(self, masks: Masks, rewards: FloatArray, seed: int = 0) -> FloatArray:
        if self.lexical_prior and self._lexical is not None:
            n = len(self._lexical)
            if n != masks.shape[1]:
                raise InputError(f"{n} lexical scores for {masks.shape[1]} segments")
            prior = FreePrior(np.array(self._lexical), noise_variance=self.noise_variance)
            return prior.fit_many(masks, rewards, seed)
        columns = np.asarray(rewards).T
        if self.fixed_design and self._switches.halves_fit == "lasso_cv":
            return np.stack([lasso_cv_scores(masks, column) for column in columns])
        if self.fixed_design or self._switches.estimator == "lasso":  # the halves: LASSO
            return np.stack([lasso_scores(masks, column) for column in columns])
        return flat_intercept_posterior_mean(
            masks, rewards, noise_variance=self.noise_variance, prior_variance=self.prior_variance
        )

    def config(self) -> dict[str, Any]:
        config = asdict(self)
        config.update(config.pop("_switches"))  # flat, as stored results hold them
        if not self.fixed_design:  # no halves fitted: nothing to say how
            config.pop("halves_fit")
        for name, usual in (
            ("draws_keep", "positive"),
            ("short_lexical_below", SHORT_LEXICAL_BELOW),
            ("every_answer_halves_from", HALVES_FOR_EVERY_ANSWER_FROM),
        ):
            if config[name] == usual:  # as every stored run before the variant
                config.pop(name)
        lexical = config.pop("_lexical")
        config.pop("_answer_words")
        full = config.pop("_full_reward")
        if full is not None:  # what the rule read (the design's reason)
            config["full_reward"] = round(float(full), 6)
        config["lexical_prior"] = self.lexical_prior  # in force: the rule and the scores
        if lexical is not None:
            config["lexical_weights"] = [round(float(w), 6) for w in lexical]
        return config
