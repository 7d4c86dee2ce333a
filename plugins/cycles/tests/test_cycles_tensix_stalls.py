"""The stalls the Tensix backend inserts by itself, in the tensix model.

The vector unit's cases run as direct-mode programs on one thread (architecture
``tensix`` / ``tensix-wh``), where a thread passes one instruction a cycle and the vector
unit takes one a cycle (``sfpu_cycles`` 1): a program of two SFPU instructions and
``end`` takes 3 cycles, one more when the second is stalled.  The matrix unit's moves
and PACR go through :class:`~tessera_cycles.tensix_model.TileTimes` directly, with
expanded (one-cycle) matrix-unit instructions as a MOP issues them.  Each expected time
is the rule of the page its test names.
"""

from __future__ import annotations

import pickle
from types import SimpleNamespace

import pytest

import tessera_cycles
import tessera_cycles.plugin
import tessera_tensix.plugin
from tessera.isa.asm import assemble
from tessera.machine import Machine
from tessera.plugins import PluginHost
from tessera_cycles.auto_stalls import view
from tessera_cycles.tensix_model import TensixParams, TileTimes, Timeline
from tessera_tensix.arch import TENSIX_BH, TENSIX_WH

#: two SFPU instructions and ``end``, neither waiting: the baseline every case adds to
BASE = 3


def host() -> PluginHost:
    h = PluginHost(load_entry_points=False, use_environment=False)
    h.register(tessera_tensix.plugin, "tensix")
    h.register(tessera_cycles.plugin, "cycles")
    return h


def run(source: str, arch=TENSIX_BH, **settings: object) -> dict:
    """Run ``source`` on T0 in direct mode under the model; T0's report."""
    config = {"cycles": "tensix", "lenient": True, **{f"cycles.{k}": v for k, v in settings.items()}}
    m = Machine(arch, host=host(), config=config)
    program = assemble(m.arch, source + "\nend\n", base=0)
    for address, blob in program.segments:
        m.space.write_bytes(address, blob, force=True)
    m.set_entry(0)
    assert m.run(max_steps=100).reason == "halted"
    return tessera_cycles.report(m)["agents"]["t0"]


def cycles(source: str, arch=TENSIX_BH, **settings: object) -> int:
    return run(source, arch, **settings)["cycles"]


MAD = "sfpmad L4,L2,L1,L3,0"        # L4 = L2 * L1 + L3: writes L4


def test_two_independent_instructions_take_a_cycle_each():
    assert cycles("sfpnop\nsfpnop") == BASE
    assert cycles(f"{MAD}\nsfpadd L5,L2,L10,L3,0") == BASE


# ------------------------------------------------------------------ SFPSWAP.md, both chips

@pytest.mark.parametrize("arch", [TENSIX_BH, TENSIX_WH], ids=["bh", "wh"])
def test_after_sfpswap_only_sfpnop_goes_on_the_next_cycle(arch):
    # SFPSWAP then SFPNOP: two cycles; SFPSWAP then anything else: three
    assert cycles("sfpswap L0,L1,0\nsfpnop", arch) == BASE
    rep = run("sfpswap L0,L1,0\nsfpadd L5,L2,L10,L3,0", arch)
    assert rep["cycles"] == BASE + 1 and rep["waits"]["sfpu"] == 1
    # an SFPLOADI reads no LReg the swap wrote: refused all the same
    assert cycles("sfpswap L0,L1,1\nsfploadi L6,16128,0", arch) == BASE + 1


# ------------------------------------------------------------------ SFPSHFT2.md

def test_blackhole_sfpshft2_shuffles_take_only_sfpnop_next():
    for mode in (2, 3, 4):
        assert cycles(f"sfpshft2 L1,L2,0,{mode}\nsfpnop") == BASE
        assert cycles(f"sfpshft2 L1,L2,0,{mode}\nsfpadd L5,L6,L10,L3,0") == BASE + 1
    for mode in (0, 5, 6):                       # the copies and shifts: no restriction
        assert cycles(f"sfpshft2 L1,L2,0,{mode}\nsfpadd L5,L6,L10,L3,0") == BASE


def test_wormhole_leaves_sfpshft2s_next_cycle_to_software():
    # Wormhole's SFPSHFT2.md leaves the next cycle to software: no automatic stall to charge
    assert cycles("sfpshft2 L1,L2,0,3\nsfpadd L5,L6,L10,L3,0", TENSIX_WH) == BASE


# ------------------------------------------------------------------ SFPMAD.md, Blackhole

@pytest.mark.parametrize("reader", ["sfpadd L5,L4,L10,L3,0", "sfpmul L5,L2,L4,L9,0", "sfpstore 0,L4,3,7",
                                    "sfpxor L5,L4", "sfpsetexp L4,L2,0,0", "sfpmov L5,L4,0"])
def test_a_read_of_a_mad_result_on_the_next_cycle_is_stalled_one_cycle(reader):
    rep = run(f"{MAD}\n{reader}")
    assert rep["cycles"] == BASE + 1 and rep["waits"]["sfpu"] == 1


@pytest.mark.parametrize("writer", ["sfpadd L4,L2,L10,L3,0", "sfpmul L4,L2,L1,L9,0", "sfpaddi L4,16128,0",
                                    "sfpmuli L4,16128,0", "sfpmul24 L4,L2,L1,0", "sfplut L4,0",
                                    "sfplutfp32 L4,0"])
def test_the_whole_mad_family_writes_as_sfpmad(writer):
    assert cycles(f"{writer}\nsfpadd L5,L4,L10,L3,0") == BASE + 1
    assert cycles(f"{writer}\nsfpadd L5,L6,L10,L3,0") == BASE


def test_an_sfpnop_between_or_a_mad_on_wormhole_is_not_stalled():
    assert cycles(f"{MAD}\nsfpnop\nsfpadd L5,L4,L10,L3,0") == BASE + 1       # three instructions
    # Wormhole's SFPMAD.md leaves it to software (a rule the functional model checks: lenient here)
    assert cycles(f"{MAD}\nsfpadd L5,L4,L10,L3,0", TENSIX_WH) == BASE


@pytest.mark.parametrize("reader, stalled", [
    # SFPMAD.md's hardware bugs: what the stall logic thinks is read, not what is
    ("sfpiadd L4,L2,0,0", False),            # reads VD = L4: not seen
    ("sfpiadd L5,L4,0,0", True),             # reads VC = L4: seen
    ("sfpshft L4,L2,0,0", False),            # shifts VD = L4 by L2: VD not seen
    ("sfpand L5,L2,L4,1", False),            # USE_VB: L5 = L4 & L2, seen as L5 & L2
    ("sfpand L4,L2,L5,1", True),             # USE_VB: L4 = L5 & L2, seen as reading L4: a false stall
    ("sfpand L4,L2", True),                  # L4 &= L2: VD seen
    ("sfpconfig 0,0,0", False),              # reads LReg[0] (the MAD writes L0 here): not seen
    ("sfpswap L4,L2,1", False),              # min/max: its first-cycle reads not seen
    ("sfpswap L4,L2,0", True),               # the plain swap: seen
    ("sfpshft2 L5,L4,0,3", False),           # a shuffle of VC = L4: seen to read nothing
    ("sfpshft2 L5,L2,4,5", False),           # shifts VB = L4 (imm12 & 15): seen as VD = L5
    ("sfpshft2 L4,L2,5,5", True),            # shifts VB = L5, seen as VD = L4: a false stall
    ("sfp_stoch_rnd 0,0,L4,L2,L5,1", True),  # FP32 to FP16B reads VC = L2 only; VB = L4 seen
])
def test_the_documented_stall_logic_bugs(reader, stalled):
    mad = "sfpmad L0,L2,L1,L3,0" if reader.startswith("sfpconfig") else MAD
    assert cycles(f"{mad}\n{reader}") == BASE + stalled


def test_indirect_va_reads_and_indirect_vd_writes_every_lreg():
    assert cycles(f"{MAD}\nsfpmad L5,L2,L1,L3,4") == BASE + 1         # INDIRECT_VA: reads all
    assert cycles("sfpmad L4,L2,L1,L3,8\nsfpadd L5,L6,L10,L3,0") == BASE + 1   # INDIRECT_VD: writes all


def test_another_threads_instruction_is_refused_too():
    # the vector unit is shared: T1's SFPADD in the cycle after T0's SFPSWAP waits
    tile = TileTimes(TensixParams())
    swap = view("bh", "sfpswap", SimpleNamespace(lreg_dest=0, lreg_src_c=1, instr_mod1=0))
    add = view("bh", "sfpadd", SimpleNamespace(lreg_dest=5, lreg_src_a=2, lreg_src_b=10, lreg_src_c=3,
                                               instr_mod1=0))
    t0, t1 = tile.core("trisc0"), tile.core("trisc1")
    tile.push(t0, (), 0)
    tile.push(t1, (), 1)
    tile.tensix(0, "sfpswap", "SFPU", False, 1, stall=swap)      # gate at 1
    tile.tensix(1, "sfpadd", "SFPU", False, 1, stall=add)        # gate at 1: unit busy, then refused at 2
    assert tile.threads[1].waits == {**tile.threads[1].waits, "unit": 1, "sfpu": 1}
    assert tile.threads[1].done == 4


# ------------------------------------------------------------------ the switch

def test_the_parameter_switches_every_automatic_stall_off():
    for source in ("sfpswap L0,L1,0\nsfpadd L5,L2,L10,L3,0", f"{MAD}\nsfpadd L5,L4,L10,L3,0",
                   "sfpshft2 L1,L2,0,3\nsfpadd L5,L6,L10,L3,0"):
        assert run(source)["waits"]["sfpu"] == 1
        rep = run(source, auto_stalls=False)
        assert rep["cycles"] == BASE and rep["waits"]["sfpu"] == 0
    # the matrix unit's: SETDVALID hands the source banks to it, SHIFTXB / MOVD2A then run
    # (a fetched matrix-unit instruction holds the unit matrix_pushed_cycles: 1 here)
    for move in ("shiftxb 0,0,0", "movd2a 0,0,0,0,0"):
        source = f"setdvalid 3\n{move}\nsetrwc 0,0,0,0,0,0"
        rep = run(source, matrix_pushed_cycles=1)
        assert rep["cycles"] == 4 + 1 and rep["waits"]["fpu"] == 1
        rep = run(source, matrix_pushed_cycles=1, auto_stalls=False)
        assert rep["cycles"] == 4 and rep["waits"]["fpu"] == 0


# ------------------------------------------------------------------ the matrix unit's moves

def matrix(tile: TileTimes, mnemonics: list[str], chip: str = "wh") -> list[int]:
    """One MOP of T1 expanding to ``mnemonics`` (one cycle each); the matrix unit's start of
    each, every instruction as the stall logic sees it."""
    tile.timeline = Timeline()
    core = tile.core("trisc1")
    tile.push(core, (), 1)
    for m in mnemonics:
        tile.tensix(1, m, "MATH", True, 1, stall=view(chip, m, SimpleNamespace()))
    tile.tensix(1, "ttmop", "", False, 1)
    return [s for unit, s, _c, _t, _m in tile.timeline.spans if unit == "MATH"]


@pytest.mark.parametrize("chip", ["wh", "bh"])     # Blackhole shares Wormhole's pages here
def test_after_movd2a_or_movb2a_only_those_two_go_next(chip):
    # MOVD2A.md, MOVB2A.md: the next cycle takes only MOVD2A and MOVB2A
    assert matrix(TileTimes(TensixParams()), ["ttmovd2a", "ttmovb2a", "ttmovd2a"], chip) == [1, 2, 3]
    tile = TileTimes(TensixParams())
    assert matrix(tile, ["ttmovb2a", "ttmvmul"], chip) == [1, 3]
    assert tile.threads[1].waits["fpu"] == 1


def test_after_movd2b_only_movd2b_for_three_cycles():
    assert matrix(TileTimes(TensixParams()), ["ttmovd2b", "ttmovd2b"]) == [1, 2]
    # a SETRWC is a matrix-unit instruction too: it waits out the three cycles
    assert matrix(TileTimes(TensixParams()), ["ttmovd2b", "ttsetrwc"]) == [1, 5]
    assert matrix(TileTimes(TensixParams()), ["ttmovd2b", "ttmovd2b", "ttelwadd"]) == [1, 2, 6]


def test_after_mova2d_or_movb2d_the_listed_dest_readers_wait_three_cycles():
    for move in ("ttmova2d", "ttmovb2d"):
        assert matrix(TileTimes(TensixParams()), [move, "ttmvmul"]) == [1, 5]
        assert matrix(TileTimes(TensixParams()), [move, "ttmovd2a"]) == [1, 5]
        # ELWADD and another move are not on the pages' list
        assert matrix(TileTimes(TensixParams()), [move, "ttelwadd", "ttmova2d"]) == [1, 2, 3]


def test_after_shiftxb_the_matrix_unit_takes_nothing_for_a_cycle():
    assert matrix(TileTimes(TensixParams()), ["ttshiftxb", "ttshiftxb", "ttsetrwc"]) == [1, 3, 5]


# ------------------------------------------------------------------ PACR and Dst.md's window

def test_a_pacr_reading_a_block_just_written_waits_for_the_window():
    # Dst.md: the window holds a PACR that reads the block, as it holds a matrix-unit reader
    def pack_after_mvmul(params: TensixParams, read: int) -> tuple[int, int]:
        tile = TileTimes(params)
        tile.push(tile.core("trisc1"), (), 1)
        tile.push(tile.core("trisc2"), (), 2)
        tile.tensix(1, "ttmvmul", "MATH", True, 1, (frozenset({0}), True))   # writes block 0 at 1
        tile.tensix(1, "ttmop", "", False, 1)
        tile.tensix(2, "ttpacr", "PACK", False, 1, None, None, frozenset({read}))
        th = tile.threads[2]
        return th.done - tile.params.pack_cycles, th.waits["dest"]

    assert pack_after_mvmul(TensixParams(), 0) == (1 + 4 + 1, 5)      # from its gate at 1 to 6
    assert pack_after_mvmul(TensixParams(), 1) == (1, 0)              # another block
    assert pack_after_mvmul(TensixParams(dest_window=0), 0) == (1, 0)
    assert pack_after_mvmul(TensixParams(auto_stalls=False), 0) == (6, 5)   # not switched by auto_stalls


@pytest.mark.parametrize("name", ["matmul", "datacopy"])     # Dest read as 32-bit and as 16-bit data
def test_the_packer_notes_the_dest_blocks_the_math_thread_wrote(monkeypatch, name):
    """The kernel's PACRs read, as the functional packer notes it, the Dest blocks its
    matrix-unit instructions wrote; and Dest's window holds them.  At the page's four
    cycles it does not: the packer's SEMWAIT holds the first PACR until a cycle after
    the math thread's SEMPOST, which follows a STALLWAIT on the matrix unit; widened to
    a window the SEMPOST cannot outlast, it does."""
    seen: dict[str, set[int]] = {"written": set(), "packed": set()}
    original = TileTimes.tensix

    def spy(self, tid, mnemonic, unit, expanded, popped, dest=None, stall=None, dest_read=None, *rest):
        if dest is not None:
            seen["written"] |= dest[0]
        if mnemonic == "ttpacr" and dest_read:
            seen["packed"] |= dest_read
        original(self, tid, mnemonic, unit, expanded, popped, dest, stall, dest_read, *rest)

    monkeypatch.setattr(TileTimes, "tensix", spy)
    ex = next(e for e in TENSIX_BH.examples if e.name == name)

    def waits(**settings: object) -> dict:
        m = Machine(TENSIX_BH, host=host(), config={"cycles": "tensix", **settings})
        program = assemble(m.arch, ex.source, base=ex.load_address)
        for address, blob in program.segments:
            m.space.write_bytes(address, blob, force=True)
        m.symbols.update(program.symbols)
        m.set_entry(program.entry if program.entry is not None else ex.load_address)
        result = m.run(max_steps=ex.max_steps)
        assert result.reason == "halted" and ex.check(m, result) is None
        return tessera_cycles.report(m)["agents"]["t2"]["waits"]

    assert waits()["dest"] == 0
    assert seen["packed"] and seen["packed"] == seen["written"]
    assert waits(**{"cycles.dest_window": 64})["dest"] > 0
    assert waits(**{"cycles.dest_window": 0})["dest"] == 0


# ------------------------------------------------------------------ snapshots and the report

def test_a_snapshot_from_before_the_stalls_goes_on():
    tile = TileTimes(TensixParams())
    state = tile.__getstate__()
    del state["bars"]
    for th in state["threads"]:
        del th.waits["sfpu"], th.waits["fpu"]
    old = TileTimes.__new__(TileTimes)
    old.__setstate__(pickle.loads(pickle.dumps(state)))
    assert old.bars == {} and all(th.waits["sfpu"] == th.waits["fpu"] == 0 for th in old.threads)
    assert matrix(old, ["ttshiftxb", "ttsetrwc"]) == [1, 3]


def test_the_report_shows_the_new_causes():
    from rich.console import Console

    from tessera_cycles.tables import render

    m = Machine(TENSIX_BH, host=host(), config={"cycles": "tensix"})
    program = assemble(m.arch, "sfpswap L0,L1,0\nsfpadd L5,L2,L10,L3,0\nend\n", base=0)
    for address, blob in program.segments:
        m.space.write_bytes(address, blob, force=True)
    m.set_entry(0)
    m.run(max_steps=100)
    console = Console(record=True, width=200)
    for part in render(tessera_cycles.report(m)):
        console.print(part)
    lines = console.export_text().splitlines()
    names = next(line for line in lines if "┃ thread" in line).strip("┃ ").split(" ┃ ")
    row = next(line for line in lines if line.startswith("│ t0 ")).strip("│ ").split(" │ ")
    assert {"dest", "sfpu", "fpu", "l1"} <= set(names)
    assert dict(zip(names, (c.strip() for c in row))) == {
        "thread": "t0", "instr": "3", "expanded": "0", "done at": "4", "unit": "0", "source": "0", "dest": "0",
        "sfpu": "1", "fpu": "0", "l1": "0", "sync": "0", "empty": "0"}
