"""SFPLOADMACRO (WormholeB0/.../SFPLOADMACRO.md, BlackholeA0 counterpart; tensix-sfpu.md §17.2)
against expectations computed by hand from the page's functional model, on both chips.

Every test runs a real machine (decoder, engine, threads).  The data comes from LReg[15]
(lane L holds 2L): ``x = 2L - 16`` as FP32, or ``2L`` as INT32, stored to Dest address 0
(rows 0..3, even columns, lane L = row L >> 3, column 2(L & 7)).  Sequence bytes are
written out as ``b7 b6 delay[5:3] sel[2:0]``; byte k belongs to sub-unit k (0 Simple,
1 MAD, 2 Round, 3 Store).  "Cycle n" is the n-th instruction the thread issues after the
SFPLOADMACRO (the module's clock); an instruction with delay d runs in cycle d + 1, just
before the instruction issued in that cycle.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest
from tensix_ctl_support import SETDMAREG, SFPIADD, SFPSHFT, SFPSWAP, SFPXOR
from tensix_dest_support import sfpload, sfpstore
from tensix_mad_support import (
    SFP_STOCH_RND,
    SFPADDI,
    SFPCAST,
    SFPCONFIG,
    SFPLOADI,
    SFPMAD,
    SFPMOV,
    SFPNOP,
)

from tessera.errors import UnhandledTrap
from tessera.machine import Machine
from tessera_tensix.arch import TENSIX_BH, TENSIX_WH

CHIPS = ["bh", "wh"]
ARCHS = {"bh": TENSIX_BH, "wh": TENSIX_WH}
LANE = range(32)
M32 = 0xFFFF_FFFF
FP32, INT32, BF16 = 3, 4, 2                         # SFPLOAD/SFPSTORE Mod0


# ---------------------------------------------------------------- encoding and machines
def SFPLOADMACRO(macro: int, vd: int, mod0: int, addr_mod: int, imm10: int, chip: str) -> int:
    """MacroIndex[23:22] VDLo[21:20] Mod0[19:16] AddrMod Imm9[9:1] VDHi[0] (VD = VDHi·4 + VDLo;
    the address's bit 0 is VDHi, which SFPLOAD ignores)."""
    am = (addr_mod & 7) << 13 if chip == "bh" else (addr_mod & 3) << 14
    return (0x93 << 24) | (macro << 22) | ((vd & 3) << 20) | (mod0 << 16) | am | (imm10 & 0x3FE) | (vd >> 2)


def lreg0(value: int) -> list[int]:
    """LReg[0] = value in every lane (SFPLOADI LOWER, then UPPER)."""
    return [SFPLOADI(0, 10, value & 0xFFFF), SFPLOADI(0, 8, value >> 16)]


def template(i: int, word: int) -> list[int]:
    return lreg0(word) + [SFPCONFIG(0, i, 0)]         # InstructionTemplate[i] = LReg[0]


def sequence(macro: int, simple: int = 0, mad: int = 0, rnd: int = 0, store: int = 0) -> list[int]:
    return lreg0(simple | mad << 8 | rnd << 16 | store << 24) + [SFPCONFIG(0, 4 + macro, 0)]


def misc(value: int) -> list[int]:
    return [SFPCONFIG(value, 8, 1)]                   # Misc = Imm16 (IMM16_IS_VALUE)


def byte(sel: int, delay: int = 0, b6: int = 0, b7: int = 0) -> int:
    return b7 << 7 | b6 << 6 | delay << 3 | sel


def x_float(chip: str) -> list[int]:
    """Dest[0] = x = 2L - 16 (FP32)."""
    return [SFPCAST(15, 1, 0),                        # L1 = float(2L)
            SFPADDI(0xC180, 1, 0),                    # L1 += -16.0 (BF16 0xC180)
            SFPNOP(),                                 # (Wormhole: SFPADDI's result a cycle later)
            sfpstore(1, FP32, 0, 0, chip=chip)]


def x_int(chip: str) -> list[int]:
    return [SFPMOV(15, 1, 0),                         # L1 = 2L (LReg[15] is no store source
            sfpstore(1, INT32, 0, 0, chip=chip)]      # while the backdoor is open); Dest[0] = L1


def machine(chip: str, words: list[int], **config) -> Machine:
    m = Machine(ARCHS[chip], config=config)
    m.space.write_bytes(0, b"".join(w.to_bytes(4, "little") for w in words + [0]))
    return m


def run(chip: str, words: list[int], **config):
    m = machine(chip, words, **config)
    assert m.run(max_steps=10_000).exit_code == 0
    return m.agent("t0")


def f(t, i: int) -> list[float]:
    return [float(v) for v in t.core.sfpu.lreg[i].view(np.float32)]


def u(t, i: int) -> list[int]:
    return [int(v) for v in t.core.sfpu.lreg[i]]


def bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


X = [2.0 * L - 16 for L in LANE]
XI = [2 * L for L in LANE]


# ---------------------------------------------------------------- the load and the sub-units
@pytest.mark.parametrize("chip", CHIPS)
def test_mad_into_lreg16_then_store_two_cycles_later(chip):
    # template 0 = SFPMAD VA=2 VB=0 VC=4 VD=12.  MAD byte b7 b6 delay 0 sel 4: VB := loaded VD
    # (5), VC stays 4, VD := 16, so LReg[16] = L2·L5 + L4 = 3x + 0.5 on cycle 1.  Store byte
    # b6 delay 2 sel 3: SFPSTORE of LReg[16] with Misc.StoreMod0 = 3 (FP32) to the macro's
    # address 0 on cycle 3.  The SFPLOADs on cycles 2 and 3 see Dest before / after it.
    t = run(chip, x_float(chip) + [
        SFPLOADI(2, 0, 0x4040), SFPLOADI(4, 0, 0x3F00),          # L2 = 3.0, L4 = 0.5
        *template(0, SFPMAD(2, 0, 4, 12, 0)),
        *sequence(0, mad=byte(4, 0, b6=1, b7=1), store=byte(3, 2, b6=1)), *misc(FP32),
        SFPLOADMACRO(0, 5, FP32, 0, 0, chip),                    # cycle 0: L5 = x
        SFPNOP(),                                                # cycle 1: (MAD runs first)
        sfpload(7, FP32, 0, 0, chip=chip),                       # cycle 2: L7 = x
        sfpload(6, FP32, 0, 0, chip=chip)])                      # cycle 3: (store first) L6
    y = [3 * x + 0.5 for x in X]
    assert f(t, 5) == X
    assert f(t, 16) == y
    assert f(t, 7) == X
    assert f(t, 6) == y
    assert t.core.units["loadmacro"].pending == []


@pytest.mark.parametrize("chip", CHIPS)
def test_delay_counts_cycles_or_sfpu_instructions(chip):
    # template 0 = SFPIADD Imm12=100 VC=0 VD=12 Mod1 ARG_IMM|CC_NONE; Simple byte delay 2 sel 4:
    # VC := loaded VD (3), VD := 3, so L3 = L3 + 100.  Cycles: it runs on cycle 3, before the
    # store to B.  Instructions (Misc.UnitDelayKind bit 8): the counter moves only on SFPU
    # instructions — store A (2 -> 1), store B (1 -> 0) — so it runs on the cycle after B.
    body = [SFPLOADMACRO(0, 3, INT32, 0, 0, chip),               # cycle 0
            sfpstore(3, INT32, 0, 4, chip=chip),                 # 1: A
            SETDMAREG(0, 0x1234, 2),                             # 2
            sfpstore(3, INT32, 0, 8, chip=chip),                 # 3: B
            SETDMAREG(0, 0x5678, 3),                             # 4
            sfpstore(3, INT32, 0, 12, chip=chip),                # 5: C
            sfpload(4, INT32, 0, 4, chip=chip), sfpload(5, INT32, 0, 8, chip=chip),
            sfpload(6, INT32, 0, 12, chip=chip)]
    setup = x_int(chip) + template(0, SFPIADD(100, 0, 12, 1 | 4)) + sequence(0, simple=byte(4, 2))
    t = run(chip, setup + misc(0) + body)
    assert (u(t, 4), u(t, 5), u(t, 6)) == (XI, [x + 100 for x in XI], [x + 100 for x in XI])
    t = run(chip, setup + misc(1 << 8) + body)
    assert (u(t, 4), u(t, 5), u(t, 6)) == (XI, XI, [x + 100 for x in XI])
    assert t.gpr[1] == 0x5678_1234                         # the scalar fillers ran


@pytest.mark.parametrize("chip", CHIPS)
def test_a_later_macro_forgets_the_slot_it_takes(chip):
    # macro 0: Simple delay 2 (L3 += 100 on cycle 3); macro 1 on cycle 1: Simple delay d,
    # template 1 = SFPIADD +1000.  When macro 1 schedules, macro 0's counter is 1: d = 1
    # forgets it (same slot), d = 0 (cycle 2) and d = 7 (cycle 9, reached through END's
    # idle cycles) do not.
    def kernel(d):
        return x_int(chip) + [
            sfpload(3, INT32, 0, 0, chip=chip),
            *template(0, SFPIADD(100, 0, 12, 5)), *template(1, SFPIADD(1000, 0, 13, 5)),
            *sequence(0, simple=byte(4, 2)), *sequence(1, simple=byte(5, d)), *misc(0),
            SFPLOADMACRO(0, 3, INT32, 0, 0, chip),               # L3 = x
            SFPLOADMACRO(1, 2, INT32, 0, 0, chip)]               # L2 = x
    t = run(chip, kernel(1))
    assert u(t, 3) == XI and u(t, 2) == [x + 1000 for x in XI]
    for d in (0, 7):
        t = run(chip, kernel(d))
        assert u(t, 3) == [x + 100 for x in XI] and u(t, 2) == [x + 1000 for x in XI], d


@pytest.mark.parametrize("chip", CHIPS)
def test_store_uses_the_macro_address_and_store_mod0(chip):
    # AddrMod 1 adds 4 to the Dest RWC after the load; the Store still writes address 0.
    # template 1 = SFPADDI 0x3EAB (BF16 171/512) VD=13 on MAD, b6: VC := loaded VD (6),
    # LReg[16] = x + 171/512; Store b6 delay 1 sel 3, Misc.StoreMod0 = 2 (BF16): Dest keeps the
    # top 16 bits of that FP32 (no rounding).  Reading back at Imm10 1020 (+ RWC 4 = 0) as BF16.
    t = run(chip, x_float(chip) + [
        SFPADDI(0x3EAB, 13, 0),                                  # backdoor: template 1
        *sequence(2, mad=byte(5, 0, b6=1), store=byte(3, 1, b6=1)), *misc(BF16),
        SFPLOADMACRO(2, 6, FP32, 1, 0, chip),
        SFPNOP(), SFPNOP(),
        sfpload(7, BF16, 0, 1020, chip=chip)], **{"tcfg.ADDR_MOD_DST_SEC1_DestIncr": 4})
    assert t.rwc["dst"] == 4                                     # only the load applied AddrMod
    assert f(t, 6) == X
    assert u(t, 16) == [bits(x + 171 / 512) for x in X]
    assert u(t, 7) == [bits(x + 171 / 512) & 0xFFFF_0000 for x in X]


@pytest.mark.parametrize("chip", CHIPS)
def test_store_b7_keeps_its_template_vd_and_may_read_constants(chip):
    # SFPSTORE VD=14 with the backdoor enabled only loads template 2 (the backdoor).  Store
    # byte b7 sel 6: VD stays 14 — readable, as DISABLE_BACKDOOR_LOAD reads as true — and
    # Mod0 is the macro's (Misc.UsesLoadMod0ForStore bit 4 + 3 for macro 3): FP32.
    t = run(chip, x_float(chip) + [
        sfpstore(14, BF16, 0, 0, chip=chip),                     # template 2 (Dest untouched)
        sfpload(5, FP32, 0, 0, chip=chip),
        *sequence(3, store=byte(6, 0, b7=1)), *misc(1 << 7),
        SFPLOADMACRO(3, 1, FP32, 0, 0, chip),
        sfpload(2, FP32, 0, 0, chip=chip)])
    assert f(t, 5) == X                                          # the backdoor wrote no Dest
    assert u(t, 2) == [0xBEB0_8FF9] * 32                         # LReg[14] (-0.34484843)


@pytest.mark.parametrize("chip", CHIPS)
def test_implicit_vb_of_simple_instructions(chip):
    # template 0 = SFPXOR VC=4 VD=12 (model: VD = VB ^ VC with VB = VD).
    # b7: VB := loaded VD (3), VC stays 4, VD := 3  ->  L3 = x ^ L4.
    # no b7, b6: VC := 3, VB := the template's VD, 12, VD := 16  ->  LReg[16] = L12 ^ x.
    l4 = 0x0F0F_0000
    l12 = 0x3780_0000                                            # reset value of LReg[12]
    base = x_int(chip) + [*lreg0(l4), SFPIADD(0, 0, 4, 1 | 4),   # L4 = L0 + 0
                          *template(0, SFPXOR(4, 12)), *misc(0)]
    t = run(chip, base + [*sequence(0, simple=byte(4, 0, b7=1)), SFPLOADMACRO(0, 3, INT32, 0, 0, chip)])
    assert u(t, 3) == [x ^ l4 for x in XI]
    t = run(chip, base + [*sequence(0, simple=byte(4, 0, b6=1)), SFPLOADMACRO(0, 3, INT32, 0, 0, chip)])
    assert u(t, 3) == XI and u(t, 16) == [x ^ l12 for x in XI]


@pytest.mark.parametrize("chip", CHIPS)
def test_sfpaddi_reads_the_macro_vc(chip):
    # SFPADDI's model has VC = VD.  With b7: VB := loaded VD, VC := the template's VD = 13
    # (its VC is None), VD := loaded VD: L2 = LReg[13] + 0.5 (LReg[13] = -0.67487759, so the
    # sum -0.17487759 is exact).  Without b7: VC := loaded VD: L2 = x + 0.5.
    c13 = struct.unpack("<f", struct.pack("<I", 0xBF2C_C4C7))[0]
    for b7, want in ((1, [float(np.float32(c13) + np.float32(0.5))] * 32), (0, [x + 0.5 for x in X])):
        t = run(chip, x_float(chip) + [
            SFPADDI(0x3F00, 13, 0),                              # backdoor: template 1, +0.5
            *sequence(0, mad=byte(5, 0, b7=b7)), *misc(0),
            SFPLOADMACRO(0, 2, FP32, 0, 0, chip), SFPNOP()])
        assert f(t, 2) == want, b7


@pytest.mark.parametrize("chip", CHIPS)
def test_an_unrunnable_opcode_becomes_sfpnop_but_holds_the_slot(chip):
    # template 0 = SFPMAD, selected for the Simple sub-unit: CanExecuteOpcode fails, so an
    # SFPNOP is scheduled (cycle 1).  A regular Simple instruction issued on cycle 1 then
    # collides with it: a rule; --lenient discards the regular one.
    kernel = x_int(chip) + [*template(0, SFPMAD(10, 10, 0, 12, 0)), *sequence(0, simple=byte(4)),
                            *misc(0), SFPLOADMACRO(0, 3, INT32, 0, 0, chip),
                            SFPIADD(7, 3, 3, 5)]                 # cycle 1: L3 += 7 (Simple)
    with pytest.raises(UnhandledTrap, match="issued to the Simple sub-unit on the cycle an instruction"):
        machine(chip, kernel).run(max_steps=1000)
    t = run(chip, kernel, lenient=True)
    assert u(t, 3) == XI                                         # neither ran: SFPMAD -> NOP
    t = run(chip, kernel[:-1] + [SFPNOP(), SFPIADD(7, 3, 3, 5)])  # one cycle later: runs
    assert u(t, 3) == [x + 7 for x in XI]


# ---------------------------------------------------------------- rules of the sub-unit table
@pytest.mark.parametrize("chip", CHIPS)
def test_simple_and_round_together_need_exactly_one_lreg16(chip):
    # Simple: template 0 = SFPMOV VC=4 VD=12 with b7: VB := loaded VD (3), VC stays 4, VD := 3,
    # so L3 = L4.  Round: template 1 = SFP_STOCH_RND to FP16B precision, round to nearest:
    # VC := 3.  Both delay 0: both run on cycle 1.  Neither writing LReg[16] breaks (†).
    setup = x_float(chip) + [*lreg0(0x3FC0_8000), SFPIADD(0, 0, 4, 5),     # L4 = 0x3FC08000
                             *template(0, 0x7C00_04C0),                     # SFPMOV L4 -> L12
                             *template(1, SFP_STOCH_RND(0, 0, 0, 0, 13, 1)), *misc(0)]
    bad = setup + [*sequence(0, simple=byte(4, b7=1), rnd=byte(5)), SFPLOADMACRO(0, 3, FP32, 0, 0, chip)]
    with pytest.raises(UnhandledTrap, match="exactly one of them must write LReg.16."):
        machine(chip, bad).run(max_steps=1000)
    # Round with b6 writes LReg[16] = FP16B-rounding of L3 as the cycle began, x (integers
    # need no rounding), not of the 0x3FC08000 the Simple sub-unit writes to L3 that cycle
    # (which would round up to 0x3FC10000).
    t = run(chip, setup + [*sequence(0, simple=byte(4, b7=1), rnd=byte(5, b6=1)),
                           SFPLOADMACRO(0, 3, FP32, 0, 0, chip)])
    assert u(t, 3) == [0x3FC0_8000] * 32 and f(t, 16) == X


def _sanitize_setup(chip: str) -> list[int]:
    """tt-llk's Blackhole exp "sanitize" macro: LReg[14] = -88.5, template 0 = SFPSWAP VC=0
    VD=14 Mod1=1 (VD gets the min), Sequence[1] = Simple sel 4 delay 0, Store sel 3 delay 2."""
    return [
        SFPCAST(15, 1, 0), SFPADDI(0xC180, 1, 0),               # L1 = 2L - 16
        SFPLOADI(2, 0, 0x4100), SFPMAD(1, 2, 9, 1, 0),          # L1 = 8(2L - 16) (L9 = +0)
        SFPNOP(),                                               # (Wormhole: the MAD result)
        sfpstore(1, FP32, 0, 0, chip=chip),
        *lreg0(0xC2B1_0000), SFPCONFIG(0, 14, 0),               # LReg[14] = -88.5
        *template(0, SFPSWAP(0, 14, 1)),
        *sequence(1, simple=byte(4), store=byte(3, 2)), *misc(FP32)]


@pytest.mark.parametrize("chip", CHIPS)
def test_tt_llk_exp_sanitize_macro_clamps_at_minus_88_5(chip):
    # The SWAP: VC := loaded VD (0), VB := the template's VD (14) — the value its model calls
    # LReg[VD] — and VD := 0: min goes to VD, max to VC, both LReg[0]; the VC write is last,
    # so L0 = max(y, -88.5).  The Store (cycle 3) writes it back.  SFPNOP after the macro
    # keeps the Simple sub-unit free on the cycle after the swap (‡).
    t = run(chip, _sanitize_setup(chip) + [
        SFPLOADMACRO(1, 0, FP32, 0, 0, chip), SFPNOP(), SFPNOP(), SFPNOP(),
        sfpload(5, FP32, 0, 0, chip=chip)])
    y = [8 * x for x in X]                                       # -128 ... 368
    assert f(t, 5) == [max(v, -88.5) for v in y]
    assert f(t, 5)[:3] == [-88.5] * 3 and f(t, 5)[3] == -80.0


@pytest.mark.parametrize("chip", CHIPS)
def test_a_swap_needs_the_simple_unit_free_on_the_next_cycle(chip):
    # two sanitize macros back to back: the second SWAP runs on cycle 2, the cycle after the
    # first one (‡); with --lenient both run.
    kernel = _sanitize_setup(chip) + [SFPLOADMACRO(1, 0, FP32, 0, 0, chip),
                                      SFPLOADMACRO(1, 1, FP32, 0, 0, chip)]
    with pytest.raises(UnhandledTrap, match="the cycle after an SFPSWAP"):
        machine(chip, kernel).run(max_steps=1000)
    t = run(chip, kernel, lenient=True)
    assert f(t, 0) == f(t, 1) == [max(8 * x, -88.5) for x in X]


@pytest.mark.parametrize("chip", CHIPS)
def test_undefined_selections_break_rules_and_schedule_nothing(chip):
    cases = [
        (sequence(0, simple=byte(1)), "selects 1 for the Simple sub-unit"),
        ([*template(0, SFPMAD(10, 10, 0, 12, 0)), *sequence(0, store=byte(4))],
         "Store sub-unit can only run SFPSTORE, not SFPMAD"),
        ([*lreg0(byte(4)), SFPCONFIG(0x0001, 4, 8)],            # lane mask: column 0 only
         r"LoadMacroConfig.Sequence\[0\] differs between lanes"),
    ]
    for config, message in cases:
        kernel = x_int(chip) + [*template(0, SFPIADD(1, 0, 12, 5)), *config, *misc(0),
                                SFPLOADMACRO(0, 3, INT32, 0, 0, chip), SFPNOP()]
        with pytest.raises(UnhandledTrap, match=message):
            machine(chip, kernel).run(max_steps=1000)
        t = run(chip, kernel, lenient=True)
        # lenient: nothing scheduled (L3 = x), or lane 0's sequence (L3 += 1) in every lane
        assert u(t, 3) == [x + 1 if "lanes" in message else x for x in XI], message


# ---------------------------------------------------------------- clock edges
@pytest.mark.parametrize("chip", CHIPS)
def test_end_runs_out_cycles_but_instruction_counters_stay_pending(chip):
    setup = x_int(chip) + [*template(0, SFPIADD(100, 0, 12, 5)), *sequence(0, simple=byte(4, 5))]
    t = run(chip, setup + misc(0) + [SFPLOADMACRO(0, 3, INT32, 0, 0, chip)])
    assert u(t, 3) == [x + 100 for x in XI]                      # cycle 6: after END
    t = run(chip, setup + misc(1 << 8) + [SFPLOADMACRO(0, 3, INT32, 0, 0, chip), SFPNOP()])
    assert u(t, 3) == XI                                         # 4 more SFPU instructions needed
    state = t.core.state()["units"]["loadmacro"]
    assert state["owner"] == "t0"
    assert state["pending"] == [{"unit": "Simple", "wait": 4, "counts": "instructions",
                                 "instruction": f"SFPIADD {SFPIADD(100, 0, 12, 5):#010x}", "vd": 3,
                                 "overrides": {"lreg_c": 3, "lreg_dest": 3}}]


@pytest.mark.parametrize("chip", CHIPS)
def test_a_snapshot_in_the_middle_of_a_schedule_resumes_it(chip):
    kernel = x_float(chip) + [
        SFPLOADI(2, 0, 0x4040), SFPLOADI(4, 0, 0x3F00),
        *template(0, SFPMAD(2, 0, 4, 12, 0)),
        *sequence(0, mad=byte(4, 1, b6=1, b7=1), store=byte(3, 3, b6=1)), *misc(FP32),
        SFPLOADMACRO(0, 5, FP32, 0, 0, chip), SFPNOP(), SFPNOP(), SFPNOP(), SFPNOP(),
        sfpload(6, FP32, 0, 0, chip=chip)]
    whole = run(chip, kernel)
    m = machine(chip, kernel)
    m.run(max_steps=len(kernel) - 4, raise_on_budget=False)     # stopped after cycle 1
    assert len(m.agent("t0").core.units["loadmacro"].pending) == 2
    back = Machine.restore(m.snapshot())
    assert back.run(max_steps=1000).exit_code == 0
    t = back.agent("t0")
    assert f(t, 6) == f(whole, 6) == [3 * x + 0.5 for x in X]


@pytest.mark.parametrize("chip", CHIPS)
def test_expanded_instructions_clock_the_schedule(chip):
    # instructions issued by the front end (what MOP and REPLAY expand to) pass the clock too
    m = machine(chip, x_float(chip) + [
        SFPLOADI(2, 0, 0x4040), SFPLOADI(4, 0, 0x3F00),
        *template(0, SFPMAD(2, 0, 4, 12, 0)),
        *sequence(0, mad=byte(4, 0, b6=1, b7=1), store=byte(3, 2, b6=1)), *misc(FP32)])
    assert m.run(max_steps=1000).exit_code == 0
    t = m.agent("t0")
    fe = t.frontend
    fe.expand(t, [SFPLOADMACRO(0, 5, FP32, 0, 0, chip), SFPNOP(), sfpload(7, FP32, 0, 0, chip=chip),
                  sfpload(6, FP32, 0, 0, chip=chip)], "test", address=t.pc, recordable=False)
    fe.drain(t)
    assert f(t, 7) == X and f(t, 6) == [3 * x + 0.5 for x in X]


@pytest.mark.parametrize("chip", CHIPS)
def test_macros_from_a_mop_pipeline_and_outlive_it(chip):
    # A template-1 MOP runs SFPLOADMACRO 4 times (AddrMod 1: Dest RWC += 2 after each load,
    # so addresses 0, 2, 4, 6 hold x, x+1, x+2, x+3).  Per macro (cycle i): MAD b7 b6 delay 0
    # -> LReg[16] = 3·Li + 0.5 on cycle i+1; Store b6 delay 1 on cycle i+2 reads LReg[16] as
    # that cycle began (before macro i+1's MAD rewrites it).  The last Store falls after the
    # last macro: the thread leaves the expansion still clocking the schedule.  Reading back
    # at Imm10 1016 + 2k (+ RWC 8 = address 2k).
    from tensix_expander_support import MOP, template1_cfg

    from tessera_tensix.mop import expander_of

    data = [SFPCAST(15, 1, 0), SFPADDI(0xC180, 1, 0)]
    for a in (0, 2, 4, 6):                                      # (SFPNOP: Wormhole's MAD result)
        data += [SFPNOP(), sfpstore(1, FP32, 0, a, chip=chip), SFPADDI(0x3F80, 1, 0)]
    m = machine(chip, data + [
        SFPLOADI(2, 0, 0x4040), SFPLOADI(4, 0, 0x3F00),
        *template(0, SFPMAD(2, 0, 4, 12, 0)),
        *sequence(0, mad=byte(4, 0, b6=1, b7=1), store=byte(3, 1, b6=1)), *misc(FP32),
        MOP(1, 0, 0)] + [sfpload(4 + k, FP32, 0, 1016 + 2 * k, chip=chip) for k in range(4)],
        **{"tcfg.ADDR_MOD_DST_SEC1_DestIncr": 2})
    expander_of(m.agent("t0")).program(template1_cfg(1, 4, loop=SFPLOADMACRO(0, 5, FP32, 1, 0, chip)))
    assert m.run(max_steps=1000).exit_code == 0
    t = m.agent("t0")
    assert t.rwc["dst"] == 8
    for k in range(4):
        assert f(t, 4 + k) == [3 * (x + k) + 0.5 for x in X], k


@pytest.mark.parametrize("chip", CHIPS)
def test_sfpconfig_scheduled_by_a_macro_configures_the_loaded_vd(chip):
    # template 0 = SFPCONFIG Imm16=0x0123 VD=0 Mod1=IMM16_IS_VALUE; its VD := loaded VD = 5:
    # Sequence[1] = 0x0123.  With b6 its VD is 16, which no case of SFPCONFIG names: nothing.
    kernel = x_int(chip) + [*template(0, SFPCONFIG(0x0123, 0, 1)), *misc(0)]
    t = run(chip, kernel + [*sequence(0, simple=byte(4)), SFPLOADMACRO(0, 5, INT32, 0, 0, chip)])
    assert [int(v) for v in t.core.sfpu.sequence[1]] == [0x0123] * 32
    t = run(chip, kernel + [*sequence(0, simple=byte(4, b6=1)), SFPLOADMACRO(0, 5, INT32, 0, 0, chip)])
    assert [int(v) for v in t.core.sfpu.sequence[1]] == [0] * 32


def test_tt_llk_exp_fast_pipeline_equals_its_hand_expansion():
    """tt-llk's Blackhole fast exp: Sequence[0] = Simple 0xDF (b7 b6 delay 3 sel 7), MAD 0x85
    (b7 delay 0 sel 5), Round 0x16 (delay 2 sel 6), Store 0x63 (b6 delay 4 sel 3), templates
    1 SFPMAD(12, 0, 13, 13), 2 SFP_STOCH_RND(0, 0, 0, 0, 14, 14), 3 SFPSHFT(15, 0, 15, 1), all
    backdoor loads; four macros back to back on L0..L3 and Dest addresses 0, 2, 4, 6 (Misc
    StoreMod0 = FP32 here; tt-llk leaves 0, the SRCB format).

    From the page, macro i (cycle i) runs: cycle i+1 MAD Li = L12·Li + L13 (VB := Li, VC stays
    13, VD := Li); i+3 Round Li = round(Li) to uint16 (VC := Li, VD := Li); i+4 Simple LReg[16]
    = Li << 15 (VB := Li, VD := 16); i+5 Store of LReg[16] to macro i's address.  The Store of
    macro i and the Simple of macro i+1 share cycle i+5: the Store reads LReg[16] as it was
    at the cycle's start.  So the result is what one-at-a-time SFPLOAD, SFPMAD, SFP_STOCH_RND,
    SFPSHFT, SFPSTORE on Li give."""
    consts = [*lreg0(0x43B8_AA3B), SFPCONFIG(0, 12, 0), *lreg0(0x46FD_E9A3), SFPCONFIG(0, 13, 0)]
    data = [SFPCAST(15, 1, 0), SFPADDI(0xC180, 1, 0),            # x = 2L - 16, scaled by 1/8
            SFPLOADI(2, 0, 0x3E00), SFPMAD(1, 2, 9, 1, 0)]       # L1 = (2L - 16) / 8
    for a in (0, 2, 4, 6):                                       # Dest[a] = L1 + a/2
        data += [sfpstore(1, FP32, 0, a, chip="bh"), SFPADDI(0x3F80, 1, 0)]
    macro = [SFPMAD(12, 0, 13, 13, 0), SFP_STOCH_RND(0, 0, 0, 0, 14, 14), SFPSHFT(15, 0, 15, 1),
             *sequence(0, simple=0xDF, mad=0x85, rnd=0x16, store=0x63), *misc(FP32)]
    m = run("bh", consts + data + macro + [SFPLOADMACRO(0, i, FP32, 0, 2 * i, "bh") for i in range(4)]
            + [SFPNOP()] * 6 + [sfpload(4 + i, FP32, 0, 2 * i, chip="bh") for i in range(4)])
    hand = []
    for i in range(4):
        hand += [sfpload(i, FP32, 0, 2 * i, chip="bh"), SFPMAD(12, i, 13, i, 0),
                 SFP_STOCH_RND(0, 0, 0, i, i, 14), SFPSHFT(15, 0, i, 1),   # Li <<= 15 (VB = VD)
                 sfpstore(i, FP32, 0, 2 * i, chip="bh")]
    hand += [sfpload(4 + i, FP32, 0, 2 * i, chip="bh") for i in range(4)]
    want = run("bh", consts + data + hand)
    for i in range(4):
        assert u(m, 4 + i) == u(want, 4 + i), i
    assert len({tuple(u(m, 4 + i)) for i in range(4)}) == 4      # four different Dest columns
    assert any(v != 0 for v in u(m, 4))
