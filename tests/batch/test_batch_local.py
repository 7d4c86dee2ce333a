"""A batch on the local process pool: each result is what ``tessera run`` gives for the same
options, whatever the number of workers, and a worker that dies costs only its spec."""

from __future__ import annotations

import collections
import json
import textwrap

import pytest
from click.testing import CliRunner

from tessera.batch import RESULT_KEYS, HostRecipe, read_results, run_batch
from tessera.cli.main import cli
from tessera.errors import ConfigError
from tessera.plugins import PluginHost

from .conftest import batch_lines, untimed, write_batch


def run_argv(spec: dict) -> list[str]:
    """The ``tessera run`` command line a spec stands for (the keys these tests use)."""
    argv = ["run", spec["program"], "--arch", spec["arch"], "--dump-state", "json"]
    for key, value in spec.get("set", {}).items():
        argv += ["--set", f"{key}={str(value).lower() if isinstance(value, bool) else value}"]
    for key in ("max_steps", "max_cycles", "engine", "until_symbol", "until_pc"):
        if key in spec:
            argv += [f"--{key.replace('_', '-')}", str(spec[key])]
    return argv


def tessera_run(spec: dict, host) -> tuple[object, str, dict]:
    """Exit status, program output and the dumped result of ``tessera run`` for ``spec``."""
    got = CliRunner().invoke(cli, run_argv(spec), obj=host, standalone_mode=False)
    code = got.return_value if got.exception is None else getattr(got.exception, "exit_code", None)
    text = got.stdout
    start = text.index("{\n")          # the program's output comes before the state dump
    return code, text[:start], json.loads(text[start:]).get("result") or {}


def test_results_are_what_tessera_run_gives(programs, toy_host):
    lines = batch_lines()
    summary = run_batch(write_batch(programs / "runs.jsonl", lines), "out.jsonl", workers=2, host=toy_host,
                        progress=False)
    results = read_results("out.jsonl")
    assert summary.total == summary.ran == len(lines) == len(results) and summary.skipped == 0
    assert summary.outcomes == dict(collections.Counter(r["outcome"] for r in results.values()))
    assert {"halted", "budget", "error", "deadlock", "breakpoint"} <= set(summary.outcomes)
    for n, spec in enumerate(lines, 1):
        result = results[spec.get("id", str(n))]
        assert tuple(result) == RESULT_KEYS
        code, stdout, dumped = tessera_run(spec, toy_host)
        assert (result["exit"], result["stdout"]) == (code, stdout), spec
        if dumped:
            assert (result["outcome"], result["steps"], result["cycles"], result["exit_code"]) == \
                (dumped["reason"], dumped["steps"], dumped["cycles"], dumped["exit_code"]), spec
        assert (result["error"] is None) == (result["outcome"] in ("halted", "breakpoint", "trap")), result
    assert results["fault"]["error"].startswith("unhandled trap: ") and results["fault"]["exit"] == 68
    assert results["dead"]["error"].startswith("deadlock: ") and results["dead"]["exit"] == 71
    assert results["sum-2"]["stdout"] == 2 * results["sum-1"]["stdout"] != ""   # both cores print


def test_one_worker_and_two_give_the_same_results(programs, toy_host):
    batch = write_batch(programs / "runs.jsonl", batch_lines())
    run_batch(batch, "one.jsonl", workers=1, host=toy_host, progress=False)
    run_batch(batch, "two.jsonl", workers=2, host=toy_host, progress=False)
    one, two = read_results("one.jsonl"), read_results("two.jsonl")
    assert len(one) == len(batch_lines())
    assert untimed(one) == untimed(two)


KILLER = textwrap.dedent("""\
    import os
    import signal

    import tessera

    TESSERA_API_VERSION = 1


    @tessera.hookimpl
    def tessera_run_configure(machine, options):
        if "die" in machine.symbols:   # a program with this label kills its worker
            os.kill(os.getpid(), signal.SIGKILL)
    """)


def test_a_worker_that_dies_costs_only_its_spec(programs, toy_host, monkeypatch):
    (programs / "batch_killer_plugin.py").write_text(KILLER)
    (programs / "die.s").write_text("_start: nop\ndie:    halt r0\n")
    monkeypatch.syspath_prepend(str(programs))
    toy_host.load_module("killer=batch_killer_plugin")
    lines = [{"id": "before", "program": "sum.s", "arch": "toy", "set": {"cores": 1}},
             {"id": "die", "program": "die.s", "arch": "toy", "set": {"cores": 1}},
             {"id": "after", "program": "sum.s", "arch": "toy", "set": {"cores": 2}}]
    summary = run_batch(lines, "out.jsonl", workers=1, host=toy_host, progress=False)
    results = read_results("out.jsonl")
    assert summary.outcomes == {"error": 1, "halted": 2}
    died = results["die"]
    assert (died["outcome"], died["exit"]) == ("error", 128 + 9)   # as a shell shows SIGKILL
    assert died["error"] == "the worker process running this spec died (killed by SIGKILL)"
    assert results["after"]["exit"] == results["before"]["exit"] == 55  # a fresh worker went on


def test_a_plugin_object_cannot_travel_to_workers(programs, toy_host):
    class Tool:
        TESSERA_API_VERSION = 1

    toy_host.register(Tool(), "tool")
    with pytest.raises(ConfigError, match="plugin tool is an object registered in this process"):
        run_batch([{"program": "sum.s", "arch": "toy"}], "out.jsonl", host=toy_host, progress=False)


class Tool:
    """A plugin object a module defines: workers import it by its name in the module."""

    TESSERA_API_VERSION = 1


TOOL, OTHER = Tool(), Tool()


def test_the_recipe_keeps_the_selection(toy_host):
    recipe = HostRecipe.from_host(toy_host)
    assert recipe == HostRecipe(entry_points=False, modules=("toy=tessera_toyarch.plugin",))
    rebuilt = recipe.build()
    assert sorted(rebuilt.architectures()) == ["toy"]
    disabled = HostRecipe(entry_points=False, disabled=("toy",), modules=("toy=tessera_toyarch.plugin",))
    assert disabled.build().architectures() == {}
    toy_host.register(TOOL, "tool")
    toy_host.load_module(f"klass={__name__}:Tool")
    assert HostRecipe.from_host(toy_host).modules == (
        "toy=tessera_toyarch.plugin", f"tool={__name__}:TOOL", f"klass={__name__}:Tool")
    named = PluginHost(load_entry_points=False, use_environment=False,
                       extra_modules=[f"later={__name__}:OTHER"])   # named, not imported yet
    assert HostRecipe.from_host(named).modules == (f"later={__name__}:OTHER",)


def test_workers_must_be_at_least_one(programs, toy_host):
    with pytest.raises(ConfigError, match="workers must be at least 1, not 0"):
        run_batch([{"program": "sum.s", "arch": "toy"}], "out.jsonl", workers=0, host=toy_host)


def test_tool_options_reach_the_tool_plugins(programs, toy_host):
    """``options`` are the tool plugins' ``tessera run`` options: here the trace plugin's,
    to a file and to the run's captured standard output."""
    pytest.importorskip("tessera_trace")
    toy_host.load_module("trace=tessera_trace.plugin")
    to_file = {"trace": "text", "trace-out": str(programs / "sum.trace")}
    lines = [{"id": "file", "program": "sum.s", "arch": "toy", "set": {"cores": 1}, "options": to_file},
             {"id": "stdout", "program": "sum.s", "arch": "toy", "set": {"cores": 1},
              "options": {"trace": ["text"], "trace_out": ["-"]}}]
    run_batch(lines, "out.jsonl", workers=2, host=toy_host, progress=False)
    results = read_results("out.jsonl")
    trace = (programs / "sum.trace").read_text()
    assert len(trace.splitlines()) == results["file"]["steps"] and "li r2, 10" in trace
    assert results["stdout"]["stdout"] == results["file"]["stdout"] + trace   # the program's "h\n", then the trace
    with pytest.raises(ConfigError, match=r"spec 1: options: Invalid value for '--trace'"):
        run_batch([dict(lines[0], options={"trace": "nope"})], "out.jsonl", host=toy_host)
