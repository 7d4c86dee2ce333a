"""State shared by all hardware threads of one core (spec 1.1), and the thread-enable gate.

``Shared`` holds CR0, TVEC0..3, the debug registers, HMASK, TIME, the TLB, the PMA
table and the hardware queues.  The MMU and PMA objects are reached through
``shared.mmu`` and ``shared.pma`` so the memory path stays in one place
(:mod:`tessera_phoenix.view`).
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

    def __init__(self, name: str, shared: "Shared") -> None:
        super().__init__(name)
        self.shared = shared

    def check(self, thread: Any) -> None:
        if not (self.shared.cr0 >> thread.tid) & 1:
            raise WaitFor(self, f"CR0 bit {thread.tid} (thread enable) to be set")

    def changed(self) -> None:
        self._changed()

    def state(self) -> dict[str, Any]:
        return {"kind": self.kind, **self.shared.state()}


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
        self.time = 0
        self.timesec = 0
        self.queues: dict[int, deque[int]] = {TRACE_QUEUE: deque(maxlen=TRACE_QUEUE_ENTRIES)}
        self.mmu: Any = None
        self.pma: Any = None
        self.gate: ThreadEnable | None = None
        self.machine: Any = None

    def set_cr0(self, value: int) -> None:
        self.cr0 = value & 0xFFFF
        if self.gate is not None:
            self.gate.changed()

    def state(self) -> dict[str, Any]:
        return {
            "cr0": self.cr0, "tvec": list(self.tvec), "dbcr": self.dbcr, "dbsr": self.dbsr,
            "hmask": self.hmask, "queues": {q: list(v) for q, v in self.queues.items() if v},
        }
