"""The Python API: attach/close, lifetimes, caches and watches, snapshots, streams."""

from __future__ import annotations

import gc
import io
import weakref

import pytest
from trace_support import RV_LOOP, RV_TINY, RV_TINY_TEXT, instructions, retired, rv_machine

import tessera_riscv.plugin
import tessera_trace
from tessera.errors import ConfigError
from tessera.machine import Machine
from tessera.plugins import PluginHost
from tessera_riscv import RV32IM


def observed(machine) -> list:
    """The observers woven into the machine's decode-cache entries."""
    cache = machine.space.decode_cache(machine.arch.name)
    return [ob for ins in cache.values() for ob in getattr(ins, "observers", ())]


def watched(machine) -> bool:
    return any(type(r).__name__ == "Watched" for r in machine.space.regions)


def test_attach_needs_the_plugin_on_the_machine_s_host():
    host = PluginHost(load_entry_points=False, use_environment=False)
    host.register(tessera_riscv.plugin, "riscv")
    with pytest.raises(ConfigError, match="does not have the trace plugin"):
        tessera_trace.attach(Machine(RV32IM, host=host, config={"ram": 1 << 20}), "text", io.StringIO())
    with pytest.raises(ConfigError, match="does not have the trace plugin"):
        tessera_trace.attach(Machine(RV32IM, config={"ram": 1 << 20}), "text", io.StringIO())


def test_installed_but_unused_the_plugin_weaves_nothing():
    machine = rv_machine(RV_LOOP)
    machine.run(max_steps=1000)
    assert observed(machine) == [] and not watched(machine)
    assert tessera_trace.tracers_of(machine) == []


def test_attaching_after_a_run_flushes_the_cache_so_the_rest_is_traced():
    machine = rv_machine(RV_TINY)
    machine.run(max_steps=3, raise_on_budget=False)
    assert machine.space.decode_cache("rv32im") and not observed(machine)
    out = io.StringIO()
    tracer = tessera_trace.attach(machine, "text", out)
    assert not machine.space.decode_cache("rv32im")           # flushed
    assert watched(machine)                                    # a prepared machine gets the watch now
    machine.run(max_steps=100)
    assert tracer.closed                                       # halted: closed by default
    assert out.getvalue().splitlines() == RV_TINY_TEXT[3:]


def test_closing_removes_observers_and_watches():
    machine = rv_machine(RV_LOOP)
    tracer = tessera_trace.attach(machine, "text", io.StringIO(), autoclose=None)
    machine.run(max_steps=20, raise_on_budget=False)
    assert observed(machine) and watched(machine)
    tracer.close()
    assert not watched(machine) and tessera_trace.tracers_of(machine) == []
    machine.run(max_steps=20, raise_on_budget=False)
    assert observed(machine) == []


def test_a_budget_stop_keeps_the_tracer_open_and_flushed():
    machine = rv_machine(RV_LOOP)
    out = io.StringIO()
    tracer = tessera_trace.attach(machine, "text", out)
    machine.run(max_steps=10, raise_on_budget=False)
    assert not tracer.closed and len(out.getvalue().splitlines()) == 10     # readable between runs
    machine.run(max_steps=1000)
    assert tracer.closed and len(instructions(out.getvalue())) == retired(machine) == 55


def test_autoclose_run_and_none_and_the_context_manager():
    machine = rv_machine(RV_LOOP)
    tracer = tessera_trace.attach(machine, "profile", io.StringIO(), autoclose="run")
    machine.run(max_steps=5, raise_on_budget=False)
    assert tracer.closed
    machine = rv_machine(RV_LOOP)
    out = io.StringIO()
    with tessera_trace.attach(machine, "profile", out, autoclose=None) as tracer:
        machine.run()
        assert not tracer.closed and out.getvalue() == ""                     # written at the end
    assert tracer.closed and "55 instructions" in out.getvalue()
    with pytest.raises(ConfigError, match="autoclose"):
        tessera_trace.attach(rv_machine(RV_LOOP), "text", io.StringIO(), autoclose="never")


def test_nothing_is_stored_on_the_machine_and_snapshots_carry_no_tracer():
    machine = rv_machine(RV_LOOP)
    out = io.StringIO()
    tracer = tessera_trace.attach(machine, "text", out, autoclose=None)
    machine.run(max_steps=10, raise_on_budget=False)
    assert not any(isinstance(v, tessera_trace.Tracer) for v in vars(machine).values())
    copy = Machine.restore(machine.snapshot(), host=machine.host)
    assert tessera_trace.tracers_of(copy) == []
    copy.run()
    assert observed(copy) == [] and copy.agent("hart0").exit_code == 55
    tracer.close()
    assert len(out.getvalue().splitlines()) == 10


def test_a_closed_tracer_lets_its_machine_go():
    machine = rv_machine(RV_TINY)
    tessera_trace.attach(machine, "jsonl", io.StringIO())
    machine.run()
    ref = weakref.ref(machine)
    del machine
    gc.collect()
    assert ref() is None


def test_outputs_binary_streams_paths_and_stdout(tmp_path, capsys):
    data = io.BytesIO()
    machine = rv_machine(RV_TINY)
    tessera_trace.attach(machine, "text", data)
    machine.run()
    assert data.getvalue().decode().splitlines() == RV_TINY_TEXT and not data.closed
    machine = rv_machine(RV_TINY)
    tessera_trace.attach(machine, "text", tmp_path / "t.txt")
    machine.run()
    assert (tmp_path / "t.txt").read_text().splitlines() == RV_TINY_TEXT
    machine = rv_machine(RV_TINY)
    tessera_trace.attach(machine, "text", "-")
    machine.run()
    assert capsys.readouterr().out.splitlines() == RV_TINY_TEXT


def test_two_tracers_on_one_machine_see_the_same_run():
    machine = rv_machine(RV_LOOP)
    text, jsonl = io.StringIO(), io.StringIO()
    tessera_trace.attach(machine, "text", text)
    tessera_trace.attach(machine, "jsonl", jsonl)
    machine.run()
    single = io.StringIO()
    alone = rv_machine(RV_LOOP)
    tessera_trace.attach(alone, "text", single)
    alone.run()
    assert text.getvalue() == single.getvalue()
    assert len(jsonl.getvalue().splitlines()) == 55


def test_bad_arguments_are_configuration_errors():
    machine = rv_machine(RV_TINY)
    with pytest.raises(ConfigError, match="unknown trace format 'xml'"):
        tessera_trace.attach(machine, "xml", io.StringIO())
    with pytest.raises(ConfigError, match="neither a path nor a writable stream"):
        tessera_trace.attach(machine, "text", 42)
    with pytest.raises(ConfigError, match="--trace-limit must be positive"):
        tessera_trace.attach(machine, "text", io.StringIO(), limit=0)
    tracer = tessera_trace.attach(machine, "text", io.StringIO(), agents="hart0", window=(2, None))
    assert tracer.agent_names == {"hart0"} and tracer.window.first == 2
    tracer.close()
