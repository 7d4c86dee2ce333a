"""Machine-mode traps: cause codes, the illegal-instruction form, trap entry and memory faults.

Entry (privileged spec 3.1.6–3.1.20, machine mode only): ``mepc`` = the trapping
instruction's address, ``mcause`` = the cause (bit XLEN-1 set for interrupts),
``mtval`` = the trap value (faulting address, instruction word, or 0),
``mstatus.MPIE`` = ``MIE``, ``MIE`` = 0, ``MPP`` = M; then the PC goes to
``mtvec.BASE`` — or, for an interrupt in vectored mode, ``BASE + 4 * cause``.

A trap can only be taken once the program has installed a handler: while ``mtvec``
is 0 there is none, so the run stops — with :class:`~tessera.errors.UnhandledTrap`
naming the cause, PC and instruction word, or, for an access to memory that does
not exist, with the original :class:`~tessera.errors.MemoryFault` line.
"""

from __future__ import annotations

from typing import Any

from tessera.control import Trap
from tessera.errors import MemoryFault
from tessera_riscv import csrs

# exception causes
INSTRUCTION_MISALIGNED = 0
INSTRUCTION_ACCESS_FAULT = 1
ILLEGAL_INSTRUCTION = 2
BREAKPOINT = 3
LOAD_MISALIGNED = 4
LOAD_ACCESS_FAULT = 5
STORE_MISALIGNED = 6
STORE_ACCESS_FAULT = 7
ECALL_M = 11

CAUSE_NAMES = {
    INSTRUCTION_MISALIGNED: "instruction address misaligned",
    INSTRUCTION_ACCESS_FAULT: "instruction access fault",
    ILLEGAL_INSTRUCTION: "illegal instruction",
    BREAKPOINT: "breakpoint",
    LOAD_MISALIGNED: "load address misaligned",
    LOAD_ACCESS_FAULT: "load access fault",
    STORE_MISALIGNED: "store/AMO address misaligned",
    STORE_ACCESS_FAULT: "store/AMO access fault",
    ECALL_M: "environment call from M-mode",
}
INTERRUPT_NAMES = {csrs.MSI: "machine software interrupt", csrs.MTI: "machine timer interrupt",
                   csrs.MEI: "machine external interrupt"}


def trap(cause: int, tval: int = 0, **info: Any) -> Trap:
    """A synchronous exception with the spec's name for ``cause``."""
    return Trap(cause, tval, name=CAUSE_NAMES.get(cause, f"exception {cause}"), **info)


def illegal(word: int, address: int) -> Trap:
    """An undecodable word: illegal instruction, ``mtval`` = the word."""
    return Trap(ILLEGAL_INSTRUCTION, word, name="illegal instruction", word=word)


def memory_trap(fault: MemoryFault) -> Trap:
    """An access to memory that is not there (or refuses it) is an access fault.

    The fault rides along in the trap: if the hart has no handler, :func:`take_trap`
    re-raises it, so the run stops with the original one-line memory fault.
    """
    cause = {"fetch": INSTRUCTION_ACCESS_FAULT, "read": LOAD_ACCESS_FAULT}.get(fault.access,
                                                                               STORE_ACCESS_FAULT)
    return trap(cause, fault.address or 0, fault=fault)


def take_trap(hart: Any, t: Trap) -> bool:
    """The engine's hook: enter the handler at ``mtvec``, or decline when there is none."""
    if not hart.mtvec:
        fault = t.info.get("fault")
        if fault is not None:
            raise fault.with_context(agent=hart.name, pc=hart.pc)
        return False
    hart.enter_trap(t.cause, t.tval, interrupt=bool(t.info.get("interrupt")))
    return True
