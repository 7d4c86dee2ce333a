"""The unpackers: UNPACR and UNPACR_NOP on direct-mode machines of both chips.

Oracles: integer-valued data (exact in every format) against numpy, hand-computed BFP
values (FloatBitPatterns.md's BFP tables), and the cell layouts of SrcASrcB.md / Dst.md
decoded here with an independent reference.  The instruction words come from an encoder
written from the pages' syntax (UNPACR_Regular.md, UNPACR_NOP_*.md; Blackhole
UNPACR_NOP from tt-llk's field list), not from the package's tables.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tensix_sync_support import threads

from tessera.errors import Deadlock, UnhandledTrap
from tessera_tensix import cfgregs
from tessera_tensix.adc import adcs
from tessera_tensix.srcab import MATRIX, UNPACKERS

CHIPS = ("wh", "bh")
FP32, FP16, BFP8A, TF32, BF16, BFP8, BFP4, INT32, INT16, FP8, INT8 = 0, 1, 2, 4, 5, 6, 7, 8, 9, 10, 14
WIDTH = {FP32: 4, TF32: 4, INT32: 4, FP16: 2, BF16: 2, INT16: 2}


# ------------------------------------------------------------------ encoder (page syntax)
def unpacr(which: int, incr: int = 0, *, ctx: int = 0, adc: int = 0, multi: int = 0, flip: int = 0,
           zero: int = 0, use_counter: int = 0, row_search: int = 0, cnt_inc: int = 0,
           flush: int = 0) -> int:
    return (0x42 << 24 | which << 23 | incr << 15 | cnt_inc << 13 | ctx << 10 | adc << 8 | multi << 7
            | flip << 6 | zero << 4 | use_counter << 3 | row_search << 2 | flush << 1)


def unpacr_nop(which: int, low: int) -> int:
    return 0x43 << 24 | which << 23 | low


# ------------------------------------------------------------------ reference decoders
def src_value(cells: np.ndarray, fp16: bool = False) -> np.ndarray:
    """Src cells (SrcASrcB.md layouts) -> float64: TF32/BF16, or FP16 when ``fp16``."""
    c = cells.astype(np.int64)
    sign = np.where(c >> 18 & 1, -1.0, 1.0)
    man = (c >> 8) & 0x3FF
    exp = c & (0x1F if fp16 else 0xFF)
    bias = 15 if fp16 else 127
    return np.where(exp == 0, 0.0, sign * (1 + man / 1024.0) * 2.0 ** (exp - bias))


def src_int(cells: np.ndarray) -> np.ndarray:
    c = cells.astype(np.int64)
    return np.where(c >> 18 & 1, -1, 1) * ((c >> 8) & 0x3FF)


def dst16_bf16(bits: np.ndarray) -> np.ndarray:
    """Dst BF16 cells (sign, mantissa, exponent) -> float."""
    b = bits.astype(np.uint32)
    ieee = (b & 0x8000) | ((b & 0xFF) << 7) | ((b >> 8) & 0x7F)
    return (ieee << 16).astype(np.uint32).view(np.float32)


# ------------------------------------------------------------------ machine and configuration
def rig(chip: str, program: list[int], lenient: bool = False):
    m = threads(chip, [program], lenient=lenient)
    t = m.agent("t0")
    return m, t.core


def set_descriptor(core, which: int, fmt: int, x_dim: int, y_dim: int = 1, *, compressed: bool = False,
                   z_dim: int = 0, digest: int = 0) -> None:
    first = cfgregs.register_map(core.chip).cfg_index[f"THCON_SEC{which}_REG0_TileDescriptor"]
    words = [fmt | (0 if compressed else 1 << 4) | x_dim << 16, y_dim | z_dim << 16, 0, digest << 24]
    for k, w in enumerate(words):
        cfgregs.write_cfg(core, 0, first + k, w)


def simple(core, which: int, fmt: int, n: int, addr: int, *, out_fmt: int | None = None,
           to_dst: bool = False) -> None:
    """Unpacker ``which`` reads ``n`` datums of ``fmt`` at L1 ``addr`` into row 0 of its
    target (SrcA / SrcB / Dest): output addresses start at 4 rows for SrcA and Dest."""
    out_fmt = fmt if out_fmt is None else out_fmt
    set_descriptor(core, which, fmt, 16, max(1, n // 16))
    cfg = core.cfg
    cfg.set(f"THCON_SEC{which}_REG2_Out_data_format", out_fmt)
    cfg.set(f"THCON_SEC{which}_REG3_Base_address", addr // 16 - 1)
    cfg.set(f"UNP{which}_ADDR_BASE_REG_1_Base", 0 if which else 64 * WIDTH.get(out_fmt, 1))
    if to_dst:
        cfg.set("THCON_SEC0_REG2_Unpack_If_Sel", 1)
    adcs(core).set(0, which, 1, "X", n - 1)


def bf16_bits(x: np.ndarray) -> np.ndarray:
    return (np.asarray(x, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)


RNG = np.random.default_rng(16)


def ints(n: int, lo: int = -120, hi: int = 120) -> np.ndarray:
    return RNG.integers(lo, hi, n).astype(np.float32)


# ------------------------------------------------------------------ formats into SrcA / SrcB
@pytest.mark.parametrize("chip", CHIPS)
def test_bf16_into_srca_is_exact_and_flip_hands_the_bank_over(chip):
    m, core = rig(chip, [unpacr(0, flip=1)])
    data = ints(256)
    core.l1.write(0x2000, bf16_bits(data))
    simple(core, 0, BF16, 256, 0x2000)
    m.run()
    np.testing.assert_array_equal(src_value(core.srca.rows[0, :16]).reshape(-1), data)
    assert not core.srca.rows[0, 16:].any()
    assert core.srca.allowed == [MATRIX, UNPACKERS] and core.srca.unpacker_bank == 1


@pytest.mark.parametrize("chip", CHIPS)
def test_fp16_into_srcb(chip):
    m, core = rig(chip, [unpacr(1)])
    data = ints(64, -1000, 1000)
    core.l1.write(0x3000, data.astype(np.float16))
    simple(core, 1, FP16, 64, 0x3000)
    m.run()
    np.testing.assert_array_equal(src_value(core.srcb.rows[0, :4], fp16=True).reshape(-1), data)
    assert core.srcb.allowed == [UNPACKERS, UNPACKERS]   # no FlipSrc: the bank stays


@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("out_fmt", [TF32, BF16, FP16])
def test_fp32_into_srca_converts(chip, out_fmt):
    m, core = rig(chip, [unpacr(0)])
    data = ints(32, -2000, 2000)
    data[0] = 0.75
    core.l1.write(0x2000, data.astype(np.float32))
    simple(core, 0, FP32, 32, 0x2000, out_fmt=out_fmt)
    m.run()
    got = src_value(core.srca.rows[0, :2], fp16=out_fmt == FP16).reshape(-1)
    want = data if out_fmt != BF16 else bf16_bits(data).astype(np.uint32) << 16
    if out_fmt == BF16:
        want = want.astype(np.uint32).view(np.float32)     # BF16 truncates: 1999 -> 1992 etc.
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("chip", CHIPS)
def test_int8_sign_magnitude_and_uint8_into_srcb(chip):
    m, core = rig(chip, [unpacr(1), unpacr(1, flip=1)])
    values = np.append(np.arange(-120, 121, 8), 127)
    sm = np.where(values < 0, 0x80 | -values, values).astype(np.uint8)
    core.l1.write(0x4000, sm)
    simple(core, 1, INT8, 32, 0x4000)
    m.run()
    cells = core.srcb.rows[0, :2].reshape(-1)
    np.testing.assert_array_equal(src_int(cells), values)
    np.testing.assert_array_equal(cells & 0x1F, np.where(values == 0, 0, 16))  # exponent 16, 0 for 0

    m2, core2 = rig(chip, [unpacr(1)])
    raw = np.arange(200, 232, dtype=np.uint8)
    core2.l1.write(0x4000, raw)
    simple(core2, 1, INT8, 32, 0x4000)
    core2.cfg.set("ALU_FORMAT_SPEC_REG0_SrcBUnsigned", 1)
    m2.run()
    np.testing.assert_array_equal(src_int(core2.srcb.rows[0, :2]).reshape(-1), raw)


@pytest.mark.parametrize("chip", CHIPS)
def test_int16_is_opaque(chip):
    m, core = rig(chip, [unpacr(0)])
    raw = np.array([0xBEEF, 0x1234, 0, 0xFFFF] * 4, dtype=np.uint16)
    core.l1.write(0x2000, raw)
    simple(core, 0, INT16, 16, 0x2000)
    m.run()
    cells = core.srca.rows[0, 0].astype(np.int64)
    np.testing.assert_array_equal(((cells >> 11) << 8) | (cells & 0xFF), raw)


@pytest.mark.parametrize("chip", CHIPS)
def test_fp8_e5m2_is_the_top_byte_of_fp16(chip):
    m, core = rig(chip, [unpacr(1)])
    core.l1.write(0x2000, np.array([0x3C, 0xC0, 0x38, 0x42, 0x00, 0x7B] + [0] * 10, dtype=np.uint8))
    simple(core, 1, FP8, 16, 0x2000)
    m.run()
    np.testing.assert_array_equal(src_value(core.srcb.rows[0, 0, :6], fp16=True), [1, -2, 0.5, 3, 0, 57344])


@pytest.mark.parametrize("chip", CHIPS)
def test_tileize_mode_reads_a_face_out_of_wider_rows(chip):
    """Tileize_mode: 16 datums per row, then on by the row stride (Shift_amount_cntx0..2
    as bits [7:4], [11:8], [15:12] of a byte count): 64 bytes picks the left 16x16 face of
    a 16x32 BF16 row-major matrix (Wormhole, UNPACR_Regular.md).  Blackhole reads 32
    wide datums per row instead, each source row becoming two SrcA rows (tt-llk's
    whole-tile tilize, whose packer un-swizzles them)."""
    m, core = rig(chip, [unpacr(0)])
    matrix = (np.arange(16 * 32) % 251 - 125).astype(np.float32).reshape(16, 32)   # BF16-exact
    core.l1.write(0x2000, bf16_bits(matrix))
    simple(core, 0, BF16, 256, 0x2000)
    core.cfg.set("THCON_SEC0_REG2_Tileize_mode", 1)
    core.cfg.set("THCON_SEC0_REG2_Shift_amount_cntx0", 4)
    m.run()
    want = matrix[:8].reshape(16, 16) if chip == "bh" else matrix[:, :16]
    np.testing.assert_array_equal(src_value(core.srca.rows[0, :16]), want)


def test_blackhole_tileize_rows_of_32_follow_the_row_stride():
    """Blackhole, BF16, Tileize_mode with a 128-byte row stride: source rows of 32 datums
    from a 8x64 matrix's left half (the first of two tiles side by side)."""
    m, core = rig("bh", [unpacr(0)])
    matrix = (np.arange(8 * 64) % 251 - 125).astype(np.float32).reshape(8, 64)
    core.l1.write(0x2000, bf16_bits(matrix))
    simple(core, 0, BF16, 256, 0x2000)
    core.cfg.set("THCON_SEC0_REG2_Tileize_mode", 1)
    core.cfg.set("THCON_SEC0_REG2_Shift_amount_cntx0", 8)
    m.run()
    np.testing.assert_array_equal(src_value(core.srca.rows[0, :16]), matrix[:, :32].reshape(16, 16))


@pytest.mark.parametrize("chip", CHIPS)
def test_column_shift_into_srca(chip):
    m, core = rig(chip, [unpacr(0)])
    data = np.arange(1, 17, dtype=np.float32)
    core.l1.write(0x2000, bf16_bits(data))
    simple(core, 0, BF16, 16, 0x2000)
    core.cfg.set("THCON_SEC0_REG2_Shift_amount_cntx0", 3)     # columns below 3 are dropped
    m.run()
    np.testing.assert_array_equal(src_value(core.srca.rows[0, 0]), np.append(data[3:], [0, 0, 0]))


# ------------------------------------------------------------------ into Dest
@pytest.mark.parametrize("chip", CHIPS)
def test_bf16_into_dest(chip):
    m, core = rig(chip, [unpacr(0)])
    data = ints(512)
    core.l1.write(0x2000, bf16_bits(data))
    simple(core, 0, BF16, 512, 0x2000, to_dst=True)
    m.run()
    np.testing.assert_array_equal(core.dest.read_bf16(32).reshape(-1), data)
    assert not core.srca.rows.any()                  # Dest, not SrcA


@pytest.mark.parametrize("chip", CHIPS)
def test_fp32_into_dest_keeps_32_bits(chip):
    m, core = rig(chip, [unpacr(0)])
    data = ints(256, -(1 << 20), 1 << 20) + 0.5
    core.l1.write(0x2000, data.astype(np.float32))
    simple(core, 0, FP32, 256, 0x2000, to_dst=True)
    m.run()
    np.testing.assert_array_equal(core.dest.read_fp32(16).reshape(-1), data)


@pytest.mark.parametrize("chip", CHIPS)
def test_int32_into_dest_is_sign_magnitude_with_the_bf16_shuffle(chip):
    m, core = rig(chip, [unpacr(0)])
    raw = np.array([5, 0x8000_0007, 0x7FFF_FFFF, 0x0001_0000] * 4, dtype=np.uint32)
    core.l1.write(0x2000, raw)
    simple(core, 0, INT32, 16, 0x2000, to_dst=True)
    m.run()
    hi = core.dest.bits[0].astype(np.uint32)
    lo = core.dest.bits[8].astype(np.uint32)
    top = (hi & 0x8000) | ((hi & 0xFF) << 7) | ((hi >> 8) & 0x7F)   # undo Dst's BF16 shuffle
    np.testing.assert_array_equal((top << 16) | lo, raw)


@pytest.mark.parametrize("chip", CHIPS)
def test_multi_context_unpack_to_dest_adds_the_context_address(chip):
    """To Dest in MultiContextMode, Dest_cntx<N>_address is added to the ADC address."""
    m, core = rig(chip, [unpacr(0, multi=1)])
    data = ints(32)
    core.l1.write(0x2000, bf16_bits(data))
    simple(core, 0, BF16, 32, 0x2000)
    cfg = core.cfg
    cfg.set("THCON_SEC0_REG2_Disable_zero_compress_cntx0", 1)
    cfg.set("THCON_SEC0_REG5_Tile_x_dim_cntx0", 16)
    cfg.set("THCON_SEC0_REG2_Unpack_if_sel_cntx0", 1)
    cfg.set("THCON_SEC0_REG5_Dest_cntx0_address", 16 * 16)             # 16 rows further
    m.run()
    np.testing.assert_array_equal(core.dest.read_bf16(2, row0=16).reshape(-1), data)
    assert not core.dest.bits[:16].any()


# ------------------------------------------------------------------ transpose, upsampling
@pytest.mark.parametrize("chip", CHIPS)
def test_transpose_into_srca(chip):
    m, core = rig(chip, [unpacr(0)])
    face = np.arange(256, dtype=np.float32).reshape(16, 16) - 128
    core.l1.write(0x2000, bf16_bits(face))
    simple(core, 0, BF16, 256, 0x2000)
    core.cfg.set("THCON_SEC0_REG2_Haloize_mode", 1)
    m.run()
    np.testing.assert_array_equal(src_value(core.srca.rows[0, :16]), face.T)


@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("interleave", [0, 1])
def test_upsampling(chip, interleave):
    m, core = rig(chip, [unpacr(1)])
    data = np.arange(1, 9, dtype=np.float32)
    core.l1.write(0x2000, bf16_bits(data))
    simple(core, 1, BF16, 8, 0x2000)
    core.srcb.rows[0, 0] = 0x1234                    # interleave leaves skipped cells alone
    core.cfg.set("THCON_SEC1_REG2_Upsample_rate", 1)
    core.cfg.set("THCON_SEC1_REG2_Upsample_and_interleave", interleave)
    m.run()
    row = core.srcb.rows[0, 0]
    np.testing.assert_array_equal(src_value(row[0::2]), data)
    assert (row[1::2] == (0x1234 if interleave else 0)).all()


@pytest.mark.parametrize("chip", CHIPS)
def test_fifo_wrap_around(chip):
    """WrapAddr: a row starting past Unpack_limit_address * 16 moves back by
    Unpack_fifo_size * 16 bytes — a circular buffer of two rows at 0x2000."""
    m, core = rig(chip, [unpacr(0)])
    first, second = ints(16), ints(16)
    core.l1.write(0x2000, bf16_bits(np.concatenate([first, second])))
    simple(core, 0, BF16, 48, 0x2000)
    adcs(core).set(0, 0, 0, "X", 16)                 # start at the buffer's second row
    adcs(core).set(0, 0, 1, "X", 47)                 # 32 datums
    core.cfg.set("THCON_SEC0_REG2_Unpack_limit_address", 0x2030 // 16)
    core.cfg.set("THCON_SEC0_REG2_Unpack_fifo_size", 64 // 16)
    m.run()
    np.testing.assert_array_equal(src_value(core.srca.rows[0, :2]), [second, first])


# ------------------------------------------------------------------ BFP
@pytest.mark.parametrize("chip", CHIPS)
def test_bfp8_with_shared_exponents(chip):
    """Two blocks of 16 datums, exponents 130 and 120; values by hand from FloatBitPatterns.md
    (BFP8: sign, 7-bit magnitude, value Mag/64 * 2**(Exp-127))."""
    m, core = rig(chip, [unpacr(0)])
    datums = np.zeros(32, dtype=np.uint8)
    datums[:5] = [0x40, 0xC1, 0x01, 0x00, 0x7F]
    datums[16:19] = [0x40, 0x20, 0x83]
    base = 0x2000
    core.l1.write(base, np.array([130, 120], dtype=np.uint8))     # exponent section: 16 bytes
    core.l1.write(base + 16, datums)
    simple(core, 0, BFP8, 32, base, out_fmt=BFP8)
    m.run()
    got = src_value(core.srca.rows[0, :2]).reshape(-1)
    want = np.zeros(32)
    want[:5] = [8.0, -8.125, 0.125, 0.0, 127 / 64 * 8]
    want[16:19] = [2.0 ** -7, 2.0 ** -8, -3 / 64 * 2.0 ** -7]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("chip", CHIPS)
def test_bfp8_minus_zero_is_minus_infinity_and_bfp4_packs_two_per_byte(chip):
    m, core = rig(chip, [unpacr(0)])
    core.l1.write(0x2000, np.array([127], dtype=np.uint8))        # exponent 127 (2**0)
    core.l1.write(0x2010, np.array([0x80, 0x4C, 0x7F, 0], dtype=np.uint8))
    simple(core, 0, BFP4, 16, 0x2000, out_fmt=BFP4)
    core.cfg.set("THCON_SEC0_REG3_Base_address", 0x2000 // 16 - 1)
    m.run()
    cells = core.srca.rows[0, 0]
    # byte 0x80: low nibble 0 (+0), high nibble 8 (sign, magnitude 0: -infinity pattern)
    assert cells[0] == 0 and cells[1] == 0x400FF
    # byte 0x4C: nibble C = -(4/4) = -1.0, nibble 4 = +1.0; 0x7F: 7/4 * -1 and 7/4
    np.testing.assert_array_equal(src_value(cells[2:6]), [-1.0, 1.0, -1.75, 1.75])


@pytest.mark.parametrize("chip", CHIPS)
def test_int8_into_dest_through_bfp8_with_a_forced_exponent(chip):
    """FormatConversion.md: INT8 -> BF16 in Dest is BFP8 with Force_shared_exp."""
    m, core = rig(chip, [unpacr(0)])
    core.l1.write(0x2000, np.array([3, 0x85, 64, 127] * 4, dtype=np.uint8))
    simple(core, 0, BFP8, 16, 0x2000, to_dst=True)
    core.cfg.set("THCON_SEC0_REG2_Force_shared_exp", 1)
    core.cfg.set("UNP0_FORCED_SHARED_EXP_shared_exp", 127 + 6)   # Mag/64 * 2**6 = Mag
    m.run()
    np.testing.assert_array_equal(dst16_bf16(core.dest.bits[0]), [3, -5, 64, 127] * 4)


# ------------------------------------------------------------------ contexts and counters
@pytest.mark.parametrize("chip", CHIPS)
def test_multi_context_with_the_context_counter(chip):
    """LLK style: MultiContextMode, output at Dest_cntx0_address (+ row offset 4), two
    contexts reading two tiles, UseContextCounter alternating between them."""
    prog = [unpacr(0, multi=1, use_counter=1, flip=1), unpacr(0, multi=1, use_counter=1, flip=1)]
    m, core = rig(chip, prog)
    a, b = ints(16), ints(16)
    core.l1.write(0x2000, bf16_bits(a))
    core.l1.write(0x3000, bf16_bits(b))
    set_descriptor(core, 0, BF16, 16, 1)
    cfg = core.cfg
    cfg.set("THCON_SEC0_REG2_Ovrd_data_format", 1)
    for ctx in (0, 1):
        cfg.set(f"THCON_SEC0_REG7_Unpack_data_format_cntx{ctx}", BF16)
        cfg.set(f"THCON_SEC0_REG7_Unpack_out_data_format_cntx{ctx}", BF16)
        cfg.set(f"THCON_SEC0_REG2_Disable_zero_compress_cntx{ctx}", 1)
        cfg.set(f"THCON_SEC0_REG5_Tile_x_dim_cntx{ctx}", 16)
        cfg.set(f"THCON_SEC0_REG5_Dest_cntx{ctx}_address", 64 + 16 * ctx)
    cfg.set("THCON_SEC0_REG3_Base_address", 0x2000 // 16 - 1)
    cfg.set("THCON_SEC0_REG3_Base_cntx1_address", 0x3000 // 16 - 1)
    cfg.set("THCON_SEC0_REG2_Context_count", 1)
    adcs(core).set(0, 0, 1, "X", 15)
    m.run()
    np.testing.assert_array_equal(src_value(core.srca.rows[0, 0]), a)      # bank 0, row 0
    np.testing.assert_array_equal(src_value(core.srca.rows[1, 1]), b)      # bank 1, row 1
    assert core.units["unpackers"].context_counter[0][0] == 0              # 0 -> 1 -> wraps to 0
    assert core.srca.allowed == [MATRIX, MATRIX]


@pytest.mark.parametrize("chip", CHIPS)
def test_increment_context_counter_and_cache_flush(chip):
    prog = [unpacr(1, cnt_inc=1), unpacr(0, cnt_inc=1), unpacr(0, cnt_inc=1), unpacr(0, flush=1)]
    m, core = rig(chip, prog)
    core.cfg.set("THCON_SEC0_REG2_Context_count", 2)          # wraps at 4
    m.run()
    assert core.units["unpackers"].context_counter == [[2, 0, 0], [0, 0, 0]]
    assert not core.srca.rows.any() and not core.srcb.rows.any()


@pytest.mark.parametrize("chip", CHIPS)
def test_adc_increments_and_src_row_update(chip):
    """Ch0Z and Ch1Y advance after each UNPACR; Unpack_Src_Reg_Set_Upd moves SrcRow by 16,
    so two 16-datum unpacks land on SrcB rows 0 and 16."""
    incr = 1 << 6 | 1                                  # Ch1YInc = 1, Ch0ZInc = 1
    m, core = rig(chip, [unpacr(1, incr), unpacr(1, incr)])
    a, b = ints(16), ints(16)
    core.l1.write(0x2000, bf16_bits(np.concatenate([a, b])))
    simple(core, 1, BF16, 16, 0x2000)
    core.cfg.set("THCON_SEC1_REG2_Unpack_Src_Reg_Set_Upd", 1)
    m.run()                 # the second UNPACR reads tile z=1 (16 datums on): X*Y = 16x1
    np.testing.assert_array_equal(src_value(core.srcb.rows[0, 0]), a)
    np.testing.assert_array_equal(src_value(core.srcb.rows[0, 16]), b)
    ad = adcs(core)
    assert (ad.get(0, 1, 0, "Z"), ad.get(0, 1, 1, "Y")) == (2, 2)
    assert core.srcb.src_row[0] == 32


# ------------------------------------------------------------------ waiting for the bank
@pytest.mark.parametrize("chip", CHIPS)
def test_ownership_wait_parks_without_side_effects_and_resumes(chip):
    incr = 1                                           # Ch0ZInc: a side effect to watch
    m, core = rig(chip, [unpacr(0, incr, flip=1)])
    data = ints(16)
    core.l1.write(0x2000, bf16_bits(data))
    simple(core, 0, BF16, 16, 0x2000)
    core.srca.give(0, MATRIX)
    with pytest.raises(Deadlock) as info:
        m.run()
    assert "UNPACR waits: SrcA bank 0 is owned by the matrix unit" in str(info.value)
    assert not core.srca.rows.any() and adcs(core).get(0, 0, 0, "Z") == 0
    core.srca.give(0, UNPACKERS)                       # wakes the parked thread
    m.run()
    np.testing.assert_array_equal(src_value(core.srca.rows[0, 0]), data)
    assert adcs(core).get(0, 0, 0, "Z") == 1 and core.srca.allowed[0] == MATRIX


@pytest.mark.parametrize("chip", CHIPS)
def test_nothing_to_write_does_not_wait(chip):
    """XEnd = ADC ch1 X + 1 = 0 + 1 with X start 1: no datum, so no wait (the loop is empty)."""
    m, core = rig(chip, [unpacr(0)])
    simple(core, 0, BF16, 1, 0x2000)
    adcs(core).set(0, 0, 0, "X", 1)
    core.srca.give(0, MATRIX)
    assert m.run().reason == "halted"


# ------------------------------------------------------------------ UNPACR_NOP
@pytest.mark.parametrize("chip", CHIPS)
def test_nop_setdvalid_hands_over_and_restarts_the_row(chip):
    code = 0x7 if chip == "wh" else 1 | 3 << 6        # BH: clr_to1_fmt_ctrl = 3
    m, core = rig(chip, [unpacr_nop(1, code)])
    core.srcb.src_row[0] = 32
    m.agent("t0").tcfg.set("SRCB_SET_Base", 1)
    m.run()
    assert core.srcb.allowed == [MATRIX, UNPACKERS] and core.srcb.unpacker_bank == 1
    assert core.srcb.src_row[0] == 16


@pytest.mark.parametrize("chip", CHIPS)
def test_nop_zerosrc(chip):
    # WH: NegativeInfSrcA (bit 2), BothBanks (bit 3); BH: src_clr_val_ctrl 1, bank_clr_ctrl
    code = 0x1 | 4 | 8 if chip == "wh" else 1 | 1 << 2 | 1 << 4
    both = 0x1 | 8 if chip == "wh" else 1 | 1 << 4
    m, core = rig(chip, [unpacr_nop(0, code), unpacr_nop(1, both), unpacr_nop(0, 0x2)])
    core.srca.rows[:] = 5
    core.srcb.rows[:] = 5
    m.run()
    assert (core.srca.rows == 0x7FFFF).all() and not core.srcb.rows.any()


def test_nop_bh_llk_idiom_zeroes_then_gives_the_bank():
    """tt-llk: TT_OP_UNPACR_NOP(SrcB, 0, 0, SET_DVALID, 0, 0, 0, 0, UNP_ZEROSRC)."""
    m, core = rig("bh", [unpacr_nop(1, 1 << 8 | 1)])
    core.srcb.rows[:] = 9
    m.run()
    assert not core.srcb.rows[0].any() and (core.srcb.rows[1] == 9).all()
    assert core.srcb.allowed == [MATRIX, UNPACKERS]


@pytest.mark.parametrize("chip", CHIPS)
def test_nop_zerosrc_waits_for_the_bank(chip):
    wait_like_unpacr = 16 if chip == "wh" else 32
    m, core = rig(chip, [unpacr_nop(0, 1 | wait_like_unpacr)])
    core.srca.rows[:] = 3
    core.srca.give(0, MATRIX)
    with pytest.raises(Deadlock) as info:
        m.run()
    assert "UNPACR_NOP waits: SrcA bank 0 is owned by the matrix unit" in str(info.value)
    assert (core.srca.rows == 3).all()
    core.srca.give(0, UNPACKERS)
    m.run()
    assert not core.srca.rows[0].any()


def test_nop_bh_clear_to_one():
    m, core = rig("bh", [unpacr_nop(0, 1 | 2 << 2 | 1 << 6)])     # one, BF16
    m.run()
    np.testing.assert_array_equal(src_value(core.srca.rows[0]), np.ones((64, 16)))


def test_nop_wh_setreg_accumulates_and_overlay_clear_counts():
    # SETREG with Accumulate (bit 3), Value11 = 5, AddrMid = 2 (the operands sit on bits the
    # Wormhole table leaves reserved, so the word needs lenient)
    setreg = unpacr_nop(0, 2 << 16 | 5 << 4 | 8 | 4)
    m, core = rig("wh", [setreg, setreg, unpacr_nop(0, 0x0)], lenient=True)
    m.agent("t0").tcfg.set("NOC_OVERLAY_MSG_CLEAR_StreamId_0", 7)
    m.run()
    state = core.units["unpackers"]
    assert state.set_reg_acc[0] == 10 and state.overlay_clears == {7: 1}
    assert state.mmio_writes[-1] == (0xFFB0_2000, 10)


# ------------------------------------------------------------------ rules
@pytest.mark.parametrize("chip", CHIPS)
def test_srcb_context_2_is_a_rule_stop_unless_lenient(chip):
    for lenient in (False, True):
        m, core = rig(chip, [unpacr(1, ctx=2, multi=1)], lenient=lenient)
        simple(core, 1, BF16, 16, 0x2000)
        core.cfg.set("THCON_SEC1_REG2_Disable_zero_compress_cntx2", 1)
        if lenient:
            assert m.run().reason == "halted"
        else:
            with pytest.raises(UnhandledTrap, match="no configuration context 2"):
                m.run()


@pytest.mark.parametrize("chip", CHIPS)
def test_bad_output_format_pair_is_a_rule_stop(chip):
    m, core = rig(chip, [unpacr(0)])
    simple(core, 0, BF16, 16, 0x2000, out_fmt=FP16)
    with pytest.raises(UnhandledTrap, match="BF16 needs the same output format, not FP16"):
        m.run()


@pytest.mark.parametrize("chip", CHIPS)
def test_out_of_l1_stops(chip):
    m, core = rig(chip, [unpacr(0)])
    simple(core, 0, BF16, 16, 0x2000)
    core.cfg.set("THCON_SEC0_REG3_Base_address", core.l1.size // 16)
    with pytest.raises(UnhandledTrap, match="is outside L1"):
        m.run()


def tessera(*args: str) -> subprocess.CompletedProcess:
    script = Path(sys.executable).parent / "tessera"
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "tessera.cli.main"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("TESSERA_")}
    env["TESSERA_PLUGINS"] = "tensix"
    if os.environ.get("TESSERA_ENGINE"):
        env["TESSERA_ENGINE"] = os.environ["TESSERA_ENGINE"]
    return subprocess.run(cmd + list(args), capture_output=True, text=True, env=env, timeout=120)


def test_out_of_l1_cli_is_one_line(tmp_path):
    kernel = tmp_path / "k.hex"
    kernel.write_text(f"{unpacr(0):08x}\n")
    res = tessera("run", "--arch", "tensix-wh", str(kernel), "--set", "cfg.THCON_SEC0_REG3_Base_address=0x20000")
    assert res.returncode != 0 and res.returncode != 76
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "outside L1" in lines[0] and lines[0].startswith("tessera:")


# ------------------------------------------------------------------ decompression
@pytest.mark.parametrize("chip", CHIPS)
def test_decompression_inserts_the_counted_zeros(chip):
    """Packers/Compression.md layout: RSI [0, 4], padding; 32 datums + 32 four-bit counts.
    Datums 1, 2, 3, 4 with counts 2, 0, 3, 1 decompress to 1 0 0 2 3 0 0 0 4 0."""
    m, core = rig(chip, [unpacr(1)])
    base = 0x2000
    core.l1.write(base, np.array([0, 4], dtype=np.uint16))          # RSI, then pad to 16 bytes
    datums = np.zeros(32, dtype=np.uint16)
    datums[:4] = bf16_bits(np.array([1, 2, 3, 4], dtype=np.float32))
    core.l1.write(base + 16, datums)
    counts = np.zeros(16, dtype=np.uint8)
    counts[:2] = [2 | 0 << 4, 3 | 1 << 4]
    core.l1.write(base + 16 + 64, counts)
    set_descriptor(core, 1, BF16, 16, 1, compressed=True)
    core.cfg.set("THCON_SEC1_REG2_Out_data_format", BF16)
    core.cfg.set("THCON_SEC1_REG3_Base_address", base // 16 - 1)
    adcs(core).set(0, 1, 1, "X", 15)                  # X 0 .. XDim-1: the whole row from the RSI
    m.run()
    np.testing.assert_array_equal(src_value(core.srcb.rows[0, 0, :10]), [1, 0, 0, 2, 3, 0, 0, 0, 4, 0])


# ------------------------------------------------------------------ property: exact vs numpy
#: (input format, output format, numpy L1 encoding of integer data, value range, FP16 cells?)
CASES = {
    "bf16": (BF16, BF16, lambda x: bf16_bits(x), 128, False),
    "fp16": (FP16, FP16, lambda x: x.astype(np.float16), 2048, True),
    "fp32>tf32": (FP32, TF32, lambda x: x.astype(np.float32), 2048, False),
    "fp32>bf16": (FP32, BF16, lambda x: x.astype(np.float32), 128, False),
    "fp32>fp16": (FP32, FP16, lambda x: x.astype(np.float32), 2048, True),
    "int8": (INT8, INT8, lambda x: np.where(x < 0, 0x80 | -x.astype(np.int64), x).astype(np.uint8), 127, None),
}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chip=st.sampled_from(CHIPS), case=st.sampled_from(sorted(CASES)),
       target=st.sampled_from(["srca", "srcb", "dest"]), rows=st.integers(1, 80), start=st.integers(0, 63),
       seed=st.integers(0, 2**32 - 1))
def test_integer_data_lands_exactly_where_the_address_says(chip, case, target, rows, start, seed):
    """Any integer-valued datums unpack exactly: SrcB from row ``start`` wrapping at 64 (the
    last write wins), SrcA within its 16 rows, Dest from row ``start``."""
    in_fmt, out_fmt, encode, bound, fp16 = CASES[case]
    if target == "dest" and (fp16 is None or out_fmt == TF32):
        out_fmt = {TF32: FP32}.get(out_fmt, out_fmt)
        if fp16 is None:
            return                                     # INT8 into Dest: its own test
    if target == "srca":
        rows, start = min(rows, 16), min(start, 16 - min(rows, 16))
    which = 1 if target == "srcb" else 0
    n = 16 * rows
    data = np.random.default_rng(seed).integers(-bound, bound + 1, n).astype(np.float32)
    m, core = rig(chip, [unpacr(which)])
    core.l1.write(0x4000, encode(data))
    simple(core, which, in_fmt, n, 0x4000, out_fmt=out_fmt, to_dst=target == "dest")
    width = WIDTH.get(out_fmt, 1)
    core.cfg.set(f"UNP{which}_ADDR_BASE_REG_1_Base", (16 * start + (0 if which else 64)) * width)
    m.run()
    if target == "dest":
        got = core.dest.read_fp32(rows, row0=start) if width == 4 else None
        if got is None:
            bits = core.dest.dst16()[start:start + rows].astype(np.uint32)
            if fp16:
                ieee = (bits & 0x8000) | ((bits & 0x1F) << 10) | ((bits >> 5) & 0x3FF)
                got = ieee.astype(np.uint16).view(np.float16).astype(np.float32)
            else:
                got = dst16_bf16(bits)
        np.testing.assert_array_equal(got.reshape(-1), data)
        return
    cells = (core.srcb if which else core.srca).rows[0]
    want = np.zeros((64, 16))
    for r, row in enumerate(data.reshape(rows, 16)):      # in order: SrcB rows wrap at 64
        want[(start + r) % 64] = row
    decode = src_int if fp16 is None else lambda c: src_value(c, fp16=fp16)
    np.testing.assert_array_equal(decode(cells), want)


@pytest.mark.parametrize("chip", CHIPS)
def test_the_matrix_unit_takes_srca_format_from_the_unpacker_on_blackhole(chip):
    """Blackhole implies SrcAFmt from the format the unpacker wrote the bank in (tt-llk leaves
    ALU_FORMAT_SPEC_REG0_SrcA at 0 there); Wormhole reads the configuration; Blackhole's
    DISABLE_IMPLIED_SRCA_FMT_Base brings the configuration back."""
    from tessera_tensix import matrixbanks as mb

    m, core = rig(chip, [unpacr(0)])
    core.l1.write(0x2000, np.arange(16, dtype=np.uint16).tobytes())
    simple(core, 0, FP16, 16, 0x2000)
    m.run()
    thread = core.threads[0]
    assert core.srca.formats[0] == FP16                     # the unpacker's output format, recorded
    assert mb.srca_format(thread) == (FP16 if chip == "bh" else 0)
    if chip == "bh":
        thread.tcfg.set("DISABLE_IMPLIED_SRCA_FMT_Base", 1)
        assert mb.srca_format(thread) == 0


@pytest.mark.parametrize("chip", CHIPS)
def test_all_zero_unpack_of_int32_into_srca_is_defined(chip):
    """INT32 into SrcA has no defined conversion, but AllDatumsAreZero replaces every datum
    with 0: nothing undefined happens (tt-llk's TEN-3868 workaround on Wormhole)."""
    m, core = rig(chip, [unpacr(0, zero=1)])
    core.l1.write(0x2000, np.arange(1, 17, dtype=np.uint32).tobytes())
    simple(core, 0, INT32, 16, 0x2000)
    core.srca.rows[0, 0, :] = 5
    m.run()
    assert not core.srca.rows[0, 0].any()


@pytest.mark.parametrize("chip", CHIPS)
def test_all_zero_unpack_past_srca_row_63_writes_nothing_there(chip):
    m, core = rig(chip, [unpacr(0, zero=1)])
    core.l1.write(0x2000, np.zeros(16, dtype=np.uint16).tobytes())
    simple(core, 0, BF16, 16, 0x2000)
    core.cfg.set("UNP0_ADDR_BASE_REG_1_Base", 2 * 16 * (4 + 64))       # SrcA row 64: out of range
    core.threads[0].tcfg.set("SRCA_SET_SetOvrdWithAddr", 1)
    core.srca.rows[0] = 7
    m.run()
    assert (core.srca.rows[0] == 7).all()                                # no row written, no stop
