"""The MOP expander: both templates by hand from MOPExpander.md, and MOPs in kernels."""

from __future__ import annotations

import pytest
from tensix_ctl_support import SFPIADD
from tensix_dest_support import sfpload, sfpstore
from tensix_expander_support import (
    MOP,
    MOP_CFG,
    NOP,
    SEMPOST,
    SEMWAIT,
    SFPNOP,
    addg,
    inc,
    lane0,
    run,
    template0_cfg,
    template1_cfg,
)
from tensix_table_support import machine

from tessera.errors import Deadlock, UnhandledTrap
from tessera.machine import Machine
from tessera_tensix.mop import MOP_CFG_BASE, MopExpander, expand, expander_of, is_nop, slots

CHIPS = ["bh", "wh"]

# distinct stand-in words: the pure function only moves them around
A0, A1, A2, A3, B, SA, SB = (0x7000_0000 + i for i in range(7))
S, E0, E1, L, L1, Z0, Z1 = (0x7100_0000 + i for i in range(7))


def t0(flags: int) -> list[int]:
    return [0, flags, B, A0, A1, A2, A3, SA, SB]


def t1(outer: int, inner: int, start=NOP, end0=NOP, end1=NOP, loop=L, loop1=NOP, last0=Z0, last1=Z1):
    return [outer, inner, start, end0, end1, loop, loop1, last0, last1]


# ------------------------------------------------------------------ template 0
def test_template0_plain_zmask_selects_a_or_skip_per_iteration():
    # Count1 = 3: four iterations, mask bits 0 and 2 set -> skip there
    assert expand(0, 3, 0b0101, t0(0)) == [SA, A0, SA, A0]


def test_template0_with_b_and_a123():
    assert expand(0, 1, 0b10, t0(3)) == [A0, A1, A2, A3, B, SA, SB]
    assert expand(0, 0, 0, t0(1)) == [A0, B]          # HasB only
    assert expand(0, 0, 1, t0(1)) == [SA, SB]
    assert expand(0, 0, 0, t0(2)) == [A0, A1, A2, A3]  # HasA123 only
    assert expand(0, 0, 1, t0(2)) == [SA]              # no SkipB without HasB


def test_template0_flags_use_two_bits_and_mask_ends_at_bit_31():
    assert expand(0, 0, 0, t0(0xFFFF_FFFC)) == [A0]
    # 34 iterations: bits 16 and 31 skip; iterations 32, 33 read mask bits past 31 as 0
    got = expand(0, 33, (1 << 31) | (1 << 16), t0(0))
    assert len(got) == 34
    assert [i for i, w in enumerate(got) if w == SA] == [16, 31]
    assert expand(0, 127, 0, t0(3)) == [A0, A1, A2, A3, B] * 128   # the largest template 0


def test_template0_mask_hi_comes_from_mop_cfg():
    e = MopExpander()
    assert e.mask(0x1234) == 0x1234
    e.mask_hi = 0xBEEF
    assert e.mask(0x1234) == 0xBEEF_1234


# ------------------------------------------------------------------ template 1
def test_template1_loops_with_start_end_and_last_substitutions():
    got = expand(1, 0, 0, t1(2, 3, start=S, end0=E0, end1=E1))
    assert got == [S, L, L, Z1, E0, E1,      # not the last outer iteration: Loop1Last
                   S, L, L, Z0, E0, E1]      # the last one: Loop0Last


def test_template1_alternates_loop_op_and_loop_op1():
    got = expand(1, 0, 0, t1(2, 2, loop1=L1))
    assert got == [L, L1, L, Z1, L, L1, L, Z0]           # inner count doubled
    assert expand(1, 0, 0, t1(1, 1, loop1=L1)) == [L, Z0]


def test_template1_counts_are_seven_bits_and_nops_are_left_out():
    assert expand(1, 0, 0, t1(0x81, 0x82)) == [L, Z0]    # 1 outer x 2 inner
    assert expand(1, 0, 0, t1(0, 5, start=S, end0=E0)) == []
    assert expand(1, 0, 0, t1(3, 0, start=S, end0=E0, end1=E1)) == [S, E0, E1] * 3
    assert expand(1, 0, 0, t1(2, 1, end1=E1)) == [Z1, Z0]  # EndOp1 needs EndOp0
    # only plain NOP (opcode 0x02, whatever its low bits) counts as "no instruction"
    assert is_nop(NOP | 0x123) and not is_nop(SFPNOP)
    assert expand(1, 0, 0, t1(1, 1, start=SFPNOP, end0=NOP | 5)) == [SFPNOP, Z0]


def test_template1_hardware_bug_runs_129_outer_iterations():
    assert expand(1, 0, 0, t1(1, 0, end0=E0)) == [E0] * 129
    assert expand(1, 0, 0, t1(1, 0, end0=E0, end1=E1)) == [E0, E1] * 129
    # not when any of its conditions fails
    assert expand(1, 0, 0, t1(2, 0, end0=E0)) == [E0] * 2
    assert expand(1, 0, 0, t1(1, 0, start=S, end0=E0)) == [S, E0]
    assert expand(1, 0, 0, t1(1, 1, end0=E0)) == [Z0, E0]
    assert expand(1, 0, 0, t1(1, 0)) == []


def test_template1_largest_expansion_is_32639_words():
    got = expand(1, 0, 0, t1(127, 127, start=S, end0=E0, end1=E1, loop1=L1))
    assert len(got) == 32639
    assert got[:4] == [S, L, L1, L] and got[254:258] == [Z1, E0, E1, S]
    assert got[-3:] == [Z0, E0, E1]


def test_template1_ignores_mop_fields_and_slots_name_entries():
    cfg = t1(1, 2, start=S)
    assert expand(1, 0x7F, 0xFFFF, cfg) == expand(1, 0, 0, cfg) == [S, L, Z0]
    assert slots(1, 0, 0, cfg) == (2, 5, 7)


# ------------------------------------------------------------------ configuration
def test_mop_cfg_registers_as_a_riscv_core_writes_them():
    e = MopExpander()
    assert e.store(0x20, 0x1_2345_6789) and e.cfg[8] == 0x2345_6789
    assert not e.store(0x24, 1) and not e.store(2, 1)       # past the nine words / unaligned
    with pytest.raises(IndexError):
        e.write(9, 0)
    e.program([1, 2, 3])
    assert e.cfg[:4] == [1, 2, 3, 0]
    assert e.state() == {"mop_cfg": ["0x00000001", "0x00000002", "0x00000003"] + ["0x00000000"] * 5
                         + ["0x23456789"], "mask_hi": "0x0000"}
    assert MOP_CFG_BASE == 0xFFB8_0000


# ------------------------------------------------------------------ in kernels
@pytest.mark.parametrize("chip", CHIPS)
def test_template1_mop_runs_its_expansion(chip):
    cfg = template1_cfg(2, 3, start=inc(2, 1), loop=inc(1, 1))
    m = run([MOP(1, 0, 0), inc(1, 100), MOP(1, 0, 0)], chip, mop_cfg=cfg)
    assert lane0(m, 1) == 2 * 6 + 100 and lane0(m, 2) == 4
    assert not m.agent("t0").frontend.pending


@pytest.mark.parametrize("chip", CHIPS)
def test_template0_mop_with_mop_cfg_mask(chip):
    # 20 iterations; MaskLo bits 0,1 and MaskHi bits 0..3 (iterations 16..19) skip
    cfg = template0_cfg(a0=inc(1, 1), skip_a0=inc(2, 1), b=inc(3, 1), skip_b=inc(3, 2), has_b=True)
    m = run([MOP_CFG(0x000F), MOP(0, 19, 0x0003)], chip, mop_cfg=cfg)
    assert (lane0(m, 1), lane0(m, 2), lane0(m, 3)) == (14, 6, 14 + 2 * 6)
    assert expander_of(m.agent("t0")).mask_hi == 0xF   # MaskHi stays for later MOPs


@pytest.mark.parametrize("chip", CHIPS)
def test_last_iteration_words_reach_dest(chip):
    # each outer iteration: L1 += 1, then store it; the last one stores to Dest row 4
    cfg = template1_cfg(4, 1, start=inc(1, 1), loop=NOP,
                        last1=sfpstore(1, 4, 0, 0, chip=chip), last0=sfpstore(1, 4, 0, 4, chip=chip))
    m = run([MOP(1, 0, 0), sfpload(3, 4, 0, 0, chip=chip), sfpload(4, 4, 0, 4, chip=chip)], chip,
            mop_cfg=cfg)
    assert (lane0(m, 1), lane0(m, 3), lane0(m, 4)) == (4, 3, 4)


def _waiting_kernel(chip: str) -> tuple[Machine, list[int]]:
    """T0's MOP posts sem 1, counts in GPR1, then waits (SEMWAIT: sem 0 non-zero, blocking
    the vector unit) before copying L1 to L2; T1 waits for sem 1, sets L1 and posts sem 0."""
    sfpu_block = 1 << 8
    cfg = template0_cfg(a0=SEMPOST(0b10), a1=addg(1, 1), a2=SEMWAIT(sfpu_block, 0b01, 1),
                        a3=SFPIADD(0, 1, 2, 5), has_a123=True)  # L2 = L1 + 0
    t1 = [SEMWAIT(sfpu_block, 0b10, 1), inc(1, 77), SEMPOST(0b01), 0]
    m = machine([MOP(0, 0, 0), addg(2, 1), 0] + [0] * 13 + t1, chip, threads=2)
    expander_of(m.agent("t0")).program(cfg)
    m.agent("t1").pc = 0x40
    return m, cfg


@pytest.mark.parametrize("chip", CHIPS)
def test_a_waiting_expanded_instruction_resumes_the_mop(chip):
    m, _ = _waiting_kernel(chip)
    assert m.run(max_steps=10_000).exit_code == 0
    t0 = m.agent("t0")
    assert t0.gpr[1] == 1          # the MOP was expanded once, though it ran again after the wait
    assert t0.gpr[2] == 1
    assert lane0(m, 2) == 77       # the copy waited for T1's write
    assert not t0.frontend.pending


def test_a_mop_stuck_in_a_wait_names_its_origin():
    m, _ = _waiting_kernel("bh")
    m.agent("t1").pc = 0x3C        # T1 ends at once: nobody posts sem 0
    with pytest.raises(Deadlock, match=r"T0 SEMWAIT sem 0 value 0 .*\(at sfpiadd from MOP at 0x0\)"):
        m.run(max_steps=10_000)
    state = m.agent("t0").frontend.state()
    assert state["pending"] == ["sfpiadd 0x79000125 from MOP at 0x0"]


def test_snapshot_in_the_middle_of_a_mop():
    m, _ = _waiting_kernel("wh")
    m.run(max_steps=2, raise_on_budget=False)      # T0 parked inside its MOP, T1 not done
    assert len(m.agent("t0").frontend.pending) == 1
    back = Machine.restore(m.snapshot())
    t0 = back.agent("t0")
    assert t0.frontend.state()["pending"] == ["(undecoded) 0x79000125 from MOP at 0x0"]
    assert back.run(max_steps=10_000).exit_code == 0
    assert t0.gpr[1] == 1 and t0.gpr[2] == 1 and lane0(back, 2) == 77
    assert len(m.agent("t0").frontend.pending) == 1  # the original is independent


# ------------------------------------------------------------------ rules
def test_an_unprogrammed_entry_stops_the_run_naming_it():
    cfg = template0_cfg(a0=inc(1, 1), skip_a0=0)
    with pytest.raises(UnhandledTrap, match=r"MopCfg\[7\] \(SkipA0\) holds 0x00000000.*programmed"):
        run([MOP(0, 1, 0b10)], mop_cfg=cfg)
    run([MOP(0, 1, 0b00)], mop_cfg=cfg)          # SkipA0 unused: fine
    m = run([MOP(0, 1, 0b10)], mop_cfg=cfg, lenient=True)
    assert lane0(m, 1) == 1                      # the 0 word is dropped


def test_mop_words_in_an_expansion_are_refused():
    cfg = template1_cfg(1, 1, start=MOP_CFG(1), loop=inc(1, 1))
    with pytest.raises(UnhandledTrap, match=r"MopCfg\[2\] \(StartOp\) holds 0x03000001, a MOP_CFG"):
        run([MOP(1, 0, 0)], "wh", mop_cfg=cfg)
    m = run([MOP(1, 0, 0)], "wh", mop_cfg=cfg, lenient=True)
    assert lane0(m, 1) == 1 and expander_of(m.agent("t0")).mask_hi == 0
    cfg = template1_cfg(1, 2, loop=MOP(1, 0, 0), last0=inc(1, 1))
    with pytest.raises(UnhandledTrap, match=r"MopCfg\[5\] \(LoopOp\) holds 0x01800000, a MOP,"):
        run([MOP(1, 0, 0)], mop_cfg=cfg)


def test_blackhole_template1_with_count_fields_stops():
    cfg = template1_cfg(1, 2, loop=inc(1, 1))
    with pytest.raises(UnhandledTrap, match="Blackhole takes loop counts"):
        run([MOP(1, 3, 0)], "bh", mop_cfg=cfg)
    assert lane0(run([MOP(1, 3, 7)], "bh", mop_cfg=cfg, lenient=True), 1) == 2
    assert lane0(run([MOP(1, 3, 7)], "wh", mop_cfg=cfg), 1) == 2        # Wormhole ignores them
