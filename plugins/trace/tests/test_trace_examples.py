"""Every installed architecture's bundled examples, traced in every format.

Tracing must observe and change nothing: each traced run ends in exactly the state of
the untraced run, and every retired instruction has exactly one record — and so has
every instruction an expander issued (Tensix MOP/REPLAY), the same number in every format.
"""

from __future__ import annotations

import io
import json
import re

import pytest

import tessera_trace
from tessera.cli.demo import load_example
from tessera.machine import Machine
from tessera.plugins import PluginHost

HOST = PluginHost(use_environment=False)      # the installed plugins, trace among them
# small memories: state hashes read every byte of RAM
SMALL = {"rv32im": {"ram": 1 << 20}, "rv64im": {"ram": 1 << 20}, "phoenix": {"dram": 1 << 20}}
EXAMPLES = [(arch, example) for name, (arch, _plugin) in sorted(HOST.architectures().items())
            for example in arch.examples]


def build(arch, example) -> Machine:
    machine = Machine(arch, host=HOST, config={"echo": False, **SMALL.get(arch.name, {})})
    load_example(machine, example)   # assembly, or a program file (the tiles' prebuilt kernel)
    return machine


#: a text line of an issued instruction: its disassembly is indented (docs/trace.md)
ISSUED_LINE = re.compile(r"^\S+ +[0-9a-f]+  [0-9a-f]+ {4,}\S")


def count(fmt: str, text: str) -> tuple[int, int | None]:
    """(records of fetched instructions, records of issued ones; None: the format does not tell)."""
    if fmt == "text":
        lines = [line for line in text.splitlines() if not line.startswith("#")]
        issued = sum(bool(ISSUED_LINE.match(line)) for line in lines)
        return len(lines) - issued, issued
    if fmt == "jsonl":
        rows = [row for row in map(json.loads, text.splitlines()) if "note" not in row]
        issued = sum("issued_by" in row for row in rows)
        return len(rows) - issued, issued
    if fmt == "perfetto":
        events = [e for e in json.loads(text)["traceEvents"] if e.get("cat") == "instr"]
        issued = sum("issued_by" in e["args"] for e in events)
        return len(events) - issued, issued
    return int(text.split()[4]), None           # "# tessera trace profile: N instructions ..."


@pytest.mark.parametrize("arch, example", EXAMPLES, ids=[f"{a.name}:{e.name}" for a, e in EXAMPLES])
def test_examples_trace_completely_and_end_as_untraced(arch, example):
    assert "trace" in HOST.records and HOST.records["trace"].status == "active"
    plain = build(arch, example)
    plain.run(max_steps=example.max_steps)
    issued_counts = set()
    for fmt in tessera_trace.FORMATS:
        machine = build(arch, example)
        out = io.StringIO()
        tessera_trace.attach(machine, fmt, out, autoclose="run")
        result = machine.run(max_steps=example.max_steps)
        problem = example.check(machine, result) if example.check is not None else None
        assert problem is None, (fmt, problem)
        assert machine.state_hash() == plain.state_hash(), fmt
        fetched, issued = count(fmt, out.getvalue())
        if issued is None:                      # the profile counts both
            assert fetched == sum(a.instret for a in machine.cpus) + issued_counts.pop(), fmt
        else:
            assert fetched == sum(a.instret for a in machine.cpus), fmt
            issued_counts.add(issued)
            assert len(issued_counts) == 1, (fmt, issued_counts)
