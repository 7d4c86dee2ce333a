"""The ``tracing`` workload against a stand-in ``tessera_trace`` (the real plugin is optional).

The stand-in implements the API the bench relies on — ``attach(machine, fmt,
path) -> tracer`` with ``close()``, and a plugin module whose execute-observe hook
traces attached machines — so these tests pin down how the bench uses it: the
right host, one file per format, slowdowns from the reported rates, and a note
(not a failure) for a format or a module that does not work.
"""

from __future__ import annotations

import sys
import types

import pytest

import tessera

FORMATS = ("text", "jsonl", "perfetto", "profile")


def fake_trace_modules(broken: tuple[str, ...] = ()) -> tuple[types.ModuleType, types.ModuleType]:
    tracers: dict[int, Tracer] = {}
    attached: list[str] = []

    class Tracer:
        def __init__(self, path: str) -> None:
            self.path = path
            self.lines: list[str] = []

        def close(self) -> None:
            with open(self.path, "w") as fh:
                fh.write("".join(self.lines))

    def attach(machine, fmt, path, **options):
        if fmt in broken:
            raise ValueError(f"no such format {fmt!r}")
        tracer = tracers[id(machine)] = Tracer(path)
        attached.append(fmt)
        return tracer

    @tessera.hookimpl
    def tessera_execute_observe(machine, ins):
        tracer = tracers.get(id(machine))
        if tracer is None:
            return None
        line = f"{ins.address:08x} {ins.mnemonic}\n"
        return lambda agent, ins: tracer.lines.append(line)

    package = types.ModuleType("tessera_trace")
    plugin = types.ModuleType("tessera_trace.plugin")
    plugin.TESSERA_API_VERSION = 1
    plugin.tessera_execute_observe = tessera_execute_observe
    package.attach = attach
    package.plugin = plugin
    package.tracers = tracers
    package.attached = attached
    return package, plugin


@pytest.fixture
def fake_trace(monkeypatch):
    def install(broken: tuple[str, ...] = ()) -> types.ModuleType:
        package, plugin = fake_trace_modules(broken)
        monkeypatch.setitem(sys.modules, "tessera_trace", package)
        monkeypatch.setitem(sys.modules, "tessera_trace.plugin", plugin)
        return package

    return install


def test_every_format_is_measured_and_compared_with_the_untraced_run(bench, fake_trace):
    package = fake_trace()
    run = bench("--json", "--only", "tracing")
    assert run.code == 0, run.err
    entry = run.report["workloads"]["tracing"]
    assert entry["status"] == "ok" and entry["check"]["passed"]
    v = entry["variants"]
    assert list(v) == ["untraced", "idle-plugin", *FORMATS]
    steps = v["untraced"]["count"]
    for fmt in FORMATS:
        assert v[fmt]["count"] == steps
        assert v[fmt]["bytes"] > 0 and v[fmt]["bytes_per_instruction"] == v[fmt]["bytes"] / steps
        assert entry["derived"]["slowdown"][fmt] == v["untraced"]["rate"] / v[fmt]["rate"]
    assert entry["derived"]["idle_plugin_overhead_percent"] == (
        v["untraced"]["rate"] / v["idle-plugin"]["rate"] - 1.0) * 100.0
    # one attach per traced sample: one round of three samples (the workload's samples_per_round)
    assert sorted(package.attached) == sorted(FORMATS * 3)
    target = {t["name"]: t for t in run.report["targets"]}["text-tracing"]
    assert target["value"] == entry["derived"]["slowdown"]["text"]


def test_a_format_that_does_not_attach_is_skipped_with_a_note(bench, fake_trace):
    fake_trace(broken=("perfetto",))
    run = bench("--json", "--only", "tracing")
    assert run.code == 0, run.err
    entry = run.report["workloads"]["tracing"]
    assert "perfetto" not in entry["variants"] and "perfetto" not in entry["derived"]["slowdown"]
    assert "no such format 'perfetto'" in entry["skipped_variants"]["perfetto"]
    assert set(entry["derived"]["slowdown"]) == {"text", "jsonl", "profile"}


def test_without_the_trace_module_the_workload_is_skipped(bench, monkeypatch):
    monkeypatch.setitem(sys.modules, "tessera_trace", None)     # import raises ImportError
    run = bench("--json", "--only", "tracing")
    assert run.code == 0, run.err
    entry = run.report["workloads"]["tracing"]
    assert entry["status"] == "skipped" and "tessera_trace is not importable" in entry["note"]
    assert {t["name"]: t["met"] for t in run.report["targets"]}["text-tracing"] is None
