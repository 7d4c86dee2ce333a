"""Fake plugins for the conformance suite's own tests (registered with TESSERA_EXTRA_PLUGINS).

``tiny`` is a complete little architecture (16-bit words, four registers, five
instructions) that passes every check; the other objects are plugins that are wrong
in one way each.  The tests name them as ``name=fakeplugins:OBJECT``.
"""

from __future__ import annotations

import weakref

import attrs
import click

import tessera
from tessera.cli.params import ADDRESS
from tessera.control import Halt
from tessera.isa import Architecture, Encoding, Example, Field, MemoryRegionSpec, RegisterFile
from tessera.machine import NominalTiming

MASK = 0xFFFF


def _li(cpu, ins):
    cpu.r[ins.rd] = ins.imm


def _add(cpu, ins):
    cpu.r[ins.rd] = (cpu.r[ins.rd] + cpu.r[ins.rs]) & MASK


def _st(cpu, ins):
    cpu.space.write(cpu.r[ins.rs], 2, cpu.r[ins.rd])


def _st_unwatched(cpu, ins):  # wrong: a bulk write is not a data access, watches miss it
    cpu.space.write_bytes(cpu.r[ins.rs], cpu.r[ins.rd].to_bytes(2, "little"))


def _halt(cpu, ins):
    raise Halt(cpu.r[ins.rd])


def _jmp(cpu, ins):
    return (ins.address + ins.off) & MASK


def _encodings(store=_st):
    return (
        Encoding("li", 0x1000, 0xF300, "{rd}, {imm}", _li),
        Encoding("add", 0x2000, 0xF0FF, "{rd}, {rs}", _add),
        Encoding("st", 0x3000, 0xF0FF, "{rd}, [{rs}]", store, "mem"),
        Encoding("halt", 0x4000, 0xF3FF, "{rd}", _halt, flags={"halt"}),
        Encoding("jmp", 0x5000, 0xF000, "{off}", _jmp, flags={"branch"}),
    )


SUM = """
        li   r1, 5
        li   r2, 7
        add  r1, r2
        li   r3, 0x80
        st   r1, [r3]
        halt r1
"""

def check_sum(machine, result):
    return None if machine.space.read(0x80, 2) == 12 else "0x80 does not hold 12"


TINY = Architecture(
    name="tiny",
    word_bits=16,
    register_files=(RegisterFile("r", 4, 16),),
    fields=(Field("rd", "11:10", kind="reg", regfile="r"), Field("rs", "9:8", kind="reg", regfile="r"),
            Field("imm", "7:0", kind="uimm"), Field("off", "11:0", kind="pcrel", scale=1)),
    encodings=_encodings(),
    memory_map=(MemoryRegionSpec("ram", 0, 0x400),),
    timing={"default": 1, "mem": 2},
    examples=(Example("sum", "5 + 7 stored at 0x80", SUM, max_steps=100, check=check_sum),),
)

CASES = [
    {"name": "sum-state", "source": SUM, "max_steps": 100,
     "expect": {"exit_code": 12, "memory": {0x80: (2, 12)}, "registers": {"core0": {"r": {1: 12}}}}},
    {"name": "endless", "source": "loop: jmp loop\n", "max_steps": 500, "expect": {"reason": "budget"}},
    {"name": "fetch-fault", "source": "jmp 0x400\n", "max_steps": 10,
     "expect": {"reason": "memory fault", "error": {"address": 0x400, "access": "fetch", "agent": "core0"}}},
]


class Arch:
    """A well-behaved architecture plugin providing ``arch`` with ``cases``."""

    TESSERA_API_VERSION = 1

    def __init__(self, arch=TINY, cases=CASES, conformance=None):
        self.arch = arch
        self.cases = cases
        if conformance is not None:
            self.TESSERA_CONFORMANCE = conformance

    @tessera.hookimpl
    def tessera_architectures(self):
        return [self.arch]

    @tessera.hookimpl
    def tessera_conformance_cases(self, arch):
        if arch.name != self.arch.name:
            return None
        return [dict(c) for c in self.cases]


good = Arch()

# --------------------------------------------------------------------------- tools


class Observer:
    """A tool that only watches: counts instructions and stores."""

    TESSERA_API_VERSION = 1

    def __init__(self):
        self.count = 0

    @tessera.hookimpl
    def tessera_execute_instrument(self, ins):
        def before(agent, ins):
            self.count += 1

        return before, None

    @tessera.hookimpl
    def tessera_run_finished(self, machine, result):
        pass


observer = Observer()


class Flipper:
    """A fault injector: flips bit 0 of every register an `li` writes (state changes)."""

    TESSERA_API_VERSION = 1

    def __init__(self, declared=False):
        if declared:
            self.TESSERA_CONFORMANCE = {"modifies_state": "flips bit 0 of every li result"}

    @tessera.hookimpl
    def tessera_execute_instrument(self, ins):
        if ins.mnemonic != "li":
            return None

        def after(agent, ins):
            agent.r[ins.rd] ^= 1

        return None, after


flipper = Flipper()
declared_flipper = Flipper(declared=True)


class FaultInjector:
    """A fault injector driven by its option: ``--fi-at PC`` flips bit 0 of r1 each time the
    instruction at PC retires; without the option it does nothing at all."""

    TESSERA_API_VERSION = 1

    def __init__(self, declared=True, cases=()):
        if declared:
            self.TESSERA_CONFORMANCE = {"modifies_state": "flips bit 0 of r1 where --fi-at says"}
        self.cases = list(cases)
        self.at = weakref.WeakKeyDictionary()  # machine -> PC (what tessera_run_configure was told)

    @tessera.hookimpl
    def tessera_run_options(self):
        return [click.Option(["--fi-at", "fi_at"], type=ADDRESS, default=None, metavar="PC",
                             help="Flip bit 0 of r1 after the instruction at PC.")]

    @tessera.hookimpl
    def tessera_run_configure(self, machine, options):
        if options.get("fi_at") is None:
            self.at.pop(machine, None)
        else:
            self.at[machine] = options["fi_at"]

    @tessera.hookimpl
    def tessera_execute_instrument(self, machine, ins):
        if self.at.get(machine) != ins.address:
            return None

        def after(agent, ins):
            agent.r[1] ^= 1

        return None, after

    @tessera.hookimpl
    def tessera_conformance_cases(self, arch):
        return [dict(c) for c in self.cases] if arch.name == "tiny" else None


#: what the injector must do to SUM at 0x4 (``add r1, r2``): 12 becomes 13 before it is stored
FI_CASES = [
    {"name": "fi-flips-the-sum", "source": SUM, "max_steps": 100, "tool_options": {"--fi-at": "0x4"},
     "expect": {"exit_code": 13, "memory": {0x80: (2, 13)}}},
    {"name": "fi-idle", "source": SUM, "max_steps": 100, "tool_options": {"fi_at": None},  # the default,
     "expect": {"exit_code": 12}},                                                 # whatever the session says
]
fault_injector = FaultInjector(cases=FI_CASES)
undeclared_injector = FaultInjector(declared=False)
wrong_expectation_injector = FaultInjector(cases=[
    {"name": "fi-expects-no-flip", "source": SUM, "max_steps": 100, "tool_options": {"fi_at": 4},
     "expect": {"exit_code": 12}}])


class CoinFlipper(FaultInjector):
    """An injector that flips a coin (a fresh one each run): not reproducible."""

    def __init__(self):
        super().__init__()
        self.runs = 0

    @tessera.hookimpl
    def tessera_run_configure(self, machine, options):
        self.runs += 1
        self.at[machine] = options["fi_at"] if self.runs % 2 else None


coin_flipper = CoinFlipper()
bad_case_injector = FaultInjector(cases=[
    {"name": "fi-bad-value", "source": SUM, "tool_options": {"fi_at": "twelve"}, "expect": {"exit_code": 12}},
    {"name": "fi-unknown", "source": SUM, "tool_options": {"--fi-when": "4"}, "expect": {"exit_code": 12}},
])


class Crasher:
    """A tool whose execute hook raises."""

    TESSERA_API_VERSION = 1

    @tessera.hookimpl
    def tessera_execute_instrument(self, ins):
        raise ZeroDivisionError("the tool divided by zero")


crasher = Crasher()

class Clock:
    """A cycle model: every instruction costs ``price`` cycles (changes timing only)."""

    TESSERA_API_VERSION = 1

    def __init__(self, price):
        self.price = price

    @tessera.hookimpl
    def tessera_timing_model(self, machine, arch):
        return Model(arch, self.price)


class Model(NominalTiming):
    name = "fake"

    def __init__(self, arch, price):
        super().__init__(arch)
        self.price = price

    def cycles(self, ins):
        return self.price


slow_clock = Clock(3)
free_clock = Clock(0)

# --------------------------------------------------------------------------- bad input


class FutureApi:
    TESSERA_API_VERSION = 99

    @tessera.hookimpl
    def tessera_architectures(self):
        return [attrs.evolve(TINY, name="tiny-future")]


future = FutureApi()


class RaisingArchitectures:
    TESSERA_API_VERSION = 1

    @tessera.hookimpl
    def tessera_architectures(self):
        raise RuntimeError("cannot describe myself")


raising_archs = RaisingArchitectures()


class RaisingCases:
    TESSERA_API_VERSION = 1

    @tessera.hookimpl
    def tessera_conformance_cases(self, arch):
        raise KeyError("no cases today")


raising_cases = RaisingCases()

dup_one = Arch(attrs.evolve(TINY, name="dup"), cases=[])
dup_two = Arch(attrs.evolve(TINY, name="dup"), cases=[])

malformed = Arch(attrs.evolve(TINY, name="tiny-malformed"),
                 cases=[{"name": "no program", "expect": {}}, *CASES[:1]])

# --------------------------------------------------------------------------- wrong behaviour

leaky = Arch(attrs.evolve(TINY, name="tiny-leaky", encodings=_encodings(store=_st_unwatched)),
             cases=CASES[:1])
leaky_declared = Arch(attrs.evolve(TINY, name="tiny-leaky2", encodings=_encodings(store=_st_unwatched)),
                      cases=[], conformance={"xfail": {"memory-hooks": "st bypasses the memory watches"}})

stale = Arch(attrs.evolve(TINY, name="tiny-stale"), cases=CASES[:1],
             conformance={"xfail": {"determinism": "said to fail, but it passes",
                                    "round-trip:tiny-stale:9-*": "matches no row",
                                    "no-such-check": "a typo"}})

# --------------------------------------------------------------------------- seeded bugs

# A copy of the toy architecture with two seeded semantic bugs that no final-state
# expectation below notices: `add` does not wrap at 32 bits, `sub` does not wrap below 0.
# The register-width check must catch both.
from tessera_toyarch import TOY  # noqa: E402


def _add_unmasked(cpu, ins):
    if ins.rd:
        cpu.r[ins.rd] = cpu.r[ins.rs1] + cpu.r[ins.rs2]


def _sub_unmasked(cpu, ins):
    if ins.rd:
        cpu.r[ins.rd] = cpu.r[ins.rs1] - cpu.r[ins.rs2]


SEEDED = {"add": _add_unmasked, "sub": _sub_unmasked}
WIDE = attrs.evolve(TOY, name="toy-seeded", examples=(),
                    encodings=tuple(attrs.evolve(e, semantics=SEEDED.get(e.mnemonic, e.semantics))
                                    for e in TOY.encodings))
ONE_CORE = {"cores": 1, "echo": False}
seeded = Arch(WIDE, cases=[
    {"name": "carry", "config": ONE_CORE, "max_steps": 100, "expect": {"exit_code": 0},
     "description": "0xffffffff + 1 in a loop (hot: blocks on the fast engine)",
     "source": "li r1, -1\nli r2, 1\nli r4, 4\nloop: add r3, r1, r2\naddi r4, r4, -1\n"
               "bne r4, r0, loop\nhalt r0\n"},
    {"name": "borrow", "config": ONE_CORE, "max_steps": 100, "expect": {"exit_code": 0},
     "description": "0 - 1, once", "source": "li r1, 1\nsub r2, r0, r1\nhalt r0\n"},
    {"name": "fine", "config": ONE_CORE, "max_steps": 100, "expect": {"exit_code": 7},
     "source": "li r1, 3\nli r2, 4\nadd r3, r1, r2\nhalt r3\n"},
])
