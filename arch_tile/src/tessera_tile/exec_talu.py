"""TALU (tile.md 5.7): unary, binary-with-ASP-operand and ternary tile operations.

The operand form comes from the operation (``vecuop1`` in the tables, T2); the op code is
``{W1.op_hi, W0.op_lo}`` (6 bits) for unary and binary, ``W1.op_hi`` (4 bits) for
ternary.  The element type is CSR ``tfmt`` and the rounding CSR ``trm``, both as they are
when the operation dispatches.  A vector ASP operand (one ``vlen``-bit row) is
row-broadcast to the whole tile (T5); a scalar one (an FPR, NaN-boxed fp32 or fp64, or
a GPR's low bits with ``tile.alu_scalar_source=gpr``) is converted to ``tfmt`` and
broadcast.  With ``tmask=1`` the granules whose CSR tmask bit is clear keep their old
bytes.  Accrued flags go to ``tfflags``, saturation to the sticky ``tsat``.  The
arithmetic is :mod:`tessera_tile.numerics.talu`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tessera_tile import faults
from tessera_tile.exec_base import Executor, check_group, tile_range

_SFU = range(0x08, 0x16)


def _numerics() -> Any:
    from tessera_tile.numerics import talu

    return talu


class TaluExecutor(Executor):
    unit = "alu"

    def prepare(self, system: Any, thread: Any, op: Any, hart: Any) -> None:
        cfg, word = system.cfg, op.word
        talu = _numerics()
        from tessera_tile.numerics import formats

        form = op.params["form"]
        lo_bits = system.tables.table("talu_op_bits")["lo_bits"]
        if form == "ternary":
            code, table = op.f("W1.op_hi"), talu.TERNARY
        else:
            code = op.f("W1.op_hi") << lo_bits | op.f("W0.op_lo")
            table = talu.UNARY if form == "unary" else talu.BINARY
        if code not in table:
            raise faults.illegal(word, f"unknown TALU {form} operation {code:#04x}")
        fmt = thread.csr["tfmt"]
        if fmt not in formats.TFMT:
            raise faults.illegal(word, f"unknown data type (tfmt {fmt})")
        td, ts1 = op.f("W1.td"), op.f("W1.ts1")
        for name, t in (("td", td), ("ts1", ts1)):
            check_group(system, t, 1, word, name)
        sources = [ts1]
        b_tile = None
        flags = 0
        if form == "ternary" and not op.params.get("scalar"):
            ts2, ts3 = op.f("W0.ts2"), op.f("W0.ts3")
            check_group(system, ts2, 1, word, "ts2")
            check_group(system, ts3, 1, word, "ts3")
            sources += [ts2] + ([ts3] if code >= 0x8 else [])
        elif form != "unary":
            if form == "ternary":
                ts3 = op.f("W0.ts3")
                check_group(system, ts3, 1, word, "ts3")
                if code >= 0x8:
                    sources.append(ts3)
            b_tile, flags = self._asp_operand(system, op, fmt, thread.csr["trm"], word)
        granules = cfg.granules_per_tile
        active = (1 << granules) - 1
        if op.f("W0.tmask"):
            mask = thread.csr["tmask"]
            active = sum(1 << g for g in range(granules) if mask >> (g % 32) & 1)
        op.plan = {"form": form, "code": code, "fmt": fmt, "trm": thread.csr["trm"], "td": td,
                   "sources": sources, "b": b_tile, "flags": flags, "active": active,
                   "neg1": bool(op.fields.get("W0.neg1", 0)), "neg2": bool(op.fields.get("W0.neg2", 0))}
        op.reads = [tile_range(thread, t, 1) for t in sources] + [tile_range(thread, td, 1)]
        op.writes = [tile_range(thread, td, 1)]
        op.keys = ("alu",)

    def _asp_operand(self, system: Any, op: Any, fmt: int, trm: int, word: int) -> tuple[bytes, int]:
        """The broadcast second operand of an ASP form, as a whole tile; and conversion flags."""
        from tessera_tile.numerics import convert, formats

        cfg = system.cfg
        vector = bool(op.f("W2.vec_en"))
        want = system.tables.code("src_type", "vector" if vector else "scalar")
        if op.f("W0.src_type") != want:
            raise faults.illegal(word, "src_type disagrees with the W2's vec_en")
        if vector:
            row = bytes(op.asp)
            return row * (cfg.tile_bytes // len(row)), 0
        dst = formats.TFMT[fmt]
        value = int(op.asp)
        if cfg.alu_scalar_source == "gpr":
            element = (value & ((1 << 8 * dst.nbytes) - 1)).to_bytes(dst.nbytes, "little")
            flags = 0
        else:
            if value >> 32 == 0xFFFF_FFFF:          # a NaN-boxed single
                src, raw = formats.FP32, (value & 0xFFFF_FFFF).to_bytes(4, "little")
            else:
                src, raw = formats.FP64, value.to_bytes(8, "little")
            element, flags, _sat = convert.convert(raw, src, dst, trm=trm)
        return element * (cfg.tile_bytes // len(element)), flags

    def perform(self, system: Any, thread: Any, op: Any) -> int:
        talu = _numerics()
        cfg = system.cfg
        p = op.plan
        dest = thread.tile(p["td"])
        old = dest.tobytes()
        a = thread.tile(p["sources"][0]).tobytes()
        common = {"fmt": p["fmt"], "trm": p["trm"], "row_bytes": cfg.row_bytes,
                  "active_granules": p["active"], "granule": cfg.granule}
        if p["form"] == "unary":
            r = talu.unary(p["code"], a, old, neg=p["neg1"], **common)
        elif p["form"] == "binary":
            r = talu.binary(p["code"], a, p["b"], old, neg1=p["neg1"], neg2=p["neg2"], **common)
        else:
            b = p["b"] if p["b"] is not None else thread.tile(p["sources"][1]).tobytes()
            c_index = p["sources"][-1] if p["code"] >= 0x8 else None
            c = thread.tile(c_index).tobytes() if c_index is not None else bytes(len(a))
            r = talu.ternary(p["code"], a, b, c, old, **common)
        data = np.frombuffer(r.data, dtype=np.uint8)
        full = (1 << cfg.granules_per_tile) - 1
        if p["active"] == full:
            dest[:] = data
        else:
            g = cfg.granule
            for i in range(cfg.granules_per_tile):
                if p["active"] >> i & 1:
                    dest[i * g:(i + 1) * g] = data[i * g:(i + 1) * g]
        thread.csr["tfflags"] |= r.fflags | p["flags"]
        if r.saturated:
            thread.csr["tsat"] = 1
        rows = cfg.tile_bytes // cfg.row_bytes
        return system.cost.alu(rows, p["form"] == "unary" and p["code"] in _SFU)
