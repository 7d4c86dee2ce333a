"""Conformance cases of the faults plugin (docs/conformance.md): what an injection must do.

Each case runs a small RV32 program with a ``--fault`` that must change its exit
status, and the same program with the option left out, which must not.  The suite
also runs them through its generic checks (determinism, snapshots, both engines,
budgets) with the fault armed, so a fault that fired at a different point on another
engine, or twice after a snapshot, fails there.
"""

from __future__ import annotations

from typing import Any

#: a0 = 5 + 5 = 10, then exit(a0): seven instructions at 0x10000
SUM = """
    li   a0, 5
    li   t1, 0x100
    sw   a0, 0(t1)
    lw   a1, 0(t1)
    add  a0, a0, a1
    li   a7, 93
    ecall
"""

#: a loop summing 1..20 into a0 (210), then exit(a0 & 0xff)
LOOP = """
    li   a0, 0
    li   t0, 20
loop:
    add  a0, a0, t0
    addi t0, t0, -1
    bnez t0, loop
    andi a0, a0, 0xff
    li   a7, 93
    ecall
"""


def cases(arch: Any) -> list[dict[str, Any]] | None:
    if arch.name != "rv32im":
        return None
    small = {"ram": 0x100000}
    return [
        {"name": "faults-idle", "source": SUM, "config": small, "max_steps": 100,
         "tool_options": {"fault": None}, "expect": {"exit_code": 10}},
        # a0 = 5 ^ 2 after the first instruction: 7 + 7
        {"name": "faults-flip-retired", "source": SUM, "config": small, "max_steps": 100,
         "tool_options": {"--fault": "target=a0,bit=1,at=retired:1"}, "expect": {"exit_code": 14}},
        # the stored 5 becomes 4 before the load: 5 + 4
        {"name": "faults-flip-memory", "source": SUM, "config": small, "max_steps": 100,
         "tool_options": {"--fault": "target=mem[0x100],bit=0,at=retired:3"}, "expect": {"exit_code": 9}},
        # the last round's add (of 1) is skipped: 209
        {"name": "faults-skip-pc", "source": LOOP, "config": small, "max_steps": 1000,
         "tool_options": {"--fault": "model=skip,at=pc:loop#20"}, "expect": {"exit_code": 209}},
        {"name": "faults-stuck-window", "source": LOOP, "config": small, "max_steps": 1000,
         # t0 = 20 is held even through add, addi (19 -> 18), bnez: 20 + 18 + 17 + ... + 1
         "tool_options": {"--fault": "target=t0,model=stuck0,bit=0,at=retired:2,window=3"},
         "expect": {"exit_code": 20 + sum(range(1, 19))}},
        # the load's destination (a1) is zeroed: 5 + 0
        {"name": "faults-class-dest", "source": SUM, "config": small, "max_steps": 100,
         "tool_options": {"--fault": "model=zero,at=class:load"}, "expect": {"exit_code": 5}},
    ]
