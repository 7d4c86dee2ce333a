"""External interrupts (spec 1.7): raising them, scheduling them, recognising them.

An interrupt is *pending* on one thread (the doc routes each external interrupt to a
thread chosen by an external bit vector; here the caller names the thread).  It is
*recognised* only at an instruction boundary of that thread — the start of one of its
scheduling slices — and only when its level is above STATUS.IPL, STATUS.MIE is set and
the thread's global-enable latch is set (the first write to r62, HDL).  Otherwise it
stays pending.  Recognition is an ordinary exception entry with the interrupted
instruction's address as EIP, the level as the new IPL and the SP alias on r63.

The cause recorded in CAUSE is ``0x800 | level << 8 | cause`` (cause 238 = IRQ by
default): bits 7:0 hold the doc's code, bits 10:8 the level and bit 11 "external",
as the HDL encodes it, so ``CAUSE & 0xFF`` is always the plain code.

Instructions that can make a pending interrupt recognisable (RTI, REX, CSR writes)
end their slice, so recognition is never late by more than the current instruction.

Scheduled interrupts (config ``irq = "t0:5@1000,t1:3@2000"``) become pending when
``machine.total_steps`` reaches the step; every thread's slice is cut so that the
step count at which that happens is exact and the same on every run.
"""

from __future__ import annotations

from typing import Any

from tessera.control import Trap
from tessera.errors import ConfigError
from tessera_phoenix import causes

EXTERNAL = 0x800
MIE = 1 << 3


def raise_interrupt(machine: Any, thread: Any, level: int, cause: int = causes.IRQ) -> None:
    """Make an interrupt of ``level`` (1..7) pending on ``thread`` (an agent or its name).

    This is the Python API for test benches and devices; it takes effect at the
    thread's next instruction boundary.
    """
    if isinstance(thread, str):
        thread = machine.agent(thread)
    if not 1 <= level <= 7:
        raise ConfigError(f"interrupt level must be 1..7, got {level}")
    if not 0 <= cause <= 0xFF:
        raise ConfigError(f"interrupt cause must be 0..255, got {cause}")
    if machine is not None:
        machine.disturb(thread)  # a thread running ahead of its turn must see it at its next boundary
    thread.pending_irq.append((level, cause))


def recognisable(thread: Any, level: int) -> bool:
    status = thread.status_stack[0]
    return thread.gie and bool(status & MIE) and level > (status >> 5) & 7


def may_be_interrupted(thread: Any) -> bool:
    """Could an interrupt still reach ``thread`` while it spins in place?

    True when a pending interrupt is recognisable now or a scheduled one for this
    thread is still to come.  For ``halt_on_self_loop``: ``wait: bra wait`` is also how
    a program waits for an interrupt, so the self-loop should halt only when this is
    false (nothing a spinning thread does can change its own STATUS or latch).
    """
    if any(recognisable(thread, level) for level, _cause in thread.pending_irq):
        return True
    return any(tid == thread.tid for _step, tid, _level in thread.shared.irq_schedule)


def deliver(thread: Any) -> bool:
    """Take the highest recognisable pending interrupt (oldest first among equals).

    Returns whether one was taken (and counted in ``thread.traps``).  Called at an
    instruction boundary only; the exception entry goes through the engine's trap
    path (:meth:`~tessera.engine.CpuAgent.deliver_trap`), so the ``tessera_trap``
    hook and ``stop_on_trap`` see interrupts like any other exception.
    """
    best = None
    for i, (level, _cause) in enumerate(thread.pending_irq):
        if recognisable(thread, level) and (best is None or level > thread.pending_irq[best][0]):
            best = i
    if best is None:
        return False
    level, cause = thread.pending_irq[best]
    code = EXTERNAL | level << 8 | cause
    thread.deliver_trap(Trap(code, 0, name=f"interrupt level {level}", irq_level=level))
    del thread.pending_irq[best]  # only once taken: a stop_on_trap stop leaves it pending
    return True


# ---------------------------------------------------------------------------- schedule


def parse_schedule(text: str, threads: int) -> list[tuple[int, int, int]]:
    """``"t0:5@1000,t1:3@2000"`` → ``[(1000, 0, 5), (2000, 1, 3)]`` sorted by step.

    Entries with the same step keep their written order.
    """
    out = []
    for item in filter(None, (p.strip() for p in text.split(","))):
        try:
            who, rest = item.split(":", 1)
            level_text, step_text = rest.split("@", 1)
            tid = int(who.strip().lower().removeprefix("t"), 0)
            level, step = int(level_text, 0), int(step_text.replace("_", ""), 0)
        except ValueError:
            raise ConfigError(f"irq entry {item!r} is not THREAD:LEVEL@STEP (e.g. t0:5@1000)") from None
        if not 0 <= tid < threads:
            raise ConfigError(f"irq entry {item!r}: no thread t{tid} (threads t0..t{threads - 1})")
        if not 1 <= level <= 7:
            raise ConfigError(f"irq entry {item!r}: level must be 1..7")
        if step < 0:
            raise ConfigError(f"irq entry {item!r}: step must not be negative")
        out.append((step, tid, level))
    return sorted(out, key=lambda e: e[0])


def poll_schedule(thread: Any, limit: int) -> int:
    """Make due scheduled interrupts pending; return ``limit`` cut to the next one.

    Called at the start of every thread's slice, so the slice that would run past a
    scheduled step ends exactly at it and the next slice (of whichever thread) makes
    the interrupt pending.
    """
    shared = thread.shared
    machine = thread.machine
    sched = shared.irq_schedule
    now = machine.total_steps
    while sched and sched[0][0] <= now:
        _step, tid, level = sched.pop(0)
        machine.disturb()
        machine.agent(f"t{tid}").pending_irq.append((level, causes.IRQ))
    if sched:
        limit = min(limit, sched[0][0] - now)
    return limit
