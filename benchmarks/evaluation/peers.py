"""The real peers (``shap-pkg``, ``contextcite-pkg``) run on our model, prompt, segments and
response; how: benchmarks/results/eval/README.md. Needs the ``[bench]`` extra."""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from camab_rag.prompts import TemplatePromptBuilder
from camab_rag.rewards import ScorerOracle, mean_logprob

FloatArray = NDArray[np.float64]
PEERS = ("shap-pkg", "contextcite-pkg")


@dataclass
class PeerResult:
    """Scores and cost of one peer run."""

    scores: FloatArray
    masks: NDArray[np.bool_]
    n_queries: int
    prompt_tokens: int
    wall_time_s: float
    note: str = ""


def run_shap(
    builder: TemplatePromptBuilder, scorer: Any, response: str, budget: int, seed: int
) -> PeerResult:
    """``shap.KernelExplainer`` with ``nsamples = budget - 2`` and ``l1_reg=False``."""
    import shap  # type: ignore[import-untyped, import-not-found, unused-ignore]

    if budget < 3:
        raise ValueError("shap-pkg needs a budget of at least 3 (reference, full, 1 sample)")
    n = builder.n_segments
    oracle = ScorerOracle(builder, scorer, response, mean_logprob)
    asked: list[NDArray[np.bool_]] = []

    def value(x: NDArray[np.float64]) -> NDArray[np.float64]:
        masks = np.asarray(x) > 0.5
        asked.extend(masks)
        return oracle.evaluate(masks)

    started = time.perf_counter()
    np.random.seed(seed)  # shap draws its coalitions from numpy's global generator
    explainer = shap.KernelExplainer(value, np.zeros((1, n)), link="identity")
    with warnings.catch_warnings():
        # expected whenever nsamples < N: shap then takes the least-squares solution
        warnings.filterwarnings("ignore", message="Linear regression equation is singular")
        values = explainer.shap_values(
            np.ones((1, n)), nsamples=budget - 2, l1_reg=False, silent=True
        )
    scores = np.asarray(values, dtype=float).reshape(-1)[:n]
    return PeerResult(
        scores,
        np.asarray(asked, dtype=bool).reshape(-1, n),
        oracle.n_queries,
        oracle.prompt_tokens,
        time.perf_counter() - started,
        "under-determined (nsamples < N): least-squares solution" if budget - 2 < n else "",
    )


def _context_cite_classes() -> tuple[Any, Any, Any]:
    """The package's classes, imported without the network fetch it makes at import."""
    import nltk  # type: ignore[import-untyped, import-not-found, unused-ignore]

    original, nltk.download = nltk.download, lambda *args, **kwargs: True
    try:
        from context_cite import ContextCiter  # type: ignore[import-untyped, import-not-found, unused-ignore]
        from context_cite.context_partitioner import (  # type: ignore[import-untyped, import-not-found, unused-ignore]
            BaseContextPartitioner,
        )
        from context_cite.utils import _create_mask  # type: ignore[import-untyped, import-not-found, unused-ignore]
    finally:
        nltk.download = original
    return ContextCiter, BaseContextPartitioner, _create_mask


def run_context_cite(
    builder: TemplatePromptBuilder,
    scorer: Any,
    response: str,
    budget: int,
    seed: int,
    keep_probability: float = 0.5,
) -> PeerResult:
    """``context_cite.ContextCiter`` with ``num_ablations = budget`` on our scorer."""
    ContextCiter, BaseContextPartitioner, create_mask = _context_cite_classes()
    tokenizer = getattr(scorer, "tokenizer", None)
    render = getattr(scorer, "render_prompt", None)
    if tokenizer is None or render is None:
        raise TypeError("contextcite-pkg needs an in-process scorer with a tokenizer")
    render_fn: Callable[[Any], str] = render
    n = builder.n_segments
    full_context = builder.render_context(np.ones(n, dtype=bool))

    class SegmentPartitioner(BaseContextPartitioner):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            super().__init__(full_context)

        @property
        def num_sources(self) -> int:
            return n

        def split_context(self) -> None:
            return None

        def get_source(self, index: int) -> str:
            return str(builder.segments[index].text)

        def get_context(self, mask: NDArray[np.bool_] | None = None) -> str:
            keep = np.ones(n, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
            return builder.render_context(keep)

    class OurPromptCiter(ContextCiter):  # type: ignore[misc, valid-type]
        """The package's citer, with the benchmark's prompt (system message and all)."""

        def _get_prompt_ids(
            self, mask: NDArray[np.bool_] | None = None, return_prompt: bool = False
        ) -> Any:
            keep = np.ones(n, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
            prompt = str(render_fn(builder.build(keep)))
            ids = self.tokenizer.encode(prompt, add_special_tokens=False)
            return (ids, prompt) if return_prompt else ids

    started = time.perf_counter()
    citer = OurPromptCiter(
        getattr(scorer, "model", None),
        tokenizer,
        full_context,
        builder.question,
        num_ablations=budget,
        ablation_keep_prob=keep_probability,
        partitioner=SegmentPartitioner(),
    )
    citer.logger.setLevel("WARNING")
    _, prompt_text = citer._get_prompt_ids(return_prompt=True)
    citer._cache["output"] = prompt_text + response
    masks = np.array(
        [create_mask(n, keep_probability, seed * 100_003 + i) for i in range(budget)], dtype=bool
    )
    oracle = ScorerOracle(builder, scorer, response, mean_logprob)
    oracle.evaluate(masks)
    rows = [oracle.logprobs(mask).logprobs for mask in masks]
    width = len(citer._response_ids)
    logits = np.zeros((budget, width))
    for r, logprobs in enumerate(rows):
        capped = np.minimum(logprobs, np.log1p(-1e-12))
        values = capped - np.log(-np.expm1(capped))
        m = min(width, values.size)
        logits[r, :m] = values[:m]
    note = "" if all(r.size == width for r in rows) else "token count differs from ours"
    citer._cache["reg_masks"] = masks
    citer._cache["reg_logit_probs"] = logits
    scores = np.asarray(citer.get_attributions(verbose=False), dtype=float)
    return PeerResult(
        scores,
        masks,
        oracle.n_queries,
        oracle.prompt_tokens,
        time.perf_counter() - started,
        note,
    )
