"""The ``PC_BUF_BASE`` windows: PCBufs, Manual TTSync and the Tensix semaphores.

Three things share these addresses (BlackholeA0 .../BabyRISCV/README.md, "Memory map"):

* **PCBufs** (PCBufs.md, both chips): FIFOs of up to 16 values from RISCV B to each
  TRISC — B's end of ``PCBuf[i]`` is the whole 64 KiB at ``PC_BUF_BASE`` (i = 0),
  ``PC1_BUF_BASE``, ``PC2_BUF_BASE``; T<i>'s end is ``PC_BUF_BASE``..+3.  B's store
  pushes (waiting while 16 are queued); T<i>'s load pops (waiting while empty); T<i>'s
  store is discarded.  B's *load* is the interesting one: it returns 0 once the FIFO is
  empty, RISCV T<i> is blocked reading ``PC_BUF_BASE`` and Tensix thread T<i> is idle —
  "T<i> is done with everything I gave it".  The override bits of
  ``RISCV_DEBUG_REG_TRISC_PC_BUF_OVERRIDE`` (tile control +0x90, the address of the
  vendor's ``tensix.h``; 10 bits per PCBuf: ``OverrideEn``, ``OverrideBusy``, 8-bit
  ``OverrideValue``) make T<i>'s load of an empty FIFO return ``OverrideValue`` and,
  with ``OverrideBusy``, make B's load and the TTSync checks return at once.
* **Manual TTSync** (BlackholeA0 ManualTTSync.md, WormholeB0 TTSync.md), T<i> only:
  a load from ``PC_BUF_BASE + 4`` (``CoprocessorDoneCheck``, tt-llk's
  ``tensix_sync()``) returns once Tensix thread T<i> has nothing queued or in flight
  (:attr:`FedThread.idle <tessera_tensix.tile.fedthread.FedThread.idle>`); a load
  from ``+ 8`` (``MOPExpanderDoneCheck``, ``mop_sync()``) once no MOP waits in front
  of T<i>'s MOP expander.  Stores there are discarded; the loads return 0 (the pages
  say "undefined").
* **Tensix semaphores** (SyncUnit.md, "RISCV access to semaphores"), T<i> only:
  ``SemaphoreAccess[8]`` at ``PC_BUF_BASE + 0x20`` — a load reads the semaphore's
  ``Value``, a store with bit 0 set decrements it (as SEMGET), clear increments it
  (as SEMPOST): :meth:`SyncUnit.riscv_read <tessera_tensix.syncunit.SyncUnit.riscv_read>`
  / :meth:`~tessera_tensix.syncunit.SyncUnit.riscv_write`, which wake Tensix threads
  waiting in SEMWAIT.

A waiting core parks (it does not spin): on the PCBuf (B waiting for room, T<i> for a
value), on the Tensix thread's instruction FIFO (``MOPExpanderDoneCheck``) or on the
core's backend signal (B's load, ``CoprocessorDoneCheck``: a thread going idle, or
T<i> starting to wait on its PCBuf, signals it).

Choices where the pages are silent or the model is simpler:

* Soft reset: a TRISC leaving reset empties its PCBuf (SoftReset.md).
* MOP expansion takes no time here and samples ``MopCfg`` when the MOP starts
  (:mod:`tessera_tensix.mop`), so ``MOPExpanderDoneCheck`` waits only while a MOP
  word is queued in the thread's FIFO (RISCV B's pushes share that FIFO here).
* A store to ``RISCV_DEBUG_REG_TRISC_PC_BUF_OVERRIDE`` wakes every core parked on a
  PCBuf, a Tensix FIFO or the backend signal (:meth:`TileControl.wake_override_waiters
  <tessera_tensix.tile.tilectl.TileControl.wake_override_waiters>`): each re-checks its
  condition, so setting ``OverrideEn`` / ``OverrideBusy`` releases the loads they answer.
* ``PC_BUF_BASE + 0xC`` .. ``+ 0x1F`` of a TRISC (the rest of the TTSync block) read 0
  and ignore stores; beyond the eight semaphores (``+ 0x40`` and up) an access faults.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from tessera.errors import MemoryFault
from tessera.sync import SyncObject
from tessera_tensix.mop import MOP_OPCODE
from tessera_tensix.tile import memmap

#: ``RISCV_DEBUG_REG_TRISC_PC_BUF_OVERRIDE``, as an offset in the tile-control window
#: (tt-metal ``hw/inc/internal/tt-1xx/{blackhole,wormhole}/tensix.h``: ``START_ADDR | 0x90``)
PC_BUF_OVERRIDE = 0x90
#: values one PCBuf FIFO holds
DEPTH = 16
#: T<i>'s window: the PCBuf, CoprocessorDoneCheck, MOPExpanderDoneCheck, SemaphoreAccess[0]
PCBUF, COPROCESSOR_DONE, MOP_EXPANDER_DONE, SEMAPHORES = 0x0, 0x4, 0x8, 0x20
#: ``SemaphoreAccess[8]``
SEMAPHORE_COUNT = 8
WINDOW = 0x1_0000


class PCBuf(SyncObject):
    """``PCBuf[i]``: the FIFO from RISCV B to RISCV T<i>, and who waits on it."""

    kind = "tensix-pcbuf"

    def __init__(self, index: int, tile: Any) -> None:
        super().__init__(f"PCBuf[{index}]")
        self.index = index
        self.tile = tile
        self.items: deque[int] = deque()

    @property
    def trisc(self) -> Any:
        return self.tile.harts[f"trisc{self.index}"]

    def override(self) -> tuple[bool, bool, int]:
        """``(OverrideEn, OverrideBusy, OverrideValue)`` of this PCBuf."""
        control = getattr(self.tile, "control", None)
        bits = control.regs.get(PC_BUF_OVERRIDE, 0) if control is not None else 0
        bits >>= 10 * self.index
        return bool(bits & 1), bool(bits & 2), bits >> 2 & 0xFF

    def t_reading(self) -> bool:
        """Is RISCV T<i> blocked in a load from ``PC_BUF_BASE`` of this empty FIFO?"""
        return self.trisc.waiting_on is self

    def park(self, agent: Any) -> None:
        super().park(agent)
        if agent is self.trisc:                   # RISCV B may be waiting for exactly this
            self.tile.core.signal.changed()

    def push(self, agent: Any, value: int) -> None:
        if len(self.items) >= DEPTH:
            raise self.wait_for(agent, f"{self.name} (RISCV B to T{self.index}) to have room "
                                       f"({DEPTH} values queued)")
        self.items.append(value & 0xFFFF_FFFF)
        self.emit_event("push", agent, len(self.items))
        self.wake_waiters()

    def pop(self, agent: Any) -> int:
        if not self.items:
            enabled, _busy, value = self.override()
            if enabled:
                return value
            raise self.wait_for(agent, f"{self.name} (RISCV B to T{self.index}) to receive a value (empty)")
        value = self.items.popleft()
        self.emit_event("pop", agent, len(self.items))
        self.wake_waiters()
        return value

    def released(self, core_name: str) -> None:
        """``core_name`` leaves soft reset: if it is RISCV T<i>, the FIFO's contents are gone."""
        if core_name == f"trisc{self.index}" and self.items:
            self.items.clear()
            self.emit_event("discard", None)
            self.wake_waiters()

    def state(self) -> dict[str, Any]:
        return {"kind": self.kind, "items": [f"{v:#x}" for v in self.items]}


def _lane(word: int, offset: int, size: int) -> int:
    return word >> 8 * (offset & 3) & ((1 << 8 * size) - 1)


class BriscSide:
    """RISCV B's end of ``PCBuf[i]``: its whole 64 KiB window."""

    def __init__(self, hart: Any, pcbuf: PCBuf) -> None:
        self.hart = hart
        self.pcbuf = pcbuf

    def write(self, offset: int, size: int, value: int) -> None:
        self.pcbuf.push(self.hart, value << 8 * (offset & 3))

    def read(self, offset: int, size: int) -> int:
        pcbuf = self.pcbuf
        enabled, busy, _value = pcbuf.override()
        if enabled and busy:
            return 0
        thread = pcbuf.tile.thread_of(pcbuf.trisc.name)
        unmet = []
        if pcbuf.items:
            unmet.append(f"{pcbuf.name} to be empty ({len(pcbuf.items)} values queued)")
        if not pcbuf.t_reading():
            unmet.append(f"{pcbuf.trisc.name} to wait reading PC_BUF_BASE")
        if not thread.idle:
            unmet.append(f"Tensix {thread.name.upper()} to be idle")
        if unmet:
            raise pcbuf.tile.core.signal.wait_for(self.hart, f"{' and '.join(unmet)} (RISCV B reads {pcbuf.name})")
        return 0


class TriscSide:
    """``PC_BUF_BASE`` .. + 0xFFFF of RISCV T<i>: its end of ``PCBuf[i]``, Manual TTSync
    and the Tensix semaphores."""

    def __init__(self, hart: Any, pcbuf: PCBuf, thread: Any, fifo: Any, sync: Any) -> None:
        self.hart = hart
        self.pcbuf = pcbuf
        self.thread = thread
        self.fifo = fifo
        self.sync = sync

    def _beyond(self, offset: int, size: int, access: str) -> MemoryFault:
        return MemoryFault(f"{self.hart.name}: {memmap.PC_BUF_BASE + offset:#010x} is past the "
                           f"{SEMAPHORE_COUNT} Tensix semaphores of PC_BUF_BASE", access=access, size=size,
                           address=memmap.PC_BUF_BASE + offset)

    def write(self, offset: int, size: int, value: int) -> None:
        if offset < SEMAPHORES:
            return                               # PCBuf and TTSync: stores are discarded
        index = (offset - SEMAPHORES) // 4
        if index >= SEMAPHORE_COUNT:
            raise self._beyond(offset, size, "write")
        self.sync.riscv_write(index, value << 8 * (offset & 3))

    def pure_read(self, offset: int, size: int) -> bool:
        """Is a load at ``offset`` free of side effects (a polling core may park on it)? The
        semaphores' values; PCBuf pops and the TTSync words wait."""
        return SEMAPHORES <= offset & ~3 < SEMAPHORES + 4 * SEMAPHORE_COUNT

    def read(self, offset: int, size: int) -> int:
        word = offset & ~3
        if word == PCBUF:
            return _lane(self.pcbuf.pop(self.hart), offset, size)
        if word == COPROCESSOR_DONE:
            self.wait_unless_busy_override(self.thread.idle, self.thread.core.signal,
                                           f"Tensix {self.thread.name.upper()} to finish every instruction "
                                           f"{self.hart.name} pushed (CoprocessorDoneCheck)")
            return 0
        if word == MOP_EXPANDER_DONE:
            queued = sum(1 for w, _pc, _core in self.fifo.items if w >> 24 == MOP_OPCODE)
            self.wait_unless_busy_override(not queued, self.fifo,
                                           f"no MOP to be queued for Tensix {self.thread.name.upper()}'s MOP "
                                           f"expander ({queued} queued; MOPExpanderDoneCheck)")
            return 0
        if word < SEMAPHORES:
            return 0
        index = (word - SEMAPHORES) // 4
        if index >= SEMAPHORE_COUNT:
            raise self._beyond(offset, size, "read")
        return _lane(self.sync.riscv_read(index), offset, size)

    def wait_unless_busy_override(self, done: bool, obj: Any, reason: str) -> None:
        """Park on ``obj`` unless ``done`` or ``OverrideEn`` and ``OverrideBusy`` are set."""
        if done:
            return
        enabled, busy, _value = self.pcbuf.override()
        if not (enabled and busy):
            raise obj.wait_for(self.hart, reason)


def install(machine: Any, tile: Any) -> list[PCBuf]:
    """Map B's three PCBuf windows and each TRISC's ``PC_BUF_BASE`` window."""
    from tessera_tensix.syncunit import SyncUnit

    pcbufs = [PCBuf(i, tile) for i in range(3)]
    for pcbuf in pcbufs:
        machine.add_sync(pcbuf)
    sync = tile.core.unit("sync", SyncUnit)
    for name, hart in tile.harts.items():
        own = tile.own[name]
        if name == "brisc":
            for i, base in enumerate((memmap.PC_BUF_BASE, memmap.PC1_BUF_BASE, memmap.PC2_BUF_BASE)):
                own.add_mmio(f"pcbuf{i}", base, WINDOW, BriscSide(hart, pcbufs[i]))
        elif name.startswith("trisc"):
            i = int(name[-1])
            own.add_mmio("pc_buf", memmap.PC_BUF_BASE, WINDOW,
                         TriscSide(hart, pcbufs[i], tile.thread_of(name), tile.fifos[i], sync))
    tile.pcbufs = pcbufs
    tile.on_release.extend(pcbufs)
    return pcbufs
