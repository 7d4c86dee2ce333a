"""Fault specs: the compact text ``--fault`` takes, its canonical form, and one-line refusals."""

from __future__ import annotations

import pytest

from tessera.errors import ConfigError
from tessera_faults import Fault, parse_trigger


def test_a_spec_reads_into_a_fault_and_back_to_its_canonical_text():
    fault = Fault.parse(" at=retired:1000, model=flip , target=x5,bit=3")
    assert (fault.target, fault.model, fault.bit, fault.k, fault.at) == ("x5", "flip", 3, 1, "retired:1000")
    assert str(fault) == "target=x5,bit=3,at=retired:1000"          # fixed key order, defaults left out
    assert Fault.parse(str(fault)) == fault
    stuck = Fault.parse("target=mem[0x100],model=stuck1,bit=0x2,k=2,window=10,seed=7,at=pc:0x40#3@hart0")
    assert (stuck.bit, stuck.k, stuck.window, stuck.seed) == (2, 2, 10, 7)
    assert str(stuck) == "target=mem[0x100],model=stuck1,bit=2,k=2,at=pc:0x40#3@hart0,window=10,seed=7"


@pytest.mark.parametrize(("text", "kind", "value", "name", "count", "agent"), [
    ("retired:1000", "retired", 1000, "", 1, None),
    ("retired:0x10@t1", "retired", 16, "", 1, "t1"),
    ("step:5", "step", 5, "", 1, None),
    ("cycle:300", "cycle", 300, "", 1, None),
    ("pc:0x10010", "pc", 0, "0x10010", 1, None),
    ("pc:loop#20@hart0", "pc", 0, "loop", 20, "hart0"),
    ("class:LOAD#3", "class", 0, "load", 3, None),
])
def test_triggers(text, kind, value, name, count, agent):
    trigger = parse_trigger(text)
    assert (trigger.kind, trigger.value, trigger.name, trigger.count, trigger.agent) == (kind, value, name, count,
                                                                                         agent)
    assert parse_trigger(str(trigger)) == trigger


@pytest.mark.parametrize(("text", "message"), [
    ("target=x5", "needs at=TRIGGER"),
    ("target=x5,at=retired:10,colour=red", "unknown key 'colour'"),
    ("target=x5,at=retired:10,at=step:3", "at is given twice"),
    ("target=x5,at=retired:ten", "retired needs a whole number"),
    ("target=x5,at=retired:-1", "below 0"),
    ("target=x5,at=sometime:3", "write one of retired:N"),
    ("target=x5,at=step:3@hart0", "takes no @AGENT"),
    ("target=x5,at=retired:3#2", "#K counts executions of a pc or class trigger only"),
    ("target=x5,at=pc:0x40#0", "counted from 1"),
    ("target=x5,model=melt,at=step:1", "model=melt: choose from flip, random, zero"),
    ("target=x5,spread=wide,at=step:1", "spread=wide"),
    ("target=x5,k=0,at=step:1", "k=0"),
    ("target=x5,bit=three,at=step:1", "bit=three is not a whole number"),
    ("target=x5,window=4,at=step:1", "window= is the length of a stuck-at"),
    ("model=skip,bit=3,at=step:1", "takes no bit"),
    ("target=x5,at=class:load", "give no target"),
    ("model=skip,at=class:load", "not a class one"),
    ("model=flip,at=step:1", "needs target="),
    ("target,at=step:1", "is not KEY=VALUE"),
])
def test_malformed_specs_are_one_line_configuration_errors(text, message):
    with pytest.raises(ConfigError) as info:
        Fault.parse(text)
    assert message in str(info.value)
    assert "\n" not in str(info.value) and info.value.exit_code == 64


def test_a_fault_is_built_and_checked_from_python_too():
    fault = Fault(at="class:store#2", model="random", seed=3)
    assert str(fault) == "model=random,at=class:store#2,seed=3"
    with pytest.raises(ConfigError, match="needs target="):
        Fault(at="step:3")
