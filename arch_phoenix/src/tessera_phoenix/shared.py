"""State shared by all hardware threads of one core (spec 1.1), and the thread-enable gate.

``Shared`` holds CR0, TVEC0..3, the debug registers, HMASK, the wall clock
(TIME/TIMESEC), the TLB, the PMA table, the hardware queues and the schedule of
interrupts given by the ``irq`` setting.  The MMU and PMA objects are reached through
``shared.mmu`` and ``shared.pma`` so the memory path stays in one place
(:mod:`tessera_phoenix.view`).  Two sync objects: :class:`ThreadEnable` (CR0, where
disabled threads wait) and :class:`SliceBreak` (how clock reads become exact).
"""

from __future__ import annotations

from collections import deque
from typing import Any

from tessera.control import WaitFor
from tessera.sync import SyncObject
from tessera_phoenix.registers import RESET_IP

TRACE_QUEUE = 15
TRACE_QUEUE_ENTRIES = 8192 // 4   # 8 KB of 32-bit IP history


class ThreadEnable(SyncObject):
    """CR0's enable bits as a sync object: a disabled thread waits here until enabled."""

    kind = "cr0"

    def __init__(self, name: str, shared: Shared) -> None:
        super().__init__(name)
        self.shared = shared

    def check(self, thread: Any) -> None:
        if not (self.shared.cr0 >> thread.tid) & 1:
            raise WaitFor(self, f"CR0 bit {thread.tid} (thread enable) to be set")

    def changed(self) -> None:
        self.wake_waiters()

    def state(self) -> dict[str, Any]:
        return {"kind": self.kind, **self.shared.state()}


class SliceBreak(SyncObject):
    """A wait that ends at once: it makes the engine commit the slice so far, then retry.

    Raising ``WaitFor(slice_break)`` before any side effect ends the slice with
    ``cycles``/``instret`` committed *up to* the instruction, and the instruction runs
    again as the first of the next slice.  Instructions that read the machine clock
    (TICK, TIME) use it, because inside a slice the engine keeps the running cycle
    count in a local and ``machine.clock`` would lag by up to a solo quantum.
    """

    kind = "slice-break"

    def park(self, agent: Any) -> None:
        agent.wake()  # never actually waits


class Shared:
    """Core-wide state.  ``mmu`` and ``pma`` are installed by the board."""

    def __init__(self, config: Any) -> None:
        self.config = config
        self.cr0 = config.reset_cr0 & 0xFFFF
        self.tvec = [RESET_IP] * 4
        self.dbad = [0] * 4
        self.dbam = [0] * 4
        self.dbcr = 0
        self.dbsr = 0
        self.hmask = 0
        self.time = 0                     # TIME and TIMESEC as last written ...
        self.timesec = 0
        self.time_clock0 = 0              # ... at this machine clock (they advance with it)
        #: scheduled interrupts (step, thread id, level), soonest first (config ``irq``)
        self.irq_schedule: list[tuple[int, int, int]] = []
        self.slice_break = SliceBreak("clock-read")
        self.queues: dict[int, deque[int]] = {TRACE_QUEUE: deque(maxlen=TRACE_QUEUE_ENTRIES)}
        self.mmu: Any = None
        self.pma: Any = None
        self.gate: ThreadEnable | None = None
        self.machine: Any = None

    def set_cr0(self, value: int) -> None:
        """Write CR0 and wake the threads waiting for their enable bit.

        A disabled thread is a *daemon* agent: it does not keep a run alive, so a run
        ends ("halted") when every enabled thread has halted, and a thread waiting to
        be enabled is not reported as a deadlock.
        """
        self.cr0 = value & 0xFFFF
        if self.machine is not None:
            for agent in self.machine.agents:
                tid = getattr(agent, "tid", None)
                if tid is not None:
                    agent.daemon = not (self.cr0 >> tid) & 1
        if self.gate is not None:
            self.gate.changed()

    # ------------------------------------------------------------------ wall clock

    def wall_ticks(self, clock: int) -> int:
        """TIMESEC:TIME as one count of time-base ticks (one tick per machine cycle)."""
        hz = self.config.time_hz
        return self.timesec * hz + self.time + max(0, clock - self.time_clock0)

    def set_wall(self, clock: int, *, time: int | None = None, timesec: int | None = None) -> None:
        """Write TIME (the fraction, wrapped to ``time_hz``) or TIMESEC (seconds)."""
        hz = self.config.time_hz
        now = self.wall_ticks(clock)
        self.timesec = (now // hz if timesec is None else timesec) & 0xFFFF_FFFF
        self.time = now % hz if time is None else time % hz
        self.time_clock0 = clock

    def state(self) -> dict[str, Any]:
        return {
            "cr0": self.cr0, "tvec": list(self.tvec), "dbcr": self.dbcr, "dbsr": self.dbsr,
            "hmask": self.hmask, "dbad": list(self.dbad), "dbam": list(self.dbam),
            "time": [self.timesec, self.time, self.time_clock0],
            "irq_schedule": [list(e) for e in self.irq_schedule],
            "queues": {q: list(v) for q, v in self.queues.items() if v},
            "mmu": self.mmu.state() if self.mmu is not None else None,
            "pma": self.pma.state() if self.pma is not None else None,
        }
