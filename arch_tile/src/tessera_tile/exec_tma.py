"""TMA tensor copies (tile.md 5.3, X1-X5, 9.5): the TMA engine's work.

Words: W2 (the coord/size vector), W1 (tmauop, dim, dsttm/srctm, dst/src GPRs,
dstloc/srcloc), W0 (completeobj, multicastl2, tmask, completion).

* **linear** (``tmauop`` linear): ``lane 0`` bytes from ``X[src]`` to ``X[dst]``; the
  size and any shared/L2B address must be 32-byte multiples.
* **tiled load** (``srctm=1``): ``X[src]`` is the address of a tensor map in global
  memory (our 128-byte layout, ``codes.toml [tensor_map]``; its rank must be ``dim+1``,
  1 to 4 — the 2-bit field cannot say 5).  The box (lanes 4-7 override the map's box
  when non-zero) at the signed coordinates of lanes 0-3 is gathered densely, row-major
  with dimension 0 innermost, to ``X[dst]``.  Out-of-bounds elements are filled (zero,
  or NaN — all ones but the sign — with the map's flag bit 0) and count as transferred.
* **tiled store** (``dsttm=1``): the reverse; out-of-bounds elements are skipped.
* **multicastl2=1**: the destination (shared memory) is written in every PE of the
  cluster at the same offset, and an mbarrier completion is signalled on the mbarrier at
  the same offset in each of them.
* **tmask=1**: destination granule ``g`` (32 bytes counted from the start of the dense
  box) is written only if CSR tmask bit ``g mod 32`` is set.
* **completion**: bulk group (``completeobj`` = group id, waited by ``t_wait`` TMA), an
  mbarrier (``completeobj`` names the GPR holding its local address; the engine performs
  ``complete_tx(bytes)`` there, or one arrive with ``tile.tma_mbar_mode=arrive``), or a
  semaphore (``completeobj`` = index; ``M64[tsem_base + 8*index] += 1``).

The tensor map and every address are read and checked at dispatch.
"""

from __future__ import annotations

from typing import Any

from tessera_tile import faults, mbarrier
from tessera_tile.exec_base import M64, Executor, check_aligned, merge_ranges, sext
from tessera_tile.system import GLOBAL, L2B, SHARED

_ALIGN = 32


def _lanes(vector: bytes, bits: int) -> list[int]:
    step = bits // 8
    return [int.from_bytes(vector[i:i + step], "little") for i in range(0, len(vector) - step + 1, step)]


def _u(data: bytes, offset: int, size: int) -> int:
    return int.from_bytes(data[offset:offset + size], "little")


def _fill(elem: int, nan: bool) -> bytes:
    if not nan:
        return bytes(elem)
    return ((1 << (8 * elem - 1)) - 1).to_bytes(elem, "little")


class TmaExecutor(Executor):
    unit = "tma"

    def _loc(self, thread: Any, name: str) -> tuple[str, int]:
        if name == "shared":
            return SHARED, thread.pe.index
        if name == "l2b":
            return L2B, thread.cluster.index
        return GLOBAL, 0

    def prepare(self, system: Any, thread: Any, op: Any, hart: Any) -> None:
        cfg, word, tables = system.cfg, op.word, system.tables
        mode = tables.name_of("tmauop", op.f("W1.tmauop"))
        dstloc = tables.name_of("dstloc", op.f("W1.dstloc"))
        srcloc = tables.name_of("srcloc", op.f("W1.srcloc"))
        completion = tables.name_of("completion", op.f("W0.completion"))
        for what, value in (("tmauop", mode), ("dstloc", dstloc), ("srcloc", srcloc),
                            ("completion", completion)):
            if value is None:
                raise faults.illegal(word, f"TMA {what} code is reserved")
        assert mode is not None and dstloc is not None and srcloc is not None and completion is not None
        dims = op.f("W1.dim") + 1
        if dims > cfg.tma_dims:
            raise faults.illegal(word, f"TMA of {dims} dimensions (at most {cfg.tma_dims})")
        lane_spec = tables.table("coord_vector")
        lanes = _lanes(bytes(op.asp), lane_spec["lane_bits"])
        src_kind, src_index = self._loc(thread, srcloc)
        dst_kind, dst_index = self._loc(thread, dstloc)
        multicast = bool(op.f("W0.multicast"))
        if multicast and dst_kind != SHARED:
            raise faults.illegal(word, "multicastl2 needs a shared-memory destination")
        dests = ([(SHARED, pe.index) for pe in thread.cluster.pes] if multicast else [(dst_kind, dst_index)])
        src_addr, dst_addr = op.gpr("W1", "src") & M64, op.gpr("W1", "dst") & M64
        srctm, dsttm = bool(op.f("W1.srctm")), bool(op.f("W1.dsttm"))
        plan: dict[str, Any] = {"dests": dests, "tmask": op.f("W0.tmask"), "mask": thread.csr["tmask"]}
        if mode == "linear":
            if srctm or dsttm:
                raise faults.illegal(word, "a linear TMA takes no tensor map")
            n = lanes[lane_spec["bytes"]]
            if n % _ALIGN:
                raise faults.illegal(word, f"linear TMA size {n} is not a multiple of {_ALIGN}")
            for kind, addr, write in ((src_kind, src_addr, False), (dst_kind, dst_addr, True)):
                if kind != GLOBAL:
                    check_aligned(system, addr, _ALIGN, write, word, "TMA")
            system.check_range(src_kind, src_index, src_addr, n, False, word, "TMA source")
            for kind, index in dests:
                system.check_range(kind, index, dst_addr, n, True, word, "TMA destination")
            plan.update(mode="linear", src=(src_kind, src_index, src_addr), dst=dst_addr, total=n,
                        segments=[(0, src_addr, n)], fills=[])
            op.reads = [(src_kind, src_index, src_addr, src_addr + n)]
            op.writes = [(k, i, dst_addr, dst_addr + n) for k, i in dests]
        else:
            if srctm == dsttm:
                raise faults.illegal(word, "a tiled TMA has exactly one tensor-map side (srctm or dsttm)")
            self._tiled(system, thread, op, plan, lanes, dims, srctm, (src_kind, src_index, src_addr),
                        (dst_kind, dst_index, dst_addr), dests)
        self._completion(system, thread, op, plan, completion, dests, multicast)
        op.plan = plan

    def _tiled(self, system: Any, thread: Any, op: Any, plan: dict[str, Any], lanes: list[int], dims: int,
               load: bool, src: tuple[str, int, int], dst: tuple[str, int, int],
               dests: list[tuple[str, int]]) -> None:
        word = op.word
        tm = system.tables.table("tensor_map")
        cv = system.tables.table("coord_vector")
        map_addr = src[2] if load else dst[2]
        if (src if load else dst)[0] != GLOBAL:
            raise faults.illegal(word, "a tensor map lives in global memory (srcloc/dstloc of its side "
                                 "must be global)")
        system.check_range(GLOBAL, 0, map_addr, tm["size"], False, word, "tensor map")
        raw = system.read(GLOBAL, 0, map_addr, tm["size"])
        elem, rank = _u(raw, tm["elem_bytes"], 4), _u(raw, tm["rank"], 4)
        if rank != dims:
            raise faults.illegal(word, f"tensor map rank {rank} differs from the TMA's {dims} dimensions")
        if elem not in (1, 2, 4, 8):
            raise faults.illegal(word, f"tensor map element size {elem} is not 1, 2, 4 or 8")
        base = _u(raw, tm["base"], 8)
        extent = [_u(raw, tm["dims"] + 8 * d, 8) for d in range(rank)]
        strides = [elem] + [_u(raw, tm["strides"] + 8 * d, 8) for d in range(1, rank)]
        box = []
        for d in range(rank):
            override = lanes[cv["box"] + d]
            box.append(override or _u(raw, tm["box"] + 4 * d, 4))
        if not all(box):
            raise faults.illegal(word, f"TMA box {box} has an empty dimension")
        coords = [sext(lanes[cv["coords"] + d], cv["lane_bits"]) for d in range(rank)]
        nan = bool(_u(raw, tm["flags"], 4) & 1)
        row = box[0] * elem
        rows = 1
        for b in box[1:]:
            rows *= b
        total = rows * row
        segments: list[tuple[int, int, int]] = []      # (dense offset, global address, bytes)
        fills: list[tuple[int, int]] = []              # (dense offset, bytes) out of bounds
        for r in range(rows):
            dense = r * row
            rest, addr, outside = r, base, False
            for d in range(1, rank):
                c = coords[d] + rest % box[d]
                rest //= box[d]
                if not 0 <= c < extent[d]:
                    outside = True
                addr += c * strides[d]
            lo, hi = max(coords[0], 0), min(coords[0] + box[0], extent[0])
            if outside or lo >= hi:
                fills.append((dense, row))
                continue
            pre = (lo - coords[0]) * elem
            if pre:
                fills.append((dense, pre))
            segments.append((dense + pre, (addr + lo * elem) & M64, (hi - lo) * elem))
            post = row - pre - (hi - lo) * elem
            if post:
                fills.append((dense + row - post, post))
        dense_kind, dense_index, dense_addr = dst if load else src
        if dense_kind != GLOBAL:
            check_aligned(system, dense_addr, _ALIGN, load, word, "TMA")
        tensor_ranges = merge_ranges([(a, a + n) for _, a, n in segments])
        for lo_, hi_ in tensor_ranges:
            system.check_range(GLOBAL, 0, lo_, hi_ - lo_, not load, word, "TMA tensor")
        if load:
            for kind, index in dests:
                system.check_range(kind, index, dense_addr, total, True, word, "TMA destination")
            op.reads = [(GLOBAL, 0, lo_, hi_) for lo_, hi_ in tensor_ranges]
            op.writes = [(k, i, dense_addr, dense_addr + total) for k, i in dests]
        else:
            system.check_range(dense_kind, dense_index, dense_addr, total, False, word, "TMA source")
            op.reads = [(dense_kind, dense_index, dense_addr, dense_addr + total)]
            op.writes = [(GLOBAL, 0, lo_, hi_) for lo_, hi_ in tensor_ranges]
        plan.update(mode="load" if load else "store", dense=(dense_kind, dense_index, dense_addr),
                    dst=dense_addr, total=total, segments=segments, fills=fills, fill=_fill(elem, nan))

    def _completion(self, system: Any, thread: Any, op: Any, plan: dict[str, Any], completion: str,
                    dests: list[tuple[str, int]], multicast: bool) -> None:
        word = op.word
        obj = op.f("W0.completeobj")
        plan["group"] = None
        if completion == "bulk":
            plan["group"] = obj
            op.keys = ("tma", "tma.bulk", f"tma.g{obj}")
            return
        op.keys = ("tma",)
        if completion == "sem":
            if obj >= system.cfg.num_semaphores:
                raise faults.illegal(word, f"semaphore {obj} does not exist ({system.cfg.num_semaphores})")
            address = (thread.csr["tsem_base"] + 8 * obj) & M64
            check_aligned(system, address, 8, True, word, "TMA semaphore")
            system.check_range(GLOBAL, 0, address, 8, True, word, "TMA semaphore")
            plan["sem"] = (obj, address)
            return
        kind, index, off = system.local_space(thread, op.gpr("W0", "completeobj") & M64)
        places = [(SHARED, i, off) for _, i in dests] if multicast and kind == SHARED else [(kind, index, off)]
        for k, i, o in places:
            check_aligned(system, o, 8, True, word, "TMA mbarrier")
            system.check_range(k, i, o, 8, True, word, "TMA mbarrier")
        plan["mbar"] = places

    # ------------------------------------------------------------------ the copy
    def perform(self, system: Any, thread: Any, op: Any) -> int:
        p = op.plan
        total = p["total"]
        g = system.cfg.granule
        keep = None
        if p["tmask"]:
            keep = [bool(p["mask"] >> (i % 32) & 1) for i in range(-(-total // g))]
        if p["mode"] == "store":
            dense = system.read(*p["dense"], total)
            for off, addr, n in p["segments"]:
                self._write(system, (GLOBAL, 0), addr, dense[off:off + n], off, keep, g)
        else:
            if p["mode"] == "linear":
                data = bytearray(system.read(*p["src"], total))
            else:
                data = bytearray(total)
                for off, n in p["fills"]:
                    data[off:off + n] = (p["fill"] * (n // len(p["fill"]) + 1))[:n]
                for off, addr, n in p["segments"]:
                    data[off:off + n] = system.read(GLOBAL, 0, addr, n)
            for dest in p["dests"]:
                self._write(system, dest, p["dst"], bytes(data), 0, keep, g)
        self._complete(system, p, total)
        return system.cost.tma(total, len(p["dests"]))

    @staticmethod
    def _write(system: Any, dest: tuple[str, int], addr: int, data: bytes, dense_off: int,
               keep: list[bool] | None, g: int) -> None:
        if keep is None:
            system.write(dest[0], dest[1], addr, data)
            return
        i = 0
        while i < len(data):
            gi = (dense_off + i) // g
            span = min(len(data) - i, (gi + 1) * g - dense_off - i)
            if keep[gi]:
                system.write(dest[0], dest[1], addr + i, data[i:i + span])
            i += span

    @staticmethod
    def _complete(system: Any, p: dict[str, Any], total: int) -> None:
        if p.get("sem") is not None:
            _, address = p["sem"]
            value = int.from_bytes(system.read(GLOBAL, 0, address, 8), "little")
            system.write(GLOBAL, 0, address, ((value + 1) & M64).to_bytes(8, "little"))
            system.sem_event.signalled()
        for kind, index, off in p.get("mbar") or []:
            packing = system.mbar_packing
            state = packing.unpack(int.from_bytes(system.read(kind, index, off, packing.size), "little"))
            if system.cfg.tma_mbar_mode == "arrive":
                mbarrier.arrive(state)
            else:
                mbarrier.complete_tx(state, total)
            system.write(kind, index, off, packing.pack(state).to_bytes(packing.size, "little"))
