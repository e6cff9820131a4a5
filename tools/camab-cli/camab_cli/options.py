"""The flags every attributing ``camab`` sub-command shares: one parent parser.

Why: ``camab attribute``, ``camab demo`` and ``camab audit`` declared ``--model``,
``--base-url`` and the knobs three times, with different checks. :func:`shared_parser`
declares the scorer flags and the everyday knobs of :func:`camab_rag.attribute` once
(``--budget``, ``--method``, ``--granularity``, ``--deadline-s``, ``--groundedness``, same
names and meaning as the keywords), checked as they are parsed; each sub-command passes it
as ``parents=`` and may change a default with ``set_defaults``.
"""

from __future__ import annotations

import argparse
import math

METHODS = ("auto", "camab", "kernelshap", "contextcite", "loo", "random")


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def seed(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be at least 0, got {value}")
    return value


def positive_float(text: str) -> float:
    value = float(text)
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text}")
    return value


def shared_parser() -> argparse.ArgumentParser:
    """The scorer flags and the knobs, for ``add_parser(..., parents=[shared_parser()])``."""
    parser = argparse.ArgumentParser(add_help=False)
    model = parser.add_argument_group("model")
    model.add_argument(
        "--model",
        default="smollm2",
        help="in-process model: smollm2 (default), qwen2.5-0.5b, a transformers path or a "
        ".gguf file",
    )
    model.add_argument(
        "--base-url",
        action="append",
        default=[],
        metavar="URL",
        help="OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1 (camab audit: repeat "
        "for a pool of servers)",
    )
    model.add_argument("--model-name", help="the served model's name (with --base-url)")
    model.add_argument(
        "--api-key-env",
        default=None,
        metavar="VAR",
        help="environment variable holding the servers' API key (default: no key is sent; "
        "OPENAI_API_KEY is read only when named here)",
    )
    knobs = parser.add_argument_group("attribution")
    knobs.add_argument("--budget", type=positive_int, default=40, help="model calls (default 40)")
    knobs.add_argument(
        "--method",
        choices=METHODS,
        default="auto",
        help="attribution method (default auto: best quality per model call)",
    )
    knobs.add_argument("--granularity", choices=("sentence", "chunk"), default="sentence")
    knobs.add_argument(
        "--deadline-s",
        type=positive_float,
        default=None,
        metavar="SECONDS",
        help="the most seconds one attribution may take (default: no limit)",
    )
    knobs.add_argument(
        "--groundedness",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="judge each answer's groundedness (default; --no-groundedness saves up to 2 "
        "model calls)",
    )
    knobs.add_argument("--seed", type=seed, default=0, help="at least 0 (default 0)")
    return parser
