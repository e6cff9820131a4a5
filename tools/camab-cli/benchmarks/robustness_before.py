"""The "before" of ``robustness.py``: the same 1,000-line hostile JSONL given to the
``camab`` of an older checkout (``camab_cli`` imported from ``PYTHONPATH``), straight
through. Records how each command ended, the lines it wrote and whether a summary was
written.

Run (from the repository root; main before issue 50 was c06beab)::

    git worktree add /tmp/cli_old c06beab
    PYTHONPATH=/tmp/cli_old/tools/camab-cli OMP_NUM_THREADS=1 nice -n 10 \\
        .venv/bin/python tools/camab-cli/benchmarks/robustness_before.py c06beab

It writes ``tools/camab-cli/benchmarks/results/robustness_before.json``.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import camab_cli

sys.path.insert(0, str(Path(__file__).resolve().parent))
import robustness as r

RESULTS = Path(__file__).resolve().parent / "results" / "robustness_before.json"


def main(argv: list[str]) -> int:
    revision = argv[0] if argv else "unknown"
    report: dict[str, Any] = {
        "command": "PYTHONPATH=/tmp/cli_old/tools/camab-cli OMP_NUM_THREADS=1 nice -n 10 "
        f".venv/bin/python tools/camab-cli/benchmarks/robustness_before.py {revision}",
        "camab_cli": str(Path(camab_cli.__file__).parent),
        "revision": revision,
        "lines": r.N_LINES,
    }
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        source = folder / "in.jsonl"
        source.write_bytes(b"\n".join(r.hostile_lines()) + b"\n")
        for name in ("audit", "attribute"):
            out = folder / f"{name}.jsonl"
            if name == "audit":
                run, args = r.audit_main, [str(source), "--out", str(out), "--no-progress"]
            else:
                run, args = r.cli.main, ["attribute", str(source), "--format", "json"]
                args += ["--out", str(out), "-q"]
            with r.scorer(r.SimulatedScorer):
                try:
                    outcome = f"exit {run([*args, '--budget', '4'])}"
                except BaseException as exc:  # what the old code raised is the figure
                    outcome = f"raised {type(exc).__name__}"
            report[name] = {
                "outcome": outcome,
                "lines_written": len(out.read_bytes().splitlines()) if out.exists() else 0,
                "summary_written": Path(f"{out}.summary.json").exists(),
            }
            print(name, report[name], file=sys.stderr)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
