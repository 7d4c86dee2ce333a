"""Reference programs: an architecture's examples and the conformance cases plugins supply.

A *case* is what ``tessera_conformance_cases(arch)`` returns: a ``dict`` describing a
program and what running it must give (the schema is in ``docs/conformance.md``).
:func:`parse_case` turns one into a :class:`Program`, recording what is wrong with a
malformed one in ``Program.problem`` instead of raising, so that a bad case is one
named failure of the plugin that supplied it.  Examples (``Architecture.examples``)
become programs too; together they are the programs every run-based check uses.

:func:`start` builds a machine and loads a program; :func:`run` runs it and returns an
:class:`Outcome` whatever happens (a result, or the ``TesseraError`` that ended the
run), with what the program printed.
"""

from __future__ import annotations

import contextlib
import io
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import attrs

from tessera.engine import CpuAgent
from tessera.errors import BudgetExceeded, TesseraError
from tessera.loaders import load_asm, load_program, load_words
from tessera.machine import Machine, RunResult

DEFAULT_MAX_STEPS = 1_000_000
#: Keys of a case dict.
CASE_KEYS = frozenset({"name", "description", "source", "program", "words", "load", "entry", "config",
                       "max_steps", "expect", "stdout", "check", "xfail", "tool_options", "changes",
                       "transparent"})
#: Keys of a case that ask the suite to compare its runs with and without its ``tool_options``
#: (the ``tool-effect`` check): the options must change how the run ends, or change nothing.
EFFECT_KEYS = ("changes", "transparent")
#: Keys of ``expect``; any other key is taken as an agent name holding register values
#: (``{"core0": {"r": {4: 7}}}``, the short form ``docs/hooks.md`` shows).
EXPECT_KEYS = frozenset({"reason", "exit_code", "registers", "pc", "memory", "error"})
NAME = re.compile(r"^[A-Za-z0-9_.+-]+$")


@attrs.define(eq=False)
class Program:
    """A program of one architecture with what running it must give."""

    name: str
    kind: str  # "example" or "case"
    arch: Any
    provider: str  # the plugin that supplied it
    source: str | None = None
    path: str | None = None
    words: tuple[int, ...] | None = None
    load: int | None = None
    entry: int | None = None
    config: dict[str, Any] = attrs.field(factory=dict)
    max_steps: int = DEFAULT_MAX_STEPS
    expect: dict[str, Any] = attrs.field(factory=dict)
    stdout: bytes | None = None
    check: Callable[[Any, Any], str | None] | None = None
    xfail: str | None = None
    description: str = ""
    problem: str | None = None  # why the case is malformed (the check then fails with it)
    #: the case's ``tool_options`` as given, and as the suite resolved them (parameter name -> value)
    tool_options: dict[str, Any] = attrs.field(factory=dict)
    run_options: dict[str, Any] = attrs.field(factory=dict)
    #: ``"changes"`` or ``"transparent"`` (the case key given as true), else ``None``: what its
    #: ``tool_options`` must do to the run compared with the same run without them
    effect: str | None = None

    @property
    def expected_reason(self) -> str:
        return str(self.expect.get("reason", "halted"))

    @property
    def endless(self) -> bool:
        """A program that runs until its budget stops it (what the budget check wants)."""
        return self.expected_reason == "budget"

    def label(self) -> str:
        return f"{self.kind} {self.name!r} of {self.arch.name}"


def from_example(example: Any, arch: Any, provider: str) -> Program:
    """An example as a program: its assembly ``source``, or the file its ``program`` names."""
    prog = Program(name=example.name, kind="example", arch=arch, provider=provider,
                   source=example.source, load=example.load_address, max_steps=example.max_steps,
                   check=example.check, description=example.description)
    if getattr(example, "program", None) is not None:
        prog.source, prog.load = None, None
        try:
            prog.path = example.program_path()
        except TesseraError as exc:
            prog.problem = f"example {example.name!r} of {arch.name} from plugin {provider}: {exc}"
    return prog


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{what} must be an integer, not {value!r}")
    return value


def parse_case(raw: Any, arch: Any, provider: str, index: int) -> Program:
    """A :class:`Program` from one case dict; ``problem`` says what is malformed."""
    name = raw.get("name") if isinstance(raw, Mapping) else None
    label = name if isinstance(name, str) and NAME.match(name) else f"case{index}"
    prog = Program(name=label, kind="case", arch=arch, provider=provider)
    try:
        _fill_case(prog, raw)
    except (ValueError, TypeError) as exc:
        prog.problem = f"malformed conformance case #{index} ({name!r}) from plugin {provider}: {exc}"
    return prog


def _fill_case(prog: Program, raw: Any) -> None:
    """Check one ``tessera_conformance_cases`` dict and copy it into ``prog`` (ValueError: why not)."""
    if not isinstance(raw, Mapping):
        raise ValueError(f"a case is a dict, not {type(raw).__name__}")
    unknown = sorted(set(raw) - CASE_KEYS)
    if unknown:
        raise ValueError(f"unknown key(s) {', '.join(map(str, unknown))} (known: {', '.join(sorted(CASE_KEYS))})")
    if not isinstance(raw.get("name"), str) or not NAME.match(raw["name"]):
        raise ValueError("'name' must be a non-empty string of letters, digits and _ . + -")
    _fill_code(prog, raw)
    _fill_run(prog, raw)
    _fill_expectations(prog, raw)
    prog.description = str(raw.get("description", ""))


def _fill_code(prog: Program, raw: Mapping[str, Any]) -> None:
    """Exactly one of ``source``, ``program``, ``words``; ``load`` and ``entry``."""
    given = [k for k in ("source", "program", "words") if raw.get(k) is not None]
    if len(given) != 1:
        raise ValueError("give exactly one of 'source' (assembly), 'program' (a file) or 'words'")
    if raw.get("source") is not None:
        if not isinstance(raw["source"], str):
            raise ValueError("'source' must be assembly text (str)")
        prog.source = raw["source"]
    if raw.get("program") is not None:
        prog.path = str(raw["program"])
    if raw.get("words") is not None:
        words = tuple(raw["words"])
        limit = 1 << prog.arch.word_bits
        for w in words:
            if isinstance(w, bool) or not isinstance(w, int) or not 0 <= w < limit:
                raise ValueError(f"'words' must be {prog.arch.word_bits}-bit integers, not {w!r}")
        if not words:
            raise ValueError("'words' is empty")
        prog.words = words
    if raw.get("load") is not None:
        prog.load = _int(raw["load"], "'load'")
    if raw.get("entry") is not None:
        prog.entry = _int(raw["entry"], "'entry'")


def _fill_run(prog: Program, raw: Mapping[str, Any]) -> None:
    """How to run it: ``config``, ``tool_options``, ``max_steps``."""
    config = raw.get("config") or {}
    if not isinstance(config, Mapping):
        raise ValueError("'config' must be a dict of machine settings")
    prog.config = dict(config)
    options = raw.get("tool_options") or {}
    if not isinstance(options, Mapping) or not all(isinstance(k, str) and k for k in options):
        raise ValueError("'tool_options' must map option names (as `tessera run` takes them, e.g. "
                         "'--fi-at' or 'fi_at') to values")
    prog.tool_options = dict(options)
    _fill_effect(prog, raw)
    if raw.get("max_steps") is not None:
        prog.max_steps = _int(raw["max_steps"], "'max_steps'")
        if prog.max_steps <= 0:
            raise ValueError("'max_steps' must be positive")


def _fill_effect(prog: Program, raw: Mapping[str, Any]) -> None:
    """``changes`` / ``transparent``: at most one, a bool, and only with ``tool_options`` to compare."""
    for key in EFFECT_KEYS:
        if raw.get(key) is not None and not isinstance(raw[key], bool):
            raise ValueError(f"'{key}' must be true or false, not {raw[key]!r}")
    given = [key for key in EFFECT_KEYS if raw.get(key)]
    if len(given) > 1:
        raise ValueError("a case is either 'changes' (its tool options must change the run) or "
                         "'transparent' (they must change nothing), not both")
    if given and not prog.tool_options:
        raise ValueError(f"'{given[0]}' compares the case's runs with and without its 'tool_options'; "
                         "the case gives none")
    prog.effect = given[0] if given else None


def _fill_expectations(prog: Program, raw: Mapping[str, Any]) -> None:
    """What must hold afterwards: ``expect``, ``stdout``, ``check`` (at least one), ``xfail``."""
    expect = raw.get("expect") or {}
    if not isinstance(expect, Mapping):
        raise ValueError("'expect' must be a dict")
    prog.expect = dict(expect)
    _validate_expect(prog.expect)
    if raw.get("stdout") is not None:
        out = raw["stdout"]
        if isinstance(out, str):
            out = out.encode("utf-8")
        if not isinstance(out, bytes | bytearray):
            raise ValueError("'stdout' must be str or bytes")
        prog.stdout = bytes(out)
    if raw.get("check") is not None:
        if not callable(raw["check"]):
            raise ValueError("'check' must be a callable check(machine, outcome) -> None | str")
        prog.check = raw["check"]
    if raw.get("xfail") is not None:
        if not isinstance(raw["xfail"], str) or not raw["xfail"].strip():
            raise ValueError("'xfail' must be the reason (a non-empty string)")
        prog.xfail = raw["xfail"]
    if not (prog.expect or prog.stdout is not None or prog.check is not None):
        raise ValueError("a case needs an expectation: 'expect', 'stdout' or 'check'")


def _validate_expect(expect: dict[str, Any]) -> None:
    if "reason" in expect and not isinstance(expect["reason"], str):
        raise ValueError("expect['reason'] must be a string such as 'halted', 'budget' or 'deadlock'")
    if "exit_code" in expect:
        _int(expect["exit_code"], "expect['exit_code']")
    for key in ("registers", "pc", "memory", "error"):
        if key in expect and not isinstance(expect[key], Mapping):
            raise ValueError(f"expect[{key!r}] must be a dict")
    for key, value in expect.items():
        if key not in EXPECT_KEYS and not isinstance(value, Mapping):
            raise ValueError(f"expect[{key!r}]: unknown key (an agent's registers must be a dict)")


# --------------------------------------------------------------------------- running


@attrs.define(eq=False)
class Outcome:
    """How a run ended: ``reason`` is the result's reason or the error's kind."""

    reason: str
    result: RunResult | None = None
    error: TesseraError | None = None
    stdout: bytes = b""

    @property
    def detail(self) -> str:
        if self.error is not None:
            return str(self.error)
        assert self.result is not None
        text = f"{self.result.reason}: {self.result.detail}" if self.result.detail else self.result.reason
        if self.result.exit_code is not None:
            text += f" (exit code {self.result.exit_code})"
        return text

    def signature(self) -> tuple[Any, ...]:
        """What must agree between two runs of one program (not the wall time)."""
        res = self.result
        return (self.reason, res.exit_code if res else None, res.agent if res else None,
                res.pc if res else None, str(self.error) if self.error else None)


@contextlib.contextmanager
def captured() -> Iterator[io.TextIOWrapper]:
    """Redirect ``sys.stdout`` (text and ``.buffer``) into memory while a program runs."""
    stream = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    with contextlib.redirect_stdout(stream):
        yield stream


def output_of(stream: io.TextIOWrapper) -> bytes:
    stream.flush()
    return stream.buffer.getvalue()  # type: ignore[attr-defined]


def start(program: Program, host: Any = None, settings: dict[str, Any] | None = None) -> Machine:
    """A machine of the program's architecture with the program loaded (not yet run);
    ``settings`` are configuration keys added to the program's (a tool's)."""
    machine = Machine(program.arch, host=host, config={**program.config, **(settings or {})})
    with captured():
        load_into(machine, program)
    return machine


def load_into(machine: Machine, program: Program) -> None:
    label = f"<{program.provider}:{program.kind}:{program.name}>"
    if program.source is not None:
        load_asm(machine, label, program.source.encode("utf-8"), load=program.load, entry=program.entry)
    elif program.path is not None:
        load_program(machine, program.path, load=program.load, entry=program.entry)
    elif program.words is not None:
        width = 2 * program.arch.word_bytes
        text = "".join(f"{w:0{width}x}\n" for w in program.words)
        load_words(machine, label, text.encode(), load=program.load, entry=program.entry)
    else:  # pragma: no cover - parse_case refuses this
        raise ValueError(f"{program.label()} has no program")


def run(machine: Machine, max_steps: int | None, **kw: Any) -> Outcome:
    """Run to the end, a budget or an error; never raises a ``TesseraError``."""
    with captured() as out:
        try:
            result = machine.run(max_steps=max_steps, raise_on_budget=False, **kw)
        except BudgetExceeded as exc:  # pragma: no cover - raise_on_budget=False
            return Outcome("budget", exc.result, None, output_of(out))
        except TesseraError as exc:
            return Outcome(exc.kind, None, exc, output_of(out))
    return Outcome(result.reason, result, None, output_of(out))


def exit_code_of(machine: Machine, outcome: Outcome) -> int | None:
    if outcome.result is not None:
        return outcome.result.exit_code
    primary = next((a for a in machine.agents if not a.daemon), None)
    return primary.exit_code if primary is not None else None


# --------------------------------------------------------------------------- expectations


def _address(machine: Machine, key: Any) -> int:
    if isinstance(key, int) and not isinstance(key, bool):
        return key
    if isinstance(key, str):
        name, _, off = key.partition("+")
        if name in machine.symbols:
            return machine.symbols[name] + (int(off, 0) if off else 0)
        try:
            return int(key, 0)
        except ValueError:
            pass
    raise ValueError(f"memory address {key!r} is neither an address nor a symbol of the program")


def _register(agent: Any, regfile: str, key: Any) -> tuple[int, int]:
    files = agent.arch.register_file_map
    if regfile not in files or regfile not in agent.regs:
        raise ValueError(f"agent {agent.name} has no register file {regfile!r} "
                         f"(files: {', '.join(agent.regs)})")
    rf = files[regfile]
    index = key if isinstance(key, int) and not isinstance(key, bool) else rf.index(str(key))
    if index is None or not 0 <= index < rf.count:
        raise ValueError(f"register {key!r} is not in file {regfile!r}")
    return index, (1 << rf.width) - 1


def check_expectations(program: Program, machine: Machine, outcome: Outcome) -> list[str]:
    """What differs between the run and the program's expectation (empty: as expected)."""
    wrong: list[str] = []
    expect = program.expect
    if outcome.reason != program.expected_reason:
        wrong.append(f"the run ended with {outcome.detail!r}, expected reason {program.expected_reason!r}")
    if "exit_code" in expect and exit_code_of(machine, outcome) != expect["exit_code"]:
        wrong.append(f"exit code {exit_code_of(machine, outcome)}, expected {expect['exit_code']}")
    registers = dict(expect.get("registers") or {})
    for key, value in expect.items():
        if key not in EXPECT_KEYS:
            registers[key] = value
    for agent_name, files in registers.items():
        wrong.extend(_check_registers(machine, agent_name, files))
    wrong.extend(_check_pcs(machine, expect.get("pc") or {}))
    for key, want in (expect.get("memory") or {}).items():
        wrong.extend(_check_memory(machine, key, want))
    wrong.extend(_check_error(outcome, expect.get("error") or {}))
    if program.stdout is not None and outcome.stdout != program.stdout:
        wrong.append(f"the program printed {outcome.stdout!r}, expected {program.stdout!r}")
    if program.check is not None:
        if program.kind == "example":  # Example.check(machine, result) wants a RunResult
            verdict = program.check(machine, outcome.result) if outcome.result is not None else None
        else:  # a case's check(machine, outcome) sees how the run ended, errors included
            verdict = program.check(machine, outcome)
        if verdict:
            wrong.append(str(verdict))
    return wrong


def _check_registers(machine: Machine, agent_name: str, files: Mapping[str, Any]) -> list[str]:
    """Differences in one agent's expected registers (``{file: {register: value}}``)."""
    try:
        agent = machine.agent(agent_name)
    except TesseraError as exc:
        return [exc.message]
    if not isinstance(agent, CpuAgent):
        return [f"agent {agent_name} has no registers"]
    wrong = []
    for regfile, values in files.items():
        for key, want in values.items():
            try:
                index, mask = _register(agent, regfile, key)
            except ValueError as exc:
                wrong.append(str(exc))
                continue
            got = agent.regs[regfile][index]
            if got != want & mask:
                wrong.append(f"{agent_name} {regfile}[{key}] = {got:#x}, expected {want & mask:#x}")
    return wrong


def _check_pcs(machine: Machine, pcs: Mapping[str, int]) -> list[str]:
    wrong = []
    for agent_name, want in pcs.items():
        try:
            got = machine.agent(agent_name).pc  # type: ignore[attr-defined]
        except (TesseraError, AttributeError):
            wrong.append(f"agent {agent_name} has no pc")
            continue
        if got != want:
            wrong.append(f"{agent_name} pc = {got:#x}, expected {want:#x}")
    return wrong


def _check_memory(machine: Machine, key: Any, want: Any) -> list[str]:
    """``want``: bytes, an int (4 bytes) or ``(size, value)`` at symbol or address ``key``."""
    try:
        address = _address(machine, key)
        if isinstance(want, bytes | bytearray):
            got_bytes = machine.space.read_bytes(address, len(want))
            if got_bytes != bytes(want):
                return [f"memory at {key} holds {got_bytes.hex()}, expected {bytes(want).hex()}"]
            return []
        size, value = (want if isinstance(want, tuple | list) else (4, want))
        data = machine.space.read_bytes(address, size)
        got = int.from_bytes(data, "big" if machine.space.endian == "big" else "little")
        if got != value & ((1 << (8 * size)) - 1):
            return [f"memory at {key} ({size} bytes) = {got:#x}, expected {value:#x}"]
    except (ValueError, TesseraError) as exc:
        return [f"memory at {key}: {exc}"]
    return []


def _check_error(outcome: Outcome, error_fields: Mapping[str, Any]) -> list[str]:
    if not error_fields:
        return []
    if outcome.error is None:
        return [f"expected an error with {error_fields}, the run ended with {outcome.detail!r}"]
    wrong = []
    for field, wanted in error_fields.items():
        actual = getattr(outcome.error, field, None)
        if actual != wanted:
            wrong.append(f"the error's {field} is {actual!r}, expected {wanted!r} ({outcome.error})")
    return wrong
