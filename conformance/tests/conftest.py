"""Fixtures for the conformance suite's own tests (helpers in suite_support.py)."""

from __future__ import annotations

import pytest
from suite_support import run_suite_in


@pytest.fixture
def run_suite(tmp_path):
    """``run_suite({name: "module:attr"}, *pytest_args) -> SuiteRun`` in a subprocess."""

    def run(plugins: dict[str, str], *args: str):
        return run_suite_in(tmp_path, plugins, *args)

    return run
