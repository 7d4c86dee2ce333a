"""Tile loads/stores and atomics (tile.md 5.1, 5.2): the LSU engine's work.

**Loads and stores.**  A group of ``n`` registers from ``td`` holds ``n * tile_bytes /
granule`` granules; granule ``g`` is bytes ``[g*granule, (g+1)*granule)`` of the group.
Its memory address is ``addr + g*granule`` (unit-stride, one contiguous block),
``addr + g*stride`` (stride: GPR rs2 in bytes, or granules with ``stride_unit=32``) or
``addr + idx[g]`` (index: the staged vector's elements, of the W2's func6 width, in
bytes or granules with ``index_unit=32``); ``addr = X[rs1] + (offseten ? X[rs3] :
sext(imm))``.  ``tmask=1`` skips the granules whose CSR tmask bit ``g mod 32`` is clear:
a skipped load granule keeps the register's bytes, a skipped store granule writes
nothing.  Granule addresses must be granule-aligned (``misaligned``); every range is
checked at dispatch.

**Atomics.**  A tile atomic combines each element of one tile register (``vec_size``
wide) into ``M[addr + i*es]`` (granules masked by tmask) and, with ``rtn=1``, writes the
old values back into the register; with a result it counts as a load, without as a
store.  A scalar atomic on shared memory updates one element at ``X[rs1]`` (CAS stores
``X[rs2]`` if the old value equals ``X[rs3]``) and writes the sign-extended old value to
``rd``; it completes at dispatch in every mode (its ``rd`` must be ready for the next
instruction), without a result it is queued like a store.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tessera_tile import amo, faults
from tessera_tile.exec_base import (
    M64,
    Executor,
    check_aligned,
    check_group,
    element_size,
    granule_on,
    mask_bit,
    merge_ranges,
    offset,
    sext,
    signed64,
    tile_range,
    tilesize,
)
from tessera_tile.system import GLOBAL, SHARED


def _space(op: Any, thread: Any) -> tuple[str, int]:
    if op.params.get("space") == "shared":
        return SHARED, thread.pe.index
    return GLOBAL, 0


def _counter(space: str, load: bool) -> str:
    return ("tg" if space == GLOBAL else "ts") + ("ld" if load else "st")


class MemExecutor(Executor):
    """Unit-stride, stride and index-vector tile loads and stores."""

    unit = "lsu"

    def prepare(self, system: Any, thread: Any, op: Any, hart: Any) -> None:
        cfg, word = system.cfg, op.word
        space, index = _space(op, thread)
        load = op.params["dir"] == "load"
        mode = op.params["mode"]
        n = tilesize(system, op.f("W1.tilesize"), word)
        td = op.f("W1.td")
        check_group(system, td, n, word, "td" if load else "ts1")
        gran = cfg.granule
        count = n * cfg.tile_bytes // gran
        addr = (op.gpr("W1", "rs1") + offset(system, op, mode == "unit")) & M64
        if mode == "unit" and not op.f("W0.tmask"):     # one contiguous block: the common case
            check_aligned(system, addr, gran, not load, word, f"{op.form} granule")
            size = n * cfg.tile_bytes
            system.check_range(space, index, addr, size, not load, word, op.form)
            op.plan = {"space": space, "index": index, "td": td, "n": n, "load": load, "granules": [],
                       "block": addr}
            mem = [(space, index, addr, addr + size)]
            tiles = [tile_range(thread, td, n)]
            op.reads, op.writes = (mem, tiles) if load else (tiles, mem)
            op.keys = (_counter(space, load),)
            return
        if mode == "unit":
            addresses = [(addr + g * gran) & M64 for g in range(count)]
        elif mode == "stride":
            stride = signed64(op.gpr("W0", "rs2")) * cfg.stride_unit
            addresses = [(addr + g * stride) & M64 for g in range(count)]
        else:
            addresses = self._indexed(system, thread, op, addr, count)
        granules = [(g, a) for g, a in enumerate(addresses) if a is not None and granule_on(op, thread, g)]
        rule = f"{op.form} granule"
        for _, a in granules:
            check_aligned(system, a, gran, not load, word, rule)
        ranges = merge_ranges([(a, a + gran) for _, a in granules])
        for lo, hi in ranges:
            system.check_range(space, index, lo, hi - lo, not load, word, op.form)
        contiguous = mode == "unit" and len(granules) == count
        op.plan = {"space": space, "index": index, "td": td, "n": n, "load": load,
                   "granules": [] if contiguous else granules, "block": addr if contiguous else None}
        mem = [(space, index, lo, hi) for lo, hi in ranges]
        tiles = [tile_range(thread, td, n)]
        op.reads, op.writes = (mem, tiles) if load else (tiles, mem)
        op.keys = (_counter(space, load),)

    def _indexed(self, system: Any, thread: Any, op: Any, addr: int, count: int) -> list[int | None]:
        cfg, word = system.cfg, op.word
        func6 = op.f("W2.func6")
        entry = element_size(system, "func6_vector", None, func6 & 0x1F)
        if entry is None or entry["bits"] < 8:
            raise faults.illegal(word, f"func6 {func6:06b} is not an index element width")
        bits = entry["bits"]
        if count > cfg.vlen // bits:
            raise faults.illegal(word, f"{count} granules need {count} indices, the vector holds "
                                 f"{cfg.vlen // bits} of {bits} bits")
        masked = cfg.asp_input_masking and not func6 >> system.tables.table("func6_vector_unmasked")["bit"] & 1
        data = op.asp
        es = bits // 8
        out: list[int | None] = []
        for g in range(count):
            if masked and not mask_bit(op.asp_mask, g):
                out.append(None)
                continue
            idx = int.from_bytes(data[g * es:(g + 1) * es], "little")
            out.append((addr + idx * cfg.index_unit) & M64)
        return out

    def perform(self, system: Any, thread: Any, op: Any) -> int:
        p = op.plan
        cfg = system.cfg
        tiles = thread.tiles
        base = p["td"] * cfg.tile_bytes
        gran = cfg.granule
        size = p["n"] * cfg.tile_bytes
        if p["block"] is not None:
            if p["load"]:
                tiles[base:base + size] = np.frombuffer(system.read(p["space"], p["index"], p["block"], size),
                                                        dtype=np.uint8)
            else:
                system.write(p["space"], p["index"], p["block"], tiles[base:base + size].tobytes())
            moved = size
        else:
            for g, a in p["granules"]:
                lo = base + g * gran
                if p["load"]:
                    tiles[lo:lo + gran] = np.frombuffer(system.read(p["space"], p["index"], a, gran),
                                                        dtype=np.uint8)
                else:
                    system.write(p["space"], p["index"], a, tiles[lo:lo + gran].tobytes())
            moved = len(p["granules"]) * gran
        return system.cost.lsu(p["space"], moved)


def _atomic_op(system: Any, op: Any, bits: int) -> str:
    word = op.word
    f5 = op.f("W0.memuop") & (1 << system.tables.table("atomic_prefix")["low_bits"]) - 1
    name = system.tables.name_of("atomic", f5)
    if name is None:
        raise faults.illegal(word, f"atomic operation code {f5:05b} is reserved")
    if name in ("fadd", "fmin", "fmax", "inc", "dec") and not system.cfg.atomic_custom:
        raise faults.illegal(word, f"custom atomic {name} is disabled (tile.atomic_custom=false)")
    if name in amo.FLOAT_OPS and bits == 8:
        raise faults.illegal(word, f"atomic {name} has no 8-bit floating-point format")
    return name


def _vec_bits(system: Any, code: int) -> int:
    for bits, c in system.tables.table("vec_size").items():
        if c == code:
            return int(bits)
    raise AssertionError("vec_size covers its 2-bit field")


class TileAtomicExecutor(Executor):
    """Atomics combining every element of a tile register into memory."""

    unit = "lsu"

    def prepare(self, system: Any, thread: Any, op: Any, hart: Any) -> None:
        cfg, word = system.cfg, op.word
        space, index = _space(op, thread)
        bits = _vec_bits(system, op.f("W1.vec_size"))
        name = _atomic_op(system, op, bits)
        if name == "cas":
            raise faults.illegal(word, "compare-and-swap needs a scalar atomic (cas_en)")
        td = op.f("W1.td")
        check_group(system, td, 1, word, "td")
        addr = (op.gpr("W1", "rs1") + offset(system, op, True)) & M64
        check_aligned(system, addr, cfg.granule, True, word, op.form)
        granules = [g for g in range(cfg.granules_per_tile) if granule_on(op, thread, g)]
        ranges = merge_ranges([(addr + g * cfg.granule, addr + (g + 1) * cfg.granule) for g in granules])
        for lo, hi in ranges:
            system.check_range(space, index, lo, hi - lo, True, word, op.form)
        rtn = bool(op.f("W1.rtn"))
        op.plan = {"space": space, "index": index, "td": td, "addr": addr, "bits": bits, "op": name,
                   "rtn": rtn, "granules": granules}
        mem = [(space, index, lo, hi) for lo, hi in ranges]
        tile = [tile_range(thread, td, 1)]
        op.reads = mem + tile
        op.writes = mem + (tile if rtn else [])
        op.keys = (_counter(space, rtn),)

    def perform(self, system: Any, thread: Any, op: Any) -> int:
        p = op.plan
        cfg = system.cfg
        es = p["bits"] // 8
        dtype = np.dtype(f"<u{es}")
        tile = thread.tile(p["td"])
        for g in p["granules"]:
            lo = g * cfg.granule
            a = p["addr"] + lo
            old = np.frombuffer(system.read(p["space"], p["index"], a, cfg.granule), dtype=dtype)
            operand = tile[lo:lo + cfg.granule].view(dtype)
            new = amo.apply(p["op"], old, operand, p["bits"])
            system.write(p["space"], p["index"], a, new.astype(dtype).tobytes())
            if p["rtn"]:
                tile[lo:lo + cfg.granule] = old.view(np.uint8)
        return system.cost.lsu(p["space"], len(p["granules"]) * cfg.granule)


class ScalarAtomicExecutor(Executor):
    """One atomic element of shared memory; the result form writes rd at dispatch."""

    unit = "lsu"

    def prepare(self, system: Any, thread: Any, op: Any, hart: Any) -> None:
        word = op.word
        bits = _vec_bits(system, op.f("W1.vec_size"))
        name = _atomic_op(system, op, bits)
        cas = bool(op.f("W0.cas_en"))
        if (name == "cas") != cas:
            raise faults.illegal(word, "cas_en and the CAS operation code must go together")
        result = bool(op.params["result"])
        if cas:
            compare, disp = op.gpr("W0", "lo5"), 0
        elif result:
            if op.f("W0.lo5"):
                raise faults.illegal(word, "W0[24:20] must be 0 in a scalar atomic with a result "
                                     "unless cas_en=1")
            compare, disp = 0, 0
        else:
            compare, disp = 0, sext(op.f("W0.lo5"), 5) if system.cfg.imm_signed else op.f("W0.lo5")
        es = bits // 8
        addr = (op.gpr("W1", "rs1") + disp) & M64
        check_aligned(system, addr, es, True, word, op.form)
        index = thread.pe.index
        system.check_range(SHARED, index, addr, es, True, word, op.form)
        enabled = not op.f("W0.tmask") or bool(thread.csr["tmask"] & 1)
        op.plan = {"index": index, "addr": addr, "bits": bits, "op": name, "value": op.gpr("W0", "rs2"),
                   "compare": compare, "enabled": enabled,
                   "rd": op.f("W1.rd") if result and op.f("W1.rd_en") else 0}
        op.reads = op.writes = [(SHARED, index, addr, addr + es)]
        op.keys = (_counter(SHARED, result),)
        if result:
            op.params["sync"] = True      # rd is written before the next instruction

    def perform(self, system: Any, thread: Any, op: Any) -> int:
        p = op.plan
        es = p["bits"] // 8
        mask = (1 << p["bits"]) - 1
        old = int.from_bytes(system.read(SHARED, p["index"], p["addr"], es), "little")
        if p["enabled"]:
            if p["op"] == "cas":
                new = p["value"] & mask if old == p["compare"] & mask else old
            else:
                dtype = np.dtype(f"<u{es}")
                new = int(amo.apply(p["op"], np.array([old], dtype=dtype),
                                    np.array([p["value"] & mask], dtype=dtype), p["bits"])[0])
            system.write(SHARED, p["index"], p["addr"], new.to_bytes(es, "little"))
        p["old"] = sext(old, p["bits"]) & M64
        return system.cost.lsu(SHARED, es)
