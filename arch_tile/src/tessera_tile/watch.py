"""Checker mode's view of the CPU side: a memory watch on RAM and the PC of each load/store.

The watch (installed only on machines started with ``tile.mode=checker``) hands every
CPU load and store of RAM to :meth:`tessera_tile.checker.Checker.cpu_access`; tile
engines move data with ``read_bytes``/``write_bytes``, which watches do not see.  Inside
a slice a hart's ``pc`` is not live, so loads and stores get a ``before`` callback that
records their address (``hart.tile_pc``) for the race report.
"""

from __future__ import annotations

from typing import Any

from tessera.logs import get_logger
from tessera.memory import Watch

_MEMORY_CLASSES = frozenset({"load", "store", "amo"})


class _CpuWatch:
    """The watch callbacks (a class so machines holding it still pickle)."""

    def __init__(self, system: Any) -> None:
        self.system = system

    def on_read(self, agent: Any, address: int, size: int, value: int) -> None:
        self._check(agent, address, size, False)

    def on_write(self, agent: Any, address: int, size: int, value: int) -> None:
        self._check(agent, address, size, True)

    def _check(self, agent: Any, address: int, size: int, write: bool) -> None:
        checker = self.system.checker
        if checker.groups and agent is not None and getattr(agent, "tile", None) is not None:
            checker.cpu_access(agent, address, size, write, getattr(agent, "tile_pc", None))


def cpu_watches(system: Any) -> list[Watch]:
    w = _CpuWatch(system)
    regions = [r for r in system.machine.space.describe() if r.get("kind") == "ram"]
    return [Watch(r["start"], r["start"] + r["size"], on_read=w.on_read, on_write=w.on_write) for r in regions]


def _mark(agent: Any, ins: Any) -> None:
    agent.tile_pc = ins.address


def pc_marker(ins: Any) -> tuple[Any, None] | None:
    enc = getattr(ins, "encoding", None)
    if enc is not None and enc.timing in _MEMORY_CLASSES:
        return (_mark, None)
    return None


def log_findings(system: Any) -> None:
    """Warn about each race and sequencing finding (``tessera demo`` shows them under the example)."""
    log = get_logger("tessera.tile")
    for race in system.races:
        log.warning("tile race", detail=str(race))
    for report in system.reports:
        log.warning("tile sequencing", detail=str(report))
