"""Exception entry, the illegal-instruction trap and memory-fault mapping (spec 1.7).

Entry (canonical): push the status stack (new entry: machine mode, PL 0xFF, interrupt
enables and trace off, IPL kept for synchronous exceptions / set to the level for
interrupts), push the IP stack with the EIP (the faulting instruction, or the next
one for BRK), record CAUSE and BADADDR for the mode the exception came from, switch
the SP alias to r62 (r63 for external interrupts), increment the nesting depth and
jump to TVEC3 + 0x20 x previous mode (``vector_offset``; else TVEC3).

At nesting depth 7 the stacks are full: a double fault.  The machine cannot take
it, so the run stops with :class:`~tessera.errors.UnhandledTrap` (one line, exit
status 68) naming the cause, agent and pc; with ``double_fault_halts`` false
nothing is stacked and the instruction is retried, as in the HDL.

Return (RTI, :func:`leave`) pops both stacks.  :func:`require_machine` is the one
privilege check for the instructions the spec's proposal limits to machine mode.
"""

from __future__ import annotations

from typing import Any

from tessera.control import Trap
from tessera.errors import UnhandledTrap
from tessera_phoenix import causes
from tessera_phoenix.registers import ISP, MSP, RESET_IP, RESET_STATUS, SP_ALIAS

MASK32 = 0xFFFF_FFFF
MEMORY_CAUSES = frozenset({causes.TLB, causes.DRF, causes.DWF, causes.DPF, causes.CPF, causes.PMA,
                           causes.DBE, causes.IBE, causes.LVL, causes.KEY, causes.DBG, causes.IADR,
                           causes.EXF})


def illegal(word: int, address: int) -> Trap:
    """Undecodable words raise UNIMP (cause 37); ``undefined`` lets lenient mode skip them."""
    return Trap(causes.UNIMP, word, name="unimplemented instruction", word=word, undefined=True)


def undefined(ins: Any) -> Trap:
    """A reserved encoding inside a decoded form: the same trap as an undecodable word.

    Semantic functions raise it before any side effect; UNIMP, or skipped like a NOP
    in ``lenient`` mode (:func:`take_trap`), exactly like an undefined opcode.
    """
    return illegal(ins.word, ins.address)


def require_machine(thread: Any, what: str) -> None:
    """Raise PRIV (53) unless ``thread`` runs in machine mode (call before any side effect)."""
    if (thread.status_stack[0] >> 10) & 3 != 3:
        raise Trap(causes.PRIV, 0, name=f"{what} outside machine mode")


def memory_trap(fault: Any) -> Trap:
    """A physical access the machine refuses is a bus error (DBE, or IBE for fetches).

    A fetch fault raised by the thread view (``view.FetchFault``) carries the exact
    trap (TLB miss, page fault, PMA ...): it is a memory fault only so that the
    decode-cache fill's postfix look-ahead can swallow it.
    """
    carried = getattr(fault, "trap", None)
    if carried is not None:
        return carried
    cause = causes.IBE if fault.access == "fetch" else causes.DBE
    return Trap(cause, fault.address or 0, name="bus error")


def enter(thread: Any, cause: int, *, eip: int, badaddr: int | None = None,
          irq_level: int | None = None) -> None:
    """Take an exception on ``thread`` (state changes only; the caller sets nothing else)."""
    cfg = thread.shared.config
    if thread.depth >= 7:
        if cfg.double_fault_halts:  # the machine cannot take it: the run stops with an error
            raise UnhandledTrap(f"double fault: {causes.name(cause & 0xFF)} (cause {cause & 0xFF}) "
                                "at exception nesting depth 7", cause=cause, agent=thread.name,
                                pc=thread.pc)
        return  # HDL: nothing is stacked
    old = thread.status_stack[0]
    old_mode = (old >> 10) & 3
    ipl = (old >> 5) & 7 if irq_level is None else irq_level & 7
    new = (0xFF << 24) | (3 << 10) | (ipl << 5)
    thread.status_stack = [new] + thread.status_stack[:7]
    thread.ip_stack = [eip & MASK32] + thread.ip_stack[:7]
    thread.cause[old_mode] = cause
    if badaddr is not None:
        thread.badaddr[old_mode] = badaddr & MASK32
    thread.sp_sel = ISP if irq_level is not None else MSP
    thread.depth += 1
    base = thread.shared.tvec[3]
    thread.pc = (base + (0x20 * old_mode if cfg.vector_offset else 0)) & MASK32
    if thread.shared.mmu is not None:
        thread.space.flush()  # machine mode: translation changes


def leave(thread: Any) -> int:
    """Return from an exception (RTI, spec 1.7): pop both stacks; the caller checked depth.

    Entry 7 of each stack is refilled with the reset values, the SP alias follows the
    restored operating mode, and the returned address (the old EIP) is where the thread
    continues.
    """
    eip = thread.ip_stack[0]
    thread.status_stack = thread.status_stack[1:] + [RESET_STATUS]
    thread.ip_stack = thread.ip_stack[1:] + [RESET_IP]
    thread.depth -= 1
    thread.sp_sel = SP_ALIAS[(thread.status_stack[0] >> 10) & 3]
    if thread.shared.mmu is not None:
        thread.space.flush()  # the mode (and so the translation) may have changed
    return eip


def take_trap(thread: Any, trap: Trap) -> bool:
    """The engine's hook: every trap becomes an rfPhoenix exception (always taken).

    In ``lenient`` mode an undefined word (the decoder's illegal form) is skipped like
    a NOP, as the HDL does, instead of raising UNIMP.
    """
    if trap.info.get("undefined") and thread.shared.config.lenient:
        thread.pc = (thread.pc + 6) & MASK32
        return True
    if trap.cause == causes.BRK:
        eip = trap.info.get("eip", (thread.pc + 6) & MASK32)
    else:
        eip = thread.pc
    badaddr = trap.tval if trap.cause in MEMORY_CAUSES else None
    enter(thread, trap.cause, eip=eip, badaddr=badaddr, irq_level=trap.info.get("irq_level"))
    return True
