"""Checks of every plugin (load, API version, declarations, hooks) and of tool plugins (transparency)."""

from __future__ import annotations

import fnmatch
from typing import Any

import click
import pytest

from tessera import SUPPORTED_API_VERSIONS
from tessera.errors import PluginError
from tessera_conformance.probes import Recorder
from tessera_conformance.programs import run
from tessera_conformance.runs import (
    RECORDER,
    ProgramBroken,
    architectural_digest,
    build,
    first_difference,
    reference,
    state_difference,
    state_of,
)


def _fail(message: str) -> None:
    pytest.fail(message, pytrace=False)


def test_load(plugin_target, conformance_suite):
    """The plugin imports, the host accepts it, its discovery hooks work."""
    subject = plugin_target.subject
    problems = []
    rec = subject.record
    if rec is not None and rec.status != "active":
        problems.append(f"{rec.status}: {rec.reason}")
    problems.extend(subject.problems)
    if problems:
        _fail(f"plugin {subject.name}: " + "; ".join(problems))


def test_api_version(plugin_target, conformance_suite):
    """The plugin declares a plugin-API version this Tessera supports."""
    subject = plugin_target.subject
    declared = subject.record.api_version
    supported = ", ".join(map(str, sorted(SUPPORTED_API_VERSIONS)))
    if declared is None:
        _fail(f"plugin {subject.name} does not declare TESSERA_API_VERSION (this Tessera supports "
              f"{supported}: add `TESSERA_API_VERSION = 1` to the plugin module or object)")
    if declared not in SUPPORTED_API_VERSIONS:
        _fail(f"plugin {subject.name} declares TESSERA_API_VERSION = {declared!r}; this Tessera "
              f"supports {supported}")


def test_declarations(plugin_target, conformance_suite):
    """TESSERA_CONFORMANCE is well formed and each expected failure matches something."""
    subject = plugin_target.subject
    problems = list(subject.declaration_problems)
    for pattern in subject.xfail:
        if pattern in subject.used_patterns:
            continue
        check = pattern.split(":", 1)[0]
        if any(fnmatch.fnmatchcase(c, check) for c in conformance_suite.generated_checks):
            problems.append(f"expected failure {pattern!r} matches none of this plugin's checks "
                            "(remove it, or fix the pattern: check[:arch[:item]])")
    if problems:
        _fail(f"plugin {subject.name}: " + "; ".join(problems))


def test_hooks(plugin_target, conformance_suite, capsys):
    """Implementations validate against the hookspecs; CLI commands are added cleanly."""
    from tessera.cli.contributions import BUILTIN_COMMANDS, add_plugin_commands

    subject = plugin_target.subject
    host = conformance_suite.host_for(subject.name)
    problems = []
    rec = host.records[subject.name]
    if rec.status != "active":  # pragma: no cover - accepted by the suite's host already
        _fail(f"plugin {subject.name} is refused by a fresh host: {rec.reason}")
    for name in rec.hooks:
        caller = getattr(host.pm.hook, name)
        if caller.spec is None:
            problems.append(f"{name} is not a Tessera hookspec")
            continue
        for impl in caller.get_hookimpls():
            if impl.plugin_name != subject.name:
                continue
            extra = set(impl.argnames) - set(caller.spec.argnames)
            if extra:
                problems.append(f"{name} takes {', '.join(sorted(extra))}, which the hookspec does not have")
            if impl.hookwrapper or impl.wrapper:
                problems.append(f"{name} is a hook wrapper; Tessera calls implementations one by one, "
                                "so wrappers are not supported")
    if "tessera_cli_commands" in rec.hooks:
        group = click.Group("tessera")
        add_plugin_commands(group, host)
        err = capsys.readouterr().err
        if host.records[subject.name].status != "active":
            problems.append(host.records[subject.name].reason)
        problems.extend(line for line in err.splitlines() if "clashes" in line)
        for name, cmd in group.commands.items():
            if name in BUILTIN_COMMANDS:  # pragma: no cover - refused by add_plugin_commands
                problems.append(f"command {name!r} replaces a built-in command")
            if not isinstance(cmd, click.Command):  # pragma: no cover
                problems.append(f"command {name!r} is not a click command")
            elif not (cmd.help or cmd.short_help):
                problems.append(f"command {name!r} has no help text")
    if problems:
        _fail(f"plugin {subject.name}: " + "; ".join(problems))


def _enabled(suite, tool, program) -> str:
    """``with NAME enabled (--its-option VALUE), <program>`` for messages."""
    given = suite.tool_options.describe(suite.options_for(program), [tool.name])
    return f"with {tool.name} enabled{f' ({given})' if given else ''}, {program.label()}"


def test_transparency(tool_target, conformance_suite):
    """Enabling the tool plugin (configured with the tool options) leaves the program's
    architectural result unchanged."""
    tool = tool_target.subject
    program = tool_target.payload
    if tool.modifies_state:
        pytest.skip(f"{tool.name} declares that it modifies state: {tool.modifies_state} "
                    "(tool-determinism checks it instead)")
    suite = conformance_suite
    timing = "tessera_timing_model" in tool.hooks
    log: list[tuple[Any, ...]] = []
    probes = [(RECORDER, Recorder(log))] if timing else []
    try:
        ref = reference(suite, program)
    except ProgramBroken as exc:
        pytest.skip(f"reference program unusable (reported by its own checks): {exc}")
    try:
        machine = build(suite, program, (tool.name, tool.plugin), *probes, settings=tool.settings)
    except ProgramBroken as exc:
        if tool.settings:  # e.g. a cycle model for other architectures
            pytest.skip(f"{tool.name}'s settings {tool.settings} do not apply here: {exc}")
        pytest.skip(f"reference program unusable (reported by its own checks): {exc}")
    outcome = run(machine, program.max_steps)
    with_tool = _enabled(suite, tool, program)
    if outcome.signature() != ref.outcome.signature():
        _fail(f"{with_tool} ended with {outcome.detail!r} instead of {ref.outcome.detail!r}")
    if timing:  # a cycle model changes the clock, which is not architectural state
        free = sorted({hex(e[2]) for e in log if e[0] == "B" and not (isinstance(e[4], int) and e[4] > 0)})
        if free:
            _fail(f"{with_tool}: the timing model of {tool.name} prices instructions at "
                  f"{', '.join(free[:5])} at zero cycles or less")
        if machine.total_steps and machine.clock <= 0:
            _fail(f"{with_tool}: the clock of {tool.name}'s timing model reads {machine.clock}")
        if architectural_digest(machine) != architectural_digest(ref.machine):
            a, b = state_of(machine), ref.state
            _fail(f"{with_tool} ends in a different architectural state "
                  f"({state_difference(a, b) if a != b else 'memory differs'})")
    elif machine.state_hash() != ref.hash:
        a, b = state_of(machine), ref.state
        _fail(f"{with_tool} ends in a different state ({state_difference(a, b) if a != b else 'memory differs'}); "
              "a plugin that changes results on purpose declares TESSERA_CONFORMANCE = "
              "{'modifies_state': 'why'}")


def test_tool_determinism(tool_target, conformance_suite):
    """A tool that declares ``modifies_state`` changes results reproducibly and never crashes.

    Two runs of the program with the tool enabled and configured with the same tool
    options must end alike (outcome, state hash, the instructions started), in a
    result or a Tessera error other than a ``PluginError``: a fault-injection campaign
    relies on an injection giving the same run every time.  Whether the tool changed
    the result at all is printed, not judged: the cases a tool supplies (with their
    ``tool_options``) pin what its injection must do.
    """
    tool = tool_target.subject
    program = tool_target.payload
    suite = conformance_suite
    try:
        ref = reference(suite, program)
    except ProgramBroken as exc:
        pytest.skip(f"reference program unusable (reported by its own checks): {exc}")
    with_tool = _enabled(suite, tool, program)
    runs = []
    for _ in range(2):
        log: list[tuple[Any, ...]] = []
        machine = build(suite, program, (tool.name, tool.plugin), (RECORDER, Recorder(log)))
        outcome = run(machine, program.max_steps)
        if isinstance(outcome.error, PluginError):
            _fail(f"{with_tool}: the run ended with {outcome.detail!r}")
        runs.append((outcome, machine.state_hash(), [(e[1], e[2], e[3]) for e in log if e[0] == "B"],
                     machine))
    (first, hash1, trace1, m1), (second, hash2, trace2, m2) = runs
    if first.signature() != second.signature():
        _fail(f"{with_tool}: the first run ended with {first.detail!r}, the second with {second.detail!r}")
    if trace1 != trace2:
        _fail(f"{with_tool}: two runs started different instructions ({first_difference(trace1, trace2)})")
    if hash1 != hash2:
        a, b = state_of(m1), state_of(m2)
        _fail(f"{with_tool}: two runs end in different states "
              f"({state_difference(a, b) if a != b else 'memory differs'})")
    changed = "changed" if hash1 != ref.hash or first.signature() != ref.outcome.signature() else "did not change"
    print(f"{with_tool}: {tool.name} {changed} the result ({first.detail})")
