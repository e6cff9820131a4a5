"""langchain-camab's public API is pinned (as LangChain partner packages do)."""

from __future__ import annotations

import subprocess
import sys

import langchain_camab

EXPECTED_ALL = [
    "AsyncCamabCallbackHandler",
    "CamabAttributor",
    "CamabCallbackHandler",
    "CamabChatModel",
    "ScorerUnavailableError",
    "groundedness_of",
    "to_citations",
    "with_citations",
]


def test_all_imports() -> None:
    assert sorted(langchain_camab.__all__) == EXPECTED_ALL
    for name in EXPECTED_ALL:
        assert hasattr(langchain_camab, name), name


def test_does_not_import_the_tools_package() -> None:
    probe = (
        "import sys, langchain_camab\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in {'camab_cli', 'llama_index'}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=300
    )
    assert done.stdout.strip() == "[]"
