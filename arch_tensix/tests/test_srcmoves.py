"""SrcA/SrcB hand-over and the matrix unit's moves (SrcASrcB.md, SETDVALID.md, CLEARDVALID.md,
MOVA2D.md, MOVB2D.md, MOVD2A.md, MOVD2B.md, MOVB2A.md, ZEROSRC.md, TRNSPSRCB.md, SHIFTX*.md).

Every test runs kernels on a direct-mode machine of both chips, on the engine the
environment selects (run the file again with TESSERA_ENGINE=step).  Bit patterns are
compared exactly against reference layouts written from the pages (tensix_srcab_support).
"""

from __future__ import annotations

import numpy as np
import pytest
from tensix_dest_support import adj16_ref, zeroacc, zeroacc_wh
from tensix_srcab_support import (
    CHIPS,
    TRNSPSRCB,
    cleardvalid,
    core,
    machine,
    mova2d,
    movb2a,
    movb2d,
    movd2a,
    movd2b,
    movdbga2d,
    ref_dst32,
    ref_dst_bf16,
    ref_dst_fp16,
    ref_src_from_bf16,
    ref_src_from_fp16,
    ref_src_from_fp32,
    setdvalid,
    shiftxa,
    shiftxb,
    zerosrc,
)

from tessera.errors import Deadlock, UnhandledTrap
from tessera_tensix import matrixbanks as mb
from tessera_tensix.srcab import MATRIX, UNPACKERS
from tessera_tensix.unpack import unpackers

RNG = np.random.default_rng(16)
FP16, BF16, TF32, INT8 = 1, 5, 4, 14


def _normal_bf16(n: int) -> np.ndarray:
    """Random BF16 patterns with a non-zero exponent (not flushed by the moves)."""
    b = RNG.integers(0, 1 << 16, n).astype(np.uint32)
    return np.where((b & 0x7F80) == 0, b | 0x0080, b).astype(np.uint32)


def _normal_fp16(n: int) -> np.ndarray:
    h = RNG.integers(0, 1 << 16, n).astype(np.uint32)
    return np.where((h & 0x7C00) == 0, h | 0x0400, h).astype(np.uint32)


def _run(chip: str, program: list[int], setup=None, **config):
    m = machine(chip, [program], **config)
    c = core(m)
    if setup is not None:
        setup(m, c)
    m.run()
    return m, c


def _ref(fn, values) -> np.ndarray:
    return np.array([fn(int(v)) for v in np.ravel(values)], dtype=np.uint32).reshape(np.shape(values))


# ------------------------------------------------------------------ layouts
def test_shuffles_match_the_page_layouts_for_every_16_bit_pattern():
    x = np.arange(1 << 16, dtype=np.uint32)
    sample = x[::97]
    assert np.array_equal(mb.src_from_bf16(sample), _ref(ref_src_from_bf16, sample))
    assert np.array_equal(mb.src_from_fp16(sample), _ref(ref_src_from_fp16, sample))
    # Dst cell -> Src cell -> Dst cell is the identity for BF16 and FP16 (and Integer "8")
    assert np.array_equal(mb.remove_low_mantissa(mb.shuffle_bf16(x)), x)
    assert np.array_equal(mb.remove_high_exponent(mb.shuffle_fp16(x)), x)
    assert np.array_equal(mb.shuffle_bf16(_ref(ref_dst_bf16, sample)), _ref(ref_src_from_bf16, sample))
    assert np.array_equal(mb.shuffle_fp16(_ref(ref_dst_fp16, sample)), _ref(ref_src_from_fp16, sample))


def test_tf32_shuffle_keeps_sign_and_all_ten_mantissa_bits():
    f = RNG.integers(0, 1 << 32, 4096, dtype=np.uint64).astype(np.uint32)
    dst32 = _ref(ref_dst32, f)
    assert np.array_equal(mb.shuffle_tf32(dst32 >> 13), _ref(ref_src_from_fp32, f))
    assert int(mb.shuffle_tf32(ref_dst32(0xBF9FE000) >> 13)) == ref_src_from_fp32(0xBF9FE000)


def test_int8_cells_round_trip():
    v = np.arange(-1023, 1024)
    cells = mb.src_from_int8(v)
    assert np.array_equal(mb.src_to_int8(cells), v)
    assert int(cells[1023]) == 0 and int(mb.src_from_int8([-3])[0]) == (1 << 18 | 3 << 8 | 16)


# ------------------------------------------------------------------ hand-over
@pytest.mark.parametrize("chip", CHIPS)
def test_setdvalid_gives_the_unpacker_bank_and_resets_the_row_cursor(chip):
    def setup(m, c):
        m.agent("t0").tcfg.set("SRCA_SET_Base", 2)
        m.agent("t0").tcfg.set("SRCB_SET_Base", 1)
        rows = unpackers(c).src_row
        rows[0][0] = rows[1][0] = 7
    _, c = _run(chip, [setdvalid(1, 1), setdvalid(1, 0)], setup)
    assert c.srca.allowed == [MATRIX, MATRIX] and c.srca.unpacker_bank == 0
    assert c.srcb.allowed == [MATRIX, UNPACKERS] and c.srcb.unpacker_bank == 1
    assert unpackers(c).src_row[0][0] == 32 and unpackers(c).src_row[1][0] == 16
    assert c.srca.src_row[0] == 32 and c.srcb.src_row[0] == 16     # one cursor, two views
    assert c.srca.matrix_bank == 0 and c.srcb.matrix_bank == 0


@pytest.mark.parametrize("chip", CHIPS)
def test_cleardvalid_flip_keep_and_reset(chip):
    _, c = _run(chip, [setdvalid(1, 1), setdvalid(1, 1), cleardvalid(1, 0), cleardvalid(0, 1, keep=1)])
    assert c.srca.allowed == [UNPACKERS, MATRIX] and c.srca.matrix_bank == 1
    assert c.srcb.allowed == [UNPACKERS, MATRIX] and c.srcb.matrix_bank == 0   # kept reading bank 0
    _, c = _run(chip, [setdvalid(1, 1), cleardvalid(0, 0, reset=1)],
                lambda m, c: (setattr(c.srca, "matrix_bank", 1), setattr(c.srcb, "unpacker_bank", 1)))
    for reg in (c.srca, c.srcb):
        assert reg.allowed == [UNPACKERS, UNPACKERS]
        assert reg.matrix_bank == reg.unpacker_bank == 0


# ------------------------------------------------------------------ SrcA <-> Dest, bit exact
def _preload(c, reg_name: str, bank: int, rows: np.ndarray, row0: int = 0) -> None:
    reg = getattr(c, reg_name)
    reg.rows[bank, row0:row0 + rows.shape[0]] = rows
    reg.allowed[bank] = MATRIX


@pytest.mark.parametrize("chip", CHIPS)
def test_bf16_moves_both_ways_are_bit_exact(chip):
    b = _normal_bf16(8 * 16).reshape(8, 16)
    src = _ref(ref_src_from_bf16, b)

    def setup(m, c):
        c.cfg.set("ALU_FORMAT_SPEC_REG0_SrcA", BF16)
        _preload(c, "srca", 0, src, 8)
    # SrcA rows 8..15 -> Dest rows 16..23 -> SrcA rows 32..35 and 36 (1-row form) -> SrcB rows 4..7
    program = [mova2d(chip, 8, 16, move8=1), movd2a(chip, 32, 16, move4=1), movd2a(chip, 36, 20),
               setdvalid(0, 1), setdvalid(0, 1), movd2b(chip, 4, 20, move4=1)]
    _, c = _run(chip, program, setup)
    assert np.array_equal(c.dest.bits[16:24], _ref(ref_dst_bf16, b))
    assert np.array_equal(c.srca.rows[0, 32:36], src[:4])
    assert np.array_equal(c.srca.rows[0, 36], src[4])
    assert np.array_equal(c.srcb.rows[0, 4:8], src[4:8])
    assert c.dest.row_valid[16:24].all()


@pytest.mark.parametrize("chip", CHIPS)
def test_fp16_and_int8_pass_through(chip):
    h = _normal_fp16(16).reshape(1, 16)
    ints = RNG.integers(-1023, 1024, 16)
    ints[0] = 5

    def setup(m, c):
        c.cfg.set("ALU_FORMAT_SPEC_REG0_SrcA", FP16)
        _preload(c, "srca", 0, _ref(ref_src_from_fp16, h), 0)
        _preload(c, "srca", 0, mb.src_from_int8(ints).reshape(1, 16), 1)
    _, c = _run(chip, [mova2d(chip, 0, 3), mova2d(chip, 1, 4), movd2a(chip, 10, 3), movd2a(chip, 11, 4)],
                setup)
    assert np.array_equal(c.dest.bits[3], _ref(ref_dst_fp16, h)[0])
    mags = np.abs(ints)
    expect = ((ints < 0) << 15 | (mags & 0x3FF) << 5 | np.where(mags != 0, 16, 0)).astype(np.uint16)
    assert np.array_equal(c.dest.bits[4], expect)
    assert np.array_equal(c.srca.rows[0, 10], _ref(ref_src_from_fp16, h)[0])
    assert np.array_equal(mb.src_to_int8(c.srca.rows[0, 11]), np.where(mags != 0, ints, 0))


@pytest.mark.parametrize("chip", CHIPS)
def test_tf32_to_dst32_and_back(chip):
    f = RNG.integers(0, 1 << 32, 16, dtype=np.uint64).astype(np.uint32)
    f = np.where((f & 0x7F800000) == 0, f | 0x00800000, f).astype(np.uint32)
    src = _ref(ref_src_from_fp32, f).reshape(1, 16)

    def setup(m, c):
        c.cfg.set("ALU_FORMAT_SPEC_REG0_SrcA", TF32)
        c.cfg.set("ALU_ACC_CTRL_Fp32_enabled", 1)
        _preload(c, "srca", 0, src, 5)
    _, c = _run(chip, [mova2d(chip, 5, 2), movd2a(chip, 20, 2)], setup)
    got = c.dest.read_fp32(1, row0=2).view(np.uint32)[0]
    assert np.array_equal(got, f & 0xFFFFE000)              # TF32: the low 13 bits are gone
    assert np.array_equal(c.srca.rows[0, 20], src[0])


@pytest.mark.parametrize("chip", CHIPS)
def test_a_pair_of_mova2d_builds_32_bit_values_with_use_dst32b_lo(chip):
    hi, lo = _normal_bf16(16), _normal_bf16(16)

    def setup(m, c):
        c.cfg.set("ALU_FORMAT_SPEC_REG0_SrcA", TF32)
        _preload(c, "srca", 0, _ref(ref_src_from_bf16, hi).reshape(1, 16), 0)
        _preload(c, "srca", 0, _ref(ref_src_from_bf16, lo).reshape(1, 16), 1)
    _, c = _run(chip, [mova2d(chip, 0, 6)], setup)          # TF32 style: the high half
    m2 = machine(chip, [[mova2d(chip, 1, 6, lo=1)]])        # then BF16 with UseDst32bLo: the low half
    c2 = core(m2)
    c2.dest.bits[:] = c.dest.bits
    c2.srca.rows[:] = c.srca.rows
    c2.srca.allowed[0] = MATRIX
    c2.cfg.set("ALU_FORMAT_SPEC_REG0_SrcA", BF16)
    m2.run()
    want = (_ref(ref_dst_bf16, hi) << 16) | _ref(ref_dst_bf16, lo)
    assert np.array_equal(c2.dest.dst32()[6], want)


@pytest.mark.parametrize("chip", CHIPS)
def test_exponent_zero_cells_are_flushed_unless_zero_flag_disabled(chip):
    denorm = np.full((1, 16), 1 << 11, dtype=np.uint32)        # mantissa bit, exponent 0

    def setup(m, c):
        c.cfg.set("ALU_FORMAT_SPEC_REG0_SrcA", BF16)
        _preload(c, "srca", 0, denorm, 0)
        c.dest.bits[0:2] = 0xFFFF
    _, c = _run(chip, [mova2d(chip, 0, 0)], setup)
    assert not c.dest.bits[0].any()

    def setup_kept(m, c):
        setup(m, c)
        c.cfg.set("ALU_ACC_CTRL_Zero_Flag_disabled_src", 1)
    _, c = _run(chip, [mova2d(chip, 0, 0)], setup_kept)
    assert (c.dest.bits[0] == (1 << 8)).all()


@pytest.mark.parametrize("chip", CHIPS)
def test_movb2d_broadcasts(chip):
    rows = _ref(ref_src_from_bf16, _normal_bf16(64)).reshape(4, 16)

    def setup(m, c):
        c.cfg.set("ALU_FORMAT_SPEC_REG0_SrcA", BF16)
        _preload(c, "srcb", 0, rows, 8)
    program = [movb2d(chip, 9, 40, bcast8=1),              # row 9 -> Dest 40..47
               movb2d(chip, 8, 48, move4=1),               # rows 8..11 -> 48..51
               movb2d(chip, 10, 52, col0=1),               # row 10, column 0 everywhere -> 52
               movb2d(chip, 11, 56, bcast8=1, col0=1)]     # row 11 col 0 -> 56..63
    _, c = _run(chip, program, setup)
    dst = mb.remove_low_mantissa(rows)
    assert np.array_equal(c.dest.bits[40:48], np.repeat(dst[1:2], 8, axis=0))
    assert np.array_equal(c.dest.bits[48:52], dst)
    assert (c.dest.bits[52] == dst[2, 0]).all()
    assert (c.dest.bits[56:64] == dst[3, 0]).all()


@pytest.mark.parametrize("chip", CHIPS)
def test_movb2a_copies_srcb_rows_into_srca(chip):
    rows = _ref(ref_src_from_bf16, _normal_bf16(64)).reshape(4, 16)

    def setup(m, c):
        _preload(c, "srcb", 0, rows, 12)
        c.srca.allowed[0] = MATRIX
    _, c = _run(chip, [movb2a(chip, 40, 13, move4=1), movb2a(chip, 50, 14)], setup)
    assert np.array_equal(c.srca.rows[0, 40:44], rows)      # aligned: SrcB rows 12..15
    assert np.array_equal(c.srca.rows[0, 50], rows[2])


@pytest.mark.parametrize("chip", CHIPS)
def test_rwcs_and_addr_mod_place_the_rows(chip):
    src = _ref(ref_src_from_bf16, _normal_bf16(16 * 16)).reshape(16, 16)

    def setup(m, c):
        c.cfg.set("ALU_FORMAT_SPEC_REG0_SrcA", BF16)
        _preload(c, "srca", 0, src, 0)
        t = m.agent("t0").tcfg
        t.set("ADDR_MOD_AB_SEC1_SrcAIncr", 8)
        t.set("ADDR_MOD_DST_SEC1_DestIncr", 8)
        t.set("DEST_TARGET_REG_CFG_MATH_Offset", 100)
        c.cfg.set("DEST_REGW_BASE_Base", 4)
    # each MOVA2D moves 8 rows and advances SrcA and Dst by 8 (ADDR_MOD 1)
    m, c = _run(chip, [mova2d(chip, 0, 0, move8=1, addr_mod=1), mova2d(chip, 0, 0, move8=1, addr_mod=1)],
                setup)
    assert np.array_equal(c.dest.bits[104:120], mb.remove_low_mantissa(src))
    rwc = m.agent("t0").rwc
    assert rwc["srca"] == 16 and rwc["dst"] == 16


@pytest.mark.parametrize("chip", CHIPS)
def test_block_dest_mov_skips_columns(chip):
    src = _ref(ref_src_from_bf16, _normal_bf16(16)).reshape(1, 16)

    def setup(m, c):
        c.cfg.set("ALU_FORMAT_SPEC_REG0_SrcA", BF16)
        _preload(c, "srca", 0, src, 0)
        c.sfpu.lane_config[0] = 1 << 9                      # column 0
        c.sfpu.lane_config[3] = 1 << 10                     # column 7
        c.dest.bits[0] = 0x1234
    _, c = _run(chip, [mova2d(chip, 0, 0), movd2a(chip, 2, 0)], setup)
    row = c.dest.bits[0]
    assert row[0] == 0x1234 and row[7] == 0x1234
    keep = [i for i in range(16) if i not in (0, 7)]
    assert np.array_equal(row[keep], mb.remove_low_mantissa(src[0])[keep])
    assert c.srca.rows[0, 2, 0] == 0 and c.srca.rows[0, 2, 7] == 0     # not written back either


@pytest.mark.parametrize("chip", CHIPS)
def test_undefined_dest_rows_read_zero_and_become_defined(chip):
    src = _ref(ref_src_from_bf16, _normal_bf16(16)).reshape(1, 16)
    clear = zeroacc(3) if chip == "bh" else zeroacc_wh(3)     # all of Dest undefined

    def setup(m, c):
        c.cfg.set("ALU_FORMAT_SPEC_REG0_SrcA", BF16)
        _preload(c, "srca", 0, src, 0)
        c.srca.rows[0, 9] = 0x7FFFF
        c.dest.bits[:] = 0x5555
        c.sfpu.lane_config[0] = 1 << 9                      # column 0 blocked
    _, c = _run(chip, [clear, movd2a(chip, 9, 30), mova2d(chip, 0, 31)], setup)
    assert c.srca.rows[0, 9, 1:].tolist() == [0] * 15        # undefined Dest reads as zero
    assert c.dest.row_valid[31] and not c.dest.row_valid[30]
    assert c.dest.bits[31, 0] == 0                           # identity, not the stale 0x5555
    assert np.array_equal(c.dest.bits[31, 1:], mb.remove_low_mantissa(src[0])[1:])


# ------------------------------------------------------------------ in-place operations
@pytest.mark.parametrize("chip", CHIPS)
def test_zerosrc_variants(chip):
    def setup(m, c):
        c.srca.rows[:] = 1
        c.srcb.rows[:] = 1
        c.srca.matrix_bank = 1
    _, c = _run(chip, [zerosrc(1, 0, single=1, neginf=1), zerosrc(0, 1)], setup)
    assert (c.srca.rows[1] == 0x7FFFF).all() and (c.srca.rows[0] == 1).all()
    assert (c.srcb.rows[0] == 0).all() and (c.srcb.rows[1] == 1).all()   # unpacker bank 0
    _, c = _run(chip, [zerosrc(1, 1, both=1)], setup)
    assert not c.srca.rows.any() and not c.srcb.rows.any()


@pytest.mark.parametrize("chip", CHIPS)
def test_trnspsrcb_transposes_rows_16_to_31(chip):
    data = RNG.integers(0, 1 << 19, (64, 16)).astype(np.uint32)
    _, c = _run(chip, [TRNSPSRCB], lambda m, c: _preload(c, "srcb", 0, data, 0))
    got = c.srcb.rows[0]
    assert np.array_equal(got[16:32], data[16:32].T)
    assert np.array_equal(got[:16], data[:16]) and np.array_equal(got[32:], data[32:])


@pytest.mark.parametrize("chip", CHIPS)
def test_shiftxb_rotates_or_shifts_in_zero(chip):
    data = RNG.integers(1, 1 << 19, (64, 16)).astype(np.uint32)

    def setup(m, c):
        _preload(c, "srcb", 0, data, 0)
        m.agent("t0").rwc["srcb"] = 2
    _, c = _run(chip, [shiftxb(chip, 3), shiftxb(chip, 4, zero=1)], setup)
    assert np.array_equal(c.srcb.rows[0, 5], np.roll(data[5], -1))
    assert np.array_equal(c.srcb.rows[0, 6], np.append(data[6, 1:], 0))


@pytest.mark.parametrize("chip", CHIPS)
def test_shiftxa_reads_the_block_the_last_move_addressed(chip):
    data = RNG.integers(1, 1 << 19, (64, 16)).astype(np.uint32)

    def setup(m, c):
        _preload(c, "srca", 0, data, 0)
        c.cfg.set("ALU_ACC_CTRL_Zero_Flag_disabled_src", 1)
    # MOVA2D at SrcA row 20 selects block 16..31 for the next SHIFTXA (its hardware bug)
    _, c = _run(chip, [mova2d(chip, 20, 0), shiftxa(2)], setup)
    assert np.array_equal(c.srca.rows[0, :16, 1:], data[16:32, :15])
    assert not c.srca.rows[0, :16, 0].any()
    _, c = _run(chip, [shiftxa(3)], setup)                   # block 0 (reset), left
    assert np.array_equal(c.srca.rows[0, :16, :15], data[:16, 1:])
    assert not c.srca.rows[0, :16, 15].any()


# ------------------------------------------------------------------ rules
@pytest.mark.parametrize("chip", CHIPS)
def test_movd2a_into_an_unpacker_bank_breaks_a_rule(chip):
    m = machine(chip, [[movd2a(chip, 0, 0)]])
    with pytest.raises(UnhandledTrap, match="SrcA bank 0, which is owned by the unpackers"):
        m.run()
    m = machine(chip, [[movd2b(chip, 0, 0)]], lenient=True)
    core(m).dest.bits[0] = 0x3F80
    m.run()
    assert (core(m).srcb.rows[0, 0] == mb.shuffle_bf16(0x3F80)).all()   # written anyway


@pytest.mark.parametrize("chip", CHIPS)
def test_use_dst32b_lo_with_dst16b_breaks_a_rule(chip):
    m = machine(chip, [[movd2a(chip, 0, 0, lo=1)]])
    core(m).srca.allowed[0] = MATRIX
    with pytest.raises(UnhandledTrap, match="UseDst32bLo with Dst16b"):
        m.run()


@pytest.mark.parametrize("chip", CHIPS)
def test_shiftxa_reserved_direction_breaks_a_rule(chip):
    m = machine(chip, [[shiftxa(1)]])
    core(m).srca.allowed[0] = MATRIX
    with pytest.raises(UnhandledTrap, match="direction 1 is reserved"):
        m.run()


# ------------------------------------------------------------------ implicit waits
@pytest.mark.parametrize("chip", CHIPS)
def test_mova2d_parks_until_another_thread_gives_the_bank(chip):
    src = _ref(ref_src_from_bf16, _normal_bf16(8 * 16)).reshape(8, 16)
    unpack = [0x45 << 24 | i << 8 | 2 for i in range(12)] + [setdvalid(1)]   # SETDMAREGs, then hand over
    math = [mova2d(chip, 0, 0, move8=1)]
    m = machine(chip, [unpack, math])
    c = core(m)
    c.cfg.set("ALU_FORMAT_SPEC_REG0_SrcA", BF16)
    c.srca.rows[0, :8] = src
    m.run(max_steps=4, raise_on_budget=False)
    t1 = m.agent("t1")
    assert t1.status == "waiting" and "MOVA2D waits: SrcA bank 0 is owned by the unpackers" in t1.wait_reason
    assert not c.dest.bits[:8].any()
    m.run()
    assert t1.status == "halted"
    assert np.array_equal(c.dest.bits[:8], mb.remove_low_mantissa(src))


@pytest.mark.parametrize("chip", CHIPS)
def test_a_missing_setdvalid_is_a_deadlock_naming_the_bank(chip):
    m = machine(chip, [[0x45 << 24 | 2], [movb2d(chip, 0, 0)]])
    with pytest.raises(Deadlock, match=r"T1 MOVB2D waits: SrcB bank 0 is owned by the unpackers \(at pc 0x1000\)"):
        m.run()


@pytest.mark.parametrize("chip", CHIPS)
def test_movdbga2d_does_not_wait(chip):
    m = machine(chip, [[movdbga2d(chip, 0, 0)]])
    c = core(m)
    c.srca.rows[0, 0] = mb.shuffle_bf16(0x3F80)
    m.run()
    assert (c.dest.bits[0] == 0x3F80).all()


@pytest.mark.parametrize("chip", CHIPS)
def test_clrexphist_resets_every_packer_histogram(chip):
    from tessera_tensix.pack import packers

    def setup(m, c):
        for p in packers(c).packers:
            p.histogram[3] = 9
            p.max_exponent = 130
    _, c = _run(chip, [0x21 << 24], setup)
    assert all(not p.histogram.any() and p.max_exponent == 0 for p in packers(c).packers)


def test_moves_follow_the_blackhole_dest_remaps():
    src = _ref(ref_src_from_bf16, _normal_bf16(8 * 16)).reshape(8, 16)

    def setup(m, c):
        c.cfg.set("ALU_FORMAT_SPEC_REG0_SrcA", BF16)
        c.cfg.set("DEST_ACCESS_CFG_remap_addrs", 1)
        _preload(c, "srca", 0, src, 0)
    _, c = _run("bh", [mova2d("bh", 0, 8, move8=1), movd2a("bh", 16, 12, move4=1)], setup)
    phys = [adj16_ref(r, True) for r in range(8, 16)]
    assert phys != list(range(8, 16))
    assert np.array_equal(c.dest.bits[phys], mb.remove_low_mantissa(src))
    assert np.array_equal(c.srca.rows[0, 16:20], src[4:8])
