"""Conversions and approximations: SFPARECIP (§8), SFP_STOCH_RND (§9), SFPCAST (§12),
and the per-lane PRNG (§16.2) they and SFPMOV share (spec tensix-sfpu.md).

PRNG: each lane has a 32-bit LFSR state S; AdvancePRNG returns S and replaces it by
``(~popcount(S & 0x80200003) & 1) << 31 | S >> 1``.  Only enabled lanes advance.
Consumers: SFP_STOCH_RND (every execution, every rounding mode), SFPCAST RNS (mode 1
only), SFPMOV FROM_SPECIAL VC 9.  On Wormhole SFP_STOCH_RND's rounding mode is the one
bit [21] (bit 22 is reserved there).

SFPARECIP's two lookup tables (128-entry reciprocal, 896-entry exponential) are data
files of this package (``data/sfparecip_*.json``, provenance and licences beside them);
at import they are expanded into 65536-entry tables indexed by the top half-word of
the input, so an instruction is a couple of ``take`` calls.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from tessera_tensix import lanes
from tessera_tensix.semantics import op


def is_wormhole(thread: Any) -> bool:
    return getattr(getattr(thread, "arch", None), "name", "") == "tensix-wh"

U32 = np.uint32
U64 = np.uint64
_SIGN = U32(0x8000_0000)
_MAG = U32(0x7FFF_FFFF)
_LO16 = U32(0xFFFF)
_16 = U32(16)
_31 = U32(31)
_TAPS = U32(0x8020_0003)


# ---------------------------------------------------------------- PRNG (§16.2)
def prng_next(state: np.ndarray) -> np.ndarray:
    """The LFSR step applied to every element of a uint32 array (returns a new array)."""
    parity = np.bitwise_count(state & _TAPS) & np.uint8(1)
    return ((parity ^ np.uint8(1)).astype(U32) << _31) | (state >> U32(1))


def advance_prng(sfpu: Any, en: np.ndarray) -> np.ndarray:
    """AdvancePRNG in the lanes where ``en``: returns the old states (all lanes)."""
    old = sfpu.prng.copy()
    np.copyto(sfpu.prng, prng_next(old), where=en)
    return old


def seed_prng(sfpu: Any, seed: int) -> None:
    """Re-seed every lane as the vendor simulator does for ``PRNG_SEED_Seed_Val``
    (§16.2; the hardware algorithm is undocumented): from s = seed advance 32 times,
    then for i = 0..31 advance twice and give lane 31 − i the state."""
    s = np.array([seed & 0xFFFF_FFFF], dtype=U32)
    for _ in range(32):
        s = prng_next(s)
    for i in range(32):
        s = prng_next(prng_next(s))
        sfpu.prng[31 - i] = s[0]


# ---------------------------------------------------------------- SFPARECIP (§8)
def _table(name: str) -> list[int]:
    path = Path(__file__).resolve().parents[1] / "data" / name
    return json.loads(path.read_text())["lut"]


def _recip_table() -> np.ndarray:
    """Top half-word of ApproxRecip(|x|) for every top half-word of x (sign excluded)."""
    rlut = np.array(_table("sfparecip_recip_lut.json"), dtype=U32)
    assert rlut.shape == (128,)
    ah = np.arange(65536, dtype=U32) & U32(0x7FFF)
    out = ((U32(253) - (ah >> U32(7))) << U32(7)) | rlut[ah & U32(0x7F)]
    out = np.where(ah < 0x0080, U32(0x7F80), np.where(ah < 0x7E80, out, U32(0)))
    return out.astype(U32)


def _exp_tables() -> tuple[np.ndarray, np.ndarray]:
    """(top half-word incl. the input's sign, mask of the input's low half-word kept)."""
    elut = np.array(_table("sfparecip_exp_lut.json"), dtype=U32)
    assert elut.shape == (896,)
    h = np.arange(65536, dtype=U32)
    ah = h & U32(0x7FFF)
    e = elut[np.clip(ah.astype(np.int64) - 0x3C80, 0, 895)]
    hi = np.select([ah < 0x0080, ah < 0x3C80, ah < 0x3F32, ah < 0x4000],
                   [U32(0x3F80), U32(0x3F81), U32(0x3F80) | e, U32(0x4000) | e], U32(0x4080))
    keep = np.where(ah < 0x0080, U32(0), _LO16)
    return (hi.astype(U32) | (h & U32(0x8000))).astype(U32), keep.astype(U32)


RECIP_HI = _recip_table()
EXP_HI, EXP_KEEP = _exp_tables()
for _t in (RECIP_HI, EXP_HI, EXP_KEEP):
    _t.setflags(write=False)


def approx_recip(x: np.ndarray) -> np.ndarray:
    """ApproxRecip(|x|) (sign 0): +Inf below 2^-126, 0 from 2^126 (incl. Inf/NaN)."""
    return RECIP_HI.take(x >> _16) << _16


def arecip_compute(x: np.ndarray, vb: np.ndarray, mod1: int) -> np.ndarray:
    if mod1 == 0:                                        # RECIP: sign restored
        return approx_recip(x) | (x & _SIGN)
    if mod1 == 1:                                        # COND_RECIP: where VB < 0, unsigned
        return np.where(vb.view(np.int32) < 0, approx_recip(x), x)
    top = x >> _16                                       # EXP (2, and 3..15 behave as EXP)
    return (EXP_HI.take(top) << _16) | (x & EXP_KEEP.take(top))


@op("SFPARECIP")
def sfparecip(thread: Any, ins: Any) -> None:
    vb, vc, vd, mod1 = ins.lreg_src_b, ins.lreg_c, ins.lreg_dest, ins.instr_mod1
    w = lanes.guard_vd(thread, ins, vd)
    if w is None:
        return
    sfpu = thread.core.sfpu
    d = arecip_compute(sfpu.lreg[vc], sfpu.lreg[vb], mod1)
    if w:
        lanes.write(sfpu, vd, d, lanes.enabled(sfpu))


# ---------------------------------------------------------------- SFP_STOCH_RND (§9)
NEAREST, STOCH, ZERO = 0, 1, 2
_INT_MAX = {2: 255, 3: 127, 6: 65535, 7: 32767}


def stochrnd_compute(x: np.ndarray, vb: np.ndarray, prng: np.ndarray, *, mode: int,
                     rounding: int, imm5: int, use_imm5: bool) -> np.ndarray:
    """SFP_STOCH_RND's result for every lane.  ``prng`` holds the values AdvancePRNG
    returned (used for the threshold in STOCH and the undocumented rounding mode 3)."""
    t: np.int64 | np.ndarray                             # the rounding threshold: one, or per lane
    if rounding == NEAREST:
        t = np.int64(0x400000)
    elif rounding == ZERO:
        t = np.int64(0x7FFFFF)
    else:
        t = (prng & U32(0x7FFFFF)).astype(np.int64)
    xi = x.astype(np.int64)
    e = (xi >> 23) & 255
    if mode in (0, 1):                                   # FP32 → FP16A / FP16B precision
        low, step, tshift = (0x1FFF, 0x2000, 10) if mode == 0 else (0xFFFF, 0x10000, 7)
        dropped = xi & low
        r = xi - dropped + np.where(dropped >= (t >> tshift), step, 0)
        r = np.where(e == 0, 0, np.where(e == 255, xi & 0xFF80_0000, r))
        return (r & 0xFFFF_FFFF).astype(U32)
    if mode in (4, 5):                                   # sign-magnitude int32 → int8 range
        sign = xi >> 31
        shift = np.int64(imm5) if use_imm5 else (vb & U32(31)).astype(np.int64)
        m = ((xi & 0x7FFF_FFFF) << 23) >> shift
        q = (m >> 23) + ((m & 0x7FFFFF) >= t)
        if mode == 4:
            return np.minimum(q, 255).astype(U32)
        q = np.minimum(q, 127)
        return (np.where(q != 0, sign << 31, 0) | q).astype(U32)
    # 2, 3, 6, 7: FP32 → bounded sign-magnitude integer
    top = _INT_MAX[mode]
    sign = (xi >> 31) if mode in (3, 7) else np.zeros_like(xi)
    k = e - 127
    m = (xi & 0x7FFFFF) | 0x800000
    m = np.where(k >= 0, m << np.clip(k, 0, 15), m >> 1)
    q = np.minimum((m >> 23) + ((m & 0x7FFFFF) >= t), top)
    out = np.where(q != 0, sign << 31, 0) | q
    out = np.where(k < -1, 0, np.where(k >= 16, (sign << 31) | top, out))
    return out.astype(U32)


@op("SFP_STOCH_RND", "SFPSTOCHRND")
def sfpstochrnd(thread: Any, ins: Any) -> None:
    vd, mod1 = ins.lreg_dest, ins.instr_mod1
    w = lanes.guard_vd(thread, ins, vd)
    if w is None:
        return
    sfpu = thread.core.sfpu
    en = lanes.enabled(sfpu)
    prng = advance_prng(sfpu, en)                        # every mode advances it (§9 step 1)
    # rnd_mode is [22:21] on Blackhole, the one bit [21] on Wormhole (the chip's table)
    d = stochrnd_compute(sfpu.lreg[ins.lreg_src_c], sfpu.lreg[ins.lreg_src_b], prng,
                         mode=mod1 & 7, rounding=ins.rnd_mode, imm5=ins.imm8_math,
                         use_imm5=bool(mod1 & 8))
    if w:
        lanes.write(sfpu, vd, d, en)


# ---------------------------------------------------------------- SFPCAST (§12)
def cast_compute(x: np.ndarray, mode: int, prng: np.ndarray | None = None) -> np.ndarray:
    """SFPCAST's result for every lane; ``mode`` = Mod1 & 3; ``prng`` the values
    AdvancePRNG returned (mode 1 only)."""
    sign = x & _SIGN
    if mode == 0:                                        # SM32 → FP32, round to nearest even
        mag = (x & _MAG).astype(np.float64).astype(np.float32).view(U32)
        return mag | sign
    if mode == 1:                                        # SM32 → FP32, stochastic (RNS)
        if prng is None:
            raise ValueError("SFPCAST mode 1 rounds stochastically: it needs the PRNG values")
        mag = (x & _MAG).astype(np.int64)
        top = (mag.astype(np.float64).view(np.int64) >> 52) - 1023     # MSB index (mag > 0)
        lz = np.clip(31 - top, 1, 31)
        n = (mag << lz) & 0xFFFF_FFFF
        r = ((157 - lz) << 23) + (n >> 8)
        r += (n & 0xFE) > ((prng.astype(np.int64) >> 9) & 0xFE)
        return np.where(mag == 0, 0, r).astype(U32) | sign
    neg = (U32(0) - x)                                   # two's complement negation mod 2^32
    if mode == 2:                                        # INT32_ABS (0x80000000 unchanged)
        return np.where(sign != 0, neg, x)
    return np.where(sign != 0, neg | _SIGN, x)           # INT32_SM32 (both directions)


@op("SFPCAST")
def sfpcast(thread: Any, ins: Any) -> None:
    vc, vd, mod1 = ins.lreg_src_c, ins.lreg_dest, ins.instr_mod1
    w = lanes.guard_vd(thread, ins, vd)
    if w is None:
        return
    sfpu = thread.core.sfpu
    en = lanes.enabled(sfpu)
    mode = mod1 & 3                                      # Mod1 > 3 behaves as Mod1 & 3 (§12)
    prng = advance_prng(sfpu, en) if mode == 1 else None
    d = cast_compute(sfpu.lreg[vc], mode, prng)
    if w:
        lanes.write(sfpu, vd, d, en)

