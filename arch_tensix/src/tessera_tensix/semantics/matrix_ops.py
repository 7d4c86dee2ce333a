"""The matrix unit's (FPU's) arithmetic instructions: MVMUL, DOTPV, GAPOOL, ELWMUL, ELWADD,
ELWSUB, GMPOOL.

Functional models of the Wormhole B0 pages of the same names (Blackhole has no pages
of its own and shares them: spec tensix.md §1.1; its field positions differ and come
from the chip's table).  Each instruction:

1. waits at the wait gate until the matrix unit's SrcA *and* SrcB banks belong to the
   matrix unit (the thread parks, naming the bank; a SETDVALID / UNPACR wakes it);
2. picks the styles from the configuration: ``FP16A_FORCE_Enable`` (FP16, 16-bit Dst),
   else ``ALU_ACC_CTRL_INT8_math_enabled`` (integer "8" into integer "32"), else SrcA's
   format (``ALU_FORMAT_SPEC_REG_SrcA_val`` when overridden, else ``…REG0_SrcA``) gives
   BF16 / FP16 / TF32 and ``ALU_ACC_CTRL_Fp32_enabled`` a 32-bit Dst;
3. reads its SrcA/SrcB rows at the RWC positions (aligned as the pages mask them) and
   its Dest rows (``DstRow + DEST_TARGET_REG_CFG_MATH_Offset + RWC.Dst +
   DEST_REGW_BASE_Base``, aligned), computes on whole blocks with
   :mod:`tessera_tensix.matrix`, and writes Dest (rows become defined; undefined rows
   read as zero, or as all ones for GMPOOL);
4. flips the banks its FlipSrcA / FlipSrcB bits select
   (:func:`tessera_tensix.matrixbanks.flip_matrix_banks`) and applies its ADDR_MOD
   (fidelity phase included).

The fidelity phase is ``(RWC.FidelityPhase + FIDELITY_BASE_Phase) & 3``.  One backend
configuration bank is modelled (``CFG_STATE_ID_StateID`` is not consulted).

Choices where the pages are silent (also in docs/tensix.md, "Matrix unit"):

* MVMUL/DOTPV with SrcA's RWC in rows 56..63 would read SrcA rows 56..71: past the
  register, which breaks a rule (lenient: the row numbers wrap modulo 64);
* MVMUL with ``BroadcastSrcBRow`` writes only Dest rows DstRow, +2, +4, +6 (the model's
  loop steps by two); rows +1, +3, +5 are left as they were;
* bits the pages fix rather than define are ignored: ELWMUL's ``dest_accum_en`` (the
  model always accumulates), GMPOOL's ``instr_mod19``, GAPOOL's ``instr_mod19`` and
  ``max_pool_index_en``, DOTPV's ``dest_accum_en`` / ``instr_mod19``; DOTPV's table
  fields are wider than the page's operands: AddrMod is the low 2 (WH) / 3 (BH) bits of
  its field and DstRow the low 10 bits;
* ALU format codes 12 and 13 (unassigned) take the TF32 branch, as
  :mod:`tessera_tensix.matrixbanks` does for the moves;
* the legacy MFCONV3S1, CONV3S1, CONV3S2, APOOL3S1, APOOL3S2, MPOOL3S1, MPOOL3S2 have no
  page of their own (MatrixUnit.md only says what they reduce to) and stay unsupported.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from tessera_tensix import addressing, hazards, rules
from tessera_tensix import matrix as mx
from tessera_tensix import matrixbanks as mb
from tessera_tensix.dest import ADJ16, ADJ32
from tessera_tensix.fma import compiled_entry
from tessera_tensix.semantics import op
from tessera_tensix.srcab import MATRIX


def _readonly(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


#: every cell defined (Dest has no undefined row): the halves-defined masks of the kernels
_DEFINED = _readonly(np.ones((2, 8, 16), dtype=bool))
#: Src style of each ALU format code (codes 12, 13 unassigned: the pages' TF32 "else")
_STYLE_OF = tuple(mx.BF16 if f in mb.BF16_STYLE else mx.FP16 if f in mb.FP16_STYLE else mx.TF32
                  for f in range(16))
#: the kernels' packed operands (:func:`tessera_tensix.matrix.pack`, banks 0) of a
#: multiplication (MVMUL & co, ELWMUL) by (style, Dst format, fidelity phase)
_MUL_CODE = {(style, fmt, p): mx.pack(style, fmt, 0, 0, mx.slot_mask(style, mx.srca_slot(p)),
                                      mx.slot_mask(style, mx.srcb_slot(p)), phase=p)
             for style in mx.STYLE_CODE for fmt in mx.FMT_CODE for p in range(4)}
#: … and of ELWADD / ELWSUB (whole operands)
_ADD_CODE = {(style, fmt, p): mx.pack(style, fmt, 0, 0, mx.slot_mask(style, "value"),
                                      mx.slot_mask(style, "value"), phase=p)
             for style in mx.STYLE_CODE for fmt in mx.FMT_CODE for p in range(4)}


def formats(thread: Any) -> tuple[str, str]:
    """``(SrcAStyle, Dst format)`` of the pages' "Determine the data formats" step."""
    return _formats(thread.tcfg.fields, thread.core.cfg.fields, mb.srca_format(thread))


def _formats(t: dict[str, int], c: dict[str, int], srca_fmt: int) -> tuple[str, str]:
    """:func:`formats` from the thread's (``t``) and the backend's (``c``) config fields and
    ``SrcAFmt`` (:func:`tessera_tensix.matrixbanks.srca_format`)."""
    if t.get("FP16A_FORCE_Enable", 0):
        return mx.FP16, mx.DST_FP16
    if c.get("ALU_ACC_CTRL_INT8_math_enabled", 0):
        return mx.INT8, mx.DST_INT32
    style = _STYLE_OF[srca_fmt]
    if c.get("ALU_ACC_CTRL_Fp32_enabled", 0):
        return style, mx.DST_FP32
    return style, mx.DST_FP16 if style == mx.FP16 else mx.DST_BF16


def _setup(thread: Any) -> tuple[str, str, int, int]:
    """``(style, Dst format, fidelity phase, Dest row base)``: what every arithmetic
    instruction reads from the configuration and the RWCs (base = ``MATH_Offset + RWC.Dst
    + DEST_REGW_BASE``, before the instruction's DstRow and alignment).  Called once per
    instruction, so it reads each field once (the matrix unit's hot path)."""
    t = thread.tcfg.fields
    c = thread.core.cfg.fields
    rwc = thread.rwc
    style, fmt = _formats(t, c, mb.srca_format(thread))
    base = t.get("DEST_TARGET_REG_CFG_MATH_Offset", 0) + rwc["dst"] + c.get("DEST_REGW_BASE_Base", 0)
    return style, fmt, (rwc["fidelity"] + t.get("FIDELITY_BASE_Phase", 0)) & 3, base


def _wait(thread: Any, name: str) -> None:
    """The wait at the wait gate: both matrix-unit banks must belong to the matrix unit."""
    core = thread.core
    a, b = core.srca, core.srcb
    if a.allowed[a.matrix_bank] != MATRIX or b.allowed[b.matrix_bank] != MATRIX:
        mb.wait_for_matrix(thread, name, srca=True, srcb=True)


def _finish(thread: Any, clear_dvalid: int, addr_mod: int) -> None:
    """Flip the banks the instruction's bits select, then apply its ADDR_MOD."""
    if clear_dvalid:
        mb.flip_matrix_banks(thread, bool(clear_dvalid & 1), bool(clear_dvalid & 2))
    addressing.apply_addr_mod(thread, addr_mod, wh=thread.arch.name == "tensix-wh")


def _index(start: int, count: int, step: int = 1, mask: int = 0x3F) -> np.ndarray:
    """``(start + step * arange(count)) & mask`` as a read-only int64 array."""
    return _readonly((start + step * np.arange(count, dtype=np.int64)) & mask)


#: read-only row-index arrays by starting row (Src rows wrap modulo 64)
_ROWS8 = tuple(_index(r, 8) for r in range(64))
_SAME8 = tuple(_index(r, 8, 0) for r in range(64))


@lru_cache(maxsize=8192)
def _physical(row0: int, count: int, step: int, wide: bool, remap: bool, swizzle: bool) -> np.ndarray:
    """Physical DstBits rows (the high halves, for ``wide`` = Dst32b) of Dest rows
    ``row0 + step * i`` (i < count), read-only int64 (cached)."""
    adj = ADJ32[int(remap)][int(swizzle)] if wide else ADJ16[int(remap)]
    return _readonly(np.ascontiguousarray(adj[_index(row0, count, step, 0x3FF)], dtype=np.int64))


def _target(core: Any, row0: int, count: int, step: int, wide: bool) -> tuple[np.ndarray, np.ndarray]:
    """``(phys, defined)``: the physical rows an instruction accumulates onto and which
    halves of their cells are defined (``defined[0]`` high, ``[1]`` low; undefined halves
    read as zero, the identity element)."""
    c = core.cfg.fields
    phys = _physical(row0, count, step, wide, bool(c.get("DEST_ACCESS_CFG_remap_addrs", 0)),
                     bool(c.get("DEST_ACCESS_CFG_swizzle_32b", 0)))
    dest = core.dest
    if dest.all_valid:
        return phys, _DEFINED
    hi = dest.row_valid[phys][:, None] | dest.written[phys]
    lo = dest.row_valid[phys + 8][:, None] | dest.written[phys + 8] if wide else hi
    return phys, _readonly(np.ascontiguousarray(np.stack([hi, lo])))


def _written(core: Any, phys: np.ndarray, wide: bool) -> None:
    """Every cell of the rows was written: undefined rows are defined again."""
    dest = core.dest
    if not dest.all_valid:
        dest.revalidate(phys)
        if wide:
            dest.revalidate(phys + 8)


# ------------------------------------------------------------------ compiled kernels
_SRC = np.zeros((2, 64, 16), dtype=np.uint32)       # example argument types: SrcA/SrcB,
_BITS = np.zeros((1024, 16), dtype=np.uint16)        # Dest bits, cached index arrays
_IDX = _ROWS8[0]
_VALID = np.ones(1024, dtype=bool)                   # Dest's row_valid, written
_WRITTEN = np.zeros((1024, 16), dtype=bool)
_WORK = np.zeros((62, 16))                           # the kernels' scratch (one instruction runs
_KERNELS: dict[str, Any] = {}                        # at a time)


def _kernel(name: str) -> Any:
    """The compiled entry of kernel ``name`` for the argument types the semantics pass
    (numba's per-call type dispatch skipped, as :mod:`tessera_tensix.semantics.dest_ops` does)."""
    entry = _KERNELS.get(name)
    if entry is None:
        if name == "matmul":
            entry = compiled_entry(mx.matmul_kernel, _SRC, _SRC, 0, 0, _BITS, _WORK)
        elif name == "matmul-undefined":
            entry = compiled_entry(mx.matmul_kernel_undefined, _SRC, _SRC, 0, 0, _BITS, _VALID, _WRITTEN, _WORK)
        else:
            entry = compiled_entry(mx.elementwise_kernel, _SRC, _SRC, _IDX, 0, _BITS, _IDX, _DEFINED, _WORK)
        _KERNELS[name] = entry
    return entry


# ------------------------------------------------------------------ matrix multiply
def _matmul(thread: Any, ins: Any, name: str, *, nrows: int, broadcast: bool, dst: int,
            addr_mod: int) -> None:
    """MVMUL / DOTPV / GAPOOL: ``Dst[nrows x 16] += SrcB[nrows x 16] @ SrcA[16 x 16]``.

    The matrix unit's hot path (``tessera bench --only matmul`` holds one MVMUL to 4x the
    bare numpy product of its operands), so :func:`_wait`, :func:`_setup` and
    :func:`_finish` are written out here, each configuration field is read once, the
    Dest rows are computed in the kernel, and a Dest without undefined rows takes the
    kernel with the fewest arguments."""
    core = thread.core
    srca, srcb = core.srca, core.srcb
    if srca.allowed[srca.matrix_bank] != MATRIX or srcb.allowed[srcb.matrix_bank] != MATRIX:
        mb.wait_for_matrix(thread, name, srca=True, srcb=True)   # parks before any side effect
    t, c, rwc = thread.tcfg.fields, core.cfg.fields, thread.rwc
    style, fmt = _formats(t, c, mb.srca_format(thread))
    phase = (rwc["fidelity"] + t.get("FIDELITY_BASE_Phase", 0)) & 3
    base = t.get("DEST_TARGET_REG_CFG_MATH_Offset", 0) + rwc["dst"] + c.get("DEST_REGW_BASE_Base", 0)
    a_row = rwc["srca"] & 0x38
    if a_row > 48:
        rules.broken(thread, ins, f"SrcA rows {a_row}..{a_row + 15} are read, past row 63 "
                                  f"(RWC SrcA = {rwc['srca']}; a 16-row operand must start at 0..48)")
    if broadcast:
        row0, count, step, b_row = (base + dst) & 0x3F9, 4, 2, rwc["srcb"] & 0x3F
    else:
        row0, count, step, b_row = (base + dst) & (0x400 - nrows), nrows, 1, rwc["srcb"] & 0x38
    code = (_MUL_CODE[style, fmt, phase] | srca.matrix_bank << 4 | srcb.matrix_bank << 5 | a_row << 12
            | b_row << 56 | broadcast << 62)
    dest = core.dest
    rows = mx.dest_span(row0, count, step, c.get("DEST_ACCESS_CFG_remap_addrs", 0) & 1,
                        c.get("DEST_ACCESS_CFG_swizzle_32b", 0) & 1, dest.all_valid)
    if dest.all_valid:
        _kernel("matmul")(srca.rows, srcb.rows, code, rows, dest.bits, _WORK)
    else:
        dest.all_valid = _kernel("matmul-undefined")(srca.rows, srcb.rows, code, rows, dest.bits, dest.row_valid,
                                                     dest.written, _WORK)
    mb.note_row(core, a_row)
    hazards.dest_written(thread, ins, rows, fmt in mx.DST32)
    if ins.clear_dvalid:
        mb.flip_matrix_banks(thread, bool(ins.clear_dvalid & 1), bool(ins.clear_dvalid & 2))
    if t:                                  # no thread config programmed: no ADDR_MOD increments
        addressing.apply_addr_mod(thread, addr_mod, wh=core.chip == "wh")


@op("MVMUL")
def mvmul(thread: Any, ins: Any) -> None:
    """``Dst += SrcB @ SrcA``: 8x16 (or a broadcast SrcB row: 7 rows, every other one written)."""
    broadcast = bool(ins.instr_mod19_19_19)
    _matmul(thread, ins, "MVMUL", nrows=7 if broadcast else 8, broadcast=broadcast, dst=ins.dst,
            addr_mod=ins.addr_mode)


@op("DOTPV")
def dotpv(thread: Any, ins: Any) -> None:
    """MVMUL without the broadcast option."""
    if thread.arch.name == "tensix-wh":
        addr_mod, dst = ins.addr_mode_18_15 & 3, ins.dst_14_0 & 0x3FF
    else:
        addr_mod, dst = ins.addr_mode_18_14 & 7, ins.dst_13_0 & 0x3FF
    _matmul(thread, ins, "DOTPV", nrows=8, broadcast=False, dst=dst, addr_mod=addr_mod)


def _pool_addr_mod(ins: Any) -> int:
    """GMPOOL / GAPOOL's AddrMod: [16:15] on Wormhole, [17:15] on Blackhole."""
    value = getattr(ins, "addr_mode", None)
    return ins.pool_addr_mode_17_15 if value is None else value


@op("GAPOOL")
def gapool(thread: Any, ins: Any) -> None:
    """MVMUL on 4 rows: ``Dst[4x16] += SrcB[top 4 rows of an aligned 8] @ SrcA``."""
    _matmul(thread, ins, "GAPOOL", nrows=4, broadcast=False, dst=ins.dst, addr_mod=_pool_addr_mod(ins))


# ------------------------------------------------------------------ element-wise
_OPS = {"ELWMUL": 0, "ELWADD": 1, "ELWSUB": 2}


def _elementwise(thread: Any, ins: Any, name: str) -> None:
    _wait(thread, name)
    core = thread.core
    style, fmt, phase, base = _setup(thread)
    mode = ins.instr_mod19
    rwc = thread.rwc
    a_row = rwc["srca"] & 0x38
    b_rows = _SAME8[rwc["srcb"] & 0x3F] if mode & 2 else _ROWS8[rwc["srcb"] & 0x38]  # BroadcastSrcBRow
    op_code = _OPS[name]
    if op_code == 0:
        code, add = _MUL_CODE[style, fmt, phase], 1
    else:
        code, add = _ADD_CODE[style, fmt, phase] | op_code << 6, ins.dest_accum_en & 1
    wide = fmt in mx.DST32
    phys, defined = _target(core, (base + ins.dst) & 0x3F8, 8, 1, wide)
    srca, srcb = core.srca, core.srcb
    packed = (code | srca.matrix_bank << 4 | srcb.matrix_bank << 5 | (mode & 1) << 8 | add << 9
              | a_row << 12)
    _kernel("elementwise")(srca.rows, srcb.rows, b_rows, packed, core.dest.bits, phys, defined, _WORK)
    _written(core, phys, wide)
    mb.note_row(core, a_row)
    hazards.dest_written(thread, ins, phys, wide)
    _finish(thread, ins.clear_dvalid, ins.addr_mode)


@op("ELWMUL")
def elwmul(thread: Any, ins: Any) -> None:
    """``Dst += SrcA * SrcB`` element-wise (SrcB row and/or column 0 may be broadcast)."""
    _elementwise(thread, ins, "ELWMUL")


@op("ELWADD")
def elwadd(thread: Any, ins: Any) -> None:
    """``Dst = SrcA + SrcB`` (``Dst +=`` with AddDst)."""
    _elementwise(thread, ins, "ELWADD")


@op("ELWSUB")
def elwsub(thread: Any, ins: Any) -> None:
    """``Dst = SrcA - SrcB`` (``Dst +=`` with AddDst)."""
    _elementwise(thread, ins, "ELWSUB")


# ------------------------------------------------------------------ GMPOOL
def gmpool_styles(thread: Any, argmax: bool) -> tuple[str, str, bool]:
    """``(SrcAStyle, DstStyle, UseDst32b)`` of GMPOOL.md's format step."""
    t = thread.tcfg.fields
    c = thread.core.cfg.fields
    if t.get("FP16A_FORCE_Enable", 0):
        return mx.FP16, mx.FP16, False
    if c.get("ALU_ACC_CTRL_INT8_math_enabled", 0):
        return mx.INT8, mx.DST_INT32, True
    fmt = mb.srca_format(thread)
    wide = bool(c.get("ALU_ACC_CTRL_Fp32_enabled", 0))
    if fmt in mb.BF16_STYLE or fmt in mb.FP16_STYLE:
        style = mx.BF16 if fmt in mb.BF16_STYLE else mx.FP16
        return style, style if (argmax and wide) or not wide else mx.TF32, wide
    if argmax:
        return mx.TF32, mx.DST_INT32, wide
    return mx.TF32, mx.TF32 if wide else mx.BF16, wide


def _raw_rows(core: Any, phys: np.ndarray) -> np.ndarray:
    """Dst16b cells of physical rows ``phys`` (uint32); GMPOOL reads undefined cells as
    all ones (minus infinity)."""
    dest = core.dest
    out = dest.bits[phys].astype(np.uint32)
    if not dest.all_valid:
        defined = dest.row_valid[phys][:, None] | dest.written[phys]
        out[~defined] = 0xFFFF
    return out


@op("GMPOOL")
def gmpool(thread: Any, ins: Any) -> None:
    """Column-wise max of a 16x16 SrcA block (scaled by SrcB's exponents) with a Dest row;
    ``ArgMax`` also returns (a transform of) the index of the largest of rows 0..7."""
    _wait(thread, "GMPOOL")
    core = thread.core
    argmax = bool(ins.max_pool_index_en)
    style, dst_style, wide = gmpool_styles(thread, argmax)
    a_row = thread.rwc["srca"] & 0x30
    b_row = thread.rwc["srcb"] & 0x38
    a = core.srca.rows[core.srca.matrix_bank][a_row:a_row + 16]
    b = core.srcb.rows[core.srcb.matrix_bank][b_row]
    _, _, _, base = _setup(thread)
    rows = _index((base + ins.dst) & 0x3FC, 4, 1, 0x3FF)
    if wide:
        phys = mb.dst_rows32(core, rows)
        old = (_raw_rows(core, phys) << 16) | _raw_rows(core, phys + 8)
    else:
        phys = mb.dst_rows16(core, rows)
        old = _raw_rows(core, phys) << 16
    new = np.empty_like(old)
    new[0] = mx.gmpool(a, b, old[0], style, dst_style, argmax)
    if wide and argmax:
        new[1:] = (old[1:].astype(np.int64) + 0x100) & 0xF00
    else:
        new[1:] = 0
    if wide:
        mb.write_dst32(core, phys, new)
    else:
        mb.write_dst16(core, phys, new >> 16)
    mb.note_row(core, a_row)
    hazards.dest_written(thread, ins, phys, wide)
    _finish(thread, ins.clear_dvalid, _pool_addr_mod(ins))
