"""Filters restrict a trace to exactly the matching part of the full trace."""

from __future__ import annotations

import pytest
from trace_support import RV_LOOP, TOY_SEM, instructions, records, rv_machine, toy_machine, trace

import tessera_trace
from tessera.errors import ConfigError

LOOP = (0x1000c, 0x10020)        # add .. bne of RV_LOOP


def pc_of(line: str) -> int:
    return int(line.split()[1], 16)


@pytest.mark.parametrize("pc", [LOOP, "0x1000c:0x10020", "loop:0x10020", "65548:65568"])
def test_pc_range_keeps_the_lines_of_those_addresses_with_the_same_effects(pc):
    full = instructions(trace(rv_machine(RV_LOOP), "text"))
    part = instructions(trace(rv_machine(RV_LOOP), "text", pc=pc))
    assert part == [line for line in full if LOOP[0] <= pc_of(line) < LOOP[1]]
    assert len(part) == 50


def test_pc_range_applies_to_jsonl_perfetto_and_profile():
    recs = records(trace(rv_machine(RV_LOOP), "jsonl", pc=LOOP))
    assert {r["pc"] for r in recs} == {0x1000c, 0x10010, 0x10014, 0x10018, 0x1001c}
    assert [r["index"] for r in recs] == list(range(50))       # indices count filtered records
    perfetto = trace(rv_machine(RV_LOOP), "perfetto", pc=(0x1000c, 0x10010))
    assert perfetto.count('"cat":"instr"') == 10
    assert "# tessera trace profile: 10 instructions" in trace(rv_machine(RV_LOOP), "profile",
                                                               pc=(0x10010, 0x10014))


def test_agent_filter_keeps_that_agent_s_lines_only():
    full = instructions(trace(toy_machine(*TOY_SEM, cores=2, quantum=1), "text"))
    part = instructions(trace(toy_machine(*TOY_SEM, cores=2, quantum=1), "text", agents=["core1"]))
    assert part == [line for line in full if line.startswith("core1")]
    assert len(part) == 4


def test_agent_filter_gives_perfetto_tracks_for_the_chosen_agents():
    doc = trace(toy_machine(*TOY_SEM, cores=2, quantum=1), "perfetto", agents=["core0"])
    assert '"core0 (cpu)"' in doc and '"core1 (cpu)"' not in doc and "wait sem0" not in doc


@pytest.mark.parametrize("fmt", ["text", "jsonl"])
def test_window_keeps_records_first_to_last(fmt):
    full = trace(rv_machine(RV_LOOP), fmt).splitlines()
    assert trace(rv_machine(RV_LOOP), fmt, window=(5, 12)).splitlines() == full[5:12]
    assert trace(rv_machine(RV_LOOP), fmt, window="50:").splitlines() == full[50:]
    assert trace(rv_machine(RV_LOOP), fmt, window=":3").splitlines() == full[:3]


def test_window_counts_records_after_the_other_filters():
    full = records(trace(toy_machine(*TOY_SEM, cores=2, quantum=1), "jsonl", agents=["core0"]))
    part = records(trace(toy_machine(*TOY_SEM, cores=2, quantum=1), "jsonl", agents=["core0"], window="2:5"))
    assert part == full[2:5] and [r["index"] for r in part] == [2, 3, 4]


def test_window_applies_to_perfetto_and_profile():
    assert trace(rv_machine(RV_LOOP), "perfetto", window="10:20").count('"cat":"instr"') == 10
    assert "profile: 7 instructions" in trace(rv_machine(RV_LOOP), "profile", window=(48, 1000))


@pytest.mark.parametrize("kw, message", [
    ({"agents": ["core9"]}, "--trace-agent core9: no such agent (agents: hart0)"),
    ({"pc": "0x200:0x100"}, "is empty"),
    ({"pc": (0xF000_0000, 0xF000_1000)}, "outside every mapped region"),
    ({"pc": "start:end"}, "not a number or a symbol"),
    ({"pc": "0x100"}, "expected START:END"),
    ({"window": "10:5"}, "is empty"),
    ({"window": "5"}, "expected FIRST:LAST"),
])
def test_a_filter_that_matches_nothing_is_refused(kw, message, tmp_path):
    out = tmp_path / "t.txt"
    with pytest.raises(ConfigError) as err:
        tessera_trace.attach(rv_machine(RV_LOOP), "text", str(out), **kw)
    assert message in str(err.value) and "\n" not in str(err.value)
    assert not out.exists()                     # refused before the output was opened
