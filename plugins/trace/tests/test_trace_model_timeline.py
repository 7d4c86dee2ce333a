"""A Perfetto trace gains the timing model's own tracks (``record_timeline``/``trace_events``)."""

from __future__ import annotations

import json

import pytest
from trace_support import RV_LOOP, host, rv_machine, trace

import tessera
from tessera.errors import PluginError
from tessera.machine.clock import NominalTiming


class TimelineModel(NominalTiming):
    """Nominal timing that records a timeline when asked: a span per retirement count query."""

    name = "timeline-test"

    def __init__(self, arch, *, agree=True, fail=None):
        super().__init__(arch)
        self.agree, self.fail, self.asked = agree, fail, 0

    def record_timeline(self):
        self.asked += 1
        if self.fail == "record":
            raise RuntimeError("no room")
        return self.agree

    def trace_events(self):
        if self.fail == "events":
            raise RuntimeError("lost")
        return [
            {"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "units (model time)"}},
            {"name": "MVMUL", "ph": "X", "pid": 1, "tid": 1, "ts": 3, "dur": 6, "cat": "unit"},
            {"name": "process_name", "ph": "M", "pid": 2, "args": {"name": "counters"}},
            {"name": "fifo T0", "ph": "C", "pid": 2, "ts": 4, "args": {"entries": 2}},
        ]


class ModelPlugin:
    TESSERA_API_VERSION = 1

    def __init__(self, **kw):
        self.kw, self.models = kw, []

    @tessera.hookimpl
    def tessera_timing_model(self, machine, arch):
        model = TimelineModel(arch, **self.kw)
        self.models.append(model)
        return model


def machine_with(**kw):
    h = host()
    plugin = ModelPlugin(**kw)
    h.register(plugin, "timeline-test")
    return rv_machine(RV_LOOP, h=h), plugin


def test_the_model_s_tracks_follow_the_agents_own_in_processes_of_their_own():
    machine, plugin = machine_with()
    doc = json.loads(trace(machine, "perfetto"))
    evs = doc["traceEvents"]
    assert plugin.models[0].asked == 1
    names = {e["pid"]: e["args"]["name"] for e in evs if e.get("name") == "process_name"}
    assert names[10] == "units (model time)" and names[11] == "counters"
    (span,) = [e for e in evs if e.get("name") == "MVMUL"]
    assert span["pid"] == 10 and (span["ts"], span["dur"]) == (3, 6)
    (counter,) = [e for e in evs if e.get("ph") == "C"]
    assert counter["pid"] == 11 and counter["args"] == {"entries": 2}
    # the instruction tracks are still there, in their own process
    assert any(e.get("cat") == "instr" and e["pid"] == 1 for e in evs)


def test_a_model_that_declines_adds_nothing():
    machine, plugin = machine_with(agree=False)
    evs = json.loads(trace(machine, "perfetto"))["traceEvents"]
    assert plugin.models[0].asked == 1
    assert not [e for e in evs if e.get("pid", 1) >= 10]


def test_other_formats_do_not_ask_for_a_timeline():
    machine, plugin = machine_with()
    trace(machine, "jsonl")
    assert plugin.models[0].asked == 0


@pytest.mark.parametrize("fail, what", [("record", "record_timeline"), ("events", "trace_events")])
def test_a_failing_model_is_named(fail, what):
    machine, _plugin = machine_with(fail=fail)
    with pytest.raises(PluginError, match=f"timing model failed in {what}") as info:
        trace(machine, "perfetto")
    assert info.value.plugin == "timeline-test"
