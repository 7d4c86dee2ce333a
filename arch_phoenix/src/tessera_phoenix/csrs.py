"""The control and status registers (spec 1.4): numbers → state, read and write rules.

CSR numbers are 14 bits; bits 13:12 name the lowest operating mode that may access
the register (:func:`check_access`).  Registers marked "?" in the spec exist once per
mode nibble, either as *views* of one register (STATUS) or as *copies* (CAUSE,
BADADDR): ``0x0006`` is the user-mode CAUSE, ``0x3006`` the machine-mode one.  The
HDL's numbers are accepted as aliases (STATUS 0x?044, EIP 0x3048).

Choices (docs/phoenix-decisions.md lists them all):

* read-only registers (HARTID, TICK, PMSTACK, EIP unless ``eip_writable``, the
  lower-mode copies of TIME/TIMESEC) ignore writes; the read still happens;
* reserved and unknown numbers read 0 and ignore writes (the HDL's default case);
* CSRRS/CSRRC set/clear bits in every writable register (the doc names only STATUS,
  DBCR, DBSR; applying the same rule everywhere is the simplest superset); on CR0
  they use Ra as a mask unless ``cr0_bit_ops`` selects the HDL's "bit number Ra[5:0]";
* STATUS: the machine view is the whole word and may change everything except OM
  (leaving machine mode takes RTI or REX, spec 1.6); the view at a lower level L reads
  ``L << 10 | enable bits 0..L`` and may change only those enable bits (HDL views);
* BADADDR exists per mode like CAUSE (the machine handler of a user-mode fault
  reads the user copy, 0x0007; 0x3007 is the machine copy).
"""

from __future__ import annotations

from typing import Any

from tessera.control import Trap
from tessera_phoenix import causes
from tessera_phoenix.registers import (
    ASID,
    CR0,
    EIP,
    EIP_HDL,
    HARTID,
    HMASK,
    PLSTACK,
    PMSTACK,
    PTBR,
    TICK,
)

MASK32 = 0xFFFF_FFFF
RD, RW, RC, RS = 0, 1, 2, 3
OM_BITS = 3 << 10
#: STATUS bits machine mode may write: PL, MPRV, T, SSM, IPL, DIE..UIE (not OM)
STATUS_MACHINE_WRITABLE = 0xFF00_0000 | 1 << 17 | 0x3FF
ASID_BITS = 0x3FF
CAUSE_BITS = 0xFFF


def level_of(number: int) -> int:
    return (number >> 12) & 3


def check_access(thread: Any, number: int) -> None:
    """Raise CSR (236) when the current mode may not use CSR ``number`` (before any effect)."""
    mode = (thread.status_stack[0] >> 10) & 3
    if level_of(number) > mode or (thread.shared.config.csr_machine_only and mode != 3):
        raise Trap(causes.CSR, number, name=f"CSR {number:#06x} access from mode {mode}")


def reads_clock(number: int) -> bool:
    """Does reading ``number`` need the exact machine clock (TICK, TIME, TIMESEC)?"""
    return number == TICK or number & 0xFFE == 0xFE0


# ---------------------------------------------------------------------------- reading


def read(thread: Any, number: int) -> int:
    """The value CSR ``number`` reads as for ``thread`` (access already checked)."""
    shared = thread.shared
    low, level = number & 0xFFF, level_of(number)
    if number == CR0:
        return shared.cr0
    if number == HARTID:
        return (shared.config.hartid << 4 | thread.tid) & MASK32
    if number == TICK:
        return shared.machine.clock & MASK32
    if low in (0x004, 0x044):
        return status_view(thread.status_stack[0], level)
    if low == 0x006:
        return thread.cause[level]
    if low == 0x007:
        return thread.badaddr[level]
    if low == 0xFE0:
        return shared.wall_ticks(shared.machine.clock) % shared.config.time_hz
    if low == 0xFE1:
        return (shared.wall_ticks(shared.machine.clock) // shared.config.time_hz) & MASK32
    simple = _simple(thread, number)
    if simple is not None:
        obj, attr, index = simple
        value = getattr(obj, attr)
        return value[index] if index is not None else value
    if number in (EIP, EIP_HDL):
        return thread.ip_stack[0]
    if number == PLSTACK:
        return sum((thread.status_stack[i] >> 24) << (8 * i) for i in range(4))
    if number == PMSTACK:
        return sum(pm_entry(thread.status_stack[i]) << (4 * i) for i in range(8))
    return 0  # reserved or unknown


def status_view(status: int, level: int) -> int:
    if level == 3:
        return status
    return level << 10 | status & ((2 << level) - 1)


def pm_entry(status: int) -> int:
    """PMSTACK nibble (our layout, the spec leaves it open): bits 1:0 OM, bit 2 MIE."""
    return (status >> 10) & 3 | ((status >> 3) & 1) << 2


def _simple(thread: Any, number: int) -> tuple[Any, str, int | None] | None:
    """Plain storage CSRs: (object, attribute, index or None)."""
    shared = thread.shared
    if number == PTBR:
        return thread, "ptbr", None
    if number == ASID:
        return thread, "asid", None
    if number == HMASK:
        return shared, "hmask", None
    if 0x3018 <= number <= 0x301B:
        return shared, "dbad", number - 0x3018
    if 0x301C <= number <= 0x301F:
        return shared, "dbam", number - 0x301C
    if number == 0x3020:
        return shared, "dbcr", None
    if number == 0x3021:
        return shared, "dbsr", None
    if 0x3030 <= number <= 0x3033:
        return shared, "tvec", number - 0x3030
    return None


# ---------------------------------------------------------------------------- writing


def combine(op: int, old: int, operand: int) -> int:
    """The new value of a read-modify-write CSR operation."""
    if op == RW:
        return operand & MASK32
    if op == RS:
        return (old | operand) & MASK32
    if op == RC:
        return old & ~operand & MASK32
    return old


def write(thread: Any, number: int, op: int, operand: int) -> None:
    """Apply CSRRW/CSRRS/CSRRC with ``operand`` (Ra) to CSR ``number`` (access checked)."""
    shared = thread.shared
    cfg = shared.config
    low, level = number & 0xFFF, level_of(number)
    if number == CR0:
        if cfg.cr0_bit_ops and op in (RS, RC):
            operand = 1 << (operand & 63)
        shared.set_cr0(combine(op, shared.cr0, operand))
        return
    if low in (0x004, 0x044):
        status = thread.status_stack[0]
        new = combine(op, status_view(status, level), operand)
        writable = STATUS_MACHINE_WRITABLE if level == 3 else (2 << level) - 1
        thread.status_stack[0] = (status & ~writable | new & writable) & MASK32
        return
    if low == 0x006:
        thread.cause[level] = combine(op, thread.cause[level], operand) & CAUSE_BITS
        return
    if low == 0x007:
        thread.badaddr[level] = combine(op, thread.badaddr[level], operand)
        return
    if low in (0xFE0, 0xFE1):
        if level == 3:  # TIME/TIMESEC are written from machine mode only
            clock = shared.machine.clock
            old = read(thread, number)
            key = "time" if low == 0xFE0 else "timesec"
            shared.set_wall(clock, **{key: combine(op, old, operand)})
        return
    simple = _simple(thread, number)
    if simple is not None:
        obj, attr, index = simple
        old = read(thread, number)
        new = combine(op, old, operand)
        if number == ASID:
            new &= ASID_BITS
        if index is None:
            setattr(obj, attr, new)
        else:
            getattr(obj, attr)[index] = new
        if number in (PTBR, ASID) and new != old:
            thread.space.flush()  # translation changed: drop this thread's decoded code
        return
    if number in (EIP, EIP_HDL):
        if cfg.eip_writable:
            thread.ip_stack[0] = combine(op, thread.ip_stack[0], operand)
        return
    if number == PLSTACK:
        new = combine(op, read(thread, number), operand)
        for i in range(4):
            pl = (new >> (8 * i)) & 0xFF
            thread.status_stack[i] = thread.status_stack[i] & 0x00FF_FFFF | pl << 24
        return
    # HARTID, TICK, PMSTACK, reserved and unknown numbers: writes are ignored
