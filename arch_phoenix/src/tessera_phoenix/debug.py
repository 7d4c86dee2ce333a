"""Debug features checked at instruction boundaries: single step, breakpoints, IP trace.

* Single step (STATUS.SSM, bit 8): after each instruction executed with SSM set the
  thread takes exception SSM (32) with the *next* instruction as EIP (spec 1.7: it is
  reported after the instruction completes).  Exception entry clears SSM, so the
  handler itself is not stepped; RTI back to SSM code steps the next instruction.
* Address matches (DBAD0-3, DBAM0-3, DBCR, DBSR; spec 1.4): DBCR bits 3:0 enable
  DBADn, bits 8+4n+1:8+4n give its type (00 instruction fetch, 01 store, 11 load or
  store, 10 reserved), bits 31:28 the thread being debugged.  A DBAM bit set means
  "ignore this address bit" (doc; the HDL compares exactly, i.e. DBAM = 0).  A match
  sets DBSR bit n and raises DBG (33) before the instruction (fetch) or the access
  (data) happens, with BADADDR = the matching address.  A fetch breakpoint fires again
  after RTI to the same address unless the handler disables or moves it.
* Trace (STATUS.T, bit 9): the address of every instruction the thread executes is
  pushed to queue 15 (HDL: at fetch, while the thread's trace enable is set); the
  queue keeps the newest entries.  DBCR's trace-enable bits 27:24 are stored only.

These need work before or after *every* instruction, which the engine's fast loop
does not do.  So while any of them is active for a thread (:func:`needs_stepping`) the
thread runs one instruction per slice through :func:`step`; with all of them off it
runs at full speed and pays nothing.
"""

from __future__ import annotations

from typing import Any

from tessera.control import Trap
from tessera.engine import RUNNABLE, CpuAgent
from tessera_phoenix import causes
from tessera_phoenix.shared import TRACE_QUEUE

MASK32 = 0xFFFF_FFFF
SSM_BIT = 1 << 8
TRACE_BIT = 1 << 9
STEP_BITS = SSM_BIT | TRACE_BIT
FETCH, STORE, RESERVED, LOAD_OR_STORE = 0, 1, 2, 3


def match_type(dbcr: int, n: int) -> int:
    return (dbcr >> (8 + 4 * n)) & 3


def _matches(shared: Any, tid: int, address: int, kinds: tuple[int, ...]) -> int | None:
    """The first enabled DBADn of one of ``kinds`` that ``address`` matches, for thread ``tid``."""
    dbcr = shared.dbcr
    if not dbcr & 0xF or (dbcr >> 28) != tid:
        return None
    for n in range(4):
        if dbcr >> n & 1 and match_type(dbcr, n) in kinds:
            if not (address ^ shared.dbad[n]) & ~shared.dbam[n] & MASK32:
                return n
    return None


def fetch_breakpoints_on(shared: Any, tid: int) -> bool:
    dbcr = shared.dbcr
    return bool(dbcr & 0xF) and (dbcr >> 28) == tid and any(
        dbcr >> n & 1 and match_type(dbcr, n) == FETCH for n in range(4))


def needs_stepping(thread: Any) -> bool:
    """Is any per-instruction debug feature active for ``thread``?"""
    return bool(thread.status_stack[0] & STEP_BITS) or fetch_breakpoints_on(
        thread.shared, thread.tid)


def check_data(thread: Any, va: int, write: bool) -> None:
    """Raise DBG if a data access of ``thread`` at ``va`` matches an enabled DBADn.

    For the memory path: call before the access (it sets DBSR, then raises).
    """
    shared = thread.shared
    n = _matches(shared, thread.tid, va & MASK32, (STORE, LOAD_OR_STORE) if write else (LOAD_OR_STORE,))
    if n is not None:
        shared.dbsr |= 1 << n
        raise Trap(causes.DBG, va & MASK32, name=f"debug address match DBAD{n}")


def take(thread: Any, trap: Trap) -> int:
    """Take ``trap`` at an instruction boundary; it counts as one step, like an engine trap."""
    thread.deliver_trap(trap)
    return 1


def step(thread: Any, cycle_limit: float) -> int:
    """Run one instruction of ``thread`` with the debug checks around it; steps used."""
    shared = thread.shared
    pc = thread.pc
    n = _matches(shared, thread.tid, pc, (FETCH,))
    if n is not None:
        shared.dbsr |= 1 << n
        return take(thread, Trap(causes.DBG, pc, name=f"debug address match DBAD{n}"))
    status = thread.status_stack[0]
    retired, trapped = thread.instret, thread.traps
    used = CpuAgent.run_slice(thread, 1, cycle_limit)
    executed = thread.instret > retired
    if status & TRACE_BIT and (executed or thread.traps > trapped):
        shared.queues[TRACE_QUEUE].append(pc)
    if status & SSM_BIT and executed and thread.status == RUNNABLE:
        thread.ssm_pending = True
    return used
