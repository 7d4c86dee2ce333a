"""Conformance cases of rfPhoenix (``tessera_conformance_cases``, see docs/conformance.md).

Small programs with the registers and memory they must leave behind.  They run with
1 MiB of DRAM (``config``) so the suite's snapshot and state-hash checks stay fast.
Like the bundled examples they start at the reset address in the boot ROM and end in
a self-loop, which halts the thread (``halt_on_self_loop``); ``endless`` turns that
off and only stops at its budget.
"""

from __future__ import annotations

from typing import Any

from tessera_phoenix import causes

SMALL = {"dram": 0x10_0000}
SCRATCH = 0xFFFC_0000

#: A machine-mode exception handler at ``vectors + 0x60`` that records CAUSE and EIP
#: in r11/r12 and returns past the faulting (6-byte) instruction.
HANDLER = """
vectors:
        .space  0x60
        csrrd   r11, r0, cause
        csrrd   r12, r0, eip
        addi    r13, r12, 6
        csrrw   r0, r13, eip
        rti
"""

CASES: list[dict[str, Any]] = [
    {
        "name": "alu",
        "description": "scalar ALU: add, sub, mul, logic, shifts, and r0 stays zero",
        "source": """
        ldi     r1, 7
        ldi     r2, 6
        mul     r3, r1, r2
        sub     r4, r3, r1
        xor     r5, r1, r2
        slli    r6, r1, 4
        addi    r0, r1, 1
done:   bra     done
""",
        "config": SMALL,
        "max_steps": 100,
        "expect": {"registers": {"t0": {"r": {0: 0, 3: 42, 4: 35, 5: 1, 6: 112}}}},
    },
    {
        "name": "memory",
        "description": "a word store read back as bytes, sign- and zero-extended",
        "source": """
        ldi     r1, 0x1000
        ldi     r2, 0x12345680
        st.t    r2, 0[r1]
        ld.b    r3, 0[r1]
        ldu.b   r4, 0[r1]
        ld.t    r5, 0[r1]
done:   bra     done
""",
        "config": SMALL,
        "max_steps": 100,
        "expect": {"memory": {0x1000: 0x12345680},
                   "registers": {"t0": {"r": {3: 0xFFFF_FF80, 4: 0x80, 5: 0x12345680}}}},
    },
    {
        "name": "two-threads",
        "description": "thread 0 enables thread 1 in CR0; each stores its own word",
        "source": """
        csrrd   r1, r0, hartid
        andi    r1, r1, 15
        bne     r1, r0, second
        ldi     r2, 3
        csrrw   r0, r2, cr0
        ldi     r3, 0xFFFC0000
        ldi     r4, 11
        st.t    r4, 0[r3]
done0:  bra     done0
second: ldi     r3, 0xFFFC0004
        ldi     r4, 22
        st.t    r4, 0[r3]
done1:  bra     done1
""",
        "config": {**SMALL, "threads": 2},
        "max_steps": 1000,
        "expect": {"memory": {SCRATCH: 11, SCRATCH + 4: 22},
                   "registers": {"t1": {"r": {1: 1}}}},
    },
    {
        "name": "pma-fault",
        "description": "a load outside every PMA region raises PMA (61) to the machine-mode handler",
        "source": """
        ldi     r1, vectors
        csrrw   r0, r1, tvec3
        ldi     r1, 0x20000000
bad:    ld.t    r2, 0[r1]
        addi    r10, r10, 1
done:   bra     done
""" + HANDLER,
        "config": SMALL,
        "max_steps": 100,
        "expect": {"registers": {"t0": {"r": {10: 1, 11: causes.PMA, 12: 0xFFFD001E}}}},
    },
    {
        "name": "bus-error",
        "description": "with the PMA check off, the same load is a data bus error (60)",
        "source": """
        ldi     r1, vectors
        csrrw   r0, r1, tvec3
        ldi     r1, 0x20000000
bad:    ld.t    r2, 0[r1]
        addi    r10, r10, 1
done:   bra     done
""" + HANDLER,
        "config": {**SMALL, "pma": False},
        "max_steps": 100,
        "expect": {"registers": {"t0": {"r": {10: 1, 11: causes.DBE, 12: 0xFFFD001E}}}},
    },
    {
        "name": "endless",
        "description": "a counting loop; with halt_on_self_loop off only a budget stops it",
        "source": """
loop:   addi    r1, r1, 1
        bra     loop
""",
        "config": {**SMALL, "halt_on_self_loop": False},
        "max_steps": 1000,
        "expect": {"reason": "budget", "registers": {"t0": {"r": {1: 500}}}},
    },
]


def cases(arch: Any) -> list[dict[str, Any]] | None:
    return CASES if arch.name == "phoenix" else None
