"""Conformance cases of the toy architecture (``tessera_conformance_cases``, see docs/conformance.md).

Small programs with the final state or output they must give; the conformance suite
runs each one and also uses them for its generic checks (determinism, snapshots,
budgets, hooks).  ``endless`` runs until its budget stops it; ``deadlock`` ends with
both cores waiting; ``load-fault`` reads unmapped memory without a trap handler.
"""

from __future__ import annotations

from typing import Any

ONE_CORE = {"cores": 1, "echo": False}

CASES: list[dict[str, Any]] = [
    {
        "name": "add",
        "description": "li, li, add, halt: the exit status is the sum",
        "words": [0x14800003, 0x14C00004, 0x0508C000, 0x45000000],  # li r2,3; li r3,4; add r4,r2,r3; halt r4
        "config": ONE_CORE,
        "max_steps": 100,
        "expect": {"exit_code": 7, "registers": {"core0": {"r": {2: 3, 3: 4, 4: 7}}}, "pc": {"core0": 12}},
    },
    {
        "name": "memory",
        "description": "a loop stores 1..5 to consecutive words, then sums them back",
        "source": """
                li    r1, 5
                li    r2, 0x100
        fill:   st    r1, 0(r2)
                addi  r2, r2, 4
                addi  r1, r1, -1
                bne   r1, r0, fill
                li    r2, 0x100
                li    r3, 5
        sum:    ld    r4, 0(r2)
                add   r5, r5, r4
                addi  r2, r2, 4
                addi  r3, r3, -1
                bne   r3, r0, sum
                halt  r5
        """,
        "config": ONE_CORE,
        "max_steps": 1000,
        "expect": {"exit_code": 15,
                   "memory": {0x100: 5, 0x104: 4, 0x108: 3, 0x10C: 2, 0x110: (4, 1), 0x114: b"\0\0\0\0"}},
    },
    {
        "name": "console",
        "description": "both cores print through the MMIO console; output is deterministic",
        "source": """
                li    r10, 0x30000
                cid   r1
                bne   r1, r0, second
                li    r2, 'a'
                st    r2, 0(r10)
                sem.post 0
                halt  r0
        second: sem.wait 0
                li    r2, 'b'
                st    r2, 0(r10)
                li    r2, 10
                st    r2, 0(r10)
                halt  r0
        """,
        "max_steps": 1000,
        "stdout": "ab\n",
        "expect": {"reason": "halted"},
    },
    {
        "name": "trap-handled",
        "description": "a load from unmapped memory traps (cause 5) to the handler at tvec",
        "source": """
                li    r1, handler
                csrw  tvec, r1
                li    r2, 0x10000      # nothing is mapped here
        bad:    ld    r3, 0(r2)
                halt  r0
        handler:
                csrr  r4, cause
                csrr  r5, epc
                halt  r4
        """,
        "config": ONE_CORE,
        "max_steps": 100,
        "expect": {"exit_code": 5, "registers": {"core0": {"r": {4: 5, 5: 12}, "c": {"cause": 5}}}},
    },
    {
        "name": "load-fault",
        "description": "the same load without a handler stops the run, naming agent and pc",
        "source": """
                li    r2, 0x10000
                ld    r3, 0(r2)
                halt  r0
        """,
        "config": ONE_CORE,
        "max_steps": 100,
        "expect": {"reason": "unhandled trap", "error": {"agent": "core0", "pc": 4, "cause": 5}},
    },
    {
        "name": "barrier",
        "description": "two cores meet at the barrier twice",
        "source": """
                cid   r1
                addi  r2, r1, 1
                bar
                bar
                halt  r2
        """,
        "config": {"echo": False},
        "max_steps": 100,
        "expect": {"exit_code": 1, "registers": {"core1": {"r": {2: 2}}}},
    },
    {
        "name": "deadlock",
        "description": "both cores wait on a semaphore nobody posts",
        "source": "sem.wait 1\nhalt r0\n",
        "config": {"echo": False},
        "max_steps": 100,
        "expect": {"reason": "deadlock", "pc": {"core0": 0, "core1": 0}},
    },
    {
        "name": "endless",
        "description": "a loop that only a budget stops",
        "source": "loop: addi r1, r1, 1\n      jmp loop\n",
        "config": ONE_CORE,
        "max_steps": 1000,
        "expect": {"reason": "budget", "registers": {"core0": {"r": {1: 500}}}},
    },
]


def cases(arch: Any) -> list[dict[str, Any]] | None:
    return CASES if arch.name == "toy" else None
