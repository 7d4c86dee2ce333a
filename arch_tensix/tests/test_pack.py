"""The packers (PACR, PACR_SETREG) on Wormhole B0 and Blackhole, through the real decoder,
engine and board.

Expectations are computed independently: integer-valued data against numpy, BFP
blocks from FloatBitPatterns.md by hand (and decoded with the unpackers' BFP widening),
compressed streams with a decoder written from Compression.md.  Instruction words come
from an encoder written from the PACR encoding diagrams / tt-llk argument positions.
"""

from __future__ import annotations

import numpy as np
import pytest

from tessera.errors import UnhandledTrap
from tessera.machine import Machine
from tessera_tensix.adc import PACKERS, adcs
from tessera_tensix.arch import TENSIX_BH, TENSIX_WH
from tessera_tensix.config import field_widths
from tessera_tensix.dest import shuffle_fp16, shuffle_fp32
from tessera_tensix.formats import bfp8_to_bf16
from tessera_tensix.pack import packers

ARCHS = {"wh": TENSIX_WH, "bh": TENSIX_BH}
CHIPS = ("wh", "bh")
FP32, FP16, BFP8A, TF32, BF16, BFP8, BFP4 = 0, 1, 2, 4, 5, 6, 7
INT32, INT16, FP8, INT8, BFP2 = 8, 9, 10, 14, 15
OUT = 0x2000                     # where the tests put packed data (byte offset in L1)


# ------------------------------------------------------------------ encoder
def PACR_WH(addr_mode=0, zero_write=0, pack_sel=1, ovrd=0, concat=0, flush=0, last=0):
    return (0x41 << 24 | addr_mode << 15 | zero_write << 12 | pack_sel << 8 | ovrd << 7
            | concat << 4 | flush << 1 | last)


def PACR_BH(cfg_ctx=0, row_pad=0, strided=0, addr_mode=0, adc_ctx=0, zero_write=0, intf=0xF, ovrd=0,
            concat=0, ctxt_ctrl=0, flush=0, last=0):
    return (0x41 << 24 | cfg_ctx << 21 | row_pad << 18 | strided << 17 | addr_mode << 15 | adc_ctx << 13
            | zero_write << 12 | intf << 8 | ovrd << 7 | concat << 4 | ctxt_ctrl << 2 | flush << 1 | last)


def PACR(chip, **kw):
    """A single-interface PACR: packer 0 on Wormhole, one read interface on Blackhole."""
    if chip == "wh":
        return PACR_WH(**kw)
    kw.setdefault("intf", 1)
    kw.pop("pack_sel", None)
    return PACR_BH(**kw)


def PACR_SETREG_WH(addr_sel, value10, addr_mid, push=1, pack_sel=0xF, flush=1, last=0):
    return (0x4A << 24 | push << 23 | addr_sel << 22 | value10 << 12 | pack_sel << 8 | addr_mid << 2
            | flush << 1 | last)


def SETADCXX(sets, x_end, x_start):
    return 0x5E << 24 | sets << 21 | x_end << 10 | x_start


# ------------------------------------------------------------------ machine helpers
def machine(chip, lenient=False):
    return Machine(ARCHS[chip], config={"lenient": True} if lenient else {})


def core_of(m):
    return m.agent("t0").core


def setup(m, in_fmt, out_fmt, *, dstacc=None, read32=0, out=OUT, slot="THCON_SEC0_REG1_", **extra):
    """A plain pack: no compression, no edge masking, data at byte ``out``."""
    cfg = core_of(m).cfg
    fields = {"ALU_FORMAT_SPEC_REG2_Dstacc": in_fmt if dstacc is None else dstacc,
              "PCK_DEST_RD_CTRL_Read_32b_data": read32, "PCK_EDGE_OFFSET_SEC0_mask": 0xFFFF,
              slot + "In_data_format": in_fmt, slot + "Out_data_format": out_fmt,
              slot + "Disable_zero_compress": 1, slot + "L1_Dest_addr": out // 16 - 1}
    fields.update(extra)
    for name, value in fields.items():
        cfg.set(name, value)


def x_range(m, start, end, adc=0):
    a = adcs(core_of(m))
    a.set(adc, PACKERS, 0, "X", start)
    a.set(adc, PACKERS, 1, "X", end)


def run(m, *words):
    m.space.write_bytes(0, b"".join(w.to_bytes(4, "little") for w in [*words, 0]))
    result = m.run(max_steps=10_000)
    assert result.exit_code == 0
    return result


def l1(m, offset, dtype, count):
    return core_of(m).l1.read_as(offset, dtype, count)


def bf16_of(values):
    return (np.asarray(values, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)


def as_f32(bits16):
    return (np.asarray(bits16, dtype=np.uint32) << 16).view(np.float32)


def ints(rng, n, lo, hi):
    return rng.integers(lo, hi, size=n).astype(np.float32)


# ------------------------------------------------------------------ exact conversions
@pytest.mark.parametrize("chip", CHIPS)
def test_bf16_dest_to_bf16_l1_is_exact(chip):
    rng = np.random.default_rng(1)
    vals = ints(rng, 64, -256, 256).reshape(4, 16)
    m = machine(chip)
    core_of(m).dest.write_bf16(vals)
    setup(m, BF16, BF16)
    x_range(m, 0, 63 if chip == "wh" else 15)
    words = [PACR(chip, last=1)] if chip == "wh" else [PACR_BH(intf=0xF, last=1)]
    run(m, *words)
    np.testing.assert_array_equal(as_f32(l1(m, OUT, "<u2", 64)), vals.reshape(-1))


@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("in_fmt,out_fmt,dtype,limit", [(FP32, FP32, "<f4", 1 << 24), (FP32, BF16, "<u2", 256),
                                                        (FP32, FP16, "<f2", 2048), (TF32, TF32, "<f4", 2048)])
def test_fp32_dest_packs_integers_exactly(chip, in_fmt, out_fmt, dtype, limit):
    """FP32 Dest (Read_32b_data; identity early conversion, or rounding to TF32) -> each
    float output format: integers the format holds exactly come out equal to numpy's."""
    rng = np.random.default_rng(out_fmt)
    vals = ints(rng, 16, -limit + 1, limit).reshape(1, 16)
    m = machine(chip)
    core_of(m).dest.write_fp32(vals, row0=3)
    setup(m, in_fmt, out_fmt, read32=1)
    core_of(m).cfg.set("PCK0_ADDR_CTRL_XY_REG_0_Ystride", 16 * 4)
    adcs(core_of(m)).set(0, PACKERS, 0, "Y", 3)
    x_range(m, 0, 15)
    run(m, PACR(chip, last=1))
    got = l1(m, OUT, dtype, 16)
    if out_fmt == BF16:
        got = as_f32(got)
    np.testing.assert_array_equal(got.astype(np.float64), vals.reshape(-1).astype(np.float64))


@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("out_fmt,dtype", [(FP16, "<f2"), (FP32, "<f4"), (BF16, "<u2")])
def test_fp16_dest_packs_exactly(chip, out_fmt, dtype):
    rng = np.random.default_rng(7)
    vals = ints(rng, 32, -200, 200)
    cells = shuffle_fp16(vals.astype(np.float16).view(np.uint16).astype(np.uint32)).astype(np.uint16)
    m = machine(chip)
    core_of(m).dest.bits[:2] = cells.reshape(2, 16)
    setup(m, FP16, out_fmt, dstacc=FP16, THCON_SEC0_REG1_In_data_format=FP16)
    x_range(m, 0, 31 if chip == "wh" else 15)
    run(m, PACR_WH(last=1) if chip == "wh" else PACR_BH(intf=0b11, last=1))
    got = l1(m, OUT, dtype, 32)
    if out_fmt == BF16:
        got = as_f32(got)
    np.testing.assert_array_equal(got.astype(np.float64), vals.astype(np.float64))


def _int32_dest(m, values):
    """Sign-magnitude INT32 values into Dst32b rows 0.. (Dst layout)."""
    v = np.asarray(values, dtype=np.int64).reshape(-1, 16)
    sm = (np.where(v < 0, 1 << 31, 0) | np.abs(v)).astype(np.uint32)
    w = shuffle_fp32(sm)
    bits = core_of(m).dest.bits
    for r in range(v.shape[0]):
        p = ((r & 0x1F8) << 1) | (r & 7)
        bits[p] = (w[r] >> 16).astype(np.uint16)
        bits[p + 8] = (w[r] & 0xFFFF).astype(np.uint16)


def _sm8(byte):
    b = np.asarray(byte, dtype=np.int64)
    return np.where(b & 0x80, -(b & 0x7F), b & 0x7F)


@pytest.mark.parametrize("chip", CHIPS)
def test_int32_dest_to_int8_and_int32(chip):
    rng = np.random.default_rng(3)
    vals = rng.integers(-127, 128, size=16)
    m = machine(chip)
    _int32_dest(m, vals)
    setup(m, INT8, INT8, read32=1)
    x_range(m, 0, 15)
    run(m, PACR(chip, last=1))
    np.testing.assert_array_equal(_sm8(l1(m, OUT, "u1", 16)), vals)
    m = machine(chip)
    big = rng.integers(-(1 << 30), 1 << 30, size=16)
    _int32_dest(m, big)
    setup(m, INT32, INT32, read32=1)
    x_range(m, 0, 15)
    run(m, PACR(chip, last=1))
    got = l1(m, OUT, "<u4", 16).astype(np.int64)
    np.testing.assert_array_equal(np.where(got >> 31, -(got & 0x7FFFFFFF), got), big)


@pytest.mark.parametrize("chip", CHIPS)
def test_int8_shift_round_saturate_and_uint8(chip):
    """INT_DESCALE shift 2: magnitude >> 2 rounded half away from zero, saturated."""
    vals = np.array([0, 1, 2, 3, 6, -6, 10, -10, 508, 509, 510, 2000, -2000, -3, 4, 5])
    m = machine(chip)
    _int32_dest(m, vals)
    setup(m, INT8, INT8, read32=1, INT_DESCALE_Enable=1, INT_DESCALE_VALUES_SEC0_Value=2)
    x_range(m, 0, 15)
    run(m, PACR(chip, last=1))
    mag = (np.abs(vals) + 2) >> 2
    want = np.sign(vals) * np.minimum(mag, 127)
    np.testing.assert_array_equal(_sm8(l1(m, OUT, "u1", 16)), want)
    m = machine(chip)
    _int32_dest(m, vals)
    setup(m, INT8, INT8, read32=1, PCK_DEST_RD_CTRL_Read_unsigned=1)
    x_range(m, 0, 15)
    run(m, PACR(chip, last=1))
    np.testing.assert_array_equal(l1(m, OUT, "u1", 16), np.where(vals < 0, 0, np.minimum(vals, 255)))


@pytest.mark.parametrize("chip", CHIPS)
def test_bf16_rounding_of_fp32_dest(chip):
    """FP32 -> BF16 in the early conversion rounds half away from zero; Read_raw truncates."""
    x = np.array([1 + 2**-8, 1 + 3 * 2**-9, -(1 + 3 * 2**-9), 1 + 2**-9] + [0.0] * 12, dtype=np.float32)
    m = machine(chip)
    core_of(m).dest.write_fp32(x.reshape(1, 16))
    setup(m, BF16, BF16, read32=1)
    x_range(m, 0, 15)
    run(m, PACR(chip, last=1))
    got = as_f32(l1(m, OUT, "<u2", 4))
    np.testing.assert_array_equal(got, [1 + 2**-7, 1 + 2**-7, -(1 + 2**-7), 1.0])
    m = machine(chip)
    core_of(m).dest.write_fp32(x.reshape(1, 16))
    setup(m, BF16, BF16, read32=1, PCK_DEST_RD_CTRL_Read_int8=1)
    x_range(m, 0, 15)
    run(m, PACR(chip, last=1))
    np.testing.assert_array_equal(as_f32(l1(m, OUT, "<u2", 4)), [1.0, 1.0, -1.0, 1.0])


# ------------------------------------------------------------------ BFP
def _bfp_case(chip, out_fmt, values, dstacc=BF16):
    m = machine(chip)
    core_of(m).dest.write_bf16(np.asarray(values, dtype=np.float32).reshape(-1, 16))
    setup(m, BF16, out_fmt, dstacc=dstacc, THCON_SEC0_REG1_Exp_section_size=1)
    x_range(m, 0, len(values) - 1 if chip == "wh" else 15)
    if chip == "wh":
        run(m, PACR_WH(last=1))
    else:
        run(m, PACR_BH(intf=(1 << (len(values) // 16)) - 1, last=1))
    return m


@pytest.mark.parametrize("chip", CHIPS)
def test_bfp8_block_exponent_and_magnitudes_by_hand(chip):
    """16 datums share the largest exponent (16 -> 131); magnitude = s8 / 2**(E-e+1),
    rounded half away from zero: 8.125 (s8 130, shift 2) -> 32.5 -> 33, and 0.125
    (s8 128, shift 8) -> 0.5 -> 1."""
    values = [16.0, 1.0, 3.0, 8.125, -8.125, 0.0, 1.5, 2.0, 0.25, 0.125, -16.0, 15.0, 4.0, 5.0, 6.0, 7.0]
    m = _bfp_case(chip, BFP8, values)
    # exponent section (one 16-byte unit) first, the datums after it
    assert l1(m, OUT, "u1", 1)[0] == 131
    np.testing.assert_array_equal(l1(m, OUT, "u1", 16)[1:], 0)          # padded to 16 bytes
    mags = [64, 4, 12, 33, 33, 0, 6, 8, 1, 1, 64, 60, 16, 20, 24, 28]
    signs = [0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0]
    data = l1(m, OUT + 16, "u1", 16)
    np.testing.assert_array_equal(data, np.array(signs) << 7 | np.array(mags))
    # the unpackers' widening reads the block back (8.125 -> 8.25, 0.125 -> 0.25)
    back = as_f32(bfp8_to_bf16(data, 131))
    want = np.array(values, dtype=np.float32)
    want[3], want[4], want[9] = 8.25, -8.25, 0.25
    np.testing.assert_array_equal(back, want)


@pytest.mark.parametrize("chip", CHIPS)
def test_bfp4_bfp2_and_bfp8a(chip):
    values = [4.0, 3.0, 2.0, 1.0, -4.0, 0.5, 6.0, 7.0] * 2
    m = _bfp_case(chip, BFP4, values)
    assert l1(m, OUT, "u1", 1)[0] == 129                                # 7.0 -> 2**2
    nib = l1(m, OUT + 16, "u1", 8)
    datum = np.stack([nib & 0xF, nib >> 4], axis=1).reshape(-1)
    mag7 = np.array([64, 48, 32, 16, 64, 8, 96, 112] * 2)               # value * 2**6 / 2**(E-127)
    np.testing.assert_array_equal(datum, np.array([0, 0, 0, 0, 1, 0, 0, 0] * 2) << 3 | mag7 >> 4)
    assert datum[5] == 0                                                # 0.5 -> magnitude 0, sign 0
    m = _bfp_case(chip, BFP2, values)
    b = l1(m, OUT + 16, "u1", 4)
    datum = np.stack([b >> s & 3 for s in (0, 2, 4, 6)], axis=1).reshape(-1)
    np.testing.assert_array_equal(datum, np.array([0, 0, 0, 0, 1, 0, 0, 0] * 2) << 1 | mag7 >> 6)
    m = _bfp_case(chip, BFP8A, [8.0, 1.0, -2.0, 0.0] * 4, dstacc=BF16)
    assert l1(m, OUT, "u1", 1)[0] == 18                                 # 8.0 -> FP16 exponent 18
    np.testing.assert_array_equal(l1(m, OUT + 16, "u1", 4), [64, 8, 0x80 | 16, 0])


# ------------------------------------------------------------------ edge masking
@pytest.mark.parametrize("chip", CHIPS)
def test_edge_mask_zero_and_minus_infinity_by_row(chip):
    """Rows whose row-set mapping picks SEC1 keep only columns 0..3; the others all."""
    vals = np.arange(1, 65, dtype=np.float32).reshape(4, 16)
    for mode in (0, 1):
        m = machine(chip)
        core_of(m).dest.write_bf16(vals)
        setup(m, BF16, BF16, PCK_EDGE_OFFSET_SEC1_mask=0x000F, PCK_EDGE_MODE_mode=mode,
              TILE_ROW_SET_MAPPING_0_row_set_mapping_1=1, TILE_ROW_SET_MAPPING_0_row_set_mapping_3=1,
              PACK_COUNTERS_SEC0_pack_reads_per_xy_plane=16)
        x_range(m, 0, 31 if chip == "wh" else 15)
        # two PACRs of two rows each: the tile position generator carries on between them
        words = [PACR_WH(), PACR_WH(last=1)] if chip == "wh" else [PACR_BH(intf=0b11), PACR_BH(intf=0b11, last=1)]
        core_of(m).cfg.set("PCK0_ADDR_BASE_REG_0_Base", 0)
        if chip == "wh":
            core_of(m).cfg.set("PCK0_ADDR_CTRL_XY_REG_0_Ystride", 2 * 2 * 16)
            core_of(m).threads[0].tcfg.set("ADDR_MOD_PACK_SEC0_YsrcIncr", 1)
        else:
            core_of(m).cfg.set("PCK0_ADDR_CTRL_XY_REG_0_Ystride", 2 * 16)
            core_of(m).threads[0].tcfg.set("ADDR_MOD_PACK_SEC0_YsrcIncr", 2)
        run(m, *words)
        got = as_f32(l1(m, OUT, "<u2", 64)).reshape(4, 16)
        want = vals.copy()
        want[1::2, 4:] = -np.inf if mode else 0.0
        np.testing.assert_array_equal(got, want)


def test_default_edge_masks_zero_everything():
    """Backend config resets to zero: with every PCK_EDGE_OFFSET mask 0 nothing gets through."""
    m = machine("wh")
    core_of(m).dest.write_bf16(np.full((1, 16), 3.0, dtype=np.float32))
    setup(m, BF16, BF16, PCK_EDGE_OFFSET_SEC0_mask=0)
    x_range(m, 0, 15)
    run(m, PACR_WH(last=1))
    np.testing.assert_array_equal(l1(m, OUT, "<u2", 16), 0)


# ------------------------------------------------------------------ ReLU / thresholding
RELU_IN = np.array([-3.0, -0.0, 0.0, 0.5, 1.0, 2.0, 3.0, 100.0, -100.0, 7.0, 8.0, 9.0, -1.0, 2.5, 6.0, 4.0],
                   dtype=np.float32)


@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("mode", [0, 1, 2, 3])
def test_relu_modes(chip, mode):
    m = machine(chip)
    core_of(m).dest.write_bf16(RELU_IN.reshape(1, 16))
    setup(m, BF16, BF16, STACC_RELU_ApplyRelu=mode, STACC_RELU_ReluThreshold=int(bf16_of([2.5])[0]))
    x_range(m, 0, 15)
    run(m, PACR(chip, last=1))
    x = RELU_IN
    want = {0: x, 1: np.where(x <= 0, 0, x), 2: np.where(x <= 2.5, 0, x),
            3: np.where(x <= 0, 0, np.minimum(x, 2.5))}[mode]
    got = l1(m, OUT, "<u2", 16)
    np.testing.assert_array_equal(as_f32(got), want.astype(np.float32))
    if mode:
        assert got[1] == 0                       # -0 <= 0: becomes +0


def test_relu_negative_threshold_is_a_rule():
    m = machine("wh")
    core_of(m).dest.write_bf16(RELU_IN.reshape(1, 16))
    setup(m, BF16, BF16, STACC_RELU_ApplyRelu=2, STACC_RELU_ReluThreshold=int(bf16_of([-1.0])[0]))
    x_range(m, 0, 15)
    with pytest.raises(UnhandledTrap, match="ReLU threshold 0xbf80 is negative"):
        run(m, PACR_WH(last=1))
    m = machine("wh", lenient=True)
    core_of(m).dest.write_bf16(RELU_IN.reshape(1, 16))
    setup(m, BF16, BF16, STACC_RELU_ApplyRelu=2, STACC_RELU_ReluThreshold=int(bf16_of([-1.0])[0]))
    x_range(m, 0, 15)
    run(m, PACR_WH(last=1))
    np.testing.assert_array_equal(as_f32(l1(m, OUT, "<u2", 16)), np.where(RELU_IN <= -1, 0, RELU_IN))


@pytest.mark.parametrize("chip", CHIPS)
def test_exponent_thresholding(chip):
    """Exp_threshold 130: datums with exponent below 130 (|x| < 8) become zero."""
    m = machine(chip)
    core_of(m).dest.write_bf16(RELU_IN.reshape(1, 16))
    setup(m, BF16, BF16, THCON_SEC0_REG1_Exp_threshold_en=1, THCON_SEC0_REG1_Exp_threshold=130)
    x_range(m, 0, 15)
    run(m, PACR(chip, last=1))
    np.testing.assert_array_equal(as_f32(l1(m, OUT, "<u2", 16)), np.where(np.abs(RELU_IN) < 8, 0, RELU_IN))


# ------------------------------------------------------------------ downsampling
@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("mask", [0x5555, 0x000F, 0x8001, 0xFFFE])
def test_downsampling_keeps_the_mask_pattern(chip, mask):
    vals = np.arange(1, 33, dtype=np.float32)
    m = machine(chip)
    core_of(m).dest.write_bf16(vals.reshape(2, 16))
    setup(m, BF16, BF16, THCON_SEC0_REG1_Downsample_mask=mask)
    x_range(m, 0, 31 if chip == "wh" else 15)
    run(m, PACR_WH(last=1) if chip == "wh" else PACR_BH(intf=0b11, last=1))
    keep = [(mask >> (i % 16)) & 1 for i in range(32)]
    want = vals[np.array(keep, dtype=bool)]
    got = as_f32(l1(m, OUT, "<u2", 32))
    np.testing.assert_array_equal(got[:want.size], want)
    np.testing.assert_array_equal(got[want.size:], 0)                   # zero padding of the flush


# ------------------------------------------------------------------ Dest validity
@pytest.mark.parametrize("chip", CHIPS)
def test_invalid_dest_rows_read_as_zero(chip):
    vals = np.arange(1, 65, dtype=np.float32).reshape(4, 16)
    m = machine(chip)
    core = core_of(m)
    core.dest.write_bf16(vals)
    core.dest.invalidate([1, 3])
    setup(m, BF16, BF16)
    x_range(m, 0, 63 if chip == "wh" else 15)
    run(m, PACR_WH(last=1) if chip == "wh" else PACR_BH(intf=0xF, last=1))
    want = vals.copy()
    want[[1, 3]] = 0
    np.testing.assert_array_equal(as_f32(l1(m, OUT, "<u2", 64)).reshape(4, 16), want)


# ------------------------------------------------------------------ addresses and streams
@pytest.mark.parametrize("chip", CHIPS)
def test_consecutive_pacrs_append_and_last_flushes(chip):
    """Without Last the second PACR continues the stream; 3 + 3 BF16 datums = 12 bytes,
    written padded to 16 at Last; the next PACR takes a fresh address (moved by Ydst)."""
    vals = np.arange(1, 17, dtype=np.float32)
    m = machine(chip)
    core_of(m).dest.write_bf16(vals.reshape(1, 16))
    core_of(m).l1.write(OUT, np.full(512, 0xEE, dtype=np.uint8))
    setup(m, BF16, BF16, PCK0_ADDR_CTRL_XY_REG_1_Ystride=16)      # 16 x 16 bytes per Ydst
    m.agent("t0").tcfg.set("ADDR_MOD_PACK_SEC1_YdstIncr", 1)
    x_range(m, 0, 2)
    run(m, PACR(chip, addr_mode=1), PACR(chip, addr_mode=1, last=1), PACR(chip, last=1))
    got = l1(m, OUT, "<u2", 8)
    np.testing.assert_array_equal(as_f32(got[:6]), [1, 2, 3, 1, 2, 3])
    np.testing.assert_array_equal(got[6:8], 0)
    assert (l1(m, OUT + 16, "u1", 16) == 0xEE).all()                   # nothing past the flush
    np.testing.assert_array_equal(as_f32(l1(m, OUT + 512, "<u2", 3)), [1, 2, 3])


@pytest.mark.parametrize("chip", CHIPS)
def test_setadcxx_and_addr_mod_walk_a_face(chip):
    """SETADCXX sets the X range; ADDR_MOD_PACK advances the ADC's Y (source row and
    destination); the output address moves with Ydst in 256-byte units only."""
    vals = np.arange(64, dtype=np.float32).reshape(4, 16)
    m = machine(chip)
    core = core_of(m)
    core.dest.write_bf16(vals)
    setup(m, BF16, BF16, PCK0_ADDR_CTRL_XY_REG_0_Ystride=32, PCK0_ADDR_CTRL_XY_REG_1_Ystride=8)
    tcfg = m.agent("t0").tcfg
    tcfg.set("ADDR_MOD_PACK_SEC1_YsrcIncr", 1)
    tcfg.set("ADDR_MOD_PACK_SEC1_YdstIncr", 1)
    run(m, SETADCXX(0b100, 15, 0), *[PACR(chip, addr_mode=1, last=1) for _ in range(4)])
    # rows 0..3; destination offsets (16-byte units) 0, 8 -> 0 (low 4 bits masked), 16, 24 -> 16
    np.testing.assert_array_equal(as_f32(l1(m, OUT, "<u2", 16)), vals[1])
    np.testing.assert_array_equal(as_f32(l1(m, OUT + 256, "<u2", 16)), vals[3])
    assert adcs(core).get(0, PACKERS, 0, "Y") == 4
    assert adcs(core).get(0, PACKERS, 1, "Y") == 4


def test_four_wormhole_packers_at_once():
    """PackerMask 0xF: each packer reads its own Dest offset and writes its own L1 address;
    packers 1..3 add packer 0's address when its L1_Dest_addr has bit 31 set."""
    vals = np.arange(64 * 4, dtype=np.float32).reshape(16, 16)
    m = machine("wh")
    core = core_of(m)
    core.dest.write_bf16(vals)
    for i, slot in enumerate(("THCON_SEC0_REG1_", "THCON_SEC0_REG8_", "THCON_SEC1_REG1_", "THCON_SEC1_REG8_")):
        setup(m, BF16, BF16, slot=slot, out=OUT if i == 0 else 0x400 * i)
        core.cfg.set(f"DEST_TARGET_REG_CFG_PACK_SEC{i}_Offset", 4 * i)
    core.cfg.set("THCON_SEC0_REG1_L1_Dest_addr", (1 << 31) | (OUT // 16 - 1))
    x_range(m, 0, 63)
    run(m, PACR_WH(pack_sel=0xF, last=1))
    np.testing.assert_array_equal(as_f32(l1(m, OUT, "<u2", 64)), vals[0:4].reshape(-1))
    for i in (1, 2, 3):
        at = OUT + 0x400 * i
        np.testing.assert_array_equal(as_f32(l1(m, at, "<u2", 64)), vals[4 * i:4 * i + 4].reshape(-1))


def test_undefined_packer_mask_is_a_rule():
    m = machine("wh")
    core_of(m).dest.write_bf16(np.ones((1, 16), dtype=np.float32))
    setup(m, BF16, BF16)
    x_range(m, 0, 15)
    with pytest.raises(UnhandledTrap, match="PackerMask 0b0101 is undefined"):
        run(m, PACR_WH(pack_sel=0b0101, last=1))


@pytest.mark.parametrize("chip", CHIPS)
def test_l1_overflow_stops_with_one_line(chip):
    m = machine(chip)
    core_of(m).dest.write_bf16(np.ones((1, 16), dtype=np.float32))
    size = core_of(m).l1.size
    setup(m, BF16, BF16, out=size - 16)
    x_range(m, 0, 15)
    with pytest.raises(UnhandledTrap) as info:
        run(m, PACR(chip, last=1))
    text = str(info.value)
    assert "outside L1" in text and "packer 0" in text and "\n" not in text


@pytest.mark.parametrize("chip", CHIPS)
def test_zero_write_and_flush(chip):
    m = machine(chip)
    core_of(m).dest.write_bf16(np.ones((1, 16), dtype=np.float32))
    core_of(m).l1.write(OUT, np.full(64, 0xEE, dtype=np.uint8))
    setup(m, BF16, BF16)
    x_range(m, 0, 4)
    run(m, PACR(chip, zero_write=1), PACR(chip, flush=1))
    np.testing.assert_array_equal(l1(m, OUT, "u1", 16), 0)             # 5 zeros, padded by Flush
    assert (l1(m, OUT + 16, "u1", 16) == 0xEE).all()


def test_l1_source_packer_zero():
    """Source_interface_selection 1: packer 0 reads BF16 datums from L1 (L1-to-L1 pack)."""
    m = machine("wh")
    src = bf16_of(np.arange(1, 17, dtype=np.float32))
    core_of(m).l1.write(0x4000, src)
    setup(m, BF16, FP32, THCON_SEC0_REG1_Source_interface_selection=1, PCK0_ADDR_BASE_REG_0_Base=0x4000)
    x_range(m, 0, 15)
    run(m, PACR_WH(last=1))
    np.testing.assert_array_equal(l1(m, OUT, "<f4", 16), np.arange(1, 17))


# ------------------------------------------------------------------ compression
def _decompress(m, rsi_at, data_at, rows, nbytes):
    """Compression.md's format read back: RSI, then groups of 32 datums + 32 counters."""
    rsi = l1(m, rsi_at, "<u2", rows + 1)
    assert rsi[0] == 0
    total = int(rsi[-1])
    out, at, left = [], data_at, total
    while left > 0:
        n = min(32, left)
        datums = l1(m, at, {2: "<u2", 4: "<u4"}[nbytes], 32)[:n]
        nib = l1(m, at + 32 * nbytes, "u1", 16)
        counts = np.stack([nib & 0xF, nib >> 4], axis=1).reshape(-1)[:n]
        for d, c in zip(datums, counts):
            out += [int(d)] + [0] * int(c)
        at += 32 * nbytes + 16
        left -= n
    return rsi, out


@pytest.mark.parametrize("chip", CHIPS)
def test_compression_round_trip(chip):
    vals = np.zeros(48, dtype=np.float32)
    vals[[0, 5, 6, 40]] = [1, 2, 3, 4]              # a zero run of 33 (longer than 15)
    m = machine(chip)
    core_of(m).dest.write_bf16(vals.reshape(3, 16))
    setup(m, BF16, BF16, THCON_SEC0_REG1_Disable_zero_compress=0, THCON_SEC0_REG1_Row_start_section_size=1)
    x_range(m, 0, 15)
    core_of(m).cfg.set("PCK0_ADDR_CTRL_XY_REG_0_Ystride", 32)
    m.agent("t0").tcfg.set("ADDR_MOD_PACK_SEC1_YsrcIncr", 1)
    # row 1 = Dest rows 0..1 (Concat joins two PACRs), row 2 = Dest row 2
    run(m, PACR(chip, addr_mode=1, concat=1), PACR(chip, addr_mode=1), PACR(chip, addr_mode=1, last=1))
    rsi, out = _decompress(m, OUT, OUT + 16, 2, 2)
    assert rsi[1] < 32 and rsi[2] - rsi[1] >= 2
    np.testing.assert_array_equal(as_f32(np.array(out, dtype=np.uint16)), vals)


# ------------------------------------------------------------------ histogram
def test_exponent_histogram_and_clear():
    m = machine("wh")
    core = core_of(m)
    core.dest.write_bf16(np.array([[1.0, 2.0, 2.5, 4.0] * 4], dtype=np.float32))
    setup(m, BF16, BF16)
    m.agent("t0").tcfg.set("ENABLE_ACC_STATS_Enable", 1)
    x_range(m, 0, 15)
    run(m, PACR_WH(last=1))
    p = packers(core).packers[0]
    assert p.max_exponent == 129
    assert (p.histogram[127 & 31], p.histogram[128 & 31], p.histogram[129 & 31]) == (4, 8, 4)
    packers(core).clear_exponent_histograms()
    assert not p.histogram.any() and p.max_exponent == 0


# ------------------------------------------------------------------ rules
@pytest.mark.parametrize("chip", CHIPS)
def test_undefined_early_conversion_is_a_rule(chip):
    m = machine(chip)
    setup(m, FP16, FP16, dstacc=FP16, read32=1)
    x_range(m, 0, 15)
    with pytest.raises(UnhandledTrap, match="early conversion from 32-bit Dest to FP16 is not defined"):
        run(m, PACR(chip, last=1))


@pytest.mark.parametrize("field,what", [("THCON_SEC0_REG1_Pack_L1_Acc", "L1 accumulation"),
                                        ("ALU_ROUNDING_MODE_Packer_srnd_en", "stochastic rounding")])
def test_unmodelled_features_stop(field, what):
    m = machine("wh")
    setup(m, BF16, BF16, **{field: 1})
    x_range(m, 0, 15)
    with pytest.raises(UnhandledTrap, match=f"{what} .* is not modelled"):
        run(m, PACR_WH(last=1))


def test_packer_state_is_json_and_survives_pickling():
    import json
    import pickle

    m = machine("wh")
    core_of(m).dest.write_bf16(np.ones((1, 16), dtype=np.float32))
    setup(m, BF16, BF16)
    x_range(m, 0, 2)
    run(m, PACR_WH())                                 # leaves 6 bytes waiting in the buffer
    state = json.loads(json.dumps(core_of(m).state()))
    assert state["units"]["packers"]["packers"][0]["data"]["pending"] == 6
    copy = pickle.loads(pickle.dumps(core_of(m)))
    assert packers(copy).packers[0].data.pending == packers(core_of(m)).packers[0].data.pending


# ------------------------------------------------------------------ Blackhole deltas
def test_blackhole_four_interfaces_pack_a_face_with_addr_mod():
    """tt-llk's face loop: four interfaces read four rows per PACR, ADDR_MOD adds 4 to Y."""
    vals = np.arange(256, dtype=np.float32).reshape(16, 16)
    m = machine("bh")
    core_of(m).dest.write_bf16(vals)
    setup(m, BF16, BF16, PCK0_ADDR_CTRL_XY_REG_0_Ystride=32)
    m.agent("t0").tcfg.set("ADDR_MOD_PACK_SEC0_YsrcIncr", 4)
    run(m, SETADCXX(0b100, 15, 0), *[PACR_BH(intf=0xF) for _ in range(3)], PACR_BH(intf=0xF, last=1))
    np.testing.assert_array_equal(as_f32(l1(m, OUT, "<u2", 256)).reshape(16, 16), vals)


def test_blackhole_strided_interfaces_and_context():
    """DstAccessMode 1: interface k reads row +16k; CfgContext 2 uses the THCON_SEC1_REG1 slot."""
    vals = (np.arange(64 * 16) % 251).astype(np.float32).reshape(64, 16)
    m = machine("bh")
    core_of(m).dest.write_bf16(vals)
    setup(m, BF16, BF16, slot="THCON_SEC1_REG1_")
    x_range(m, 0, 15)
    run(m, PACR_BH(cfg_ctx=2, strided=1, intf=0b0101, last=1))
    got = as_f32(l1(m, OUT, "<u2", 32)).reshape(2, 16)
    np.testing.assert_array_equal(got, vals[[0, 32]])


def test_blackhole_row_pad_zero():
    """RowPadZero 1: each interface's row (6 datums after X 0..5) is padded to 16."""
    vals = np.arange(1, 33, dtype=np.float32).reshape(2, 16)
    m = machine("bh")
    core_of(m).dest.write_bf16(vals)
    setup(m, BF16, BF16)
    x_range(m, 0, 5)
    run(m, PACR_BH(intf=0b11, row_pad=1, last=1))
    got = as_f32(l1(m, OUT, "<u2", 32)).reshape(2, 16)
    np.testing.assert_array_equal(got[:, :6], vals[:, :6])
    np.testing.assert_array_equal(got[:, 6:], 0)


def test_blackhole_zero_write_special_mode_and_row_rule():
    """ZeroWrite with ReadIntfSel 0 writes X_end+1 zeros; otherwise a PACR's X range must
    fit one Dest row."""
    m = machine("bh")
    core_of(m).l1.write(OUT, np.full(96, 0xEE, dtype=np.uint8))
    setup(m, BF16, BF16)
    x_range(m, 0, 31)
    run(m, PACR_BH(intf=0, zero_write=1, last=1))
    np.testing.assert_array_equal(l1(m, OUT, "u1", 64), 0)
    assert (l1(m, OUT + 64, "u1", 32) == 0xEE).all()
    m = machine("bh")
    setup(m, BF16, BF16)
    x_range(m, 0, 20)
    with pytest.raises(UnhandledTrap, match="more than one Dest row"):
        run(m, PACR_BH(intf=1, last=1))


def test_blackhole_ctxt_ctrl_is_not_modelled():
    m = machine("bh")
    setup(m, BF16, BF16)
    with pytest.raises(UnhandledTrap, match="CtxtCtrl 1 .* is not modelled"):
        run(m, PACR_BH(ctxt_ctrl=1))


# ------------------------------------------------------------------ PACR_SETREG
def test_pacr_setreg_writes_scaled_value_and_flushes():
    m = machine("wh")
    m.space.add_ram("tdma_window", 0xFFB60000, 0x1000, perms="rw")
    unit = packers(core_of(m))
    unit.set_pack_reg_addr(0x10 | 1 << 20)          # SetRegBase[0] = (1 << 18) + (0x10 << 2)
    unit.set_scaler(0, 3)                            # SetRegHiScaler[0] = 3
    core_of(m).dest.write_bf16(np.ones((1, 16), dtype=np.float32))
    setup(m, BF16, FP32)                             # Out_data_format & 3 == 0
    x_range(m, 0, 2)
    run(m, PACR_WH(), PACR_SETREG_WH(0, 5, 0x20))
    address = 0xFFB00000 + (1 << 18) + (0x10 << 2) + (0x20 << 12)
    assert m.space.read(address, 4) == 5 + ((5 * 3) << 12)
    np.testing.assert_array_equal(l1(m, OUT, "<f4", 4), [1, 1, 1, 0])   # buffer flushed, padded


def test_pacr_setreg_rules():
    m = machine("wh")
    with pytest.raises(UnhandledTrap, match="below 0xFFB11000"):
        run(m, PACR_SETREG_WH(0, 5, 0x10))
    m = machine("wh")
    with pytest.raises(UnhandledTrap, match="nothing is mapped at 0xffb20000"):
        run(m, PACR_SETREG_WH(0, 5, 0x20))
    m = machine("wh")
    with pytest.raises(UnhandledTrap, match="Push=0x0 is undefined"):
        run(m, PACR_SETREG_WH(0, 5, 0x20, push=0))
    m = machine("wh", lenient=True)
    run(m, PACR_SETREG_WH(0, 5, 0x20, push=0))       # leniently no write: nothing to stop on


# ------------------------------------------------------------------ config names
class Recorder:
    """Wraps the config spaces to record every field name a PACR reads."""

    def __init__(self, inner):
        self.inner, self.names = inner, set()

    def get(self, name):
        self.names.add(name)
        return self.inner.get(name)

    def set(self, name, value):
        self.inner.set(name, value)

    def __getattr__(self, name):
        return getattr(self.inner, name)


@pytest.mark.parametrize("chip", CHIPS)
def test_every_field_read_is_in_the_register_map(chip):
    m = machine(chip)
    core = core_of(m)
    setup(m, BF16, BFP8, PCK_EDGE_OFFSET_SEC0_mask=0x00FF, PCK_EDGE_TILE_FACE_SET_SELECT_enable=1,
          STACC_RELU_ApplyRelu=3, THCON_SEC0_REG1_Exp_threshold_en=1, THCON_SEC0_REG1_Disable_zero_compress=0,
          THCON_SEC0_REG1_Add_l1_dest_addr_offset=1, THCON_SEC0_REG1_Downsample_mask=0x00FF)
    core.cfg = rec = Recorder(core.cfg)
    thread = m.agent("t0")
    thread.tcfg = trec = Recorder(thread.tcfg)
    x_range(m, 0, 15)
    run(m, PACR(chip, ovrd=1, last=1))
    widths = field_widths(chip)
    assert rec.names and rec.names <= set(widths["cfg"]), rec.names - set(widths["cfg"])
    assert trec.names <= set(widths["tcfg"]), trec.names - set(widths["tcfg"])
