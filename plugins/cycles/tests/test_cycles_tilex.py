"""The ``tile`` cycle model on running tile programs: hand-counted cycles, both engines and
both tile modes agree, the examples still pass, parameters are checked, the report prints.

Counts are worked out from the rules of :mod:`tessera_cycles.tile_model` (docs/cycles.md):
a hart is the five-stage in-order pipeline (N single-cycle instructions: N + 4 cycles,
the first in EX in cycle 3); an operation dispatched at its W0's EX cycle ``d`` completes
at ``d + busy + latency``; a ``t_wait`` is held in EX until what it waits for completed.
"""

from __future__ import annotations

import json

import pytest

import tessera_cycles
import tessera_cycles.plugin
import tessera_riscv.plugin
import tessera_tile.plugin
from tessera.errors import ConfigError
from tessera.isa.asm import assemble
from tessera.machine import Machine
from tessera.plugins import PluginHost
from tessera_cycles.tile_model import TileParams, price

BASE = 0x10000
ENGINES = ("step", "fast")

#: one hart: a 1 KiB tile load from global memory, wait, a bf16 MMA, wait, exit
LOAD_MMA = """
        la      a0, buf
        tld.g.us t4, (a0)
        twait   all
        tmma.bf16_fp32 t0, t4, t5
        twait   mma
        li      a0, 0
        li      a7, 93
        ecall
        .align 6
buf:    .space  1024
"""


def host() -> PluginHost:
    h = PluginHost(load_entry_points=False, use_environment=False)
    h.register(tessera_riscv.plugin, "riscv")
    h.register(tessera_tile.plugin, "tile")
    h.register(tessera_cycles.plugin, "cycles")
    return h


def machine(source: str, engine: str = "fast", **settings: object) -> Machine:
    h = host()
    config = {"echo": False, "ram": 1 << 22, "tile.threads_per_pe": 1, **settings}
    m = Machine(h.architecture("tile"), host=h, config=config, engine=engine)
    program = assemble(m.arch, source, base=BASE)
    for address, blob in program.segments:
        m.space.write_bytes(address, blob, force=True)
    m.set_entry(BASE)
    return m


def run(source: str, engine: str = "fast", **settings: object) -> tuple[Machine, dict]:
    m = machine(source, engine, **{"cycles": "tile", **settings})
    result = m.run(max_steps=100_000)
    assert result.reason == "halted" and result.exit_code == 0, result
    rep = tessera_cycles.report(m)
    assert rep is not None
    return m, rep


@pytest.mark.parametrize("engine", ENGINES)
def test_a_load_a_wait_an_mma_and_a_wait_take_the_hand_counted_cycles(engine):
    m, rep = run(LOAD_MMA, engine, **{"cycles.caches": False})
    hart = rep["agents"]["hart0"]
    # auipc ex 3, addi 4, tld W1 5, W0 6: the load is dispatched in cycle 6; 1024 bytes at
    # 32 B/cycle keep the LSU 32 cycles, 300 more of latency: complete at 6 + 32 + 300 = 338
    load_done = 6 + 1024 // 32 + 300
    assert rep["units"]["hart0.lsu"]["done_at"] == load_done
    # twait all would be in EX in 7: held until 338 (331 cycles); tmma W1 339, W0 340; bf16
    # (16 bits, K = 64 B / 2 = 32): 16*16*32 MACs at 512 a cycle = 16 busy, + 8 fill
    mma_done = load_done + 2 + 16 * 16 * 32 // 512 + 8
    assert rep["units"]["hart0.mma"]["done_at"] == mma_done
    # twait mma in EX at 341, held until 364; then li, li, ecall: ecall in EX at 367, WB 369
    assert hart["stalls"]["tile"] == (load_done - 7) + (mma_done - (load_done + 3))
    assert hart["instructions"] == 11
    assert hart["cycles"] == m.clock == mma_done + 3 + 2 == 369
    assert hart["tile_ops"] == 2
    assert rep["units"]["hart0.lsu"]["busy"] == 32 and rep["units"]["hart0.mma"]["busy"] == 16
    stalls = hart["stalls"]
    assert hart["instructions"] + 4 + sum(stalls[k] for k in stalls if k not in ("load_use", "mul_div")) \
        == hart["cycles"]


def test_an_operation_alone_costs_what_timed_mode_charges():
    """The model's busy + latency of a lone operation is the functional CostModel's price."""
    from tessera_tile.config import TileConfig
    from tessera_tile.engines import CostModel

    cost = CostModel(TileConfig.from_mapping({}))
    p = TileParams()
    cases = [("lsu", ("global", 1024), cost.lsu("global", 1024)), ("lsu", ("shared", 96), cost.lsu("shared", 96)),
             ("tma", (2048, 1), cost.tma(2048, 1)), ("tma", (2048, 4), cost.tma(2048, 4)),
             ("mma", (8, 64, 2), cost.mma(8, 64, 2)), ("mma", (32, 16, 1), cost.mma(32, 16, 1)),
             ("alu", (16, False), cost.alu(16, False)), ("alu", (16, True), cost.alu(16, True))]
    for unit, args, expected in cases:
        busy, latency = price(p, unit, args)
        assert busy + latency == expected, (unit, args)


def test_back_to_back_operations_overlap_their_latency_and_queue_for_the_engine():
    source = """
        la      a0, buf
        tld.g.us t4, (a0)
        tld.g.us t5, (a0)
        twait   all
        li      a0, 0
        li      a7, 93
        ecall
        .align 6
buf:    .space  1024
"""
    _m, rep = run(source, **{"cycles.caches": False})
    lsu = rep["units"]["hart0.lsu"]
    # first load dispatched at 6, busy 6..38; the second dispatched at 8 starts at 38 (30
    # cycles queued) and completes at 38 + 32 + 300 = 370, not 2 x 332 after the first
    assert lsu["instructions"] == 2 and lsu["queued"] == 30 and lsu["done_at"] == 370
    assert rep["agents"]["hart0"]["cycles"] == 370 + 3 + 2


@pytest.mark.parametrize("source", [LOAD_MMA])
def test_both_engines_and_both_tile_modes_give_the_same_report(source):
    reports = []
    for engine in ENGINES:
        for mode in ("eager", "timed"):
            _m, rep = run(source, engine, **{"tile.mode": mode})
            reports.append(json.dumps(rep, sort_keys=True))
    assert len(set(reports)) == 1


def test_the_model_changes_no_result():
    plain = machine(LOAD_MMA)
    modelled = machine(LOAD_MMA, cycles="tile")
    a, b = plain.run(max_steps=10_000), modelled.run(max_steps=10_000)
    assert a.exit_code == b.exit_code == 0 and a.steps == b.steps
    assert plain.agent("hart0").x == modelled.agent("hart0").x
    assert plain.state_hash() != "" and plain.tile.threads["hart0"].state() == modelled.tile.threads["hart0"].state()
    assert modelled.clock > plain.clock


@pytest.mark.parametrize("engine", ENGINES)
def test_the_tile_examples_still_pass_their_checks(engine):
    from tessera.cli.demo import load_example

    h = host()
    arch = h.architecture("tile")
    for example in arch.examples:
        m = Machine(arch, host=h, config={"echo": False, "cycles": "tile"}, engine=engine)
        load_example(m, example)
        result = m.run(max_steps=example.max_steps)
        assert example.check(m, result) is None, example.name
        rep = tessera_cycles.report(m)
        assert rep is not None and rep["clock"] == m.clock > 0
        assert all(hart["cycles"] > hart["instructions"] for hart in rep["agents"].values())


def test_auto_picks_the_tile_model_and_other_models_are_refused():
    m = machine(LOAD_MMA, cycles="auto")
    m.run(max_steps=10_000)
    rep = tessera_cycles.report(m)
    assert rep is not None and rep["model"] == "tile"
    with pytest.raises(ConfigError, match="does not apply to architecture tile"):
        machine(LOAD_MMA, cycles="inorder")


@pytest.mark.parametrize("settings, message", [
    ({"cycles.bw_tma": 0}, "bw_tma must be a positive integer"),
    ({"cycles.lat_mma": -1}, "lat_mma"),
    ({"cycles.load_use": 2}, "not a parameter of the tile model"),
])
def test_bad_parameters_are_one_line_errors(settings, message):
    with pytest.raises(ConfigError, match=message) as err:
        machine(LOAD_MMA, cycles="tile", **settings)
    assert "\n" not in str(err.value)


def test_the_command_line_prints_the_report_of_an_mma_kernel(tmp_path, capsys):
    from tessera.cli.main import cli

    program = tmp_path / "mma.s"
    program.write_text(LOAD_MMA)
    out = tmp_path / "report.json"
    cli.main(args=["run", str(program), "--arch", "tile", "--cycles", "tile", "--set", "tile.threads_per_pe=1",
                   "--set", "echo=false", "--cycles-report", str(out)],
             prog_name="tessera", standalone_mode=False, obj=host())
    rep = json.loads(out.read_text())
    assert rep["model"] == "tile" and rep["units"]["hart0.mma"]["instructions"] == 1
    cli.main(args=["run", str(program), "--arch", "tile", "--cycles", "tile", "--set", "tile.threads_per_pe=1",
                   "--cycles-report"], prog_name="tessera", standalone_mode=False, obj=host())
    err = capsys.readouterr().err
    assert "hart0.mma" in err and "tile engines" in err
    # the hart's row shows the cycles it waited for its engines (the `tile` column)
    row = next(line for line in err.splitlines() if line.strip("│ ").startswith("hart0 "))
    assert f"{rep['agents']['hart0']['stalls']['tile']:,}" in row


@pytest.mark.parametrize("mode", ["eager", "timed"])
def test_a_snapshot_keeps_the_times_of_harts_and_engines(mode):
    """Stopped between a dispatch and its wait, snapshotted and restored, the model ends with
    the report of a run never stopped."""
    from tessera.errors import BudgetExceeded

    _whole, whole = run(LOAD_MMA, **{"tile.mode": mode})
    stopped = machine(LOAD_MMA, cycles="tile", **{"tile.mode": mode})
    with pytest.raises(BudgetExceeded):
        stopped.run(max_steps=4)
    restored = Machine.restore(stopped.snapshot(), host=host())
    result = restored.run(max_steps=10_000)
    assert result.exit_code == 0
    assert tessera_cycles.report(restored) == whole
    assert whole["units"]["hart0.mma"]["instructions"] == 1


def test_a_memory_wait_with_a_threshold_waits_for_all_but_the_newest():
    source = """
        la      a0, buf
        tld.g.us t4, (a0)
        tld.g.us t5, (a0)
        twait.mem ld=1
        li      a0, 0
        li      a7, 93
        ecall
        .align 6
buf:    .space  1024
"""
    m, rep = run(source, **{"cycles.caches": False})
    # loads dispatched at 6 and 8 complete at 338 and 370 (see the queueing test); ld=1
    # leaves one outstanding: the wait, in EX at 9, is held until the first completes
    assert rep["agents"]["hart0"]["stalls"]["tile"] == 338 - 9
    assert rep["agents"]["hart0"]["cycles"] == 338 + 3 + 2
    assert m.clock == rep["units"]["hart0.lsu"]["done_at"] == 370    # the second load still counts


def test_a_successful_mbarrier_try_wait_waits_for_the_tma_that_completes_it():
    source = """
        li      a3, 0x400               # the mbarrier, in shared memory
        li      t1, 1
        tmbar.init a3, t1
        li      t2, 256
        tmbar.arrive_tx zero, a3, t2
        la      t0, src
        li      t1, 0
        tmv.tx  t8, t2, 0, ew=w
        tmv.vt  v1, t8, 0
        tma.linear t1, t0, v1, dst=shared, mbar=a3
poll:   tmbar.try_wait a4, a3, zero
        beqz    a4, poll
        li      a0, 0
        li      a7, 93
        ecall
        .align 6
src:    .space  256
"""
    m = machine(source, cycles="tile", **{"cycles.caches": False, "tile.mbar_instructions": True})
    program = assemble(m.arch, source, base=BASE)
    assert m.run(max_steps=10_000).exit_code == 0
    rep = tessera_cycles.report(m)
    assert rep is not None
    # no stall before the TMA: its W0 (the word before `poll`) is in EX in cycle 3 + its index
    dispatch = 3 + (program.symbols["poll"] - BASE) // 4 - 1
    done = dispatch + 256 // 64 + 400
    assert rep["units"]["hart0.tma"]["done_at"] == done
    # eager mode: the first try_wait returns 1 and is held in EX until the copy completed;
    # then beqz (predicted not taken), li, li, ecall
    assert rep["agents"]["hart0"]["stalls"]["tile"] == done - (dispatch + 1)
    assert rep["agents"]["hart0"]["cycles"] == m.clock == done + 4 + 2
