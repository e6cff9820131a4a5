"""``python -m camab_cli``: the ``camab`` command."""

from camab_cli.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
