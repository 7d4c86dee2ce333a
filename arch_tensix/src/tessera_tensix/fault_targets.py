"""Tensix's fault targets (the ``tessera_fault_targets`` hook): the core's register files.

None of them is a declared register file — they are numpy arrays of the core the
threads share (``machine.ext["tensix"]``), so the targets have no agent:

* ``sfpu.lreg`` — the vector unit's LRegs, LReg[0..16] × 32 lanes of 32 bits
  (tensix-sfpu.md §2; entry ``[reg, lane]``);
* ``dest`` — Dest, 1024 rows × 16 columns of 16-bit cells in its stored layout
  (a 32-bit datum is two cells; ``[row, column]``);
* ``srca``, ``srcb`` — SrcA and SrcB, 2 banks × 64 rows × 16 columns of 19-bit cells
  (SrcASrcB.md; ``[bank, row, column]``).

Entries are written in place, as the units write them, so a running kernel sees the
fault at its next read.
"""

from __future__ import annotations

from typing import Any


def fault_targets(machine: Any) -> list[dict[str, Any]] | None:
    core = machine.ext.get("tensix")
    if core is None:
        return None
    return [
        cells("sfpu.lreg", "lanes", lambda: core.sfpu.lreg, 32, "LReg[0..16] of the vector unit, 32 lanes each"),
        cells("dest", "array", lambda: core.dest.bits, 16, "Dest: 1024 rows × 16 columns of 16-bit cells"),
        cells("srca", "array", lambda: core.srca.rows, 19, "SrcA: 2 banks × 64 rows × 16 columns of 19-bit cells"),
        cells("srcb", "array", lambda: core.srcb.rows, 19, "SrcB: 2 banks × 64 rows × 16 columns of 19-bit cells"),
    ]


def cells(name: str, kind: str, array: Any, bits: int, doc: str) -> dict[str, Any]:
    """A target over every cell of a numpy array (looked up at each access: never a stale view)."""
    mask = (1 << bits) - 1

    def read(index: int) -> int:
        return int(array().flat[index])

    def write(index: int, value: int) -> None:
        array().flat[index] = value & mask

    def values() -> list[int]:
        return array().reshape(-1).tolist()

    return {"name": name, "kind": kind, "shape": tuple(array().shape), "bits": bits, "read": read,
            "write": write, "values": values, "doc": doc}
