"""The executor of each operation kind, and how an asynchronous operation is issued.

``EXECUTORS`` maps the ``kind`` of the tables' operations to its executor (see
:mod:`tessera_tile.exec_base` for the interface).  :func:`issue` hands a prepared
asynchronous operation to its thread's engine the way the thread's mode says
(:mod:`tessera_tile.engines`).
"""

from __future__ import annotations

from typing import Any

from tessera_tile.exec_control import CsrExecutor, MbarExecutor, SemExecutor, SyncExecutor, WaitExecutor
from tessera_tile.exec_mem import MemExecutor, ScalarAtomicExecutor, TileAtomicExecutor
from tessera_tile.exec_mma import MmaExecutor
from tessera_tile.exec_move import MoveExecutor
from tessera_tile.exec_talu import TaluExecutor
from tessera_tile.exec_tma import TmaExecutor

EXECUTORS: dict[str, Any] = {
    "mem": MemExecutor(),
    "tatomic": TileAtomicExecutor(),
    "satomic": ScalarAtomicExecutor(),
    "tma": TmaExecutor(),
    "mma": MmaExecutor(),
    "talu": TaluExecutor(),
    "move": MoveExecutor(),
    "csr": CsrExecutor(),
    "sync": SyncExecutor(),
    "wait": WaitExecutor(),
    "mbar": MbarExecutor(),
    "sem": SemExecutor(),
}


def issue(system: Any, thread: Any, op: Any, hart: Any) -> None:
    """Give ``op`` to its engine: now (eager, checker, synchronous ops) or queued (timed)."""
    op.unit = EXECUTORS[op.kind].unit
    engine = thread.engines[op.unit]
    mode = thread.csr["tmode"]
    codes = system.tables.table("tmode")
    if mode == codes["timed"] and not op.params.get("sync"):
        engine.inbox.push(hart, op)          # a full queue parks the hart before anything changed
        thread.completion.issue(op.keys)
        return
    thread.completion.issue(op.keys)
    engine.run_now(op)
    if mode == codes["checker"]:
        system.checker.add(op)
    rd = op.plan.get("rd")
    if rd:
        hart.x[rd] = op.plan["old"]
