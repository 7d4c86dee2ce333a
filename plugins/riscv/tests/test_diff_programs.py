"""Differential tests: C programs built by riscv64-unknown-elf-gcc run identically in Tessera and qemu-user.

Every program of ``programs/`` is compiled for RV32IM and RV64IM at -O0 and -O2
(and with Zba/Zbb, or with the A extension for the atomics program), run under
``qemu-riscv32``/``qemu-riscv64`` user mode and under Tessera, and the two must
write the same bytes to stdout and stderr and exit with the same status.  A few
ELFs also go through the ``tessera run`` command, which picks the architecture
from the ELF header.  Without the cross compiler or qemu the tests skip (CI
installs both).
"""

from __future__ import annotations

import re

import pytest
from diffsupport import (
    build,
    compare,
    qemu_problem,
    run_qemu,
    run_tessera,
    run_tessera_cli,
    toolchain_problem,
)

#: exitcode variants 4 and 5 execute an illegal instruction (see exitcode.c)
ILLEGAL_VARIANTS = {4: 0x0000_000B, 5: 0x0000_0000}
BUILDS = [item for item in build.builds() if item[2] not in ILLEGAL_VARIANTS]
ILLEGAL = [item for item in build.builds() if item[2] in ILLEGAL_VARIANTS]


def _id(item) -> str:
    prog, config, variant = item
    return build.build_id(prog, config, variant)


@pytest.fixture(scope="session")
def rv_elf(tmp_path_factory):
    """``rv_elf(program, config, variant) -> path``: compiled once per session."""
    problem = toolchain_problem()
    outdir = tmp_path_factory.mktemp("rv-elfs")
    cache: dict = {}

    def get(prog, config, variant=None):
        if problem:
            pytest.skip(problem)
        key = (prog.name, config, variant)
        if key not in cache:
            cache[key] = build.compile_program(prog, config, outdir, variant)
        return cache[key]

    return get


def _need_qemu(xlen: int) -> None:
    problem = qemu_problem(xlen)
    if problem:
        pytest.skip(problem)


@pytest.mark.parametrize("item", BUILDS, ids=_id)
def test_program_matches_qemu(rv_elf, item):
    prog, config, variant = item
    _need_qemu(config.xlen)
    elf = rv_elf(prog, config, variant)
    reference = run_qemu(elf, config.xlen)
    if prog.name != "exitcode":
        assert reference.exit_code == 0, f"qemu: {prog.name} failed: {reference.stderr[:300]!r}"
        assert reference.stdout.startswith(prog.name.encode() + b"\n")
    ours = run_tessera(elf, config.xlen)
    compare(reference, ours, _id(item))


CLI_CASES = [(build.program("printing"), build.cfg(m, "O2"), None) for m in ("rv32im", "rv64im")] + [
    (build.program("exitcode"), build.cfg(m, "O2"), v) for m in ("rv32im", "rv64im") for v in (0, 1, 3)]


@pytest.mark.parametrize("item", CLI_CASES, ids=_id)
def test_tessera_run_command_matches_qemu(rv_elf, item):
    """``tessera run prog.elf``: the program's stdout on stdout, its exit status as ours."""
    prog, config, variant = item
    _need_qemu(config.xlen)
    elf = rv_elf(prog, config, variant)
    reference = run_qemu(elf, config.xlen)
    ours = run_tessera_cli(elf)
    assert ours.stdout == reference.stdout, (ours.stdout[-300:], ours.stderr[-500:])
    assert reference.stderr in ours.stderr
    assert ours.exit_code == reference.exit_code, ours.stderr[-500:]


def _symbol(elf, name: str) -> int:
    from elftools.elf.elffile import ELFFile

    with open(elf, "rb") as f:
        (sym,) = ELFFile(f).get_section_by_name(".symtab").get_symbol_by_name(name)
        return sym["st_value"]


@pytest.mark.parametrize("item", ILLEGAL, ids=_id)
def test_illegal_instruction_stops_where_qemu_raises_sigill(rv_elf, item):
    """No handler (mtvec = 0): qemu-user dies of SIGILL; Tessera stops with one line naming PC and word."""
    prog, config, variant = item
    _need_qemu(config.xlen)
    elf = rv_elf(prog, config, variant)
    pc, word = _symbol(elf, "bad_insn"), ILLEGAL_VARIANTS[variant]
    reference = run_qemu(elf, config.xlen)
    assert reference.exit_code in (-4, 128 + 4), reference        # SIGILL
    ours = run_tessera(elf, config.xlen)
    assert ours.stdout == reference.stdout
    assert ours.exit_code is None and "UnhandledTrap" in ours.detail, ours.detail
    cli = run_tessera_cli(elf)
    assert cli.stdout == reference.stdout
    assert cli.exit_code == 68, cli                              # UnhandledTrap's status
    lines = cli.stderr.decode().splitlines()
    assert len(lines) == 1, lines
    assert re.search(rf"illegal instruction.*\bpc 0x0*{pc:x}\b.*\bword 0x0*{word:x}\b", lines[0]), lines[0]
