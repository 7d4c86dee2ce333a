"""Checker mode (tile.md 9.4): races with operations nobody waited for are reported; waits retire them."""

from __future__ import annotations

import pytest
from tile_support import EXIT, machine

from tessera.plugins import PluginHost
from tessera_tile import plugin
from tessera_tile.checker import TileRaceError

DATA = """
        .data
        .align 6
buf:    .space 2048
"""


def _host() -> PluginHost:
    host = PluginHost(load_entry_points=False, use_environment=False)
    host.register(plugin, "tile")
    return host


def _run(body: str, **config):
    cfg = {"tile.mode": "checker", **config}
    m = machine(f"_start:\n        la a1, buf\n{body}\n{EXIT}{DATA}", config=cfg, host=_host())
    result = m.run(max_steps=10_000)
    return m, result


def test_store_of_an_unwaited_mma_destination_is_a_race():
    m, _ = _run("""
        tmma.s8_s8 t0, t1, t2
mark:   tst.g.us t0, (a1)
""")
    (race,) = m.tile.races
    assert race.op == "tmma.tt" and race.access == "tst.g.us" and race.conflict == "writes"
    assert race.pc == m.symbols["mark"] + 4 and (race.space, race.start, race.end) == ("tiles 0", 0, 1024)
    assert "nobody waited for" in str(race)


def test_the_right_wait_retires_the_operation():
    m, _ = _run("""
        tmma.s8_s8 t0, t1, t2
        twait mma
        tst.g.us t0, (a1)
        twait.mem st=0
        ld a0, 0(a1)
""")
    assert m.tile.races == []


def test_a_wait_for_another_unit_does_not_help():
    m, _ = _run("""
        tmma.s8_s8 t0, t1, t2
        twait alu
        tst.g.us t0, (a1)
""")
    assert len(m.tile.races) == 1


def test_cpu_load_of_memory_a_pending_store_writes():
    m, _ = _run("""
        tst.g.us t0, (a1)
load:   ld a0, 8(a1)
        twait.mem st=0
        ld a0, 8(a1)                    # after the wait: fine
""")
    (race,) = m.tile.races
    assert (race.access, race.pc, race.space, race.start, race.end) == ("CPU load", m.symbols["load"], "global",
                                                                         m.symbols["buf"] + 8, m.symbols["buf"] + 16)


def test_cpu_store_into_memory_a_pending_load_reads():
    m, _ = _run("""
        tld.g.us t3, (a1)
        sd zero, 1000(a1)
""")
    (race,) = m.tile.races
    assert race.access == "CPU store" and race.conflict == "reads"


def test_thresholds_retire_the_oldest_first():
    m, _ = _run("""
        addi a2, a1, 1024
        tst.g.us t0, (a1)
        tst.g.us t1, (a2)
        twait.mem st=1                   # the first store retires, the second stays pending
        ld a0, 0(a1)                     # first store's range: no race
        ld a0, 1024(a1)                  # second store's range: race
""")
    assert [r.start - m.symbols["buf"] for r in m.tile.races] == [1024]


def test_same_engine_operations_are_ordered():
    m, _ = _run("""
        addi a2, a1, 1024
        tld.g.us t0, (a1)
        tst.g.us t0, (a2)                # LSU after LSU of the same thread: in order, no race
""")
    assert m.tile.races == []


def test_mbarrier_try_wait_retires_the_tma():
    m, _ = _run("""
        li s1, 0x400
        li s2, 1
        tmbar.init s1, s2
        li t0, 64
        tmv.tx t8, t0, 0, ew=w
        tmv.vt v1, t8, 0
        li s3, 64
        tmbar.arrive_tx s4, s1, s3
        li a2, 0x800
        tma.linear a2, a1, v1, dst=shared, mbar=s1
wait:   tmbar.try_wait s5, s1, zero
        beqz s5, wait
        tld.s.us t5, (a2)               # after the barrier: no race
""", **{"tile.mbar_instructions": True})
    assert m.tile.races == []


def test_raise_action_stops_the_run():
    with pytest.raises(TileRaceError, match="race: tst.g.us by hart0"):
        _run("""
        tmma.s8_s8 t0, t1, t2
        tst.g.us t0, (a1)
""", **{"tile.checker_action": "raise"})


def test_eager_mode_records_nothing():
    m, _ = _run("""
        tmma.s8_s8 t0, t1, t2
        tst.g.us t0, (a1)
""", **{"tile.mode": "eager"})
    assert m.tile.races == [] and m.tile.checker.pending == []
