"""The template cache (tessera.engine.speccache) makes exactly what specialising afresh makes.

Specialising an instruction is recorded once per semantic function and shape of
operands and copied for every instruction of that shape.  Each test compares the
cached result with :func:`tessera.engine.inline.specialise_now` (the algorithm
without the cache) on a twin context in the same state: the statements (with their
positions), every name bound and the object behind it, the sites used, the register
files and dependencies noted.  A cache that handed back another instruction's
literals, a stale global, a method the agent no longer has, or names that collide
with the block's, fails here.  The block-level passes that replaced generic AST
walks (placing lines, finding loops, fixing positions, rewriting loop returns) are
compared with the originals the same way.
"""

from __future__ import annotations

import ast
import itertools
import sys
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tessera
from tessera.engine import blocks as blockmod
from tessera.engine import inline, speccache
from tessera.errors import TesseraError

from .conftest import Plugin, make_host, new_machine, prog, sum_loop

MASK = 0xFFFF_FFFF
SCALE = 3   # rebound by a test (monkeypatch): a baked-in global that changes
THIS = sys.modules[__name__]


class Ins:
    """A decoded instruction as semantic functions see it: operand fields, ``next``."""

    def __init__(self, **fields: Any) -> None:
        self.address = 0
        self.next = 4
        self.__dict__.update(fields)


# --------------------------------------------------------------------------- semantic functions


def _sem_addi(cpu, ins):
    cpu.r[ins.rd] = (cpu.r[ins.rs1] + ins.imm) & MASK


def _sem_guarded(cpu, ins):
    if ins.rd:
        cpu.r[ins.rd] = ins.imm


def _sem_nibble(cpu, ins):
    cpu.r[ins.rd] = (ins.imm & 0xF0) >> 4


def _sem_scaled(cpu, ins):
    cpu.r[ins.rd] = (cpu.r[ins.rs1] * SCALE) & MASK


def _sem_absolute(cpu, ins):
    cpu.r[ins.rd] = abs(cpu.r[ins.rs1])


def _sem_via_method(cpu, ins):
    cpu.put(ins.rd, cpu.r[ins.rs1] + 1)


def _sem_field_function(cpu, ins):
    cpu.r[ins.rd] = ins.op(cpu.r[ins.rs1])


def _double(v):
    return v * 2


def _negate(v):
    return -v


def _sem_jump_register(cpu, ins):
    r = cpu.r[ins.rs1]
    cpu.r[ins.rd] = r + 1
    return cpu.r[ins.rs2]


def _sem_twice(cpu, ins):
    _put(cpu, ins.rd, _double(cpu.r[ins.rs1]))
    _put(cpu, ins.rs1, _double(cpu.r[ins.rd]))


def _put(cpu, rd, value):
    if rd:
        cpu.r[rd] = value & MASK


class Agent:
    """An agent whose method a semantic function calls (and the engine inlines)."""

    def __init__(self) -> None:
        self.r = [0] * 8

    def put(self, rd, value):
        self.r[rd] = value & MASK


# --------------------------------------------------------------------------- the comparison


def _twins(agent: Any = None, bound: tuple[Any, ...] = (), sites: int = 0) -> tuple[inline.Context, inline.Context]:
    """Two contexts in the same state, as if ``bound`` objects and ``sites`` sites were used before."""
    out = []
    for _ in range(2):
        binder = inline.Binder()
        for i, value in enumerate(bound):
            binder.bind(f"prior{i}", value)
        binder.sites = itertools.count(sites)
        out.append(inline.Context(binder, {"r": "r"}, set(), agent))
    return out[0], out[1]


def _state(ctx: inline.Context) -> tuple[Any, ...]:
    site = next(ctx.binder.sites)
    ctx.binder.sites = itertools.count(site)
    deps = [(d.kind, id(d.holder), d.name, d.value) for d in ctx.deps]
    names = [(n, id(v)) for n, v in ctx.binder.namespace.items()]
    return names, dict(ctx.binder._ids), site, set(ctx.used), deps


def _dump(stmts: list[ast.stmt] | None) -> str | None:
    return None if stmts is None else ast.dump(ast.Module(stmts, []), include_attributes=True)


def same_as_fresh(fn: Any, ins: Any, k: int, cached: inline.Context, fresh: inline.Context, *,
                  last: bool = False) -> list[str] | None:
    """Specialise ``ins`` with the cache in ``cached`` and afresh in ``fresh``; they must agree."""
    got = inline.specialise(fn, ins, k, cached, last=last)
    want = inline.specialise_now(fn, ins, k, fresh, last=last)
    assert _dump(got) == _dump(want)
    assert _state(cached) == _state(fresh)
    if got is not None:
        assert not any(inline.FIELD in n.__dict__ for s in got for n in ast.walk(s))  # no marks leak
    return None if got is None else [ast.unparse(s) for s in got]


@pytest.fixture(autouse=True)
def empty_cache():
    speccache.clear()
    yield
    speccache.clear()


# --------------------------------------------------------------------------- operands


def test_one_recording_serves_every_operand_value():
    shapes = [dict(rd=1, rs1=2, imm=5), dict(rd=7, rs1=0, imm=-3), dict(rd=2, rs1=2, imm=0)]
    seen = []
    for fields in shapes:
        cached, fresh = _twins()
        seen.append(same_as_fresh(_sem_addi, Ins(**fields), 0, cached, fresh))
    assert seen == [["R_r[1] = R_r[2] + 5 & 4294967295"], ["R_r[7] = R_r[0] + -3 & 4294967295"],
                    ["R_r[2] = R_r[2] + 0 & 4294967295"]]
    assert speccache.size() == 1  # recorded once, copied with each instruction's literals


def test_a_folded_test_looks_only_at_truth():
    out = {}
    for rd in (5, 6, 0):
        cached, fresh = _twins()
        out[rd] = same_as_fresh(_sem_guarded, Ins(rd=rd, imm=7), 0, cached, fresh)
    assert out == {5: ["R_r[5] = 7"], 6: ["R_r[6] = 7"], 0: []}
    assert speccache.size() == 2  # rd true (5 and 6 share), rd false


def test_a_folded_computation_keys_on_the_value():
    out = [same_as_fresh(_sem_nibble, Ins(rd=1, imm=imm), 0, *_twins()) for imm in (0x12, 0x34, 0x12)]
    assert out == [["R_r[1] = 1"], ["R_r[1] = 3"], ["R_r[1] = 1"]]
    assert speccache.size() == 2


def test_a_field_bound_by_identity_keys_on_the_object():
    a = same_as_fresh(_sem_field_function, Ins(rd=1, rs1=2, op=_double), 0, *_twins())
    b = same_as_fresh(_sem_field_function, Ins(rd=1, rs1=2, op=_negate), 0, *_twins())
    assert a == ["R_r[1] = R_r[2] * 2"] and b == ["R_r[1] = -R_r[2]"]  # each inlined its own function


def test_the_last_instruction_returns_its_own_next_pc():
    a = same_as_fresh(_sem_addi, Ins(rd=1, rs1=1, imm=1, next=0x40), 3, *_twins(), last=True)
    b = same_as_fresh(_sem_addi, Ins(rd=1, rs1=1, imm=1, next=0x80), 5, *_twins(), last=True)
    assert a[-1] == "return 64" and b[-1] == "return 128"
    assert speccache.size() == 1


# --------------------------------------------------------------------------- names and sites


def test_names_and_sites_continue_the_block_as_a_fresh_specialisation_would():
    cached, fresh = _twins(bound=(_double, len), sites=7)  # `_double` is already bound in this block
    for k, fields in enumerate([dict(rd=1, rs1=2), dict(rd=3, rs1=1), dict(rd=0, rs1=3)]):
        same_as_fresh(_sem_twice, Ins(**fields), k, cached, fresh)
    assert next(cached.binder.sites) > 7


def test_a_local_r_meeting_the_returned_value_is_specialised_as_before():
    # the function's local `r` gets site 3, the returned value is named r_L<k>: with k = 3 they
    # are one name, which keeps the local from being folded away (specialise_now's behaviour)
    out = {k: same_as_fresh(_sem_jump_register, Ins(rd=4, rs1=1, rs2=2, next=0x10), k, *_twins(sites=3),
                            last=True) for k in (2, 3, 4)}
    assert out[2][0] == "R_r[4] = R_r[1] + 1" and out[4][0] == "R_r[4] = R_r[1] + 1"
    assert out[3][:2] == ["r_L3 = R_r[1]", "R_r[4] = r_L3 + 1"]


# --------------------------------------------------------------------------- outside values


def test_a_rebound_global_is_read_again(monkeypatch):
    assert same_as_fresh(_sem_scaled, Ins(rd=1, rs1=2), 0, *_twins()) == ["R_r[1] = R_r[2] * 3 & 4294967295"]
    monkeypatch.setattr(THIS, "SCALE", 5)
    assert same_as_fresh(_sem_scaled, Ins(rd=1, rs1=2), 0, *_twins()) == ["R_r[1] = R_r[2] * 5 & 4294967295"]


def test_a_global_that_appears_later_shadows_the_builtin(monkeypatch):
    assert same_as_fresh(_sem_absolute, Ins(rd=1, rs1=2), 0, *_twins()) == ["R_r[1] = abs(R_r[2])"]
    monkeypatch.setattr(THIS, "abs", _negate, raising=False)
    cached, fresh = _twins()
    assert same_as_fresh(_sem_absolute, Ins(rd=1, rs1=2), 0, cached, fresh) == ["R_r[1] = -R_r[2]"]


def test_a_replaced_method_and_an_instance_attribute_are_respected(monkeypatch):
    agent = Agent()
    cached, fresh = _twins(agent)
    cached.regfiles = fresh.regfiles = blockmod.regfile_names({"r"}, agent)
    assert same_as_fresh(_sem_via_method, Ins(rd=2, rs1=1), 0, cached, fresh) == \
        ["R_r[2] = R_r[1] + 1 & 4294967295"]

    def put(self, rd, value):
        self.r[rd] = value

    monkeypatch.setattr(Agent, "put", put)
    cached, fresh = _twins(agent)
    assert same_as_fresh(_sem_via_method, Ins(rd=2, rs1=1), 0, cached, fresh) == ["R_r[2] = R_r[1] + 1"]
    agent.put = lambda rd, value: None  # the instance's own attribute: called, never inlined
    cached, fresh = _twins(agent)
    assert same_as_fresh(_sem_via_method, Ins(rd=2, rs1=1), 0, cached, fresh) == ["cpu.put(2, R_r[1] + 1)"]


# --------------------------------------------------------------------------- real instructions


@st.composite
def toy_programs(draw: Any) -> list[tuple[str, dict[str, int]]]:
    reg = st.integers(0, 7)
    imm = st.integers(-2048, 2047)
    one = st.one_of(
        st.tuples(st.sampled_from(["add", "sub", "mul"]), st.fixed_dictionaries(dict(rd=reg, rs1=reg, rs2=reg))),
        st.tuples(st.sampled_from(["addi", "ld", "st"]), st.fixed_dictionaries(dict(rd=reg, rs1=reg, imm=imm))),
        st.tuples(st.just("li"), st.fixed_dictionaries(dict(rd=reg, limm=st.integers(0, 0xFFFF)))),
        st.tuples(st.sampled_from(["beq", "bne"]),
                  st.fixed_dictionaries(dict(rd=reg, rs1=reg, boff=st.sampled_from([-8, 8, 12])))),
        st.tuples(st.just("csrr"), st.fixed_dictionaries(dict(rd=reg, csr=st.integers(0, 3)))),
        st.tuples(st.just("nop"), st.just({})),
    )
    return draw(st.lists(one, min_size=1, max_size=12))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(toy_programs())
def test_decoded_toy_instructions_in_sequence_match_fresh_specialisation(program):
    m = new_machine(prog(*program), cores=1)
    m.prepare()
    cpu = m.agents[0]
    filler = cpu._filler
    cached, fresh = _twins(cpu)
    cached.regfiles = fresh.regfiles = blockmod.regfile_names(filler.blocks.regfiles, cpu)
    for k in range(len(program)):
        ins = filler.fill(4 * k)
        same_as_fresh(blockmod.semantic(ins), ins, k, cached, fresh, last=k == len(program) - 1)


# --------------------------------------------------------------------------- whole blocks


class Counting(Plugin):
    """An observer of every retirement (called from blocks, not inlined)."""

    def __init__(self) -> None:
        self.seen: list[int] = []

    @tessera.hookimpl
    def tessera_execute_observe(self, ins: Any) -> Any:
        def observe(agent: Any, ins: Any) -> None:
            self.seen.append(ins.address)
        return observe


def _sources(monkeypatch: pytest.MonkeyPatch, code: bytes, *, cache: bool, plugins: tuple[Any, ...] = ()
             ) -> tuple[list[tuple[int, str, bool, int]], Any]:
    monkeypatch.setenv("TESSERA_BLOCK_SOURCE", "1")
    monkeypatch.setattr(blockmod, "_CODE_CACHE", {})  # translate every block here
    if not cache:
        monkeypatch.setattr(inline, "specialise", inline.specialise_now)
    speccache.clear()
    m = new_machine(code, cores=1, plugins=plugins)
    m.set_engine("fast")
    outcome = m.run(max_steps=100_000)
    got = sorted((b.start, b.source, b.loop, b.inlined) for b in m.agents[0]._filler.cache.blocks.values()
                 if b.n != blockmod.NEVER)
    monkeypatch.undo()
    return got, (outcome.exit_code, outcome.steps, m.state_hash())


LOOPS = (("li", dict(rd=4, limm=0x100)), *sum_loop(30)[:-1],
         "copy:", ("ld", dict(rd=5, rs1=4, imm=0)), ("addi", dict(rd=5, rs1=5, imm=1)),
         ("st", dict(rd=5, rs1=4, imm=4)), ("addi", dict(rd=4, rs1=4, imm=4)),
         ("addi", dict(rd=2, rs1=2, imm=1)), ("li", dict(rd=6, limm=20)), ("bne", dict(rd=2, rs1=6, boff="copy")),
         ("halt", dict(rd=3)))


@pytest.mark.parametrize("observed", [False, True])
def test_blocks_are_the_same_with_and_without_the_cache(monkeypatch, observed):
    plugins = (Counting(),) if observed else ()
    with_cache, result = _sources(monkeypatch, prog(*LOOPS), cache=True, plugins=plugins)
    without, result_fresh = _sources(monkeypatch, prog(*LOOPS), cache=False, plugins=plugins)
    assert with_cache == without and result == result_fresh
    assert any(loop for _s, _src, loop, _n in with_cache) and all(n for *_x, n in with_cache)
    if observed:
        assert "O_" in "".join(src for _s, src, _l, _n in with_cache)  # the observer is called from blocks


def test_a_fault_in_a_repeated_shape_is_located_at_its_own_instruction():
    # three loads of one shape in a hot loop; the third leaves RAM (0x10000) in iteration 50
    code = prog(("li", dict(rd=1, limm=0xE000)), ("li", dict(rd=2, limm=100)), "top:",
                ("ld", dict(rd=3, rs1=1, imm=0)), ("ld", dict(rd=3, rs1=1, imm=4)),
                ("ld", dict(rd=4, rs1=1, imm=0x7F0)), ("addi", dict(rd=1, rs1=1, imm=0x80)),
                ("addi", dict(rd=2, rs1=2, imm=-1)), ("bne", dict(rd=2, rs1=0, boff="top")), ("halt", dict(rd=3)))
    seen = {}
    for engine in ("step", "fast"):
        m = new_machine(code, cores=1)
        m.set_engine(engine)
        with pytest.raises(TesseraError) as err:
            m.run(max_steps=10_000)
        seen[engine] = (type(err.value).__name__, err.value.pc, m.agents[0].instret, m.state_hash())
        if engine == "fast":
            assert any(b.n == 6 and b.inlined == 6 for b in m.agents[0]._filler.cache.blocks.values())
    assert seen["fast"] == seen["step"] and seen["fast"][1] == 0x10 and seen["fast"][2] == 2 + 49 * 6 + 2


# --------------------------------------------------------------------------- the faster passes


SAMPLE = '''
def f(cpu, budget):
    it = 0
    while True:
        it += 1
        for i in range(3):
            if i:
                break
        try:
            x = [a for a in cpu.r if a]
        except KeyError as e:
            pass
        with cpu.lock:
            return (1, it)
    raise BlockExit_3(2, 8)
'''


def test_walk_visits_what_ast_walk_visits_in_the_same_order():
    tree = ast.parse(SAMPLE + "\n" + ast.unparse(ast.parse(open(blockmod.__file__).read())))
    assert [id(n) for n in inline.walk(tree)] == [id(n) for n in ast.walk(tree)]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=400))
def test_fix_locations_is_fix_missing_locations(drop):
    trees = [ast.parse(SAMPLE) for _ in range(2)]
    for tree in trees:
        for n, gone in zip(ast.walk(tree), itertools.cycle(drop)):
            if gone and "lineno" in n._attributes:
                for attr in ("lineno", "col_offset"):
                    delattr(n, attr)
                n.end_lineno = None
    assert ast.dump(blockmod._fix_locations(trees[0]), include_attributes=True) == \
        ast.dump(ast.fix_missing_locations(trees[1]), include_attributes=True)


@pytest.mark.parametrize("start", [1, 2, 8])
def test_the_placer_finds_what_may_write_and_loops_to_find(start):
    cases = [ast.parse(src).body for src in (
        "x = 1\nreturn 1", "y = int(x)\nreturn 2", "f()\nreturn 1",
        "while c:\n    break\nreturn 1", "for i in r:\n    pass\nreturn 1", "if a:\n    return 1\nreturn 8")]
    for body in cases:
        placer = blockmod._Placer(start)
        assert placer.place(body, 12) == inline.may_write(body)
        assert placer.loops() == blockmod._loops_to(body, start)
        assert all(n.lineno == 12 for s in body for n in ast.walk(s) if "lineno" in n._attributes)


def test_loop_returns_are_rewritten_as_the_transformer_rewrote_them():
    body = ast.parse(SAMPLE).body[0].body
    for stmts in (body, ast.parse("if a:\n    return 4\nelse:\n    raise BlockExit_1(1, 4)\nreturn x").body):
        mine = blockmod._rewrite_statements(inline.clone(stmts), blockmod._LoopReturns(4, 3))
        theirs = blockmod._LoopReturns(4, 3).visit(ast.Module(body=inline.clone(stmts), type_ignores=[])).body
        assert ast.dump(ast.Module(mine, [])) == ast.dump(ast.Module(theirs, []))


def test_machines_share_recordings_across_the_process():
    blockmod._CODE_CACHE.clear()  # a translation another test left would need no recording
    m1 = new_machine(prog(*sum_loop(30)), cores=1)
    m1.set_engine("fast")
    m1.run(max_steps=10_000)
    recorded = speccache.size()
    assert recorded > 0
    blockmod._CODE_CACHE.clear()  # translate again, from the recordings
    m2 = new_machine(prog(*sum_loop(40)), cores=1, host=make_host())
    m2.set_engine("fast")
    m2.run(max_steps=10_000)
    assert speccache.size() == recorded and m2.agents[0]._filler.blocks.translated > 0
