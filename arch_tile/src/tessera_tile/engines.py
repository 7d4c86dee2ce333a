"""The tile engines (LSU, TMA, MMA, ALU) as scheduler agents, and the timed-mode cost model.

Each thread has one :class:`TileEngine` per unit — ``hart0.lsu``, ``hart0.tma``,
``hart0.mma``, ``hart0.alu`` — an :class:`~tessera.engine.EngineAgent` with an inbox
FIFO and a completion counter (tile.md 9.3: engines run concurrently, each completes
its operations in order).  How an operation gets to it depends on the thread's mode
(CSR ``tmode``, reset value ``tile.mode``):

* **eager / checker**: the hart hands the operation to :meth:`TileEngine.run_now`
  inside the dispatching instruction, so it is done when the W0 retires and the
  counters go up and straight back down (tile.md 9.4);
* **timed**: the hart pushes it into the engine's inbox (waiting when the queue is full)
  and the engine agent performs it when the scheduler runs it, taking the cycles the
  cost model prices it at; ``t_wait`` really waits.

The cost model (:class:`CostModel`, ``machine.tile.cost``) is the hook for a cycle
model: a plugin may replace it from ``tessera_machine_ready``.  Its prices are the
placeholders of tile.md 9.6 (settings ``tile.lat_*``/``tile.bw_*``).
"""

from __future__ import annotations

from typing import Any

from tessera.engine import EngineAgent
from tessera.sync import Fifo

UNITS = ("lsu", "tma", "mma", "alu")


class TileQueue(Fifo):
    """An engine's inbox: a FIFO whose state names the queued operations (JSON for --dump-state)."""

    def state(self) -> dict[str, Any]:
        out = super().state()
        out["items"] = [op.describe() for op in self.items]
        return out


class TileEngine(EngineAgent):
    """One unit of one thread's tile core."""

    def __init__(self, name: str, inbox: Any, completed: Any, *, system: Any, thread: str,
                 unit: str) -> None:
        super().__init__(name, inbox, completed)
        self.system = system
        self.thread = thread
        self.unit = unit

    def execute(self, op: Any) -> int:
        """Perform ``op`` (checking it for races first) and complete it; returns its cost."""
        from tessera_tile.executors import EXECUTORS

        system = self.system
        thread = system.threads[self.thread]
        checker = system.checker
        if checker is not None and checker.groups:
            checker.check_op(op)
        cost = system.cost
        cost.pricing = op               # what a cost model that draws a timeline names
        try:
            cycles = EXECUTORS[op.kind].perform(system, thread, op)
        finally:
            cost.pricing = None
        thread.completion.complete(op.keys, self)
        return cycles

    def process(self, command: Any) -> int:
        """Timed mode: the scheduler gave this engine a turn and the inbox had ``command``."""
        return self.execute(command)

    def run_now(self, op: Any) -> None:
        """Eager and checker mode: do ``op`` inside the issuing instruction."""
        self.execute(op)
        self.instret += 1
        self.cycles += 1
        self.completed.add(1, self)


class CostModel:
    """Timed-mode prices of tile operations (tile.md 9.6 placeholders)."""

    #: the operation being priced while an engine performs it (``op.form`` names it:
    #: ``tld.g.us``, ``tmma.tt`` …), ``None`` otherwise: the prices take only numbers, and
    #: a cost model that draws a timeline (tessera-cycles' ``tile`` model) names its spans
    pricing: Any = None

    def __init__(self, cfg: Any) -> None:
        self.cfg = cfg

    def lsu(self, space: str, nbytes: int) -> int:
        c = self.cfg
        if space == "global":
            return c.lat_lsu_global + -(-nbytes // c.bw_lsu_global)
        return c.lat_lsu_shared + -(-nbytes // c.bw_lsu_shared)

    def tma(self, nbytes: int, targets: int) -> int:
        c = self.cfg
        return c.lat_tma + -(-nbytes // c.bw_tma) + 8 * (targets - 1)

    def mma(self, in_bits: int, k: int, count: int) -> int:
        rate = 1024 if in_bits <= 8 else 512 if in_bits <= 16 else 128
        return self.cfg.lat_mma + count * -(-(16 * 16 * k) // rate)

    def alu(self, rows: int, sfu: bool) -> int:
        return (8 + 2 * rows) if sfu else self.cfg.lat_alu + rows
