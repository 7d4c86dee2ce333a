"""The wait gate (WaitGate.md, STALLWAIT.md, SEMWAIT.md): which instructions a latched
wait blocks, when the wait is over, and the deadlock report naming each thread's condition."""

from __future__ import annotations

import json
import re

import pytest
from tensix_sync_support import (
    SFPNOP,
    SRCA_MATRIX,
    SRCA_UNPACK,
    atgetm,
    seminit,
    sempost,
    semwait,
    setdmareg,
    stallwait,
    threads,
    zeroacc,
)
from tensix_table_support import decoder, shared, tessera

from tessera.errors import Deadlock, UnhandledTrap
from tessera_tensix import waitgate
from tessera_tensix.config import TensixConfig
from tessera_tensix.core import TensixCore
from tessera_tensix.isa import tables
from tessera_tensix.srcab import MATRIX, UNPACKERS
from tessera_tensix.syncunit import SyncUnit
from tessera_tensix.waitgate import Latch, block_bits, catches, describe, met

CHIPS = ["bh", "wh"]
PAGE_DIR = {"bh": "BlackholeA0", "wh": "WormholeB0"}
#: the page's names that the encoding tables spell differently
TABLE_NAMES = {"RMWCIB": ["RMWCIB0", "RMWCIB1", "RMWCIB2", "RMWCIB3"], "SFPSTOCHRND": ["SFP_STOCH_RND"]}
_ROW = re.compile(r'<tr><th align="left"><code>(\w+)</code></th>(.*?)</tr>')


def _page_table(chip: str) -> dict[str, int | str]:
    """STALLWAIT.md's "exact set of instructions blocked" table: name -> block bits, or
    ``"never"`` (MOP, REPLAY …) / ``"all"`` (NOP's special case)."""
    text = shared("reference", "tt-isa-documentation", PAGE_DIR[chip], "TensixTile",
                  "TensixCoprocessor", "STALLWAIT.md").read_text(encoding="utf-8")
    out: dict[str, int | str] = {}
    for name, cells in _ROW.findall(text):
        if "colspan" in cells:
            out[name] = "all" if "Special case" in cells else "never"
            continue
        marks = re.findall(r"<td[^>]*>(.*?)</td>", cells)
        assert len(marks) == 9, name
        out[name] = sum(1 << i for i, m in enumerate(marks) if m)
    return out


def _ins(chip: str, name: str):
    return decoder(chip).decode(tables(chip).encoding(name).match, 0)


@pytest.mark.parametrize("chip", CHIPS)
def test_block_bits_follow_the_vendor_table(chip):
    page = _page_table(chip)
    assert len(page) > 100
    rows = tables(chip).rows
    for name, bits in page.items():
        for table_name in TABLE_NAMES.get(name, [name]):
            assert table_name in rows, table_name
            ins = _ins(chip, table_name)
            if bits == "never":
                assert not catches(Latch(
                    "STALLWAIT", chip, waitgate.ALL_BLOCK, 1), ins), name
            elif bits == "all":
                assert catches(Latch("STALLWAIT", chip, waitgate.ALL_BLOCK, 1), ins)
                assert not any(catches(Latch("STALLWAIT", chip, waitgate.ALL_BLOCK & ~(1 << b), 1), ins)
                               for b in range(9)), name
            else:
                assert block_bits(table_name, chip) == bits, name
                for b in range(9):                   # each single bit catches per the table
                    assert catches(Latch("STALLWAIT", chip, 1 << b, 1), ins) == bool(bits >> b & 1)
    for name, info in rows.items():                  # the rest: by unit, never nothing
        if info.resource not in ("NONE",) and name not in ("MOP", "MOP_CFG"):
            assert block_bits(name, chip), name


def test_semwait_is_caught_by_every_bit_on_blackhole_only_by_b1_on_wormhole():
    assert block_bits("SEMWAIT", "bh") == 0x1FF
    assert block_bits("SEMWAIT", "wh") == 0b10
    assert block_bits("STALLWAIT", "wh") == block_bits("STALLWAIT", "bh") == 0x1FF


def test_end_word_is_never_caught():
    end = decoder("bh").decode(0, 0)
    assert not catches(Latch("STALLWAIT", "bh", 0x1FF, 1), end)


@pytest.mark.parametrize(("chip", "default"), [("wh", 0x7F), ("bh", 0x0F)])
def test_latch_defaults(chip, default):
    stall = Latch.stallwait(chip, 0, 0)
    assert (stall.opcode, stall.block, stall.conditions, stall.semaphores) == ("STALLWAIT", 1 << 6, default, 0)
    sem = Latch.semwait(chip, 0, 0b110, 2)
    assert (sem.opcode, sem.block, sem.conditions, sem.semaphores) == ("SEMWAIT", 1 << 6, 2, 0b110)
    plain = Latch.semwait(chip, 1 << 8, 0b110, 0)               # no condition: a STALLWAIT
    assert plain == Latch("STALLWAIT", chip, 1 << 8, default)
    assert sem.text() == "SEMWAIT block B6 on MATH_PACK (sem 1), UNPACK_TO_DEST (sem 2): C1"
    assert Latch.stallwait(chip, 0b1001, SRCA_MATRIX[chip]).text() == (
        f"STALLWAIT block B0,B3 conditions C{SRCA_MATRIX[chip].bit_length() - 1}")


class _Thread:
    def __init__(self, chip: str) -> None:
        self.core = TensixCore(TensixConfig(), chip)


@pytest.mark.parametrize("chip", CHIPS)
def test_semwait_conditions_and_their_text(chip):
    t = _Thread(chip)
    sync = t.core.unit("sync", SyncUnit)
    zero, full = Latch.semwait(chip, 1 << 6, 0b11, 1), Latch.semwait(chip, 1 << 6, 0b11, 2)
    both = Latch.semwait(chip, 1 << 6, 0b10, 3)
    mvmul = _ins(chip, "MVMUL")
    assert not met(t, zero) and not met(t, full) and not met(t, both)
    assert describe(t, zero, mvmul) == "SEMWAIT sem 0 value 0, MATH_PACK (sem 1) value 0 (B6 blocks MVMUL)"
    sync.init(0b01, 1, 2)
    sync.init(0b10, 3, 2)
    assert met(t, zero) and not met(t, full)
    assert describe(t, full, mvmul) == "SEMWAIT MATH_PACK (sem 1) value 3 > max 2 (B6 blocks MVMUL)"
    sync.get(0b10)
    assert describe(t, full, mvmul) == "SEMWAIT MATH_PACK (sem 1) value 2 = max (B6 blocks MVMUL)"
    sync.get(0b10)
    assert met(t, zero) and met(t, full) and met(t, both)       # sem 0: 1 of 2, sem 1: 1 of 2
    sync.get(0b10)
    assert met(t, full) and not met(t, zero) and not met(t, both)
    assert met(t, Latch.semwait(chip, 1 << 6, 0, 3))            # no semaphore selected


@pytest.mark.parametrize("chip", CHIPS)
def test_stallwait_src_conditions_follow_bank_ownership(chip):
    t = _Thread(chip)
    srca = t.core.srca
    on_matrix = Latch.stallwait(chip, 1 << 6, SRCA_MATRIX[chip])
    on_unpack = Latch.stallwait(chip, 1 << 3, SRCA_UNPACK[chip])
    bit = SRCA_MATRIX[chip].bit_length() - 1
    assert met(t, on_unpack) and not met(t, on_matrix)          # reset: both banks are the unpackers'
    assert describe(t, on_matrix, _ins(chip, "ELWADD")) == (
        f"STALLWAIT C{bit}: SrcA bank 0 is owned by the unpackers (B6 blocks ELWADD)")
    srca.give(0, MATRIX)
    assert met(t, on_matrix) and not met(t, on_unpack)
    srca.matrix_bank = 1                                        # the matrix unit moved on
    assert not met(t, on_matrix)
    srca.unpacker_bank = 1
    assert met(t, on_unpack)
    srcb_matrix = Latch.stallwait(chip, 1 << 6, SRCA_MATRIX[chip] << 1)
    assert not met(t, srcb_matrix)
    t.core.srcb.give(0, MATRIX)
    assert met(t, srcb_matrix)
    assert t.core.srcb.allowed == [MATRIX, UNPACKERS]
    # the pipeline-busy conditions are always satisfied: units finish at issue
    pipelines = {"wh": 0x7FFF & ~0xF00, "bh": 0x1FFF & ~0x1E0}[chip]
    assert met(t, Latch.stallwait(chip, 0x1FF, pipelines))


# ---------------------------------------------------------------------- in a machine
@pytest.mark.parametrize("chip", CHIPS)
def test_stallwait_blocks_only_what_its_mask_catches(chip):
    """STALLWAIT B6 on "SrcA is the matrix unit's": the scalar and vector instructions
    after it pass, the matrix-unit instruction waits; handing the bank over lets it go."""
    m = threads(chip, [[stallwait(1 << 6, SRCA_MATRIX[chip]), setdmareg(0x1234, 0), SFPNOP,
                        zeroacc(chip), setdmareg(0x5678, 1)]])
    with pytest.raises(Deadlock) as info:
        m.run(max_steps=100)
    bit = SRCA_MATRIX[chip].bit_length() - 1
    assert info.value.waits == {
        "t0": f"T0 STALLWAIT C{bit}: SrcA bank 0 is owned by the unpackers (B6 blocks ZEROACC) (at pc 0xc)"}
    t0 = m.agent("t0")
    assert t0.gpr[0] == 0x1234 and t0.pc == 0xC
    assert t0.frontend.state()["latched"] == f"STALLWAIT block B6 conditions C{bit}"
    t0.core.srca.give(0, MATRIX)                               # wakes the parked thread
    assert m.run(max_steps=100).exit_code == 0
    assert t0.gpr[0] == 0x5678_1234 and t0.frontend.latched is None


@pytest.mark.parametrize("chip", CHIPS)
def test_a_met_stallwait_is_forgotten(chip):
    m = threads(chip, [[stallwait(0x1FF, SRCA_UNPACK[chip]), zeroacc(chip), stallwait(0, 0),
                        zeroacc(chip), setdmareg(7, 0)]])
    assert m.run(max_steps=100).exit_code == 0
    assert m.agent("t0").gpr[0] == 7 and m.agent("t0").frontend.latched is None


@pytest.mark.parametrize("chip", CHIPS)
def test_semwait_blocks_its_unit_until_another_thread_posts(chip):
    """T1 waits (block B6, the default) for MATH_PACK; its scalar instruction passes at
    once, its ZEROACC waits for T0's SEMPOST, which comes after T0's own work."""
    t0 = [seminit(2, 0, 0b10)] + [setdmareg(i, 0) for i in range(16)] + [sempost(0b10)]
    t1 = [SFPNOP, semwait(0, 0b10, 1), setdmareg(0xAA, 0), zeroacc(chip), setdmareg(0xBB, 1)]
    m = threads(chip, [t0, t1])
    seen = []
    m.run(max_steps=10, raise_on_budget=False)
    t1_ = m.agent("t1")
    seen.append((t1_.pc - 0x1000, t1_.gpr[0], m.agent("t0").core.units["sync"].value[1]))
    assert m.run(max_steps=200).exit_code == 0
    assert seen == [(0xC, 0xAA, 0)]                            # parked at ZEROACC, before the post
    assert t1_.gpr[0] == 0xBB_00AA and t1_.frontend.latched is None


@pytest.mark.parametrize("chip", CHIPS)
def test_a_semwait_that_held_an_instruction_counts_a_release(chip):
    """For a timing model: T1's ZEROACC was held until T0's SEMPOST, so T1 counts one
    release; a SEMWAIT already met when the next instruction comes, which the mask does
    not catch, counts none."""
    t0 = [seminit(2, 0, 0b10)] + [setdmareg(i, 0) for i in range(16)] + [sempost(0b10)]
    t1 = [SFPNOP, semwait(0, 0b10, 1), setdmareg(0xAA, 0), zeroacc(chip), setdmareg(0xBB, 1)]
    m = threads(chip, [t0, t1])
    assert m.run(max_steps=200).exit_code == 0
    assert m.agent("t1").sem_releases == 1
    met = threads(chip, [[seminit(2, 1, 0b10), semwait(0, 0b10, 1), setdmareg(0xAA, 0)]])
    assert met.run(max_steps=50).exit_code == 0
    assert met.agent("t0").sem_releases == 0


@pytest.mark.parametrize("chip", CHIPS)
def test_what_a_timing_model_reads_of_the_gate(chip):
    """``instruction_bits``: the bits that catch a decoded instruction (NOP: all nine);
    ``latch_of``: what a decoded STALLWAIT or SEMWAIT latches, as its semantics do."""
    d = decoder(chip)
    assert waitgate.instruction_bits(d.decode(zeroacc(chip), 0), chip) == 1 << 6
    assert waitgate.instruction_bits(d.decode(setdmareg(1, 0), 0), chip) == block_bits("SETDMAREG", chip)
    assert waitgate.instruction_bits(d.decode(SFPNOP, 0), chip) == 1 << 8
    assert waitgate.instruction_bits(d.decode(0x0200_0000, 0), chip) == 0x1FF        # NOP
    stall = waitgate.latch_of(d.decode(stallwait(0b1001, SRCA_MATRIX[chip]), 0), chip)
    assert stall == Latch.stallwait(chip, 0b1001, SRCA_MATRIX[chip])
    assert waitgate.latch_of(d.decode(semwait(1 << 8, 0b10, 2), 0), chip) == Latch.semwait(chip, 1 << 8, 0b10, 2)
    assert waitgate.latch_of(d.decode(zeroacc(chip), 0), chip) is None


@pytest.mark.parametrize("chip", CHIPS)
def test_semwait_max_condition(chip):
    """C1: wait while Value >= Max — T1's SEMINIT (blocked by B1) waits for T0 to take
    one away; without the SEMWAIT it runs first and T0's SEMGET comes after it."""
    t0 = [seminit(2, 2, 1)] + [setdmareg(i, 0) for i in range(5)] + ["ttsemget 1"]
    for wait, final in ((True, 9), (False, 8)):
        t1 = [SFPNOP, SFPNOP] + ([semwait(1 << 8 | 1 << 1, 1, 2)] if wait else []) + [SFPNOP, seminit(15, 9, 1)]
        m = threads(chip, [t0, t1])
        assert m.run(max_steps=200).exit_code == 0
        assert m.agent("t0").core.units["sync"].value[0] == final


def test_a_new_semwait_replaces_the_latch_on_wormhole_but_waits_on_blackhole():
    """SEMWAIT.md: on Wormhole B0 SEMWAIT is caught only by B1, so behind a STALLWAIT
    without B1 it executes and replaces the latched wait; Blackhole's table has every
    block bit catch SEMWAIT."""
    for chip, ends in (("wh", True), ("bh", False)):
        m = threads(chip, [[seminit(2, 1, 1), stallwait(1 << 6, SRCA_MATRIX[chip]),
                            semwait(1 << 8, 1, 2), zeroacc(chip), setdmareg(1, 0)]])
        if ends:                                                # sem 0: 1 < 2, met at once
            assert m.run(max_steps=100).exit_code == 0
            assert m.agent("t0").gpr[0] == 1
            continue
        with pytest.raises(Deadlock, match=r"STALLWAIT C7: .* \(B6 blocks SEMWAIT\)"):
            m.run(max_steps=100)


def test_wormhole_semwait_behind_stallwait_b1_waits():
    m = threads("wh", [[stallwait(0b10, SRCA_MATRIX["wh"]), semwait(1 << 8, 1, 1), SFPNOP]])
    with pytest.raises(Deadlock, match=r"STALLWAIT C10: .* \(B1 blocks SEMWAIT\)"):
        m.run(max_steps=100)


@pytest.mark.parametrize("chip", CHIPS)
def test_every_thread_waiting_is_a_deadlock_naming_each_condition(chip):
    t0 = [atgetm(2), semwait(1 << 6, 0b10, 1), zeroacc(chip)]
    t1 = [stallwait(1 << 8, SRCA_MATRIX[chip]), SFPNOP]
    t2 = [setdmareg(1, 0), setdmareg(2, 0), atgetm(2)]
    m = threads(chip, [t0, t1, t2])
    with pytest.raises(Deadlock) as info:
        m.run(max_steps=100)
    bit = SRCA_MATRIX[chip].bit_length() - 1
    assert info.value.waits == {
        "t0": "T0 SEMWAIT MATH_PACK (sem 1) value 0 (B6 blocks ZEROACC) (at pc 0x8)",
        "t1": f"T1 STALLWAIT C{bit}: SrcA bank 0 is owned by the unpackers (B8 blocks SFPNOP) (at pc 0x1004)",
        "t2": "T2 ATGETM waits: mutex 2 is held by T0",
    }
    assert "every agent is waiting: t0 waits for T0 SEMWAIT MATH_PACK" in str(info.value)


def test_a_latched_wait_survives_a_snapshot():
    from tessera.machine import Machine

    m = threads("bh", [[semwait(1 << 8, 1, 1), SFPNOP]])
    with pytest.raises(Deadlock):
        m.run(max_steps=10)
    back = Machine.restore(m.snapshot())
    t0 = back.agent("t0")
    assert t0.frontend.latched == Latch("SEMWAIT", "bh", 1 << 8, 1, 1)
    t0.core.unit("sync", SyncUnit).post(1)
    assert back.run(max_steps=10).exit_code == 0


def test_streamwait_is_not_supported():
    m = threads("bh", [["ttstreamwait 64,5,0,0"]])
    with pytest.raises(UnhandledTrap, match="STREAMWAIT waits on NoC overlay stream registers"):
        m.run(max_steps=10)


def test_cli_deadlock_exit_status_names_every_thread(tmp_path):
    kernel = tmp_path / "stuck.s"
    kernel.write_text("ttseminit 2,0,2\nttsemwait 256,2,1\nsfpnop\nend\n")
    out = tessera("run", "--arch", "tensix", str(kernel), "--set", "threads=3")
    assert out.returncode == 71, out.stderr
    line = out.stderr.strip()
    assert line.startswith("tessera: deadlock: every agent is waiting:")
    for t in ("t0", "t1", "t2"):
        assert f"{t} waits for {t.upper()} SEMWAIT MATH_PACK (sem 1) value 0 (B8 blocks SFPNOP) (at pc 0x8)" in line
    kernel.write_text("ttseminit 2,0,2\nttsemwait 256,2,1\nttsempost 2\nsfpnop\nend\n")
    for arch in ("tensix", "tensix-wh"):                     # SEMPOST is not B8: it passes
        out = tessera("run", "--arch", arch, str(kernel), "--dump-state", "json")
        assert out.returncode == 0, out.stderr
        state = json.loads(out.stdout)["agents"]["t0"]
        assert state["core"]["units"]["sync"]["semaphores"][1] == {"value": 1, "max": 2}
        assert state["frontend"]["latched"] is None


def test_the_documented_deadlock_report(tmp_path):
    """docs/tensix.md's stuck.s (thread sections) gives exactly the report printed there."""
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "tensix.md").read_text(encoding="utf-8")
    part = doc[doc.index("`stuck.s`:"):]
    source = part.split("```asm\n", 1)[1].split("```", 1)[0]
    shown = part.split("```console\n", 1)[1].split("```", 1)[0].splitlines()
    assert shown[0] == "$ tessera run --arch tensix stuck.s"
    kernel = tmp_path / "stuck.s"
    kernel.write_text(source)
    out = tessera("run", "--arch", "tensix", str(kernel))
    assert out.returncode == 71
    assert out.stderr.strip() == shown[1]
