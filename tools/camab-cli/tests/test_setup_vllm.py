"""``scripts/setup_vllm.sh`` runs the vLLM installer (``camab_cli.serve``) from the source tree
with the base Python, while ``scripts/setup.sh`` is still installing ``.venv``: the installer
must import with the standard library alone."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]

# -S: no site-packages at all (numpy, httpx, ... unimportable), as under a bare base Python
PROBE = """
import sys
sys.path[:0] = sys.argv[1:3]
from camab_cli.serve import install_stamp, main
third_party = sorted({m.split(".")[0] for m in sys.modules} & {"numpy", "httpx", "scipy"})
print(install_stamp(), third_party)
"""


def test_the_vllm_installer_imports_with_the_standard_library_alone() -> None:
    from camab_cli.serve import install_stamp

    probe = subprocess.run(
        [sys.executable, "-I", "-S", "-c", PROBE, str(REPO), str(REPO / "tools" / "camab-cli")],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.split() == [install_stamp(), "[]"]


def test_the_vllm_installer_installs_with_uv_when_given_one(tmp_path: Path) -> None:
    from camab_cli.serve import STAMP_FILE, UNNEEDED, VLLM_PINS, install_stamp, install_vllm

    calls = tmp_path / "calls"
    for name in ("venv/bin/python", "uv"):  # each records its arguments and succeeds
        tool = tmp_path / name
        tool.parent.mkdir(parents=True, exist_ok=True)
        tool.write_text(f'#!/bin/sh\necho "{name} $*" >> "{calls}"\n', encoding="utf-8")
        tool.chmod(0o755)
    venv = tmp_path / "venv"

    assert install_vllm(venv, uv=str(tmp_path / "uv")) == venv

    python = venv / "bin" / "python"
    assert calls.read_text(encoding="utf-8").splitlines() == [
        f"uv pip install --quiet --python {python} {' '.join(VLLM_PINS)}",
        f"uv pip uninstall --quiet --python {python} {' '.join(UNNEEDED)}",
        "venv/bin/python -c import vllm.entrypoints.openai.api_server",
    ]
    assert (venv / STAMP_FILE).read_text(encoding="utf-8").split() == [install_stamp()]
