"""Helpers shared by the command-line tests (results, the one-line error check)."""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Result:
    code: int
    out: str
    err: str

    @property
    def err_lines(self) -> list[str]:
        return self.err.splitlines()


def assert_one_line_error(res: Result, code: int, *needles: str) -> str:
    """Exit ``code``, exactly one line on stderr starting ``tessera:``, no traceback anywhere."""
    assert "Traceback" not in res.out and "Traceback" not in res.err, res.err
    assert res.code == code, (res.code, res.err)
    assert len(res.err_lines) == 1, res.err
    line = res.err_lines[0]
    assert line.startswith("tessera: "), line
    for needle in needles:
        assert needle in line, (needle, line)
    return line


def clean_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TESSERA_")}
    env.pop("PYTHONPATH", None)
    env["COLUMNS"] = "200"
    env["TESSERA_PLUGINS"] = "toy"  # the test architecture alone (see conftest)
    env.update(extra or {})
    return env


def tessera_command() -> list[str]:
    """The installed console script next to this interpreter, else ``python -m``."""
    script = Path(sys.executable).parent / "tessera"
    if script.exists():
        return [str(script)]
    found = shutil.which("tessera")
    return [found] if found else [sys.executable, "-m", "tessera.cli.main"]
