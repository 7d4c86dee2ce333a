"""Fixtures for the conformance suite's own tests (helpers in suite_support.py)."""

from __future__ import annotations

import os

import pytest
from suite_support import run_suite_in

# Translate blocks at the second visit of a PC (the default waits for 16), so that the
# short loops of the tests run through the fast engine's blocks, not only its stepping.
os.environ.setdefault("TESSERA_BLOCK_HOT", "2")


@pytest.fixture
def run_suite(tmp_path):
    """``run_suite({name: "module:attr"}, *pytest_args) -> SuiteRun`` in a subprocess."""

    def run(plugins: dict[str, str], *args: str):
        return run_suite_in(tmp_path, plugins, *args)

    return run
