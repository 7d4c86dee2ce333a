"""Conformance cases of rv32im and rv64im (``tessera_conformance_cases``, see docs/conformance.md).

Each case is a small program with what it must print, exit with or leave in
registers and memory.  They run with 1 MiB of RAM (``config``) so the suite's
snapshot and state-hash checks stay fast.  ``load-fault`` reads unmapped memory
without a handler (the run stops with a memory fault naming hart and address);
``endless`` only stops at its budget.
"""

from __future__ import annotations

from typing import Any

SMALL = {"ram": 0x10_0000}
QUIET = {"ram": 0x10_0000, "echo": False}
EXIT = "        li    a7, 93\n        ecall\n"


def _cases(xlen: int) -> list[dict[str, Any]]:
    mask = (1 << xlen) - 1
    cases: list[dict[str, Any]] = [
        {
            "name": "exit-status",
            "description": "exit(42) through the Linux system-call layer",
            "source": "_start: li a0, 42\n" + EXIT,
            "config": QUIET,
            "max_steps": 100,
            "expect": {"exit_code": 42, "registers": {"hart0": {"x": {"a0": 42, "a7": 93}}}},
        },
        {
            "name": "hello",
            "description": "write(1, 'hi\\n', 3), then exit(0)",
            "source": """
        _start: li    a0, 1
                la    a1, msg
                li    a2, 3
                li    a7, 64
                ecall
                li    a0, 0
        """ + EXIT + """
                .data
        msg:    .ascii "hi\\n"
        """,
            "config": SMALL,
            "max_steps": 100,
            "stdout": "hi\n",
            "expect": {"exit_code": 0},
        },
        {
            "name": "divide-by-zero",
            "description": "M extension corner cases: x/0 = -1, x%0 = x, MIN/-1 = MIN, MIN%-1 = 0",
            "source": f"""
        _start: li    s0, 7
                li    s1, 0
                div   s2, s0, s1
                rem   s3, s0, s1
                divu  s4, s0, s1
                li    s5, 1
                slli  s5, s5, {xlen - 1}
                li    s6, -1
                div   s7, s5, s6
                rem   s8, s5, s6
                mulh  s9, s6, s6
                li    a0, 0
        """ + EXIT,
            "config": QUIET,
            "max_steps": 100,
            "expect": {"exit_code": 0, "registers": {"hart0": {"x": {
                "s2": mask, "s3": 7, "s4": mask, "s7": 1 << (xlen - 1), "s8": 0, "s9": 0}}}},
        },
        {
            "name": "memory",
            "description": "byte, half and word stores read back with sign and zero extension",
            "source": """
        _start: la    t0, buf
                li    t1, 0x80
                sb    t1, 0(t0)
                li    t1, -2
                sh    t1, 2(t0)
                lb    s0, 0(t0)
                lbu   s1, 0(t0)
                lh    s2, 2(t0)
                lhu   s3, 2(t0)
                lw    s4, 0(t0)
                li    a0, 0
        """ + EXIT + """
                .data
        buf:    .word 0
        """,
            "config": QUIET,
            "max_steps": 100,
            "expect": {"exit_code": 0,
                       "memory": {"buf": b"\x80\x00\xfe\xff"},
                       "registers": {"hart0": {"x": {"s0": mask & -128, "s1": 0x80, "s2": mask & -2,
                                                     "s3": 0xFFFE, "s4": mask & -0x1FF80}}}},
        },
        {
            "name": "amo",
            "description": "Zaamo: amoadd.w and amoswap.w return the old value and update memory",
            "source": """
        _start: la    t0, cell
                li    t1, 5
                amoadd.w  s0, t1, (t0)
                li    t1, 9
                amoswap.w s1, t1, (t0)
                lw    s2, 0(t0)
                li    a0, 0
        """ + EXIT + """
                .data
        cell:   .word 37
        """,
            "config": QUIET,
            "max_steps": 100,
            "expect": {"exit_code": 0, "memory": {"cell": 9},
                       "registers": {"hart0": {"x": {"s0": 37, "s1": 42, "s2": 9}}}},
        },
        {
            "name": "illegal-handled",
            "description": "an illegal instruction traps to mtvec: mcause 2, mepc and mtval set",
            "source": """
        _start: la    t0, handler      # auipc + addi
                csrw  mtvec, t0
        bad:    .word 0              # at 0x1000c
                li    a0, 1
        """ + EXIT + """
        handler:
                csrr  s0, mcause
                csrr  s1, mepc
                csrr  s2, mtval
                mv    a0, s0
        """ + EXIT,
            "config": QUIET,
            "max_steps": 100,
            "expect": {"exit_code": 2, "registers": {"hart0": {"x": {"s0": 2, "s1": 0x1000C, "s2": 0}}}},
        },
        {
            "name": "load-fault",
            "description": "a load from unmapped memory without mtvec stops with a memory fault",
            "source": "_start: li t0, 0x200000\n        lw a0, 0(t0)\n" + EXIT,
            "config": QUIET,
            "max_steps": 100,
            "expect": {"reason": "memory fault",
                       "error": {"address": 0x200000, "agent": "hart0", "pc": 0x10004}},
        },
        {
            "name": "endless",
            "description": "a counting loop that only a budget stops",
            "source": "_start: addi a0, a0, 1\n        j _start\n",
            "config": QUIET,
            "max_steps": 1000,
            "expect": {"reason": "budget", "registers": {"hart0": {"x": {"a0": 500}}}},
        },
    ]
    if xlen == 64:
        cases.append({
            "name": "word-ops",
            "description": "RV64: addiw/sllw sign-extend their 32-bit results",
            "source": """
        _start: li    t0, 0x7fffffff
                addiw s0, t0, 1
                li    t1, 1
                sllw  s1, t1, t0
                li    a0, 0
        """ + EXIT,
            "config": QUIET,
            "max_steps": 100,
            "expect": {"exit_code": 0, "registers": {"hart0": {"x": {
                "s0": 0xFFFF_FFFF_8000_0000, "s1": 0xFFFF_FFFF_8000_0000}}}},
        })
    return cases


def cases(arch: Any) -> list[dict[str, Any]] | None:
    if arch.name == "rv32im":
        return _cases(32)
    if arch.name == "rv64im":
        return _cases(64)
    return None
