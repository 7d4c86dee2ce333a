"""The matrix unit's arithmetic: MVMUL, DOTPV, GAPOOL, ELWMUL, ELWADD, ELWSUB, GMPOOL
(MVMUL.md, ELWMUL.md, ELWADD.md, ELWSUB.md, DOTPV.md, GAPOOL.md, GMPOOL.md, SrcASrcB.md,
Dst.md, FloatBitPatterns.md).

Oracles:

* exactness — for integer-valued inputs small enough that every product and sum is
  exact, results equal numpy's whatever the fidelity phases, over shapes, formats,
  addressing (RWCs, DstRow, offsets), banks and broadcasts (hypothesis);
* a per-cell reference model written from the pages (tensix_matrix_support) on random
  bit patterns — every Src cell (denormals, the top exponent, the unused bits) and
  every Dest cell — compared bit for bit;
* behaviour: the implicit wait for the banks (threads park and are woken; a deadlock
  names the bank), bank flips, ADDR_MOD, undefined Dest rows, the rules.

Semantic-level tests use a stand-in thread; the machine-level ones run on the engine the
environment selects (run the file again with TESSERA_ENGINE=step).  Hand-computed
fidelity cases and the wolfpine/ttsim vectors are in test_matrix_vectors.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tensix_matrix_support import (
    CHIPS,
    ELWADD,
    ELWMUL,
    ELWSUB,
    Thread,
    adj32,
    configure,
    dotpv,
    dst_cells,
    elw,
    execute,
    gapool,
    gmpool,
    mvmul,
    put_dst_cells,
    ref_elementwise,
    ref_gmpool,
    ref_mvmul,
    ref_read_dst,
    src_cell,
)
from tensix_sync_support import threads

from tessera.errors import Deadlock, UnhandledTrap
from tessera_tensix.srcab import MATRIX, UNPACKERS

RNG = np.random.default_rng(1616)
#: (Src style, Dst format) pairs the pages' format selection can give
COMBOS = [("BF16", "FP32"), ("BF16", "BF16"), ("TF32", "FP32"), ("TF32", "BF16"),
          ("FP16", "FP32"), ("FP16", "FP16"), ("INT8", "INT32")]
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _random_cells(shape) -> np.ndarray:
    return RNG.integers(0, 1 << 19, shape).astype(np.uint32)


def _fill_dest(t: Thread) -> None:
    t.core.dest.bits[:] = RNG.integers(0, 1 << 16, t.core.dest.bits.shape).astype(np.uint16)


def _cells(block: np.ndarray) -> list[list[int]]:
    return [[int(v) for v in row] for row in block]


# ------------------------------------------------------------------ reference model, random bits
@pytest.mark.parametrize("style, fmt", COMBOS)
@pytest.mark.parametrize("phase", [0, 1, 2, 3])
def test_mvmul_matches_the_reference_model_on_random_bits(style, fmt, phase):
    t = Thread("bh")
    configure(t, style, fmt)
    t.give_banks()
    t.core.srca.rows[0] = _random_cells((64, 16))
    t.core.srcb.rows[0] = _random_cells((64, 16))
    _fill_dest(t)
    t.rwc.update(srca=17, srcb=42, dst=5, fidelity=phase)     # rows 16.., 40.., Dest 8..15 + 16
    wide = fmt in ("FP32", "INT32")
    rows = list(range(24, 32))
    before = dst_cells(t, rows, wide)
    bits_before = t.core.dest.bits.copy()
    want = ref_mvmul(_cells(t.core.srca.rows[0, 16:32]), _cells(t.core.srcb.rows[0, 40:48]), before,
                     style, fmt, phase)
    execute(t, mvmul("bh", dst=19))                             # 19 + 5 = 24
    assert dst_cells(t, rows, wide) == want
    touched = np.zeros(1024, dtype=bool)
    touched[[adj32(r) for r in rows] + [adj32(r) + 8 for r in rows] if wide else rows] = True
    assert np.array_equal(t.core.dest.bits[~touched], bits_before[~touched])


@pytest.mark.parametrize("style, fmt", [("BF16", "FP32"), ("TF32", "BF16"), ("INT8", "INT32")])
def test_consecutive_mvmuls_see_every_change_of_srca(style, fmt):
    """The kernel keeps the last SrcA operand decoded (matrix._srca_operand): the same
    cells again, one cell changed, the same cells at another fidelity phase, another
    bank or row, and an ELWMUL in between (it shares the scratch) must each give the
    reference model's result."""
    t = Thread("bh")
    configure(t, style, fmt)
    t.give_banks()
    t.core.srca.rows[:] = _random_cells((2, 64, 16))
    t.core.srcb.rows[:] = _random_cells((2, 64, 16))
    _fill_dest(t)
    wide = fmt in ("FP32", "INT32")
    rows = list(range(8))
    steps = [("same", None), ("again", None), ("cell", lambda: t.core.srca.rows[0].__setitem__((5, 9), 0x2A7F1)),
             ("phase", lambda: t.rwc.update(fidelity=3)), ("row", lambda: t.rwc.update(srca=16)),
             ("bank", lambda: setattr(t.core.srca, "matrix_bank", 1)),
             ("elwmul", lambda: execute(t, elw(ELWMUL, "bh", dst=64))), ("after", None)]
    for name, change in steps:
        if change is not None:
            change()
        bank, a_row, phase = t.core.srca.matrix_bank, t.rwc["srca"] & 0x38, t.rwc["fidelity"]
        want = ref_mvmul(_cells(t.core.srca.rows[bank, a_row:a_row + 16]), _cells(t.core.srcb.rows[0, 0:8]),
                         dst_cells(t, rows, wide), style, fmt, phase)
        t.core.srcb.matrix_bank = 0
        execute(t, mvmul("bh", dst=0))
        assert dst_cells(t, rows, wide) == want, name


@pytest.mark.parametrize("style, fmt", COMBOS)
@pytest.mark.parametrize("op, opcode", [("MUL", ELWMUL), ("ADD", ELWADD), ("SUB", ELWSUB)])
def test_elementwise_matches_the_reference_model_on_random_bits(style, fmt, op, opcode):
    for phase, add in ((0, 1), (1, 0), (2, 1), (3, 1)):
        t = Thread("wh")
        configure(t, style, fmt)
        t.give_banks()
        t.core.srca.rows[1] = _random_cells((64, 16))
        t.core.srcb.rows[1] = _random_cells((64, 16))
        t.core.srca.matrix_bank = t.core.srcb.matrix_bank = 1
        _fill_dest(t)
        t.rwc.update(srca=8, srcb=21, fidelity=phase)
        wide = fmt in ("FP32", "INT32")
        rows = list(range(48, 56))
        before = dst_cells(t, rows, wide)
        want = ref_elementwise(op, _cells(t.core.srca.rows[1, 8:16]), _cells(t.core.srcb.rows[1, 16:24]),
                               before, style, fmt, phase, bool(add))
        execute(t, elw(opcode, "wh", dst=48, add_dst=add))
        assert dst_cells(t, rows, wide) == want, (phase, add)


@pytest.mark.parametrize("style, fmt", COMBOS)
def test_gapool_and_dotpv_are_mvmul_on_4_and_8_rows(style, fmt):
    wide = fmt in ("FP32", "INT32")
    for word, nrows in ((gapool("bh", dst=4), 4), (dotpv("bh", dst=8), 8),
                        (gapool("wh", dst=4), 4), (dotpv("wh", dst=8), 8)):
        t = Thread("bh" if word in (gapool("bh", dst=4), dotpv("bh", dst=8)) else "wh")
        configure(t, style, fmt)
        t.give_banks()
        t.core.srca.rows[0] = _random_cells((64, 16))
        t.core.srcb.rows[0] = _random_cells((64, 16))
        _fill_dest(t)
        t.rwc.update(srcb=12)                                   # GAPOOL: rows 8..11, the top half
        rows = list(range(nrows, 2 * nrows))
        want = ref_mvmul(_cells(t.core.srca.rows[0, :16]), _cells(t.core.srcb.rows[0, 8:8 + nrows]),
                         dst_cells(t, rows, wide), style, fmt, 0)
        execute(t, word)
        assert dst_cells(t, rows, wide) == want


# ------------------------------------------------------------------ exact integer arithmetic
def _exact_case(draw, style: str, fmt: str, a_max: int, b_max: int, d_max: int):
    ints = st.integers
    a = np.array(draw(st.lists(ints(-a_max, a_max), min_size=256, max_size=256))).reshape(16, 16)
    b = np.array(draw(st.lists(ints(-b_max, b_max), min_size=128, max_size=128))).reshape(8, 16)
    d = np.array(draw(st.lists(ints(-d_max, d_max), min_size=128, max_size=128))).reshape(8, 16)
    return a, b, d


def _load_src(t: Thread, reg: str, bank: int, row0: int, values: np.ndarray, style: str) -> None:
    rows = getattr(t.core, reg).rows
    rows[bank, row0:row0 + values.shape[0]] = [[src_cell(float(v), style) for v in row] for row in values]


def _put_dst_values(t: Thread, rows: list[int], values: np.ndarray, fmt: str) -> None:
    from tensix_matrix_support import ref_write_dst
    put_dst_cells(t, rows, [[ref_write_dst(float(v), fmt) for v in row] for row in values],
                  fmt in ("FP32", "INT32"))


def _dst_values(t: Thread, rows: list[int], fmt: str) -> np.ndarray:
    return np.array([[ref_read_dst(hi, lo, fmt) for hi, lo in row]
                     for row in dst_cells(t, rows, fmt in ("FP32", "INT32"))])


#: per combination: (|SrcA| max, |SrcB| max, |Dst| max) keeping every partial sum exact
EXACT_BOUNDS = {("BF16", "FP32"): (255, 255, 1000), ("TF32", "FP32"): (1023, 1000, 1000),
                ("FP16", "FP32"): (1023, 1000, 1000), ("INT8", "INT32"): (255, 1023, 10 ** 6),
                ("BF16", "BF16"): (3, 3, 50), ("TF32", "BF16"): (3, 3, 50),
                ("FP16", "FP16"): (7, 7, 200)}


@st.composite
def mvmul_cases(draw):
    style, fmt = draw(st.sampled_from(COMBOS))
    a, b, d = _exact_case(draw, style, fmt, *EXACT_BOUNDS[style, fmt])
    chip = draw(st.sampled_from(CHIPS))
    phases = draw(st.integers(1, 4))
    a_row = draw(st.integers(0, 48)) & 0x38
    b_row = draw(st.integers(0, 56)) & 0x38
    bank = draw(st.sampled_from([(0, 0), (1, 0), (0, 1), (1, 1)]))
    dst = draw(st.integers(0, 0x3FF))
    offset = draw(st.integers(0, 0x1FF))
    return style, fmt, a, b, d, chip, phases, a_row, b_row, bank, dst, offset


@SETTINGS
@given(mvmul_cases())
def test_mvmul_of_exact_integers_equals_numpy(case):
    """Integers whose products and sums are exact: all four fidelity phases give numpy's
    ``Dst + B @ A``.  Fewer phases do too when the operands fit the bits those phases
    consume (SrcASrcB.md): floating point |A| <= 31, |B| <= 127 need phase 0 only (every
    prefix of phases 0..3 then adds zeros); integer "8" |A| <= 31, |B| <= 15 need phase 3."""
    style, fmt, a, b, d, chip, phases, a_row, b_row, (bank_a, bank_b), dst, offset = case
    order = range(phases)
    if phases < 4:
        b_max = 15 if style == "INT8" else 127
        a, b = np.clip(a, -31, 31), np.clip(b, -b_max, b_max)
        if style == "INT8":
            order = range(3, 4)
    t = Thread(chip)
    configure(t, style, fmt)
    t.give_banks()
    t.core.srca.matrix_bank, t.core.srcb.matrix_bank = bank_a, bank_b
    _load_src(t, "srca", bank_a, a_row, a, style)
    _load_src(t, "srcb", bank_b, b_row, b, style)
    t.tcfg.set("DEST_TARGET_REG_CFG_MATH_Offset", offset)
    row0 = (dst + offset + 3) & 0x3F8
    rows = list(range(row0, row0 + 8))
    _put_dst_values(t, rows, d, fmt)
    for p in order:
        t.rwc.update(srca=a_row + 3, srcb=b_row + 5, dst=3, fidelity=p)
        execute(t, mvmul(chip, dst=dst))
    assert np.array_equal(_dst_values(t, rows, fmt), d + b @ a)


@SETTINGS
@given(st.sampled_from(COMBOS), st.sampled_from(["MUL", "ADD", "SUB"]), st.booleans(), st.booleans(),
       st.booleans(), st.integers(0, 63), st.integers(0, 63), st.data())
def test_elementwise_of_exact_integers_equals_numpy(combo, op, add, bcast_row, bcast_col0, a_rwc,
                                                    b_rwc, data):
    style, fmt = combo
    a_max, b_max, d_max = EXACT_BOUNDS[style, fmt]
    bound = min(a_max, 31) if op == "MUL" else min(a_max, 100)
    a, b, d = _exact_case(data.draw, style, fmt, bound, min(b_max, 63 if op == "MUL" else 100), d_max)
    if fmt in ("BF16", "FP16") and op != "MUL":
        a, b = np.clip(a, -40, 40), np.clip(b, -40, 40)
    t = Thread("bh")
    configure(t, style, fmt)
    t.give_banks()
    a_row = a_rwc & 0x38
    b_row = b_rwc & (0x3F if bcast_row else 0x38)
    _load_src(t, "srca", 0, a_row, a[:8], style)
    _load_src(t, "srcb", 0, b_row, b[:1] if bcast_row else b, style)
    rows = list(range(200, 208))
    _put_dst_values(t, rows, d, fmt)
    opcode = {"MUL": ELWMUL, "ADD": ELWADD, "SUB": ELWSUB}[op]
    for phase in range(4 if op == "MUL" else 1):               # ELWMUL: all four phases (HiFi4)
        t.rwc.update(srca=a_rwc, srcb=b_rwc, fidelity=phase)
        execute(t, elw(opcode, "bh", dst=200, add_dst=int(add), bcast_row=int(bcast_row),
                       bcast_col0=int(bcast_col0)))
    bb = np.repeat(b[:1], 8, axis=0) if bcast_row else b
    if bcast_col0:
        bb = np.repeat(bb[:, :1], 16, axis=1)
    result = a[:8] * bb if op == "MUL" else a[:8] + bb if op == "ADD" else a[:8] - bb
    want = d + result if (add or op == "MUL") else result
    assert np.array_equal(_dst_values(t, rows, fmt), want)


def test_mvmul_broadcast_row_writes_every_other_row_of_seven():
    t = Thread("bh")
    configure(t, "BF16", "FP32")
    t.give_banks()
    a = RNG.integers(-8, 8, (16, 16))
    b = RNG.integers(-8, 8, (64, 16))
    _load_src(t, "srca", 0, 0, a, "BF16")
    _load_src(t, "srcb", 0, 0, b, "BF16")
    rows = list(range(32, 40))
    old = RNG.integers(-50, 50, (8, 16))
    _put_dst_values(t, rows, old, "FP32")
    t.rwc["srcb"] = 13                                          # any row, not aligned
    execute(t, mvmul("bh", dst=33, bcast=1))                    # DstRow & 0x3F9 keeps bit 0: 33
    got = _dst_values(t, list(range(32, 41)), "FP32")
    product = b[13] @ a
    assert np.array_equal(got[[1, 3, 5, 7]], old[[1, 3, 5, 7]] + product)
    assert np.array_equal(got[[0, 2, 4, 6]], old[[0, 2, 4, 6]])  # rows +1, +3, +5 and 32 untouched


def test_fp16a_force_reads_fp16_and_writes_a_16_bit_dst_whatever_the_formats():
    t = Thread("bh")
    t.core.cfg.set("ALU_FORMAT_SPEC_REG0_SrcA", 5)              # BF16 …
    t.core.cfg.set("ALU_ACC_CTRL_Fp32_enabled", 1)              # … into FP32, but forced:
    t.tcfg.set("FP16A_FORCE_Enable", 1)
    t.give_banks()
    _load_src(t, "srca", 0, 0, np.full((8, 16), 1.5), "FP16")
    _load_src(t, "srcb", 0, 0, np.full((8, 16), -3.0), "FP16")
    execute(t, elw(ELWMUL, "bh", dst=0))
    assert np.array_equal(_dst_values(t, list(range(8)), "FP16"), np.full((8, 16), -4.5))


def test_srca_override_selects_the_style():
    t = Thread("bh")
    t.core.cfg.set("ALU_FORMAT_SPEC_REG0_SrcA", 5)              # BF16, overridden by FP16
    t.core.cfg.set("ALU_FORMAT_SPEC_REG_SrcA_override", 1)
    t.core.cfg.set("ALU_FORMAT_SPEC_REG_SrcA_val", 1)
    t.give_banks()
    _load_src(t, "srca", 0, 0, np.full((8, 16), 3.0), "FP16")
    _load_src(t, "srcb", 0, 0, np.full((8, 16), 2.0), "FP16")
    execute(t, elw(ELWADD, "bh", dst=0))
    assert np.array_equal(_dst_values(t, list(range(8)), "FP16"), np.full((8, 16), 5.0))


# ------------------------------------------------------------------ banks, ADDR_MOD, rules
@pytest.mark.parametrize("chip", CHIPS)
def test_flip_bits_hand_banks_back_unless_disabled(chip):
    t = Thread(chip)
    t.give_banks()
    execute(t, mvmul(chip, flip_a=1, flip_b=1))
    assert t.core.srca.allowed == [UNPACKERS, MATRIX] and t.core.srca.matrix_bank == 1
    assert t.core.srcb.allowed == [UNPACKERS, MATRIX] and t.core.srcb.matrix_bank == 1
    t.tcfg.set("CLR_DVALID_SrcB_Disable", 1)
    execute(t, elw(ELWADD, chip, flip_b=1))
    assert t.core.srcb.allowed == [UNPACKERS, MATRIX] and t.core.srcb.matrix_bank == 0
    assert t.core.srca.matrix_bank == 1                         # no FlipSrcA: SrcA stays


@pytest.mark.parametrize("chip", CHIPS)
def test_addr_mod_advances_the_rwcs_and_the_fidelity_phase(chip):
    t = Thread(chip)
    t.give_banks()
    t.tcfg.set("ADDR_MOD_AB_SEC2_SrcAIncr", 16)
    t.tcfg.set("ADDR_MOD_AB_SEC2_SrcBIncr", 8)
    t.tcfg.set("ADDR_MOD_DST_SEC2_DestIncr", 8)
    t.tcfg.set("ADDR_MOD_DST_SEC2_FidelityIncr", 1)
    for word in (mvmul(chip, addr_mod=2), gmpool(chip, addr_mod=2), gapool(chip, addr_mod=2),
                 dotpv(chip, addr_mod=2), elw(ELWSUB, chip, addr_mod=2)):
        t.rwc.update(srca=0, srcb=0, dst=0, fidelity=0)
        execute(t, word)
        assert (t.rwc["srca"], t.rwc["srcb"], t.rwc["dst"], t.rwc["fidelity"]) == (16, 8, 8, 1), hex(word)


def test_fidelity_base_phase_is_added_to_the_rwc():
    t = Thread("bh")
    configure(t, "BF16", "FP32")
    t.give_banks()
    a = 1 + 2.0 ** -7                                          # the last BF16 mantissa bit …
    _load_src(t, "srca", 0, 0, np.full((8, 16), a), "BF16")
    _load_src(t, "srcb", 0, 0, np.full((8, 16), 1.0), "BF16")
    t.tcfg.set("FIDELITY_BASE_Phase", 1)                       # … is SrcA's phase-1 part
    execute(t, elw(ELWMUL, "bh"))
    assert np.array_equal(_dst_values(t, list(range(8)), "FP32"), np.full((8, 16), 2.0 ** -7))


@pytest.mark.parametrize("word", [mvmul("bh"), dotpv("bh"), gapool("bh")])
def test_a_16_row_srca_operand_past_row_63_breaks_a_rule(word):
    t = Thread("bh")
    t.give_banks()
    t.rwc["srca"] = 56
    with pytest.raises(Exception, match="SrcA rows 56..71 are read, past row 63"):
        execute(t, word)
    lenient = Thread("bh", lenient=True)
    configure(lenient, "BF16", "FP32")
    lenient.give_banks()
    _load_src(lenient, "srca", 0, 56, np.full((8, 16), 2.0), "BF16")
    _load_src(lenient, "srca", 0, 0, np.full((8, 16), 3.0), "BF16")   # rows 64..71 wrap to 0..7
    _load_src(lenient, "srcb", 0, 0, np.full((8, 16), 1.0), "BF16")
    lenient.rwc["srca"] = 56
    execute(lenient, word)
    assert _dst_values(lenient, [0], "FP32")[0, 0] == 8 * 2.0 + 8 * 3.0


def test_undefined_dest_rows_read_as_zero_and_become_defined():
    t = Thread("bh")
    configure(t, "BF16", "FP32")
    t.give_banks()
    _load_src(t, "srca", 0, 0, np.eye(16), "BF16")
    _load_src(t, "srcb", 0, 0, np.arange(128).reshape(8, 16) % 7, "BF16")
    t.core.dest.bits[:] = 0x3F80                              # garbage under the flags
    t.core.dest.invalidate(np.arange(16, 32))                 # Dst32b rows 8..15: both halves
    execute(t, mvmul("bh", dst=8))
    assert np.array_equal(_dst_values(t, list(range(8, 16)), "FP32"), np.arange(128).reshape(8, 16) % 7)
    assert t.core.dest.all_valid


# ------------------------------------------------------------------ GMPOOL
GMPOOL_COMBOS = [("BF16", False), ("BF16", True), ("FP16", False), ("FP16", True), ("TF32", False),
                 ("TF32", True), ("INT8", True)]


@pytest.mark.parametrize("style, wide", GMPOOL_COMBOS)
@pytest.mark.parametrize("argmax", [0, 1])
def test_gmpool_matches_the_pages_loop(style, wide, argmax):
    """Random cells, many ties (few distinct values), against GMPOOL.md's loop."""
    from tessera_tensix.semantics.matrix_ops import gmpool_styles
    t = Thread("bh")
    if style == "INT8":
        t.core.cfg.set("ALU_ACC_CTRL_INT8_math_enabled", 1)
    else:
        t.core.cfg.set("ALU_FORMAT_SPEC_REG0_SrcA", {"BF16": 5, "FP16": 1, "TF32": 4}[style])
        t.core.cfg.set("ALU_ACC_CTRL_Fp32_enabled", int(wide))
    t.give_banks()
    pool = _random_cells(12)
    t.core.srca.rows[0] = pool[RNG.integers(0, 12, (64, 16))]
    b = _random_cells((64, 16))
    b[24, RNG.integers(0, 16, 3)] &= ~np.uint32(0xFF)          # a few zero exponents: -inf
    t.core.srcb.rows[0] = b
    _fill_dest(t)
    t.rwc.update(srca=37, srcb=27, dst=2)                      # SrcA rows 32.., SrcB row 24
    rows = [12, 13, 14, 15]                                    # (10 + 2) & 0x3FC
    cells = dst_cells(t, rows, wide)
    old = [(hi << 16 | lo) if wide else hi << 16 for hi, lo in cells[0]]
    _, dst_style, _ = gmpool_styles(t, bool(argmax))
    want = ref_gmpool(_cells(t.core.srca.rows[0, 32:48]), [int(v) for v in b[24]], old, style,
                      dst_style, bool(argmax))
    execute(t, gmpool("bh", dst=10, argmax=argmax))
    got = dst_cells(t, rows, wide)
    if wide:
        assert [hi << 16 | lo for hi, lo in got[0]] == want
        for r in range(1, 4):
            rest = [((hi << 16 | lo) + 0x100) & 0xF00 if argmax else 0 for hi, lo in cells[r]]
            assert [hi << 16 | lo for hi, lo in got[r]] == rest
    else:
        assert [hi for hi, _ in got[0]] == [v >> 16 for v in want]
        assert all(hi == 0 for row in got[1:] for hi, _ in row)


def test_gmpool_after_zeroacc_is_the_column_max():
    t = Thread("wh")
    configure(t, "BF16", "BF16")
    t.give_banks()
    a = RNG.integers(-100, 100, (16, 16))
    _load_src(t, "srca", 0, 0, a, "BF16")
    _load_src(t, "srcb", 0, 0, np.ones((8, 16)), "BF16")       # scale by 2**0
    t.core.dest.invalidate(np.arange(0, 16))                   # undefined: minus infinity
    execute(t, gmpool("wh", dst=0))
    assert np.array_equal(_dst_values(t, [0], "BF16")[0], a.max(axis=0))
    assert np.array_equal(_dst_values(t, [1, 2, 3], "BF16"), np.zeros((3, 16)))


# ------------------------------------------------------------------ machines: waits, kernels
def _machine(chip: str, programs, style: str = "BF16", fmt: str = "FP32", **config):
    m = threads(chip, programs, **config)
    for name in ("t0", "t1", "t2")[:len(programs)]:
        configure(m.agent(name), style, fmt) if name == "t0" else None
    return m


@pytest.mark.parametrize("chip", CHIPS)
def test_mvmul_waits_for_both_banks_and_is_woken_by_setdvalid(chip):
    """T1's MVMUL parks until T0 hands over SrcA and SrcB (SETDVALID, after some work)."""
    from tensix_srcab_support import setdvalid
    t0 = [0x45 << 24 | 1 << 8 | 2] * 20 + [setdvalid(1, 0), setdvalid(0, 1)]   # SETDMAREG filler
    t1 = [mvmul(chip, dst=0, flip_a=1, flip_b=1)]
    m = _machine(chip, [t0, t1])
    core = m.agent("t0").core
    a = RNG.integers(-8, 8, (16, 16))
    b = RNG.integers(-8, 8, (8, 16))
    core.srca.rows[0, :16] = [[src_cell(float(v), "BF16") for v in row] for row in a]
    core.srcb.rows[0, :8] = [[src_cell(float(v), "BF16") for v in row] for row in b]
    assert m.run(max_steps=10_000).exit_code == 0
    got = core.dest.read_fp32(8)
    assert np.array_equal(got, (b @ a).astype(np.float32))
    assert core.srca.allowed == [UNPACKERS, UNPACKERS] and core.srca.matrix_bank == 1   # flipped


@pytest.mark.parametrize("chip", CHIPS)
def test_a_missing_setdvalid_deadlocks_naming_the_bank(chip):
    from tensix_srcab_support import setdvalid
    m = _machine(chip, [[setdvalid(1, 0)], [elw(ELWADD, chip)]])
    with pytest.raises(Deadlock) as err:
        m.run(max_steps=10_000)
    text = str(err.value)
    assert "ELWADD waits: SrcB bank 0 is owned by the unpackers" in text and "T1" in text


@pytest.mark.parametrize("chip", CHIPS)
def test_a_kernel_of_mvmuls_with_addr_mod_computes_a_32_row_product(chip):
    """Four MVMULs stepping SrcB and Dest by 8 rows through ADDR_MOD (set 1) compute
    ``Dst[0:32] = B[0:32] @ A`` — the machine runs them on the selected engine."""
    from tensix_srcab_support import setdvalid
    words = [setdvalid(1, 1)] + [mvmul(chip, addr_mod=1)] * 4
    m = _machine(chip, [words])
    t0 = m.agent("t0")
    t0.tcfg.set("ADDR_MOD_AB_SEC1_SrcBIncr", 8)
    t0.tcfg.set("ADDR_MOD_DST_SEC1_DestIncr", 8)
    a = RNG.integers(-16, 16, (16, 16))
    b = RNG.integers(-16, 16, (32, 16))
    t0.core.srca.rows[0, :16] = [[src_cell(float(v), "BF16") for v in row] for row in a]
    t0.core.srcb.rows[0, :32] = [[src_cell(float(v), "BF16") for v in row] for row in b]
    assert m.run(max_steps=10_000).exit_code == 0
    assert np.array_equal(t0.core.dest.read_fp32(32), (b @ a).astype(np.float32))
    assert (t0.rwc["srcb"], t0.rwc["dst"]) == (32, 32)


def test_a_rule_break_in_a_machine_names_the_instruction():
    from tensix_srcab_support import setdvalid
    m = _machine("bh", [[setdvalid(1, 1), mvmul("bh")]])
    m.agent("t0").rwc["srca"] = 60
    with pytest.raises(UnhandledTrap, match=r"ttmvmul: SrcA rows 56..71 are read.*agent t0, pc 0x00000004"):
        m.run(max_steps=100)
