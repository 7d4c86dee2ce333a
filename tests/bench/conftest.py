"""Fixtures for the ``tessera bench`` tests: run the command in this process, tiny sizes.

Every run uses ``--scale`` far below 1 and one round, so the whole folder takes a
few seconds; no test looks at a time or a rate, only at how the report is built
(checked results, skips, ratios computed from the reported rates).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

import pytest

from tessera.cli.main import main
from tessera.plugins import set_default_host

TINY = ("--scale", "0.0005", "--repeat", "1")


@dataclass
class BenchRun:
    code: int
    out: str
    err: str

    @property
    def report(self) -> dict[str, Any]:
        return json.loads(self.out)


@pytest.fixture(autouse=True)
def _clean_plugin_env(monkeypatch):
    for name in list(os.environ):
        if name.startswith("TESSERA_"):
            monkeypatch.delenv(name)
    yield
    set_default_host(None)   # a command made its host (--no-plugin ...) the process's: forget it


@pytest.fixture
def bench(capsys):
    """``bench(*args, tiny=True) -> BenchRun``: ``tessera [global options] bench ...`` in-process.

    Arguments before ``"bench"`` are global options; without ``"bench"`` among them
    they all go after it.
    """

    def run(*args: str, tiny: bool = True) -> BenchRun:
        argv = [str(a) for a in args]
        if "bench" not in argv:
            argv = ["bench", *argv]
        if tiny:
            argv += TINY
        capsys.readouterr()
        with pytest.raises(SystemExit) as exc:
            main(argv)
        out, err = capsys.readouterr()
        code = exc.value.code
        return BenchRun(code if isinstance(code, int) else 1, out, err)

    return run
