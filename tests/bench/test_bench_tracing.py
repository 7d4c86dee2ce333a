"""The trace plugin's ``tracing`` workload: the right hosts, one file per format, slowdowns
from the reported rates, and notes (not failures) for a format that does not attach or
a program that is missing.

The workload lives in the trace plugin (``tessera_trace.bench``) and runs the riscv
plugin's ``rv32`` program, found through the bench (``Context.program``).
"""

from __future__ import annotations

import pytest

import tessera_trace
import tessera_trace.bench

FORMATS = ("text", "jsonl", "perfetto", "profile")


@pytest.fixture
def attached(monkeypatch):
    """Every format the workload attaches, through the real ``tessera_trace.attach``."""
    formats: list[str] = []
    real = tessera_trace.attach

    def attach(machine, fmt, path, **options):
        formats.append(fmt)
        return real(machine, fmt, path, **options)

    monkeypatch.setattr(tessera_trace, "attach", attach)
    return formats


def test_every_format_is_measured_and_compared_with_the_untraced_run(bench, attached):
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
    assert sorted(attached) == sorted(FORMATS * 3)
    target = {t["name"]: t for t in run.report["targets"]}["text-tracing"]
    assert target["value"] == entry["derived"]["slowdown"]["text"]


def test_a_format_that_does_not_attach_is_skipped_with_a_note(bench, monkeypatch):
    real = tessera_trace.attach

    def attach(machine, fmt, path, **options):
        if fmt == "perfetto":
            raise ValueError("no such format 'perfetto'")
        return real(machine, fmt, path, **options)

    monkeypatch.setattr(tessera_trace, "attach", attach)
    run = bench("--json", "--only", "tracing")
    assert run.code == 0, run.err
    entry = run.report["workloads"]["tracing"]
    assert "perfetto" not in entry["variants"] and "perfetto" not in entry["derived"]["slowdown"]
    assert "no such format 'perfetto'" in entry["skipped_variants"]["perfetto"]
    assert set(entry["derived"]["slowdown"]) == {"text", "jsonl", "profile"}


def test_a_tracer_that_writes_nothing_skips_its_format(bench, monkeypatch):
    class Silent:
        def close(self):
            return None

    monkeypatch.setattr(tessera_trace, "attach", lambda machine, fmt, path: Silent())
    entry = bench("--json", "--only", "tracing").report["workloads"]["tracing"]
    assert entry["status"] == "ok" and list(entry["variants"]) == ["untraced", "idle-plugin"]
    assert entry["skipped_variants"] == {fmt: f"the {fmt} tracer wrote nothing to its file" for fmt in FORMATS}


def test_without_the_trace_plugin_the_workload_is_not_offered(bench):
    run = bench("--no-plugin", "trace", "bench", "--json", "--only", "rv32")
    assert run.code == 0, run.err
    assert "text-tracing" not in {t["name"] for t in run.report["targets"]}
    run = bench("--no-plugin", "trace", "bench", "--only", "tracing")
    assert run.code == 2 and "unknown workload 'tracing'" in run.err


def test_the_workload_is_the_trace_plugins_offer():
    assert tessera_trace.plugin.tessera_bench_workloads() == [tessera_trace.bench.TracingOverhead,
                                                              tessera_trace.bench.MarkTracing]
