"""Unit tests of the suite's parts: case parsing, expectations, declarations, probes, strategies."""

from __future__ import annotations

import re
import sys

import click
import pytest
from hypothesis import given
from suite_support import FAKES

from tessera.machine import Machine
from tessera.memory import AddressSpace
from tessera.plugins import PluginHost, PluginRecord
from tessera_conformance import pytest_args
from tessera_conformance.check_runs import _unmapped, execute_problems
from tessera_conformance.discovery import Subject, parse_declarations
from tessera_conformance.probes import Observer, Recorder, RegisterBounds
from tessera_conformance.programs import check_expectations, parse_case, run, start
from tessera_conformance.strategies import fixed, operand_strategy, random_words
from tessera_conformance.tooloptions import OptionError, ToolOptions

sys.path.insert(0, str(FAKES))
import fakeplugins

TINY = fakeplugins.TINY


def case(**kw):
    raw = {"name": "c", "source": "halt r0\n", "expect": {"exit_code": 0}}
    raw.update(kw)
    return parse_case({k: v for k, v in raw.items() if v is not None}, TINY, "me", 3)


@pytest.mark.parametrize(("raw", "problem"), [
    ("not a dict", "a case is a dict"),
    ({"name": "x", "source": "halt r0", "expect": {}, "colour": 1}, "unknown key(s) colour"),
    ({"name": "x", "expect": {"exit_code": 1}}, "exactly one of 'source'"),
    ({"name": "x", "source": "a", "words": [1], "expect": {"exit_code": 1}}, "exactly one of"),
    ({"name": "x", "words": [1 << 16], "expect": {"exit_code": 1}}, "16-bit integers"),
    ({"name": "x", "words": [1], "expect": {"registers": []}}, "expect['registers'] must be a dict"),
    ({"name": "x", "words": [1]}, "needs an expectation"),
    ({"name": "x", "words": [1], "expect": {"exit_code": "0"}}, "must be an integer"),
    ({"name": "x", "words": [1], "stdout": 5}, "'stdout' must be str or bytes"),
    ({"name": "x", "words": [1], "expect": {"exit_code": 0}, "xfail": ""}, "'xfail' must be the reason"),
    ({"name": "a b", "words": [1], "expect": {"exit_code": 0}}, "'name' must be"),
])
def test_suite_malformed_cases_are_described(raw, problem):
    prog = parse_case(raw, TINY, "me", 3)
    assert prog.problem is not None and problem in prog.problem
    assert "case #3" in prog.problem and "plugin me" in prog.problem


def test_suite_case_fields_and_expectations():
    prog = case(source=fakeplugins.SUM, config={}, max_steps=100, stdout="",
                expect={"exit_code": 12, "registers": {"core0": {"r": {1: 12, "r2": 7}}},
                        "memory": {0x80: (2, 12), "0x82": b"\0\0"}, "pc": {"core0": 10}})
    assert prog.problem is None and prog.expected_reason == "halted" and not prog.endless
    machine = start(prog)
    outcome = run(machine, prog.max_steps)
    assert check_expectations(prog, machine, outcome) == []
    wrong = case(source=fakeplugins.SUM, expect={"reason": "budget", "exit_code": 3, "core0": {"r": {1: 1}},
                                                 "memory": {0x80: 13}, "error": {"agent": "core0"}},
                 stdout="x")
    problems = check_expectations(wrong, machine, outcome)
    assert any("expected reason 'budget'" in p for p in problems)
    assert any("exit code 12, expected 3" in p for p in problems)
    assert any("core0 r[1] = 0xc, expected 0x1" in p for p in problems)
    assert any("memory at 128 (4 bytes)" in p for p in problems)
    assert any("expected an error" in p for p in problems)
    assert any("printed b''" in p for p in problems)


def test_suite_case_check_callable_sees_the_outcome():
    seen = []

    def check(machine, outcome):
        seen.append(outcome.reason)
        return "not today"

    prog = case(check=check, expect=None)
    machine = start(prog)
    assert check_expectations(prog, machine, run(machine, 10)) == ["not today"]
    assert seen == ["halted"]


def test_suite_expected_failure_patterns():
    s = Subject("p", None, xfail={"round-trip": "a", "snapshot:tiny": "b", "cases:tiny:sum-*": "c"})
    assert s.expected_failure("round-trip", "tiny", "0-li") == "a"
    assert s.expected_failure("snapshot", "tiny", "sum") == "b"
    assert s.expected_failure("snapshot", "other", "sum") is None
    assert s.expected_failure("cases", "tiny", "sum-state") == "c"
    assert s.expected_failure("cases", "tiny", "sum") is None
    assert s.used_patterns == {"round-trip", "snapshot:tiny", "cases:tiny:sum-*"}


@pytest.mark.parametrize(("declared", "problem"), [
    ([1], "must be a dict"),
    ({"xfails": {}}, "unknown key(s) xfails"),
    ({"xfail": ["round-trip"]}, "must map check patterns to reasons"),
    ({"xfail": {"round-trip": ""}}, "must be non-empty strings"),
    ({"xfail": {"roundtrip": "x"}}, "names no check"),
    ({"modifies_state": True}, "must be the reason"),
    ({"settings": ["cycles"]}, "must map configuration keys to values"),
])
def test_suite_bad_declarations(declared, problem):
    class Plugin:
        TESSERA_CONFORMANCE = declared

    s = Subject("p", PluginRecord("p", plugin=Plugin()))
    parse_declarations(s)
    assert any(problem in p for p in s.declaration_problems), s.declaration_problems


def test_suite_declarations_are_read():
    s = Subject("p", PluginRecord("p", plugin=fakeplugins.declared_flipper))
    parse_declarations(s)
    assert s.declaration_problems == [] and s.modifies_state == "flips bit 0 of every li result"


def test_suite_settings_declaration_is_read():
    class Plugin:
        TESSERA_CONFORMANCE = {"settings": {"cycles": "inorder"}}

    s = Subject("p", PluginRecord("p", plugin=Plugin()))
    parse_declarations(s)
    assert s.declaration_problems == [] and s.settings == {"cycles": "inorder"}


def test_suite_unmapped_address():
    space = AddressSpace("main", address_bits=16)
    assert _unmapped(space) == 0
    space.add_ram("a", 0, 0x1800)
    assert _unmapped(space) == 0x2000
    space.add_ram("b", 0x1800, 0xE800)
    assert _unmapped(space) is None


def test_suite_execute_checker_notices_a_callback_that_fires_twice():
    log: list = []
    host = PluginHost(load_entry_points=False, use_environment=False)
    host.register(Recorder(log), "rec")
    machine = Machine(TINY, host=host)
    prog = case(source=fakeplugins.SUM)
    from tessera_conformance.programs import load_into

    load_into(machine, prog)
    outcome = run(machine, 100)
    assert execute_problems(machine, outcome, log) == []
    first_before = next(i for i, e in enumerate(log) if e[0] == "B")
    doubled = log[:first_before + 1] + [log[first_before]] + log[first_before + 1:]
    assert any("fired twice or not at all" in p for p in execute_problems(machine, outcome, doubled))
    second = [i for i, e in enumerate(log) if e[0] == "B"][1]  # an instruction nobody saw
    lost = log[:second] + log[second + 2:]
    assert any("fired twice or not at all" in p for p in execute_problems(machine, outcome, lost))
    jumped = [("A", e[1], e[2], e[3] + 2) if e[0] == "A" else e for e in log]  # after saw a wrong next pc
    assert any("started at" in p for p in execute_problems(machine, outcome, jumped))


def test_suite_pcrel_operands_stay_in_the_address_space():
    field = TINY.field_map["off"]

    @fixed(50)
    @given(value=operand_strategy(TINY, field, 0))
    def inside(value):
        assert -(1 << 31) <= value < (1 << 31) and value % 2 == 0

    inside()


def test_suite_random_words_half_follow_the_table():
    import random

    words = random_words(TINY, random.Random(1), 200)
    shaped = [w for w in words[1::2]]
    assert all(any(w & e.mask == e.match for e in TINY.encodings) for w in shaped)
    assert all(0 <= w < 1 << 16 for w in words)


def test_suite_pytest_args():
    assert pytest_args(plugins=["a", "b"], deep=True, budget=5, extra=["-q"]) == [
        "--pyargs", "tessera_conformance", "--tessera-plugin", "a", "--tessera-plugin", "b",
        "--tessera-deep", "--tessera-budget", "5", "-q"]
    assert pytest_args(tool_options=["fi-at=4"]) == [
        "--pyargs", "tessera_conformance", "--tessera-tool-option", "fi-at=4"]


# --------------------------------------------------------------------------- tool options


def _options():
    opts = ToolOptions()
    builtin = [click.Option(["--max-steps"], type=int, default=10)]
    problems = opts.collect([
        ("fi", fakeplugins.fault_injector.tessera_run_options()),
        ("tr", [click.Option(["--tr-level", "tr_level"], type=click.IntRange(0, 3), default=1),
                click.Option(["--tr-quiet/--tr-loud"], default=False),
                click.Option(["--tr-agent"], multiple=True)]),
        ("late", [click.Option(["--fi-at", "again"]), click.Option(["--max-steps", "steps"]), "--nope"]),
        ("nothing", None),
    ], builtin)
    return opts, problems


def test_tool_options_are_collected_like_the_command_line_adds_them():
    opts, problems = _options()
    assert problems == {"late": [
        "option --fi-at clashes with an option of plugin fi (the tessera command does not add it)",
        "option --max-steps clashes with an option of tessera run (the tessera command does not add it)",
        "tessera_run_options returned str, not a click.Option (the tessera command ignores it)"]}
    assert opts.owner == {"fi_at": "fi", "tr_level": "tr", "tr_quiet": "tr", "tr_agent": "tr"}
    # without --tessera-tool-option every option has its default, as `tessera run` gives it
    assert opts.values == {"fi_at": None, "tr_level": 1, "tr_quiet": False, "tr_agent": ()}
    assert [opts.find(k) for k in ("fi_at", "--fi-at", "fi-at", "tr-loud", "nope")] == [
        "fi_at", "fi_at", "fi_at", "tr_quiet", None]


def test_tool_options_are_checked_against_run_and_resume_as_the_command_has_them():
    from tessera.cli.contributions import RUN_COMMANDS, builtin_parameters

    opts = ToolOptions()
    problems = opts.collect([("tr", [click.Option(["--tr-level"]), click.Option(["--snapshot"]),
                                     click.Option(["--tr-cap", "memory_cap"])])],
                            {command: builtin_parameters(command) for command in RUN_COMMANDS})
    assert problems == {"tr": [  # resume's argument SNAPSHOT, run's --memory-cap
        "option --snapshot clashes with an option of tessera resume (the tessera command does not add it)",
        "option --tr-cap clashes with an option of tessera run (the tessera command does not add it)"]}
    assert list(opts.owner) == ["tr_level"]


def test_tool_options_from_the_command_line_are_converted_by_their_types():
    opts, _ = _options()
    opts.apply(["fi-at=0x40", "tr_level=3", "tr-quiet", "tr-agent=core0", "--tr-agent=core1"])
    assert opts.values == {"fi_at": 0x40, "tr_level": 3, "tr_quiet": True, "tr_agent": ("core0", "core1")}
    assert opts.describe(opts.values) == "--fi-at 64 --tr-level 3 --tr-quiet --tr-agent core0 --tr-agent core1"
    assert opts.describe(opts.values, ["fi"]) == "--fi-at 64"
    opts.apply(["tr-quiet=false"])
    assert opts.values["tr_quiet"] is False and opts.values["fi_at"] is None  # each apply starts afresh
    for pairs, message in [(["fi-when=3"], "no plugin has an option 'fi-when' (options of tessera run from "
                                           "plugins: --fi-at (fi), --tr-level (tr), --tr-quiet (tr), --tr-agent (tr))"),
                           (["tr-level=9"], "9 is not in the range 0<=x<=3"),
                           (["fi-at"], "--fi-at takes a value: NAME=VALUE"),
                           (["tr-quiet=maybe"], "--tr-quiet is a flag")]:
        with pytest.raises(OptionError, match=re.escape(message)):
            opts.apply(pairs)


def test_a_cases_tool_options_are_resolved_for_its_plugins_only():
    opts, _ = _options()
    opts.apply(["tr-level=2"])
    got = opts.resolve({"--fi-at": "0x10", "tr_agent": "core1"}, ["fi", "tr"])
    assert got == {"fi_at": 16, "tr_agent": ("core1",)}
    assert opts.values_for(got) == {"fi_at": 16, "tr_level": 2, "tr_quiet": False, "tr_agent": ("core1",)}
    assert opts.resolve({"fi_at": None}, ["fi"]) == {"fi_at": None}  # back to the default
    with pytest.raises(OptionError, match="belongs to plugin tr, which takes no part in this case's runs"):
        opts.resolve({"tr-level": 1}, ["fi", "good"])
    with pytest.raises(OptionError, match="'fi-at': Invalid value for '--fi-at': 'soon' is not an address"):
        opts.resolve({"fi-at": "soon"}, ["fi"])
    assert "'tool_options' must map option names" in case(tool_options=["--fi-at"]).problem
    assert case(tool_options={"--fi-at": 4}).tool_options == {"--fi-at": 4}


# --------------------------------------------------------------------------- register width


def test_register_bounds_see_what_the_observer_sees():
    program = parse_case(fakeplugins.seeded.cases[0], fakeplugins.WIDE, "seeded", 0)
    for engine in ("step", "fast"):
        bounds = RegisterBounds()
        host = PluginHost(load_entry_points=False, use_environment=False)
        host.register(Observer([], bounds=bounds), "observer")
        machine = start(program, host)
        machine.set_engine(engine)
        assert run(machine, 100).reason == "halted"
        # the first add runs stepped on both engines; later ones are captured in a block on the
        # fast engine (engine-equivalence compares those values with the step engine's)
        assert bounds.found == ["core0 r[3] = 0x100000000, wider than 32 bits after add at 0xc (word 0x4c48000)"]


def test_register_bounds_check_whole_files():
    bounds = RegisterBounds(limit=2)
    machine = Machine(fakeplugins.WIDE, config={"cores": 1, "echo": False})
    core = machine.cpus[0]
    bounds.check_all(core, "here")
    assert bounds.found == []
    core.r[5], core.c[1], core.r[7] = 1 << 40, "x", -3
    bounds.check_all(core, "there")
    assert bounds.found == ["core0 r[5] = 0x10000000000, wider than 32 bits there",
                            "core0 c[1] = 'x', not an integer there"]  # at most limit, in file order


def test_suite_deep_mode_budgets():
    from tessera_conformance import plugin

    class Config:
        def __init__(self, **opts):
            self.stash = pytest.Stash()
            self.opts = opts

        def getoption(self, name):
            return self.opts.get(name)

    suite = plugin.get_suite(Config(**{"--tessera-deep": True, "--tessera-plugin": ["nosuch"]}))
    assert (suite.budget, suite.examples, suite.random_programs) == (1_000_000, 200, 2_000)
    suite = plugin.get_suite(Config(**{"--tessera-budget": 7, "--tessera-plugin": ["nosuch"]}))
    assert (suite.budget, suite.examples, suite.random_programs) == (7, 20, 40)
    assert list(suite.subjects) == ["nosuch"] and suite.subjects["nosuch"].problems
