"""``tessera run prog.elf`` as a user sees it: architecture from the ELF, output, exit status, errors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from rvcore_support import elfgen

from tessera.isa.asm import assemble
from tessera_riscv import RV32IM, RV64IM

EM_RISCV, build_elf, words_le = elfgen.EM_RISCV, elfgen.build_elf, elfgen.words_le
ARCHS = {32: RV32IM, 64: RV64IM}

HELLO = """
        .globl _start
_start: li    a0, 1
        la    a1, msg
        li    a2, 6
        li    a7, 64
        ecall
        li    a0, 2
        la    a1, err
        li    a2, 4
        li    a7, 64
        ecall
        li    a0, 3
        li    a7, 94
        ecall
msg:    .ascii "hello\\n"
err:    .ascii "oops"
"""


def elf(tmp_path: Path, xlen: int, source: str, name: str = "prog.elf") -> str:
    program = assemble(ARCHS[xlen], source, base=0x10000)
    (start, blob), = program.segments
    path = tmp_path / name
    path.write_bytes(build_elf(machine=EM_RISCV, bits=xlen, entry=program.entry or start,
                               segments=[(start, blob)]))
    return str(path)


def tessera(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    script = Path(sys.executable).parent / "tessera"
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "tessera.cli.main"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("TESSERA_")}
    env["TESSERA_PLUGINS"] = "riscv"
    return subprocess.run([*cmd, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=60)


@pytest.mark.parametrize("xlen", [32, 64])
def test_run_prints_the_program_output_and_exits_with_its_status(tmp_path, xlen):
    res = tessera("run", elf(tmp_path, xlen, HELLO), cwd=tmp_path)
    assert res.returncode == 3
    assert res.stdout == "hello\n"
    assert res.stderr == "oops"


def test_illegal_instruction_is_one_line_with_pc_and_word(tmp_path):
    path = elf(tmp_path, 32, "nop\n.word 0xffffffff")
    res = tessera("run", path, cwd=tmp_path)
    assert res.returncode == 68
    assert res.stdout == ""
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in res.stderr
    assert lines[0] == ("tessera: unhandled trap: illegal instruction (cause 2, value 0xffffffff) and no "
                        "handler (agent hart0, pc 0x00010004, word 0xffffffff)")


def test_memory_fault_is_one_line(tmp_path):
    path = elf(tmp_path, 64, "li t0, 0x40000000\nld a0, 0(t0)")
    res = tessera("run", path, cwd=tmp_path)
    assert res.returncode == 67
    assert res.stderr.splitlines() == [
        "tessera: memory fault: read of unmapped address (agent hart0, pc 0x00010004, address 0x40000000)"]


def test_architecture_flags_and_settings(tmp_path):
    misaligned = elf(tmp_path, 32, "li t0, 0x8001\nlw a0, 0(t0)\nli a7, 93\necall", "m.elf")
    assert tessera("run", misaligned, cwd=tmp_path).returncode == 0
    res = tessera("run", "--trap-misaligned", misaligned, cwd=tmp_path)
    assert res.returncode == 68 and "load address misaligned" in res.stderr
    res = tessera("run", "--set", "misaligned=trap", misaligned, cwd=tmp_path)
    assert res.returncode == 68
    quiet = tessera("run", "--no-echo", elf(tmp_path, 64, HELLO), cwd=tmp_path)
    assert quiet.returncode == 3 and quiet.stdout == "" and quiet.stderr == ""
    res = tessera("run", "--set", "colour=red", misaligned, cwd=tmp_path)
    assert res.returncode == 64 and "unknown RISC-V setting(s): colour" in res.stderr


def test_assembly_source_runs_too(tmp_path):
    src = tmp_path / "prog.s"
    src.write_text(HELLO)
    res = tessera("run", "--arch", "rv64im", str(src), cwd=tmp_path)
    assert (res.returncode, res.stdout) == (3, "hello\n")


def test_demo(tmp_path):
    res = tessera("demo", "--arch", "rv32im", "--arch", "rv64im", cwd=tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "5050\n" in res.stdout and f"{5050 << 32}\n" in res.stdout
    assert "rv32im/sum-print: ok" in res.stdout and "rv64im/sum-print: ok" in res.stdout


def test_wrong_elf_for_a_chosen_arch(tmp_path):
    path = tmp_path / "p64.elf"
    path.write_bytes(build_elf(machine=EM_RISCV, bits=64, entry=0x10000,
                               segments=[(0x10000, words_le([0x13]))]))
    res = tessera("run", "--arch", "rv32im", str(path), cwd=tmp_path)
    assert res.returncode == 65 and "64-bit ELF; rv32im takes 32-bit ELFs" in res.stderr
