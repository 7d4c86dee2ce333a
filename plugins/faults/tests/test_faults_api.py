"""The Python API: what a host without the plugin can do, an idle plugin, records across snapshots."""

from __future__ import annotations

import pytest
from faults_support import LONG, LOOP, SUM, host, inject, outcome, rv_machine

import tessera_faults
import tessera_riscv.plugin
from tessera.errors import ConfigError
from tessera.machine import Machine
from tessera.plugins import PluginHost


def riscv_only():
    h = PluginHost(load_entry_points=False, use_environment=False)
    h.register(tessera_riscv.plugin, "riscv")
    return h


def test_a_counted_value_fault_needs_no_hook_but_instrumenting_ones_do():
    machine = rv_machine(SUM, host=riscv_only())
    record = inject(machine, "target=a0,bit=1,at=retired:1")     # a pause: no hook involved
    assert outcome(machine)[:2] == ("halted", 14) and record["status"] == "injected"
    for spec in ("model=skip,at=step:3", "target=a0,at=pc:0x10010", "model=zero,at=class:load",
                 "target=a0,model=stuck1,bit=0,at=step:2", "target=insn,bit=1,at=step:2"):
        with pytest.raises(ConfigError, match="the faults plugin must be registered on the machine's host"):
            inject(rv_machine(SUM, host=riscv_only()), spec)


def test_installed_but_idle_the_plugin_weaves_nothing():
    machine = rv_machine(LONG)
    plain = rv_machine(LONG, host=riscv_only())
    assert outcome(machine) == outcome(plain) and machine.state_hash() == plain.state_hash()
    cache = machine.space.decode_cache("rv32im")
    assert cache.blocks and all(ins.blockable for ins in cache.values())
    assert tessera_faults.records(machine) == [] and "faults" not in machine.ext


def snapshot_cycle(source, spec, cut, engine="fast"):
    """The run with ``spec`` cut after ``cut`` steps, snapshotted, restored and armed again."""
    first = rv_machine(source, engine)
    inject(first, spec)
    first.run(max_steps=cut, raise_on_budget=False)
    again = Machine.restore(first.snapshot(), host=host())
    again.set_engine(engine)
    record = inject(again, spec)
    return outcome(again)[:2], again.state_hash(), dict(record)


@pytest.mark.parametrize("spec", [
    "target=a0,bit=2,at=retired:40", "model=skip,at=pc:loop#12", "target=t0,model=stuck0,bit=1,at=step:20,window=15",
    "model=flip,bit=9,at=class:alu#30", "target=insn,bit=21,at=retired:33", "target=t0,model=stuck1,bit=6,at=pc:loop#4,window=12",
    "model=skip,at=retired:21",                                        # pending across the cut at 21
])
@pytest.mark.parametrize("cut", [5, 21, 34, 48])
def test_a_restored_machine_armed_again_ends_as_the_uninterrupted_run(spec, cut):
    whole = rv_machine(LOOP)
    record = inject(whole, spec)
    expected = (outcome(whole)[:2], whole.state_hash(), dict(record))
    assert snapshot_cycle(LOOP, spec, cut) == expected
    assert expected[2]["status"] in ("injected", "stuck")


def test_a_trigger_the_machine_is_past_is_refused():
    machine = rv_machine(LOOP)
    machine.run(max_steps=30, raise_on_budget=False)
    for spec, message in (("target=a0,at=retired:10", "past it \\(30 instructions retired\\)"),
                          ("target=a0,at=step:29", "past it \\(30 steps\\)"),
                          ("target=a0,at=cycle:5", "past it \\(clock 30\\)")):
        with pytest.raises(ConfigError, match=message):
            inject(machine, spec)
    record = inject(machine, "target=a0,bit=0,at=retired:30")      # now: fires as the next run starts
    machine.run(max_steps=1, raise_on_budget=False)
    assert record["status"] == "injected" and record["step"] == 30


def test_records_list_every_fault_in_order():
    machine = rv_machine(LOOP)
    inject(machine, "target=a0,bit=0,at=retired:3")
    inject(machine, tessera_faults.Fault(at="pc:loop#2", model="skip"))
    outcome(machine)
    assert [(r["fault"], r["status"]) for r in tessera_faults.records(machine)] == [
        ("target=a0,bit=0,at=retired:3", "injected"), ("model=skip,at=pc:loop#2", "injected")]
    with pytest.raises(ConfigError, match="a fault is a Fault or its text"):
        inject(machine, 42)
