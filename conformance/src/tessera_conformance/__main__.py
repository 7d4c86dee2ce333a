"""``python -m tessera_conformance [PYTEST ARGS]``: run the suite (same as ``pytest --pyargs tessera_conformance``)."""

from __future__ import annotations

import sys

from tessera_conformance import pytest_args, run_suite


def main(argv: list[str] | None = None) -> None:
    sys.exit(run_suite(pytest_args(extra=sys.argv[1:] if argv is None else argv)))


if __name__ == "__main__":  # pragma: no cover
    main()
