"""``python -m camab_cli.audit INPUT --out OUTPUT`` (same as ``camab audit``)."""

from __future__ import annotations

import sys

from camab_cli.audit.cli import main

if __name__ == "__main__":
    sys.exit(main())
