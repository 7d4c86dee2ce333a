"""The tile extension's fault targets (the ``tessera_fault_targets`` hook).

The tile state of /work/shared/spec/tile.md §9.2 that holds data, as
:mod:`tessera_tile.state` keeps it:

* ``hartN.tiles`` — the tile register file of hart N: ``num_tiles`` registers ×
  ``tile_bytes`` bytes (§9.1 ``NUM_TILES``, ``TILE_BYTES``; entry ``[tile, byte]``, 8
  bits).  With ``tile.tile_rf_scope=pe`` the threads of a PE share one file, so the
  target is ``peN.tiles`` (no agent) instead.  The file is allocated on first use; an
  untouched one reads as zeros and a write allocates it, as a tile store would.
* ``hartN.tcsr`` — the tile CSRs of hart N (§5.4's map, or ``tile.tables``' override),
  by index and named (``hart0.tcsr[tmask]``).  The read-only ones (counters, status,
  geometry, ids) show other state and are excluded, as is ``tmode``: it selects the
  emulator's execution mode (§9.4), not data of the program.  A write stores the value
  cut to the CSR's width, as TCSRW does, without TCSRW's checks.

The harts' own CSRs are the RISC-V plugin's targets (``hartN.csr``); the staging area,
outstanding counts and engine queues are transient bookkeeping, not listed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tessera_tile.exec_control import csr_value
from tessera_tile.state import TileThread


def fault_targets(machine: Any) -> list[dict[str, Any]]:
    system = machine.ext.get("tile")
    if system is None:
        return []
    out = []
    shared_pes = set()
    for thread in system.threads.values():
        if thread.shared_rf:
            if thread.pe.index not in shared_pes:
                shared_pes.add(thread.pe.index)
                out.append(tile_file(f"pe{thread.pe.index}.tiles", None, thread,
                                     lambda t=thread: t.pe._tiles))
        else:
            out.append(tile_file(f"{thread.name}.tiles", thread.name, thread, lambda t=thread: t._tiles))
        out.append(tile_csrs(system, thread))
    return out


def tile_file(name: str, agent: str | None, thread: TileThread, stored: Any) -> dict[str, Any]:
    """The bytes of a tile register file; ``stored()`` is the array, or None before first use."""
    size = thread.num_tiles * thread.tile_bytes

    def read(index: int) -> int:
        array = stored()
        return 0 if array is None else int(array[index])

    def write(index: int, value: int) -> None:
        thread.tiles[index] = value & 0xFF     # allocates the file (the PE's, when shared)

    def values() -> Any:
        array = stored()
        return np.zeros(size, dtype=np.uint8) if array is None else array

    owner = agent or name.partition(".")[0]
    return {"name": name, "kind": "array", "shape": (thread.num_tiles, thread.tile_bytes), "bits": 8,
            "agent": agent, "read": read, "write": write, "values": values,
            "doc": f"tile register file of {owner}: {thread.num_tiles} tiles × {thread.tile_bytes} bytes "
                   "(tile.md 9.2)"}


def tile_csrs(system: Any, thread: TileThread) -> dict[str, Any]:
    """The tile CSRs of one thread, ordered by index."""
    table = sorted(system.tables.csr_map().items(), key=lambda item: item[1]["index"])
    names = [name for name, _entry in table]
    masks = [(1 << entry.get("width", 64)) - 1 for _name, entry in table]
    exclude = [i for i, (name, entry) in enumerate(table) if entry["access"] != "rw" or name == "tmode"]

    def read(index: int) -> int:
        return csr_value(system, thread, names[index])

    def write(index: int, value: int) -> None:
        if index not in exclude:
            thread.csr[names[index]] = value & masks[index]

    return {"name": f"{thread.name}.tcsr", "kind": "csr", "entries": len(names), "bits": 64,
            "agent": thread.name, "read": read, "write": write, "names": tuple(names), "exclude": exclude,
            "doc": f"tile CSRs of {thread.name} (tile.md 5.4; read-only ones and tmode excluded)"}
