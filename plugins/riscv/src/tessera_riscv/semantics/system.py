"""The base ISA's system instructions: fences, environment call and breakpoint, ``mret``, ``wfi``.

A single hart with no caches sees its own stores and fetches in order, so the fences
(and ``fence.i``, Zifencei) do nothing; ``wfi`` is a no-op too (interrupts are taken
at slice boundaries).  ``ecall`` is a Linux-numbered system call unless the
``syscalls`` setting is off.  None of these depends on XLEN.
"""

from __future__ import annotations

from typing import Any

from tessera.control import Yield
from tessera_riscv import traps
from tessera_riscv.formats import BOTH, MISC_MEM, Row, bits
from tessera_riscv.semantics import REGISTRY
from tessera_riscv.syscalls import system_call

op = REGISTRY.op
REF = REGISTRY.ref

_Y = frozenset({"system"})

ROWS = (
    Row("fence", bits(MISC_MEM, 0), "{pred}, {succ}", "system", BOTH, _Y, REF("nop")),
    Row("fence.tso", bits(0, word=0x8330_000F), "", "system", BOTH, _Y, REF("nop")),
    Row("fence.i", bits(MISC_MEM, 1), "", "system", BOTH, _Y, REF("nop")),
    Row("ecall", bits(0, word=0x0000_0073), "", "system", BOTH, frozenset({"system", "trap", "halt"}),
        REF("ecall")),
    Row("ebreak", bits(0, word=0x0010_0073), "", "system", BOTH, frozenset({"system", "trap"}),
        REF("ebreak")),
    Row("mret", bits(0, word=0x3020_0073), "", "jump", BOTH, frozenset({"system", "jump", "trap"}),
        REF("mret")),
    Row("wfi", bits(0, word=0x1050_0073), "", "system", BOTH, frozenset({"system", "wait"}), REF("nop")),
)


@op("ecall")
def ecall(h: Any, ins: Any) -> None:
    """A system call (``syscalls`` on, the default) or the M-mode environment-call trap."""
    if h.syscalls:
        system_call(h)
        return None
    raise traps.trap(traps.ECALL_M, 0)


@op("ebreak")
def ebreak(h: Any, ins: Any) -> None:
    raise traps.trap(traps.BREAKPOINT, ins.address)


@op("mret")
def mret(h: Any, ins: Any) -> int:
    """Return from the trap handler: ``MIE = MPIE``, ``MPIE = 1``, continue at ``mepc``."""
    target = h.leave_trap()
    if h.irq_ready:  # the restored MIE lets a pending interrupt in: take it right away
        raise Yield(target)
    return target
