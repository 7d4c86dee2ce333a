"""Loads and stores of plain RAM inline in blocks (tessera.engine.memops) and the RAM window.

Every program runs on both engines and everything observable is compared: the run's
result or error (with its PC), each agent's PC and counters, the state hash, and the
accesses devices and watches saw, in order.  Other tests make sure the fast engine
really made the accesses inline (the block's code holds the window local), so the
comparisons are not vacuous.
"""

from __future__ import annotations

import ast
import pickle
import types
from typing import Any

import pytest

import tessera
from tessera.engine import blocks as blockmod
from tessera.engine import inline, memops
from tessera.errors import MemoryFault, TesseraError
from tessera.machine import Machine
from tessera.memory import Watch
from tessera.memory.regions import CODE_PAGE_BITS, RAM
from tessera.memory.space import AddressSpace, RamWindow

from .conftest import Plugin, encode, new_machine, prog

ENGINES = ("step", "fast")
RAM_END = 0x1_0000  # the toy board's RAM is [0, 0x10000)


@pytest.fixture(autouse=True)
def hot_at_second_visit(monkeypatch):
    monkeypatch.setenv("TESSERA_BLOCK_HOT", "2")


# --------------------------------------------------------------------------- helpers


class Recorder:
    """An MMIO device that logs every access and answers reads with a function of the offset."""

    def __init__(self) -> None:
        self.log: list[tuple[Any, ...]] = []

    def read(self, offset: int, size: int) -> int:
        self.log.append(("r", offset, size))
        return (offset * 0x01010101 + 7) & ((1 << (8 * size)) - 1)

    def write(self, offset: int, size: int, value: int) -> None:
        self.log.append(("w", offset, size, value))


def outcome(machine: Machine, **run: Any) -> tuple[Any, ...]:
    try:
        r = machine.run(raise_on_budget=False, **run)
        res: tuple[Any, ...] = ("ok", r.reason, r.steps, r.cycles, r.exit_code, r.pc)
    except TesseraError as err:
        res = ("error", type(err).__name__, err.pc, err.agent, str(err))
    agents = tuple((a.name, getattr(a, "pc", None), a.instret, a.traps, a.cycles) for a in machine.agents)
    return res, agents, machine.state_hash()


def inline_blocks(machine: Machine) -> list[Any]:
    """The machine's translated blocks that access memory inline."""
    found = []
    for filler in machine._fillers.values():
        for b in filler.cache.blocks.values():
            if b.n != blockmod.NEVER and memops.WINDOW in b.code.co_varnames:
                found.append(b)
    return found


def both(code: bytes, setup: Any = None, *, runs: tuple[dict[str, Any], ...] = ({"max_steps": 100_000},),
         expect_inline: bool = True, **config: Any) -> dict[str, Any]:
    """Run ``code`` on each engine (``setup(machine)`` maps extra regions and returns a log);
    assert equal outcomes and logs; return what the fast engine saw."""
    seen: dict[str, Any] = {}
    machines = {}
    for engine in ENGINES:
        m = new_machine(code, cores=1, **config)
        log = setup(m) if setup is not None else None
        m.set_engine(engine)
        seen[engine] = ([outcome(m, **r) for r in runs], log)
        machines[engine] = m
    assert seen["fast"] == seen["step"]
    if expect_inline:
        assert inline_blocks(machines["fast"]), "the fast engine made no access inline"
    return {"outcome": seen["fast"][0], "log": seen["fast"][1], "machine": machines["fast"]}


def walker(start: int, count: int, stride: int, *, store: bool = True, load: bool = True,
           handler: bool = False) -> bytes:
    """A loop storing and loading a word at ``start``, ``start + stride``, ... ``count`` times;
    halts with the sum of what it loaded.  ``handler``: a trap handler that halts with the cause."""
    items: list[Any] = []
    if handler:
        items += [("li", dict(rd=1, limm="handler")), ("csrw", dict(csr=0, rs1=1))]
    items += [("li", dict(rd=5, limm=start)), ("li", dict(rd=6, limm=count)), ("li", dict(rd=7, limm=stride)),
              ("li", dict(rd=3, limm=0)), ("li", dict(rd=4, limm=0x12345)), "loop:"]
    if store:
        items.append(("st", dict(rd=4, rs1=5, imm=0)))
    if load:
        items += [("ld", dict(rd=8, rs1=5, imm=0)), ("add", dict(rd=3, rs1=3, rs2=8))]
    items += [("addi", dict(rd=4, rs1=4, imm=77)), ("add", dict(rd=5, rs1=5, rs2=7)),
              ("addi", dict(rd=6, rs1=6, imm=-1)), ("bne", dict(rd=6, rs1=0, boff="loop")),
              ("halt", dict(rd=3)), "handler:", ("csrr", dict(rd=9, csr=2)), ("halt", dict(rd=9))]
    return prog(*items)


def mapped(kind: str, start: int, size: int = 0x100) -> Any:
    """A setup mapping one more region (``ram``, ``rom`` or ``mmio``) at ``start``."""
    def setup(m: Machine) -> Any:
        if kind == "ram":
            m.space.add_ram("more", start, size)
        elif kind == "rom":
            m.space.add_rom("more", start, size, data=bytes(range(256)) * (size // 256))
        else:
            dev = Recorder()
            m.space.add_mmio("more", start, size, dev)
            return dev.log
        return None
    return setup


# --------------------------------------------------------------------------- the toy: in and out of the window


def test_accesses_inside_the_window_are_inline_and_exact():
    got = both(walker(0x8000, 200, 4))
    (res, _agents, _hash), = got["outcome"]
    assert res[0] == "ok" and res[4] is not None
    m = got["machine"]
    assert m.space.window.region is m.space.region_named("ram")
    assert m.space.read(0x8000 + 4 * 199, 4) == 0x12345 + 77 * 199


@pytest.mark.parametrize("handler", [False, True])
@pytest.mark.parametrize("start,stride,address", [
    (RAM_END - 0x100, 2, RAM_END - 2),   # a word at 0xfffe straddles the window's end
    (RAM_END - 0x100, 4, RAM_END),       # the next word after the last one is unmapped
])
def test_leaving_the_window_mid_block_faults_at_the_same_instruction(start, stride, address, handler):
    got = both(walker(start, 1000, stride, handler=handler))
    (res, agents, _hash), = got["outcome"]
    if handler:
        assert res[0] == "ok" and res[4] == 7  # the store's fault cause, taken at the faulting store
    else:
        assert res[:2] == ("error", "UnhandledTrap") and f"cause 7, value {address:#x}" in res[4]
    assert agents[0][2] > 100  # many instructions retired before it, inside blocks


@pytest.mark.parametrize("store", [False, True])
def test_a_second_ram_next_to_the_window_is_reached_through_the_space(store):
    got = both(walker(RAM_END - 0x80, 64, 4, store=store), mapped("ram", RAM_END, 0x100))
    (res, _agents, _hash), = got["outcome"]
    assert res[0] == "ok"
    assert got["machine"].space.window.region.name == "ram"  # the larger one


def test_rom_next_to_the_window_is_read_and_refuses_writes_exactly():
    both(walker(RAM_END - 0x80, 64, 4, store=False), mapped("rom", RAM_END, 0x100))
    got = both(walker(RAM_END - 0x80, 64, 4, store=True), mapped("rom", RAM_END, 0x100))
    (res, agents, _hash), = got["outcome"]
    assert res[:2] == ("error", "UnhandledTrap") and f"cause 7, value {RAM_END:#x}" in res[4]
    assert agents[0][2] > 100


def test_device_accesses_from_a_block_reach_the_device_in_order():
    got = both(walker(RAM_END - 0x40, 48, 4), mapped("mmio", RAM_END, 0x100))
    (res, _agents, _hash), = got["outcome"]
    assert res[0] == "ok"
    log = got["log"]
    assert len(log) == 2 * 32 and log[0] == ("w", 0, 4, 0x12345 + 77 * 16) and log[1] == ("r", 0, 4)


# --------------------------------------------------------------------------- watches


class Watcher(Plugin):
    """Watches ``[start, end)``; reads see the value plus one (so a missed watch shows)."""

    def __init__(self, start: int, end: int) -> None:
        self.start, self.end = start, end
        self.log: list[tuple[Any, ...]] = []

    def watch(self) -> Watch:
        def on_read(agent, address, size, value):
            self.log.append(("r", address, size, value))
            return value + 1

        def on_write(agent, address, size, value):
            self.log.append(("w", address, size, value))
            return None
        return Watch(self.start, self.end, on_read=on_read, on_write=on_write)

    @tessera.hookimpl
    def tessera_memory_watches(self, machine, space):
        return [self.watch()]


def test_watched_memory_is_never_accessed_inline():
    seen = {}
    for engine in ENGINES:
        w = Watcher(0x8040, 0x8080)
        m = new_machine(walker(0x8000, 64, 4), cores=1, plugins=(w,))
        m.space.add_ram("scratch", 0x40000, 0x100)  # a small unwatched RAM: the window now
        m.set_engine(engine)
        seen[engine] = (outcome(m, max_steps=100_000), w.log)
        if engine == "fast":
            assert m.space.window.region.name == "scratch"
    assert seen["fast"] == seen["step"]
    assert len(seen["fast"][1]) == 2 * 16


def test_a_watch_set_by_a_device_in_the_middle_of_a_block_applies_to_its_next_access():
    scratch, device = 0x40000, 0x70000
    code = prog(
        ("li", dict(rd=5, limm=scratch)), ("li", dict(rd=9, limm=device)), ("li", dict(rd=6, limm=40)),
        ("li", dict(rd=3, limm=0)), "loop:",
        ("st", dict(rd=6, rs1=5, imm=0)),
        ("ld", dict(rd=8, rs1=5, imm=0)), ("add", dict(rd=3, rs1=3, rs2=8)),
        ("st", dict(rd=6, rs1=9, imm=0)),   # the device watches the scratch RAM when it sees 20
        ("ld", dict(rd=8, rs1=5, imm=0)), ("add", dict(rd=3, rs1=3, rs2=8)),
        ("addi", dict(rd=5, rs1=5, imm=4)), ("addi", dict(rd=6, rs1=6, imm=-1)),
        ("bne", dict(rd=6, rs1=0, boff="loop")), ("halt", dict(rd=3)))

    def setup(m: Machine) -> Any:
        m.space.add_ram("scratch", scratch, 0x20000)  # bigger than the board's RAM: the window
        watcher = Watcher(scratch, scratch + 0x20000)

        class Arm:
            def read(self, offset, size):
                return 0

            def write(self, offset, size, value):
                if value == 20:
                    m.space.apply_watches([watcher.watch()])
        m.space.add_mmio("arm", device, 0x10, Arm())
        return watcher.log

    got = both(code, setup)
    log = got["log"]
    # armed during iteration 21 (r6 == 20): its second load is watched, then every access after
    assert log[0] == ("r", scratch + 4 * 20, 4, 20) and len(log) == 1 + 3 * 19
    assert got["machine"].space.window.region.name == "ram"


def test_a_watch_set_between_two_runs_of_one_machine_applies_from_the_next_block():
    code = walker(0x8000, 300, 4)
    seen = {}
    for engine in ENGINES:
        w = Watcher(0x8000, 0x9000)
        m = new_machine(code, cores=1)
        m.set_engine(engine)
        first = outcome(m, max_steps=600)
        m.space.apply_watches([w.watch()])
        second = outcome(m, max_steps=100_000)
        m.space.apply_watches([])
        seen[engine] = (first, second, w.log, m.space.window.region.name)
        if engine == "fast":
            assert inline_blocks(m)
    assert seen["fast"] == seen["step"]
    assert seen["fast"][2] and seen["fast"][3] == "ram"


# --------------------------------------------------------------------------- code written by stores


def _patching_program(target: str) -> bytes:
    """A loop whose first instruction stores ``addi r3, r3, 100`` every iteration: to a data
    word, except in iteration 31, which stores it over the ``addi r3, r3, 1`` at label ``target``
    — later in the storing block (``patch_same``) or in another block (``patch_other``)."""
    return prog(
        ("li", dict(rd=2, limm=60)), ("li", dict(rd=3, limm=0)), ("li", dict(rd=10, limm=0)),
        ("li", dict(rd=4, limm=0x8000)), ("li", dict(rd=11, limm=30)),
        ("li", dict(rd=12, limm="word")), ("ld", dict(rd=12, rs1=12, imm=0)),
        "loop:",
        ("st", dict(rd=12, rs1=4, imm=0)),
        ("addi", dict(rd=10, rs1=10, imm=1)),
        "patch_same:",
        ("addi", dict(rd=3, rs1=3, imm=1)),
        ("li", dict(rd=4, limm=0x8000)),
        ("addi", dict(rd=2, rs1=2, imm=-1)),
        ("beq", dict(rd=2, rs1=11, boff="arm")),
        "back:",
        ("bne", dict(rd=2, rs1=0, boff="other")),
        ("halt", dict(rd=3)),
        "arm:",
        ("li", dict(rd=4, limm=target)),
        ("jmp", dict(joff="back")),
        "other:",
        ("add", dict(rd=10, rs1=10, rs2=3)),
        "patch_other:",
        ("addi", dict(rd=3, rs1=3, imm=1)),
        ("jmp", dict(joff="loop")),
        "word:",
        encode("addi", rd=3, rs1=3, imm=100),
    )


@pytest.mark.parametrize(("where", "expected"), [
    ("patch_same", 30 + 100 * 30 + 59),         # iterations 31..60 add 100 at patch_same
    ("patch_other", 60 + 30 + 100 * 29),        # `other` runs after iterations 1..59; patched from 31
])
def test_a_store_rewriting_code_of_its_own_or_another_block_takes_effect(where, expected):
    got = both(_patching_program(where))
    (res, _agents, _hash), = got["outcome"]
    assert res[0] == "ok" and res[4] == expected


# --------------------------------------------------------------------------- translations shared, snapshots


def test_two_machines_sharing_a_translation_each_access_their_own_ram():
    code = prog(("li", dict(rd=5, limm=0x8000)), ("li", dict(rd=6, limm=64)), ("li", dict(rd=3, limm=0)),
                "loop:", ("ld", dict(rd=8, rs1=5, imm=0)), ("add", dict(rd=3, rs1=3, rs2=8)),
                ("st", dict(rd=3, rs1=5, imm=0)), ("addi", dict(rd=5, rs1=5, imm=4)),
                ("addi", dict(rd=6, rs1=6, imm=-1)), ("bne", dict(rd=6, rs1=0, boff="loop")),
                ("halt", dict(rd=3)))
    data = {"a": bytes(range(256)), "b": bytes(range(255, -1, -1))}
    results = {}
    machines = {}
    for engine in ENGINES:
        for name, blob in data.items():
            m = new_machine(code, cores=1)
            m.space.write_bytes(0x8000, blob)
            m.set_engine(engine)
            results[engine, name] = outcome(m, max_steps=100_000)
            machines[engine, name] = m
    for name in data:
        assert results["fast", name] == results["step", name]
    assert results["fast", "a"][0][4] != results["fast", "b"][0][4]
    a, b = (inline_blocks(machines["fast", n]) for n in data)
    assert a and b and {blk.code for blk in a} == {blk.code for blk in b}  # one translation, reused
    assert machines["fast", "a"].space.read(0x8000, 4) == int.from_bytes(data["a"][:4], "little")


def test_snapshot_restore_keeps_the_window_over_the_restored_ram():
    code = walker(0x8000, 400, 4)
    whole = new_machine(code, cores=1)
    whole.set_engine("fast")
    reference = outcome(whole, max_steps=100_000)
    m = new_machine(code, cores=1)
    m.set_engine("fast")
    m.run(max_steps=701, raise_on_budget=False)
    m2 = Machine.restore(m.snapshot(), host=m.host)
    assert m2.space.window.region is m2.space.region_named("ram")
    assert m2.space.window.data is m2.space.region_named("ram").data is not m.space.window.data
    m2.set_engine("fast")
    assert outcome(m2, max_steps=100_000)[2] == reference[2]
    assert m.space.read(0x8000 + 4 * 300, 4) == 0  # the original machine's RAM is untouched by m2
    assert inline_blocks(m2)


def test_check_mode_journals_the_writes_of_blocks():
    from tessera.engine import check
    from tessera.engine.memtap import MemoryTap

    m = new_machine(walker(0x8000, 200, 4), cores=1)
    tap = MemoryTap(m)
    tap.install()   # journalling RAM writes: no block may write the RAM directly meanwhile
    assert m.space.window.region is None
    tap.uninstall()
    assert m.space.window.region is m.space.region_named("ram")
    m.set_engine("check")
    r = m.run(max_steps=100_000)
    step = new_machine(walker(0x8000, 200, 4), cores=1)
    step.set_engine("step")
    assert (r.exit_code, m.state_hash()) == (step.run(max_steps=100_000).exit_code, step.state_hash())
    assert check.statistics(m)["checked"] > 0
    assert m.space.window.region is m.space.region_named("ram")  # open again once the run ended


# --------------------------------------------------------------------------- RISC-V: every width and sign

rv = pytest.importorskip("tessera_riscv")
RV_RAM = 1 << 20
RV_LOADS = {32: ("lb", "lbu", "lh", "lhu", "lw"), 64: ("lb", "lbu", "lh", "lhu", "lw", "lwu", "ld")}
RV_STORES = {32: ("sb", "sh", "sw"), 64: ("sb", "sh", "sw", "sd")}


def rv_walker(load: str | None, store: str | None, start: int, count: int, stride: int) -> str:
    body = (f"    {store} a4, 0(a1)\n" if store else "") + (f"    {load} a0, 0(a1)\n    add a5, a5, a0\n" if load else "")
    return f"""
    li a1, {start}
    li a2, {count}
    li a3, {stride}
    li a4, 0x8badf00d
    li a5, 0
loop:
{body}    addi a4, a4, 0x135
    add a1, a1, a3
    addi a2, a2, -1
    bnez a2, loop
    mv a0, a5
    li a7, 93
    ecall
"""


def rv_both(xlen: int, source: str, *, extra: bool = True) -> tuple[Any, ...]:
    from tessera.isa.asm import assemble

    arch = {32: rv.RV32IM, 64: rv.RV64IM}[xlen]
    seen = {}
    for engine in ENGINES:
        m = Machine(arch, config={"echo": False, "ram": RV_RAM}, engine=engine)
        if extra:
            m.space.add_ram("more", RV_RAM, 0x1000)  # next to the window; unmapped after it
        program = assemble(arch, source, base=0x10000)
        for address, blob in program.segments:
            m.space.write_bytes(address, blob, force=True)
        m.set_entry(0x10000)
        seen[engine] = outcome(m, max_steps=200_000)
        if engine == "fast":
            assert inline_blocks(m)
    assert seen["fast"] == seen["step"]
    return seen["fast"]


@pytest.mark.parametrize("xlen", [32, 64])
@pytest.mark.parametrize("where", ["inside", "end", "more", "unmapped"])
def test_riscv_loads_and_stores_of_every_width(xlen, where):
    start, count, stride = {"inside": (0x8001, 300, 3),            # unaligned too: allowed by default
                            "end": (RV_RAM - 0x100, 400, 1),     # the wide ones cross the window's end
                            "more": (RV_RAM + 0x10, 200, 5),     # in the other RAM
                            "unmapped": (RV_RAM + 0x1000 - 0x100, 400, 1)}[where]
    for load in RV_LOADS[xlen]:
        rv_both(xlen, rv_walker(load, None, start, count, stride))
    for store in RV_STORES[xlen]:
        res, agents, _ = rv_both(xlen, rv_walker(RV_LOADS[xlen][-1], store, start, count, stride))
        if where in ("inside", "more"):
            assert res[0] == "ok"
        else:
            assert res[0] == "error" and agents[0][2] > 100


def test_riscv_loads_are_sign_and_zero_extended_inline():
    res, _agents, _ = rv_both(32, """
    li a1, 0x8000
    li a4, 0x80ff807f
    sw a4, 0(a1)
    li a2, 50
    li a5, 0
loop:
    lb  a0, 3(a1)
    add a5, a5, a0
    lbu a0, 3(a1)
    add a5, a5, a0
    lh  a0, 2(a1)
    add a5, a5, a0
    lhu a0, 2(a1)
    add a5, a5, a0
    addi a2, a2, -1
    bnez a2, loop
    mv a0, a5
    li a7, 93
    ecall
""", extra=False)
    per = (-0x80 + 0x80 + (0x80FF - 0x10000) + 0x80FF) & 0xFFFF_FFFF
    assert res[0] == "ok" and res[4] == (per * 50) & 0xFF


# --------------------------------------------------------------------------- the rewrite itself


def compiled(source: str) -> tuple[Any, int]:
    """``source`` (statements over ``cpu``, ``a`` and ``v``, setting ``r``) rewritten, as a function."""
    ctx = inline.Context(inline.Binder(), {}, set(), None)
    stmts = memops.rewrite(ast.parse(source).body, ctx)
    assert stmts is not None
    head = memops.prologue(ctx)
    fn = ast.FunctionDef(name="f", args=ast.arguments(posonlyargs=[], args=[ast.arg(n) for n in ("cpu", "a", "v")],
                                                      kwonlyargs=[], kw_defaults=[], defaults=[]),
                         body=head + stmts + [ast.Return(ast.Name("r", ast.Load()))], decorator_list=[],
                         returns=None, type_params=[])
    module = ast.fix_missing_locations(ast.Module(body=[fn], type_ignores=[]))
    namespace = dict(ctx.binder.namespace)
    exec(compile(module, "<memops test>", "exec"), namespace)  # noqa: S102
    return namespace["f"], len(head)


def space_for(endian: str) -> AddressSpace:
    s = AddressSpace(endian=endian)  # type: ignore[arg-type]
    s.add_ram("ram", 0x1000, 0x100)
    s.add_ram("other", 0x1100, 0x40)
    s.add_rom("rom", 0x2000, 0x100, data=bytes(range(256)))
    return s


def result(call: Any) -> tuple[str, Any]:
    try:
        return "ok", call()
    except MemoryFault as exc:
        return "fault", str(exc)


@pytest.mark.parametrize("endian", ["little", "big"])
@pytest.mark.parametrize("size", [1, 2, 3, 4, 8, 16])
def test_inline_reads_and_writes_equal_the_space_at_every_edge(endian, size):
    read, head = compiled(f"r = cpu.space.read(a, {size})")
    write, _ = compiled(f"cpu.space.write(a, {size}, v)\nr = None")
    assert head == 1
    addresses = [0xFF0, 0x1000 - size + 1, 0x1000, 0x1001, 0x1080, 0x1100 - size, 0x1100 - size + 1,
                 0x10FF, 0x1100, 0x1140 - size, 0x1140, 0x2000, 0x20FF, 0x3000]
    for a in addresses:
        ref, mine = space_for(endian), space_for(endian)
        ref.write_bytes(0x1000, bytes((7 + i) & 0xFF for i in range(0x100)))
        mine.write_bytes(0x1000, bytes((7 + i) & 0xFF for i in range(0x100)))
        cpu = types.SimpleNamespace(space=mine)
        assert result(lambda: read(cpu, a, 0)) == result(lambda: ref.read(a, size)), hex(a)  # noqa: B023
        value = 0x0123456789ABCDEF_FEDCBA9876543210 | (1 << 130)  # wider than any size: masked
        assert result(lambda: write(cpu, a, value)) == result(lambda: ref.write(a, size, value)), hex(a)  # noqa: B023
        for r in ("ram", "other"):
            assert ref.region_named(r).data == mine.region_named(r).data


def test_a_local_alias_of_the_space_is_rewritten_and_other_calls_are_not():
    f, head = compiled("s = cpu.space\nr = s.read(a, 4) + s.read(a + 4, 2)\ns.write(a, 1, v)")
    assert head == 1
    space = space_for("little")
    space.write_bytes(0x1010, bytes(range(8)))
    assert f(types.SimpleNamespace(space=space), 0x1010, 0xAB) == 0x03020100 + 0x0504
    assert space.read(0x1010, 1) == 0xAB
    g, head = compiled("r = cpu.space.read(a, v)")
    assert head == 0  # a size that is not a literal: still the call
    assert g(types.SimpleNamespace(space=space), 0x1010, 2) == 0xAB | (0x01 << 8)


def test_a_space_without_a_window_takes_every_access_through_its_methods():
    f, _ = compiled("r = cpu.space.read(a, 4)")

    class View:  # an agent space that translates: no window
        def __init__(self, phys):
            self.phys = phys

        def read(self, address, size):
            return self.phys.read(address + 0x10, size)

    space = space_for("little")
    space.write(0x1020, 4, 0xDEADBEEF)
    assert f(types.SimpleNamespace(space=View(space)), 0x1010, 0) == 0xDEADBEEF


def test_an_inline_store_to_a_code_page_drops_the_code_decoded_there():
    space = AddressSpace()
    region = space.add_ram("ram", 0x1000, 0x1000)
    cache = space.decode_cache("toy", lambda: _FakeCache({0x1400 >> CODE_PAGE_BITS}))
    space.mark_code(region, 0x1440, 4)
    f, _ = compiled("cpu.space.write(a, 4, v)\nr = None")
    cpu = types.SimpleNamespace(space=space)
    f(cpu, 0x1800, 1)                              # a page without code
    f(cpu, 0x1000, 1)
    assert cache.dropped == []
    f(cpu, 0x1442, 1)
    f(cpu, 0x13FE, 1)                              # from the page before into the code page
    f(cpu, 0x17FE, 1)                              # from the code page into the next
    assert cache.dropped == [(0x1442, 0x1446), (0x13FE, 0x1402), (0x17FE, 0x1802)]
    assert space.read(0x1442, 4) == 1


class _FakeCache:
    """A code cache that records what it is asked to drop; ``live``: the pages it says still hold code."""

    def __init__(self, live: set[int] | None = None) -> None:
        self.dropped: list[tuple[int, int]] = []
        self.live = live or set()

    def invalidate(self, start: int, end: int) -> set[int]:
        self.dropped.append((start, end))
        return set(self.live)

    def clear(self) -> None:
        self.dropped.clear()


# --------------------------------------------------------------------------- the window and the SMC test


def test_the_window_is_the_largest_plain_unwatched_readable_writable_ram():
    s = AddressSpace()
    w = s.window
    assert w.region is None and not w.covers(0, 1)
    s.add_ram("small", 0x0, 0x100)
    assert w.region.name == "small" and w.covers(0xFC, 4) and not w.covers(0xFD, 4)
    s.add_ram("readonly", 0x1000, 0x1000, perms="r-x")
    s.add_rom("rom", 0x4000, 0x2000)
    s.add_mmio("dev", 0x8000, 0x4000, Recorder())
    assert w.region.name == "small"
    s.map(RAM("wrong-order", 0x20000, 0x8000, endian="big"))
    assert w.region.name == "small"
    s.add_ram("big", 0x10000, 0x1000)
    s.add_ram("same", 0x11000, 0x1000)
    assert w.region.name == "big" and w is s.window  # the same object, changed in place
    s.apply_watches([Watch(0x10010, 0x10014)])
    assert w.region.name == "same"
    s.apply_watches([Watch(0, 1 << 32)])
    assert w.region is None and w.last1 < 0 and w.last8 < 0
    s.apply_watches([])
    assert w.region.name == "big"
    s.region_named("big").__dict__["write"] = lambda *args: None  # replaced on the instance
    s.refresh_window()
    assert w.region.name == "same"
    copy = pickle.loads(pickle.dumps(s))
    assert isinstance(copy.window, RamWindow) and copy.window.data is copy.region_named("big").data


def test_a_ram_write_tests_only_the_pages_it_touched():
    s = AddressSpace()
    region = s.add_ram("ram", 0, 0x10000)
    page = 1 << CODE_PAGE_BITS
    cache = s.decode_cache("x", lambda: _FakeCache({3}))
    s.mark_code(region, 3 * page + 8, 4)
    s.write(5 * page, 4, 1)                         # another page: nothing to drop
    s.write(3 * page - 2, 4, 1)                     # from the page before into the code page
    s.write(4 * page - 2, 4, 1)                     # from the code page into the next
    s.write_bytes(2 * page, bytes(3 * page))         # a bulk write covering it from outside
    region.write(3 * page + 100, 2, 1)
    assert cache.dropped == [(3 * page - 2, 3 * page + 2), (4 * page - 2, 4 * page + 2), (2 * page, 5 * page),
                             (3 * page + 100, 3 * page + 102)]


# --------------------------------------------------------------------------- the stale-code test


def _window_ifs(source: str) -> list[ast.If]:
    """The ``if`` statements testing whether an access lies in the RAM window (not the journal's)."""
    found = []
    for n in ast.walk(ast.parse(source)):
        if isinstance(n, ast.If):
            test = ast.unparse(n.test)
            if "last" in test and "jlast" not in test:
                found.append(n)
    return found


def _stale_tests(nodes: list[ast.stmt]) -> int:
    return sum(1 for s in nodes for n in ast.walk(s) if isinstance(n, ast.Attribute) and n.attr == "stale")


def test_an_access_in_the_window_tests_for_stale_code_only_where_it_may_write(monkeypatch):
    monkeypatch.setenv("TESSERA_BLOCK_SOURCE", "1")
    blockmod._CODE_CACHE.clear()  # translations made without their source
    code = prog(("li", dict(rd=6, limm=0x8000)), ("li", dict(rd=2, limm=300)), ("li", dict(rd=3, limm=0)),
                "loop:", ("st", dict(rd=2, rs1=6, imm=0)), ("ld", dict(rd=8, rs1=6, imm=4)),
                ("add", dict(rd=3, rs1=3, rs2=8)), ("addi", dict(rd=6, rs1=6, imm=4)),
                ("addi", dict(rd=2, rs1=2, imm=-1)), ("bne", dict(rd=2, rs1=0, boff="loop")), ("halt", dict(rd=3)))
    got = both(code)
    (block,) = [b for b in inline_blocks(got["machine"]) if b.loop]
    store_if, load_if = _window_ifs(block.source)
    # the load: no test on its plain or journalled path, one after the original call
    assert _stale_tests(load_if.body) == 0 and _stale_tests(load_if.orelse[0].body) == 0
    assert _stale_tests(load_if.orelse[0].orelse) == 1
    # ... and the rest of the instruction (its register write) on every path, before the test
    for branch in (load_if.body, load_if.orelse[0].body, load_if.orelse[0].orelse):
        assert any("[8] =" in ast.unparse(s) or "_8 =" in ast.unparse(s) for s in branch)
    # the store: a test only after the code-page invalidation, the journalled store and the call
    (smc,) = [s for s in store_if.body if isinstance(s, ast.If)]
    assert "code" in ast.unparse(smc.test) and _stale_tests(smc.body) == 1 and _stale_tests(store_if.body) == 1
    assert _stale_tests(store_if.orelse) == 2
    # no test after the instructions themselves: the only ones are those above
    assert _stale_tests(ast.parse(block.source).body) == 4


# --------------------------------------------------------------------------- devices that block


class _Once(tessera.sync.SyncObject):
    """Wakes its waiter at once (a wait that only ends the slice)."""

    def park(self, agent: Any) -> None:
        super().park(agent)
        self.wake_waiters()


def test_a_device_blocks_the_agent_and_the_store_runs_again():
    """A device raises ``wait_for`` before any side effect: the agent parks and, woken, runs
    the same store again (MMIO passes control signals through, it does not report a device bug)."""
    device = 0x70000

    def setup(m: Machine) -> Any:
        once = m.add_sync(_Once("dev.once"))
        log: list[tuple[int, int]] = []

        class Gate:
            """Holds every even value once: the first store of it waits, the retry lands."""
            waits = 0

            def read(self, offset, size):
                return 0

            def write(self, offset, size, value):
                if value % 2 == 0 and Gate.waits < value // 2:
                    Gate.waits += 1
                    raise once.wait_for(m.space.current_agent, "the gate")
                log.append((offset, value))
        m.space.add_mmio("gate", device, 0x10, Gate())
        return log

    code = prog(("li", dict(rd=5, limm=device)), ("li", dict(rd=6, limm=4)), "loop:",
                ("st", dict(rd=6, rs1=5, imm=0)), ("addi", dict(rd=6, rs1=6, imm=-1)),
                ("bne", dict(rd=6, rs1=0, boff="loop")), ("halt", dict(rd=6)))
    got = both(code, setup, expect_inline=False)
    assert got["log"] == [(0, 4), (0, 3), (0, 2), (0, 1)]     # each store landed once, in order
    result = got["outcome"][0][0]
    assert result[:3] == ("ok", "halted", 15)                # the waits retired nothing extra


def test_a_device_that_waits_forever_is_a_deadlock_naming_its_reason():
    from tessera.errors import Deadlock

    device = 0x70000
    m = new_machine(prog(("li", dict(rd=5, limm=device)), ("st", dict(rd=5, rs1=5, imm=0)),
                         ("halt", dict(rd=0))), cores=1)
    never = m.add_sync(tessera.sync.Event("dev.ready"))

    class Never:
        def read(self, offset, size):
            return 0

        def write(self, offset, size, value):
            raise never.wait_for(m.space.current_agent, "the device to be ready")
    m.space.add_mmio("never", device, 0x10, Never())
    with pytest.raises(Deadlock, match="the device to be ready"):
        m.run(max_steps=100)
