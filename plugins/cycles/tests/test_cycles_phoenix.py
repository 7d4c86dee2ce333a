"""The barrel model on running rfPhoenix programs: operands read right, a hand-counted
example on both engines, no functional change, and ``cycles = auto``.
"""

from __future__ import annotations

from importlib import resources

import pytest

import tessera_cycles
import tessera_cycles.plugin
import tessera_phoenix.plugin
from tessera.isa.asm import assemble
from tessera.machine import Machine
from tessera.plugins import PluginHost
from tessera_cycles.phoenix import operand_uses

ENGINES = ("step", "fast")
ROM = 0xFFFD0000


def host(cycles: bool = True) -> PluginHost:
    h = PluginHost(load_entry_points=False, use_environment=False)
    h.register(tessera_phoenix.plugin, "phoenix")
    if cycles:
        h.register(tessera_cycles.plugin, "cycles")
    return h


def example(name: str) -> str:
    return resources.files("tessera_phoenix").joinpath("examples", f"{name}.s").read_text()


def machine(source: str, engine: str = "fast", h: PluginHost | None = None, **config: object) -> Machine:
    h = h or host()
    arch = h.architecture("phoenix")
    m = Machine(arch, host=h, config=dict(config), engine=engine)
    program = assemble(arch, source, base=ROM)
    for address, blob in program.segments:
        m.space.write_bytes(address, blob, force=True)
    m.set_entry(ROM)
    return m


def decode(line: str):
    from tessera.isa import Decoder

    arch = host().architecture("phoenix")
    program = assemble(arch, line, base=ROM)
    (_address, blob), *_ = program.segments
    return Decoder(arch).decode(int.from_bytes(blob[:6], "little"), ROM)


@pytest.mark.parametrize("line, reads, writes", [
    ("add r2, r2, r1", {("r", 2), ("r", 1)}, {("r", 2)}),
    ("st.t r2, 0[r3]", {("r", 3), ("r", 2)}, set()),           # rt is the data stored
    ("ld.t r5, 8[r3]", {("r", 3)}, {("r", 5)}),
    ("x: bne r1, r0, x", {("r", 1)}, set()),                   # r0 is no register
    ("x: bsr lr1, x", set(), {("r", 57)}),                     # the link register lr1
])
def test_operands_are_read_as_the_spec_lays_them_out(line, reads, writes):
    got_reads, got_writes = operand_uses(decode(line))
    assert set(got_reads) == reads and set(got_writes) == writes


@pytest.mark.parametrize("engine", ENGINES)
def test_the_sum_example_takes_the_hand_counted_cycles(engine):
    m = machine(example("sum"), engine, cycles="barrel", **{"cycles.caches": False})
    m.run(max_steps=10_000)
    rep = tessera_cycles.report(m)
    # ldi r1 issues at 6 (front 5 + 1), ldi r2 at 7.  Each round: add waits for r2 (ready
    # 12, then +12 a round), addi issues the next cycle, bne waits 5 for r1, and its taken
    # branch costs the thread 5: adds at 12, 24, ..., 1200.  The last bne issues at 1206;
    # ori+pfx at 1207, 1208 (r3 ready 1212), the store at 1212, bra at 1213, done at 1218.
    assert rep["core"]["instructions"] == 2 + 3 * 100 + 4
    assert m.clock == rep["clock"] == 1218
    assert rep["agents"]["t0"]["issue_stalls"]["slot"] == 0


@pytest.mark.parametrize("engine", ENGINES)
def test_the_model_changes_no_result_of_a_four_thread_program(engine):
    plain = machine(example("vcopy"), engine, h=host(cycles=False))
    modelled = machine(example("vcopy"), engine, cycles="auto")
    a, b = plain.run(max_steps=10_000), modelled.run(max_steps=10_000)
    assert (a.reason, a.steps) == (b.reason, b.steps)
    assert plain.space.read_bytes(0xFFFC0000, 0x1000) == modelled.space.read_bytes(0xFFFC0000, 0x1000)
    assert [t.r for t in plain.agents] == [t.r for t in modelled.agents]
    rep = tessera_cycles.report(modelled)
    assert rep["model"] == "barrel" and rep["core"]["instructions"] == b.steps


def test_the_engines_agree_on_every_count():
    reports = []
    for engine in ENGINES:
        m = machine(example("vcopy"), engine, cycles="barrel")
        m.run(max_steps=10_000)
        reports.append(tessera_cycles.report(m))
    assert reports[0] == reports[1]


def test_a_snapshot_keeps_the_models_counts():
    from tessera.errors import BudgetExceeded

    whole = machine(example("vcopy"), cycles="barrel")
    whole.run(max_steps=10_000)
    stopped = machine(example("vcopy"), cycles="barrel")
    with pytest.raises(BudgetExceeded):
        stopped.run(max_steps=45)   # of 91: mid-run, threads with retirements pending
    restored = Machine.restore(stopped.snapshot(), host=host())
    restored.run(max_steps=10_000)
    assert tessera_cycles.report(restored) == tessera_cycles.report(whole)


def test_the_barrel_counters_as_a_perfetto_trace(tmp_path, capsys, monkeypatch):
    """--cycles-trace with the barrel model: the core's IPC and cache-miss counters, adding
    up to the report's totals (no predictor: no misprediction track)."""
    import json
    import os
    from pathlib import Path

    import tessera_phoenix
    from tessera.cli.main import main

    for key in list(os.environ):
        if key.startswith("TESSERA_") and key != "TESSERA_ENGINE":
            monkeypatch.delenv(key)
    program = Path(tessera_phoenix.__file__).parent / "examples" / "vcopy.s"
    out, rep_path = tmp_path / "counters.json", tmp_path / "report.json"
    with pytest.raises(SystemExit) as exit_:
        main(["run", str(program), "--arch", "phoenix", "--cycles", "barrel", "--cycles-trace", str(out),
              "--cycles-report", str(rep_path)])
    assert exit_.value.code == 0
    core = json.loads(rep_path.read_text())["core"]
    series: dict[str, list] = {}
    for e in json.loads(out.read_text())["traceEvents"]:
        if e["ph"] == "C":
            series.setdefault(e["name"], []).append(e["args"])
    assert set(series) == {"ipc core", "I$ misses core", "D$ misses core"}
    assert sum(a["per interval"] for a in series["I$ misses core"]) == core["icache"]["misses"] > 0
    assert sum(a["per interval"] for a in series["D$ misses core"]) == core["dcache"]["misses"]
    assert all(0 < a["ipc"] <= 1 for a in series["ipc core"])
