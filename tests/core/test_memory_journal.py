"""Journal watches (``Watch(start, end, journal=list)``): accesses recorded, inline on the fast engine.

A journal watch appends ``(0 | 1, address, size, value)`` per access to a list and does
nothing else, so the fast engine keeps accessing journalled RAM inline
(:class:`tessera.memory.space.RamWindow` with a journal, :mod:`tessera.engine.memops`).
Every test compares the journal the fast engine wrote with the step engine's — the
step engine's is made by the :class:`~tessera.memory.regions.Watched` wrapper, one
call per access — and checks that the fast engine really journalled inline, so the
comparison is not vacuous.
"""

from __future__ import annotations

import ast
import types
from typing import Any

import pytest

import tessera
from tessera.engine import blocks as blockmod
from tessera.engine import inline, memops
from tessera.errors import MemoryFault, PluginError, TesseraError
from tessera.machine import Machine
from tessera.memory import READ, WRITE, Watch
from tessera.memory.regions import Watched
from tessera.memory.space import AddressSpace

from .conftest import Plugin, make_host, new_machine, prog

ENGINES = ("step", "fast")
RAM_END = 0x1_0000   # the toy board's RAM is [0, 0x10000)
ROM = 0x2_0000       # its ROM
DEVICE = 0x7_0000    # where these tests map a device


@pytest.fixture(autouse=True)
def hot_at_second_visit(monkeypatch):
    monkeypatch.setenv("TESSERA_BLOCK_HOT", "2")


# --------------------------------------------------------------------------- helpers


class Journal(Plugin):
    """Journals ``[start, end)`` of every space into :attr:`log` (``None``: all of it)."""

    def __init__(self, start: int = 0, end: int | None = None) -> None:
        self.start, self.end = start, end
        self.log: list[tuple[int, int, int, int]] = []

    @tessera.hookimpl
    def tessera_memory_watches(self, machine, space):
        return [Watch(self.start, space.limit if self.end is None else self.end, journal=self.log)]


class Bump(Plugin):
    """A callback watch: reads of ``[start, end)`` see the value plus one; stores are logged."""

    def __init__(self, start: int, end: int) -> None:
        self.start, self.end = start, end
        self.log: list[tuple[str, int, int, int]] = []

    def watch(self) -> Watch:
        def on_read(agent, address, size, value):
            self.log.append(("r", address, size, value))
            return value + 1

        def on_write(agent, address, size, value):
            self.log.append(("w", address, size, value))
        return Watch(self.start, self.end, on_read=on_read, on_write=on_write)

    @tessera.hookimpl
    def tessera_memory_watches(self, machine, space):
        return [self.watch()]


class Recorder:
    """An MMIO device answering reads with a function of the offset (wider than the access)."""

    def __init__(self) -> None:
        self.log: list[tuple[Any, ...]] = []

    def read(self, offset: int, size: int) -> int:
        self.log.append(("r", offset, size))
        return 0x1234_5678 + offset

    def write(self, offset: int, size: int, value: int) -> None:
        self.log.append(("w", offset, size, value))


def outcome(machine: Machine, **run: Any) -> tuple[Any, ...]:
    try:
        r = machine.run(raise_on_budget=False, **run)
        res: tuple[Any, ...] = ("ok", r.reason, r.steps, r.exit_code, r.pc)
    except TesseraError as err:
        res = ("error", type(err).__name__, err.pc, str(err))
    return res, machine.state_hash()


def journalled_inline(machine: Machine) -> bool:
    """Did the fast engine translate blocks that access memory inline while the window
    carries a journal?"""
    blocks = [b for f in machine._fillers.values() for b in f.cache.blocks.values()
              if b.n != blockmod.NEVER and memops.WINDOW in b.code.co_varnames]
    return bool(blocks) and machine.space.window.journal is not None


class WrapperCalls:
    """Counts the accesses that went through a :class:`Watched` wrapper (the step path)."""

    def __init__(self, monkeypatch: Any) -> None:
        self.count = 0
        read, write = Watched.read, Watched.write

        def counted_read(region, offset, size):
            self.count += 1
            return read(region, offset, size)

        def counted_write(region, offset, size, value):
            self.count += 1
            return write(region, offset, size, value)
        monkeypatch.setattr(Watched, "read", counted_read)
        monkeypatch.setattr(Watched, "write", counted_write)


def walker(start: int, count: int, stride: int, *, handler: bool = False) -> bytes:
    """Store then load a word at ``start``, ``start + stride``, ... ``count`` times; halt with
    the sum loaded.  ``handler``: a trap handler that halts with the cause."""
    items: list[Any] = []
    if handler:
        items += [("li", dict(rd=1, limm="handler")), ("csrw", dict(csr=0, rs1=1))]
    items += [("li", dict(rd=5, limm=start)), ("li", dict(rd=6, limm=count)), ("li", dict(rd=7, limm=stride)),
              ("li", dict(rd=3, limm=0)), ("li", dict(rd=4, limm=0x12345)), "loop:",
              ("st", dict(rd=4, rs1=5, imm=0)), ("ld", dict(rd=8, rs1=5, imm=0)), ("add", dict(rd=3, rs1=3, rs2=8)),
              ("addi", dict(rd=4, rs1=4, imm=77)), ("add", dict(rd=5, rs1=5, rs2=7)),
              ("addi", dict(rd=6, rs1=6, imm=-1)), ("bne", dict(rd=6, rs1=0, boff="loop")),
              ("halt", dict(rd=3)), "handler:", ("csrr", dict(rd=9, csr=2)), ("halt", dict(rd=9))]
    return prog(*items)


def both(code: bytes, make: Any, setup: Any = None, *, engines: tuple[str, ...] = ENGINES,
         **run: Any) -> dict[str, Any]:
    """Run ``code`` with the plugins ``make()`` returns on each engine; assert equal outcomes
    and journals; return the fast engine's machine, outcome and plugins."""
    seen: dict[str, Any] = {}
    got: dict[str, Any] = {}
    for engine in engines:
        plugins = make()
        m = new_machine(code, cores=1, plugins=plugins)
        if setup is not None:
            setup(m)
        m.set_engine(engine)
        seen[engine] = (outcome(m, **(run or {"max_steps": 100_000})),
                        [list(getattr(p, "log", [])) for p in plugins])
        got[engine] = {"machine": m, "outcome": seen[engine][0], "plugins": plugins}
    for engine in engines[1:]:
        assert seen[engine] == seen[engines[0]], engine
    return got[engines[-1]]


# --------------------------------------------------------------------------- the API


def test_a_journal_is_a_list_and_excludes_callbacks():
    log: list[Any] = []
    w = Watch(0, 0x100, journal=log)
    assert w.journal is log and w.on_read is None and w.on_write is None
    with pytest.raises(TypeError, match="journal must be a list"):
        Watch(0, 0x100, journal=())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not both"):
        Watch(0, 0x100, on_read=lambda *a: None, journal=log)
    with pytest.raises(TypeError):
        Watch(0, 0x100, None, None, "p", log)  # type: ignore[misc]  # keyword only
    assert (READ, WRITE) == (0, 1)


def test_a_hook_returning_a_bad_journal_watch_is_a_plugin_error():
    class Bad(Plugin):
        @tessera.hookimpl
        def tessera_memory_watches(self, machine, space):
            return [Watch(0, 4, journal=(), plugin="bad")]  # type: ignore[arg-type]

    m = new_machine(walker(0x8000, 4, 4), cores=1, plugins=(Bad(),))
    with pytest.raises(PluginError):
        m.run(max_steps=100)


def test_the_window_carries_a_journal_covering_its_whole_region_and_nothing_else():
    s = AddressSpace()
    w = s.window
    s.add_ram("ram", 0x1000, 0x1000)
    s.add_ram("small", 0x4000, 0x100)
    log: list[Any] = []
    s.apply_watches([Watch(0, 1 << 32, journal=log)])
    assert w.region is s.region_named("ram") and w.journal is log
    assert w.last4 < 0 and w.jlast4 == 0x1000 - 4 and w.span == 0 and w.jspan == 0x1000
    assert "journalled" in repr(w) and w.covers(0x1FFC, 4)
    s.apply_watches([Watch(0x1000, 0x1800, journal=log)])          # part of it: not the window
    assert w.region is s.region_named("small") and w.journal is None and w.last4 == 0x100 - 4
    s.apply_watches([Watch(0x1000, 0x2000, journal=log), Watch(0x1000, 0x2000, journal=[])])  # two journals
    assert w.region is s.region_named("small")
    s.apply_watches([Watch(0x1000, 0x2000, journal=log), Watch(0x1800, 0x1804, on_read=lambda *a: None)])
    assert w.region is s.region_named("small")                       # a callback too
    s.apply_watches([Watch(0, 1 << 32, journal=log)])
    s.regions[0].__dict__["read"] = lambda *a: 0                     # check mode's tap refuses it so
    s.refresh_window()
    assert w.region is s.region_named("small")
    s.apply_watches([])
    assert w.region is s.region_named("ram") and w.journal is None and w.jlast1 < 0 and w.jspan == 0


def test_a_journalled_space_records_completed_accesses_only():
    s = AddressSpace()
    s.add_ram("ram", 0x1000, 0x100)
    s.add_rom("rom", 0x2000, 0x100, data=bytes(range(256)))
    log: list[Any] = []
    s.apply_watches([Watch(0x1000, 0x2100, journal=log)])
    s.write(0x1010, 2, 0x1_2345)                 # the value stored: its low two bytes
    assert s.read(0x1010, 2) == 0x2345 and s.read(0x2001, 1) == 1
    with pytest.raises(MemoryFault):
        s.write(0x2000, 4, 5)                    # ROM: refused before anything is stored
    with pytest.raises(MemoryFault):
        s.read(0x10FE, 4)                        # crosses the end
    assert log == [(WRITE, 0x1010, 2, 0x2345), (READ, 0x1010, 2, 0x2345), (READ, 0x2001, 1, 1)]
    s.write_bytes(0x1000, b"\1\2")               # bulk transfers are not data accesses
    assert s.read_bytes(0x1000, 2) == b"\1\2" and len(log) == 3


# --------------------------------------------------------------------------- the rewrite at every edge


def compiled(source: str) -> Any:
    """``source`` (statements over ``cpu``, ``a`` and ``v``, setting ``r``) rewritten, as a function."""
    ctx = inline.Context(inline.Binder(), {}, set(), None)
    stmts = memops.rewrite(ast.parse(source).body, ctx)
    assert stmts is not None
    fn = ast.FunctionDef(name="f", args=ast.arguments(posonlyargs=[], args=[ast.arg(n) for n in ("cpu", "a", "v")],
                                                      kwonlyargs=[], kw_defaults=[], defaults=[]),
                         body=memops.prologue(ctx) + stmts + [ast.Return(ast.Name("r", ast.Load()))],
                         decorator_list=[], returns=None, type_params=[])
    module = ast.fix_missing_locations(ast.Module(body=[fn], type_ignores=[]))
    namespace = dict(ctx.binder.namespace)
    exec(compile(module, "<journal test>", "exec"), namespace)  # noqa: S102
    return namespace["f"]


def journalled_space(endian: str, log: list[Any]) -> AddressSpace:
    s = AddressSpace(endian=endian)  # type: ignore[arg-type]
    s.add_ram("ram", 0x1000, 0x100)
    s.add_ram("other", 0x1100, 0x40)
    s.add_rom("rom", 0x2000, 0x100, data=bytes(range(256)))
    s.apply_watches([Watch(0, 1 << 32, journal=log)])
    s.write_bytes(0x1000, bytes((7 + i) & 0xFF for i in range(0x100)))
    return s


def result(call: Any) -> tuple[str, Any]:
    try:
        return "ok", call()
    except MemoryFault as exc:
        return "fault", str(exc)


@pytest.mark.parametrize("endian", ["little", "big"])
@pytest.mark.parametrize("size", [1, 2, 3, 4, 8, 16])
def test_inline_accesses_journal_what_the_space_journals_at_every_edge(endian, size, monkeypatch):
    read = compiled(f"r = cpu.space.read(a, {size})")
    write = compiled(f"cpu.space.write(a, {size}, v)\nr = None")
    calls = WrapperCalls(monkeypatch)
    addresses = [0xFF0, 0x1000 - size + 1, 0x1000, 0x1001, 0x1080, 0x1100 - size, 0x1100 - size + 1,
                 0x10FF, 0x1100, 0x1140 - size, 0x1140, 0x2000, 0x20FF, 0x3000]
    value = 0x0123456789ABCDEF_FEDCBA9876543210 | (1 << 130)   # wider than any size: masked
    inside = 0
    for a in addresses:
        ref_log: list[Any] = []
        my_log: list[Any] = []
        ref, mine = journalled_space(endian, ref_log), journalled_space(endian, my_log)
        assert mine.window.journal is my_log and mine.window.region.name == "ram"
        cpu = types.SimpleNamespace(space=mine)
        before = calls.count
        assert result(lambda: read(cpu, a, 0)) == result(lambda: ref.read(a, size)), hex(a)  # noqa: B023
        assert result(lambda: write(cpu, a, value)) == result(lambda: ref.write(a, size, value)), hex(a)  # noqa: B023
        assert my_log == ref_log, hex(a)
        for r in ("ram", "other"):
            assert ref.region_named(r).data == mine.region_named(r).data
        if 0x1000 <= a <= 0x1100 - size:          # in the window: the reference's two calls, none of mine
            assert calls.count - before == 2 and len(my_log) == 2 and my_log[1][3] == value & ((1 << 8 * size) - 1)
            inside += 1
    assert inside >= 4


def test_an_inline_journalled_store_to_code_still_drops_it():
    from tessera.memory.regions import CODE_PAGE_BITS

    log: list[Any] = []
    s = AddressSpace()
    region = s.add_ram("ram", 0x1000, 0x1000)
    dropped: list[tuple[int, int]] = []

    class Cache:
        def invalidate(self, start, end):
            dropped.append((start, end))
            return set()

        def clear(self):
            pass
    s.decode_cache("toy", Cache)
    s.mark_code(region, 0x1440, 4)
    s.apply_watches([Watch(0, 1 << 32, journal=log)])
    assert s.window.journal is log and (0x440 >> CODE_PAGE_BITS) in s.window.code
    write = compiled("cpu.space.write(a, 4, v)\nr = None")
    write(types.SimpleNamespace(space=s), 0x1442, 0x1_0000_0001)
    assert dropped == [(0x1442, 0x1446)] and log == [(WRITE, 0x1442, 4, 1)] and s.read(0x1442, 4) == 1


# --------------------------------------------------------------------------- machines on both engines


def test_a_loop_in_journalled_ram_journals_inline_exactly(monkeypatch):
    calls = WrapperCalls(monkeypatch)
    got = both(walker(0x8000, 300, 4), lambda: (Journal(),))
    m, (journal,) = got["machine"], got["plugins"]
    assert journalled_inline(m)
    log = journal.log
    assert len(log) == 600 and log[0] == (WRITE, 0x8000, 4, 0x12345) and log[1] == (READ, 0x8000, 4, 0x12345)
    assert log[-1] == (READ, 0x8000 + 4 * 299, 4, 0x12345 + 77 * 299)
    fast_calls = calls.count
    step = new_machine(walker(0x8000, 300, 4), cores=1, plugins=(Journal(),))
    step.set_engine("step")
    calls.count = 0
    step.run(max_steps=100_000)
    assert calls.count == 600 and fast_calls < 600 + 600 // 4   # the step run's 600 plus the fast one's few


@pytest.mark.parametrize("start,stride,address", [
    (RAM_END - 0x100, 2, RAM_END - 2),   # a word at 0xfffe straddles the window's end
    (RAM_END - 0x100, 4, RAM_END),       # the next word after the last one is unmapped
])
@pytest.mark.parametrize("handler", [False, True])
def test_a_faulting_access_journals_nothing_on_either_engine(start, stride, address, handler):
    got = both(walker(start, 1000, stride, handler=handler), lambda: (Journal(),))
    (res, _hash), log = got["outcome"], got["plugins"][0].log
    if handler:
        assert res[0] == "ok" and res[3] == 7
    else:
        assert res[:2] == ("error", "UnhandledTrap")
    assert journalled_inline(got["machine"])
    assert all(a + n <= RAM_END for _k, a, n, _v in log) and log[-1][1] < address
    assert log[-1][0] == READ   # the faulting store is not there; the load before it is


def test_partial_journals_and_other_regions_are_reached_through_the_space():
    def setup(m: Machine) -> None:
        m.space.add_ram("more", RAM_END, 0x100)

    # journal [0x8000, RAM_END + 0x80): RAM only in part, "more" in part — no window at all
    got = both(walker(RAM_END - 0x80, 64, 4), lambda: (Journal(0x8000, RAM_END + 0x80),), setup)
    log = got["plugins"][0].log
    assert got["machine"].space.window.region is None
    assert {a for _k, a, _n, _v in log} == {RAM_END - 0x80 + 4 * i for i in range(64) if RAM_END - 0x80 + 4 * i
                                              < RAM_END + 0x80}
    # the whole space journalled: RAM is the window, "more" journals through its wrapper
    got = both(walker(RAM_END - 0x80, 64, 4), lambda: (Journal(),), setup)
    assert journalled_inline(got["machine"]) and got["machine"].space.window.region.name == "ram"
    assert len(got["plugins"][0].log) == 128


def test_device_accesses_are_journalled_with_what_the_device_returned_and_received():
    device = Recorder()

    def setup(m: Machine) -> None:
        m.space.add_mmio("dev", DEVICE, 0x100, device)

    code = prog(("li", dict(rd=5, limm=DEVICE)), ("li", dict(rd=6, limm=40)), ("li", dict(rd=3, limm=0)),
                "loop:", ("ld", dict(rd=8, rs1=5, imm=4)), ("add", dict(rd=3, rs1=3, rs2=8)),
                ("st", dict(rd=3, rs1=5, imm=8)), ("addi", dict(rd=6, rs1=6, imm=-1)),
                ("bne", dict(rd=6, rs1=0, boff="loop")), ("halt", dict(rd=3)))
    got = both(code, lambda: (Journal(),), setup)
    log = got["plugins"][0].log
    assert len(log) == 80 and log[0] == (READ, DEVICE + 4, 4, 0x1234_567C)
    assert log[1] == (WRITE, DEVICE + 8, 4, 0x1234_567C) and log[3] == (WRITE, DEVICE + 8, 4, 2 * 0x1234_567C)
    assert device.log[-1] == ("w", 8, 4, (40 * 0x1234_567C) & 0xFFFF_FFFF)


def test_a_journal_and_a_callback_watch_on_one_region_see_the_same_accesses():
    got = both(walker(0x8000, 100, 4), lambda: (Journal(), Bump(0x8000, 0x8100)))
    m, (journal, bump) = got["machine"], got["plugins"]
    assert m.space.window.region is None or m.space.window.region.name != "ram"
    assert len(journal.log) == 200 and len(bump.log) == 2 * 64
    # the journal records the value the program received: the callback's replacement
    assert journal.log[1] == (READ, 0x8000, 4, 0x12345 + 1) and bump.log[1] == ("r", 0x8000, 4, 0x12345)
    assert journal.log[-1] == (READ, 0x8000 + 4 * 99, 4, 0x12345 + 77 * 99)   # past the callback's range


def test_a_journal_set_and_removed_between_runs_applies_from_the_next_block():
    code = walker(0x8000, 300, 4)
    seen = {}
    for engine in ENGINES:
        log: list[Any] = []
        m = new_machine(code, cores=1)
        m.set_engine(engine)
        first = outcome(m, max_steps=600)
        m.space.apply_watches([Watch(0, m.space.limit, journal=log)])
        second = outcome(m, max_steps=700)
        if engine == "fast":
            assert journalled_inline(m)
        m.space.apply_watches([])
        third = outcome(m, max_steps=100_000)
        seen[engine] = (first, second, third, list(log))
        assert m.space.window.journal is None and m.space.window.region.name == "ram"
    assert seen["fast"] == seen["step"]
    log = seen["fast"][3]
    assert 150 < len(log) < 300 and log[0][1] > 0x8000 + 4 * 50


def test_a_journal_set_by_a_device_in_the_middle_of_a_block_records_its_next_access():
    scratch, arm = 0x40000, 0x70000
    code = prog(
        ("li", dict(rd=5, limm=scratch)), ("li", dict(rd=9, limm=arm)), ("li", dict(rd=6, limm=40)),
        ("li", dict(rd=3, limm=0)), "loop:",
        ("st", dict(rd=6, rs1=5, imm=0)),
        ("st", dict(rd=6, rs1=9, imm=0)),   # journals the scratch RAM when it sees 20
        ("ld", dict(rd=8, rs1=5, imm=0)), ("add", dict(rd=3, rs1=3, rs2=8)),
        ("addi", dict(rd=5, rs1=5, imm=4)), ("addi", dict(rd=6, rs1=6, imm=-1)),
        ("bne", dict(rd=6, rs1=0, boff="loop")), ("halt", dict(rd=3)))
    logs: list[list[Any]] = []

    def setup(m: Machine) -> None:
        m.space.add_ram("scratch", scratch, 0x20000)   # bigger than the board's RAM: the window
        log: list[Any] = []
        logs.append(log)

        class Arm:
            def read(self, offset, size):
                return 0

            def write(self, offset, size, value):
                if value == 20:
                    m.space.apply_watches([Watch(scratch, scratch + 0x20000, journal=log)])
        m.space.add_mmio("arm", arm, 0x10, Arm())

    both(code, tuple, setup)
    step_log, fast_log = logs
    assert fast_log == step_log and fast_log[0] == (READ, scratch + 4 * 20, 4, 20) and len(fast_log) == 1 + 2 * 19


def test_check_mode_journals_each_access_once():
    got = both(walker(0x8000, 200, 4), lambda: (Journal(),), engines=("step", "check"))
    log = got["plugins"][0].log
    assert len(log) == 400 and log[:2] == [(WRITE, 0x8000, 4, 0x12345), (READ, 0x8000, 4, 0x12345)]


def test_journals_are_not_snapshotted_and_the_hook_gives_a_restored_machine_its_own():
    code = walker(0x8000, 400, 4)
    journal = Journal()
    m = new_machine(code, cores=1, plugins=(journal,))
    m.set_engine("fast")
    m.run(max_steps=701, raise_on_budget=False)
    assert journalled_inline(m)
    taken = len(journal.log)
    blob = m.snapshot()
    unwatched = new_machine(code, cores=1)
    unwatched.set_engine("fast")
    unwatched.run(max_steps=701, raise_on_budget=False)
    assert taken >= 190 and len(blob) == len(unwatched.snapshot())   # the journal's entries are not in it
    plain = Machine.restore(blob, host=make_host())
    assert plain.space.window.journal is None and not getattr(plain.space, "_watches", [])
    again = Journal()
    restored = Machine.restore(blob, host=make_host(again))
    restored.set_engine("fast")
    rest = outcome(restored, max_steps=100_000)
    assert journal.log[:taken] == journal.log and len(journal.log) == taken   # the original's, untouched
    whole = Journal()
    reference = new_machine(code, cores=1, plugins=(whole,))
    reference.set_engine("step")
    assert outcome(reference, max_steps=100_000)[1] == rest[1]
    assert whole.log[taken:] == again.log and restored.space.window.journal is again.log


# --------------------------------------------------------------------------- the record of loads and stores


def test_comparing_every_register_with_a_hint_finds_exactly_what_changed_in_order():
    from tessera.engine.record import _compare_all

    agent = types.SimpleNamespace(regs={"x": list(range(32)), "f": [0.5] * 4})
    shadows = {"x": list(range(32)), "f": [0.5] * 4}
    hint: dict[str, list[int]] = {}

    def compare() -> list[Any]:
        found: list[Any] = []
        _compare_all(agent, shadows, found, hint)
        assert shadows["x"] == agent.regs["x"] and shadows["f"] == agent.regs["f"]
        return found

    agent.regs["x"][15] = 99                       # no hint yet: a scan, which sets it
    assert compare() == [("x", 15, 99)] and hint == {"x": [15]}
    agent.regs["x"][15] = 100                      # the hint alone
    assert compare() == [("x", 15, 100)]
    agent.regs["x"][20], agent.regs["x"][3], agent.regs["x"][15] = 7, 8, 9   # the hint and more: in order
    agent.regs["f"][2] = 1.5
    assert compare() == [("x", 3, 8), ("x", 15, 9), ("x", 20, 7), ("f", 2, 1.5)]
    assert hint["x"] == [3, 15, 20]
    agent.regs["x"][4] = 1                         # a hinted register that did not change is not reported
    assert compare() == [("x", 4, 1)]
    assert compare() == []


# --------------------------------------------------------------------------- RISC-V: every width

rv = pytest.importorskip("tessera_riscv")
RV_RAM = 1 << 20
RV_LOADS = {32: ("lb", "lbu", "lh", "lhu", "lw"), 64: ("lb", "lbu", "lh", "lhu", "lw", "lwu", "ld")}
RV_STORES = {32: ("sb", "sh", "sw"), 64: ("sb", "sh", "sw", "sd")}


def rv_run(xlen: int, source: str) -> tuple[Any, list[Any]]:
    from tessera.isa.asm import assemble

    arch = {32: rv.RV32IM, 64: rv.RV64IM}[xlen]
    seen = {}
    for engine in ENGINES:
        journal = Journal()
        m = Machine(arch, host=make_host(journal), config={"echo": False, "ram": RV_RAM}, engine=engine)
        m.space.add_ram("more", RV_RAM, 0x1000)   # next to the window; unmapped after it
        for address, blob in assemble(arch, source, base=0x10000).segments:
            m.space.write_bytes(address, blob, force=True)
        m.set_entry(0x10000)
        seen[engine] = (outcome(m, max_steps=200_000), journal.log)
        if engine == "fast":
            assert journalled_inline(m)
    assert seen["fast"] == seen["step"]
    return seen["fast"]


@pytest.mark.parametrize("xlen", [32, 64])
@pytest.mark.parametrize("where", ["inside", "end", "more"])
def test_riscv_loads_and_stores_of_every_width_journal_alike(xlen, where):
    start, count, stride = {"inside": (0x8001, 100, 3), "end": (RV_RAM - 0x40, 80, 1),
                            "more": (RV_RAM + 0x10, 60, 5)}[where]
    for load in RV_LOADS[xlen]:
        for store in RV_STORES[xlen]:
            (res, _hash), log = rv_run(xlen, f"""
    li a1, {start}
    li a2, {count}
    li a4, 0x8badf00d
loop:
    {store} a4, 0(a1)
    {load} a0, 0(a1)
    addi a4, a4, 0x135
    addi a1, a1, {stride}
    addi a2, a2, -1
    bnez a2, loop
    li a7, 93
    ecall
""")
            width = {"b": 1, "h": 2, "w": 4, "d": 8}
            n, m = width[store[1]], width[load[1]]
            first = [(WRITE, start, n, 0x8BADF00D & ((1 << 8 * n) - 1))]
            assert log[:1] == first, (load, store)
            assert all(k in (READ, WRITE) and size in (n, m) for k, _a, size, _v in log)
            if where == "end" and max(n, m) > 1:    # an access across the two RAMs faults
                assert res[0] == "error" and not any(a < RV_RAM < a + size for _k, a, size, _v in log)
            else:
                assert res[0] == "ok" and len(log) == 2 * count
