"""camab-cli: the ``camab`` command and the tools around the camab-rag library.

* :mod:`camab_cli.cli`: ``camab attribute``, ``camab demo``, ``camab audit``, ``camab serve``;
* :mod:`camab_cli.records`: readers of logged RAG records (JSON, JSONL, Parquet);
* :mod:`camab_cli.audit`: the batch audit of logged answers (in process, vLLM, Ray Data);

The library itself is ``camab_rag``; it never imports this package.
"""

from camab_rag import __version__

__all__ = ["__version__"]
