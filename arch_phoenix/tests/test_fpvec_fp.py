"""FP instructions through their semantic functions (spec 4.6): formats, RM, masks, specials."""

from __future__ import annotations

import math

import numpy as np
import pytest
from fpvec_support import (
    F1,
    M32,
    OP,
    QNAN32,
    F,
    f16,
    f32,
    f64,
    r1,
    r2,
    r3,
    run,
    thread,
    v,
    val16,
    val32,
    vget,
    vset,
)
from phoenix_support import skipped_when_lenient

from tessera.control import Trap
from tessera_phoenix import causes


@pytest.fixture
def t():
    return thread()


# ---------------------------------------------------------------------------- FADD / FSUB

def test_fpvec_fadd_scalar_binary32(t):
    t.wr(1, f32(1.5))
    t.wr(2, f32(2.25))
    run(t, "fadd", r2(F["fadd"], 3, 1, 2))
    assert t.rd(3, 0) == f32(3.75)
    run(t, "fsub", r2(F["fsub"], 4, 1, 2))
    assert t.rd(4, 0) == f32(-0.75)


def test_fpvec_fadd_rounding_modes(t):
    # 1 + 2^-24 + 2^-25 (= 1 + 1.5 half-ulps): RNE rounds up, RTZ truncates
    t.wr(1, f32(1.0))
    t.wr(2, f32(2.0**-24 + 2.0**-25))
    run(t, "fadd", r2(F["fadd"], 3, 1, 2, rm=0))
    run(t, "fadd", r2(F["fadd"], 4, 1, 2, rm=1))
    run(t, "fadd", r2(F["fadd"], 5, 1, 2, rm=5))     # reserved RM acts as RNE
    assert t.rd(3, 0) == 0x3F80_0001
    assert t.rd(4, 0) == 0x3F80_0000
    assert t.rd(5, 0) == 0x3F80_0001
    # negative values: RTZ rounds toward zero, i.e. up in value
    t.wr(1, f32(-1.0))
    t.wr(2, f32(-(2.0**-24 + 2.0**-25)))
    run(t, "fadd", r2(F["fadd"], 4, 1, 2, rm=1))
    assert t.rd(4, 0) == 0xBF80_0000


def test_fpvec_fadd_overflow_per_mode(t):
    t.wr(1, 0x7F7F_FFFF)
    run(t, "fadd", r2(F["fadd"], 3, 1, 1, rm=0))
    run(t, "fadd", r2(F["fadd"], 4, 1, 1, rm=1))
    assert t.rd(3, 0) == 0x7F80_0000
    assert t.rd(4, 0) == 0x7F7F_FFFF


def test_fpvec_fadd_nan_inf_zero(t):
    t.wr(1, 0x7F80_0000)
    t.wr(2, 0xFF80_0000)
    run(t, "fadd", r2(F["fadd"], 3, 1, 2))
    assert t.rd(3, 0) == QNAN32                      # inf - inf
    run(t, "fsub", r2(F["fsub"], 3, 1, 2))
    assert t.rd(3, 0) == 0x7F80_0000                 # inf - (-inf) = inf
    t.wr(1, 0x7FA0_1234)                             # sNaN with payload
    run(t, "fadd", r2(F["fadd"], 3, 1, 0))
    assert t.rd(3, 0) == QNAN32                      # canonical, payload dropped
    t.wr(1, 0x8000_0000)
    run(t, "fsub", r2(F["fsub"], 3, 1, 0))           # -0 - (+0) = -0
    assert t.rd(3, 0) == 0x8000_0000
    run(t, "fadd", r2(F["fadd"], 3, 1, 0))           # -0 + +0 = +0
    assert t.rd(3, 0) == 0


def test_fpvec_fadd_subnormals(t):
    t.wr(1, 0x0000_0001)
    t.wr(2, 0x007F_FFFF)
    run(t, "fadd", r2(F["fadd"], 3, 1, 2))
    assert t.rd(3, 0) == 0x0080_0000                 # largest subnormal + ulp = smallest normal


def test_fpvec_write_to_r0_is_discarded(t):
    t.wr(1, f32(1.0))
    run(t, "fadd", r2(F["fadd"], 0, 1, 1))
    run(t, "fma", r3(OP["fma"], 0, 1, 1, 1))
    run(t, "ftoi", r1(F1["ftoi"], 0, 1))
    assert t.rd(0, 0) == 0 and t.gpr[0] == 0


def test_fpvec_scalar_binary16(t):
    t.wr(1, 0xABCD_0000 | f16(1.5))                  # upper half ignored
    t.wr(2, f16(0.25))
    run(t, "fadd", r2(F["fadd"], 3, 1, 2, sz=1))
    assert t.rd(3, 0) == f16(1.75)                   # zero-extended binary16
    t.wr(1, f16(65504.0))
    run(t, "fadd", r2(F["fadd"], 3, 1, 1, sz=1))
    assert t.rd(3, 0) == 0x7C00                      # binary16 overflow to +inf
    run(t, "fadd", r2(F["fadd"], 3, 1, 1, sz=1, rm=1))
    assert t.rd(3, 0) == 0x7BFF


def test_fpvec_scalar_sz3_is_binary32(t):
    t.wr(1, f32(1.5))
    t.wr(2, f32(2.0))
    run(t, "fadd", r2(F["fadd"], 3, 1, 2, sz=3))
    assert t.rd(3, 0) == f32(3.5)


# ---------------------------------------------------------------------------- vectors

def test_fpvec_vector_fadd_masked(t):
    xs = [float(i) for i in range(16)]
    vset(t, 1, [f32(x) for x in xs])
    vset(t, 2, [f32(0.5)] * 16)
    vset(t, 3, [0xDEAD_BEEF] * 16)
    t.wr(50, 0b1010_0000_0000_0101)
    run(t, "fadd", r2(F["fadd"], v(3), v(1), v(2), mask=50))
    out = vget(t, 3)
    for i in range(16):
        expect = f32(xs[i] + 0.5) if (0b1010_0000_0000_0101 >> i) & 1 else 0xDEAD_BEEF
        assert out[i] == expect


def test_fpvec_vector_all_zero_and_all_one_masks(t):
    vset(t, 1, [f32(1.0)] * 16)
    vset(t, 3, [7] * 16)
    t.wr(50, 0)
    run(t, "fadd", r2(F["fadd"], v(3), v(1), v(1), mask=50))
    assert vget(t, 3) == [7] * 16                    # nothing written
    t.wr(50, M32)
    run(t, "fadd", r2(F["fadd"], v(3), v(1), v(1), mask=50))
    assert vget(t, 3) == [f32(2.0)] * 16


def test_fpvec_vector_scalar_broadcast_and_scalar_destination(t):
    vset(t, 1, [f32(float(i)) for i in range(16)])
    t.wr(2, f32(10.0))
    run(t, "fadd", r2(F["fadd"], v(3), v(1), 2))
    assert vget(t, 3) == [f32(10.0 + i) for i in range(16)]
    run(t, "fadd", r2(F["fadd"], 4, v(1), 2))        # scalar Rt: element 0
    assert t.rd(4, 0) == f32(10.0)


def test_fpvec_vector_binary16_elements(t):
    vals = [float(i) - 8 for i in range(32)]
    vset(t, 1, [f16(x) for x in vals], w=16)
    vset(t, 2, [f16(0.5)] * 32, w=16)
    t.wr(50, 0b01)                                   # lane 0 = elements 0 and 1 only
    vset(t, 3, [0x1111] * 32, w=16)
    run(t, "fadd", r2(F["fadd"], v(3), v(1), v(2), sz=1, mask=50))
    out = vget(t, 3, w=16)
    assert out[:2] == [f16(vals[0] + 0.5), f16(vals[1] + 0.5)]
    assert out[2:] == [0x1111] * 30


def test_fpvec_vector_binary64_elements_and_scalar_conversion(t):
    vset(t, 1, [f64(0.1 * i) for i in range(8)], w=64)
    t.wr(2, f32(1.5))                                # a binary32 scalar, widened exactly
    run(t, "fadd", r2(F["fadd"], v(3), v(1), 2, sz=3))
    assert vget(t, 3, w=64) == [f64(0.1 * i + 1.5) for i in range(8)]
    run(t, "fadd", r2(F["fadd"], 4, v(1), 2, sz=3))  # scalar Rt: element 0 rounded to binary32
    assert t.rd(4, 0) == f32(1.5)
    vset(t, 5, [f64(1.0 + 2.0**-30)] * 8, w=64)
    run(t, "fadd", r2(F["fadd"], 4, v(5), 0, sz=3, rm=1))
    assert t.rd(4, 0) == f32(1.0)                    # narrowed with the instruction's RM


def test_fpvec_vector_lanes4(t):
    t4 = thread(lanes=4)
    vset(t4, 1, [f32(1.0), f32(2.0), f32(3.0), f32(4.0)])
    run(t4, "fsub", r2(F["fsub"], v(2), v(1), v(1)))
    assert vget(t4, 2) == [0, 0, 0, 0]


# ---------------------------------------------------------------------------- FMA family

@pytest.mark.parametrize("name, expect", [("fma", 7.0), ("fms", 5.0), ("fnma", -5.0), ("fnms", -7.0)])
def test_fpvec_fma_family_signs(t, name, expect):
    t.wr(1, f32(2.0))
    t.wr(2, f32(3.0))
    t.wr(3, f32(1.0))
    run(t, name, r3(OP[name], 4, 1, 2, 3))
    assert t.rd(4, 0) == f32(expect)


def test_fpvec_fma_single_rounding_instruction(t):
    t.wr(1, f32(1 + 2.0**-20))
    t.wr(2, f32(2.0**-24 * (1 - 2.0**-20)))
    t.wr(3, 0x3F80_0001)
    run(t, "fma", r3(OP["fma"], 4, 1, 2, 3))
    assert t.rd(4, 0) == 0x3F80_0001                 # double rounding would give ...02


def test_fpvec_fmul_alias_adds_plus_zero(t):
    t.wr(1, f32(-0.0))
    t.wr(2, f32(5.0))
    run(t, "fma", r3(OP["fma"], 4, 1, 2, 0))         # FMUL = FMA Rt,Ra,Rb,r0: -0 + +0 = +0
    assert t.rd(4, 0) == 0
    t.wr(1, f32(3.0))
    run(t, "fma", r3(OP["fma"], 4, 1, 2, 0))
    assert t.rd(4, 0) == f32(15.0)


def test_fpvec_fma_rtz_and_vector_masked(t):
    vset(t, 1, [f32(1.0 + 2.0**-23)] * 16)
    vset(t, 2, [f32(1.0 + 3 * 2.0**-23)] * 16)      # product 1 + 2^-21 + 3*2^-46
    vset(t, 3, [f32(-1.0)] * 16)
    vset(t, 4, [0] * 16)
    t.wr(50, 0x00FF)
    run(t, "fma", r3(OP["fma"], v(4), v(1), v(2), v(3), mask=50, rm=1))
    # exact 2^-21 + 0.75 ulp: toward zero drops the 0.75 ulp, nearest rounds it up
    assert vget(t, 4) == [f32(2.0**-21)] * 8 + [0] * 8
    run(t, "fma", r3(OP["fma"], v(4), v(1), v(2), v(3), mask=50, rm=0))
    assert vget(t, 4) == [f32(2.0**-21 + 2.0**-44)] * 8 + [0] * 8


def test_fpvec_fma_invalid_operations(t):
    t.wr(1, 0x7F80_0000)
    run(t, "fma", r3(OP["fma"], 4, 1, 0, 0))         # inf * 0
    assert t.rd(4, 0) == QNAN32
    t.wr(2, f32(1.0))
    t.wr(3, 0x7F80_0000)
    run(t, "fms", r3(OP["fms"], 4, 1, 2, 3))         # inf - inf
    assert t.rd(4, 0) == QNAN32


# ---------------------------------------------------------------------------- sign ops

def test_fpvec_sign_bit_operations_keep_nan_payload(t):
    t.wr(1, 0x7FA0_1234)
    run(t, "fneg", r1(F1["fneg"], 2, 1))
    run(t, "fabs", r1(F1["fabs"], 3, 2))
    run(t, "fnabs", r1(F1["fnabs"], 4, 1))
    assert t.rd(2, 0) == 0xFFA0_1234
    assert t.rd(3, 0) == 0x7FA0_1234
    assert t.rd(4, 0) == 0xFFA0_1234
    t.wr(1, 0)
    run(t, "fneg", r1(F1["fneg"], 2, 1))
    assert t.rd(2, 0) == 0x8000_0000


def test_fpvec_sign_ops_binary16_vector(t):
    vset(t, 1, [f16(1.0), f16(-2.0)] * 16, w=16)
    run(t, "fneg", r1(F1["fneg"], v(2), v(1), sz=1))
    assert vget(t, 2, w=16) == [f16(-1.0), f16(2.0)] * 16
    run(t, "fabs", r1(F1["fabs"], v(2), v(1), sz=1))
    assert vget(t, 2, w=16) == [f16(1.0), f16(2.0)] * 16


@pytest.mark.parametrize("x, expect", [
    (3.5, 1.0), (-0.001, -1.0), (0.0, 0.0), (-0.0, 0.0), (float("inf"), 1.0), (float("-inf"), -1.0),
])
def test_fpvec_fsign(t, x, expect):
    t.wr(1, f32(x))
    run(t, "fsign", r1(F1["fsign"], 2, 1))
    assert t.rd(2, 0) == f32(expect)


def test_fpvec_fsign_nan_by_sign(t):
    t.wr(1, 0xFFC0_0000)
    run(t, "fsign", r1(F1["fsign"], 2, 1))
    assert t.rd(2, 0) == f32(-1.0)
    t.wr(1, 0x7FC0_0000)
    run(t, "fsign", r1(F1["fsign"], 2, 1))
    assert t.rd(2, 0) == f32(1.0)


@pytest.mark.parametrize("bits, expect", [
    (f32(1.0), 1), (0, 1), (1, 1), (0x7F7F_FFFF, 1), (0x7F80_0000, 0), (0xFF80_0000, 0),
    (0x7FC0_0000, 0), (0x7F80_0001, 0),
])
def test_fpvec_ffinite(t, bits, expect):
    t.wr(1, bits)
    run(t, "ffinite", r1(F1["ffinite"], 2, 1))
    assert t.rd(2, 0) == expect


def test_fpvec_fclass_vector_every_class(t):
    inputs = [0xFF80_0000, f32(-2.0), 0x8000_0001, 0x8000_0000, 0, 1, f32(2.0), 0x7F80_0000,
              0x7F80_0001, 0x7FC0_0000]
    expect = [1 << 0 | 1 << 1 | 1 << 31, 1 << 1 | 1 << 31, 1 << 1 | 1 << 2 | 1 << 31,
              1 << 1 | 1 << 3 | 1 << 31, 1 << 4 | 1 << 6, 1 << 5 | 1 << 6, 1 << 6, 1 << 6 | 1 << 7,
              1 << 6 | 1 << 8, 1 << 6 | 1 << 9]
    vset(t, 1, inputs)
    run(t, "fclass", r1(F1["fclass"], v(2), v(1)))
    assert vget(t, 2)[:10] == expect


def test_fpvec_ftrunc(t):
    vset(t, 1, [f32(x) for x in (2.9, -2.9, 0.4, -0.4, 1e10, 0.0)] + [0x7FA0_0000, 0xFF80_0000])
    run(t, "ftrunc", r1(F1["ftrunc"], v(2), v(1)))
    assert vget(t, 2)[:8] == [f32(2.0), f32(-2.0), 0, 0x8000_0000, f32(1e10), 0, QNAN32, 0xFF80_0000]


# ---------------------------------------------------------------------------- conversions

def test_fpvec_itof_truncates_by_default(t):
    t.wr(1, 16777217)                                # 2^24 + 1: not representable
    run(t, "itof", r1(F1["itof"], 2, 1))
    assert t.rd(2, 0) == f32(16777216.0)
    t.wr(1, 16777219)                                # RNE would give 16777220
    run(t, "itof", r1(F1["itof"], 2, 1))
    assert t.rd(2, 0) == f32(16777218.0)
    t.wr(1, (-16777219) & M32)
    run(t, "itof", r1(F1["itof"], 2, 1))
    assert t.rd(2, 0) == f32(-16777218.0)
    t.wr(1, 0x8000_0000)
    run(t, "itof", r1(F1["itof"], 2, 1))
    assert t.rd(2, 0) == f32(-2147483648.0)


def test_fpvec_itof_use_rm_setting():
    t = thread(itof_use_rm=True)
    t.wr(1, 16777219)
    run(t, "itof", r1(F1["itof"], 2, 1))             # RM = 0: nearest even
    assert t.rd(2, 0) == f32(16777220.0)
    run(t, "itof", r1(F1["itof"], 2, 1, rm=1))
    assert t.rd(2, 0) == f32(16777218.0)


def test_fpvec_itof_vector_widths(t):
    vset(t, 1, [(-3) & 0xFFFF, 7] * 16, w=16)
    run(t, "itof", r1(F1["itof"], v(2), v(1), sz=1))
    assert vget(t, 2, w=16)[:2] == [f16(-3.0), f16(7.0)]
    vset(t, 1, [(-(2**40)) & (2**64 - 1)] * 8, w=64)
    run(t, "itof", r1(F1["itof"], v(2), v(1), sz=3))
    assert vget(t, 2, w=64) == [f64(-(2.0**40))] * 8


@pytest.mark.parametrize("x, rm, expect", [
    (2.5, 0, 2), (3.5, 0, 4), (-2.5, 0, -2), (2.7, 1, 2), (-2.7, 1, -2), (-2.7, 0, -3),
    (3e9, 0, 0x7FFF_FFFF), (-3e9, 0, -2**31), (float("inf"), 0, 0x7FFF_FFFF),
    (float("-inf"), 1, -2**31), (float("nan"), 0, 0x7FFF_FFFF), (-0.0, 0, 0), (1e-30, 0, 0),
])
def test_fpvec_ftoi(t, x, rm, expect):
    t.wr(1, f32(x))
    run(t, "ftoi", r1(F1["ftoi"], 2, 1, rm=rm))
    assert t.rd(2, 0) == expect & M32


def test_fpvec_ftoi_binary16_vector_saturates_at_16_bits(t):
    vset(t, 1, [f16(40000.0), f16(-40000.0), f16(12.5), f16(-1.0)] * 8, w=16)
    run(t, "ftoi", r1(F1["ftoi"], v(2), v(1), sz=1))
    assert vget(t, 2, w=16)[:4] == [0x7FFF, 0x8000, 12, 0xFFFF]


def test_fpvec_ftoi_scalar_binary16_gives_int32(t):
    t.wr(1, f16(-300.0))
    run(t, "ftoi", r1(F1["ftoi"], 2, 1, sz=1))
    assert t.rd(2, 0) == (-300) & M32


# ---------------------------------------------------------------------------- estimates

def test_fpvec_fres_accuracy_and_specials(t):
    xs = [3.0, -7.0, 0.1, 1e-20, 12345.678]
    vset(t, 1, [f32(x) for x in xs] + [0, 0x8000_0000, 0x7F80_0000, 0x7FC0_0000])
    run(t, "fres", r1(F1["fres"], v(2), v(1)))
    out = vget(t, 2)
    for x, got in zip(xs, out):
        want = 1.0 / float(np.float32(x))
        assert abs(val32(got) - want) <= abs(want) * 2.0**-24  # correctly rounded: <= half ulp
    assert out[5:9] == [0x7F80_0000, 0xFF80_0000, 0, QNAN32]


def test_fpvec_frsqrte_accuracy_and_specials(t):
    xs = [2.0, 0.5, 1e-30, 3e30, 0.7]
    vset(t, 1, [f32(x) for x in xs] + [0, 0x8000_0000, 0x7F80_0000, f32(-1.0), 0x7FC0_0000])
    run(t, "frsqrte", r1(F1["frsqrte"], v(2), v(1)))
    out = vget(t, 2)
    for x, got in zip(xs, out):
        want = 1.0 / math.sqrt(float(np.float32(x)))
        assert abs(val32(got) - want) <= abs(want) * 2.0**-24
    assert out[5:10] == [0x7F80_0000, 0xFF80_0000, 0, QNAN32, QNAN32]


def test_fpvec_fsigmoid_instruction(t):
    xs = [-9.0, -8.0, -1.0, 0.0, 1.0, 8.0, 9.0]
    vset(t, 1, [f32(x) for x in xs])
    run(t, "fsigmoid", r1(F1["fsigmoid"], v(2), v(1)))
    out = [val32(b) for b in vget(t, 2)[:7]]
    assert out[0] == 0.0 and out[6] == 1.0           # saturated beyond +-8
    for x, got in zip(xs[1:6], out[1:6]):
        want = 1 / (1 + math.exp(-x))
        assert abs(got - want) <= float(np.spacing(np.float32(want)))
    t.wr(3, f16(-20.0))
    run(t, "fsigmoid", r1(F1["fsigmoid"], 4, 3, sz=1))
    assert val16(t.rd(4, 0)) == 0.0


# ---------------------------------------------------------------------------- FMAN

def test_fpvec_fman_is_unimplemented(t):
    t.wr(2, 99)
    with pytest.raises(Trap) as info:
        run(t, "fman", r1(F1["fman"], 2, 1))
    assert info.value.cause == causes.UNIMP
    assert t.rd(2, 0) == 99                          # no side effect before the trap


def test_fpvec_fman_lenient_is_nop():
    t = thread(lenient=True)
    t.wr(2, 99)
    skipped_when_lenient(t, lambda: run(t, "fman", r1(F1["fman"], 2, 1)))
    assert t.rd(2, 0) == 99
