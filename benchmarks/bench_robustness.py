"""Issue 50's targets, counted: every line of a hostile JSONL accounted for, and what a dead
server costs an audit; what and how: benchmarks/results/robustness/README.md."""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from benchmarks import argument_parser
from camab_cli import cli
from camab_cli.audit import ScorerSpec
from camab_cli.audit.cli import main as audit_main
from camab_cli.audit.simulated import SimulatedScorer
from camab_rag.scorers.base import ResponseLogprobs, ScoreRequest
from camab_rag.text_gate import MAX_DEPTH

RESULTS = Path(__file__).resolve().parent / "results" / "robustness" / "robustness.json"
COMMAND = "OMP_NUM_THREADS=1 nice -n 10 .venv/bin/python -m benchmarks robustness"
N_LINES = 1000
SEED = 50
TOPICS = [
    ("Who wrote Dune?", "Dune is a novel by Frank Herbert.", "Frank Herbert wrote Dune."),
    ("Where is Paris?", "Paris is the capital of France.", "Paris is in France."),
    ("What colour are bananas?", "Bananas are yellow when ripe.", "Bananas are yellow."),
    ("Who designed the tower?", "Gustave Eiffel's company designed it.", "Eiffel's company."),
]


def _good(i: int) -> str:
    question, document, response = TOPICS[i % len(TOPICS)]
    documents = [document, "An unrelated sentence about rivers."]
    return json.dumps(dict(id=f"r{i}", question=question, documents=documents, response=response))


def _bad(kind: int, i: int) -> bytes:
    base = json.loads(_good(i))
    lone = "\udfff"
    variants: list[Any] = [
        {**base, "question": f"Q {lone}"},
        {**base, "response": f"r {lone}"},
        {**base, "id": f"b{i}{lone}"},
        {**base, "documents": [{"text": "t", "title": f"T{lone}"}]},
        {**base, "question": "Q\x00"},
        "[" * 200_000 + "]" * 200_000,
        {**base, "extra": _nest(MAX_DEPTH + 16)},  # just over the limit
        b'{"id": "u' + str(i).encode() + b'", "question": "caf\xe9"}',
        '{"id": "x", "question": ',
        {**base, "documents": 7, "question": ["not", "text"]},
    ]
    line = variants[kind]
    if isinstance(line, bytes):
        return line
    return (line if isinstance(line, str) else json.dumps(line)).encode()


def _nest(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


def hostile_lines() -> list[bytes]:
    """900 good lines, 100 bad (two invalid-JSON ones over 32 MiB), shuffled; line 1 good."""
    bad = [_bad(i % 10, i) for i in range(100)]
    huge = b'{"id": "huge", "question": "' + b"x" * (33 * 1024 * 1024) + b'"}'
    bad[8], bad[18] = huge, huge.replace(b"huge", b"huge2")
    lines = [_good(i).encode() for i in range(N_LINES - 100)] + bad
    rest = lines[1:]
    random.Random(SEED).shuffle(rest)
    return [lines[0], *rest]


class InterruptingScorer(SimulatedScorer):
    """Sends this process a real SIGINT once asked to score ``after`` requests."""

    def __init__(self, after: int) -> None:
        super().__init__()
        self.after, self.requests = after, 0

    def _count(self, n: int) -> None:
        before, self.requests = self.requests, self.requests + n
        if before < self.after <= self.requests:
            os.kill(os.getpid(), signal.SIGINT)

    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        self._count(len(requests))
        return super().score(requests)

    async def ascore(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        self._count(len(requests))
        return await super().ascore(requests)


@contextlib.contextmanager
def scorer(build: Any) -> Iterator[None]:
    """Both commands build ``build()`` instead of a model."""
    old_spec, old_cli = ScorerSpec.build, cli.build_scorer
    ScorerSpec.build = lambda self: build()  # type: ignore[method-assign]
    cli.build_scorer = lambda args, progress: build()
    try:
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            yield
    finally:
        ScorerSpec.build = old_spec  # type: ignore[method-assign]
        cli.build_scorer = old_cli


def account(expected: list[int], results: list[int], errors: list[int]) -> dict[str, Any]:
    """How the input lines ended: result, named error, lost, or written twice."""
    seen = results + errors
    return {
        "input_lines": len(expected),
        "result_lines": len(results),
        "error_lines": len(errors),
        "lost": len(set(expected) - set(seen)),
        "written_twice": len(seen) - len(set(seen)),
    }


def audit_run(folder: Path, interrupt_after: int | None) -> dict[str, Any]:
    source, out = folder / "in.jsonl", folder / "audit.jsonl"
    argv = [str(source), "--out", str(out), "--budget", "4", "--no-progress"]
    codes: list[int] = []
    interrupted, before_resume = None, 0
    if interrupt_after is not None:
        with scorer(lambda: InterruptingScorer(interrupt_after)):
            codes.append(audit_main(argv))
        interrupted = json.loads((folder / "audit.jsonl.summary.json").read_text())["interrupted"]
        before_resume = len(out.read_bytes().splitlines())
    with scorer(SimulatedScorer):
        codes.append(audit_main(argv))
    summary = json.loads((folder / "audit.jsonl.summary.json").read_text())
    objects = [json.loads(line) for line in out.read_bytes().splitlines()]  # --out alone
    results = [int(o["line"]) for o in objects if not o.get("bad_input")]
    bad = [o for o in objects if o.get("bad_input")]
    errors = [int(o["line"]) for o in bad]
    named = all(o["status"] == "error" and o["error"].isascii() for o in bad)
    return {
        "exit_codes": codes,
        "interrupted_run_summary_written": interrupt_after is None or bool(interrupted),
        "out_lines_before_resume": before_resume,
        "out_lines": len(objects),
        "error_lines_named_ascii": named,
        "summary_bad_input_lines": summary["records"]["bad_input_lines"],
        "summary_bad_records_match_out": sorted(b["line"] for b in summary["bad_records"])
        == sorted(errors),
        **account(list(range(1, N_LINES + 1)), results, errors),
    }


def attribute_run(folder: Path, interrupt_after: int | None) -> dict[str, Any]:
    source, out = folder / "in.jsonl", folder / "attribute.jsonl"
    argv = ["attribute", str(source), "--format", "json", "--out", str(out), "--budget", "4"]
    codes: list[int] = []
    before_resume = 0
    if interrupt_after is not None:
        with scorer(lambda: InterruptingScorer(interrupt_after)):
            codes.append(cli.main([*argv, "--resume", "-q"]))
        before_resume = len(out.read_bytes().splitlines())
    with scorer(SimulatedScorer):
        codes.append(cli.main([*argv, "--resume", "-q"]))
    objects = [json.loads(line) for line in out.read_bytes().splitlines()]
    results = [o["line"] for o in objects if o["status"] == "ok"]
    errors = [o["line"] for o in objects if o["status"] != "ok"]
    return {
        "exit_codes": codes,
        "lines_before_resume": before_resume,
        **account(list(range(1, N_LINES + 1)), results, errors),
    }


def hostile(folder: Path) -> dict[str, Any]:
    (folder / "in.jsonl").write_bytes(b"\n".join(hostile_lines()) + b"\n")
    figures: dict[str, Any] = {}
    for name, run in (("audit", audit_run), ("attribute", attribute_run)):
        for mode, after in (("one_run", None), ("ctrl_c_then_resume", 2000)):
            for stale in folder.glob(f"{name}*"):
                stale.unlink()
            started = time.perf_counter()
            figures[f"{name}_{mode}"] = run(folder, after)
            figures[f"{name}_{mode}"]["wall_s"] = round(time.perf_counter() - started, 1)
            print(name, mode, figures[f"{name}_{mode}"], file=sys.stderr)
    return figures


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def dead_server(folder: Path, n_records: int = 12) -> dict[str, Any]:
    """The real ``camab audit`` against nothing listening: seconds per record."""
    source = folder / "dead.jsonl"
    source.write_text("".join(_good(i) + "\n" for i in range(n_records)), encoding="utf-8")
    camab = str(Path(sys.executable).with_name("camab"))
    url = f"http://127.0.0.1:{closed_port()}/v1"
    figures: dict[str, Any] = {"records": n_records}
    for concurrency in ("16", "1"):
        out = folder / f"dead-{concurrency}.jsonl"
        argv = [camab, "audit", str(source), "--out", str(out), "--base-url", url]
        argv += ["--model-name", "m", "--budget", "4", "--no-progress"]
        started = time.perf_counter()
        run = subprocess.run([*argv, "--concurrency", concurrency], capture_output=True, text=True)
        wall = time.perf_counter() - started
        summary = json.loads(Path(f"{out}.summary.json").read_text())
        figures[f"concurrency_{concurrency}"] = {
            "exit_code": run.returncode,
            "wall_s": round(wall, 1),
            "s_per_record": round(wall / n_records, 2),
            "records_in_error": summary["records"]["error"],
            "failures": summary["failures"],
        }
        print("dead server", concurrency, figures[f"concurrency_{concurrency}"], file=sys.stderr)
    return figures


def main() -> int:
    parser = argument_parser(__doc__)
    parser.add_argument("--out", type=Path, default=RESULTS, help="the JSON file written")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        report = {
            "command": COMMAND,
            "hostile_jsonl": {"lines": N_LINES, "bad_lines": 100, "seed": SEED, **hostile(folder)},
            "dead_server": dead_server(folder),
        }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0
