"""The in-order model on running RISC-V programs: hand-counted cycles, both engines, no
functional change, and the errors a user meets.

Each program's cycles are worked out by hand from the timing rules of
:mod:`tessera_cycles.inorder` (docs/cycles.md): a five-stage pipeline finishes N
single-cycle instructions with no stalls in N + 4 cycles; the comments count the stalls.
"""

from __future__ import annotations

import json

import pytest

import tessera_cycles
import tessera_cycles.plugin
import tessera_riscv.plugin
from tessera.errors import ConfigError
from tessera.isa.asm import assemble
from tessera.machine import Machine
from tessera.plugins import PluginHost
from tessera_riscv import RV32IM

BASE = 0x10000
ENGINES = ("step", "fast")


def host(cycles: bool = True) -> PluginHost:
    h = PluginHost(load_entry_points=False, use_environment=False)
    h.register(tessera_riscv.plugin, "riscv")
    if cycles:
        h.register(tessera_cycles.plugin, "cycles")
    return h


def machine(source: str, engine: str = "fast", h: PluginHost | None = None, **settings: object) -> Machine:
    config = {"echo": False, "ram": 1 << 20, **settings}
    m = Machine(RV32IM, host=h or host(), config=config, engine=engine)
    program = assemble(m.arch, source, base=BASE)
    for address, blob in program.segments:
        m.space.write_bytes(address, blob, force=True)
    m.set_entry(BASE)
    return m


def run(source: str, engine: str = "fast", **settings: object) -> tuple[Machine, dict]:
    m = machine(source, engine, **{"cycles": "inorder", **settings})
    m.run(max_steps=1_000_000)
    rep = tessera_cycles.report(m)
    assert rep is not None
    return m, rep["agents"]["hart0"]


EXIT = """
    li   a7, 93
    ecall
"""

#: 20 adds, each reading the one before: forwarding hides every dependency
CHAIN = "    li a0, 1\n" + "    add a0, a0, a0\n" * 20 + EXIT


@pytest.mark.parametrize("engine", ENGINES)
def test_a_dependent_alu_chain_runs_one_instruction_a_cycle(engine):
    m, rep = run(CHAIN, engine, **{"cycles.caches": False})
    # 1 li + 20 add + li + ecall = 23 instructions, no stall: 23 + 4
    assert rep["instructions"] == 23 and rep["cycles"] == 27 == m.clock
    assert sum(rep["stalls"].values()) == 0


@pytest.mark.parametrize("engine", ENGINES)
def test_a_load_used_at_once_stalls_and_a_mul_chain_waits_its_latency(engine):
    source = """
        la   s0, data
        lw   t0, 0(s0)
        add  t1, t0, t0      # uses the load at once: load_use (1) stall
        lw   t2, 4(s0)
        addi t3, t3, 1       # independent: hides the load
        add  t4, t2, t2      # no stall
        li   a1, 3
        mul  a2, a1, a1
        mul  a3, a2, a1      # waits mul_latency - 1 = 2
        mul  a4, a3, a1      # waits 2 more
        li   a0, 0
    """ + EXIT + """
        .align 4
    data:
        .word 5, 6
    """
    _m, rep = run(source, engine, **{"cycles.caches": False})
    # la = 2 instructions; 2 + 9 + li a0 + li a7 + ecall = 14 instructions
    assert rep["instructions"] == 14
    assert rep["stalls"]["load_use"] == 1 and rep["stalls"]["mul_div"] == 4 and rep["stalls"]["data"] == 5
    assert rep["cycles"] == 14 + 4 + 5
    _m, slower = run(source, engine, **{"cycles.caches": False, "cycles.load_use": 2, "cycles.mul_latency": 5})
    # the first load now costs 2; the second, one instruction away, still 1; each mul 4
    assert slower["cycles"] == 14 + 4 + (2 + 1) + 2 * 4


LOOP = """
    li   t0, 10
loop:
    addi t0, t0, -1
    bnez t0, loop        # taken 9 times, then falls through
    li   a0, 0
""" + EXIT


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("predictor, wrong", [
    ("bimodal", 2),      # weakly not-taken: the first taken branch is wrong, then taken; the exit is wrong
    ("btfn", 1),         # backward: predicted taken every time; only the exit is wrong
    ("not-taken", 9),    # every taken branch is wrong
])
def test_a_branchy_loop_pays_each_misprediction(engine, predictor, wrong):
    _m, rep = run(LOOP, engine, **{"cycles.caches": False, "cycles.predictor": predictor})
    # li + 10 × (addi, bnez) + li + li + ecall = 24 instructions
    assert rep["instructions"] == 24
    assert rep["predictor"]["predictions"] == 10 and rep["predictor"]["mispredictions"] == wrong
    assert rep["cycles"] == 24 + 4 + 2 * wrong   # branch_penalty = 2


@pytest.mark.parametrize("engine", ENGINES)
def test_a_cache_thrashing_stride_misses_every_load(engine):
    source = """
        li   s0, 0x8000      # lui
        li   s1, 0x8400      # lui + addi; 1 KiB further: the same set of a direct-mapped 1 KiB cache
        li   t0, 8
    loop:
        lw   t1, 0(s0)
        lw   t2, 0(s1)
        addi t0, t0, -1
        bnez t0, loop
        li   a0, 0
    """ + EXIT
    settings = {"cycles.dcache_size": 1024, "cycles.dcache_ways": 1, "cycles.dcache_line": 32,
                "cycles.icache_size": 1024, "cycles.predictor": "btfn", "cycles.miss_penalty": 10}
    _m, rep = run(source, engine, **settings)
    assert rep["dcache"]["misses"] == 16 and rep["dcache"]["hits"] == 0
    # 4 + 8 × 4 + 3 = 39 instructions; D$ 16 × 10; I$: the 44 bytes of code span 2 lines,
    # 2 × 10; the loop's exit is mispredicted once (btfn): 2
    assert rep["instructions"] == 39
    assert rep["cycles"] == 39 + 4 + 160 + 20 + 2
    two_way = {**settings, "cycles.dcache_ways": 2}
    _m, rep = run(source, engine, **two_way)
    assert rep["dcache"]["misses"] == 2 and rep["cycles"] == 39 + 4 + 20 + 20 + 2


@pytest.mark.parametrize("engine", ENGINES)
def test_the_model_changes_no_result(engine):
    source = """
        la   s0, data
        li   t0, 16
        li   a0, 0
    loop:
        lw   t1, 0(s0)
        mul  t1, t1, t0
        add  a0, a0, t1
        sw   a0, 64(s0)
        addi s0, s0, 4
        addi t0, t0, -1
        bnez t0, loop
        andi a0, a0, 0x7f
    """ + EXIT + """
        .align 4
    data:
        .word 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16
    """
    plain = machine(source, engine, h=host(cycles=False))
    modelled = machine(source, engine, cycles="inorder")
    a, b = plain.run(max_steps=10_000), modelled.run(max_steps=10_000)
    assert a.exit_code == b.exit_code and a.steps == b.steps
    assert plain.agent("hart0").x == modelled.agent("hart0").x
    assert plain.space.read_bytes(0, 1 << 20) == modelled.space.read_bytes(0, 1 << 20)
    assert modelled.clock > plain.clock  # the model's clock: stalls and cache misses on top


def test_the_engines_agree_on_every_count():
    reports = [run(LOOP + "\n", e)[1] for e in ENGINES]
    assert reports[0] == reports[1]


@pytest.mark.parametrize("settings, message", [
    ({"cycles.miss_penalty": 40}, "no cycle model is"),
    ({"cycles": "inorder", "cycles.bht_entries": 3}, "bht_entries"),
    ({"cycles": "inorder", "cycles.predictor": "oracle"}, "predictor"),
    ({"cycles": "warp"}, "cycles"),
    ({"cycles": "inorder", "cycles.miss_penalty": -1}, "miss_penalty"),
    ({"cycles": "inorder", "cycles.bogus": 1}, "cycles.bogus .*see `tessera cycles list`"),
    ({"cycles": "inorder", "cycles.branch_bubble": 3}, "not a parameter of the inorder model"),
])
def test_bad_settings_are_one_line(settings, message):
    with pytest.raises(ConfigError, match=message) as err:
        machine(CHAIN, **settings)
    assert "\n" not in str(err.value)


def test_a_model_for_another_architecture_is_refused():
    from tessera_phoenix import plugin as phoenix_plugin

    h = host()
    h.register(phoenix_plugin, "phoenix")
    with pytest.raises(ConfigError, match="does not apply to architecture phoenix"):
        Machine(h.architecture("phoenix"), host=h, config={"cycles": "inorder"})


def test_the_command_line_reports_as_a_table_and_as_json(tmp_path, capsys):
    from tessera.cli.main import cli

    program = tmp_path / "loop.s"
    program.write_text(LOOP)
    out = tmp_path / "report.json"
    h = host()
    code = cli.main(args=["run", str(program), "--arch", "rv32im", "--cycles", "inorder", "--set",
                          "cycles.predictor=btfn", "--cycles-report", str(out)],
                    prog_name="tessera", standalone_mode=False, obj=h)
    assert code == 0
    rep = json.loads(out.read_text())
    assert rep["model"] == "inorder" and rep["params"]["predictor"] == "btfn"
    assert rep["agents"]["hart0"]["predictor"]["mispredictions"] == 1
    assert rep["clock"] == rep["agents"]["hart0"]["cycles"]
    cli.main(args=["run", str(program), "--arch", "rv32im", "--cycles", "inorder", "--cycles-report"],
             prog_name="tessera", standalone_mode=False, obj=host())
    err = capsys.readouterr().err
    assert "inorder model" in err and "hart0" in err and "predictor bimodal" in err
    with pytest.raises(ConfigError, match="needs a cycle model"):
        cli.main(args=["run", str(program), "--arch", "rv32im", "--cycles-report"],
                 prog_name="tessera", standalone_mode=False, obj=host())


def test_cycles_list_shows_every_parameter(capsys):
    from tessera.cli.main import cli

    cli.main(args=["cycles", "list", "--json"], prog_name="tessera", standalone_mode=False, obj=host())
    models = {m["name"]: m for m in json.loads(capsys.readouterr().out)}
    assert set(models) == {"inorder", "barrel", "tensix", "tile"}
    names = {p["name"] for p in models["inorder"]["params"]}
    assert {"cycles.miss_penalty", "cycles.predictor", "cycles.load_use"} <= names
    assert {"cycles.branch_bubble", "cycles.alu_latency"} <= {p["name"] for p in models["barrel"]["params"]}
    assert {"cycles.fifo_depth", "cycles.thcon_cycles"} <= {p["name"] for p in models["tensix"]["params"]}


def test_a_snapshot_keeps_the_models_counts():
    """Stopped mid-run, snapshotted and restored, the model goes on from its counts: the
    run ends with the report of a run never stopped."""
    from tessera.errors import BudgetExceeded

    source = """
        li   t0, 300
    loop:
        lw   t1, 0(sp)
        mul  t2, t1, t0
        addi t0, t0, -1
        bnez t0, loop
        li   a0, 0
    """ + EXIT
    whole = machine(source, cycles="inorder")
    whole.run(max_steps=100_000)
    stopped = machine(source, cycles="inorder")
    with pytest.raises(BudgetExceeded):
        stopped.run(max_steps=555)
    restored = Machine.restore(stopped.snapshot(), host=host())
    restored.run(max_steps=100_000)
    assert tessera_cycles.report(restored) == tessera_cycles.report(whole)
    assert restored.clock == whole.clock > 1200


def test_the_inorder_counters_as_a_perfetto_trace(tmp_path, capsys, monkeypatch):
    """--cycles-trace with the in-order model: IPC, cache-miss and misprediction counters
    per hart; the misses over all intervals add up to the report's."""
    import os

    from tessera.cli.main import main

    for key in list(os.environ):
        if key.startswith("TESSERA_") and key != "TESSERA_ENGINE":
            monkeypatch.delenv(key)
    source = tmp_path / "stride.s"
    source.write_text("""
        li   t0, 2000
        li   t1, 0x20000
    loop:
        lw   t2, 0(t1)
        addi t1, t1, 64          # a new 32-byte line every load: every load misses
        mul  t2, t2, t0
        addi t0, t0, -1
        bnez t0, loop
        li   a0, 0
    """ + EXIT)
    out, rep_path = tmp_path / "counters.json", tmp_path / "report.json"
    with pytest.raises(SystemExit) as exit_:
        main(["run", str(source), "--arch", "rv32im", "--cycles", "inorder", "--cycles-trace", str(out),
              "--cycles-report", str(rep_path)])
    assert exit_.value.code == 0
    events = json.loads(out.read_text())["traceEvents"]
    rep = json.loads(rep_path.read_text())["agents"]["hart0"]
    series: dict[str, list[dict]] = {}
    for e in events:
        if e["ph"] == "C":
            series.setdefault(e["name"], []).append(e)
    assert set(series) == {"ipc hart0", "I$ misses hart0", "D$ misses hart0", "mispredictions hart0"}
    assert sum(e["args"]["per interval"] for e in series["D$ misses hart0"]) == rep["dcache"]["misses"] >= 2000
    assert sum(e["args"]["per interval"] for e in series["mispredictions hart0"]) == \
        rep["predictor"]["mispredictions"]
    ipcs = [e["args"]["ipc"] for e in series["ipc hart0"]]
    assert len(ipcs) >= 10000 // 256 and all(0 < x <= 1 for x in ipcs)
    stamps = [e["ts"] for e in series["ipc hart0"]]
    assert stamps == sorted(stamps)
