"""The instruction FIFO in front of each Tensix thread, fed by the baby RISC-V cores.

BlackholeA0 .../BabyRISCV/PushTensixInstruction.md: a core pushes a Tensix
instruction with a store to ``INSTRN_BUF_BASE`` (or a ``.ttinsn`` word, which is
exactly such a store); it lands in the first FIFO of the thread's front end, and a
push into a full FIFO stalls the core until there is room.  That FIFO holds 32
instructions but takes a new one only while it holds at most 28 (the four above are
for four fused ``.ttinsn`` words in one cycle, which Tessera does not fuse): so a
single push waits while 29 or more are queued — :data:`ACCEPTS_AT_MOST`.

Each entry keeps the pushing core's pc, so a trace, a deadlock report and a rule
violation name the RISC-V instruction that pushed the Tensix one.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from tessera.sync import SyncObject

#: a push is accepted while the FIFO holds at most this many instructions
ACCEPTS_AT_MOST = 28


class InstructionFifo(SyncObject):
    """Pushed words of one Tensix thread: ``(word, pc of the push, pushing core)``."""

    kind = "tensix-instruction-fifo"

    def __init__(self, name: str, thread: Any) -> None:
        super().__init__(name)
        self.thread = thread
        self.items: deque[tuple[int, int, str]] = deque()

    def push(self, core: Any, word: int, pc: int) -> None:
        """Queue ``word``, pushed by ``core`` at ``pc``; a full FIFO parks the core (call
        before any other side effect: the store runs again when there is room)."""
        if len(self.items) > ACCEPTS_AT_MOST:
            raise self.wait_for(core, f"{self.name} to have room ({len(self.items)} instructions queued "
                                      f"for Tensix {self.thread.name.upper()})")
        self.items.append((word & 0xFFFF_FFFF, pc, core.name))
        self.emit_event("push", core, len(self.items))
        self.thread.fed()
        self.wake_waiters()

    def pop(self) -> tuple[int, int, str]:
        """The oldest entry (the thread checked there is one); wakes cores waiting for room."""
        item = self.items.popleft()
        self.emit_event("pop", self.thread, len(self.items))
        self.wake_waiters()
        return item

    def __len__(self) -> int:
        return len(self.items)

    def state(self) -> dict[str, Any]:
        return {"kind": self.kind, "items": [f"{w:#010x} from {core} at {pc:#x}" for w, pc, core in self.items]}
