"""The size limit: the trace stops at a line boundary with a note; the run goes on."""

from __future__ import annotations

import json

import pytest
from trace_support import RV_LOOP, instructions, retired, rv_machine, trace

import tessera_trace


@pytest.mark.parametrize("limit", [200, 1000, 3000])
def test_text_is_cut_at_a_line_with_a_note(limit):
    full = trace(rv_machine(RV_LOOP), "text")
    machine = rv_machine(RV_LOOP)
    cut = trace(machine, "text", limit=limit)
    lines = cut.splitlines()
    note = lines[-1]
    kept = lines[:-1]
    assert note.startswith(f"# trace cut after {len(kept)} lines (") and f"--trace-limit of {limit} bytes" in note
    assert full.startswith("".join(line + "\n" for line in kept))
    assert len("".join(line + "\n" for line in kept).encode()) <= limit < len(full.encode())
    assert retired(machine) == 55 and machine.agent("hart0").exit_code == 55   # the run went on


def test_jsonl_cut_stays_parsable_and_says_so():
    rows = [json.loads(line) for line in trace(rv_machine(RV_LOOP), "jsonl", limit=1000).splitlines()]
    assert rows[-1]["note"] == "cut" and rows[-1]["limit"] == 1000 and rows[-1]["lines"] == len(rows) - 1
    assert [r["index"] for r in rows[:-1]] == list(range(len(rows) - 1))


def test_perfetto_cut_is_still_valid_json_with_the_note():
    doc = json.loads(trace(rv_machine(RV_LOOP), "perfetto", limit=2000))
    assert "trace cut" in doc["otherData"]["cut"]
    assert [e for e in doc["traceEvents"] if e["name"] == "trace cut"]
    assert 0 < sum(e.get("cat") == "instr" for e in doc["traceEvents"]) < 55


def test_a_limit_larger_than_the_trace_changes_nothing():
    assert trace(rv_machine(RV_LOOP), "text", limit=1 << 20) == trace(rv_machine(RV_LOOP), "text")
    assert len(instructions(trace(rv_machine(RV_LOOP), "text", limit=1 << 20))) == 55


class Full:
    """A stream on a full disk: every write fails."""

    def write(self, data):
        raise OSError(28, "No space left on device")

    def flush(self):
        pass


def test_an_output_that_fails_stops_the_trace_not_the_run():
    machine = rv_machine(RV_LOOP)
    tracer = tessera_trace.attach(machine, "text", Full())
    result = machine.run()
    assert result.reason == "halted" and retired(machine) == 55
    assert tracer.closed and "No space left on device" in tracer.out.failed
