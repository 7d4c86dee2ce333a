"""The tensix model on running tiles: the demo kernels still pass their checks, both
engines agree on every count, a snapshot keeps the times, the wall clock reads the
model, and bad settings are one-line errors."""

from __future__ import annotations

import pytest

import tessera_cycles
import tessera_cycles.plugin
import tessera_riscv.plugin
import tessera_tensix.plugin
from tessera.errors import BudgetExceeded, ConfigError
from tessera.isa.asm import assemble
from tessera.machine import Machine
from tessera.plugins import PluginHost
from tessera_cycles.tensix_model import TensixParams
from tessera_tensix.tile.arch import TILE_BH


def host(cycles: bool = True) -> PluginHost:
    h = PluginHost(load_entry_points=False, use_environment=False)
    h.register(tessera_riscv.plugin, "riscv")
    h.register(tessera_tensix.plugin, "tensix")
    if cycles:
        h.register(tessera_cycles.plugin, "cycles")
    return h


def example(name: str):
    return next(e for e in TILE_BH.examples if e.name == name)


def machine(source: str, engine: str = "fast", cycles: bool = True, **settings: object) -> Machine:
    config = {"cycles": "tensix", **settings} if cycles else dict(settings)
    m = Machine(TILE_BH, host=host(cycles), config=config, engine=engine)
    for address, blob in assemble(m.arch, source).segments:
        m.space.write_bytes(address, blob, force=True)
    m.set_entry(0)
    return m


@pytest.mark.parametrize("name", ["datacopy", "eltwise-add", "matmul"])
def test_the_tile_examples_pass_their_checks_under_the_model(name):
    ex = example(name)
    m = machine(ex.source)
    result = m.run(max_steps=ex.max_steps)
    assert result.reason == "halted"
    assert ex.check(m, result) is None
    rep = tessera_cycles.report(m)
    assert rep is not None and rep["model"] == "tensix"
    # the clock is the latest time anything reached, and every thread finished by then
    assert rep["clock"] == max(a["cycles"] for a in rep["agents"].values())
    assert sum(u["instructions"] for u in rep["units"].values()) > 0


def test_the_engines_agree_on_every_count():
    ex = example("matmul")
    reports = []
    for engine in ("step", "fast"):
        m = machine(ex.source, engine)
        m.run(max_steps=ex.max_steps)
        reports.append(tessera_cycles.report(m))
    assert reports[0] == reports[1]


def test_a_snapshot_keeps_the_models_times():
    ex = example("matmul")
    whole = machine(ex.source)
    whole.run(max_steps=ex.max_steps)
    cut = machine(ex.source)
    with pytest.raises(BudgetExceeded):
        cut.run(max_steps=150)
    restored = Machine.restore(cut.snapshot(), host=host())
    restored.run(max_steps=ex.max_steps)
    assert tessera_cycles.report(restored)["agents"] == tessera_cycles.report(whole)["agents"]


CLOCKED = """
    li t0, 0xFFB12000
    sw zero, 0x1B0(t0)          # release T0..T2
    li a7, 93
    li a0, 0
    ecall
.org 0x6000
    li a7, 93
    ecall
.org 0xE000
    li a7, 93
    ecall
.org 0xA000
    li t0, 0xFFB12000
    lw s0, 0x1F0(t0)            # the wall clock
    li t1, 1000
    divu t2, t1, t1             # one divide
    lw s1, 0x1F0(t0)
    sub a0, s1, s0
    li a7, 93
    ecall
"""


def test_a_core_reads_its_own_time_on_the_wall_clock():
    m = machine(CLOCKED, **{"cycles.div_cycles": 40})
    m.run(max_steps=10_000)
    trisc1 = m.agent("trisc1")
    # a read gives the time its load issues at: the first load's slot (1), li (1), divu (40)
    assert trisc1.exit_code == 1 + 1 + 40
    plain = machine(CLOCKED, cycles=False)
    plain.run(max_steps=10_000)
    assert plain.agent("trisc1").exit_code != trisc1.exit_code


@pytest.mark.parametrize("settings, message", [
    ({"cycles.fifo_depth": 33}, "fifo_depth must be at most 32"),
    ({"cycles.thcon_cycles": 0}, "thcon_cycles must be a positive integer"),
])
def test_bad_settings_are_one_line(settings, message):
    with pytest.raises(ConfigError, match=message):
        machine(CLOCKED, **settings)


def test_the_demo_runs_each_tiles_first_example_under_the_model():
    from tessera_cycles.demos import demos

    found = {d["arch"]: d for d in demos(host())}
    assert {"tensix-tile", "tensix-tile-wh"} <= set(found)
    ok, summary = found["tensix-tile"]["run"](None)
    assert ok, summary
    assert summary.startswith("tensix: ") and "busiest unit" in summary


def test_the_timeline_shows_each_units_spans_and_each_fifos_occupancy(tmp_path, capsys, monkeypatch):
    import json
    import os

    from tessera.cli.main import main

    for key in list(os.environ):
        if key.startswith("TESSERA_") and key != "TESSERA_ENGINE":
            monkeypatch.delenv(key)
    source = tmp_path / "mm.s"
    source.write_text(example("matmul").source)
    out = tmp_path / "tl.json"
    with pytest.raises(SystemExit) as exit_:
        main(["run", str(source), "--arch", "tensix-tile", "--cycles", "tensix", "--cycles-trace", str(out)])
    assert exit_.value.code == 0
    events = json.loads(out.read_text())["traceEvents"]
    lanes = {e["tid"]: e["args"]["name"] for e in events if e["name"] == "thread_name"}
    spans: dict[str, list[tuple[int, int]]] = {}
    for e in events:
        if e["ph"] == "X":
            spans.setdefault(lanes[e["tid"]], []).append((e["ts"], e["ts"] + e["dur"]))
    assert {"MATH", "PACK", "UNPACK"} <= set(spans)
    for unit, intervals in spans.items():       # a unit is busy with one instruction at a time
        intervals.sort()
        assert all(a[1] <= b[0] for a, b in zip(intervals, intervals[1:])), unit
    # the MVMULs the MOP and replay expanders issued: 1 cycle each on the matrix unit
    assert sum(1 for e in events if e["ph"] == "X" and e["name"] == "ttmvmul") >= 16
    levels: dict[str, list[int]] = {}
    for e in events:
        if e["ph"] == "C" and e["name"].startswith("fifo"):
            levels.setdefault(e["name"], []).append(e["args"]["entries"])
    assert set(levels) == {"fifo T0", "fifo T1", "fifo T2"}
    for name, seen in levels.items():           # never negative, never above the depth, drained at the end
        assert min(seen) >= 0 and max(seen) <= TensixParams().fifo_depth and seen[-1] == 0, name
    # every core's code is cold once: its instruction-cache misses, per window, add up to the
    # fetch stalls the report counts (one cycle each)
    misses: dict[str, int] = {}
    for e in events:
        if e["ph"] == "C" and e["name"].startswith("I$ misses "):
            core = e["name"].removeprefix("I$ misses ")
            misses[core] = misses.get(core, 0) + e["args"]["per window"]
    assert {"brisc", "trisc0", "trisc1", "trisc2"} <= set(misses)
    source_run = machine(example("matmul").source)
    source_run.run(max_steps=example("matmul").max_steps)
    agents = tessera_cycles.report(source_run)["agents"]
    assert misses == {core: agents[core]["stalls"]["fetch"] for core in misses}
    assert all(agents[core]["icache"]["misses"] == n for core, n in misses.items())


def test_the_timeline_needs_the_tensix_model(tmp_path, capsys):
    from tessera.cli.main import main

    source = tmp_path / "mm.s"
    source.write_text(example("matmul").source)
    with pytest.raises(SystemExit) as exit_:
        main(["run", str(source), "--arch", "tensix-tile", "--cycles-trace", str(tmp_path / "x.json")])
    assert exit_.value.code == 64
    assert "--cycles-trace needs the tensix, tile, inorder or barrel cycle model" in capsys.readouterr().err


def test_the_timeline_as_a_value_change_dump(tmp_path, capsys):
    pytest.importorskip("vcd", reason="VCD output needs pyvcd (pip install 'tessera-cycles[vcd]')")
    from tessera.cli.main import main

    source = tmp_path / "mm.s"
    source.write_text(example("matmul").source)
    out = tmp_path / "tl.vcd"
    with pytest.raises(SystemExit) as exit_:
        main(["run", str(source), "--arch", "tensix-tile", "--cycles", "tensix", "--cycles-trace", str(out)])
    assert exit_.value.code == 0
    text = out.read_text()
    header, _, body = text.partition("$enddefinitions $end")
    ids = {}
    for line in header.splitlines():   # $var wire 1 ! busy $end, inside $scope module MATH
        parts = line.split()
        if parts[:1] == ["$scope"]:
            scope = parts[2]
        elif parts[:1] == ["$var"]:
            ids[scope, parts[4]] = parts[3]
    math_busy = ids["MATH", "busy"]
    times, changes, now = [], [], 0
    for line in body.split():
        if line.startswith("#"):
            now = int(line[1:])
            times.append(now)
        elif line.endswith(math_busy) and line[0] in "01" and len(line) == 1 + len(math_busy):
            changes.append((now, int(line[0])))
    assert times == sorted(times)                   # time only moves forward
    assert (1 in {v for _t, v in changes}) and changes[-1][1] == 0   # the matrix unit worked, then idled
    fifo_values = [int(line[1:].split()[0], 2) for line in body.splitlines()
                   if line.startswith("b") and line.split()[1] == ids["t1", "fifo"]]
    assert fifo_values and max(fifo_values) <= TensixParams().fifo_depth and fifo_values[-1] == 0


def test_the_coprocessor_alone_runs_under_the_model_too():
    """Direct mode (architecture ``tensix``): no cores, the threads fetch their own words;
    the gates and the shared units are timed, and the example's check still passes."""
    from tessera_tensix.arch import TENSIX_BH

    ex = next(e for e in TENSIX_BH.examples if e.name == "matmul")
    m = Machine(TENSIX_BH, host=host(), config={"cycles": "auto"})
    program = assemble(m.arch, ex.source, base=ex.load_address)
    for address, blob in program.segments:
        m.space.write_bytes(address, blob, force=True)
    m.symbols.update(program.symbols)      # the threads' sections and MOP configurations
    m.set_entry(program.entry if program.entry is not None else ex.load_address)
    result = m.run(max_steps=ex.max_steps)
    assert result.reason == "halted" and ex.check(m, result) is None
    rep = tessera_cycles.report(m)
    assert rep["model"] == "tensix" and set(rep["agents"]) == {"t0", "t1", "t2"}
    assert rep["units"]["MATH"]["instructions"] >= 64       # the MOP's and replay's MVMULs
    assert rep["clock"] == max(a["cycles"] for a in rep["agents"].values())


def test_the_packers_semwait_holds_its_first_pacr_until_the_math_threads_sempost():
    """The matmul's packer latches SEMWAIT (wait while MATH_PACK is 0) long before the
    math thread posts it; the functional run parks on the first PACR, and the model holds
    that PACR until one cycle after the SEMPOST ends (SEMWAIT.md), not where its gate
    was free."""
    from tessera_cycles.live import model_state
    from tessera_cycles.tensix_model import Timeline

    ex = example("matmul")
    m = machine(ex.source)
    tile = model_state(m, "tensix", {})["tile"]
    tile.timeline = Timeline()
    assert m.run(max_steps=ex.max_steps).reason == "halted"
    spans = tile.timeline.spans
    semwait = next(s for s in spans if s[3] == 2 and s[4] == "ttsemwait")
    post = next(s for s in spans if s[4] == "ttsempost")
    first_pack = min(s[1] for s in spans if s[4] == "ttpacr")
    assert post[3] == 1 and semwait[1] + 1 < post[1]
    assert first_pack == post[1] + post[2] + 1
    assert next(a for a in m.agents if a.name == "t2").sem_releases == 1
    assert tessera_cycles.report(m)["agents"]["t2"]["waits"]["sync"] >= first_pack - semwait[1] - 2


def test_the_math_threads_stallwait_holds_its_sempost_until_the_matrix_unit_is_done():
    """tt-llk's math thread ends a tile with STALLWAIT (block B1: the sync unit; wait for
    this thread's matrix and vector units) and SEMPOST: the SEMPOST goes one cycle after
    the thread's last matrix-unit instruction finished, or after the latch took effect."""
    from tessera_cycles.live import model_state
    from tessera_cycles.tensix_model import Timeline

    ex = example("matmul")
    m = machine(ex.source)
    tile = model_state(m, "tensix", {})["tile"]
    tile.timeline = Timeline()
    assert m.run(max_steps=ex.max_steps).reason == "halted"
    spans = [s for s in tile.timeline.spans if s[3] == 1]
    post = next(i for i, s in enumerate(spans) if s[4] == "ttsempost")
    stallwait = spans[post - 1]
    assert stallwait[4] == "ttstallwait"
    done = max(s[1] + s[2] for s in spans[:post] if s[0] in ("MATH", "SFPU"))
    assert spans[post][1] == max(done, stallwait[1] + 1) + 1
