"""Fixtures of the faults plugin's tests: the ``tessera`` command, in process."""

from __future__ import annotations

import os

import pytest

from tessera.cli.main import main

# Translate blocks at the second visit of a PC (the default waits longer), so that the
# tests' short loops run through the fast engine's blocks, not only its stepping.
os.environ.setdefault("TESSERA_BLOCK_HOT", "2")


@pytest.fixture
def tessera_cli(monkeypatch, capsys):
    """``tessera_cli(*args) -> (exit status, stdout, stderr)``; plugins from the installed entry points.

    TESSERA_* variables that choose plugins are cleared so the host is the default one
    (the engine choice, TESSERA_ENGINE, is left alone).
    """
    for key in list(os.environ):
        if key.startswith("TESSERA_") and key not in ("TESSERA_ENGINE", "TESSERA_BLOCK_HOT"):
            monkeypatch.delenv(key)

    def run(*args: str) -> tuple[int, str, str]:
        capsys.readouterr()
        with pytest.raises(SystemExit) as exit_:
            main([str(a) for a in args])
        out, err = capsys.readouterr()
        return exit_.value.code, out, err

    return run
