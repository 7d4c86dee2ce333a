"""The fast engine never gives a silently different answer (issue 14, section 1).

Translations bake in values from outside the instruction: module globals, closure
variables, agent methods.  These tests change such values between machines, between
runs and during a run, and mutate a decoded instruction, and require the fast engine
to agree with the step engine (which reads everything when it runs) every time.
Each case first checks that the change matters (the answers differ), so agreement
is not vacuous.
"""

from __future__ import annotations

import attrs
import pytest

from tessera.engine import blocks as blockmod
from tessera.errors import PluginError
from tessera.machine import Machine
from tessera_toyarch import TOY

from . import contract_semantics as cs
from .conftest import make_host, prog

LOOP = (
    ("li", dict(rd=2, limm=40)),
    ("li", dict(rd=3, limm=0)),
    "loop:",
    ("add", dict(rd=3, rs1=3, rs2=2)),
    ("nop", {}),
    ("addi", dict(rd=2, rs1=2, imm=-1)),
    ("bne", dict(rd=2, rs1=0, boff="loop")),
    ("halt", dict(rd=3)),
)


def arch_with(**semantics):
    rows = tuple(attrs.evolve(e, semantics=semantics[e.mnemonic]) if e.mnemonic in semantics else e
                 for e in TOY.encodings)
    return attrs.evolve(TOY, encodings=rows)


def machine(arch, engine, code=None):
    m = Machine(arch, host=make_host(), config={"echo": False, "cores": 1})
    m.space.write_bytes(0, code or prog(*LOOP), force=True)
    m.set_engine(engine)
    return m


def exit_code(arch, engine, **run):
    return machine(arch, engine).run(max_steps=100_000, **run).exit_code


def translated(m):
    cpu = m.agents[0]
    return [b for b in cpu._filler.cache.blocks.values() if b.n != blockmod.NEVER and b.inlined]


@pytest.fixture
def restore_globals():
    saved = cs.SCALE, cs.STEP
    yield
    cs.SCALE, cs.STEP = saved


def test_a_global_rebound_between_two_machines(restore_globals):
    arch = arch_with(add=cs.add_scaled)
    cs.SCALE = 1
    first = machine(arch, "fast")
    one = first.run(max_steps=100_000).exit_code
    assert translated(first), "the loop was not translated: the test would prove nothing"
    cs.SCALE = 3
    three_fast = exit_code(arch, "fast")
    three_step = exit_code(arch, "step")
    assert one != three_step
    assert three_fast == three_step == 3 * one


def test_a_global_rebound_between_two_runs_of_one_machine(restore_globals):
    arch = arch_with(add=cs.add_scaled)
    results = {}
    for engine in ("step", "fast"):
        cs.SCALE = 1
        m = machine(arch, engine)
        m.run(max_steps=80, raise_on_budget=False)  # the loop is hot and translated by now
        cs.SCALE = 5
        results[engine] = m.run(max_steps=100_000).exit_code
    assert results["fast"] == results["step"]
    cs.SCALE = 1
    assert results["step"] != exit_code(arch, "step")


def test_module_state_the_module_rebinds_itself_is_read_at_run_time(restore_globals):
    arch = arch_with(add=cs.add_stepped, nop=cs.nop_stepping)
    results = {}
    for engine in ("step", "fast"):
        cs.STEP = 1
        m = machine(arch, engine)
        results[engine] = m.run(max_steps=100_000).exit_code
        if engine == "fast":
            assert any(b.inlined for b in translated(m))
    assert results["fast"] == results["step"]


def test_a_closure_variable_rebound_between_machines():
    add, rescale = cs.make_add(1)
    arch = arch_with(add=add)
    one = exit_code(arch, "fast")
    rescale(4)
    assert exit_code(arch, "fast") == exit_code(arch, "step") == 4 * one


def test_translations_record_what_they_baked_in(restore_globals):
    arch = arch_with(add=cs.add_scaled)
    m = machine(arch, "fast")
    m.run(max_steps=100_000)
    deps = [d for b in translated(m) for d in b.deps]
    scale = [d for d in deps if d.kind == "global" and d.name == "SCALE"]
    assert scale and all(d.holds() for d in deps)
    cs.SCALE = 2
    assert not scale[0].holds()
    assert scale[0].describe() == f"module global {cs.__name__}.SCALE"


@pytest.mark.parametrize("engine", ["step", "fast"])
def test_writing_a_decoded_instruction_is_an_error_on_both_engines(engine):
    arch = arch_with(addi=cs.addi_mutating)
    with pytest.raises(PluginError, match=r"ins\.imm written after decoding \(addi at 0x"):
        machine(arch, engine).run(max_steps=100_000)
