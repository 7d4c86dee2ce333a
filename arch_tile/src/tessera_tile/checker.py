"""Checker mode (tile.md 9.4): find programs that use data an operation they did not wait for touches.

In checker mode every asynchronous operation still takes effect at once (as in eager
mode), but is also recorded as *pending* with the byte ranges it reads and writes —
tile registers, global memory, shared memory, L2B.  It stays pending until the program
executes a wait that covers it:

* LSU operations: a ``t_wait(memory)`` whose threshold leaves them out (the oldest
  retire first, so a threshold ``c`` retires all but the newest ``c`` of that counter);
* TMA with bulk completion: ``t_wait(TMA, group)`` or a unit ``t_wait`` with the TMA bit;
  with an mbarrier: a successful ``try_wait`` on that mbarrier; with a semaphore: a
  satisfied ``t_sem wait`` on it;
* MMA / ALU: ``t_wait`` with that bit; everything: ``t_wait`` with all bits.

Any access that overlaps a pending operation's writes, and any write that overlaps its
reads, is a race, like compute-sanitizer's racecheck — except between two operations
of the same engine of the same thread, which complete in order.  Accesses checked: every
tile operation (before it is performed), every Tile Move, and — when the machine starts
in checker mode (``tile.mode=checker``), which installs a memory watch on RAM — every
CPU load and store.  ``tile.checker_action`` says what a race does: ``report`` appends a
:class:`Race` to ``machine.tile.races`` (and the run goes on), ``raise`` stops the run with
:class:`TileRaceError`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from tessera.errors import TesseraError


class TileRaceError(TesseraError):
    """Checker mode found an access racing with a tile operation nobody waited for."""

    exit_code = 70
    kind = "tile race"


@attrs.frozen
class Race:
    """One race: who touched what, and the pending operation it collides with."""

    agent: str
    pc: int | None
    access: str                 # "CPU load", "CPU store", or the racing operation
    space: str                  # "global", "shared 0", "tiles 1" ...
    start: int
    end: int
    op: str                     # the pending operation
    op_pc: int
    op_agent: str
    conflict: str               # "writes" or "reads"

    def __str__(self) -> str:
        where = f"pc {self.pc:#x}" if self.pc is not None else "pc ?"
        # no "race:" prefix: the error's kind and the log event already say "tile race"
        return (f"{self.access} by {self.agent} at {where} touches {self.space} bytes "
                f"{self.start:#x}..{self.end:#x}, which {self.op} (pc {self.op_pc:#x}, {self.op_agent}) "
                f"{self.conflict} and nobody waited for")


def _label(kind: str, index: int) -> str:
    return kind if kind == "global" else f"{kind} {index}"


class Checker:
    """Pending operations and the race test (one per machine: ``machine.tile.checker``).

    Pending operations are kept per ``(thread, engine)`` in issue order: the oldest-first
    retirement of ``t_wait(memory)`` needs the order, and an access never races with its
    own engine's operations, so a check skips that whole group at once.
    """

    def __init__(self, system: Any) -> None:
        self.system = system
        self.groups: dict[tuple[str, str], list[Any]] = {}

    @property
    def pending(self) -> list[Any]:
        return [p for group in self.groups.values() for p in group]

    # ------------------------------------------------------------------ bookkeeping
    def add(self, op: Any) -> None:
        self.groups.setdefault((op.thread, op.unit), []).append(op)

    def _keep(self, keep: Callable[[Any], bool]) -> None:
        for key in list(self.groups):
            left = [p for p in self.groups[key] if keep(p)]
            if left:
                self.groups[key] = left
            else:
                del self.groups[key]

    def retire(self, thread: Any, which: Callable[[Any], bool]) -> None:
        self._keep(lambda p: not (p.thread == thread.name and which(p)))

    def retire_memory(self, thread: Any, key: str, keep: int) -> None:
        mine = [p for p in self.groups.get((thread.name, "lsu"), []) if key in p.keys]
        drop = {id(p) for p in mine[:max(0, len(mine) - keep)]}
        self._keep(lambda p: id(p) not in drop)

    def retire_barrier(self, place: tuple[str, int, int]) -> None:
        self._keep(lambda p: tuple(place) not in [tuple(m) for m in p.plan.get("mbar") or []])

    def retire_semaphore(self, index: int) -> None:
        self._keep(lambda p: not (p.plan.get("sem") and p.plan["sem"][0] == index))

    # ------------------------------------------------------------------ races
    def check_op(self, op: Any) -> None:
        """Check a tile operation's accesses against the pending ones (before it runs)."""
        for kind, index, lo, hi in op.reads:
            self._check(op.thread, op.unit, op.pc, op.form, kind, index, lo, hi, write=False)
        for kind, index, lo, hi in op.writes:
            self._check(op.thread, op.unit, op.pc, op.form, kind, index, lo, hi, write=True)

    def cpu_access(self, agent: Any, address: int, size: int, write: bool, pc: int | None) -> None:
        """A CPU load or store of global memory (the memory watch of checker mode)."""
        if not self.groups or agent is None:
            return
        self._check(agent.name, "cpu", pc, "CPU store" if write else "CPU load", "global", 0,
                    address, address + size, write=write)

    def _check(self, agent: str, unit: str, pc: int | None, what: str, kind: str, index: int,
               lo: int, hi: int, *, write: bool) -> None:
        for (thread, engine), group in self.groups.items():
            if thread == agent and engine == unit:
                continue                        # one engine of one thread completes in order
            for p in group:
                for ranges, conflict, needs_write in ((p.writes, "writes", False), (p.reads, "reads", True)):
                    if needs_write and not write:
                        continue
                    for k, i, plo, phi in ranges:
                        if k == kind and i == index and plo < hi and lo < phi:
                            self._race(Race(agent, pc, what, _label(kind, index),
                                            max(lo, plo), min(hi, phi), p.form, p.pc, p.thread, conflict))
                            return

    def _race(self, race: Race) -> None:
        system = self.system
        if system.cfg.checker_action == "raise":
            raise TileRaceError(str(race), agent=race.agent, pc=race.pc)
        system.races.append(race)
