"""The tile system of one machine (``machine.tile``): configuration, tables, state, memories.

It is the one object the semantic functions reach through ``hart.tile.system``, so it
holds what every executor needs: the validated settings, the encoding tables this
machine decodes with, the threads/PEs/clusters, the memories and their bounds checks,
the race checker and the cost model of timed mode, and the two report lists users read
after a run (``reports``: sequencing remarks of ``strict_sequencing``; ``races``: what
checker mode found).

**Memory spaces.**  An operation names memory as ``(space, index)``: ``("global", 0)``
is the hart's own address space (global memory, tile.md 9.2), ``("shared", p)`` the
shared memory of PE ``p`` and ``("l2b", c)`` the L2B of cluster ``c`` — separate address
spaces, so their addresses are offsets.  Bounds and permissions are checked *before*
anything is written (tile.md E1: faults are precise, at the dispatching word), and all
data moves through ``read_bytes``/``write_bytes``: bulk moves made by the tile engines,
which memory watches do not see as CPU data accesses.
"""

from __future__ import annotations

from typing import Any

import attrs

from tessera_tile import faults
from tessera_tile.state import Cluster, Pe, TileThread

GLOBAL = "global"
SHARED = "shared"
L2B = "l2b"


@attrs.define
class Report:
    """A remark of ``strict_sequencing``: who, where, which word, what rule."""

    agent: str
    pc: int
    word: int
    rule: str

    def __str__(self) -> str:
        return f"{self.agent} pc {self.pc:#010x} word {self.word:#010x}: {self.rule}"


class TileSystem:
    """Everything tile-side of one machine; created by the board (:mod:`tessera_tile.board`)."""

    def __init__(self, machine: Any, cfg: Any, tables: Any) -> None:
        self.machine = machine
        self.cfg = cfg
        self.tables = tables
        self.threads: dict[str, TileThread] = {}     # by hart name
        self.pes: list[Pe] = []
        self.clusters: list[Cluster] = []
        self.reports: list[Report] = []
        self.races: list[Any] = []
        self.checker: Any = None
        self.cost: Any = None
        self.sem_event: Any = None                    # sync object woken by semaphore signals
        self.mbar_packing: Any = None                 # tessera_tile.mbarrier.Packing of the tables
        self.enabled_opcodes = frozenset(tables.opcodes[n] for n in cfg.opcode_names)
        self.decoded: dict[Any, Any] = {}             # sequence -> (operation, fields): a cache

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["decoded"] = {}                          # a cache: rebuilt on use
        return state

    # ------------------------------------------------------------------ memories
    def space(self, kind: str, index: int) -> Any:
        if kind == GLOBAL:
            return self.machine.space
        if kind == SHARED:
            return self.pes[index].shmem
        return self.clusters[index].l2b

    def space_size(self, kind: str, index: int) -> int:
        return self.cfg.shmem_bytes if kind == SHARED else self.cfg.l2b_bytes

    def check_range(self, kind: str, index: int, address: int, size: int, write: bool, word: int,
                    rule: str) -> None:
        """Raise the access fault a transfer of ``size`` bytes at ``address`` would take."""
        cause = faults.STORE_FAULT if write else faults.LOAD_FAULT
        if size <= 0:
            return
        if kind != GLOBAL:
            if address < 0 or address + size > self.space_size(kind, index):
                raise faults.access(cause, address, word, f"{rule}: bytes {address:#x}..{address + size:#x} "
                                    f"outside the {kind} memory ({self.space_size(kind, index):#x} bytes)")
            return
        space = self.machine.space
        mask = (1 << self.machine.arch.address_bits) - 1
        addr, end = address, address + size
        if address < 0 or end - 1 > mask:
            raise faults.access(cause, address & mask, word, f"{rule}: bytes {address:#x}..{end:#x} "
                                "leave the address space")
        while addr < end:
            region = space.region_at(addr)
            if region is None:
                raise faults.access(cause, addr, word, f"{rule}: address {addr:#x} is not mapped")
            if not (region.writable if write else region.readable):
                raise faults.access(cause, addr, word, f"{rule}: region {region.name} is not "
                                    f"{'writable' if write else 'readable'}")
            addr = region.end

    def read(self, kind: str, index: int, address: int, size: int) -> bytes:
        return self.space(kind, index).read_bytes(address, size)

    def write(self, kind: str, index: int, address: int, data: bytes) -> None:
        self.space(kind, index).write_bytes(address, data)

    def local_space(self, thread: TileThread, address: int) -> tuple[str, int, int]:
        """Where a *local* address (an mbarrier's) lives: own PE's shared memory, or the L2B.

        Addresses from ``mbar_l2b_base`` on are L2B offsets (tile.md S5); below, shared
        memory offsets.
        """
        base = self.cfg.mbar_l2b_base
        if address >= base:
            return L2B, thread.cluster.index, address - base
        return SHARED, thread.pe.index, address

    # ------------------------------------------------------------------ reports
    def report(self, agent: Any, pc: int, word: int, rule: str) -> None:
        new = Report(agent.name, pc, word, rule)
        if not self.reports or self.reports[-1] != new:     # a parked W0 runs again: say it once
            self.reports.append(new)

    def thread_of(self, hart: Any) -> TileThread:
        return self.threads[hart.name]
