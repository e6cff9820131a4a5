"""``python -m benchmarks NAME ...``: the one entry point of the development benchmarks:
``main()`` of the module :data:`benchmarks.BENCHMARKS` names, with the rest of the command
line as its arguments (the figures it writes record the command in this form)."""

from __future__ import annotations

import importlib
import os
import sys

from benchmarks import BENCHMARKS, _report

ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "OMP_WAIT_POLICY": "PASSIVE"}
"""Every benchmark runs offline; idle OpenMP threads sleep (spinning slows a shared machine)."""


def main(argv: list[str]) -> int:
    asked = argv[:1] in (["-h"], ["--help"])
    if not argv or asked or argv[0] not in BENCHMARKS:
        known = "\n".join(f"  {name:<12} {what}" for name, (_, what) in BENCHMARKS.items())
        wrong = "" if asked or not argv else f"unknown benchmark {argv[0]!r}\n\n"
        data = "the data: $CAMAB_BENCH_DATA, else ../shared/data; NAME --help: its options"
        usage = f"usage: python -m benchmarks NAME [ARGS ...]\n\nNAME:\n{known}\n\n{data}"
        print(wrong + usage, file=sys.stdout if asked else sys.stderr)  # help is output
        return 0 if asked else 2
    for key, value in ENV.items():  # before a benchmark loads the model's libraries
        os.environ.setdefault(key, value)
    name, rest = argv[0], argv[1:]
    _report.ENTRY = name
    sys.argv = [f"python -m benchmarks {name}", *rest]
    return int(importlib.import_module(BENCHMARKS[name][0]).main() or 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
