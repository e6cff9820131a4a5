"""camab-rag's development benchmarks: never installed, run from a checkout.

``python -m benchmarks NAME ...`` runs one of :data:`BENCHMARKS` (``python -m benchmarks``
lists them). Each writes its detail to ``benchmarks/results/<topic>/README.md`` and its
headline rows to BENCHMARKS.md (:mod:`benchmarks._report`); shared parts: one data loader
with the results files and reward store (:mod:`benchmarks.data`) and one statistics module
with the LDS (:mod:`benchmarks.stats`); the free lexical baseline is the library's own
(:func:`camab_rag.lexical.lexical_scores`).
"""

import argparse

BENCHMARKS: dict[str, tuple[str, str]] = {
    "lds": ("benchmarks.bench_lds", "quality per model call: LDS and top-k drop, 8-64 calls"),
    "lds-design": (
        "benchmarks.lds_design",
        "ablations of auto at few calls, re-fitted on stored rewards",
    ),
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
    """A benchmark's parser, so that every ``--help`` reads alike: its name is the command
    ``python -m benchmarks NAME`` (``__main__`` sets it), its description the first
    paragraph of the module's docstring."""
    return argparse.ArgumentParser(description=" ".join((doc or "").split("\n\n")[0].split()))
