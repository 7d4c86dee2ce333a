"""Mailboxes: small FIFOs of 32-bit values between the baby RISC-V cores B, T0, T1, T2.

BlackholeA0 / WormholeB0 .../TensixTile/BabyRISCV/Mailboxes.md (the two chips agree).
There is one mailbox from each of the four cores to each of them (sixteen; RISCV NC has
none).  They sit at ``TENSIX_MAILBOX0_BASE`` + 0x1000 * k, k = B, T0, T1, T2, and the
mailbox an address means depends on the core and on the access: a core's *store* to
window k pushes into the mailbox from itself to k, its *load* reads the mailbox from k
to itself (window k of core k is the mailbox from k to k both ways) — the page's table,
in one rule.

* A store pushes the stored value (a narrower store pushes its bytes in their lanes of
  the 32-bit word).  It waits while the mailbox holds four values, or while the four
  mailboxes the core writes hold four values between them (the page's functional model).
* A load with address bit 2 set asks whether the mailbox holds a value (1) or not (0); any
  other load pops the oldest value, waiting while the mailbox is empty.
* Soft reset (SoftReset.md, "Upon entering soft reset"): the mailboxes a core writes lose
  their contents when it enters reset (:meth:`Mailboxes.held`, called by the tile's
  soft-reset control).

Choices where the page is silent or the model is simpler:

* The page's waits happen "within the memory subsystem" and need not stop the core at
  once (a blocked write sits in a shared buffer while the core runs on).  Here the core's
  load or store itself waits: the core parks on the writer's :class:`Outbox` (it does not
  spin) and runs the access again when a value arrives or leaves.
* What a waiting core waits for names the mailbox (``mailbox B to T0 to receive a value
  (empty)``), which is what a deadlock report shows.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from tessera.errors import MemoryFault
from tessera.sync import SyncObject
from tessera_tensix.tile import memmap

#: the cores with mailboxes, in the order of their windows (TENSIX_MAILBOX0..3_BASE)
CORES = ("brisc", "trisc0", "trisc1", "trisc2")
#: values one mailbox holds
DEPTH = 4
#: values the four mailboxes one core writes hold together
WRITER_LIMIT = 4
#: each mailbox window is 4 KiB
WINDOW = 0x1000
MASK32 = 0xFFFF_FFFF


def label(writer: int, reader: int) -> str:
    """``"B to T0"``: the vendor's name of the mailbox from core ``writer`` to ``reader``."""
    return f"{memmap.SHORT[CORES[writer]]} to {memmap.SHORT[CORES[reader]]}"


class Outbox(SyncObject):
    """The four mailboxes one core writes (to B, T0, T1, T2).

    Its writer parks here when they are full, and a reader of any of them when its
    mailbox is empty: every push or pop wakes them all to check again."""

    kind = "tensix-mailboxes"

    def __init__(self, writer: int) -> None:
        super().__init__(f"mailboxes from {memmap.SHORT[CORES[writer]]}")
        self.writer = writer
        self.boxes: list[deque[int]] = [deque() for _ in CORES]

    def held(self) -> int:
        return sum(len(box) for box in self.boxes)

    def push(self, agent: Any, reader: int, value: int) -> None:
        """The writer stores ``value`` to the mailbox for ``reader`` (may park it first)."""
        box = self.boxes[reader]
        if len(box) >= DEPTH:
            raise self.wait_for(agent, f"mailbox {label(self.writer, reader)} to have room "
                                       f"({DEPTH} values queued)")
        if self.held() >= WRITER_LIMIT:
            queued = ", ".join(f"{label(self.writer, r)}: {len(b)}" for r, b in enumerate(self.boxes) if b)
            raise self.wait_for(agent, f"room in the mailboxes {memmap.SHORT[CORES[self.writer]]} writes "
                                       f"(they hold {WRITER_LIMIT} values together: {queued})")
        box.append(value & MASK32)
        self.emit_event("push", agent, f"{label(self.writer, reader)}: {len(box)}")
        self.wake_waiters()

    def pop(self, agent: Any, reader: int) -> int:
        """``reader`` takes the oldest value of its mailbox (parks while it is empty)."""
        box = self.boxes[reader]
        if not box:
            raise self.wait_for(agent, f"mailbox {label(self.writer, reader)} to receive a value (empty)")
        value = box.popleft()
        self.emit_event("pop", agent, f"{label(self.writer, reader)}: {len(box)}")
        self.wake_waiters()
        return value

    def discard(self) -> None:
        """Soft reset of the writer: every value it wrote is gone."""
        if self.held():
            for box in self.boxes:
                box.clear()
            self.emit_event("discard", None)
            self.wake_waiters()

    def state(self) -> dict[str, Any]:
        return {"kind": self.kind,
                "mailboxes": {label(self.writer, r): [f"{v:#x}" for v in box]
                              for r, box in enumerate(self.boxes) if box}}


class Mailboxes:
    """The tile's sixteen mailboxes, as four :class:`Outbox` objects by writer."""

    def __init__(self) -> None:
        self.outboxes = [Outbox(i) for i in range(len(CORES))]

    def held(self, core_name: str) -> None:
        """``core_name`` enters soft reset: the mailboxes it writes are emptied."""
        if core_name in CORES:
            self.outboxes[CORES.index(core_name)].discard()


class MailboxWindow:
    """``TENSIX_MAILBOX0_BASE`` .. ``TENSIX_MAILBOX3_BASE + 0xFFF`` as one core sees it."""

    def __init__(self, hart: Any, mailboxes: Mailboxes) -> None:
        self.hart = hart
        self.me = CORES.index(hart.name)
        self.outboxes = mailboxes.outboxes

    def write(self, offset: int, size: int, value: int) -> None:
        lane = 8 * (offset & 3)
        self.outboxes[self.me].push(self.hart, offset // WINDOW, value << lane)

    def pure_read(self, offset: int, size: int) -> bool:
        """Is a load at ``offset`` free of side effects (a polling core may park on it)? The status
        loads (address bit 2); every other load pops."""
        return bool(offset & 4)

    def read(self, offset: int, size: int) -> int:
        outbox = self.outboxes[offset // WINDOW]
        if offset & 4:
            return int(bool(outbox.boxes[self.me]))
        if (offset & 3) + size > 4:
            raise MemoryFault(f"{self.hart.name}: a {size}-byte load from a mailbox must stay in one word",
                              access="read", size=size, address=memmap.TENSIX_MAILBOX0_BASE + offset)
        value = outbox.pop(self.hart, self.me)
        return value >> 8 * (offset & 3) & ((1 << 8 * size) - 1)


def install(machine: Any, tile: Any) -> Mailboxes:
    """Map every core's mailbox window and let soft reset empty a core's mailboxes."""
    boxes = Mailboxes()
    for outbox in boxes.outboxes:
        machine.add_sync(outbox)
    for name, hart in tile.harts.items():
        if name in CORES:
            tile.own[name].add_mmio("mailboxes", memmap.TENSIX_MAILBOX0_BASE, len(CORES) * WINDOW,
                                    MailboxWindow(hart, boxes))
    tile.mailboxes = boxes
    tile.on_hold.append(boxes)
    return boxes
