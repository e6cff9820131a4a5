"""The public API of ``camab_rag`` is pinned, and the library never imports the tools'
packages (``tools/*``: the command line, the audit, the benchmark harness) or a RAG
framework."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import camab_rag

# the tools' import packages: tools/<distribution>/<package>/__init__.py
TOOLS = sorted(p.parent.name for p in Path(__file__).parents[1].glob("tools/*/*/__init__.py"))

EXPECTED_ALL = [
    "AttributionResult",
    "AttributionSettings",
    "BaseScorer",
    "CitationRule",
    "CitedAnswer",
    "EarlyStop",
    "GaussianLinearPosterior",
    "GroundednessFilter",
    "METHODS",
    "OpenAICompletionsScorer",
    "ProxyFallbackScorer",
    "ResponseLogprobs",
    "ScoreRequest",
    "ScoredBy",
    "Scorer",
    "Segment",
    "SourceDocument",
    "SpanRemovalPromptBuilder",
    "StatementAttribution",
    "TemplatePromptBuilder",
    "TextGenerator",
    "TransformersScorer",
    "__version__",
    "aattribute",
    "aattribute_captured",
    "assess_groundedness",
    "attribute",
    "attribute_captured",
    "attribute_fn",
    "citation_pairs",
    "cite",
    "default_scorer",
    "segment_documents",
    "split_sentences",
]


def test_public_api_is_pinned() -> None:
    assert sorted(camab_rag.__all__) == EXPECTED_ALL
    for name in EXPECTED_ALL:
        assert hasattr(camab_rag, name), name


def test_every_library_module_imports_without_the_tools_or_a_framework() -> None:
    # A fresh interpreter: this test process has frameworks loaded by other tests.
    probe = """
import importlib, pkgutil, sys
import camab_rag
names = [m.name for m in pkgutil.walk_packages(camab_rag.__path__, "camab_rag.")]
skipped = []
for name in names:
    try:
        importlib.import_module(name)
    except ImportError as error:  # an optional extra (matplotlib) may be absent
        skipped.append(f"{name}: {error}")
loaded = sorted(
    m for m in sys.modules
    if m.split(".")[0] in {*sys.argv[1:], "langchain_core", "langchain", "llama_index"}
)
print(len(names), len(skipped))
print(loaded)
"""
    done = subprocess.run(
        [sys.executable, "-c", probe, *TOOLS],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    count_line, loaded_line = done.stdout.strip().splitlines()[-2:]
    n_modules, n_skipped = (int(x) for x in count_line.split())
    assert n_modules >= 30
    assert n_skipped == 0
    assert loaded_line == "[]"


def test_the_library_no_longer_ships_the_tools() -> None:
    import importlib.util

    for name in ("camab_rag.cli", "camab_rag.audit", "camab_rag.evaluation", "camab_rag.records"):
        assert importlib.util.find_spec(name) is None, name
    assert TOOLS, "no tools/*/<package>: the import probe would look for none"
