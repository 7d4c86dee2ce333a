"""The programs ``tessera demo`` runs on rv32im and rv64im.

Each sums 1..100 with a loop (on RV64 it then shifts the sum into the upper word, to
use the 64-bit registers), turns it into decimal digits with ``divu``/``remu``, prints
it with the ``write`` system call and exits with status 0 — the same program a
bare-metal ELF would be (Linux system-call numbers, so it also runs under
qemu-riscv32/qemu-riscv64).
"""

from __future__ import annotations

from typing import Any

from tessera.isa import Example

SOURCE = """\
# Sum 1..100, print it in decimal with write(1, buf, len), exit(0).
        .text
        .globl _start
_start:
        li    t0, 100               # counter
        li    a0, 0                 # sum
sum:    add   a0, a0, t0
        addi  t0, t0, -1
        bnez  t0, sum
{widen}
        la    t1, end               # digits are written backwards from here
        li    t2, 10
        li    t3, '\\n'
        addi  t1, t1, -1
        sb    t3, 0(t1)
digit:  remu  t3, a0, t2
        divu  a0, a0, t2
        addi  t3, t3, '0'
        addi  t1, t1, -1
        sb    t3, 0(t1)
        bnez  a0, digit
        la    t4, end
        li    a0, 1                 # fd: stdout
        mv    a1, t1                # buf
        sub   a2, t4, t1            # count
        li    a7, 64                # write
        ecall
        li    a0, 0
        li    a7, 93                # exit
        ecall
        .data
buf:    .space 24
end:
"""

WIDEN_64 = "        slli  a0, a0, 32            # RV64: 5050 * 2**32"
EXPECTED = {32: b"5050\n", 64: b"%d\n" % (5050 << 32)}


def _check(machine: Any, result: Any, expected: bytes) -> str | None:
    out = bytes(machine.ext["riscv_io"].stdout)
    if out != expected:
        return f"printed {out!r}, expected {expected!r}"
    if result.exit_code != 0:
        return f"exit status {result.exit_code}, expected 0"
    return None


def check32(machine: Any, result: Any) -> str | None:
    return _check(machine, result, EXPECTED[32])


def check64(machine: Any, result: Any) -> str | None:
    return _check(machine, result, EXPECTED[64])


def examples(xlen: int) -> tuple[Example, ...]:
    if xlen == 32:
        return (Example("sum-print", "RV32IM: sum 1..100, print it with the write system call, exit 0",
                        SOURCE.format(widen=""), load_address=0x10000, max_steps=100_000,
                        check=check32),)
    return (Example("sum-print", "RV64IM: sum 1..100 times 2**32, print it with the write system call, "
                    "exit 0", SOURCE.format(widen=WIDEN_64), load_address=0x10000, max_steps=100_000,
                    check=check64),)
