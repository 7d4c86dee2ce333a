"""Fixtures for the batch-run tests: small toy programs, a toy-only plugin host, batch files.

Every program is a few toy instructions, so a whole batch takes well under a second
of emulation; what the tests wait for is mostly worker processes starting.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import tessera_toyarch.plugin
from tessera.batch import TIMING_KEYS
from tessera.plugins import PluginHost

#: name -> toy assembly
PROGRAMS = {
    # sums 10..1, prints "h\n" on the console, halts with the sum (55)
    "sum.s": """\
_start: li    r2, 10
        li    r3, 0
loop:   add   r3, r3, r2
        addi  r2, r2, -1
        bne   r2, r0, loop
        li    r10, 0x30000
        li    r11, 'h'
        st    r11, 0(r10)
        li    r11, 10
        st    r11, 0(r10)
        halt  r3
""",
    "spin.s": "_start: jmp _start\n",                                              # budget
    "fault.s": "_start: li r1, 0x20000\n        st r1, 0(r1)\n        halt r0\n",    # write to ROM: 68
    "dead.s": "_start: sem.wait 1\n        halt r0\n",                              # deadlock: 71
}
#: a word list: li r2, 7 ; halt r2
WORDS = "14800007\n0x44800000\n"


def batch_lines() -> list[dict[str, Any]]:
    """A batch touching every outcome, with settings, budgets and stop conditions."""
    return [
        {"id": "sum-1", "program": "sum.s", "arch": "toy", "set": {"cores": 1}},
        {"id": "sum-2", "program": "sum.s", "arch": "toy", "set": {"cores": 2}},
        {"id": "sum-step", "program": "sum.s", "arch": "toy", "set": {"cores": 1}, "engine": "step"},
        {"id": "spin", "program": "spin.s", "arch": "toy", "set": {"cores": 1}, "max_steps": 500},
        {"id": "spin-cycles", "program": "spin.s", "arch": "toy", "set": {"cores": "1"}, "max_cycles": 300},
        {"id": "fault", "program": "fault.s", "arch": "toy", "set": {"cores": 1}},
        {"id": "dead", "program": "dead.s", "arch": "toy", "set": {"cores": 1}},
        {"id": "stop", "program": "sum.s", "arch": "toy", "set": {"cores": 1, "echo": False},
         "until_symbol": "loop"},
        {"id": "words", "program": "prog.words", "arch": "toy", "set": {"cores": 1}},
        {"program": "sum.s", "arch": "toy", "set": {"cores": 1}, "until_pc": "0x8"},
    ]


@pytest.fixture
def toy_host() -> PluginHost:
    host = PluginHost(load_entry_points=False, use_environment=False)
    host.register(tessera_toyarch.plugin, "toy")
    return host


@pytest.fixture
def programs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The programs written into the test's directory, which becomes the working directory
    (spec paths are relative to it, as ``tessera run``'s are)."""
    for name, text in PROGRAMS.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "prog.words").write_text(WORDS)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write_batch(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def untimed(results: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Results without the fields that depend on the host's speed."""
    return {ident: {k: v for k, v in r.items() if k not in TIMING_KEYS} for ident, r in results.items()}
