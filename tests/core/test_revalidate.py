"""Revalidation at the start of a run checks each baked-in value once, not each block's.

``Machine.run`` asks every decode filler's block builder whether the globals, closure
variables and methods its translations baked in still hold (tessera.engine.blocks,
``revalidate``).  A machine run one step at a time (a debugger, ``Machine.step``)
pays that at every step, so it must cost the distinct values, not a walk over every
block's dependencies; and it must still drop exactly the blocks that depend on a
value that changed.
"""

from __future__ import annotations

import attrs
import pytest

from tessera.engine import blocks as blockmod
from tessera.engine import inline
from tessera.machine import Machine
from tessera_toyarch import TOY

from . import contract_semantics as cs
from .conftest import make_host, prog


def _loop(name: str, nops: int) -> tuple:
    return (("li", dict(rd=2, limm=40)), f"{name}:", ("add", dict(rd=3, rs1=3, rs2=2)),
            *[("nop", {})] * nops, ("addi", dict(rd=2, rs1=2, imm=-1)), ("bne", dict(rd=2, rs1=0, boff=name)))


#: three loops, each its own block reading the global ``SCALE`` (and ``MASK``)
PROGRAM = (("li", dict(rd=3, limm=0)), *_loop("one", 0), *_loop("two", 1), *_loop("three", 2),
           ("halt", dict(rd=3)))


@pytest.fixture
def scale():
    saved = cs.SCALE
    cs.SCALE = 1
    yield
    cs.SCALE = saved


def _machine(engine: str = "fast") -> Machine:
    rows = tuple(attrs.evolve(e, semantics=cs.add_scaled) if e.mnemonic == "add" else e for e in TOY.encodings)
    m = Machine(attrs.evolve(TOY, encodings=rows), host=make_host(), config={"echo": False, "cores": 1})
    m.space.write_bytes(0, prog(*PROGRAM), force=True)
    m.set_engine(engine)
    return m


def _scaled_blocks(m: Machine) -> list[blockmod.Block]:
    blocks = m.agents[0]._filler.cache.blocks.values()
    return [b for b in blocks if any(d.kind == "global" and d.name == "SCALE" for d in b.deps)]


def test_each_distinct_value_is_checked_once_per_run(scale, monkeypatch):
    m = _machine()
    m.run(max_steps=100_000)  # all three loops hot and translated
    scaled = _scaled_blocks(m)
    assert len(scaled) == 3, "the loops were not translated: the test would prove nothing"
    every = sum(len(b.deps) for b in m.agents[0]._filler.cache.blocks.values())
    checked: list[str] = []
    holds = inline.Dependency.holds

    def counting(dep: inline.Dependency) -> bool:
        checked.append(dep.name)
        return holds(dep)

    monkeypatch.setattr(inline.Dependency, "holds", counting)
    m.step()
    distinct = {(d.kind, id(d.holder), d.name, id(d.value)): d.name
                for b in m.agents[0]._filler.cache.blocks.values() for d in b.deps}
    assert sorted(checked) == sorted(distinct.values())  # each value once ...
    assert checked.count("SCALE") == 1 and every > len(checked)       # ... not once per block


def test_a_changed_value_drops_exactly_the_blocks_that_baked_it_in(scale):
    m = _machine()
    m.run(max_steps=100_000)
    builder = m.agents[0]._filler.blocks
    scaled = _scaled_blocks(m)
    others = [b for b in builder.blocks.values() if b not in scaled]
    assert builder.revalidate() == 0 and not any(b.stale for b in scaled)
    cs.SCALE = 2
    assert builder.revalidate() == len(scaled) == 3
    assert all(b.stale and builder.blocks.get(b.start) is not b for b in scaled)
    assert all(not b.stale and builder.blocks.get(b.start) is b for b in others)
    assert builder.revalidate() == 0  # dropped once; the next translations read SCALE == 2


def test_runs_around_a_rebinding_agree_with_stepping(scale):
    results = {}
    for engine in ("step", "fast"):
        cs.SCALE = 1
        m = _machine(engine)
        m.run(max_steps=200, raise_on_budget=False)
        cs.SCALE = 3
        for _ in range(50):  # one step per run: each run start revalidates
            m.step()
        cs.SCALE = 1
        results[engine] = m.run(max_steps=100_000).exit_code
        if engine == "fast":
            assert _scaled_blocks(m), "nothing was translated after the rebinding"
    assert results["fast"] == results["step"]
    cs.SCALE = 1
    assert results["step"] != _machine("step").run(max_steps=100_000).exit_code  # the rebinding mattered
