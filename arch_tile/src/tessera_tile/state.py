"""Architectural state of the tile extension: per thread, per PE, per cluster (tile.md 9.2).

* :class:`TileThread` — one hart's tile side: the ACE staging area ``{asp, w1}``, the
  tile register file (a numpy ``uint8`` array, allocated on first use because 256 KiB per
  thread is mostly never touched), the tile CSRs, the modelled FPRs and vector registers
  (the RV64IM host has no F or V registers, but Tile Move and the ASP words need
  something to move: tile.md 5.6/5.7), and a :class:`Completion` sync object holding the
  counts of outstanding operations.
* :class:`Pe` — shared memory (an address space of its own, like PTX ``.shared``) and the
  CTA-scope named barriers.
* :class:`Cluster` — the L2B and the cluster-scope named barriers.

Everything here pickles (snapshots) and reports JSON-able state (``--dump-state``).
"""

from __future__ import annotations

import hashlib
from typing import Any

import attrs
import numpy as np

from tessera.sync import SyncObject

#: keys of the outstanding-operation counts (tile.md 5.4 counters, 9.3 done signals)
MEMORY_KEYS = ("tgld", "tgst", "tsld", "tsst")
UNIT_KEYS = ("tma", "tma.bulk", "mma", "alu")


@attrs.define
class Asp:
    """A staged W2: the word, where it ran, and the register value it captured."""

    word: int
    pc: int
    layout: str
    value: Any = None          # bytes (vector) or int (GPR/FPR), None when moving out of the tile
    mask: bytes | None = None  # v0 when the W2's func6 selects masking (tile.md E6)


@attrs.define
class StagedW1:
    """A staged W1: the word, where it ran, its class, and the GPRs as they were then."""

    word: int
    pc: int
    cls: str
    x: list[int]


class Completion(SyncObject):
    """Outstanding tile operations of one thread; ``t_wait`` parks here.

    Engines call :meth:`complete` as operations finish, which wakes the waiters; a
    ``t_wait`` whose condition does not hold raises :meth:`wait_until`'s ``WaitFor``
    before changing anything, so it simply runs again when woken.
    """

    kind = "tile-completion"

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.counts: dict[str, int] = dict.fromkeys(MEMORY_KEYS + UNIT_KEYS, 0)

    def issue(self, keys: tuple[str, ...]) -> None:
        for k in keys:
            self.counts[k] = self.counts.get(k, 0) + 1

    def complete(self, keys: tuple[str, ...], agent: Any = None) -> None:
        for k in keys:
            left = self.counts.get(k, 0) - 1
            if left:
                self.counts[k] = left
            elif k in MEMORY_KEYS or k in UNIT_KEYS:
                self.counts[k] = 0
            else:
                self.counts.pop(k, None)   # per-group keys come and go
        self.emit_event("complete", agent, keys)
        self.wake_waiters()

    def count(self, key: str) -> int:
        return self.counts.get(key, 0)

    def busy(self) -> bool:
        return any(self.counts.values())

    def wait_until(self, agent: Any, ok: bool, reason: str) -> None:
        if not ok:
            raise self.wait_for(agent, reason)

    def state(self) -> dict[str, Any]:
        return {"kind": self.kind, "outstanding": {k: v for k, v in sorted(self.counts.items())}}


class TileThread:
    """The tile-side state of one hart (thread ``tid`` of PE ``pe`` of cluster ``cluster``)."""

    def __init__(self, name: str, gid: int, tid: int, pe: Pe, cluster: Cluster, cfg: Any,
                 completion: Completion, csr_reset: dict[str, int]) -> None:
        self.name = name
        self.gid = gid
        self.tid = tid
        self.pe = pe
        self.cluster = cluster
        self.asp: Asp | None = None
        self.w1: StagedW1 | None = None
        self.csr = dict(csr_reset)
        self.fpr = [0] * 32
        self._vregs: np.ndarray | None = None
        self._tiles: np.ndarray | None = None
        self.vlen_bytes = cfg.vlen // 8
        self.tile_bytes = cfg.tile_bytes
        self.num_tiles = cfg.num_tiles
        self.shared_rf = cfg.tile_rf_scope == "pe"
        self.completion = completion
        self.engines: dict[str, Any] = {}     # unit -> TileEngine
        self.system: Any = None               # the TileSystem (set by the board)

    # ------------------------------------------------------------------ register files
    @property
    def tiles(self) -> np.ndarray:
        """The tile register file, ``num_tiles * tile_bytes`` bytes (the PE's if shared)."""
        if self.shared_rf:
            return self.pe.tiles(self.num_tiles * self.tile_bytes)
        if self._tiles is None:
            self._tiles = np.zeros(self.num_tiles * self.tile_bytes, dtype=np.uint8)
        return self._tiles

    @property
    def rf_key(self) -> tuple[str, int]:
        """Which tile file this thread uses, for the race checker."""
        return ("tiles-pe", self.pe.index) if self.shared_rf else ("tiles", self.gid)

    def tile(self, index: int, count: int = 1) -> np.ndarray:
        start = index * self.tile_bytes
        return self.tiles[start:start + count * self.tile_bytes]

    @property
    def vregs(self) -> np.ndarray:
        if self._vregs is None:
            self._vregs = np.zeros((32, self.vlen_bytes), dtype=np.uint8)
        return self._vregs

    def vreg(self, index: int) -> bytes:
        return self.vregs[index].tobytes()

    def set_vreg(self, index: int, data: bytes | np.ndarray) -> None:
        self.vregs[index] = np.frombuffer(bytes(data), dtype=np.uint8)

    def v0_bit(self, i: int) -> bool:
        """Mask bit ``i`` of ``v0`` (RVV mask layout: bit i of the register, LSB first)."""
        if self._vregs is None:
            return False
        return bool(self._vregs[0][i >> 3] >> (i & 7) & 1)

    # ------------------------------------------------------------------ state
    def state(self) -> dict[str, Any]:
        def digest(a: np.ndarray | None) -> str | None:
            if a is None or not a.any():
                return None
            return hashlib.sha256(a.tobytes()).hexdigest()[:32]

        return {
            "thread": {"tid": self.tid, "pe": self.pe.index, "cluster": self.cluster.index},
            "csrs": dict(sorted(self.csr.items())),
            "staged": {"asp": None if self.asp is None else f"{self.asp.word:#010x}@{self.asp.pc:#x}",
                       "w1": None if self.w1 is None else f"{self.w1.word:#010x}@{self.w1.pc:#x}"},
            "fpr": [v for v in self.fpr] if any(self.fpr) else None,
            "vregs": digest(self._vregs),
            "tiles": None if self.shared_rf else digest(self._tiles),
        }


class Pe:
    """A processing element: shared memory, its threads, CTA barriers (and a shared tile file)."""

    def __init__(self, index: int, local: int, cluster: Cluster, shmem: Any, barriers: Any) -> None:
        self.index = index          # machine-wide PE number
        self.local = local          # PE number inside its cluster (the t_sync cluster mask bit)
        self.cluster = cluster
        self.shmem = shmem          # an AddressSpace with one RAM region at 0
        self.barriers = barriers
        self.threads: list[TileThread] = []
        self._tiles: np.ndarray | None = None

    def tiles(self, size: int) -> np.ndarray:
        if self._tiles is None:
            self._tiles = np.zeros(size, dtype=np.uint8)
        return self._tiles


class Cluster:
    """A cluster: its PEs, the L2B and the cluster-scope barriers."""

    def __init__(self, index: int, l2b: Any, barriers: Any) -> None:
        self.index = index
        self.l2b = l2b
        self.barriers = barriers
        self.pes: list[Pe] = []
