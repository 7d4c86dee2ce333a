"""Fixtures for the command-line tests: run ``tessera`` in-process or as a real process.

In-process runs call :func:`tessera.cli.main.main` (which always ends in
``SystemExit``) and capture stdout/stderr; subprocess runs use the venv's
``tessera`` console script (or ``python -m tessera.cli.main``) with a clean
environment, to prove what a user really sees.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
for _dir in (HERE, HERE.parent / "loaders"):  # clitools here; elfgen / toyprog with the loader tests
    if str(_dir) not in sys.path:
        sys.path.insert(0, str(_dir))

pytest.register_assert_rewrite("clitools")
from clitools import Result, clean_env, tessera_command  # noqa: E402

from tessera.cli.main import main  # noqa: E402


@pytest.fixture(autouse=True)
def _clean_plugin_env(monkeypatch):
    for name in list(os.environ):
        if name.startswith("TESSERA_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("COLUMNS", "200")  # rich tables: no folding of the cells we look for
    # The core's command line is tested with the test architecture alone, whatever other
    # plugins the development install has; tests about plugin selection set their own.
    monkeypatch.setenv("TESSERA_PLUGINS", "toy")


@pytest.fixture
def tessera(capsys):
    """``tessera(*args) -> Result``: run the command line in this process."""

    def run(*args) -> Result:
        capsys.readouterr()
        with pytest.raises(SystemExit) as exc:
            main([str(a) for a in args])
        out, err = capsys.readouterr()
        code = exc.value.code
        return Result(code if isinstance(code, int) else 1, out, err)

    return run


@pytest.fixture
def tessera_proc(tmp_path):
    """``tessera_proc(*args, env=None, module=False) -> Result``: a real ``tessera`` process."""

    def run(*args, env: dict[str, str] | None = None, module: bool = False,
            timeout: float = 30) -> Result:
        cmd = [sys.executable, "-m", "tessera.cli.main"] if module else tessera_command()
        proc = subprocess.run([*cmd, *map(str, args)], capture_output=True, text=True,
                              env=clean_env(env), cwd=tmp_path, timeout=timeout)
        return Result(proc.returncode, proc.stdout, proc.stderr)

    return run
