"""Scalar-unit memory, register and atomic instructions: LOADIND, STOREIND (L1, MMIO, SrcA/SrcB),
LOADREG, STOREREG, REG2FLOP (configuration, ADC), ATCAS, ATINCGET, ATINCGETPTR, ATSWAP, DMANOP
(the WormholeB0 pages of those names; Blackhole shares them with its larger L1)."""

from __future__ import annotations

import numpy as np
import pytest
from tensix_unit_support import (
    ATCAS,
    ATINCGET,
    ATINCGETPTR,
    ATSWAP,
    CHIPS,
    DMANOP,
    L1_BYTES,
    LOADIND,
    LOADREG,
    RDCFG,
    REG2FLOP_ADC,
    REG2FLOP_CFG,
    SETC16,
    STOREIND_L1,
    STOREIND_MMIO,
    STOREIND_SRC,
    STOREREG,
    Thread,
    execute,
    machine,
    set_gpr,
)

from tessera.control import Trap, WaitFor
from tessera.errors import Deadlock, UnhandledTrap
from tessera_tensix import cfgregs
from tessera_tensix.adc import adcs
from tessera_tensix.srcab import MATRIX

THCON = {"wh": (52, 152), "bh": (64, 180)}       # THCON_CFGREG_BASE, GLOBAL_CFGREG_BASE
PATTERN = np.arange(4096, dtype=np.uint32) * 0x0101_0101 + 0x0302_0100  # a varied L1 background


def with_l1(chip: str = "wh", **kw) -> Thread:
    t = Thread(chip, **kw)
    t.core.l1.write(0, PATTERN)
    return t


def l1_bytes(t: Thread, offset: int, n: int) -> bytes:
    return t.core.l1.read(offset, n).tobytes()


# ---------------------------------------------------------------- LOADIND
@pytest.mark.parametrize("chip", CHIPS)
def test_loadind_sizes_alignment_and_partial_gprs(chip):
    t = with_l1(chip)
    t.gpr[1] = 0x10                                # AddrReg: 0x10 * 16 = 0x100
    t.gpr[3] = 0xAAAA_0027                         # offset half 6 (GPR3 low) = 0x27 -> 0x127
    t.gpr[20:24] = [0xFFFF_FFFF] * 4
    execute(t, LOADIND(0, 6, 0, 22, 1))            # 128 bits at 0x120 into GPRs 20..23
    assert t.gpr[20:24] == [int.from_bytes(l1_bytes(t, 0x120 + 4 * i, 4), "little") for i in range(4)]
    execute(t, LOADIND(1, 6, 0, 24, 1))            # 32 bits at 0x124
    assert t.gpr[24] == int.from_bytes(l1_bytes(t, 0x124, 4), "little")
    t.gpr[25] = t.gpr[26] = 0xDEAD_BEEF
    execute(t, LOADIND(2, 6, 0, 25, 1), LOADIND(3, 6, 0, 26, 1))
    assert t.gpr[25] == 0xDEAD_0000 | int.from_bytes(l1_bytes(t, 0x126, 2), "little")
    assert t.gpr[26] == 0xDEAD_BE00 | l1_bytes(t, 0x127, 1)[0]
    assert t.gpr[3] == 0xAAAA_0027                 # OffsetIncrement 0


@pytest.mark.parametrize("increment, step", [(1, 2), (2, 4), (3, 16)])
def test_loadind_advances_the_offset_half_register_and_wraps(increment, step):
    t = with_l1()
    t.gpr[3] = 0x0020_FFFE                         # half 7 (high) = 0x0020, half 6 (low) = 0xFFFE
    execute(t, LOADIND(1, 7, increment, 9, 1))      # address 0 + 0x20
    assert t.gpr[9] == int(PATTERN[8])
    assert t.gpr[3] == (0x0020 + step) << 16 | 0xFFFE
    execute(t, LOADIND(3, 6, increment, 10, 1))
    assert t.gpr[3] & 0xFFFF == (0xFFFE + step) & 0xFFFF


@pytest.mark.parametrize("chip", CHIPS)
def test_l1_address_beyond_l1_is_a_rule_stop_or_does_nothing(chip):
    t = with_l1(chip)
    t.gpr[1] = L1_BYTES[chip] // 16               # exactly one past the end
    with pytest.raises(Trap, match="beyond L1"):
        execute(t, LOADIND(1, 0, 3, 2, 1))
    lenient = with_l1(chip, lenient=True)
    lenient.gpr[1], lenient.gpr[2] = L1_BYTES[chip] // 16, 0x77
    execute(lenient, LOADIND(1, 0, 3, 2, 1), STOREIND_L1(1, 0, 3, 2, 1), ATINCGET(31, 0, 2, 1))
    assert lenient.gpr[2] == 0x77 and lenient.gpr[0] == 0   # no load, no offset step


def test_blackhole_l1_reaches_beyond_wormholes():
    t = with_l1("bh")
    t.gpr[1] = 1464 * 1024 // 16 + 5
    t.gpr[2] = 0x1234_5678
    execute(t, STOREIND_L1(1, 0, 0, 2, 1), LOADIND(1, 0, 0, 3, 1))
    assert t.gpr[3] == 0x1234_5678


# ---------------------------------------------------------------- STOREIND to L1
@pytest.mark.parametrize("chip", CHIPS)
def test_storeind_l1_sizes(chip):
    t = with_l1(chip)
    t.gpr[1] = 0x20                                # 0x200
    t.gpr[2] = 0x0000_000B                         # offset half 4 = 0x0B -> 0x20B
    t.gpr[8:12] = [0x1111_1111, 0x2222_2222, 0x3333_3333, 0x4444_4444]
    t.gpr[13] = 0xA1B2_C3D4
    before = l1_bytes(t, 0x200, 16)
    execute(t, STOREIND_L1(0, 4, 0, 9, 1))         # 128 bits from GPRs 8..11 at 0x200
    assert l1_bytes(t, 0x200, 16) == np.array(t.gpr[8:12], dtype="<u4").tobytes()
    execute(t, STOREIND_L1(1, 4, 0, 13, 1))        # 32 bits at 0x208
    assert l1_bytes(t, 0x208, 4) == (0xA1B2_C3D4).to_bytes(4, "little")
    t.core.l1.write(0x200, before)
    execute(t, STOREIND_L1(2, 4, 0, 13, 1), STOREIND_L1(3, 4, 0, 13, 1))   # 16 bits at 0x20A, 8 at 0x20B
    want = bytearray(before)
    want[0xA:0xC] = (0xC3D4).to_bytes(2, "little")
    want[0xB] = 0xD4
    assert l1_bytes(t, 0x200, 16) == bytes(want)


def test_storeind_l1_reads_its_data_after_advancing_the_offset():
    t = with_l1()
    t.gpr[1] = 0x30
    t.gpr[5] = 0x0000_0004                         # offset half 10 is also the data GPR
    execute(t, STOREIND_L1(1, 10, 3, 5, 1))        # stores GPR5 after += 16
    assert t.gpr[5] == 0x14
    assert t.core.l1.word(0x304) == 0x14


# ---------------------------------------------------------------- MMIO
@pytest.mark.parametrize("chip", CHIPS)
def test_storereg_loadreg_and_storeind_mmio_reach_the_dest_window(chip):
    dest_lo = (0xFFBD_8000 - 0xFFB0_0000) >> 2     # AddrLo of the Dest debug window
    kernel = [*set_gpr(1, 0x3F80_0000), STOREREG(1, dest_lo), LOADREG(2, dest_lo),
              *set_gpr(3, (0xFFBD_8000 - 0xFFB0_0000)), *set_gpr(4, 0x0040_0000), *set_gpr(5, 0xC000_0000),
              STOREIND_MMIO(8, 2, 5, 3), LOADREG(6, dest_lo + 4), LOADREG(7, dest_lo)]
    m = machine(chip, kernel)
    assert m.run(max_steps=200).exit_code == 0
    t = m.agent("t0")
    assert t.gpr[2] == 0x3F80_0000
    assert t.gpr[4] == 0x0040_0004                 # OffsetIncrement 2 added 4 to half 8
    assert t.gpr[6] == 0 and t.gpr[7] == 0xC000_0000 and np.any(t.core.dest.bits != 0)


@pytest.mark.parametrize("chip", CHIPS)
def test_mmio_nothing_is_mapped_at_stops_naming_the_address(chip):
    m = machine(chip, [LOADREG(2, (0xFFB1_2000 - 0xFFB0_0000) >> 2)])
    with pytest.raises(UnhandledTrap, match="MMIO register 0xffb12000 is not modelled in direct mode"):
        m.run(max_steps=10)


@pytest.mark.parametrize("word", [STOREREG(1, 0x10), LOADREG(1, 0x43FF), STOREIND_MMIO(0, 0, 1, 2)])
def test_mmio_below_0xffb11000_is_undefined(word):
    t = Thread("wh")
    with pytest.raises(Trap, match="below 0xffb11000"):
        execute(t, word)
    lenient = Thread("wh", lenient=True)
    lenient.gpr[1] = 5
    execute(lenient, word)
    assert lenient.gpr[1] == 5


# ---------------------------------------------------------------- STOREIND to SrcA / SrcB
def bf16_lo(x: int) -> int:
    sign, man, exp = x >> 15 & 1, x >> 8 & 0x7F, x & 0xFF
    return sign << 18 | man << 11 | exp


def bf16_hi(x: int) -> int:
    return bf16_lo((x >> 16 & 0x8000) | (x >> 16 & 0x7F) << 8 | (x >> 23 & 0xFF))


def test_storeind_to_srcb_writes_four_bf16_at_the_unpackers_row():
    t = Thread("bh", tid=2)
    srcb = t.core.srcb
    srcb.unpacker_bank, srcb.src_row[2] = 1, 32
    t.gpr[12:14] = [0x3F80_C049, 0x4120_BF00]      # DataReg 13 & 0x3c = 12
    t.gpr[1] = 0x21                                # Addr = 0x21 + (0x50 >> 4) = 0x26: row 9, column 8
    t.gpr[2] = 0x50                                # offset half 4
    execute(t, STOREIND_SRC(1, 4, 1, 13, 1))
    want = [bf16_lo(0x3F80_C049), bf16_hi(0x3F80_C049), bf16_lo(0x4120_BF00), bf16_hi(0x4120_BF00)]
    assert want[1] == 0x7F and want[0] == 1 << 18 | 0x40 << 11 | 0x49
    assert srcb.rows[1, 41, 8:12].tolist() == want
    assert int(np.count_nonzero(srcb.rows)) == 4 and t.gpr[2] == 0x52


@pytest.mark.parametrize("override, address, row", [(0, 0x1D, 3 + 16), (1, 0x10F, 63)])
def test_storeind_to_srca_rows_start_four_rows_in(override, address, row):
    t = Thread("wh", tid=1)
    srca = t.core.srca
    srca.src_row[1] = 16
    t.tcfg.set("SRCA_SET_SetOvrdWithAddr", override)
    t.gpr[4:6] = [0x0001_0002, 0x0003_0004]
    t.gpr[1] = address
    execute(t, STOREIND_SRC(0, 0, 0, 4, 1))
    col = (address & 3) * 4
    g4, g5 = 0x0001_0002, 0x0003_0004
    assert srca.rows[0, row, col:col + 4].tolist() == [bf16_lo(g4), bf16_hi(g4), bf16_lo(g5), bf16_hi(g5)]
    assert int(np.count_nonzero(srca.rows)) == 4


def test_storeind_to_srca_below_row_four_writes_nothing_but_advances():
    t = Thread("wh")
    t.gpr[4] = 0x1234_5678
    t.gpr[1] = 0x0F                                # row 3 - 4 < 0
    execute(t, STOREIND_SRC(0, 0, 1, 4, 1))
    assert not t.core.srca.rows.any() and t.gpr[0] == 2


@pytest.mark.parametrize("to_srcb, address, message", [
    (1, 0x40, "SrcB row 16"), (0, 0x50, "SrcA row 16"), (0, 0x1_0000, "bits 19:16")])
def test_storeind_to_src_undefined_rows_and_addresses(to_srcb, address, message):
    t = Thread("wh")
    t.gpr[1] = address
    with pytest.raises(Trap, match=message):
        execute(t, STOREIND_SRC(to_srcb, 0, 0, 4, 1))


def test_storeind_to_src_waits_for_the_unpackers_bank():
    t = Thread("wh")
    t.core.srcb.allowed[0] = MATRIX
    with pytest.raises(WaitFor):
        execute(t, STOREIND_SRC(1, 0, 3, 4, 1))
    assert t.gpr[0] == 0                           # nothing happened before the wait


@pytest.mark.parametrize("chip", CHIPS)
def test_storeind_src_wait_is_named_in_the_deadlock_report(chip):
    m = machine(chip, [STOREIND_SRC(1, 0, 0, 4, 1)])
    m.agent("t0").core.srcb.allowed[0] = MATRIX
    with pytest.raises(Deadlock, match="STOREIND waits: SrcB bank 0 is owned by the matrix unit"):
        m.run(max_steps=10)


# ---------------------------------------------------------------- REG2FLOP
@pytest.mark.parametrize("chip", CHIPS)
def test_reg2flop_writes_thcon_configuration_in_the_threads_bank(chip):
    thcon, glob = THCON[chip]
    t = Thread(chip)
    t.gpr[8:12] = [0xA0, 0xA1, 0xA2, 0xA3]
    t.gpr[30] = 0x1234_5678
    execute(t, REG2FLOP_CFG(1, 5, 30), REG2FLOP_CFG(0, 10, 9))   # 32 bits; 128 bits at (10 & ~3)
    assert t.core.cfg.get("THCON_SEC0_REG0_TileDescriptor") == 0
    for i, reg in enumerate((5, 8, 9, 10, 11)):
        execute(t, RDCFG(40 + i, thcon + reg))
    assert t.gpr[40:45] == [0x1234_5678, 0xA0, 0xA1, 0xA2, 0xA3]
    execute(t, SETC16(0, 1), REG2FLOP_CFG(2, 5, 8))               # bank 1 now
    assert cfgregs.read_cfg(t.core, 1, thcon + 5) == 0xA0 and cfgregs.read_cfg(t.core, 0, thcon + 5) == 0x1234_5678
    with pytest.raises(Trap, match="THCON configuration index"):
        execute(t, REG2FLOP_CFG(1, glob - thcon, 8))


@pytest.mark.parametrize("size, shift8, value", [
    (0, 0, 0), (1, 0, 0x89AB_CDEF), (1, 1, 0), (2, 0, 0xCDEF), (2, 2, 0x89AB), (2, 1, 0), (2, 3, 0),
    (3, 0, 0xEF), (3, 1, 0xCD), (3, 2, 0xAB), (3, 3, 0x89)])
def test_reg2flop_adc_value_selection(size, shift8, value):
    t = Thread("wh")
    t.gpr[7] = 0x89AB_CDEF
    adcs(t.core).set(0, 1, 1, "W_Cr", 0x55)
    execute(t, REG2FLOP_ADC(size, 0, shift8, 0, 1, 1, 1, 3, 7))   # Unpacker 1, channel 1, W_Cr
    assert adcs(t.core).get(0, 1, 1, "W_Cr") == value & 0xFF      # W is 8 bits wide


def test_reg2flop_adc_counter_choice_and_thread_override():
    t = Thread("bh", tid=1)
    t.gpr[2] = 0x3_FFFF
    execute(t, REG2FLOP_ADC(1, 0, 0, 2, 0, 2, 0, 0, 2))   # packers' X of channel 0 of this thread
    execute(t, REG2FLOP_ADC(1, 1, 0, 2, 1, 0, 1, 1, 2))   # Unpacker 0 Y_Cr, channel 1, of thread 2
    execute(t, REG2FLOP_ADC(1, 1, 0, 3, 1, 0, 0, 2, 2))   # thread 3 does not exist: nothing
    execute(t, REG2FLOP_ADC(1, 0, 0, 0, 1, 3, 0, 2, 2))   # ADCSel 3: nothing
    state = adcs(t.core)
    assert state.get(1, 2, 0, "X") == 0x3_FFFF and state.get(2, 0, 1, "Y_Cr") == 0x1FFF
    assert int(np.count_nonzero(state.values)) == 2
    with pytest.raises(Trap, match="bits 21:20 = 1"):
        execute(t, REG2FLOP_ADC(1, 0, 0, 0, 0, 0, 0, 0, 2) & ~(3 << 20) | 1 << 20)


# ---------------------------------------------------------------- atomics
@pytest.mark.parametrize("chip", CHIPS)
def test_atcas_sets_when_equal_and_waits_otherwise(chip):
    t = with_l1(chip)
    t.core.l1.set_word(0x408, 6)
    t.gpr[1] = 0x40
    execute(t, ATCAS(0xB, 6, 2, 1))               # word at 0x400 + 2*4 is 6: set to 11
    assert t.core.l1.word(0x408) == 0xB
    with pytest.raises(WaitFor, match="L1 word 0x408 holds 0xb, not 6"):
        execute(t, ATCAS(0x1, 6, 2, 1))
    assert t.core.l1.word(0x408) == 0xB


@pytest.mark.parametrize("chip", CHIPS)
def test_atcas_is_woken_by_another_threads_store(chip):
    t0 = [*set_gpr(1, 0x100), ATCAS(9, 3, 0, 1), *set_gpr(2, 0xD0E)]
    t1 = [*set_gpr(1, 0x100), *set_gpr(3, 3), DMANOP, DMANOP, DMANOP, STOREIND_L1(1, 0, 0, 3, 1)]
    m = machine(chip, t0, t1)
    assert m.run(max_steps=500).exit_code == 0
    assert m.agent("t0").gpr[2] == 0xD0E and m.agent("t0").core.l1.word(0x1000) == 9


@pytest.mark.parametrize("chip", CHIPS)
def test_atcas_alone_deadlocks_naming_the_word(chip):
    m = machine(chip, [*set_gpr(1, 0x100), ATCAS(9, 3, 1, 1)])
    with pytest.raises(Deadlock, match="ATCAS waits: L1 word 0x1004 holds 0x0, not 3"):
        m.run(max_steps=100)


@pytest.mark.parametrize("width, original, increment, want", [
    (7, 0x1234_56F0, 0x20, 0x1234_5610), (31, 0xFFFF_FFFF, 2, 1), (0, 0x10, 3, 0x11), (15, 0xABCD_FFFF, 1, 0xABCD_0000)])
def test_atincget(width, original, increment, want):
    t = with_l1()
    t.core.l1.set_word(0x50C, original)
    t.gpr[1], t.gpr[5] = 0x50, increment
    execute(t, ATINCGET(width, 3, 5, 1))
    assert t.core.l1.word(0x50C) == want and t.gpr[5] == original


@pytest.mark.parametrize("ofs, rd, wr, no_incr, incr_log2, want_words, result", [
    (1, 3, 5, 0, 0, [3, 6], 5),                    # push 1 onto a FIFO holding 2 of 4
    (1, 5, 7, 0, 1, [5, 1], 7),                    # push 2: Wr wraps in its 3 bits
    (0, 3, 5, 0, 0, [4, 5], 3),                    # pop 1
    (0, 3, 5, 1, 3, [3, 5], 3),                    # NoIncr: only the test and the read
    (1, 0, 4, 1, 0, None, None),                   # full (4 of 4): waits
    (0, 6, 6, 0, 0, None, None),                   # empty: waits
])
def test_atincgetptr(ofs, rd, wr, no_incr, incr_log2, want_words, result):
    t = with_l1("bh")
    t.core.l1.write(0x600, np.array([rd, wr, 0xAAAA, 0xBBBB], dtype=np.uint32))
    t.gpr[1], t.gpr[6] = 0x60, 0x77
    word = ATINCGETPTR(no_incr, incr_log2, 3, ofs, 6, 1)   # IntWidth 3: capacity 4
    if want_words is None:
        with pytest.raises(WaitFor, match="full" if ofs else "empty"):
            execute(t, word)
        assert t.gpr[6] == 0x77
        return
    execute(t, word)
    assert t.core.l1.read_as(0x600, np.uint32, 4).tolist() == [*want_words, 0xAAAA, 0xBBBB]
    assert t.gpr[6] == result


@pytest.mark.parametrize("chip", CHIPS)
def test_atswap_masked_16_bit_granules(chip):
    t = with_l1(chip)
    t.gpr[1] = 0x70
    t.gpr[8:12] = [0x1111_0000, 0x3333_2222, 0x5555_4444, 0x7777_6666]
    old = t.core.l1.read_as(0x700, np.uint16, 8).tolist()
    execute(t, ATSWAP(0b1010_0101, 10, 1))         # DataReg 10: GPRs 8..11
    new = [0x0000, 0x1111, 0x2222, 0x3333, 0x4444, 0x5555, 0x6666, 0x7777]
    assert t.core.l1.read_as(0x700, np.uint16, 8).tolist() == [
        new[i] if 0b1010_0101 >> i & 1 else old[i] for i in range(8)]
    execute(t, ATSWAP(0xFF, 10, 1, single=1))       # GPR10 alone into bytes 8..11, zeros elsewhere
    assert t.core.l1.read_as(0x700, np.uint16, 8).tolist() == [0, 0, 0, 0, 0x4444, 0x5555, 0, 0]


def test_dmanop_changes_nothing():
    t = with_l1()
    t.gpr[:] = list(range(64))
    execute(t, DMANOP)
    assert t.gpr == list(range(64)) and t.core.l1.read_as(0, np.uint32, 4096).tolist() == PATTERN.tolist()


@pytest.mark.parametrize("chip", CHIPS)
def test_scalar_memory_kernel_on_the_machine(chip):
    kernel = [*set_gpr(1, 0x200), *set_gpr(2, 0xCAFE_F00D), STOREIND_L1(1, 6, 2, 2, 1),
              STOREIND_L1(1, 6, 2, 2, 1), LOADIND(0, 6, 0, 8, 1), ATINCGET(31, 2, 2, 1),
              REG2FLOP_ADC(2, 0, 2, 0, 0, 2, 0, 0, 8), DMANOP]
    m = machine(chip, kernel)
    assert m.run(max_steps=200).exit_code == 0
    t = m.agent("t0")
    assert t.core.l1.read_as(0x2000, np.uint32, 4).tolist() == [0xCAFE_F00D] * 3 + [0]   # ATINCGET: 0 + GPR2
    assert t.gpr[8:12] == [0xCAFE_F00D, 0xCAFE_F00D, 0, 0] and t.gpr[3] == 8
    assert t.gpr[2] == 0 and adcs(t.core).get(0, 2, 0, "X") == 0xCAFE
