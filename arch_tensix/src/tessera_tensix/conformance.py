"""Conformance cases of Tensix (``tessera_conformance_cases``, see docs/conformance.md).

Direct-mode kernels with what they must leave behind: a Dest slice written by the SFPU,
two threads ordered by a semaphore, a deadlock report naming the condition, and the
documented way bad words stop a run (one line, exit status 68).  Tensix threads
never branch, so there is no endless case: the suite's budget check cuts the longest
program in half instead.  The tile architectures have their own: a core released
from soft reset pushing to its thread, an endless loop, a FIFO deadlock.
"""

from __future__ import annotations

from typing import Any

HALF = """
        sfploadi L0,16128,0        # L0 = 0.5 (BF16 0x3F00)
        sfpstore 0,L0,3,7          # Dest[0:4, even columns] = 0.5 (FP32)
        end
"""


def _dest_half(machine: Any, outcome: Any) -> str | None:
    from tessera_tensix.examples import dest_fp32

    dest = machine.ext["tensix"].dest
    for row in range(4):
        for col in range(16):
            got = dest_fp32(dest, row, col)
            want = 0.5 if col % 2 == 0 else 0.0
            if got != want:
                return f"Dest[{row}][{col}] = {got!r}, expected {want!r}"
    return None


#: T1 copies LReg 0 only after T0 has loaded it: without the semaphore (T0 is two
#: instructions behind) it would copy the reset value 0.
HANDOFF = """
unpack:
        ttseminit 1,0,2            # MATH_PACK (sem 1): Max 1, Value 0
        sfpnop
        sfpnop
        sfploadi L0,16128,0        # L0 = 0.5
        ttsempost 2                # MATH_PACK += 1
        end
math:
        ttsemwait 256,2,1          # block the SFPU (B8) while MATH_PACK is 0 (C0)
        sfpmov L1,L0,0             # L1 = L0
        end
"""

#: Nobody posts: T1 waits forever, and the report says on what.
STUCK = """
math:
        ttsemwait 256,2,1
        sfpmov L1,L0,0
        end
"""


def _lreg1_half(machine: Any, outcome: Any) -> str | None:
    lanes = machine.ext["tensix"].sfpu.lreg[1]
    if not (lanes == 0x3F00_0000).all():
        return f"LReg[1] lane 0 = {int(lanes[0]):#010x}, expected 0x3f000000 (T0's L0)"
    return None


def _names_the_condition(machine: Any, outcome: Any) -> str | None:
    text = str(outcome.error)
    want = "t1 waits for T1 SEMWAIT MATH_PACK (sem 1) value 0 (B8 blocks SFPMOV)"
    return None if want in text else f"the deadlock report {text!r} does not say {want!r}"


CASES: list[dict[str, Any]] = [
    {
        "name": "dest-half",
        "description": "SFPLOADI + SFPSTORE write 0.5 into the even columns of Dest rows 0..3",
        "source": HALF,
        "max_steps": 100,
        "expect": {"exit_code": 0, "pc": {"t0": 8}},
        "check": _dest_half,
    },
    {
        "name": "undefined-encoding",
        "description": "an unassigned opcode stops the run naming the thread and the address",
        "words": [0x06000000],
        "max_steps": 10,
        "expect": {"reason": "unhandled trap", "error": {"agent": "t0", "pc": 0}},
    },
    {
        "name": "reserved-bits",
        "description": "SFPNOP with a reserved bit set stops the run (strict mode)",
        "words": [0x8F000100],
        "max_steps": 10,
        "expect": {"reason": "unhandled trap", "error": {"agent": "t0", "pc": 0, "cause": 256}},
    },
]


#: cases of the whole coprocessor, the same on both chips
THREAD_CASES: list[dict[str, Any]] = [
    {
        "name": "semaphore-handoff",
        "description": "T1's SEMWAIT holds its SFPU instruction until T0 posts MATH_PACK",
        "source": HANDOFF,
        "max_steps": 100,
        "expect": {"exit_code": 0},
        "check": _lreg1_half,
    },
    {
        "name": "deadlock-names-the-condition",
        "description": "a SEMWAIT nobody posts ends in a deadlock naming thread, semaphore and block",
        "source": STUCK,
        "max_steps": 100,
        "expect": {"reason": "deadlock"},
        "check": _names_the_condition,
    },
]


#: the tile: RISCV B releases RISCV T0 from soft reset (it starts at its fixed pc 0x6000),
#: which pushes three NOPs to Tensix T0 (two .ttinsn words and a store to INSTRN_BUF_BASE)
TILE_PUSH = """
        li t0, 0xFFB12000
        li t1, 0x6000              # RISCV_DEBUG_REG_SOFT_RESET_0: T1, T2 stay held
        sw t1, 0x1B0(t0)
        li a7, 93
        li a0, 0
        ecall
        .org 0x6000
        ttinsn 0x2000000           # NOP (the Tensix word's low 30 bits)
        ttinsn 0x2000000
        li t0, 0xFFE40000
        li t1, 0x02000000
        sw t1, 0(t0)
        li a7, 93
        li a0, 0
        ecall
"""

#: T0's MVMUL waits for SrcA (the unpackers own it after reset); its core pushes on
#: until the FIFO is full: a deadlock naming both
TILE_STUCK = """
        li t0, 0xFFB12000
        li t1, 0x6000
        sw t1, 0x1B0(t0)
        li a7, 93
        li a0, 0
        ecall
        .org 0x6000
        ttinsn 0x26000000          # MVMUL 0,0,0,0
""" + "        ttinsn 0x2000000\n" * 40 + """        li a7, 93
        li a0, 0
        ecall
"""


def _three_nops(machine: Any, outcome: Any) -> str | None:
    t0 = machine.agent("t0")
    return None if t0.instret == 3 else f"Tensix T0 retired {t0.instret} instructions, expected the 3 NOPs pushed"


def _names_the_fifo(machine: Any, outcome: Any) -> str | None:
    text = str(outcome.error)
    for want in ("trisc0 waits for t0.fifo to have room", "T0 MVMUL waits: SrcA bank 0 is owned by the unpackers"):
        if want not in text:
            return f"the deadlock report {text!r} does not say {want!r}"
    return None


TILE_CASES: list[dict[str, Any]] = [
    {
        "name": "push-to-thread",
        "description": "RISCV B releases T0 from soft reset; T0 pushes three NOPs to Tensix T0",
        "source": TILE_PUSH,
        "max_steps": 1000,
        "expect": {"exit_code": 0},
        "check": _three_nops,
    },
    {
        "name": "endless",
        "description": "RISCV B counts forever: the budget stops it (a bare `j .` would park: polls.py)",
        "source": "loop: addi t0, t0, 1\n    j loop\n",
        "max_steps": 1000,
        "expect": {"reason": "budget"},
    },
    {
        "name": "fifo-deadlock",
        "description": "a held MVMUL and a full instruction FIFO: the deadlock names the core and the thread",
        "source": TILE_STUCK,
        "max_steps": 10_000,
        "expect": {"reason": "deadlock"},
        "check": _names_the_fifo,
    },
]


def cases(arch: Any) -> list[dict[str, Any]] | None:
    if arch.name in ("tensix-tile", "tensix-tile-wh"):
        return TILE_CASES
    if arch.name == "tensix":
        return CASES + THREAD_CASES
    return THREAD_CASES if arch.name == "tensix-wh" else None
