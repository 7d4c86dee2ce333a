"""Tile Move (tile.md 5.6): W2 (mvop, func6, bc, CPU register) then W0 (tile, index).

``mvop`` says the direction (bit 0: into the tile) and the CPU side (vector, GPR, FPR);
``func6`` is decoded *per direction* (E5) in the table of that CPU side.  The index is
the immediate ``W0[19:15]`` or, with ``rs2_en``, GPR ``rs2``.

* vector: the tile is ``tile_bytes / (vlen/8)`` chunks; chunk ``index`` <-> the vector
  register (``bc``: every chunk).  ``func6[5]=0`` masks by ``v0`` at the func6 element
  size: unselected elements of the destination are left alone.  The nibble forms move
  ``vlen/16`` tile bytes at chunk offset ``index * vlen/16``: unpacked into one byte per
  nibble (low nibble first) on the way out, packed from the low nibbles on the way in.
* GPR / FPR scalars: element ``index`` in units of the func6 size (nibbles: low nibble
  first); ``bc`` fills every element.  Out of the tile, GPRs are zero- or sign-extended
  as func6 says and FPRs NaN-boxed (fp16/fp32 in a 64-bit FPR, RISC-V F/D).

A move is synchronous: the CPU register holds the value when the W0 retires.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tessera_tile import faults
from tessera_tile.exec_base import M64, Executor, element_size, mask_bit, sext, tile_range


class MoveExecutor(Executor):
    def prepare(self, system: Any, thread: Any, op: Any, hart: Any) -> None:
        word = op.word
        tables = system.tables
        kind = tables.name_of("mvop", op.f("W2.mvop"))
        if kind is None:
            raise faults.illegal(word, f"reserved mvop {op.f('W2.mvop'):03b}")
        side, direction = kind.split(".")
        func6 = op.f("W2.func6")
        table = {"vec": "func6_vector", "gpr": "func6_gpr", "fpr": "func6_fpr"}[side]
        code = func6 & 0x1F if side == "vec" else func6
        entry = element_size(system, table, direction, code)
        if entry is None:
            raise faults.illegal(word, f"func6 {func6:06b} is not a {side} move {direction} the tile")
        tile = op.f("W0.tile")
        if tile >= system.cfg.num_tiles:
            raise faults.illegal(word, f"tile t{tile} is beyond the {system.cfg.num_tiles} tile registers")
        index = op.gpr("W0", "index") if op.f("W0.rs2_en") else op.f("W0.index")
        bc = bool(op.f("W2.bc"))
        if bc and direction == "out":
            raise faults.illegal(word, "bc (broadcast) only applies to moves into the tile")
        bits = entry["bits"]
        chunk = thread.vlen_bytes
        if side == "vec":
            unit = chunk // 2 if bits == 4 else chunk
            count = system.cfg.tile_bytes // unit
        else:
            count = system.cfg.tile_bytes * 8 // bits
        if not bc and index >= count:
            raise faults.illegal(word, f"move index {index} is beyond the {count} "
                                 f"{'chunks' if side == 'vec' else 'elements'} of a tile")
        masked = side == "vec" and not func6 >> tables.table("func6_vector_unmasked")["bit"] & 1
        op.plan = {"side": side, "into": direction == "into", "bits": bits, "signed": entry.get("signed", False),
                   "tile": tile, "index": index, "bc": bc, "masked": masked, "reg": op.f("W2.reg")}
        rng = [tile_range(thread, tile, 1)]
        op.reads, op.writes = ([], rng) if direction == "into" else (rng, [])

    def run(self, system: Any, thread: Any, op: Any, hart: Any) -> None:
        if system.checker is not None and system.checker.groups:
            system.checker.check_op(op)
        p = op.plan
        tile = thread.tile(p["tile"])
        if p["side"] == "vec":
            self._vector(thread, op, tile)
        elif p["into"]:
            self._scalar_in(tile, p, op.asp)
        else:
            value = self._scalar_out(tile, p)
            if p["side"] == "gpr":
                if p["reg"]:
                    hart.x[p["reg"]] = value & M64
            else:
                thread.fpr[p["reg"]] = value

    # ------------------------------------------------------------------ vector
    def _vector(self, thread: Any, op: Any, tile: np.ndarray) -> None:
        p = op.plan
        chunk = thread.vlen_bytes
        es = max(1, p["bits"] // 8)
        mask = op.asp_mask if p["into"] else thread.vreg(0)
        if p["bits"] == 4:
            half = chunk // 2
            if p["into"]:
                src = np.frombuffer(op.asp, dtype=np.uint8)
                packed = (src[0::2] & 0xF) | (src[1::2] & 0xF) << 4
                for i in range(tile.size // half) if p["bc"] else [p["index"]]:
                    self._merge(tile[i * half:(i + 1) * half], packed.astype(np.uint8), mask, p["masked"], 1)
            else:
                lo = p["index"] * half
                packed = tile[lo:lo + half]
                out = np.empty(chunk, dtype=np.uint8)
                out[0::2], out[1::2] = packed & 0xF, packed >> 4
                dest = thread.vregs[p["reg"]]
                self._merge(dest, out, mask, p["masked"], 1)
            return
        if p["into"]:
            src = np.frombuffer(op.asp, dtype=np.uint8)
            for i in range(tile.size // chunk) if p["bc"] else [p["index"]]:
                self._merge(tile[i * chunk:(i + 1) * chunk], src, mask, p["masked"], es)
        else:
            lo = p["index"] * chunk
            self._merge(thread.vregs[p["reg"]], tile[lo:lo + chunk].copy(), mask, p["masked"], es)

    @staticmethod
    def _merge(dest: np.ndarray, src: np.ndarray, mask: bytes | None, masked: bool, es: int) -> None:
        if not masked:
            dest[:] = src
            return
        for e in range(dest.size // es):
            if mask_bit(mask, e):
                dest[e * es:(e + 1) * es] = src[e * es:(e + 1) * es]

    # ------------------------------------------------------------------ scalars
    @staticmethod
    def _scalar_in(tile: np.ndarray, p: dict[str, Any], value: int) -> None:
        bits = p["bits"]
        count = tile.size * 8 // bits
        targets = range(count) if p["bc"] else [p["index"]]
        if bits == 4:
            nib = value & 0xF
            for i in targets:
                b = int(tile[i >> 1])
                tile[i >> 1] = (b & 0xF0 | nib) if not i & 1 else (b & 0x0F | nib << 4)
            return
        es = bits // 8
        data = np.frombuffer((value & ((1 << bits) - 1)).to_bytes(es, "little"), dtype=np.uint8)
        if p["bc"]:
            tile[:] = np.tile(data, tile.size // es)
        else:
            tile[p["index"] * es:(p["index"] + 1) * es] = data

    @staticmethod
    def _scalar_out(tile: np.ndarray, p: dict[str, Any]) -> int:
        bits = p["bits"]
        i = p["index"]
        if bits == 4:
            raw = int(tile[i >> 1]) >> (4 * (i & 1)) & 0xF
        else:
            es = bits // 8
            raw = int.from_bytes(tile[i * es:(i + 1) * es].tobytes(), "little")
        if p["side"] == "fpr":
            return raw | (M64 ^ ((1 << bits) - 1)) if bits < 64 else raw   # NaN-boxing
        return sext(raw, bits) & M64 if p["signed"] else raw
