"""``camab audit INPUT --out OUTPUT``: the command-line front of the batch audit.

:func:`add_audit_parser` registers the sub-command on a ``camab`` argparse parser and
:func:`run_audit` runs it; ``python -m camab_cli.audit`` works on its own too.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from camab_cli.audit.config import AUDIT_DEADLINE_S, AuditConfig
from camab_cli.audit.run import audit, summary_path_for
from camab_cli.audit.scorers import ScorerSpec
from camab_cli.audit.summary import cost_report
from camab_cli.flags import in_flags
from camab_cli.options import positive_int, shared_parser
from camab_rag.errors import CamabError
from camab_rag.groundedness.report import DEFAULT_BLOCK_ON

DESCRIPTION = (
    "Audit logged RAG answers: attribute each record of INPUT (JSONL or Parquet: question, "
    "documents, response, optional id), write one result line per record to OUTPUT "
    "(attribution, per-sentence citations, groundedness verdict, cost) and a summary; a "
    'bad input line gets an error line ("bad_input": true) naming why, so OUTPUT has one '
    "line per input line. Re-running skips the lines already in OUTPUT. Exit status: 0 "
    "every record in OUTPUT is ok, 1 some input lines were bad or some records failed (the "
    "others are written; "
    "--retry-errors redoes the failed), 2 bad usage or input (also a --model-name the server "
    "does not serve or a refused key: the audit stops at the first record), 130 interrupted "
    "(the records "
    "done stay in OUTPUT; run again to resume). A record gets at most --deadline-s "
    f"seconds (default {AUDIT_DEADLINE_S:g}; --no-deadline: no limit): past it, it is an "
    "error line (DeadlineExceededError) and the audit goes on."
)


def _audit_deadline(parser: argparse.ArgumentParser) -> None:
    """The shared ``--deadline-s`` with the audit's default (:data:`AUDIT_DEADLINE_S`),
    said in its help, and ``--no-deadline``."""
    parser.set_defaults(deadline_s=AUDIT_DEADLINE_S)
    for action in parser._actions:
        if action.dest == "deadline_s":
            action.help = (
                "the most seconds one record may take, attribution and verdict (default "
                f"{AUDIT_DEADLINE_S:g}); past it the record is an error line and the audit "
                "goes on"
            )
    parser.add_argument(
        "--no-deadline", action="store_true", help="no per-record deadline (--deadline-s)"
    )


def configure_parser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the audit's own arguments to ``parser`` (made with the shared flags of
    :func:`camab_cli.options.shared_parser` as a parent)."""
    parser.add_argument("input", metavar="INPUT", help="logged records (.jsonl or .parquet)")
    parser.add_argument("--out", "-o", required=True, metavar="OUTPUT", help="result JSONL")
    parser.add_argument(
        "--summary", metavar="PATH", help="summary JSON (default: OUTPUT.summary.json)"
    )
    parser.add_argument("--engine", choices=("local", "ray"), default="local")
    _audit_deadline(parser)
    attribution = parser.add_argument_group("attribution (audit)")
    attribution.add_argument(
        "--batch-size",
        type=positive_int,
        default=None,
        help="CAMAB Thompson samples per round (scored as one batch)",
    )
    attribution.add_argument(
        "--top-k",
        type=positive_int,
        default=3,
        help="raw top segments listed per sentence with their scores (the citations are "
        "what cite() cites)",
    )
    attribution.add_argument(
        "--ungrounded-threshold",
        type=float,
        default=None,
        help="replace the calibrated verdict: an answer whose gate score (explained share, "
        "0-1) is below this is unsupported",
    )
    attribution.add_argument(
        "--block-on",
        choices=("any", "facts"),
        default=DEFAULT_BLOCK_ON,
        help="facts (default): an answer is unsupported only when it also leaves a number, "
        "date or name unchecked, else uncertain; any: the stricter calibrated verdict as it "
        "stands (GroundednessFilter(block_on=...))",
    )
    running = parser.add_argument_group("running")
    running.add_argument(
        "--concurrency",
        type=positive_int,
        default=None,
        help=(
            "records in flight (default 16 with servers, 4 in-process; per actor on Ray); "
            "in-process they take turns on the model, and a record's --deadline-s stops "
            "while it waits for the others' turns"
        ),
    )
    running.add_argument(
        "--max-batch", type=positive_int, default=16, help="requests per in-process model call"
    )
    running.add_argument(
        "--retry-errors", action="store_true", help="redo records whose last result is an error"
    )
    running.add_argument("--no-progress", action="store_true", help="no progress bar")
    running.add_argument("--ray-actors", type=positive_int, default=2)
    running.add_argument("--ray-batch-size", type=positive_int, default=4)
    running.add_argument("--ray-cpus-per-actor", type=float, default=None)
    running.add_argument("--ray-address", default=None, help="Ray cluster (default: local)")
    return parser


def add_audit_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``audit`` on the ``camab`` sub-command parsers (``add_subparsers()``), with
    the shared flags (:func:`camab_cli.options.shared_parser`)."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "audit",
        help="audit logged RAG answers in batch",
        description=DESCRIPTION,
        parents=[shared_parser()],
    )
    configure_parser(parser)
    parser.set_defaults(func=run_audit)
    return parser


def spec_from_args(args: argparse.Namespace) -> ScorerSpec:
    """The scorer recipe the arguments describe."""
    if args.base_url:
        return ScorerSpec(
            kind="http",
            base_urls=tuple(args.base_url),
            model_name=args.model_name or "",
            api_key_env=args.api_key_env,  # the scorer's own retry policy is the only one
        )
    return ScorerSpec(kind="model", model=args.model)


def config_from_args(args: argparse.Namespace) -> AuditConfig:
    options: dict[str, Any] = {}
    if args.batch_size is not None:
        options["batch_size"] = args.batch_size
    return AuditConfig(
        budget=args.budget,
        method=args.method,
        granularity=args.granularity,
        deadline_s=None if args.no_deadline else args.deadline_s,
        seed=args.seed,
        top_k=args.top_k,
        ungrounded_threshold=args.ungrounded_threshold,
        block_on=args.block_on,
        measure_gain=args.groundedness,
        method_options=options,
    )


def run_audit(args: argparse.Namespace) -> int:
    """Run ``camab audit``; returns the exit code: 0 every record ok, 1 some input lines
    skipped or records in error (said on standard error), 2 bad input/usage, 130
    interrupted (Ctrl-C: what is done stays written, with the summary)."""
    summary_file = args.summary or summary_path_for(args.out)
    try:
        summary = audit(
            args.input,
            args.out,
            spec=spec_from_args(args),
            config=config_from_args(args),
            engine=args.engine,
            concurrency=args.concurrency,
            max_batch=args.max_batch,
            retry_errors=args.retry_errors,
            summary_path=args.summary,
            progress=not args.no_progress,
            ray_actors=args.ray_actors,
            ray_batch_size=args.ray_batch_size,
            ray_cpus_per_actor=args.ray_cpus_per_actor,
            ray_address=args.ray_address,
        )
    except CamabError as exc:
        print(f"camab audit: error: {in_flags(str(exc), args.api_key_env)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(
            f"\ncamab audit: interrupted: the records done are in {args.out} and its summary "
            f"in {summary_file}; run the same command again to audit the rest",
            file=sys.stderr,
        )
        return 130
    print(cost_report(summary), file=sys.stderr)
    print(json.dumps({"summary": str(summary_file)}))
    records = summary["records"]
    problems = []
    if records["bad_input_lines"]:
        problems.append(
            f"{records['bad_input_lines']} bad input lines, written as error lines (fix "
            "them and run again: records already in the output are not redone)"
        )
    if records["error"]:
        reasons = summary["failures"]
        too_long = sum(f["records"] for f in reasons if "the model's limit" in f["reason"])
        redo = "--retry-errors redoes them" if not too_long else "shorten them: a retry fails too"
        if too_long and too_long < records["error"]:
            redo = f"{too_long} longer than the model's context; --retry-errors redoes the rest"
        problems.append(f"{records['error']} records in error ({redo})")
    if problems:
        print(f"camab audit: {'; '.join(problems)}; the summary lists each", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = configure_parser(
        argparse.ArgumentParser(
            prog="python -m camab_cli.audit", description=DESCRIPTION, parents=[shared_parser()]
        )
    )
    return run_audit(parser.parse_args(argv))
