"""``python -m camab_cli.evaluation ...`` = ``camab bench ...``."""

from __future__ import annotations

import sys

from camab_cli.evaluation.cli import main

if __name__ == "__main__":
    sys.exit(main())
