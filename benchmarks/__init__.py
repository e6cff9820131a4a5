"""camab-rag's development benchmarks: never installed, run from a checkout.

``python -m benchmarks NAME ...`` runs one of :data:`BENCHMARKS` (``python -m benchmarks``
lists them). Each writes its detail to ``benchmarks/results/<topic>/README.md`` and its
headline rows to BENCHMARKS.md (:mod:`benchmarks._report`); shared parts: one data loader
(:mod:`benchmarks.data`), one statistics module (:mod:`benchmarks.stats`) and the
paper-protocol harness (:mod:`benchmarks.evaluation`); the free lexical baseline is the
library's own (:func:`camab_rag.lexical.lexical_scores`).
"""

BENCHMARKS: dict[str, tuple[str, str]] = {
    "eval": ("benchmarks.evaluation.cli", "paper protocol on a data set: run, resume, report"),
    "eval-report": ("benchmarks.evaluation.cli:publish", "publish every stored paper-protocol run"),
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
    "http": ("benchmarks.bench_http", "HTTP scorer throughput against a local vLLM server"),
    "audit": ("benchmarks.bench_audit", "batch audit throughput (in process, vLLM, Ray)"),
    "robustness": ("benchmarks.bench_robustness", "hostile input and dead servers, counted"),
}
"""NAME -> (``module`` whose ``main()`` runs it, or ``module:function``; what it measures)."""
