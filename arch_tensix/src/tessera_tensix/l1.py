"""L1: the Tensix tile's SRAM, as the unpackers, packers, mover and scalar unit see it.

Wormhole B0 has 1464 KiB, Blackhole 1536 KiB (WormholeB0/TensixTile/L1.md; spec
tensix.md §5).  L1 is a RAM region of the machine's address space (``l1``), so the
baby RISC-V cores of a tile (issue 17) and the Tensix units share one copy: units
address it by byte offset from the region's start.  Reads use a numpy view of the
region's bytes (block work, no per-byte Python); writes go through the address space
(:meth:`tessera.memory.AddressSpace.write_bytes`) so code caches and watchpoints see
them.  An access outside L1 stops the run with a rule trap naming the unit and the
range (the hardware's behaviour there is undocumented, so there is no lenient outcome).

**The L1 note.**  An instruction whose unit accessed L1 — UNPACR, PACR, XMOV, and the
scalar unit's LOADIND, STOREIND, ATCAS, ATINCGET, ATINCGETPTR and ATSWAP — leaves
``thread.l1_note``, a tuple of ``(client, kind, where)``, for a timing model (the
tessera-cycles ``tensix`` model books them on L1's access ports; it takes the note, so
nothing else reads it).  ``client`` is the port client of WormholeB0/TensixTile/L1.md's
port diagram: ``unpacker0``/``unpacker1`` (datums), ``unpacker0 exponents``/``unpacker1
exponents`` (BFP exponents), ``packer0``..``packer3`` (writes), ``packer0 read`` (an
L1-to-L1 pack), ``mover read``, ``mover write``, ``thcon``; ``kind`` is ``read``,
``write`` (whole 16-byte rows) or ``rmw`` (a narrow write or an atomic: a
read-modify-write); ``where`` is a byte range ``(lo, hi)`` or a numpy array of the bit
addresses read (the unpacker's datum addresses as it computes them).  Setting it is the
only cost when no model reads it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tessera.control import Trap
from tessera_tensix.rules import RULE

#: bytes of L1 per chip
SIZES = {"wh": 1464 * 1024, "bh": 1536 * 1024}


class L1:
    """Byte-offset access to the ``l1`` region of ``space`` (mapped at ``base``)."""

    def __init__(self, space: Any, base: int, chip: str, perms: str = "rw") -> None:
        self.space = space
        self.base = base
        self.size = SIZES[chip]
        # executable on a tile, where the baby RISC-V cores run their code from L1
        self.region = space.add_ram("l1", base, self.size, perms=perms)
        self.bytes = np.frombuffer(self.region.data, dtype=np.uint8)  # a live, writable view
        #: woken after every write through :meth:`write` (the core's BackendSignal, set by
        #: the board): threads waiting on L1 contents (ATCAS, ATINCGETPTR) re-check
        self.signal: Any = None

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        del state["bytes"]   # a view: pickled, it would become a copy that no longer sees L1
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.bytes = np.frombuffer(self.region.data, dtype=np.uint8)

    def check(self, offset: int, n: int, who: str) -> None:
        """Stop the run (a rule trap) unless ``[offset, offset + n)`` lies inside L1."""
        if offset < 0 or n < 0 or offset + n > self.size:
            raise Trap(RULE, offset, name=f"{who}: L1 access {offset:#x}..{offset + n:#x} is outside "
                                           f"L1 (0..{self.size:#x})")

    def read(self, offset: int, n: int, who: str = "L1") -> np.ndarray:
        """A copy of ``n`` bytes at ``offset`` (uint8 array)."""
        self.check(offset, n, who)
        return self.bytes[offset:offset + n].copy()

    def read_as(self, offset: int, dtype: Any, count: int, who: str = "L1") -> np.ndarray:
        """``count`` little-endian elements of ``dtype`` at ``offset`` (a copy)."""
        dt = np.dtype(dtype).newbyteorder("<")
        raw = self.read(offset, count * dt.itemsize, who)
        return raw.view(dt).astype(dt.newbyteorder("="))

    def write(self, offset: int, data: Any, who: str = "L1") -> None:
        """Write ``data`` (bytes or a numpy array, stored little-endian) at ``offset``."""
        if isinstance(data, np.ndarray):
            data = np.ascontiguousarray(data).astype(data.dtype.newbyteorder("<"), copy=False).tobytes()
        self.check(offset, len(data), who)
        self.space.write_bytes(self.base + offset, bytes(data))
        if self.signal is not None:
            self.signal.changed()

    def word(self, offset: int, who: str = "L1") -> int:
        """The 32-bit little-endian word at ``offset``."""
        self.check(offset, 4, who)
        return int.from_bytes(self.bytes[offset:offset + 4].tobytes(), "little")

    def set_word(self, offset: int, value: int, who: str = "L1") -> None:
        self.write(offset, (value & 0xFFFF_FFFF).to_bytes(4, "little"), who)

