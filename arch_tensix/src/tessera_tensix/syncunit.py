"""The sync unit: the semaphores and mutexes the three Tensix threads coordinate through.

WormholeB0 .../TensixCoprocessor/SyncUnit.md, SEMINIT.md, SEMPOST.md, SEMGET.md,
ATGETM.md, ATRELM.md and their BlackholeA0 versions.  One per core
(``core.unit("sync", SyncUnit)``); the instructions are in
:mod:`tessera_tensix.semantics.sync_ops`, SEMWAIT's conditions in
:mod:`tessera_tensix.waitgate`, and the baby RISC-V cores (issue 17) reach the
semaphores through :meth:`SyncUnit.riscv_read` / :meth:`SyncUnit.riscv_write`.

* Eight semaphores, each a 4-bit ``Value`` and 4-bit ``Max``; both are 0 after reset
  (the pages give no reset value; tt-llk always SEMINITs before use).  SEMPOST and
  a RISC-V increment saturate at 15, SEMGET and a RISC-V decrement at 0; ``Max`` only
  matters to SEMWAIT.
* Mutexes 0 and 2..7 on Wormhole B0, 0 and 2..4 on Blackhole; each is free or held by
  one thread.  When a thread releases a mutex other threads wait for, it goes straight
  to the next one in round-robin order after the releaser (ATRELM.md: thread
  ``(i + 1) % 3`` first), so which thread gets it never depends on scheduling.
* Every change calls ``signal.changed()`` so that threads parked on a semaphore or a
  mutex re-check their condition.
"""

from __future__ import annotations

from typing import Any

SEMAPHORES = 8
VALUE_MAX = 15                                           # 4-bit Value / Max
#: valid mutex indices per chip
MUTEXES = {"wh": (0, 2, 3, 4, 5, 6, 7), "bh": (0, 2, 3, 4)}
#: tt-llk's name for a mutex (ckernel::mutex)
MUTEX_NAMES = {0: "REG_RMW"}
THREADS = 3


def mutex_name(index: int) -> str:
    name = MUTEX_NAMES.get(index)
    return f"mutex {index} ({name})" if name else f"mutex {index}"


class SyncUnit:
    """Semaphores (``value``, ``max``) and mutexes (``holder``: index -> tid or None)."""

    def __init__(self, core: Any) -> None:
        self.chip = core.chip
        self.signal = core.signal
        self.value = [0] * SEMAPHORES
        self.max = [0] * SEMAPHORES
        self.holder: dict[int, int | None] = dict.fromkeys(MUTEXES[self.chip])
        #: threads parked in ATGETM, per mutex (for the hand-over on release)
        self.wanting: dict[int, set[int]] = {i: set() for i in MUTEXES[self.chip]}

    def _changed(self) -> None:
        if self.signal is not None:
            self.signal.changed()

    # -- semaphores (SEMINIT, SEMPOST, SEMGET)
    def init(self, mask: int, value: int, top: int) -> None:
        """SEMINIT: the semaphores of ``mask`` get ``Value = value``, ``Max = top``."""
        for i in _selected(mask):
            self.value[i], self.max[i] = value & VALUE_MAX, top & VALUE_MAX
        if mask & 0xFF:
            self._changed()

    def post(self, mask: int) -> None:
        """SEMPOST: increment the semaphores of ``mask``; 15 stays 15."""
        changed = False
        for i in _selected(mask):
            if self.value[i] < VALUE_MAX:
                self.value[i] += 1
                changed = True
        if changed:
            self._changed()

    def get(self, mask: int) -> None:
        """SEMGET: decrement the semaphores of ``mask``; 0 stays 0."""
        changed = False
        for i in _selected(mask):
            if self.value[i] > 0:
                self.value[i] -= 1
                changed = True
        if changed:
            self._changed()

    # -- the RISC-V side (SyncUnit.md "RISCV access to semaphores")
    def riscv_read(self, index: int) -> int:
        """A RISC-V ``lw`` of ``SemaphoreAccess[index]``: the semaphore's Value."""
        return self.value[_semaphore(index)]

    def riscv_write(self, index: int, value: int) -> None:
        """A RISC-V ``sw`` of ``value`` to ``SemaphoreAccess[index]``: bit 0 set decrements
        (as SEMGET), clear increments (as SEMPOST)."""
        mask = 1 << _semaphore(index)
        if value & 1:
            self.get(mask)
        else:
            self.post(mask)

    # -- mutexes (ATGETM, ATRELM)
    def valid_mutex(self, index: int) -> bool:
        return index in self.holder

    def acquire(self, tid: int, index: int) -> int | None:
        """Try to take mutex ``index`` for thread ``tid``: None when taken (or already
        held), else the tid of the thread holding it (the caller waits)."""
        held = self.holder[index]
        if held is not None and held != tid:
            self.wanting[index].add(tid)
            return held
        self.wanting[index].discard(tid)
        if held is None:
            self.holder[index] = tid
            self._changed()
        return None

    def release(self, tid: int, index: int) -> bool:
        """Release mutex ``index`` if ``tid`` holds it (else nothing changes; returns False).
        A waiting thread takes it over at once, the first after ``tid`` in round-robin order."""
        if self.holder[index] != tid:
            return False
        waiting = self.wanting[index]
        nxt = next((t for t in ((tid + k) % THREADS for k in range(1, THREADS)) if t in waiting), None)
        self.holder[index] = nxt
        if nxt is not None:
            waiting.discard(nxt)
        self._changed()
        return True

    def state(self) -> dict[str, Any]:
        return {"semaphores": [{"value": v, "max": m} for v, m in zip(self.value, self.max, strict=True)],
                "mutexes": {str(i): (None if t is None else f"T{t}") for i, t in self.holder.items()}}


def _selected(mask: int) -> list[int]:
    return [i for i in range(SEMAPHORES) if mask >> i & 1]


def _semaphore(index: int) -> int:
    if not 0 <= index < SEMAPHORES:
        raise IndexError(f"semaphore index {index} is out of range (0..{SEMAPHORES - 1})")
    return index
