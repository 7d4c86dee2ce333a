"""Runs shared by the checks: the reference run of each program, hosts, state views.

The *reference run* of a program runs it on a host holding the architecture's plugin
(and the plugin that supplied the program, for a case), plus a
:class:`~tessera_conformance.probes.Recorder` and a
:class:`~tessera_conformance.probes.Selective` probe.  It is made once per session and
shared: the examples and cases checks judge its final state, the determinism and
snapshot checks compare fresh runs with it, the execute-hooks check reads its events,
and tool plugins are compared with its hash.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import attrs
import pytest

from tessera.errors import TesseraError
from tessera.machine import Machine, configure_tools
from tessera_conformance.discovery import Suite
from tessera_conformance.probes import Recorder, Selective, chunk_digests
from tessera_conformance.programs import Outcome, Program, run, start

RECORDER = "conformance-recorder"


@attrs.define(eq=False)
class Reference:
    machine: Machine
    outcome: Outcome
    state: dict[str, Any]
    hash: str
    log: list[tuple[Any, ...]]
    selective: Selective
    entry: int | None

    @property
    def steps(self) -> int:
        return int(self.machine.total_steps)

    def trace(self) -> list[tuple[str, int, int]]:
        return [(e[1], e[2], e[3]) for e in self.log if e[0] == "B"]


class ProgramBroken(Exception):
    """The program could not even be built or loaded (the message says why)."""


def plugins_for(suite: Suite, program: Program) -> tuple[str, ...]:
    owner = suite.arch_plugin[program.arch.name]
    return (owner, program.provider) if program.provider != owner else (owner,)


def host_for(suite: Suite, program: Program, *extra: tuple[str, Any]) -> Any:
    return suite.host_for(*plugins_for(suite, program), extra=extra)


def build(suite: Suite, program: Program, *extra: tuple[str, Any], settings: dict[str, Any] | None = None) -> Machine:
    """A fresh machine with ``program`` loaded, on a host with the given probes (or tools),
    configured as ``tessera run`` configures it (:func:`configure`); ``settings`` are a
    tool's configuration keys added to the program's."""
    if program.problem is not None:
        raise ProgramBroken(program.problem)
    try:
        machine = start(program, host_for(suite, program, *extra), settings)
    except TesseraError as exc:
        raise ProgramBroken(f"{program.label()} (from plugin {program.provider}) cannot be "
                            f"loaded: {exc}") from None
    return configure(suite, program, machine)


def configure(suite: Suite, program: Program, machine: Machine) -> Machine:
    """Hand the plugins' ``tessera_run_configure`` the tool options of ``program``'s runs.

    ``tessera run`` does this after loading and ``tessera resume`` after restoring; so
    does the suite (see :mod:`tessera_conformance.tooloptions`).  A plugin of the program
    (its architecture's or the case's) that refuses makes the program broken; any other
    plugin that refuses, or raises, fails the check that enabled it.
    """
    values = suite.options_for(program)
    own = set(plugins_for(suite, program))

    def refused(plugin: str, error: Exception) -> None:
        given = suite.tool_options.describe(values, [plugin])
        what = (f"plugin {plugin}: tessera_run_configure raised {type(error).__name__}: {error}"
                + (f" (tool options: {given})" if given else ""))
        if plugin in own:
            raise ProgramBroken(f"{program.label()}: {what}")
        pytest.fail(f"{program.label()}: {what}", pytrace=False)

    configure_tools(machine, values, refused)
    return machine


def state_of(machine: Machine) -> dict[str, Any]:
    """``machine.state()`` as plain JSON data (comparable, printable)."""
    return json.loads(json.dumps(machine.state(), sort_keys=True, default=repr))


def architectural_digest(machine: Machine) -> str:
    """Like ``state_hash`` but without cycle counts and the clock (timing is not architecture)."""
    st = state_of(machine)
    st.pop("clock", None)
    for agent in st.get("agents", {}).values():
        agent.pop("cycles", None)
    h = hashlib.sha256(json.dumps(st, sort_keys=True).encode())
    for key, digest in sorted(chunk_digests(machine).items()):
        h.update(repr(key).encode())
        h.update(digest)
    return h.hexdigest()


def reference(suite: Suite, program: Program) -> Reference:
    """The program's reference run (made once per session)."""
    key = ("reference", program.arch.name, program.name)
    got = suite.cache.get(key)
    if isinstance(got, ProgramBroken):
        raise ProgramBroken(str(got))
    if got is not None:
        return got
    log: list[tuple[Any, ...]] = []
    selective = Selective(-1)
    try:
        machine = build(suite, program, (RECORDER, Recorder(log)), ("conformance-selective", selective))
    except ProgramBroken as exc:
        suite.cache[key] = exc
        raise
    cpus = machine.cpus
    entry = cpus[0].pc if cpus else None
    selective.address = entry if entry is not None else -1
    outcome = run(machine, program.max_steps)
    ref = Reference(machine, outcome, state_of(machine), machine.state_hash(), log, selective, entry)
    suite.cache[key] = ref
    return ref


def first_difference(a: list[Any], b: list[Any]) -> str:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"first difference at event {i}: {x} vs {y}"
    if len(a) != len(b):
        return f"one trace is longer: {len(a)} vs {len(b)} events"
    return "no difference"


def state_difference(a: dict[str, Any], b: dict[str, Any], path: str = "") -> str:
    """Where two ``state_of`` views first differ (for messages)."""
    if type(a) is not type(b):
        return f"{path or 'state'}: {a!r} vs {b!r}"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b), key=str):
            if k not in a or k not in b:
                return f"{path}.{k}: present in only one"
            if a[k] != b[k]:
                return state_difference(a[k], b[k], f"{path}.{k}" if path else str(k))
    if isinstance(a, list):
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return state_difference(x, y, f"{path}[{i}]")
        if len(a) != len(b):
            return f"{path}: {len(a)} vs {len(b)} items"
    return f"{path or 'state'}: {a!r} vs {b!r}"
