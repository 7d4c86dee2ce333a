"""Check mode (``--engine check``): every translated block is checked against stepping.

The translations under test are made wrong on purpose: a semantic function whose
source (what the fast engine's inliner reads) differs from its code (what the step
engine calls) — exactly a translation that does not do what its semantics do.  Check
mode must stop at the first difference with ``EngineMismatch`` naming the
architecture, the block, the instruction and the register or memory byte, with both
values; and on correct code it must agree with stepping while really comparing blocks.
"""

from __future__ import annotations

import gc
import textwrap
import weakref
from typing import Any

import attrs
import pytest

import tessera
from tessera.cli.main import main
from tessera.control import Trap
from tessera.engine import check
from tessera.errors import EngineMismatch, all_error_classes
from tessera.machine import ENGINES, Machine
from tessera_toyarch import TOY

from .conftest import CONSOLE, Plugin, make_host, producer_consumer, prog, sum_loop

#: Builds semantic functions that lie about their source (also used by the command-line test's plugin).
LYING = '''
import linecache, textwrap
SERIAL = [0]

def lying(name, real, shown, **names):
    """A semantic function that runs ``real`` but whose source, as the inliner reads it, is ``shown``."""
    SERIAL[0] += 1
    filename = f"<tessera test {name} {SERIAL[0]}>"
    namespace = {"MASK": 0xFFFF_FFFF, **names}
    exec(compile(textwrap.dedent(real), filename, "exec"), namespace)
    lines = textwrap.dedent(shown).splitlines(True)
    linecache.cache[filename] = (sum(map(len, lines)), None, lines, filename)
    return namespace[name]

ADDI_REAL = """
def addi(cpu, ins):
    if ins.rd:
        cpu.r[ins.rd] = (cpu.r[ins.rs1] + ins.imm) & MASK
"""
# what the inliner reads: one more, but only once the source register reaches 5
ADDI_SHOWN = """
def addi(cpu, ins):
    if ins.rd:
        cpu.r[ins.rd] = (cpu.r[ins.rs1] + ins.imm + (cpu.r[ins.rs1] == 5)) & MASK
"""
'''
_helpers: dict[str, Any] = {}
exec(LYING, _helpers)  # noqa: S102 - a function whose code differs from its source, on purpose
lying = _helpers["lying"]


def arch_with(**semantics: Any) -> Any:
    rows = tuple(attrs.evolve(e, semantics=semantics[e.mnemonic]) if e.mnemonic in semantics else e
                 for e in TOY.encodings)
    return attrs.evolve(TOY, encodings=rows)


def machine(code: bytes, engine: str, *, arch: Any = TOY, host: Any = None, **config: Any) -> Machine:
    cfg = {"echo": False, "cores": 1, **config}
    m = Machine(arch, host=host or make_host(), config=cfg, engine=engine)
    m.space.write_bytes(0, code, force=True)
    return m


ADDI_OFF_AT_5 = lying("addi", _helpers["ADDI_REAL"], _helpers["ADDI_SHOWN"])

@pytest.fixture(autouse=True)
def hot_at_second_visit(monkeypatch):
    """Translate a loop at its second visit (as the root conftest does), so short loops are blocks."""
    monkeypatch.setenv("TESSERA_BLOCK_HOT", "2")


SUM = prog(*sum_loop(20))  # li r2,20; li r3,0; loop: add r3,r3,r2; addi r2,r2,-1; bne r2,r0,loop; halt r3
LOOP = 8


# --------------------------------------------------------------------------- correct code

def test_check_is_an_engine_choice():
    assert "check" in ENGINES
    assert machine(SUM, "check").engine == "check"


def test_environment_selects_check_mode(monkeypatch):
    monkeypatch.setenv("TESSERA_ENGINE", "check")
    assert Machine(TOY, host=make_host(), config={"echo": False}).engine == "check"


@pytest.mark.parametrize("program,cores", [(prog(*sum_loop(300)), 1), (prog(*producer_consumer(40)), 2)])
def test_correct_code_agrees_with_stepping_and_blocks_are_really_compared(program, cores):
    hashes, results = {}, {}
    for engine in ("step", "check"):
        m = machine(program, engine, cores=cores)
        r = m.run(max_steps=100_000)
        hashes[engine], results[engine] = m.state_hash(), (r.reason, r.steps, r.cycles, r.exit_code)
        if engine == "check":
            stats = check.statistics(m)
    assert hashes["check"] == hashes["step"] and results["check"] == results["step"]
    assert stats["checked"] > 0 and stats["replayed"] > 50, stats


def test_budgets_and_cuts_are_exact_in_check_mode():
    ends = {}
    for engine in ("step", "check"):
        m = machine(prog(*sum_loop(200)), engine)
        seen = []
        for _ in range(4):
            r = m.run(max_steps=97, raise_on_budget=False)
            seen.append((r.reason, r.steps, m.agents[0].pc, m.agents[0].instret))
        seen.append(m.state_hash())
        ends[engine] = seen
    assert ends["check"] == ends["step"]


def outcome(m: Machine, steps: int) -> tuple[Any, ...]:
    try:
        r = m.run(max_steps=steps, raise_on_budget=False)
        res: tuple[Any, ...] = (r.reason, r.steps, r.cycles, r.exit_code, r.pc)
    except tessera.errors.TesseraError as err:
        res = (type(err).__name__, err.pc, err.agent, str(err))
    return res, [(a.name, getattr(a, "pc", None), a.instret, a.traps, a.cycles, a.status) for a in m.agents], \
        m.state_hash()


TRAPPING = prog(  # an ecall in the middle of a hot loop: the block traps at its second instruction
    ("li", dict(rd=7, limm="handler")),
    ("csrw", dict(csr=0, rs1=7)),
    ("li", dict(rd=2, limm=25)),
    "loop:",
    ("add", dict(rd=3, rs1=3, rs2=2)),
    ("ecall", {}),
    ("addi", dict(rd=2, rs1=2, imm=-1)),
    ("bne", dict(rd=2, rs1=0, boff="loop")),
    ("halt", dict(rd=4)),
    "handler:",
    ("addi", dict(rd=4, rs1=4, imm=1)),
    ("csrr", dict(rd=6, csr=1)),
    ("addi", dict(rd=6, rs1=6, imm=4)),
    ("csrw", dict(csr=1, rs1=6)),
    ("eret", {}),
)


def self_modifying() -> bytes:
    """A hot loop storing over an instruction later in its own block (the block leaves early)."""
    from .conftest import encode

    old, new = encode("addi", rd=5, rs1=5, imm=1), encode("addi", rd=5, rs1=5, imm=100)
    return prog(
        ("li", dict(rd=2, limm=20)), ("li", dict(rd=6, limm="target")), ("li", dict(rd=9, limm="table")),
        "loop:",
        ("add", dict(rd=11, rs1=2, rs2=2)), ("add", dict(rd=11, rs1=11, rs2=11)),
        ("add", dict(rd=11, rs1=11, rs2=9)), ("ld", dict(rd=7, rs1=11, imm=0)), ("st", dict(rd=7, rs1=6, imm=0)),
        "target:",
        ("addi", dict(rd=5, rs1=5, imm=1)), ("addi", dict(rd=2, rs1=2, imm=-1)),
        ("bne", dict(rd=2, rs1=0, boff="loop")), ("halt", dict(rd=5)),
        "table:",
        *[new if 1 <= v <= 7 else old for v in range(21)],
    )


@pytest.mark.parametrize("name,program,cores", [
    ("traps taken mid-block", TRAPPING, 1),
    ("code written mid-block", self_modifying(), 1),
    ("a halt in a block (the third core to reach it runs it)", prog(*sum_loop(30)), 3),
    ("waits on semaphores", prog(*producer_consumer(25)), 2),
])
def test_traps_halts_waits_and_code_writes_mid_block_agree_with_stepping(name, program, cores):
    runs = {}
    for engine in ("step", "check"):
        m = machine(program, engine, cores=cores)
        runs[engine] = [outcome(m, 37), outcome(m, 100_000)]  # cut mid-run, then to the end
        if engine == "check":
            stats = check.statistics(m)
    assert runs["check"] == runs["step"], name
    assert runs["check"][-1][0][0] == "halted" and stats["checked"] > 0, (name, stats)


class CountingObserver(Plugin):
    """Counts every retirement it sees, per address: a side effect that must not double."""

    def __init__(self) -> None:
        self.seen: dict[int, int] = {}
        self.events: list[str] = []

    @tessera.hookimpl
    def tessera_execute_observe(self, ins):
        def observe(agent, ins):
            self.seen[ins.address] = self.seen.get(ins.address, 0) + 1
        return observe

    @tessera.hookimpl
    def tessera_sync_event(self, event):
        self.events.append(f"{event.kind} {event.obj} {event.agent}")


def test_observers_and_sync_listeners_see_each_instruction_once():
    counts = {}
    for engine in ("step", "check"):
        plugin = CountingObserver()
        m = machine(prog(*producer_consumer(30)), engine, host=make_host(plugin), cores=2)
        m.run(max_steps=100_000)
        counts[engine] = (plugin.seen, plugin.events)
        if engine == "check":
            assert check.statistics(m)["checked"] > 0
    assert counts["check"] == counts["step"]
    assert sum(counts["check"][0].values()) > 300


def test_a_device_access_happens_once_and_the_instructions_before_it_are_compared():
    printing = prog(
        ("li", dict(rd=1, limm=CONSOLE)),
        ("li", dict(rd=2, limm=30)),
        "loop:",
        ("addi", dict(rd=3, rs1=2, imm=64)),
        ("st", dict(rd=3, rs1=1, imm=0)),       # the console: a device
        ("addi", dict(rd=2, rs1=2, imm=-1)),
        ("bne", dict(rd=2, rs1=0, boff="loop")),
        ("halt", dict(rd=0)),
    )
    texts = {}
    for engine in ("step", "check"):
        m = machine(printing, engine)
        m.run(max_steps=10_000)
        texts[engine] = bytes(m.space.region_named("console").device.text)
        if engine == "check":
            stats = check.statistics(m)
    assert texts["check"] == texts["step"] == bytes(range(64 + 30, 64, -1))
    assert stats["partial"] > 0 and stats["checked"] > 0, stats


def print_r2(cpu, ins):
    """An ``ecall`` that writes to standard output, as a system call does."""
    print(cpu.r[2], end=" ")


def test_what_semantics_print_is_printed_once(capsys):
    printing = prog(
        ("li", dict(rd=2, limm=12)),
        "loop:",
        ("ecall", {}),
        ("addi", dict(rd=2, rs1=2, imm=-1)),
        ("bne", dict(rd=2, rs1=0, boff="loop")),
        ("halt", dict(rd=0)),
    )
    printed = {}
    for engine in ("step", "check"):
        capsys.readouterr()
        m = machine(printing, engine, arch=arch_with(ecall=print_r2))
        m.run(max_steps=10_000)
        printed[engine] = capsys.readouterr().out
        if engine == "check":
            assert check.statistics(m)["checked"] > 0
    assert printed["check"] == printed["step"] == " ".join(str(v) for v in range(12, 0, -1)) + " "


# --------------------------------------------------------------------------- broken translations

def run_to_mismatch(arch: Any, code: bytes = SUM) -> tuple[Machine, EngineMismatch]:
    m = machine(code, "check", arch=arch)
    with pytest.raises(EngineMismatch) as info:
        m.run(max_steps=100_000)
    return m, info.value


def test_the_breakage_is_real_the_fast_engine_gives_another_answer():
    arch = arch_with(addi=ADDI_OFF_AT_5)
    answers = {engine: machine(SUM, engine, arch=arch).run(max_steps=100_000).exit_code
               for engine in ("step", "fast")}
    assert answers["step"] == sum(range(21)) and answers["fast"] != answers["step"]


def test_a_wrong_register_is_named_with_the_block_the_instruction_and_both_values():
    m, err = run_to_mismatch(arch_with(addi=ADDI_OFF_AT_5))
    assert isinstance(err, EngineMismatch) and err.exit_code == 78
    assert (err.arch, err.block, err.instruction, err.location) == ("toy", LOOP, LOOP + 4, "r[2]")
    assert (err.fast, err.step) == (5, 4)  # r2 = 5 - 1 stepped, 5 - 1 + 1 translated
    assert err.agent == "core0" and err.pc == LOOP
    text = str(err)
    assert text.startswith("engine mismatch: toy block at 0x00000008, instruction ")
    assert "at 0x0000000c (addi r2, r2, -1): r[2] is 0x5 on the fast engine but 0x4 on the step engine" in text
    # the machine is left where the block's call started, exactly as stepping has it there
    cpu = m.agents[0]
    stepped = machine(SUM, "step", arch=arch_with(addi=ADDI_OFF_AT_5))
    stepped.run(max_steps=cpu.instret, raise_on_budget=False)
    assert cpu.pc == LOOP == stepped.agents[0].pc and cpu.r == stepped.agents[0].r
    # the call ran whole iterations of [add, addi, bne] from there until r2 reached 5 at the addi
    assert str(err).startswith(f"engine mismatch: toy block at 0x00000008, instruction {3 * (cpu.r[2] - 5) + 1} ")


def test_a_wrong_store_is_named_as_a_memory_byte():
    st = lying("st", """
        def st(cpu, ins):
            cpu.space.write((cpu.r[ins.rs1] + ins.imm) & MASK, 4, cpu.r[ins.rd])
        """, """
        def st(cpu, ins):
            cpu.space.write((cpu.r[ins.rs1] + ins.imm) & MASK, 4, cpu.r[ins.rd] ^ 0x100)
        """)
    code = prog(
        ("li", dict(rd=1, limm=0x1000)),
        ("li", dict(rd=2, limm=20)),
        "loop:",
        ("st", dict(rd=2, rs1=1, imm=0)),
        ("addi", dict(rd=2, rs1=2, imm=-1)),
        ("bne", dict(rd=2, rs1=0, boff="loop")),
        ("halt", dict(rd=0)),
    )
    _m, err = run_to_mismatch(arch_with(st=st), code)
    assert (err.block, err.instruction, err.location) == (LOOP, LOOP, "memory byte 0x00001001")
    assert (err.fast, err.step) == (1, 0)
    assert "(st r2, 0(r1)): memory byte 0x00001001 is 0x1 on the fast engine but 0x0 on the step engine" in str(err)


def test_a_wrong_branch_is_named_as_the_next_pc():
    bne = lying("bne", """
        def bne(cpu, ins):
            if cpu.r[ins.rd] != cpu.r[ins.rs1]:
                return (ins.address + ins.boff) & MASK
            return None
        """, """
        def bne(cpu, ins):
            if cpu.r[ins.rd] != cpu.r[ins.rs1] and cpu.r[ins.rd] != 7:
                return (ins.address + ins.boff) & MASK
            return None
        """)
    _m, err = run_to_mismatch(arch_with(bne=bne))
    assert (err.block, err.instruction) == (LOOP, LOOP + 8)
    assert (err.location, err.fast, err.step) == ("the next pc", LOOP + 12, LOOP)
    assert "(bne r2, r0, 0x8): the next pc is 0x14 on the fast engine but 0x8 on the step engine" in str(err)


def test_a_trap_only_one_path_raises_is_named_as_the_outcome():
    add = lying("add", """
        def add(cpu, ins):
            if ins.rd:
                cpu.r[ins.rd] = (cpu.r[ins.rs1] + cpu.r[ins.rs2]) & MASK
        """, """
        def add(cpu, ins):
            if cpu.r[ins.rs2] == 9:
                raise Trap(2, 0, name="illegal instruction")
            if ins.rd:
                cpu.r[ins.rd] = (cpu.r[ins.rs1] + cpu.r[ins.rs2]) & MASK
        """, Trap=Trap)
    _m, err = run_to_mismatch(arch_with(add=add))
    assert (err.block, err.instruction, err.location) == (LOOP, LOOP, "the outcome")
    assert str(err).endswith("(add r3, r3, r2): the fast engine raises Trap(illegal instruction, cause=2, "
                             "tval=0x0) but the step engine retires it (agent core0, pc 0x00000008)")


# --------------------------------------------------------------------------- the command line and the docs

def cli(capsys: Any, *args: Any) -> tuple[int, str, str]:
    capsys.readouterr()
    with pytest.raises(SystemExit) as exc:
        main([str(a) for a in args])
    out, err = capsys.readouterr()
    return exc.value.code, out, err


def test_run_help_lists_check_mode(capsys):
    code, out, _err = cli(capsys, "run", "--help")
    assert code == 0 and "check" in out.split("--engine", 1)[1][:300]


def test_the_command_line_reports_a_mismatch_in_one_line_with_its_own_status(capsys, tmp_path, monkeypatch):
    (tmp_path / "brokentoy.py").write_text(textwrap.dedent('''
        import attrs, tessera
        from tessera_toyarch import TOY
        TESSERA_API_VERSION = 1

        @tessera.hookimpl
        def tessera_architectures():
            addi = lying("addi", ADDI_REAL, ADDI_SHOWN)
            rows = tuple(attrs.evolve(e, semantics=addi) if e.mnemonic == "addi" else e for e in TOY.encodings)
            return [attrs.evolve(TOY, name="toybroken", encodings=rows)]
        ''') + LYING)
    (tmp_path / "sum.hex").write_text("".join(f"{int.from_bytes(SUM[i:i + 4], 'little'):08x}\n"
                                              for i in range(0, len(SUM), 4)))
    monkeypatch.syspath_prepend(str(tmp_path))
    args = ("--plugin-module", "brokentoy", "run", "--arch", "toybroken", "--set", "cores=1",
            "--set", "echo=false", tmp_path / "sum.hex")
    code, _out, _err = cli(capsys, *args, "--engine", "step")
    assert code == sum(range(21))
    code, _out, err = cli(capsys, *args, "--engine", "check")
    assert code == 78 == EngineMismatch.exit_code
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tessera: engine mismatch: toybroken block at 0x00000008")
    assert "(addi r2, r2, -1): r[2] is 0x5 on the fast engine but 0x4 on the step engine" in lines[0]


def test_engine_mismatch_has_its_own_exit_status():
    codes = [cls.exit_code for cls in all_error_classes()]
    assert EngineMismatch in all_error_classes() and codes.count(78) == 1


def test_a_machine_run_in_check_mode_is_freed_with_its_memory():
    m = machine(prog(*sum_loop(50)), "check")
    m.run(max_steps=10_000)
    assert check.statistics(m)["checked"] > 0
    gone = weakref.ref(m)
    del m
    gc.collect()
    assert gone() is None  # the checker lives with the machine's filler, not in a global table


# --------------------------------------------------------------------------- the live-state copies check mode restores

class Unit:
    """Plain plugin state: register files, an array, a table, a queue, a frozen record."""

    def __init__(self) -> None:
        import numpy as np

        self.x = [0] * 8
        self.alias = self.x                      # an architecture's second name for a register file
        self.dest = np.zeros((4, 4), dtype=np.float32)
        self.table: dict[str, Any] = {"a": 1}
        self.queue: Any = __import__("collections").deque([1, 2])
        self.flags = {3}
        self.record = Frozen(1, 2)


@attrs.frozen
class Frozen:
    a: int
    b: int


def test_a_snapshot_is_restored_in_place_even_where_objects_were_replaced():
    import numpy as np

    from tessera.engine.livestate import Snapshot

    unit = Unit()
    x, dest = unit.x, unit.dest
    before = Snapshot([unit])
    unit.x[3] = 7
    unit.dest = np.ones((2, 2))                  # rebound to another array
    dest[1, 1] = 5.0
    unit.table["b"] = [1]
    unit.queue.append(3)
    unit.flags.add(4)
    unit.record = Frozen(1, 3)
    unit.extra = 1
    changes = before.changes()
    assert changes.entries.keys() - changes.fresh == {id(o) for o in (unit, x, dest, unit.table, unit.queue,
                                                                     unit.flags)}
    assert {type(changes.entries[k][0]) for k in changes.fresh} == {np.ndarray, list}  # the new array, [1]
    before.restore()
    assert unit.x is x and unit.alias is x and x == [0] * 8
    assert unit.dest is dest and not dest.any()
    assert unit.table == {"a": 1} and list(unit.queue) == [1, 2] and unit.flags == {3}
    assert unit.record == Frozen(1, 2) and not hasattr(unit, "extra")
    assert before.changes().entries == {}


def test_diff_names_the_first_difference_by_path():
    from tessera.engine.livestate import Snapshot, diff

    unit = Unit()
    unit.x[1] = 1
    named = [("unit", unit)]
    before = Snapshot([unit])
    unit.dest[2, 1] = 1.5
    where, fast, step = diff(before.overlay(before.changes()), before, named)
    assert (where, float(fast), float(step)) == ("unit.dest[2, 1]", 1.5, 0.0)
    unit.dest[2, 1] = 0.0
    unit.x[1] = True                             # a bool where stepping has an int: lists compare types
    assert diff(before.overlay(before.changes()), before, named) == ("unit.x[1]", True, 1)
    unit.x[1] = 1
    unit.table["b"] = 2
    assert diff(before.overlay(before.changes()), before, named) == ("unit.table['b']", 2, "(absent)")
