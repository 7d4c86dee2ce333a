"""riscvbench's queue probes (phases q and s, one cold burst per point) and fetch probes
(phases f and g, loop bodies of 256 bytes to 8 KiB) on the tensix model, and the baby
cores' instruction caches that the fetch ramp is read from."""

from __future__ import annotations

import pytest

from tessera_cycles import calibration, probes, silicon
from tessera_cycles.models import MODELS
from tessera_cycles.tensix_model import CoreTimes, TensixParams, TileTimes

HAS_TENSIX = "tensix" in MODELS
needs_tensix = pytest.mark.skipif(not HAS_TENSIX, reason="the tensix cycle model (cycles=tensix) is not installed")


def _cycles(m: probes.Measurement, probe: str, thread: int = 1) -> dict[int, int]:
    return dict(m.series[probe, thread].points)


# ------------------------------------------------------------------ reading the silicon


def test_the_timers_own_cycles_are_the_control_loops_intercept():
    # 2 cycles a turn and 12 besides: riscvbench's loop_overhead in every phase-q/s file
    assert calibration.harness_cycles([(32, 76), (64, 140), (96, 204), (128, 268)]) == pytest.approx(12)
    rows = [r for r in calibration.points(["riscv-q"]) if r.probe == "q_loop_adddmareg"]
    assert [r.n for r in rows] == list(probes.Q_LOOP)
    data = silicon.load("riscvbench-qdrain.csv")
    shot = {int(r["n"]): int(r["cycles"]) for r in data.rows_where(probe="q_loop_adddmareg")}  # type: ignore[arg-type]
    assert [r.silicon for r in rows] == pytest.approx([shot[n] - 12 for n in probes.Q_LOOP])


def test_the_loop_forms_bursts_from_32_are_tracked_and_the_others_say_why_not():
    rows = calibration.points(["riscv-q", "riscv-s"])
    assert rows and all(r.n is not None for r in rows)
    for r in rows:
        form = next(p for p in probes.probes(r.suite) if p.name == r.probe)
        assert r.tracked == (form.block > 0 and r.n >= calibration.BURST_TRACKED_FROM), r
        if not r.tracked:
            assert r.note.startswith("untracked:"), r
    # the cascade is phase q's only; q was measured after the drain change at one thread
    assert {r.variant for r in rows if r.suite == "riscv-q"} == {"t1"}
    assert {r.variant for r in rows if r.suite == "riscv-s"} == {"t1", "t2", "t3"}
    # a solo probe's other threads spin and report nothing: its rows are TRISC1's
    assert {r.threads for r in rows if r.probe.startswith("s_solo")} == {(1,)}
    assert {r.threads for r in rows if r.probe == "s_co_plain"} == {(1,), (0, 1), (0, 1, 2)}


# ------------------------------------------------------------------ the programs


def test_a_burst_program_drains_before_its_shot_and_a_sync_probe_inside_it():
    text = probes.source("riscv-s", "t3")
    for probe in probes.probes("riscv-s")[1:]:
        assert f"{probe.name} (bursts of 4, 8, 16, 32, 64, 128, 256, 512)" in text
    body = text.split("s_co_sync")[1].split("# ---- probe")[0]
    # barrier, untimed drain, clock; the burst; drain, clock
    assert body.count("lw t0, 4(t0)") == 2
    assert body.index("jal ra, barrier") < body.index("lw t0, 4(t0)") < body.index("lw t2,")
    assert body.rindex("lw t0, 4(t0)") < body.index("lw t3,")
    solo = text.split("s_solo_plain")[1].split("# ---- probe")[0]
    assert "_spin_loop:" in solo and solo.count("lw t0, 4(t0)") == 1


def test_a_solo_probes_other_threads_report_no_series():
    m = probes.measure("riscv-s", "t3", base_blocks=1)
    solos = {(p, t) for p, t in m.series if p.startswith("s_solo")}
    assert solos == {("s_solo_plain", 1), ("s_solo_sync", 1)}
    assert {t for p, t in m.series if p == "s_co_plain"} == {0, 1, 2}
    assert all(list(dict(s.points)) == list(probes.S_LOOP) for (p, _t), s in m.series.items() if p != "loop_overhead")


@needs_tensix
def test_a_drained_burst_costs_three_cycles_an_adddmareg_and_the_loop_form_one_and_an_eighth():
    m = probes.measure("riscv-q", "t1", config={"cycles": "tensix"}, base_blocks=1)
    sync, addi = _cycles(m, "q_loop_adddmareg_sync"), _cycles(m, "q_loop_addi")
    for small, large in zip(probes.Q_LOOP[1:], probes.Q_LOOP[2:], strict=False):
        assert sync[large] - sync[small] == 3 * (large - small)       # the scalar unit's three cycles
        assert addi[large] - addi[small] == (large - small) * 18 // 16   # 16 addi and the loop's two


@needs_tensix
def test_the_queue_depth_is_where_the_plain_burst_leaves_the_issue_rate():
    # below the depth a plain burst runs at the core's rate (the addi control's); above it,
    # every push waits for an ADDDMAREG: the shot ends (n - depth) ADDDMAREGs after its start
    runs = {depth: probes.measure("riscv-q", "t1", config={"cycles": "tensix", "cycles.fifo_depth": depth},
                                  base_blocks=1) for depth in (16, 32)}
    addi = _cycles(runs[32], "q_loop_addi")
    assert _cycles(runs[32], "q_loop_adddmareg")[32] == addi[32]
    assert _cycles(runs[16], "q_loop_adddmareg")[32] > addi[32]
    deep, shallow = _cycles(runs[32], "q_loop_adddmareg"), _cycles(runs[16], "q_loop_adddmareg")
    for n in (256, 512, 1024):
        assert shallow[n] - deep[n] == 3 * (32 - 16)


@needs_tensix
def test_the_queue_is_per_thread_and_the_scalar_unit_shared():
    # phase s's verdict: TRISC1 alone pushing is timed the same whether the others spin or
    # not; when all three push, each waits for the others' ADDDMAREGs
    runs = {v: probes.measure("riscv-s", v, config={"cycles": "tensix"}, base_blocks=1) for v in ("t1", "t3")}
    assert _cycles(runs["t3"], "s_solo_plain") == _cycles(runs["t1"], "s_solo_plain")
    co1, co3 = _cycles(runs["t1"], "s_co_sync"), _cycles(runs["t3"], "s_co_sync")
    assert co3[512] - co3[256] == pytest.approx(3 * (co1[512] - co1[256]), abs=3)


# ------------------------------------------------------------------ the instruction caches


def _loop(tile: TileTimes, core: CoreTimes, lines: int, passes: int) -> int:
    """Fetch ``lines`` consecutive 16-byte lines ``passes`` times; the fetch stalls."""
    before = core.stalls["fetch"]
    for _ in range(passes):
        for line in range(lines):
            tile.fetch(core, 0x1_0000 + 16 * line)
    return core.stalls["fetch"] - before


@pytest.mark.parametrize(("extra", "misses"), [(0, 0), (1, 3), (32, 96), (64, 192), (128, 384), (200, 456)])
def test_a_loop_past_the_cache_misses_every_line_of_the_sets_it_overflows(extra, misses):
    # 4 KiB, two ways of 16-byte lines: 128 sets.  A loop of 256 + k lines puts three lines
    # in k sets; true LRU then misses all three on every pass, and the other sets never
    tile = TileTimes(TensixParams())
    core = tile.core("trisc1")
    lines = 256 + extra
    assert _loop(tile, core, lines, 1) == lines          # cold: every line once
    assert _loop(tile, core, lines, 3) == 3 * misses
    assert core.icache is not None and core.icache.size == 4096


def test_the_cache_switch_and_the_size_setting():
    off = TileTimes(TensixParams(icache=False))
    assert off.params.icache is False      # the observer is not wrapped at all: see test_cycles_tile
    small = TileTimes(TensixParams(icache_size=1024, icache_miss_cycles=3))
    core = small.core("trisc1")
    assert _loop(small, core, 64, 1) == 3 * 64
    assert _loop(small, core, 64, 2) == 0         # 64 lines fit 1 KiB
    _loop(small, core, 65, 1)                     # one set overflows ...
    assert _loop(small, core, 65, 2) == 2 * 3 * 3     # ... and its three lines miss every pass


def test_a_wormhole_core_takes_its_documented_cache():
    from tessera_cycles.tensix_model import WORMHOLE_ICACHE

    tile = TileTimes(TensixParams())
    tile.icache_sizes = dict(WORMHOLE_ICACHE)
    core = tile.core("trisc1")                      # InstructionCache.md: T1 512 bytes
    assert _loop(tile, core, 32, 1) == 32
    assert _loop(tile, core, 32, 2) == 0
    _loop(tile, core, 33, 1)
    assert _loop(tile, core, 33, 2) == 2 * 3
    assert core.icache is not None and core.icache.size == 512


@needs_tensix
def test_the_fetch_ramp_comes_from_the_cache():
    # (base 4: each probe's first point runs its body cold, a miss a line, which biases the
    # slope down by ~0.015 at this base and ~0.002 at the silicon's 32)
    on = probes.measure("riscv-g", "t1", config={"cycles": "tensix"}, base_blocks=4).table()
    off = probes.measure("riscv-g", "t1", config={"cycles": "tensix", "cycles.icache": False},
                         base_blocks=4).table()
    # no cache model: every body at one instruction a cycle
    assert all(v[1] == pytest.approx(1.0, abs=0.01) for v in off.values())
    # the cache: flat to 4 KiB, a graded rise, the plateau of 5 cycles per 4 instructions
    assert on["g_1024"][1] == pytest.approx(1.0, abs=0.02)
    assert on["g_1024"][1] < on["g_1152"][1] < on["g_1280"][1] < on["g_1408"][1] < on["g_1536"][1]
    assert on["g_1536"][1] == pytest.approx(1.25, abs=0.005) and on["g_1792"][1] == pytest.approx(1.25, abs=0.005)


def test_a_burst_point_is_named_with_its_length():
    rows = calibration.points(["riscv-q"])
    text = calibration.markdown(rows)
    assert "| q_loop_adddmareg n=64 | TTQUEUE | t1 |" in text
    assert {r.label for r in rows if r.probe == "q_ctrl"} == {f"q_ctrl n={n}" for n in probes.CASCADE}
