"""Every installed architecture's bundled examples, traced in every format.

Tracing must observe and change nothing: each traced run ends in exactly the state of
the untraced run, and every retired instruction has exactly one record.
"""

from __future__ import annotations

import io
import json

import pytest

import tessera_trace
from tessera.isa.asm import assemble
from tessera.loaders.common import place
from tessera.machine import Machine
from tessera.plugins import PluginHost

HOST = PluginHost(use_environment=False)      # the installed plugins, trace among them
# small memories: state hashes read every byte of RAM
SMALL = {"rv32im": {"ram": 1 << 20}, "rv64im": {"ram": 1 << 20}, "phoenix": {"dram": 1 << 20}}
EXAMPLES = [(arch, example) for name, (arch, _plugin) in sorted(HOST.architectures().items())
            for example in arch.examples]


def build(arch, example) -> Machine:
    machine = Machine(arch, host=HOST, config={"echo": False, **SMALL.get(arch.name, {})})
    program = assemble(arch, example.source, base=example.load_address)
    for address, blob in program.segments:
        place(machine, address, blob, what=example.name)
    machine.symbols.update(program.symbols)
    machine.set_entry(program.entry if program.entry is not None else example.load_address)
    return machine


def count(fmt: str, text: str) -> int:
    if fmt == "text":
        return sum(not line.startswith("#") for line in text.splitlines())
    if fmt == "jsonl":
        return sum("note" not in json.loads(line) for line in text.splitlines())
    if fmt == "perfetto":
        return sum(e.get("cat") == "instr" for e in json.loads(text)["traceEvents"])
    return int(text.split()[4])                 # "# tessera trace profile: N instructions ..."


@pytest.mark.parametrize("arch, example", EXAMPLES, ids=[f"{a.name}:{e.name}" for a, e in EXAMPLES])
def test_examples_trace_completely_and_end_as_untraced(arch, example):
    assert "trace" in HOST.records and HOST.records["trace"].status == "active"
    plain = build(arch, example)
    plain.run(max_steps=example.max_steps)
    for fmt in tessera_trace.FORMATS:
        machine = build(arch, example)
        out = io.StringIO()
        tessera_trace.attach(machine, fmt, out, autoclose="run")
        result = machine.run(max_steps=example.max_steps)
        problem = example.check(machine, result) if example.check is not None else None
        assert problem is None, (fmt, problem)
        assert machine.state_hash() == plain.state_hash(), fmt
        assert count(fmt, out.getvalue()) == sum(a.instret for a in machine.cpus), fmt
