"""camab-rag's development benchmarks: never installed, run from a checkout.

``python -m benchmarks NAME ...`` runs one of :data:`BENCHMARKS` (``python -m benchmarks``
lists them); each writes its detail to ``benchmarks/results/<topic>/README.md`` and its
headline rows to BENCHMARKS.md (:mod:`benchmarks._report`). Shared: one data loader
(:mod:`benchmarks.data`) and one statistics module (:mod:`benchmarks.stats`)."""

import argparse

BENCHMARKS: dict[str, tuple[str, str]] = {
    "lds": ("benchmarks.bench_lds", "quality per model call: LDS and top-k drop, 8-64 calls"),
    "lds-design": ("benchmarks.lds_design", "ablations of auto at few calls (stored rewards)"),
    "lds-draws": ("benchmarks.lds_draws", "auto with half-sized Thompson draws at 32-64 calls"),
    "gate": ("benchmarks.bench_gate", "groundedness gate on FRANK and HaluEval (run, report)"),
    "citations": ("benchmarks.bench_citations", "citation precision and recall (HotpotQA)"),
    "conflicts": ("benchmarks.bench_conflicts", "conflicting sources caught (HotpotQA)"),
    "proxy": ("benchmarks.bench_proxy", "a proxy scorer's agreement with the model"),
    "scorer": ("benchmarks.bench_scorer", "in-process scorer throughput (CPU, or a GPU shape)"),
    "attention": ("benchmarks.bench_attention", "attention kernel on a GPU, whole attributions"),
    "robustness": ("benchmarks.bench_robustness", "hostile input and dead servers, counted"),
}
"""NAME -> (the module whose ``main()`` runs it; what it measures)."""


def argument_parser(doc: str | None) -> argparse.ArgumentParser:
    """A benchmark's parser, so that every ``--help`` reads alike: named as the command
    (``__main__`` sets it), described by the module docstring's first paragraph."""
    return argparse.ArgumentParser(description=" ".join((doc or "").split("\n\n")[0].split()))
