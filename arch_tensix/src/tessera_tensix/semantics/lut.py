"""Piecewise-linear table instructions: SFPLUT and SFPLUTFP32 (spec tensix-sfpu.md §6).

Both evaluate ``d = FMA(a, |LReg[3]|, c)`` (FMA_BH; FMA_WH on Wormhole, whose
``SFPLUT.md`` / ``SFPLUTFP32.md`` defer to SFPMAD's arithmetic) with the coefficients
(a, c) picked per lane by the magnitude of LReg[3]: piece i = 0 below 1.0, 1 below 2.0,
else 2 (a NaN selects the last piece; a denormal compares as below 1.0 but is zero in
the FMA).
SGN_RETAIN (bit 2) gives d the sign of LReg[3]; INDIRECT_VD (bit 3) writes
LReg[LReg[7] & 15] per lane (§3.5).

* SFPLUT (0x73, ``VD[23:20] Mod0[19:16]``): a, c are the 8-bit codes in bits [15:8] and
  [7:0] of LReg[i], decoded by Lut8ToFp32.
* SFPLUTFP32 (0x95, ``Mod1Mirror[19:16] VD[7:4] Mod1[3:0]``): Mod1 bit 1 clear — FP32
  3-entry table (a = LReg[i], c = LReg[4+i]); bits 1 and 3 set — FP16 3-entry table
  (a, c = halves of LReg[i]) whose destination is always indirect (the hardware
  quirk of §6.2); bit 1 set otherwise — FP16 6-entry tables (TABLE1 cut 3.0, TABLE2
  cut 4.0 when Mod1 & 3 = 3).  FP16 halves are decoded by Lut16ToFp32 (exponent 31
  reads as zero, exponent 0 as 2^-15·(1+m/1024)).  The mirror field only feeds the
  stall logic and is ignored.

The decoders are 256- and 65536-entry tables built at import, so each lane's
coefficient is one ``take``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tessera_tensix import hazards, lanes
from tessera_tensix.fma import fma_bh, fma_wh
from tessera_tensix.semantics import op
from tessera_tensix.semantics.convert import is_wormhole
from tessera_tensix.semantics.mad import store

U32 = np.uint32
_SIGN = U32(0x8000_0000)
_MAG = U32(0x7FFF_FFFF)
_ONE, _TWO = U32(0x3F80_0000), U32(0x4000_0000)
_HALF, _ONE_HALF = U32(0x3F00_0000), U32(0x3FC0_0000)
_THREE, _FOUR = U32(0x4040_0000), U32(0x4080_0000)
_LO16 = U32(0xFFFF)
_LANE = np.arange(lanes.LANES)


def _lut8_table() -> np.ndarray:
    """Lut8ToFp32 of every byte: 0xFF → +0; else sign u[7], exponent 127 − u[6:4],
    mantissa u[3:0] << 19."""
    u = np.arange(256, dtype=U32)
    t = ((u >> 7) << 31) | ((127 - ((u >> 4) & 7)) << 23) | ((u & 15) << 19)
    t[0xFF] = 0
    t.setflags(write=False)
    return t


def _lut16_table() -> np.ndarray:
    """Lut16ToFp32 of every half-word: sign h[15]; exponent 0 if h[14:10] = 31 else
    h[14:10] + 112; mantissa h[9:0] << 13."""
    h = np.arange(65536, dtype=U32)
    e = (h >> 10) & 31
    t = ((h >> 15) << 31) | (np.where(e == 31, 0, e + 112).astype(U32) << 23) | ((h & 0x3FF) << 13)
    t.setflags(write=False)
    return t


LUT8 = _lut8_table()
LUT16 = _lut16_table()


def piece(l3: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(|l3| as uint32, piece index 0/1/2 per lane) — comparisons of the float |l3| done
    on its bit pattern (monotonic for non-negative floats; NaN is above everything)."""
    b = l3 & _MAG
    i = (b >= _ONE).astype(np.intp) + (b >= _TWO)
    return b, i


def _pick(lreg: np.ndarray, base: int, i: np.ndarray) -> np.ndarray:
    """LReg[base + i[L]][L] per lane."""
    return lreg[base + i, _LANE]


def lut_compute(lreg: np.ndarray, mod0: int, wh: bool = False) -> np.ndarray:
    """SFPLUT's result for every lane (before the write); ``wh``: Wormhole's FMA."""
    l3 = lreg[3]
    b, i = piece(l3)
    coeff = _pick(lreg, 0, i)
    xyz = np.empty((3, lanes.LANES), dtype=U32)
    LUT8.take((coeff >> U32(8)) & U32(0xFF), out=xyz[0])
    xyz[1] = b
    LUT8.take(coeff & U32(0xFF), out=xyz[2])
    d = fma_wh(xyz) if wh else fma_bh(xyz)
    if mod0 & 4:                                         # SGN_RETAIN
        d = (d & _MAG) | (l3 & _SIGN)
    return d


@op("SFPLUT")
def sfplut(thread: Any, ins: Any) -> None:
    vd, mod0 = ins.lreg_ind, ins.instr_mod0
    w = lanes.guard_vd(thread, ins, vd, source=bool(mod0 & 8))
    if w is None:
        return
    sfpu = thread.core.sfpu
    wh = is_wormhole(thread)
    d = lut_compute(sfpu.lreg, mod0, wh)
    store(thread, ins, vd, w, bool(mod0 & 8), d, lanes.enabled(sfpu))
    if wh:  # the next instruction must not read the result
        hazards.vector_wrote(thread, ins, vd, indirect=bool(mod0 & 8))


def lutfp32_mode(mod1: int) -> str:
    """The table a Mod1 value selects (§6.2): fp32, fp16x3 or fp16x6."""
    if not mod1 & 2:
        return "fp32"
    if mod1 & 10 == 10:
        return "fp16x3"
    return "fp16x6"


def lutfp32_compute(lreg: np.ndarray, mod1: int, wh: bool = False) -> np.ndarray:
    """SFPLUTFP32's result for every lane (before the write); ``wh``: Wormhole's FMA."""
    l3 = lreg[3]
    b, i = piece(l3)
    mode = lutfp32_mode(mod1)
    xyz = np.empty((3, lanes.LANES), dtype=U32)
    xyz[1] = b
    if mode == "fp32":
        xyz[0] = _pick(lreg, 0, i)
        xyz[2] = _pick(lreg, 4, i)
    elif mode == "fp16x3":
        coeff = _pick(lreg, 0, i)
        LUT16.take(coeff >> U32(16), out=xyz[0])
        LUT16.take(coeff & _LO16, out=xyz[2])
    else:
        cut = _FOUR if mod1 & 3 == 3 else _THREE
        # high half for [0.5,1), [1.5,2), [cut,inf); low half for the other pieces
        high = (b >= _HALF) ^ (b >= _ONE) ^ (b >= _ONE_HALF) ^ (b >= _TWO) ^ (b >= cut)
        j = np.where(high, U32(16), U32(0))
        LUT16.take((_pick(lreg, 0, i) >> j) & _LO16, out=xyz[0])
        LUT16.take((_pick(lreg, 4, i) >> j) & _LO16, out=xyz[2])
    d = fma_wh(xyz) if wh else fma_bh(xyz)
    if mod1 & 4:                                         # SGN_RETAIN
        d = (d & _MAG) | (l3 & _SIGN)
    return d


@op("SFPLUTFP32")
def sfplutfp32(thread: Any, ins: Any) -> None:
    vd, mod1 = ins.lreg_dest, ins.instr_mod1
    indirect = bool(mod1 & 8)                            # also every FP16 3-entry mode
    w = lanes.guard_vd(thread, ins, vd, source=indirect)
    if w is None:
        return
    sfpu = thread.core.sfpu
    wh = is_wormhole(thread)
    d = lutfp32_compute(sfpu.lreg, mod1, wh)
    store(thread, ins, vd, w, indirect, d, lanes.enabled(sfpu))
    if wh:  # the next instruction must not read the result
        hazards.vector_wrote(thread, ins, vd, indirect=indirect)
