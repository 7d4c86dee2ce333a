"""The system-call layer: write, exit, exit_group, unknown numbers, echo."""

from __future__ import annotations

import pytest
from rvcore_support import XLENS, hart, machine, mask, reg_index, run

WRITE = """
        li    a0, {fd}
        la    a1, msg
        li    a2, {count}
        li    a7, 64
        ecall
        mv    s1, a0
        li    a0, {code}
        li    a7, {exit}
        ecall
        .data
msg:    .ascii "hello, world\\n"
"""


@pytest.mark.parametrize("xlen", XLENS)
def test_write_to_stdout_and_exit(xlen):
    m, result = run(WRITE.format(fd=1, count=13, code=7, exit=93), xlen)
    assert result.reason == "halted" and result.exit_code == 7
    assert bytes(m.riscv_io.stdout) == b"hello, world\n"
    assert bytes(m.riscv_io.stderr) == b""
    assert hart(m).x[reg_index("s1")] == 13                   # bytes written


@pytest.mark.parametrize("xlen", XLENS)
def test_write_to_stderr_and_exit_group(xlen):
    m, result = run(WRITE.format(fd=2, count=5, code=0, exit=94), xlen)
    assert result.exit_code == 0
    assert bytes(m.riscv_io.stderr) == b"hello"


@pytest.mark.parametrize("xlen", XLENS)
def test_exit_status_is_the_low_byte(xlen):
    m, result = run(WRITE.format(fd=1, count=0, code=-1, exit=93), xlen)
    assert result.exit_code == 255
    m, result = run(WRITE.format(fd=1, count=0, code=0x1234, exit=93), xlen)
    assert result.exit_code == 0x34


@pytest.mark.parametrize("xlen", XLENS)
def test_write_to_another_fd_is_ebadf(xlen):
    m, result = run(WRITE.format(fd=3, count=5, code=0, exit=93), xlen)
    assert hart(m).x[reg_index("s1")] == -9 & mask(xlen)
    assert m.riscv_io.stdout == b"" and m.riscv_io.stderr == b""


@pytest.mark.parametrize("xlen", XLENS)
def test_write_from_unmapped_memory_is_efault(xlen):
    m, result = run("""
        li    a0, 1
        li    a1, 0x40000000
        li    a2, 4
        li    a7, 64
        ecall
        mv    s1, a0
        li    a0, 0
        li    a7, 93
        ecall
""", xlen)
    assert hart(m).x[reg_index("s1")] == -14 & mask(xlen)


@pytest.mark.parametrize("xlen", XLENS)
def test_unknown_system_calls_return_enosys(xlen):
    m, result = run("""
        li    a7, 214             # brk: not provided
        ecall
        mv    s1, a0
        li    a0, 3
        li    a7, 93
        ecall
""", xlen)
    assert result.exit_code == 3
    assert hart(m).x[reg_index("s1")] == -38 & mask(xlen)


def test_echo_goes_to_the_process_streams(capfd):
    m = machine(32, WRITE.format(fd=1, count=13, code=0, exit=93), config={"echo": True})
    m.run(max_steps=100)
    m2 = machine(64, WRITE.format(fd=2, count=5, code=0, exit=93), config={"echo": True})
    m2.run(max_steps=100)
    out, err = capfd.readouterr()
    assert out == "hello, world\n" and err == "hello"


def test_syscalls_off_makes_ecall_a_trap():
    from tessera.errors import UnhandledTrap

    m = machine(32, "li a7, 93\necall", config={"syscalls": False})
    with pytest.raises(UnhandledTrap, match="environment call from M-mode"):
        m.run(max_steps=10)


@pytest.mark.parametrize("xlen", XLENS)
def test_initial_stack_like_qemu_user(xlen):
    m = machine(xlen)
    sp = hart(m).x[2]
    words = xlen // 8
    assert sp % 16 == 0
    assert sp + 5 * words <= 1 << 20 and sp + 5 * words + 16 > 1 << 20      # just below the top
    assert m.space.read_bytes(sp, 5 * words) == bytes(5 * words)            # argc, argv, envp, auxv
    top = machine(xlen, config={"stack_top": 0x8000})
    assert hart(top).x[2] == (0x8000 - 5 * words) & ~15


def test_default_ram_is_256_mib_at_zero():
    from tessera.machine import Machine
    from tessera_riscv import RV64IM

    m = Machine(RV64IM, config={"echo": False})
    (ram,) = m.space.describe()
    assert (ram["name"], ram["start"], ram["size"]) == ("ram", 0, 256 << 20)
    assert hart(m).x[2] == (256 << 20) - 48
