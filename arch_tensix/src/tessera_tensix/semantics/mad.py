"""The MAD sub-unit's arithmetic: SFPMAD, SFPADD, SFPMUL, SFPADDI, SFPMULI, SFPMUL24.

Spec tensix-sfpu.md §4 (FMA_BH, errata E2 and E18), §5 (BF16 immediates), §11.4
(SFPMUL24), §3.4–3.5 (write guards, INDIRECT_VA / INDIRECT_VD).  The arithmetic is
the chip's: :func:`tessera_tensix.fma.fma_bh` on Blackhole, bit-exact with the vendor's
``fma_model_bh``; :func:`tessera_tensix.fma.fma_wh` on Wormhole, bit-exact with
``fma_model_wh`` (``WormholeB0/TensixTile/TensixCoprocessor/SFPMAD.md``, which SFPADD,
SFPMUL, SFPADDI and SFPMULI follow).

Operands (the table's fields): SFPMAD/ADD/MUL/MUL24 VA ``lreg_src_a``, VB
``lreg_src_b``, VC ``lreg_src_c``, VD ``lreg_dest``, Mod1 ``instr_mod1``; SFPADDI/MULI
Imm16 ``imm16_math``, VD, Mod1.  What the hot path needs of them (index arrays, the
packed code of the compiled kernel, the operand template) is built once per decoded
instruction and kept on the instruction object (the decode-cache entry).

Mod1 (MAD family): bit0 flips the product's sign (E2: the two readings NEGATE_VA /
NEGATE_VB give identical bits), bit1 NEGATE_VC, bit2 INDIRECT_VA (VA := LReg[7] & 15
per lane), bit3 INDIRECT_VD (destination := LReg[7] & 15 per lane).  Wormhole has no
negate bits (its assembly.yaml documents bits 3 and 2 only; its SFPADDI / SFPMULI pages
only INDIRECT_VD): they are ignored there.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tessera_tensix import hazards, lanes, rules
from tessera_tensix.fma import addi_lreg_direct, fma_bh, fma_wh, mad_lreg_code_direct
from tessera_tensix.semantics import op
from tessera_tensix.semantics.convert import is_wormhole

U32 = np.uint32
ONE = 0x3F80_0000
SIGN = 0x8000_0000
_IDX_CACHE = "_tx_mad"
_ADDI_CACHE = "_tx_addi"
_FAST_CACHE = "_tx_mad_fast"
_SIGN_ROW = np.full(lanes.LANES, SIGN, dtype=U32)
_SIGN_ROW.setflags(write=False)
#: bit of :func:`tessera_tensix.fma.mad_lreg_code`'s packed code selecting FMA_WH
_WH_CODE = 1 << 18


def fma_of(thread: Any) -> Any:
    """The chip's batch FMA on a (3, n) uint32 array: FMA_WH on Wormhole, else FMA_BH."""
    return fma_wh if is_wormhole(thread) else fma_bh


def store(thread: Any, ins: Any, vd: int, w: bool, indirect: bool, result: np.ndarray,
          en: np.ndarray) -> None:
    """Write a MAD-family result: to LReg[vd] (when the guard allowed it) or, with
    INDIRECT_VD, to LReg[LReg[7][L] & 15] per lane (§3.5).  An indirect destination
    of 8..15 in an enabled lane is a write to a read-only LReg (rule; dropped when
    lenient)."""
    sfpu = thread.core.sfpu
    if indirect and vd != 16:
        index = lanes.indirect_index(sfpu)
        high = en & (index >= 8)
        if high.any():
            bad = int(index[np.argmax(high)])
            rules.broken(thread, ins, f"INDIRECT_VD selects read-only LReg[{bad}] "
                                      f"(LReg[7] & 15 must be < 8 in enabled lanes)")
        lanes.write_indirect(sfpu, index, result, en)
    elif w:
        lanes.write(sfpu, vd, result, en)


# ---------------------------------------------------------------- SFPMAD / SFPADD / SFPMUL
def _mad_fields(thread: Any, ins: Any) -> tuple[Any, ...]:
    va, vb, vc = ins.lreg_src_a, ins.lreg_src_b, ins.lreg_src_c
    vd, mod1 = ins.lreg_dest, ins.instr_mod1
    if is_wormhole(thread):
        mod1 &= 12
    neg = None
    if mod1 & 3:
        neg = np.array([[SIGN if mod1 & 1 else 0], [0], [SIGN if mod1 & 2 else 0]], dtype=U32)
    fields = (np.array([va, vb, vc], dtype=np.intp), vd, mod1, neg)
    ins.__dict__[_IDX_CACHE] = fields
    return fields


def read_abc(sfpu: Any, idx: np.ndarray, mod1: int) -> np.ndarray:
    """(3, 32) uint32: LReg[VA'] (INDIRECT_VA per §3.5), LReg[VB], LReg[VC]."""
    xyz = sfpu.lreg.take(idx, axis=0)
    if mod1 & 4:
        xyz[0] = lanes.read_indirect(sfpu, lanes.indirect_index(sfpu))
    return xyz


def _fast_fields(thread: Any, ins: Any) -> int:
    """The packed field code of :func:`tessera_tensix.fma.mad_lreg_code` (VA, VB, VC,
    VD, negate a, negate c, Wormhole arithmetic) when the instruction writes LReg[VD < 8]
    directly (no INDIRECT_VA / INDIRECT_VD), else -1."""
    idx, vd, mod1, _neg = ins.__dict__.get(_IDX_CACHE) or _mad_fields(thread, ins)
    fast = -1
    if not mod1 & 12 and vd < 8:
        va, vb, vc = (int(i) for i in idx)
        fast = va | vb << 4 | vc << 8 | vd << 12 | (mod1 & 3) << 16
        if is_wormhole(thread):
            fast |= _WH_CODE
    ins.__dict__[_FAST_CACHE] = fast
    return fast


@op("SFPMAD", "SFPADD", "SFPMUL")
def sfpmad(thread: Any, ins: Any) -> None:
    """d = FMA(±a·b, ±c) (§4.1), FMA_BH or FMA_WH by chip.  SFPADD and SFPMUL are the
    same operation."""
    fast = ins.__dict__.get(_FAST_CACHE)
    if fast is None:
        fast = _fast_fields(thread, ins)
    if fast >= 0:
        sfpu = thread.core.sfpu
        mad_lreg_code_direct(sfpu.lreg, sfpu.lane_flags, sfpu.use_lane_flags, sfpu.lane_config, fast)
        if fast & _WH_CODE:  # Wormhole: the next instruction must not read the result
            hazards.vector_wrote(thread, ins, fast >> 12 & 15)
        return
    fields = ins.__dict__.get(_IDX_CACHE) or _mad_fields(thread, ins)
    idx, vd, mod1, neg = fields
    w = lanes.guard_vd(thread, ins, vd, source=bool(mod1 & 8))
    if w is None:
        return
    sfpu = thread.core.sfpu
    xyz = read_abc(sfpu, idx, mod1)
    if neg is not None:
        np.bitwise_xor(xyz, neg, out=xyz)
    store(thread, ins, vd, w, bool(mod1 & 8), fma_of(thread)(xyz), lanes.enabled(sfpu))
    if is_wormhole(thread):
        hazards.vector_wrote(thread, ins, vd, indirect=bool(mod1 & 8))


# ---------------------------------------------------------------- SFPADDI / SFPMULI (§5)
def _addi_fields(thread: Any, ins: Any, add: bool) -> tuple[Any, ...]:
    """(VD, Mod1, operand template, row of the template that receives ±LReg[VD], the
    BF16 immediate as FP32 bits, Wormhole?).

    The template holds the constant rows of the FMA's operands: SFPADDI (imm, 1.0, c),
    SFPMULI (imm, c, +0).  The FMA does not modify its operands, so one template per
    decoded instruction is reused.  On Wormhole only Mod1 bit 3 (INDIRECT_VD) is
    defined (``WormholeB0/.../SFPADDI.md``, ``SFPMULI.md``: no NEGATE_VC)."""
    imm, vd, mod1 = ins.imm16_math << 16, ins.lreg_dest, ins.instr_mod1
    wh = is_wormhole(thread)
    if wh:
        mod1 &= 8
    xyz = np.zeros((3, lanes.LANES), dtype=U32)
    xyz[0] = imm
    if add:                                           # SFPADDI: imm·1.0 + c
        xyz[1] = ONE
        row = xyz[2]
    else:                                             # SFPMULI: imm·c + (+0)
        row = xyz[1]
    fields = (vd, mod1, xyz, row, imm, wh)
    ins.__dict__[_ADDI_CACHE] = fields
    return fields


@op("SFPADDI")
def sfpaddi(thread: Any, ins: Any) -> None:
    """SFPADDI: imm·1.0 + c; c = ±LReg[VD] (Mod1 bit1 NEGATE_VC, Blackhole only)."""
    _imm_mad(thread, ins, True)


@op("SFPMULI")
def sfpmuli(thread: Any, ins: Any) -> None:
    """SFPMULI: imm·c + (+0); c = ±LReg[VD] (Mod1 bit1 NEGATE_VC, Blackhole only)."""
    _imm_mad(thread, ins, False)


def _imm_mad(thread: Any, ins: Any, add: bool) -> None:
    """c = LReg[VC] with VC = VD, unless SFPLOADMACRO scheduled this copy with another VC
    (``lanes.MACRO_VC``, SFPLOADMACRO.md: the ``unsigned VC = VD;`` is skipped)."""
    vd, mod1, xyz, row, imm, wh = ins.__dict__.get(_ADDI_CACHE) or _addi_fields(thread, ins, add)
    vc = ins.__dict__.get(lanes.MACRO_VC, vd)
    if vd < 8 and vc == vd and not mod1 & 8:          # LReg[vd] written directly
        sfpu = thread.core.sfpu
        addi_lreg_direct(sfpu.lreg, sfpu.lane_flags, sfpu.use_lane_flags, sfpu.lane_config, vd,
                         imm, SIGN if mod1 & 2 else 0, add, wh)
        if wh:
            hazards.vector_wrote(thread, ins, vd)
        return
    w = lanes.guard_vd(thread, ins, vd, source=bool(mod1 & 8))
    if w is None:
        return
    sfpu = thread.core.sfpu
    if mod1 & 2:
        np.bitwise_xor(sfpu.lreg[vc], _SIGN_ROW, out=row)
    else:
        np.copyto(row, sfpu.lreg[vc])
    store(thread, ins, vd, w, bool(mod1 & 8), fma_wh(xyz) if wh else fma_bh(xyz),
          lanes.enabled(sfpu))
    if wh:
        hazards.vector_wrote(thread, ins, vd, indirect=bool(mod1 & 8))


# ---------------------------------------------------------------- SFPMUL24 (§11.4)
_M23 = np.uint64(0x7FFFFF)


def mul24(a: np.ndarray, b: np.ndarray, c: np.ndarray, upper: bool) -> np.ndarray:
    """SFPMUL24 of uint32 lanes: the 23×23-bit integer product (low or high 23 bits),
    plus the documented (non-contractual) FP32-adder path when c has a non-zero
    exponent (with c = LReg[9] = 0 the product is the result)."""
    a64 = a.astype(np.uint64) & _M23
    b64 = b.astype(np.uint64) & _M23
    p = a64 * b64
    p = (p >> np.uint64(23)) if upper else (p & _M23)
    c64 = c.astype(np.int64)
    ez = (c64 >> 23) & 255
    use = ez != 0
    if not use.any():
        return p.astype(U32)
    p = p.astype(np.int64)
    big_e = np.maximum(129, ez)
    s = (big_e - ez) & 31
    zed = ((1 << 23) + (c64 & 0x7FFFFF)) << 3
    shifted = p >> ((big_e - 129) & 31)
    zz = zed >> s
    carry = (((zz << s) ^ zed) > 0xFFFF) << 16
    added = np.where(zz != 0, (shifted + zz + carry) & 0x7FFFFF, shifted)
    return np.where(use, added, p).astype(U32)


@op("SFPMUL24")
def sfpmul24(thread: Any, ins: Any) -> None:
    fields = ins.__dict__.get(_IDX_CACHE) or _mad_fields(thread, ins)
    idx, vd, mod1, _neg = fields
    w = lanes.guard_vd(thread, ins, vd, source=bool(mod1 & 8))
    if w is None:
        return
    sfpu = thread.core.sfpu
    a, b, c = read_abc(sfpu, idx, mod1)
    store(thread, ins, vd, w, bool(mod1 & 8), mul24(a, b, c, bool(mod1 & 1)),
          lanes.enabled(sfpu))
