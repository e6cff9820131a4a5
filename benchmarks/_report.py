"""Where a benchmark's figures go: its detail with its command in
``benchmarks/results/<topic>/README.md``, its headline rows in ``headlines.json``, both
regenerating BENCHMARKS.md. Figures are never typed by hand."""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import platform
import re
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS_MD = ROOT / "BENCHMARKS.md"
RESULTS = ROOT / "benchmarks" / "results"
HEADLINES = RESULTS / "headlines.json"
ENTRY: str | None = None
"""Set by ``python -m benchmarks NAME``: commands are then written in that form."""

TOPICS: dict[str, tuple[str, str]] = {  # topic folder -> (title, its sections' pattern)
    "groundedness": ("Groundedness gate", r"gate|groundedness"),
    "citations": ("Citations", r"citations(-highlights)?"),
    "conflicts": ("Conflicting sources", r"conflicts"),
    "quality": (
        "Attribution quality per model call",
        r"lds|auto_(design|draws|likely|floor)|prior",
    ),
    "proxy": ("Proxy scorer", r"proxy"),
    "speed": ("Speed: scorer and attention kernel", r"scorer-.*|attention-.*"),
}

HEADLINE_HEADER = ("benchmark", "figure", "ours", "free baseline", "target", "command")
RETIRED = (
    "The paper-protocol harness retired (issue 49): its figures (TyDi QA by language, "
    "BERTScore consistency, the real shap and context-cite packages as peers) were last "
    "written at commit acfeaa6 by `python -m benchmarks eval-report`; git history keeps them."
)
"""Said under the headline table: where the retired benchmarks' figures are kept."""


def topic_file(name: str) -> Path:
    """``benchmarks/results/<topic>/README.md`` of section ``name`` (else its own topic)."""
    found = [topic for topic, (_, pattern) in TOPICS.items() if re.fullmatch(pattern, name)]
    return RESULTS / (found or [re.sub(r"[^a-z0-9_]+", "_", name.lower())])[0] / "README.md"


def command_line() -> str:
    """The command that is running, as a user would type it from the repository root."""
    return " ".join([".venv/bin/python -m benchmarks", str(ENTRY), *map(shlex.quote, sys.argv[1:])])


def _stamp() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def write_section(name: str, title: str, body: str) -> None:
    """Replace the section ``name`` of its topic file with ``title``, the command and
    ``body`` (links written from the repository root are made relative to the file)."""
    body = body.replace("](benchmarks/results/", "](../")
    block = (
        f"<!-- bench:{name} -->\n## {title}\n\n"
        f"Command: `{command_line()}`  \n"
        f"Recorded {_stamp()} on {platform.machine()} "
        f"({len(os.sched_getaffinity(0))} cores), Python {platform.python_version()}, "
        f"load average {' / '.join(f'{x:.1f}' for x in os.getloadavg())} "
        "(figures taken under other load are slower).\n\n"
        f"{body.rstrip()}\n<!-- /bench:{name} -->\n"
    )
    replace_block(topic_file(name), name, block)
    write_index()


def replace_block(path: Path, name: str, block: str) -> None:
    """Put ``block`` in place of the marked section ``name`` of ``path`` (or append it)."""
    topic = path.parent.name
    title = TOPICS.get(topic, (topic.replace("_", " ").capitalize(), ""))[0]
    new = f"# {title}\n\nEvery section below is written by the command named in it; re-run the "
    new += "command to refresh it. Headline figures: [BENCHMARKS.md](../../../BENCHMARKS.md).\n\n"
    text = path.read_text(encoding="utf-8") if path.exists() else new
    pattern = re.compile(
        rf"<!-- bench:{re.escape(name)} -->.*?<!-- /bench:{re.escape(name)} -->\n", re.S
    )
    if pattern.search(text):
        text = pattern.sub(lambda _m: block, text)
    else:
        text = text.rstrip("\n") + "\n\n" + block
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def write_headline(name: str, rows: Sequence[Sequence[object]]) -> None:
    """Record ``name``'s headline rows for BENCHMARKS.md (replacing its earlier ones): figure,
    ours, the free baseline on the same rows, the target with "met"/"missed" (or "–")."""
    if bad := [row for row in rows if len(row) != 4]:
        raise ValueError(f"a headline row has 4 cells (figure, ours, baseline, target): {bad[0]}")
    stored = _read_headlines()
    stored[name] = {
        "command": command_line(),
        "recorded": _stamp(),
        "rows": [[str(cell) for cell in row] for row in rows],
    }
    HEADLINES.parent.mkdir(parents=True, exist_ok=True)
    HEADLINES.write_text(json.dumps(stored, indent=1, ensure_ascii=False) + "\n", "utf-8")
    write_index()


def publish(
    name: str, title: str, body: str, rows: Sequence[Sequence[object]] | None, write: bool
) -> None:
    """Print a benchmark's section; with ``write``, store it and its headline rows."""
    print(body)
    if write:
        write_section(name, title, body)
        if rows is not None:
            write_headline(name, rows)


def _read_headlines() -> dict[str, dict[str, object]]:
    text = HEADLINES.read_text(encoding="utf-8") if HEADLINES.exists() else "{}"
    loaded: dict[str, dict[str, object]] = json.loads(text)
    return loaded


def write_index() -> None:
    """Regenerate BENCHMARKS.md from the stored headline rows and the topic files."""
    lines = [
        "# Benchmarks",
        "",
        "Generated by `benchmarks/_report.py`; never edited by hand. Each row is written by "
        "the command beside it (run from the repository root; the data sets are read from "
        "`$CAMAB_BENCH_DATA`, else `../shared/data`). Beside every figure of ours is a free "
        "baseline measured on the same rows with no model call; where we do not beat it, "
        "the row shows it. Tables, per-run commands and caveats: the topic files below.",
        "",
        "## Headline figures",
        "",
    ]
    rows = []
    recorded = _read_headlines()
    for name, entry in sorted(recorded.items()):
        command = str(entry["command"]).replace(".venv/bin/python ", "python ")
        for cells in entry["rows"]:  # type: ignore[attr-defined]
            rows.append([f"[{name}]({_link(topic_file(name))})", *cells, f"`{command}`"])
    lines.append(markdown_table(HEADLINE_HEADER, rows) if rows else "(none recorded yet)")
    from benchmarks import BENCHMARKS

    missing = [n for n in BENCHMARKS if not any(k.split("-")[0] == n for k in recorded)]
    unrecorded = (
        "No headline row recorded (since BENCHMARKS.md became this table, or none is "
        "written): " + ", ".join(f"`{n}`" for n in missing) + "; their figures are in "
        "the topic files. "
    )
    lines += ["", (unrecorded if missing else "") + RETIRED]
    lines += ["", "## Detail by topic", ""]
    sections = r"<!-- bench:[^ ]+ -->\n## (.*)\n"
    index = [
        [f"[{p.parent.name}]({_link(p)})", "; ".join(re.findall(sections, p.read_text("utf-8")))]
        for p in sorted(RESULTS.glob("*/README.md"))
    ]
    lines.append(markdown_table(("topic", "sections"), index))
    BENCHMARKS_MD.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _link(path: Path) -> str:
    return str(path.relative_to(ROOT))


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A GitHub-flavoured Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def share(part: int, whole: int) -> str:
    """A table cell: ``"0.75 (3/4)"``, or ``"– (0/0)"`` when nothing was counted."""
    return f"{part / whole:.2f} ({part}/{whole})" if whole else "– (0/0)"


def fmt(value: float | None, digits: int = 3) -> str:
    """A table cell: ``value`` to ``digits`` decimals, a dash for none or NaN."""
    return "–" if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


def columns(text: str) -> list[str]:
    """A table header written as one line: ``"model|batch size|tok/s"``."""
    return text.split("|")


def ci_cell(values: Sequence[float], digits: int = 3) -> str:
    """A table cell: mean ± 95% half-width (one value: the value; none: a dash)."""
    from benchmarks.stats import mean_ci

    mean, half, n = mean_ci(values)
    if n == 0:
        return "–"
    if n == 1 or half != half:  # one value, or no spread to read
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ± {half:.{digits}f}"
