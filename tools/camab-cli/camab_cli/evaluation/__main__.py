"""``python -m camab_rag.evaluation ...`` = ``camab bench ...``."""

from __future__ import annotations

import sys

from camab_rag.evaluation.cli import main

if __name__ == "__main__":
    sys.exit(main())
