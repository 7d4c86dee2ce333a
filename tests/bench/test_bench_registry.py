"""The ``tessera_bench_workloads`` hook: what plugins offer, in what order, and what a bad
answer costs the plugin; the report built from contributed workloads and their targets.

Plugins here are small objects registered on hosts that ignore the environment; their
workloads do no emulation (a counted loop), so these tests run in milliseconds.
"""

from __future__ import annotations

import io

import pytest
from rich.console import Console

import tessera
from tessera.bench.model import Context, Sample, Skip, Variant, Workload
from tessera.bench.registry import offered_workloads, unavailable_plugins
from tessera.bench.report import print_text, to_json
from tessera.bench.runner import UnknownWorkload, run_bench
from tessera.bench.targets import Target
from tessera.logs import collect
from tessera.plugins import PluginHost


class Counting(Workload):
    """Counts to ``size`` in Python: a checked result, a rate, a derived number."""

    name = "counting"
    title = "a counted loop"
    unit = "steps"
    order = 5
    targets = (Target("counting-fast", "counting, more than one step per second",
                      ("counting", "derived", "steps_per_second"), 1.0, True, "x"),)

    def prepare(self, ctx: Context) -> list[Variant]:
        self.n = ctx.size(1000)
        self.size = {"steps": self.n}
        self.check = {"what": "the count", "expected": self.n}
        return [Variant("loop", self._run, "a Python loop")]

    def _run(self) -> Sample:
        count = 0
        for _ in range(self.n):
            count += 1
        return Sample(1e-3, count)

    def derive(self, best: dict[str, Sample]) -> dict[str, float]:
        return {"steps_per_second": best["loop"].rate}

    @classmethod
    def comparison(cls, entry, variant):
        return [f"{entry['derived']['steps_per_second']:.0f} steps/s counted"]


class Missing(Workload):
    name = "missing"
    title = "needs what is not here"
    order = 5

    def prepare(self, ctx: Context) -> list[Variant]:
        raise Skip("the thing it measures is not installed")


class Offers:
    TESSERA_API_VERSION = 1

    def __init__(self, *classes):
        self.classes = list(classes)

    @tessera.hookimpl
    def tessera_bench_workloads(self, host):
        assert isinstance(host, PluginHost)
        return self.classes


class Raises:
    TESSERA_API_VERSION = 1

    @tessera.hookimpl
    def tessera_bench_workloads(self):
        raise RuntimeError("bench module is broken")


def host_with(**plugins) -> PluginHost:
    host = PluginHost(load_entry_points=False, use_environment=False)
    for name, plugin in plugins.items():
        host.register(plugin, name)
    return host


def test_plugins_offer_workloads_in_their_order_then_by_name():
    late = type("Late", (Counting,), {"name": "late", "order": 50})
    host = host_with(a=Offers(late), b=Offers(Missing, Counting))
    assert list(offered_workloads(host)) == ["counting", "missing", "late", "startup"]


def test_a_name_offered_twice_keeps_the_first_offer():
    again = type("Again", (Counting,), {"title": "another counter"})
    host = host_with(first=Offers(Counting), second=Offers(again))
    with collect() as events:
        offered = offered_workloads(host)
    assert offered["counting"] is again          # hooks are called last-registered first
    (event,) = [e for e in events if e["event"].startswith("workload offered twice")]
    assert (event["kept"], event["dropped"], event["workload"]) == ("plugin second", "plugin first", "counting")
    clash = host_with(p=Offers(type("S", (Counting,), {"name": "startup"})))
    assert offered_workloads(clash)["startup"].__module__ == "tessera.bench.startup"   # the core's wins


@pytest.mark.parametrize("answer", [["not a class"], [int], [type("Nameless", (Workload,), {})]])
def test_a_bad_answer_marks_the_plugin_failed(answer):
    host = host_with(bad=Offers(*answer), good=Offers(Counting))
    assert list(offered_workloads(host)) == ["counting", "startup"]
    record = host.records["bad"]
    assert record.status == "failed" and "not a named tessera.bench Workload subclass" in record.reason


def test_a_raising_hook_marks_the_plugin_failed():
    host = host_with(broken=Raises(), good=Offers(Counting))
    assert list(offered_workloads(host)) == ["counting", "startup"]
    assert "bench module is broken" in host.records["broken"].reason


def test_installed_but_inactive_plugins_are_named_in_notes():
    host = PluginHost(disabled=["phoenix"], use_environment=False)
    notes = unavailable_plugins(host)
    assert notes == ["plugin phoenix is disabled (disabled by user): workloads it offers are not run"]
    assert unavailable_plugins(host_with(good=Offers(Counting))) == []


def test_a_contributed_workload_is_run_checked_and_held_to_its_target():
    host = host_with(counter=Offers(Missing, Counting))
    report = run_bench(host, only=["counting", "missing"], repeat=2, scale=0.01)
    entry = report["workloads"]["counting"]
    assert entry["status"] == "ok" and entry["size"] == {"steps": 10}
    assert entry["variants"]["loop"]["count"] == 10 and entry["check"]["samples_checked"] == 2
    assert entry["vs_riscemu"] is None and entry["derived"] == {"steps_per_second": 10_000.0}
    assert report["workloads"]["missing"]["note"] == "the thing it measures is not installed"
    targets = {t["name"]: t for t in report["targets"]}
    assert targets["counting-fast"]["met"] is True and targets["startup-version"]["met"] is None
    assert list(targets) == ["counting-fast", "startup-version"]   # in the order of the workloads read
    assert "counting" in to_json(report) and report.classes == {"counting": Counting, "missing": Missing}


def test_the_text_report_asks_the_workload_for_its_comparison():
    report = run_bench(host_with(counter=Offers(Counting)), only=["counting"], repeat=1, scale=0.01)
    report.notes.append("plugin x is disabled (disabled by user): workloads it offers are not run")
    out = io.StringIO()
    print_text(report, Console(file=out, width=200))
    text = out.getvalue()
    assert "10000 steps/s counted" in text and "0.010 M steps/s" in text
    assert "note: plugin x is disabled" in text


def test_a_full_run_notes_the_inactive_plugins_a_selected_run_does_not(monkeypatch):
    monkeypatch.setattr("tessera.bench.registry.core_workloads", lambda: [])   # no child processes
    host = host_with(broken=Raises(), good=Offers(Counting))
    full = run_bench(host, repeat=1, scale=0.01)
    assert list(full["workloads"]) == ["counting"]
    assert full.notes == ["plugin broken is failed (tessera_bench_workloads raised RuntimeError: "
                          "bench module is broken): workloads it offers are not run"]
    assert run_bench(host, only=["counting"], repeat=1, scale=0.01).notes == []


def test_only_a_workload_nobody_offers_is_refused():
    with pytest.raises(UnknownWorkload, match=r"workload\(s\) counting not available: .*available: startup"):
        run_bench(host_with(), only=["counting"])


def test_a_workload_finds_another_workloads_program_through_the_context():
    ctx = Context(host_with(), workloads={"counting": Counting})
    with pytest.raises(Skip, match="workload 'counting' offers no program to other workloads"):
        ctx.program("counting", 10)
    with pytest.raises(Skip, match="workload 'rv32', whose program this one runs, is not offered"):
        ctx.program("rv32", 10)
