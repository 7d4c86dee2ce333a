"""Sync-unit instructions: STALLWAIT, SEMWAIT, SEMINIT, SEMPOST, SEMGET, ATGETM, ATRELM.

Functional models of WormholeB0 .../TensixCoprocessor/{STALLWAIT,SEMWAIT,SEMINIT,SEMPOST,
SEMGET,ATGETM,ATRELM}.md and the BlackholeA0 versions (Blackhole: STALLWAIT's condition
bits renumbered, four mutexes instead of seven, STREAMWAIT).  State lives in
:mod:`tessera_tensix.syncunit`; what a latched wait blocks and when it is over in
:mod:`tessera_tensix.waitgate`.

* STALLWAIT and SEMWAIT latch their wait in the thread's wait gate and retire
  (:meth:`~tessera_tensix.frontend.FrontEnd.latch`); a new one replaces the latched one.
* ATGETM waits (parks the thread on the core's signal) while another thread holds the
  mutex, then takes it; taking a mutex the thread already holds is a no-op.
* ATRELM of a mutex the thread does not hold completes without changing anything
  (ATRELM.md).
* An ATGETM / ATRELM index that names no mutex (1, or above 7 on Wormhole B0 / 4 on
  Blackhole) waits forever on the hardware: a rule stop; with ``--lenient`` the thread
  waits for ever, as the hardware does (the run ends in a deadlock report).
* STREAMWAIT (Blackhole) waits on NoC overlay stream registers, which direct mode does
  not model: it stops the run.
"""

from __future__ import annotations

from typing import Any

from tessera.control import Trap
from tessera_tensix import rules
from tessera_tensix.semantics import op
from tessera_tensix.syncunit import MUTEXES, SyncUnit, mutex_name
from tessera_tensix.waitgate import latch_of


def _sync(thread: Any) -> SyncUnit:
    return thread.core.unit("sync", SyncUnit)


@op("STALLWAIT")
def stallwait(thread: Any, ins: Any) -> None:
    thread.frontend.latch(thread, ins, latch_of(ins, thread.core.chip))


@op("SEMWAIT")
def semwait(thread: Any, ins: Any) -> None:
    thread.frontend.latch(thread, ins, latch_of(ins, thread.core.chip))


@op("SEMINIT")
def seminit(thread: Any, ins: Any) -> None:
    _sync(thread).init(ins.sem_sel, ins.init_value, ins.max_value)


@op("SEMPOST")
def sempost(thread: Any, ins: Any) -> None:
    _sync(thread).post(ins.sem_sel)


@op("SEMGET")
def semget(thread: Any, ins: Any) -> None:
    _sync(thread).get(ins.sem_sel)


def _mutex(thread: Any, ins: Any, sync: SyncUnit, name: str) -> int:
    """The mutex index of ATGETM/ATRELM; a nonexistent one waits forever (or stops)."""
    index = ins.mutex_index
    if not sync.valid_mutex(index):
        valid = ", ".join(str(i) for i in MUTEXES[sync.chip])
        missing = f"mutex {index} does not exist (mutexes {valid})"
        rules.broken(thread, ins, f"{missing}; the hardware waits forever")
        thread.core.signal.hold(thread, f"{name} waits forever: {missing}")
    return index


@op("ATGETM")
def atgetm(thread: Any, ins: Any) -> None:
    sync = _sync(thread)
    index = _mutex(thread, ins, sync, "ATGETM")
    holder = sync.acquire(thread.tid, index)
    if holder is not None:
        thread.core.signal.hold(thread, f"ATGETM waits: {mutex_name(index)} is held by T{holder}")


@op("ATRELM")
def atrelm(thread: Any, ins: Any) -> None:
    sync = _sync(thread)
    sync.release(thread.tid, _mutex(thread, ins, sync, "ATRELM"))


@op("STREAMWAIT")
def streamwait(thread: Any, ins: Any) -> None:
    raise Trap(rules.RULE, ins.word,
               name=f"{ins.mnemonic}: STREAMWAIT waits on NoC overlay stream registers, which "
                    "Tessera does not model (not supported)", word=ins.word)
