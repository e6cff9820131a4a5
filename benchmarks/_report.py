"""Write a benchmark's figures into its own section of BENCHMARKS.md.

Every benchmark script prints its figures and calls :func:`write_section`, which replaces
(or appends) the block between ``<!-- bench:NAME -->`` markers, together with the exact
command that produced it. Figures are never typed by hand.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import os
import platform
import re
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

BENCHMARKS_MD = Path(__file__).resolve().parent.parent / "BENCHMARKS.md"


def command_line() -> str:
    """The command that is running, as a user would type it from the repository root."""
    script = Path(sys.argv[0])
    with contextlib.suppress(ValueError):  # a script outside the repository keeps its path
        script = script.resolve().relative_to(BENCHMARKS_MD.parent)
    return " ".join([".venv/bin/python", shlex.quote(str(script)), *map(shlex.quote, sys.argv[1:])])


def write_section(name: str, title: str, body: str, command: str | None = None) -> None:
    """Replace the section ``name`` of BENCHMARKS.md with ``title``, the command and ``body``."""
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    block = (
        f"<!-- bench:{name} -->\n## {title}\n\n"
        f"Command: `{command or command_line()}`  \n"
        f"Recorded {stamp} on {platform.machine()} "
        f"({_cpu_count()} cores), Python {platform.python_version()}, "
        f"load average {_load_average()} (figures taken under other load are slower).\n\n"
        f"{body.rstrip()}\n<!-- /bench:{name} -->\n"
    )
    text = (
        BENCHMARKS_MD.read_text(encoding="utf-8")
        if BENCHMARKS_MD.exists()
        else (
            "# Benchmarks\n\nEvery section below is written by the script named in it; "
            "re-run the command to refresh it.\n\n"
        )
    )
    pattern = re.compile(
        rf"<!-- bench:{re.escape(name)} -->.*?<!-- /bench:{re.escape(name)} -->\n", re.S
    )
    if pattern.search(text):
        text = pattern.sub(lambda _m: block, text)
    else:
        text = text.rstrip("\n") + "\n\n" + block
    BENCHMARKS_MD.write_text(text, encoding="utf-8")


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A GitHub-flavoured Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def ci_cell(values: Sequence[float]) -> str:
    """A table cell: mean ± 95% half-width (one value: the value; none: a dash)."""
    from benchmarks.stats import mean_ci

    mean, half, n = mean_ci(values)
    return f"{mean:.3f} ± {half:.3f}" if n > 1 else (f"{mean:.3f}" if n else "–")


def _load_average() -> str:
    try:
        return " / ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def _cpu_count() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
