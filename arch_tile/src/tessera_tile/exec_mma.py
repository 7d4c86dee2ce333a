"""MMA async (tile.md 5.5): D op= A x B on whole tiles, with the numerics of tessera_tile.numerics.

``n = tilesize`` registers: with ``multitile=0`` (``tile.multitile_extends=n``) the
operation extends N — ``D[td+i] op= A[ts1] x B[ts2+i]`` — and with ``multitile=1`` it
extends M — ``D[td+i] op= A[ts1+i] x B[ts2]``.  A memory operand (``memmata`` /
``memmatb``) replaces register ``j`` of that operand by the tile image at
``shared[X[rs] + j*tile_bytes]`` of the thread's PE.  ``transmatb=0`` means B is stored
K-major (tile.md M1; ``tile.mma_b_layout=row-major`` flips it).  The reuse bits are
operand-cache hints without a functional effect.  The element arithmetic — one
rounding per element, integer wrap, negation — is :func:`tessera_tile.numerics.mma.mma`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tessera_tile import faults
from tessera_tile.exec_base import M64, Executor, check_group, tile_range, tilesize
from tessera_tile.system import SHARED


def mma_types() -> dict[int, Any]:
    from tessera_tile.numerics.mma import MMA_TYPES

    return MMA_TYPES


class MmaExecutor(Executor):
    unit = "mma"

    def prepare(self, system: Any, thread: Any, op: Any, hart: Any) -> None:
        cfg, word = system.cfg, op.word
        code = op.f("W0.mmauop")
        mtype = mma_types().get(code)
        if mtype is None:
            raise faults.illegal(word, f"unknown MMA data type (mmauop {code:#04x})")
        n = tilesize(system, op.f("W0.tilesize"), word)
        extend_m = bool(op.f("W0.multitile")) == (cfg.multitile_extends == "n")
        td = op.f("W1.td")
        check_group(system, td, n, word, "td")
        tb = cfg.tile_bytes
        operands: dict[str, Any] = {}
        reads = []
        for name, w, tfield, gfield, steps in (("a", "W1", "ts1", "rs1", extend_m),
                                                ("b", "W0", "ts2", "rs2", not extend_m)):
            count = n if steps else 1
            if op.params[name] == "tile":
                first = op.f(f"{w}.{tfield}")
                check_group(system, first, count, word, tfield)
                operands[name] = ("tile", first, steps)
                reads.append(tile_range(thread, first, count))
            else:
                addr = op.gpr(w, gfield) & M64
                system.check_range(SHARED, thread.pe.index, addr, count * tb, False, word,
                                   f"{op.form} {name.upper()} operand")
                operands[name] = ("memory", addr, steps)
                reads.append((SHARED, thread.pe.index, addr, addr + count * tb))
        trans_b = bool(op.f("W0.transmatb")) != (cfg.mma_b_layout == "row-major")
        op.plan = {"code": code, "n": n, "td": td, "a": operands["a"], "b": operands["b"],
                   "trans_a": bool(op.f("W1.transmata")), "trans_b": trans_b,
                   "neg_a": bool(op.f("W1.neg1")), "neg_d": bool(op.f("W0.negd")),
                   "in_bits": mtype.a.bits}
        op.reads = reads + [tile_range(thread, td, n)]
        op.writes = [tile_range(thread, td, n)]
        op.keys = ("mma",)

    def perform(self, system: Any, thread: Any, op: Any) -> int:
        from tessera_tile.numerics.mma import mma

        p = op.plan
        cfg = system.cfg
        tb = cfg.tile_bytes

        def operand(spec: Any, i: int) -> bytes:
            where, first, steps = spec
            j = i if steps else 0
            if where == "tile":
                return thread.tile(first + j).tobytes()
            return system.read(SHARED, thread.pe.index, first + j * tb, tb)

        for i in range(p["n"]):
            dest = thread.tile(p["td"] + i)
            out = mma(dest.tobytes(), operand(p["a"], i), operand(p["b"], i), p["code"],
                      trans_a=p["trans_a"], trans_b=p["trans_b"], neg_a=p["neg_a"], neg_d=p["neg_d"],
                      row_bytes=cfg.row_bytes)
            dest[:] = np.frombuffer(out, dtype=np.uint8)
        k = cfg.row_bytes * 8 // p["in_bits"]
        return system.cost.mma(p["in_bits"], k, p["n"])
