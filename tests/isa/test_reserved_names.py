"""A field cannot take the name of an attribute the core keeps on a decoded instruction.

Operand fields are stored as attributes of the instruction, beside what the decoder
and the engine put there (``span``, ``semantic``, ``observers`` ...).  A field of the
same name would silently replace the engine's value, so the names are reserved; the
list is derived from what the core really sets, and these tests check that nothing the
core sets after decoding is missing from it.
"""

from __future__ import annotations

import pytest

from tessera.errors import ConfigError
from tessera.isa import Field
from tessera.isa.description import DECODE_ATTRIBUTES, ENGINE_ATTRIBUTES, RESERVED_FIELD_NAMES
from tessera.isa.instruction import ReadOnlyInstruction
from tessera.machine import Machine
from tessera.plugins import PluginHost
from tessera_toyarch import TOY


@pytest.mark.parametrize("name", sorted(RESERVED_FIELD_NAMES))
def test_a_field_named_like_an_instruction_attribute_is_refused(name):
    with pytest.raises(ConfigError, match="reserved"):
        Field(name, "3:0")


def _filled(machine: Machine, pc: int):
    machine.prepare()
    cpu = machine.agents[0]
    return machine.decode_filler(cpu.arch, cpu.space).fill(pc)


def test_every_attribute_the_core_sets_is_reserved():
    m = Machine(TOY, host=PluginHost(load_entry_points=False, use_environment=False),
                config={"echo": False, "cores": 1})
    m.space.write_bytes(0, (0).to_bytes(4, "little"), force=True)  # nop
    ins = _filled(m, 0)
    core_set = set(vars(ins)) - set(ins.operands)
    assert core_set <= RESERVED_FIELD_NAMES, sorted(core_set - RESERVED_FIELD_NAMES)
    assert set(ENGINE_ATTRIBUTES) <= core_set  # the list names what the engine really sets
    assert {"span", "trap"} <= set(DECODE_ATTRIBUTES)


def test_a_filled_instruction_is_read_only_run_included():
    m = Machine(TOY, host=PluginHost(load_entry_points=False, use_environment=False),
                config={"echo": False, "cores": 1})
    m.space.write_bytes(0, (0).to_bytes(4, "little"), force=True)
    ins = _filled(m, 0)
    with pytest.raises(ReadOnlyInstruction, match=r"ins\.span written after decoding"):
        ins.span = 8
    assert ins.span == 4
    before = ins.run
    with pytest.raises(ReadOnlyInstruction, match=r"ins\.run written after decoding"):
        ins.run = ins.semantic  # rows are bound before sealing: nothing rebinds run later
    assert ins.run is before
    assert type(ins).__name__ == "Instruction"
