"""The library's errors in the words of the command line: its flags, not Python arguments.

Why: ``camab_rag``'s messages name the keywords of its API (``model=``, ``api_key``,
``base_url``, ``deadline_s``, ``budget=``); a ``camab`` user sets flags
(``--model-name``, ``--api-key-env``, ``--base-url``, ...). And an error that holds for
every record (a model the server does not serve, a key it refuses) was met, retried and
reported once per record. How: :func:`in_flags` replaces each known phrase with the flag
that sets the same thing (``tests/test_cli_flags.py`` raises each message for real, so a
reworded message fails there, not silently here); :data:`FATAL` lists the errors that stop
a run at their first occurrence.
"""

from __future__ import annotations

from camab_rag.errors import (
    CredentialsRefusedError,
    ModelNotServedError,
    ServerNotFoundError,
    ServerRefusedError,
)

FATAL: tuple[type[Exception], ...] = (
    ModelNotServedError,
    CredentialsRefusedError,
    ServerRefusedError,
    ServerNotFoundError,
)
"""Errors that hold for every record of a run (the server does not serve ``--model-name``,
refuses the key, or nothing accepts connections or answers the OpenAI API at
``--base-url``): ``camab attribute`` and ``camab audit`` stop at the first, once, instead of
failing each record the same way."""

PHRASES: tuple[tuple[str, str], ...] = (
    (
        "pass model= one of the names its /v1/models lists",
        "pass --model-name one of the names its /v1/models lists",
    ),
    ("check base_url, which ends with /v1", "check --base-url, which ends with /v1"),
    ("is it running? check base_url", "is it running? check --base-url"),
    ("check base_url ends with /v1", "check --base-url ends with /v1"),
    ("pass the URL it redirects to as base_url", "pass the URL it redirects to as --base-url"),
    ("base_url must be", "--base-url must be"),
    ("(deadline_s)", "(--deadline-s)"),
    ("Raise deadline_s", "Raise --deadline-s"),
    (
        "pass a lower OpenAICompletionsScorer(timeout=...) to give up on a silent server sooner",
        "a silent server is waited for that long at each attempt",
    ),
    ("pass a smaller budget (the default is 40)", "pass a smaller --budget (the default is 40)"),
    ("or a coarser granularity ('chunk')", "or --granularity chunk"),
    ("budget=", "--budget "),
)
"""``(library phrase, command-line phrase)``, applied in order."""

API_KEY = "check the api_key"


def in_flags(message: str, api_key_env: str | None = None) -> str:
    """``message`` with the library's argument names replaced by the ``camab`` flags that
    set them; a refused key names ``--api-key-env`` (``api_key_env``: the variable the
    run read its key from, ``None`` when it sent none)."""
    for library, command_line in PHRASES:
        message = message.replace(library, command_line)
    if api_key_env:
        key = f"check the key in ${api_key_env} (--api-key-env {api_key_env})"
    else:
        key = "no key was sent: pass --api-key-env VAR, the environment variable holding it"
    return message.replace(API_KEY, key)
