"""The mover and XMOV (WormholeB0 …/Mover.md, TensixCoprocessor/XMOV.md, TDMA-RISC.md,
STALLWAIT.md), on Wormhole B0 and Blackhole, through the real decoder, engine and board.

Expectations are computed by hand from the pages: XMOV reads ``THCON_SEC0_REG6_*`` of the
thread's configuration bank, shifts addresses and the low 16 bits of ``Buffer_size`` left
by 4, and copies or zeroes aligned 16-byte units.  Instruction words come from an encoder
written from the pages (XMOV is opcode 0x40 with both operands 0, ``TT_XMOV(0, 0)``).
"""

from __future__ import annotations

import json
import os
import pickle
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from tensix_unit_support import ATCAS, CHIPS, DMANOP, L1_BYTES, LOADIND, WRCFG, Thread, machine, set_gpr

from tessera.control import Trap
from tessera.errors import UnhandledTrap
from tessera_tensix import cfgregs
from tessera_tensix.mover import (
    COMMAND_ADDR,
    STATUS,
    TENSIX_CFG_BASE,
    XMOV_DIRECTION,
    XMOV_DST_ADDR,
    XMOV_L1_BASE_ADDR,
    XMOV_SIZE,
    XMOV_SRC_ADDR,
    mover,
)

XMOV = 0x40 << 24
REG6 = "THCON_SEC0_REG6_"
MEMSET_L1, TO_CFG, MEMSET_CFG, COPY_L1 = 0, 1, 2, 3         # Transfer_direction
#: STALLWAIT: opcode 0xA2, block mask [23:15], condition mask [14:0]; the mover's condition
MOVER_CONDITION = {"wh": 12, "bh": 9}
#: the size of one Config bank in bytes (CFG_STATE_SIZE * 4 words of 4 bytes)
BANK_BYTES = {"wh": 188 * 4, "bh": 224 * 4}
PATTERN = (np.arange(0x10_0000, dtype=np.uint32) * 2654435761 >> 7).astype(np.uint8)  # 1 MiB of varied bytes


def STALLWAIT(block: int, conditions: int) -> int:
    return 0xA2 << 24 | block << 15 | conditions


def xmov_config(dst: int, src: int, units: int, direction: int) -> dict[str, int]:
    """``--set`` presets for one XMOV (addresses and size in 16-byte units)."""
    return {f"cfg.{REG6}Destination_address": dst, f"cfg.{REG6}Source_address": src,
            f"cfg.{REG6}Buffer_size": units, f"cfg.{REG6}Transfer_direction": direction}


def run_xmov(chip: str, dst: int, src: int, units: int, direction: int, *, lenient: bool = False,
             words: list[int] | None = None):
    """A machine whose L1 holds PATTERN at 0, run over ``words`` (one XMOV by default)."""
    m = machine(chip, words or [XMOV], lenient=lenient, **xmov_config(dst, src, units, direction))
    core = m.agent("t0").core
    core.l1.write(0, PATTERN)
    return m, core


def l1(core, offset: int, n: int) -> np.ndarray:
    return core.l1.read(offset, n)


# ------------------------------------------------------------------ L1 to L1
@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("src, dst, units", [
    (0x100, 0x2_0000, 1),          # one 16-byte unit
    (0x30, 0x3_0000, 0x1000),      # 64 KiB
    (0x0, 0x8_0000, 0x8000),       # 512 KiB (the largest XMOV, 0xFFFF0 bytes, fits twice in no L1)
])
def test_xmov_copies_l1_to_l1(chip, src, dst, units):
    m, core = run_xmov(chip, dst >> 4, src >> 4, units, COPY_L1)
    n = units * 16
    before = l1(core, 0, L1_BYTES[chip])
    assert m.run(max_steps=10).exit_code == 0
    after = l1(core, 0, L1_BYTES[chip])
    want = before.copy()
    want[dst:dst + n] = before[src:src + n]
    assert np.array_equal(after, want)
    assert mover(core).transfers == 1 and mover(core).last["bytes"] == n


@pytest.mark.parametrize("chip", CHIPS)
def test_xmov_to_the_last_unit_of_l1(chip):
    end = L1_BYTES[chip]
    m, core = run_xmov(chip, (end - 16) >> 4, 0x1, 1, COPY_L1)             # source 0x10
    assert m.run(max_steps=10).exit_code == 0
    assert np.array_equal(l1(core, end - 16, 16), PATTERN[0x10:0x20])


@pytest.mark.parametrize("chip", CHIPS)
def test_xmov_size_is_the_low_16_bits_and_addresses_wrap_at_32_bits(chip):
    # Buffer_size 0x1_0002 -> 2 units; Destination 0x1000_0040 << 4 = 0x1_0000_0400 -> 0x400 (mod 2**32)
    m, core = run_xmov(chip, 0x1000_0040, 0x2, 0x1_0002, COPY_L1)
    assert m.run(max_steps=10).exit_code == 0
    assert np.array_equal(l1(core, 0x400, 48), np.concatenate([PATTERN[0x20:0x40], PATTERN[0x420:0x430]]))


@pytest.mark.parametrize("chip", CHIPS)
def test_xmov_of_zero_units_changes_nothing(chip):
    m, core = run_xmov(chip, 0x100, 0x10, 0, COPY_L1)
    assert m.run(max_steps=10).exit_code == 0
    assert np.array_equal(l1(core, 0, PATTERN.size), PATTERN)
    assert mover(core).transfers == 1


@pytest.mark.parametrize("chip", CHIPS)
def test_xmov_memset_zeroes_l1(chip):
    m, core = run_xmov(chip, 0x123, 0x7777, 5, MEMSET_L1)     # the source is not read
    assert m.run(max_steps=10).exit_code == 0
    want = PATTERN.copy()
    want[0x1230:0x1280] = 0
    assert np.array_equal(l1(core, 0, PATTERN.size), want)


@pytest.mark.parametrize("chip", CHIPS)
def test_the_largest_xmov_memset(chip):
    m, core = run_xmov(chip, 0x1, 0, 0xFFFF, MEMSET_L1)        # 0xFFFF0 bytes from 0x10
    core.l1.write(0x10_0000, PATTERN[:0x100])
    assert m.run(max_steps=10).exit_code == 0
    assert not l1(core, 0x10, 0xFFFF0).any()
    assert np.array_equal(l1(core, 0, 16), PATTERN[:16])
    assert np.array_equal(l1(core, 0x10_0000, 0x100), PATTERN[:0x100])


@pytest.mark.parametrize("chip", CHIPS)
def test_xmov_reads_the_configuration_bank_of_the_threads_state_id(chip):
    m, core = run_xmov(chip, 0x200, 0x10, 1, COPY_L1)         # bank 0 would copy 0x100 -> 0x2000
    m.agent("t0").tcfg.set(cfgregs.STATE_ID, 1)
    bank1 = cfgregs.banks(core).bank1
    for name, value in {"Destination_address": 0x300, "Source_address": 0x20, "Buffer_size": 2,
                        "Transfer_direction": COPY_L1}.items():
        bank1.set(REG6 + name, value)
    assert m.run(max_steps=10).exit_code == 0
    assert np.array_equal(l1(core, 0x3000, 32), PATTERN[0x200:0x220])
    assert np.array_equal(l1(core, 0x2000, 16), PATTERN[0x2000:0x2010])   # bank 0's transfer did not happen


@pytest.mark.parametrize("chip", CHIPS)
def test_successive_xmovs_with_wrcfg_between(chip):
    rmap = cfgregs.register_map(chip)
    src_index = rmap.cfg_index[REG6 + "Source_address"]
    words = [XMOV, *set_gpr(4, 0x40), WRCFG(4, 0, src_index), 0x0200_0000,  # NOP: WRCFG.md
             XMOV]                                                            # second XMOV: source 0x400
    m, core = run_xmov(chip, 0x800, 0x10, 1, COPY_L1, words=words)
    assert m.run(max_steps=20).exit_code == 0
    assert np.array_equal(l1(core, 0x8000, 16), PATTERN[0x400:0x410])
    assert mover(core).transfers == 2


# ------------------------------------------------------------------ undefined behaviour
@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("dst, src, units, direction, rule", [
    ("end", 0x10, 1, COPY_L1, "XMOV_L1_TO_L1: destination {end:#x} is beyond L1 ({kib} KiB; undefined behaviour)"),
    ("end", 0, 1, MEMSET_L1, "XMOV_L0_TO_L1: destination {end:#x} is beyond L1 ({kib} KiB; undefined behaviour)"),
    (0x100, "end", 1, COPY_L1, "XMOV_L1_TO_L1: source {end:#x} is beyond L1 ({kib} KiB; undefined behaviour)"),
    ("last", 0x10, 2, COPY_L1, "XMOV_L1_TO_L1: 0x20 bytes at {last:#x} run past the end of L1 ({end:#x})"),
    (0x100, "last", 2, COPY_L1, "XMOV_L1_TO_L1: 0x20 bytes at {last:#x} run past the end of L1 ({end:#x})"),
    (0xFFF, 0x10, 2, TO_CFG, "XMOV_L1_TO_L0: 0x20 bytes at 0xfff0 cross the end of its 64 KiB region "
                             "(undefined behaviour)"),
    (0x2000, "end", 1, TO_CFG, "XMOV_L1_TO_L0: source {end:#x} is beyond L1 ({kib} KiB; undefined behaviour)"),
])
def test_xmov_undefined_behaviour_stops_with_one_line_or_does_nothing(chip, dst, src, units, direction, rule):
    end = L1_BYTES[chip]
    at = {"end": end >> 4, "last": (end - 16) >> 4}
    dst, src = at.get(dst, dst), at.get(src, src)
    text = rule.format(end=end, last=end - 16, kib=end // 1024)
    m, core = run_xmov(chip, dst, src, units, direction)
    with pytest.raises(UnhandledTrap) as err:
        m.run(max_steps=10)
    assert str(err.value).count("\n") == 0
    assert f"ttxmov: {text}" in str(err.value)
    m, core = run_xmov(chip, dst, src, units, direction, lenient=True)
    assert m.run(max_steps=10).exit_code == 0
    assert np.array_equal(l1(core, 0, PATTERN.size), PATTERN) and mover(core).transfers == 0


@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("src, dst", [(0x100, 0x110), (0x110, 0x100), (0x100, 0x100)])
def test_overlapping_copy_breaks_a_rule_and_leniently_reads_the_source_first(chip, src, dst):
    m, core = run_xmov(chip, dst >> 4, src >> 4, 3, COPY_L1)
    with pytest.raises(UnhandledTrap, match=f"ttxmov: XMOV_L1_TO_L1: the source {src:#x}..{src + 48:#x} and "
                                            f"destination {dst:#x}..{dst + 48:#x} overlap"):
        m.run(max_steps=10)
    m, core = run_xmov(chip, dst >> 4, src >> 4, 3, COPY_L1, lenient=True)
    assert m.run(max_steps=10).exit_code == 0
    want = PATTERN.copy()
    want[dst:dst + 48] = PATTERN[src:src + 48]
    assert np.array_equal(l1(core, 0, 0x1000), want[:0x1000])


@pytest.mark.parametrize("chip", CHIPS)
def test_adjacent_ranges_do_not_overlap(chip):
    m, core = run_xmov(chip, 0x13, 0x10, 3, COPY_L1)          # 0x100..0x130 -> 0x130..0x160
    assert m.run(max_steps=10).exit_code == 0
    assert np.array_equal(l1(core, 0x130, 48), PATTERN[0x100:0x130])


# ------------------------------------------------------------------ backend configuration, IRAM, nowhere
def _cfg_words(core, bank: int, first: int, n: int) -> list[int]:
    return [cfgregs.read_cfg(core, bank, first + i) for i in range(n)]


@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("bank", [0, 1])
def test_xmov_copies_l1_into_a_config_bank(chip, bank):
    first = 8                                                  # Config[bank][8..15], below the global registers
    offset = bank * BANK_BYTES[chip] + 4 * first
    m, core = run_xmov(chip, offset >> 4, 0x20, 2, TO_CFG)
    assert m.run(max_steps=10).exit_code == 0
    want = [int(v) for v in PATTERN[0x200:0x220].view("<u4")]
    assert _cfg_words(core, bank, first, 8) == want
    assert _cfg_words(core, 1 - bank, first, 8) == [0] * 8   # the other bank is untouched


@pytest.mark.parametrize("chip", CHIPS)
def test_xmov_into_the_reg6_fields_is_seen_by_name(chip):
    rmap = cfgregs.register_map(chip)
    index = rmap.cfg_index[REG6 + "Source_address"]           # Source, Destination, Size|Direction: 3 words
    assert index % 4 == 0
    m, core = run_xmov(chip, index * 4 >> 4, 0x30, 1, TO_CFG)
    core.l1.write(0x300, np.array([0x11, 0x22, 0xC000_0005, 0x33], dtype="<u4"))
    assert m.run(max_steps=10).exit_code == 0
    cfg = core.cfg
    assert (cfg.get(REG6 + "Source_address"), cfg.get(REG6 + "Destination_address")) == (0x11, 0x22)
    assert (cfg.get(REG6 + "Buffer_size"), cfg.get(REG6 + "Transfer_direction")) == (5, 3)


@pytest.mark.parametrize("chip", CHIPS)
def test_xmov_memset_of_config_zeroes_it(chip):
    m, core = run_xmov(chip, 0x4, 0, 2, MEMSET_CFG)            # Config[0][16..23]
    for i in range(16, 26):
        cfgregs.write_cfg(core, 0, i, 0x1111 * i)
    assert m.run(max_steps=10).exit_code == 0
    assert _cfg_words(core, 0, 14, 12) == [0] * 10 + [0x1111 * 24, 0x1111 * 25]


@pytest.mark.parametrize("chip", CHIPS)
def test_xmov_into_state_reset_en_resets_the_bank(chip):
    rmap = cfgregs.register_map(chip)
    assert rmap.cfg_index["STATE_RESET_EN"] == 4
    glob = next(name for name, i in rmap.cfg_index.items() if i == rmap.global_base)  # a global register
    m, core = run_xmov(chip, 0, 0x20, 2, TO_CFG)                # Config[0][0..7] <- L1 0x200..0x220
    core.cfg.set(glob, 1)
    assert m.run(max_steps=10).exit_code == 0
    # word 4 resets every banked register (the REG6 presets too); words 5..7 are written after it
    assert _cfg_words(core, 0, 0, 4) == [0] * 4
    assert _cfg_words(core, 0, 5, 3) == [int(v) for v in PATTERN[0x214:0x220].view("<u4")]
    assert core.cfg.get(REG6 + "Source_address") == 0 and core.cfg.get(glob) == 1


def test_blackhole_config_dual_write_writes_both_banks():
    m, core = run_xmov("bh", 2 * BANK_BYTES["bh"] + 4 * 8 >> 4, 0x20, 1, TO_CFG)
    assert m.run(max_steps=10).exit_code == 0
    want = [int(v) for v in PATTERN[0x200:0x210].view("<u4")]
    assert _cfg_words(core, 0, 8, 4) == want and _cfg_words(core, 1, 8, 4) == want


@pytest.mark.parametrize("chip, first", [("wh", 2 * 188 * 4), ("bh", 3 * 224 * 4)])
def test_xmov_into_thread_config_stops_naming_the_address(chip, first):
    start = first - 16                                         # the last unit of the modelled banks, then one more
    m, core = run_xmov(chip, start >> 4, 0x20, 2, TO_CFG)
    before = json.dumps([core.cfg.state(), cfgregs.banks(core).state()])
    with pytest.raises(UnhandledTrap, match=f"ttxmov: the mover's write to {TENSIX_CFG_BASE + first:#010x} "
                                            r"\(ThreadConfig or beyond"):
        m.run(max_steps=10)
    assert json.dumps([core.cfg.state(), cfgregs.banks(core).state()]) == before  # nothing written
    assert mover(core).transfers == 0


def test_wormhole_iram_is_not_modelled_in_direct_mode_and_takes_an_attached_ram():
    m, core = run_xmov("wh", 0x4010, 0x20, 2, TO_CFG)          # 0x40100: IRAM offset 0x100
    with pytest.raises(UnhandledTrap, match=r"ttxmov: the RISCV NC instruction RAM \(0xffc00100\) is not "
                                            "modelled in direct mode"):
        m.run(max_steps=10)
    m, core = run_xmov("wh", 0x4010, 0x20, 2, TO_CFG)
    ram = np.full(16 * 1024, 0xEE, dtype=np.uint8)
    mover(core).attach_iram(ram)
    assert m.run(max_steps=10).exit_code == 0
    want = np.full(16 * 1024, 0xEE, dtype=np.uint8)
    want[0x100:0x120] = PATTERN[0x200:0x220]
    assert np.array_equal(ram, want)


def test_wormhole_iram_beyond_the_attached_ram_stops():
    m, core = run_xmov("wh", 0x4400 - 1, 0x20, 2, MEMSET_CFG)  # IRAM offset 0x3ff0..0x4010
    mover(core).attach_iram(np.zeros(16 * 1024, dtype=np.uint8))
    with pytest.raises(UnhandledTrap, match="ttxmov: 0xffc04000 is beyond the 16 KiB RISCV NC instruction RAM"):
        m.run(max_steps=10)


def test_blackhole_has_no_iram():
    m, core = run_xmov("bh", 0x4010, 0x20, 2, TO_CFG)
    with pytest.raises(UnhandledTrap, match="ttxmov: XMOV_L1_TO_L0: destination 0x40100 is the RISCV NC "
                                            "instruction RAM, which Blackhole does not have"):
        m.run(max_steps=10)
    m, core = run_xmov("bh", 0x4010, 0x20, 2, TO_CFG, lenient=True)
    assert m.run(max_steps=10).exit_code == 0
    assert mover(core).last["target"] == "nowhere" and np.array_equal(l1(core, 0, PATTERN.size), PATTERN)


@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("dst", [0x1000, 0x3000, 0x0FFF_FFFF])   # 0x10000, 0x30000, 0xFFFFFFF0: nowhere
def test_other_to_l0_destinations_discard_the_writes(chip, dst):
    m, core = run_xmov(chip, dst, 0x20, 4, TO_CFG)
    cfg_before = core.cfg.state()
    assert m.run(max_steps=10).exit_code == 0
    assert np.array_equal(l1(core, 0, PATTERN.size), PATTERN) and core.cfg.state() == cfg_before
    assert mover(core).last == {"direction": "XMOV_L1_TO_L0", "dst": f"{dst << 4:#x}", "src": "0x200",
                                "bytes": 64, "target": "nowhere"}


# ------------------------------------------------------------------ waiting and other threads
@pytest.mark.parametrize("chip", CHIPS)
def test_stallwait_on_the_mover_condition_is_met_at_once(chip):
    cond = 1 << MOVER_CONDITION[chip]
    words = [XMOV, STALLWAIT(1 << 4 | 1 << 0, cond), *set_gpr(1, 0x200), LOADIND(1, 0, 0, 8, 1), XMOV]
    m, core = run_xmov(chip, 0x200, 0x10, 1, COPY_L1, words=words)
    assert m.run(max_steps=50).exit_code == 0
    assert m.agent("t0").gpr[8] == int(PATTERN[0x100:0x104].view("<u4")[0])   # LOADIND after the wait sees the copy
    assert mover(core).transfers == 2 and not mover(core).busy


@pytest.mark.parametrize("chip", CHIPS)
def test_a_thread_waiting_on_l1_is_woken_by_the_movers_write(chip):
    t0 = [DMANOP, DMANOP, DMANOP, DMANOP, XMOV]
    t1 = [*set_gpr(1, 0x100), ATCAS(9, 3, 0, 1), *set_gpr(2, 0xD0E)]   # waits until L1[0x1000] == 3
    m = machine(chip, t0, t1, **xmov_config(0x100, 0x20, 1, COPY_L1))
    core = m.agent("t0").core
    core.l1.write(0x200, np.array([3, 4, 5, 6], dtype="<u4"))
    assert m.run(max_steps=200).exit_code == 0
    assert core.l1.word(0x1000) == 9 and m.agent("t1").gpr[2] == 0xD0E
    assert [core.l1.word(0x1004 + 4 * i) for i in range(3)] == [4, 5, 6]


# ------------------------------------------------------------------ TDMA-RISC (issue 17's MMIO)
def _tdma_core(chip: str = "wh", *, lenient: bool = False):
    t = Thread(chip, lenient=lenient)
    t.core.l1.write(0, PATTERN)
    return t.core


@pytest.mark.parametrize("chip", CHIPS)
def test_tdma_mover_command_with_parameters(chip):
    core = _tdma_core(chip)
    mv = mover(core)
    for address, value in ((XMOV_SRC_ADDR, 0x40), (XMOV_DST_ADDR, 0x900), (XMOV_SIZE, 0xABCD_0003),
                           (XMOV_DIRECTION, 0xFFFF_FFF7)):            # size: low 16 bits; direction: low 2 bits
        assert mv.tdma_write(core, address, value, "B")
    assert [mv.tdma_read(core, a, "B") for a in (XMOV_SRC_ADDR, XMOV_DST_ADDR, XMOV_SIZE, XMOV_DIRECTION)] == [0] * 4
    assert mv.tdma_write(core, COMMAND_ADDR, 0x40, "B")
    assert np.array_equal(l1(core, 0x9000, 48), PATTERN[0x400:0x430])
    assert mv.tdma_read(core, STATUS, "T1") == 0x428            # idle, queues empty, capacity 4
    assert mv.tdma_read(core, COMMAND_ADDR, "B") == 0


def test_tdma_compact_command_uses_the_enqueuing_cores_base():
    core = _tdma_core()
    mv = mover(core)
    mv.tdma_write(core, XMOV_L1_BASE_ADDR, 0x100, "T0")
    mv.tdma_write(core, XMOV_L1_BASE_ADDR, 0x200, "T2")
    assert [mv.tdma_read(core, XMOV_L1_BASE_ADDR, c) for c in ("B", "T0", "T1", "T2", "NC")] == [0, 0x100, 0, 0x200,
                                                                                                 0x100]
    # compact: bit 31, L1-to-L1 bit 30, count 2 [29:24], dst 0x80 [23:16], src offset 0x3 [15:8]
    cmd = 1 << 31 | 1 << 30 | 2 << 24 | 0x80 << 16 | 0x3 << 8 | 0x40
    mv.tdma_write(core, COMMAND_ADDR, cmd, "T2")                 # src (0x200 + 3) << 4 = 0x2030
    assert np.array_equal(l1(core, 0x800, 32), PATTERN[0x2030:0x2050])
    mv.tdma_write(core, COMMAND_ADDR, cmd, "NC")                 # NC uses T0's base: (0x100 + 3) << 4
    assert np.array_equal(l1(core, 0x800, 32), PATTERN[0x1030:0x1050])


def test_tdma_compact_command_without_bit_30_copies_to_config():
    core = _tdma_core()
    mv = mover(core)
    cmd = 1 << 31 | 1 << 24 | 0x02 << 16 | 0x10 << 8 | 0x40     # 16 bytes from 0x100 to Config[0][8..11]
    mv.tdma_write(core, COMMAND_ADDR, cmd, "B")
    assert _cfg_words(core, 0, 8, 4) == [int(v) for v in PATTERN[0x100:0x110].view("<u4")]


@pytest.mark.parametrize("wide, dst, want", [(0, 0x500, b"\x44\x33\x22\x11"),
                                             (1, 0x508, b"\x44\x33\x22\x11\x88\x77\x66\x55")])
def test_tdma_l1_write_command(wide, dst, want):
    core = _tdma_core()
    mv = mover(core)
    for address, value in ((XMOV_SRC_ADDR, dst), (XMOV_SIZE, 0x1122_3344), (XMOV_DIRECTION, 0x5566_7788)):
        mv.tdma_write(core, address, value, "B")
    mv.tdma_write(core, COMMAND_ADDR, 0x600 | wide << 8 | 0x66, "B")
    assert l1(core, dst, len(want)).tobytes() == want
    assert np.array_equal(l1(core, dst + len(want), 16), PATTERN[dst + len(want):dst + len(want) + 16])


@pytest.mark.parametrize("cmd, params, rule", [
    (0x12, (0, 0, 0, 0), "opcode 0x12 is not a TDMA-RISC command"),
    (0x80000666, (0x500, 0, 1, 0), "the L1 write command has no compact form"),
    (0x266, (0x500, 0, 1, 0), "the L1 write command needs bits 10:9 set"),
    (0x666, (0x502, 0, 0x1234_5678, 0), "L1 write destination 0x502 is not 4-byte aligned"),
    (0x666, (L1_BYTES["wh"], 0, 1, 0), f"L1 write destination {L1_BYTES['wh']:#x} is beyond L1 (1464 KiB"),
    (0x40, (0, L1_BYTES["wh"] >> 4, 1, 3), f"XMOV_L1_TO_L1: destination {L1_BYTES['wh']:#x} is beyond L1"),
])
def test_tdma_undefined_commands_stop_naming_the_command(cmd, params, rule):
    core = _tdma_core()
    mv = mover(core)
    mv.cmd_params = list(params)
    with pytest.raises(Trap, match=re.escape(f"TDMA-RISC command {cmd:#010x} from RISCV T1: {rule}")):
        mv.tdma_write(core, COMMAND_ADDR, cmd, "T1")
    lenient = _tdma_core(lenient=True)
    mover(lenient).cmd_params = list(params)
    mover(lenient).tdma_write(lenient, COMMAND_ADDR, cmd, "T1")
    changed = np.flatnonzero(l1(lenient, 0, PATTERN.size) != PATTERN)
    if cmd == 0x666 and params[0] == 0x502:                      # leniently rounded down to 0x500
        assert l1(lenient, 0x500, 4).tobytes() == (0x1234_5678).to_bytes(4, "little")
    else:
        assert changed.size == 0


def test_tdma_nop_wait_and_foreign_registers():
    core = _tdma_core()
    mv = mover(core)
    assert mv.tdma_write(core, COMMAND_ADDR, 0x8000_0089, "B") and mv.tdma_write(core, COMMAND_ADDR, 0x46, "B")
    assert mv.tdma_write(core, STATUS, 0xFFFF, "B")             # no effect
    assert mv.tdma_read(core, STATUS, "B") == 0x428
    assert not mv.tdma_write(core, 0xFFB1_1038, 1, "B") and mv.tdma_read(core, 0xFFB1_1018, "B") is None
    assert np.array_equal(l1(core, 0, PATTERN.size), PATTERN) and mv.commands == 2


# ------------------------------------------------------------------ the Python API, state
def test_transfer_api_refuses_unaligned_requests():
    core = _tdma_core()
    with pytest.raises(ValueError, match="aligned 16-byte units"):
        mover(core).transfer(core, 0x108, 0, 16, 3, who="test", broken=lambda text: True)


def test_mover_state_is_json_and_survives_pickling():
    m, core = run_xmov("wh", 0x200, 0x10, 1, COPY_L1)
    assert m.run(max_steps=10).exit_code == 0
    state = json.loads(json.dumps(core.state()["units"]["mover"]))
    assert state["transfers"] == 1 and state["busy"] is False
    assert state["last"] == {"direction": "XMOV_L1_TO_L1", "dst": "0x2000", "src": "0x100", "bytes": 16, "target": "l1"}
    copy = pickle.loads(pickle.dumps(mover(core)))
    assert copy.state() == mover(core).state()


# ------------------------------------------------------------------ the command line
def test_xmov_from_the_command_line(tmp_path):
    kernel = tmp_path / "k.s"
    kernel.write_text("ttxmov 0,0\nend\n")
    data = np.arange(64, dtype=np.uint32)
    np.save(tmp_path / "in.npy", data)
    script = Path(sys.executable).parent / "tessera"
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "tessera.cli.main"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("TESSERA_")}
    env["TESSERA_PLUGINS"] = "tensix"
    res = subprocess.run(cmd + ["run", "--arch", "tensix-wh", str(kernel), "--l1", f"0x1000={tmp_path / 'in.npy'}",
                                "--l1-out", f"0x8000:64:uint32={tmp_path / 'out.npy'}",
                                "--set", f"cfg.{REG6}Source_address=0x100", "--set",
                                f"cfg.{REG6}Destination_address=0x800", "--set", f"cfg.{REG6}Buffer_size=16",
                                "--set", f"cfg.{REG6}Transfer_direction=3"],
                         capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 0, res.stderr
    assert np.array_equal(np.load(tmp_path / "out.npy"), data)
