"""The record operation with memory (``Record(..., journal=, accessed=)``): loads and stores
recorded by the core, compiled into blocks, the same on both engines.

A tool that shows each retirement's memory accesses keeps a journal watch and hands its
list to the request.  These tests check the records of loads and stores (the token
``accessed`` gives, then the register's value, then each access's address and value),
that the fast engine compiles them into blocks (no observer call in the common case),
that what the compiled form cannot take — another register changed by a device, several
accesses, an access under a condition — goes through the observer and gives the same
records, the analysis behind it (:func:`tessera.engine.capture.static_effects`), and
bad requests.
"""

from __future__ import annotations

from typing import Any

import pytest

import tessera
from tessera.engine import blocks as blockmod
from tessera.engine.capture import static_effects, static_writes
from tessera.engine.record import Record
from tessera.isa import Encoding, Instruction
from tessera.memory import Watch

from .conftest import Plugin, new_machine, prog

ENGINES = ("step", "fast", "check")
DATA = 0x8000        # scratch RAM of the toy board (RAM is [0, 0x10000))
DEVICE = 0x7_0000    # where a device is mapped
TWO_LOADS = 0xFFFF_FFF1     # a word decoded as two loads into r4 (not one access: not compiled)
MAYBE_STORE = 0xFFFF_FFF2   # a store made only when r2 is odd (under a condition: not compiled)


def two_loads(cpu, ins):
    cpu.r[4] = (cpu.space.read(DATA, 4) + cpu.space.read(DATA + 4, 4)) & 0xFFFF_FFFF


def maybe_store(cpu, ins):
    if cpu.r[2] & 1:
        cpu.space.write(DATA + 8, 4, cpu.r[2])


CUSTOM = {TWO_LOADS: ("two_loads", two_loads), MAYBE_STORE: ("maybe_store", maybe_store)}


@pytest.fixture(autouse=True)
def hot_soon(monkeypatch):
    monkeypatch.setenv("TESSERA_BLOCK_HOT", "4")    # analysed at the 2nd retirement, compiled soon after


class MemLog(Plugin):
    """Records every retirement: ``pc`` (nothing), ``-pc`` (one register), ``("mem", pc,
    register, accesses)`` (accesses); values after; ``otherwise`` notes ``(pc, changes,
    complete, journal)`` and empties the journal."""

    def __init__(self) -> None:
        self.tokens: list[Any] = []
        self.values: list[int] = []
        self.others: list[tuple[Any, ...]] = []
        self.journal: list[tuple[int, int, int, int]] = []
        self.shadows: dict[Any, dict[str, list[int]]] = {}
        self.accessed_calls = 0

    @tessera.hookimpl
    def tessera_machine_ready(self, machine):
        self.shadows = {a: {f: list(r) for f, r in a.regs.items()} for a in machine.cpus}
        self.journal.clear()

    @tessera.hookimpl
    def tessera_memory_watches(self, machine, space):
        return [Watch(0, space.limit, journal=self.journal)]

    @tessera.hookimpl
    def tessera_decode(self, word, address):
        got = CUSTOM.get(word)
        if got is None:
            return None
        name, fn = got
        return Instruction(Encoding(name, word, 0xFFFF_FFFF, "", fn), word, address, 4, {})

    def sink(self, agent):
        return self.tokens.append, self.values.append, self.shadows[agent]

    @tessera.hookimpl
    def tessera_execute_observe(self, ins):
        pc = ins.address

        def accessed(register, accesses):
            self.accessed_calls += 1
            # a string: tokens become literals in compiled blocks
            return f"mem {pc:#x} {register} {accesses}"

        def otherwise(agent, changes, complete):
            self.others.append((pc, list(changes), complete, list(self.journal)))
            self.journal.clear()
            self.tokens.append(pc)

        return Record(self.sink, pc, lambda file, index: -pc, otherwise,
                      journal=self.journal, accessed=accessed).observer()


def run(engine: str, code: bytes, setup: Any = None) -> tuple[MemLog, Any]:
    log = MemLog()
    m = new_machine(code, cores=1, plugins=(("memlog", log),))
    if setup is not None:
        setup(m)
    m.set_engine(engine)
    m.run(max_steps=100_000)
    return log, m


def records(log: MemLog) -> tuple[Any, ...]:
    return log.tokens, log.values, log.others


def copy_loop(n: int) -> bytes:
    """Loads DATA[i] into r8, adds it to r3, stores r3 at DATA+0x100+i, ``n`` times."""
    return prog(("li", dict(rd=5, limm=DATA)), ("li", dict(rd=6, limm=n)), ("li", dict(rd=3, limm=7)),
                "loop:", ("ld", dict(rd=8, rs1=5, imm=0)), ("add", dict(rd=3, rs1=3, rs2=8)),
                ("st", dict(rd=3, rs1=5, imm=0x100)), ("addi", dict(rd=5, rs1=5, imm=4)),
                ("addi", dict(rd=6, rs1=6, imm=-1)), ("bne", dict(rd=6, rs1=0, boff="loop")),
                ("halt", dict(rd=3)))


def fill_data(m: Any) -> None:
    m.space.write_bytes(DATA, b"".join((i * 3 + 1).to_bytes(4, "little") for i in range(64)))


def test_loads_and_stores_are_recorded_by_the_core_and_compiled_into_blocks(monkeypatch):
    monkeypatch.setenv("TESSERA_BLOCK_SOURCE", "1")
    monkeypatch.setattr(blockmod, "_CODE_CACHE", {})
    got = {engine: run(engine, copy_loop(50), fill_data) for engine in ENGINES}
    assert records(got["fast"][0]) == records(got["step"][0]) == records(got["check"][0])
    log, m = got["fast"]
    assert not log.others and not log.journal
    ld_pc, st_pc = 0xC, 0x14
    ld_changed = f"mem {ld_pc:#x} ('r', 8) ((0, 4),)"
    st_token = f"mem {st_pc:#x} None ((1, 4),)"
    assert log.tokens.count(ld_changed) == 50 and log.tokens.count(st_token) == 50
    # the last iteration: ld r8 <- DATA[49] (a value, then address and value), st r3 -> DATA+0x100+4*49
    loaded, total = 49 * 3 + 1, 7 + sum(i * 3 + 1 for i in range(50))
    last_st = len(log.tokens) - 1 - log.tokens[::-1].index(st_token)
    assert log.tokens[last_st - 2:last_st + 1] == [ld_changed, -0x10, st_token]
    assert log.values[-8:] == [loaded, DATA + 4 * 49, loaded, total, DATA + 0x100 + 4 * 49, total,
                               DATA + 4 * 50, 0]   # ld; add; st; addi r5; addi r6 (the loop's last)
    (loop,) = [b for b in m.space.decode_cache("toy").blocks.values() if b.n != blockmod.NEVER and b.loop]
    assert loop.captured == 6                  # every instruction of the loop, the load and the store too
    assert "_j" in loop.source and "journal" in loop.source


def test_a_device_changing_another_register_goes_through_the_observer_on_both_engines():
    class Bumper:
        """A device whose reads also bump the reading agent's r7 (an effect outside the instruction)."""

        def __init__(self) -> None:
            self.agent: Any = None

        def read(self, offset, size):
            self.agent.r[7] = (self.agent.r[7] + 1) & 0xFFFF_FFFF
            return 0x100 + offset

        def write(self, offset, size, value):
            pass

    def setup(m: Any) -> None:
        device = Bumper()
        device.agent = m.agents[0]
        m.space.add_mmio("bump", DEVICE, 0x100, device)

    code = prog(("li", dict(rd=5, limm=DEVICE)), ("li", dict(rd=6, limm=30)),
                "loop:", ("ld", dict(rd=8, rs1=5, imm=4)), ("addi", dict(rd=6, rs1=6, imm=-1)),
                ("bne", dict(rd=6, rs1=0, boff="loop")), ("halt", dict(rd=8)))
    got = {engine: run(engine, code, setup) for engine in ENGINES}
    assert records(got["fast"][0]) == records(got["step"][0]) == records(got["check"][0])
    log, m = got["fast"]
    # the first load changed r7 and r8: several registers, with the access
    assert log.others == [(0x8, [("r", 7, 1), ("r", 8, 0x104)], True, [(0, DEVICE + 4, 4, 0x104)])]
    # then r8 stays 0x104 and only r7 changes: recorded as the load's one changed register
    bumped = f"mem {0x8:#x} ('r', 7) ((0, 4),)"
    assert log.tokens.count(bumped) == 29 and log.values[-4:] == [30, DEVICE + 4, 0x104, 0]
    (loop,) = [b for b in m.space.decode_cache("toy").blocks.values() if b.n != blockmod.NEVER and b.loop]
    assert loop.captured == 3                  # compiled, and the compiled form called the observer


def test_several_accesses_or_one_under_a_condition_are_recorded_through_the_observer():
    code = prog(("li", dict(rd=2, limm=20)), "loop:", TWO_LOADS, MAYBE_STORE,
                ("addi", dict(rd=2, rs1=2, imm=-1)), ("bne", dict(rd=2, rs1=0, boff="loop")),
                ("halt", dict(rd=4)))
    got = {engine: run(engine, code, fill_data) for engine in ENGINES}
    assert records(got["fast"][0]) == records(got["step"][0]) == records(got["check"][0])
    log, m = got["fast"]
    two = f"mem {0x4:#x} ('r', 4) ((0, 4), (0, 4))"
    assert log.tokens.count(two) == 1          # r4 changed once (1 + 4: the same sum every time)
    assert log.tokens.count(f"mem {0x4:#x} None ((0, 4), (0, 4))") == 19
    stores = f"mem {0x8:#x} None ((1, 4),)"
    assert log.tokens.count(stores) == 10 and log.tokens.count(0x8) == 10   # odd r2 only; else nothing
    first = log.tokens.index(two)
    assert log.values[1:6] == [5, DATA, 1, DATA + 4, 4]   # r4, then each load's address and value
    assert log.tokens[first] == two and not log.others
    (loop,) = [b for b in m.space.decode_cache("toy").blocks.values() if b.n != blockmod.NEVER and b.loop]
    assert loop.captured == 2                  # addi and bne; the two others call their observers


def test_the_analysis_finds_one_unconditional_access_and_the_registers_written_besides():
    log, m = run("step", prog(("li", dict(rd=5, limm=DATA)), ("ld", dict(rd=8, rs1=5, imm=0)),
                              ("st", dict(rd=3, rs1=5, imm=4)), ("add", dict(rd=3, rs1=3, rs2=8)), TWO_LOADS,
                              MAYBE_STORE, ("halt", dict(rd=0))), fill_data)
    cpu = m.agents[0]
    cache = m.space.decode_cache("toy")
    ld, st, add, two, maybe = (cache.get(4 * i) for i in range(1, 6))
    assert static_writes(ld, cpu) is None and static_effects(ld, cpu) == (frozenset({("r", 8)}), (0, 4))
    assert static_writes(st, cpu) is None and static_effects(st, cpu) == (frozenset(), (1, 4))
    assert static_writes(add, cpu) == frozenset({("r", 3)}) and static_effects(add, cpu) == (None, None)
    assert static_effects(two, cpu) == (None, None)      # two accesses
    assert static_effects(maybe, cpu) == (None, None)    # under a condition


@pytest.mark.parametrize(("kw", "message"), [
    (dict(journal=[]), "go together"),
    (dict(accessed=lambda register, accesses: 0), "go together"),
    (dict(journal=(), accessed=lambda register, accesses: 0), "must be a list"),
    (dict(journal=[], accessed=3), "Record.accessed must be callable"),
])
def test_a_request_with_half_of_the_memory_contract_is_refused(kw, message):
    with pytest.raises(TypeError, match=message):
        Record(lambda agent: None, 0, lambda f, i: 1, **kw)
