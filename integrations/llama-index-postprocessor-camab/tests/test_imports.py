"""llama-index-postprocessor-camab's public API is pinned."""

from __future__ import annotations

import subprocess
import sys

import llama_index.postprocessor.camab as package

EXPECTED_ALL = [
    "ATTRIBUTION_KEY",
    "AttributionProgressEvent",
    "AttributionSettings",
    "CamabChatEngine",
    "CamabEventHandler",
    "CamabNodePostprocessor",
    "CamabQueryEngine",
    "aattribute_response",
    "attribute_response",
    "attribution_of",
    "await_attribution",
    "groundedness_of",
    "to_citation_blocks",
    "wait_for_attribution",
]


def test_all_imports() -> None:
    assert sorted(package.__all__) == EXPECTED_ALL
    for name in EXPECTED_ALL:
        assert hasattr(package, name), name


def test_does_not_import_the_tools_package() -> None:
    probe = (
        "import sys, llama_index.postprocessor.camab\n"
        "print(sorted(m for m in sys.modules\n"
        "             if m.split('.')[0] in {'camab_cli', 'langchain_core'}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=300
    )
    assert done.stdout.strip() == "[]"
