"""When a fault fires: the trigger of a fault spec (``at=...``), parsed and checked.

========================  =====================================================================
``retired:N``             after the N-th instruction retired by the machine's CPU agents (their
                          ``instret`` summed); ``retired:N@AGENT``: by that agent alone
``step:N``                after N machine steps (instructions retired + traps taken + engine
                          commands: what ``--max-steps`` counts)
``cycle:C``               at the first instruction boundary where the machine clock is >= C
``pc:ADDR``               before the K-th execution of the instruction at ADDR (a number or a
``pc:ADDR#K[@AGENT]``     symbol; K = 1 by default), by any agent or by AGENT
``class:C#N[@AGENT]``     after the N-th completed instruction whose row is of class C, on its
                          destination: C is a row's timing class, one of its flags, its unit or
                          its mnemonic (``load``, ``store``, ``mul``, ``fp``, ``vector``, ``sfpu``)
========================  =====================================================================

The first three are *counted* triggers: the run is cut there by a pause
(``Machine.pause_at``, a step budget that the run goes on after), so the program
runs on the fast engine untouched until then and nothing is called per instruction.
``pc`` and ``class`` triggers instrument only the instructions they name
(``tessera_execute_instrument``): those run one at a time, everything else keeps its
translated blocks.  Every trigger fires at the same point on every engine.
"""

from __future__ import annotations

import re
from typing import Any

import attrs

from tessera.errors import ConfigError
from tessera.settings import parse_int

#: the trigger kinds, in the order the docs list them
KINDS = ("retired", "step", "cycle", "pc", "class")
#: triggers that cut the run with pauses (everything else instruments instructions)
COUNTED = ("retired", "step", "cycle")

_FORM = re.compile(r"^(?P<kind>[a-z]+):(?P<what>[^#@]+?)(?:#(?P<count>[^@]+))?(?:@(?P<agent>.+))?$")


@attrs.frozen
class Trigger:
    """A parsed ``at=``: ``kind``, the number or name it counts to, ``count`` (K / N), ``agent``."""

    kind: str
    value: int = 0
    #: ``pc``: the address or symbol as written; ``class``: the class name
    name: str = ""
    count: int = 1
    agent: str | None = None

    def __str__(self) -> str:
        what = self.name if self.kind in ("pc", "class") else str(self.value)
        count = f"#{self.count}" if self.kind in ("pc", "class") and self.count != 1 else ""
        agent = f"@{self.agent}" if self.agent else ""
        return f"{self.kind}:{what}{count}{agent}"

    @property
    def counted(self) -> bool:
        return self.kind in COUNTED


def parse_trigger(text: str) -> Trigger:
    """``at=`` text → :class:`Trigger` (:class:`ConfigError` naming what is wrong)."""
    found = _FORM.match((text or "").strip())
    if found is None or found.group("kind") not in KINDS:
        raise ConfigError(f"at={text}: write one of retired:N[@AGENT], step:N, cycle:C, "
                          "pc:ADDR[#K][@AGENT], class:C[#N][@AGENT]")
    kind, what, agent = found.group("kind"), found.group("what").strip(), found.group("agent")
    count_text = found.group("count")
    if count_text is not None and kind not in ("pc", "class"):
        raise ConfigError(f"at={text}: #K counts executions of a pc or class trigger only")
    if agent is not None and kind in ("step", "cycle"):
        raise ConfigError(f"at={text}: a {kind} trigger counts the whole machine; it takes no @AGENT")
    count = _number(text, count_text, "#", 0) if count_text is not None else 1
    if count < 1:
        raise ConfigError(f"at={text}: #{count}: executions are counted from 1")
    if kind == "pc":
        return Trigger(kind, name=what, count=count, agent=agent)
    if kind == "class":
        if not re.match(r"^[\w.\-]+$", what):
            raise ConfigError(f"at={text}: {what!r} is not a class name")
        return Trigger(kind, name=what.lower(), count=count, agent=agent)
    return Trigger(kind, value=_number(text, what, kind, 0), agent=agent)


def _number(text: str, value: str, what: str, minimum: int) -> int:
    try:
        n = parse_int(value)
    except ValueError:
        raise ConfigError(f"at={text}: {what} needs a whole number, not {value!r}") from None
    if n < minimum:
        raise ConfigError(f"at={text}: {value} is below {minimum}")
    return n


def row_classes(encoding: Any) -> frozenset[str]:
    """The class names a row answers to: its timing class, flags, unit and mnemonic (lower case)."""
    names = {str(encoding.timing), str(encoding.mnemonic), *map(str, encoding.flags)}
    if getattr(encoding, "unit", ""):
        names.add(str(encoding.unit))
    return frozenset(n.lower() for n in names)


def check_class(arch: Any, name: str) -> None:
    """Refuse a class no row of ``arch`` has (a trigger that could never fire)."""
    if not any(name in row_classes(e) for e in arch.encodings):
        timing = sorted({str(e.timing).lower() for e in arch.encodings})
        raise ConfigError(f"at=class:{name}: no instruction of {arch.name} is of class {name!r} "
                          f"(timing classes: {', '.join(timing)}; tessera faults classes --arch {arch.name} "
                          "lists flags and units too)")


def class_table(arch: Any) -> list[tuple[str, list[str], int]]:
    """``(class, where it comes from, rows)`` for every timing class, flag and unit of ``arch``."""
    found: dict[str, tuple[set[str], set[int]]] = {}
    for i, e in enumerate(arch.encodings):
        for kind, names in (("timing", [e.timing]), ("flag", e.flags), ("unit", [e.unit] if e.unit else [])):
            for n in names:
                kinds, rows = found.setdefault(str(n).lower(), (set(), set()))
                kinds.add(kind)
                rows.add(i)
    return [(name, sorted(kinds), len(rows)) for name, (kinds, rows) in sorted(found.items())]


def resolve_pc(machine: Any, trigger: Trigger) -> int:
    """The address of a ``pc`` trigger (a number, or a symbol of the loaded program)."""
    try:
        return parse_int(trigger.name)
    except ValueError:
        pass
    if trigger.name in machine.symbols:
        return int(machine.symbols[trigger.name])
    raise ConfigError(f"at=pc:{trigger.name}: not an address, and the program has no such symbol")


def retired(machine: Any, agent: str | None) -> int:
    """Instructions retired so far: by ``agent``, or by every CPU agent."""
    if agent is not None:
        return int(machine.agent(agent).instret)
    return sum(int(cpu.instret) for cpu in machine.cpus)


def max_step_cycles(machine: Any) -> int:
    """The most cycles one step may add to the clock under nominal timing (at least 1)."""
    costs = [int(v) for cpu in machine.cpus for v in cpu.arch.timing.values()]
    return max([1, *costs])
