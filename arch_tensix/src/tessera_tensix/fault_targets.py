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

Configuration registers, by index (:mod:`tessera_tensix.cfgregs`; BackendConfiguration.md
of BlackholeA0/WormholeB0 TensixTile/TensixCoprocessor):

* ``cfg`` — ``Config[2][CFG_STATE_SIZE*4]``, 2 banks × the chip's register count of 32
  bits (``[bank, index]``); bank 1's registers at or above ``GLOBAL_CFGREG_BASE_ADDR32``
  are bank 0's (one value shared by both banks), so they are excluded;
* ``tN.tcfg`` — ``ThreadConfig[N][THD_STATE_SIZE]`` of Tensix thread N, 16 bits each.

A fault changes the stored bits only: unlike a WRCFG it neither resets a bank
(``STATE_RESET_EN``) nor re-seeds the PRNGs.

On a tile board (:mod:`tessera_tensix.tile`), the instruction FIFO of each Tensix thread
(BlackholeA0 TensixTile/BabyRISCV/PushTensixInstruction.md): ``tN.fifo``, 32 slots of
32-bit instructions, slot 0 the next to issue (see :func:`fifo_target`).
"""

from __future__ import annotations

from typing import Any

from tessera_tensix import cfgregs
from tessera_tensix.tile.fifo import ACCEPTS_AT_MOST

#: slots of a thread's instruction FIFO (PushTensixInstruction.md: it holds 32 instructions,
#: taking a push while it holds at most 28 — the four above are for fused pushes)
FIFO_SLOTS = ACCEPTS_AT_MOST + 4


def fault_targets(machine: Any) -> list[dict[str, Any]]:
    core = machine.ext.get("tensix")
    if core is None:
        return []
    return [
        cells("sfpu.lreg", "lanes", lambda: core.sfpu.lreg, 32, "LReg[0..16] of the vector unit, 32 lanes each"),
        cells("dest", "array", lambda: core.dest.bits, 16, "Dest: 1024 rows × 16 columns of 16-bit cells"),
        cells("srca", "array", lambda: core.srca.rows, 19, "SrcA: 2 banks × 64 rows × 16 columns of 19-bit cells"),
        cells("srcb", "array", lambda: core.srcb.rows, 19, "SrcB: 2 banks × 64 rows × 16 columns of 19-bit cells"),
        config_target(core),
        *(thread_config_target(thread) for thread in core.threads),
        *fifo_targets(machine),
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


def config_target(core: Any) -> dict[str, Any]:
    """``Config[bank][index]`` as 32-bit words (the shared global registers once, in bank 0)."""
    rmap = cfgregs.register_map(core.chip)
    words = rmap.cfg_words

    def read(index: int) -> int:
        return cfgregs.read_cfg(core, index // words, index % words)

    def write(index: int, value: int) -> None:
        bank, reg = divmod(index, words)
        space, key = cfgregs.config_space(core, bank, reg, rmap)
        _store(space.fields, rmap.cfg[reg], rmap.cfg_covered[reg], cfgregs.banks(core).loose,
               ("cfg", key, reg), value & cfgregs.MASK32)

    return {"name": "cfg", "kind": "array", "shape": (2, words), "bits": 32, "read": read, "write": write,
            "exclude": [words + i for i in range(rmap.global_base, words)],
            "doc": f"configuration registers Config[2][{words}] of 32 bits (bank 1's global "
                   f"registers {rmap.global_base}.. are bank 0's, excluded)"}


def thread_config_target(thread: Any) -> dict[str, Any]:
    """``ThreadConfig[tid][index]`` of one Tensix thread, 16 bits each."""
    rmap = cfgregs.register_map(thread.core.chip)

    def read(index: int) -> int:
        return cfgregs.read_tcfg(thread, index)

    def write(index: int, value: int) -> None:
        _store(thread.tcfg.fields, rmap.tcfg[index], rmap.tcfg_covered[index], cfgregs.banks(thread.core).loose,
               ("tcfg", thread.tid, index), value & 0xFFFF)

    return {"name": f"{thread.name}.tcfg", "kind": "array", "entries": rmap.tcfg_words, "bits": 16,
            "agent": thread.name, "read": read, "write": write,
            "doc": f"thread configuration registers ThreadConfig[{thread.tid}][{rmap.tcfg_words}] of 16 bits"}


def _store(fields: dict[str, int], layout: Any, covered: int, loose: dict[Any, int], key: Any, value: int) -> None:
    """Split ``value`` into the register's fields and its loose bits — no write side effects."""
    for name, shift, mask in layout:
        fields[name] = (value >> shift) & mask
    rest = value & ~covered
    if rest or key in loose:
        loose[key] = rest


def fifo_targets(machine: Any) -> list[dict[str, Any]]:
    tile = machine.ext.get("tensix_tile")
    return [fifo_target(fifo) for fifo in tile.fifos] if tile is not None else []


def fifo_target(fifo: Any) -> dict[str, Any]:
    """The instructions waiting in one thread's FIFO, slot 0 the oldest (the next to issue).

    The target lists the FIFO's capacity; a slot beyond the queued instructions reads 0
    and writing it changes nothing (no instruction is there to corrupt).  Writing a
    queued slot replaces its instruction word, keeping who pushed it and from where.
    """
    thread = fifo.thread

    def read(index: int) -> int:
        return fifo.items[index][0] if index < len(fifo.items) else 0

    def write(index: int, value: int) -> None:
        if index < len(fifo.items):
            _word, pc, core = fifo.items[index]
            fifo.items[index] = (value & 0xFFFF_FFFF, pc, core)

    def values() -> list[int]:
        return [w for w, _pc, _core in fifo.items] + [0] * (FIFO_SLOTS - len(fifo.items))

    return {"name": f"{thread.name}.fifo", "kind": "array", "entries": FIFO_SLOTS, "bits": 32,
            "agent": thread.name, "read": read, "write": write, "values": values,
            "doc": f"instruction FIFO of Tensix {thread.name.upper()}: {FIFO_SLOTS} slots of pushed "
                   "instructions, 0 issues next; an empty slot reads 0 and ignores writes"}
