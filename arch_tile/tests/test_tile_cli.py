"""``tessera asm / disasm / run / demo --arch tile`` as a user runs them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PROGRAM = """
        .globl _start
_start: tcsrr a0, tid
        bnez  a0, quit
        la    a1, data
        tld.g.us t1, (a1)
        tmv.xt a0, t1, 2, ew=b
        li    a7, 93
        ecall
quit:   li    a0, 0
        li    a7, 93
        ecall
        .data
        .align 6
data:   .byte 1, 2, 42
        .space 1021
"""


def tessera(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    script = Path(sys.executable).parent / "tessera"
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "tessera.cli.main"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("TESSERA_")}
    env["TESSERA_PLUGINS"] = "riscv,tile"
    return subprocess.run([*cmd, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=120)


def test_run_asm_disasm(tmp_path):
    src = tmp_path / "prog.s"
    src.write_text(PROGRAM)
    res = tessera("run", str(src), "--arch", "tile", "--set", "ram=4M", cwd=tmp_path)
    assert res.returncode == 42, res.stderr
    res = tessera("asm", str(src), "--arch", "tile", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "tld.g.us t1, (a1)" in res.stdout and "tmv.xt a0, t1, 2, ew=b" in res.stdout
    out = tmp_path / "prog.bin"
    res = tessera("asm", str(src), "--arch", "tile", "-o", str(out), cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    res = tessera("disasm", str(out), "--arch", "tile", "--base", "0x10000", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "# W1 of the tld.g.us below" in res.stdout and "tcsrr a0, tid" in res.stdout


def test_settings_are_checked_and_modes_selectable(tmp_path):
    src = tmp_path / "prog.s"
    src.write_text(PROGRAM)
    res = tessera("run", str(src), "--arch", "tile", "--set", "ram=4M", "--set", "tile.vlen=100", cwd=tmp_path)
    assert res.returncode == 64 and "vlen=100 must be a multiple of 64" in res.stderr
    res = tessera("run", str(src), "--arch", "tile", "--set", "ram=4M", "--set", "tile.nope=1", cwd=tmp_path)
    assert res.returncode == 64 and "unknown tile setting(s): tile.nope" in res.stderr
    res = tessera("run", str(src), "--arch", "tile", "--set", "ram=4M", "--set", "tile.word_order=w0,w1",
                  cwd=tmp_path)
    assert res.returncode == 64 and "only 'w2,w1,w0' is implemented" in res.stderr
    # the program moves from t1 without waiting for the load: checker mode says so, timed mode
    # shows the stale register (the load has not happened yet when the move reads it)
    res = tessera("run", str(src), "--arch", "tile", "--set", "ram=4M", "--set", "tile.mode=checker",
                  cwd=tmp_path)
    assert res.returncode == 42 and "tile race" in res.stderr and "detail='tmv by hart0" in res.stderr, \
        res.stderr
    assert "race: race" not in res.stderr  # the event names the kind once
    res = tessera("run", str(src), "--arch", "tile", "--set", "ram=4M", "--set", "tile.mode=timed",
                  cwd=tmp_path)
    assert res.returncode == 0, res.stderr


def test_an_illegal_sequence_is_one_line(tmp_path):
    src = tmp_path / "bad.s"
    src.write_text(".ace W0.mem_us{}\n")
    res = tessera("run", str(src), "--arch", "tile", "--set", "ram=4M", cwd=tmp_path)
    assert res.returncode == 68
    assert "illegal instruction: W0 with nothing staged" in res.stderr and "pc 0x00010000" in res.stderr


def test_demo(tmp_path):
    res = tessera("demo", "--arch", "tile", cwd=tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "tile/tiled-matmul: ok" in res.stdout and "tile/missing-wait: ok" in res.stdout
