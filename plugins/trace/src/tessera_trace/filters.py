"""What a trace records: a PC range, a set of agents and a window of records.

The filters are parsed and checked against the machine *before* the run starts, so a
filter that could never match anything (a misspelt agent, a PC range outside every
mapped region, an empty window) is a one-line configuration error instead of a run
that silently writes an empty trace.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import attrs

from tessera.errors import ConfigError

#: The end of an open window (``--trace-window 1000:``): larger than any record index.
FOREVER = 1 << 62


def _number(text: str, what: str, symbols: dict[str, int] | None = None) -> int:
    """An integer written in decimal, ``0x`` hex, ``0o``/``0b``, with ``_`` separators, or a symbol."""
    text = text.strip()
    try:
        value = int(text.replace("_", ""), 0)
    except ValueError:
        if symbols and text in symbols:
            return symbols[text]
        raise ConfigError(f"{what}: {text!r} is not a number"
                          + (" or a symbol of the program" if symbols is not None else "")) from None
    if value < 0:
        raise ConfigError(f"{what}: {text!r} is negative")
    return value


@attrs.frozen
class PcRange:
    """Instructions whose address is in ``[start, end)``."""

    start: int
    end: int

    def __contains__(self, pc: int) -> bool:
        return self.start <= pc < self.end

    def __str__(self) -> str:
        return f"{self.start:#x}:{self.end:#x}"


@attrs.frozen
class Window:
    """Records ``first`` (inclusive) to ``last`` (exclusive) of the filtered retirement stream."""

    first: int = 0
    last: int = FOREVER

    def __str__(self) -> str:
        return f"{self.first}:{'' if self.last >= FOREVER else self.last}"


def parse_pc(value: Any, symbols: dict[str, int] | None = None) -> PcRange | None:
    """``"START:END"`` (numbers or program symbols), a ``(start, end)`` pair, or ``None``."""
    if value is None or isinstance(value, PcRange):
        return value
    if isinstance(value, str):
        start_text, sep, end_text = value.partition(":")
        if not sep or not start_text.strip() or not end_text.strip():
            raise ConfigError(f"--trace-pc {value!r}: expected START:END (e.g. 0x10000:0x10100)")
        start = _number(start_text, "--trace-pc", symbols)
        end = _number(end_text, "--trace-pc", symbols)
    else:
        try:
            start, end = (int(v) for v in value)
        except (TypeError, ValueError):
            raise ConfigError(f"pc filter {value!r}: expected (start, end) or 'START:END'") from None
    if start >= end:
        raise ConfigError(f"--trace-pc {start:#x}:{end:#x} is empty (START must be below END; "
                          "the range is half-open)")
    return PcRange(start, end)


def parse_window(value: Any) -> Window | None:
    """``"FIRST:LAST"`` (either side may be empty), a ``(first, last)`` pair, or ``None``."""
    if value is None or isinstance(value, Window):
        return value
    if isinstance(value, str):
        first_text, sep, last_text = value.partition(":")
        if not sep:
            raise ConfigError(f"--trace-window {value!r}: expected FIRST:LAST (e.g. 1000:2000)")
        first = _number(first_text, "--trace-window") if first_text.strip() else 0
        last = _number(last_text, "--trace-window") if last_text.strip() else FOREVER
    else:
        try:
            first, last = value
            first = int(first)
            last = FOREVER if last is None else int(last)
        except (TypeError, ValueError):
            raise ConfigError(f"window {value!r}: expected (first, last) or 'FIRST:LAST'") from None
        if first < 0 or last < 0:
            raise ConfigError(f"--trace-window {first}:{last}: indices are not negative")
    if first >= last:
        raise ConfigError(f"--trace-window {first}:{last} is empty (FIRST must be below LAST)")
    return Window(first, last)


def check_agents(machine: Any, names: Iterable[str]) -> frozenset[str]:
    """The agent names to trace (empty: all); a name the machine lacks is an error."""
    wanted = frozenset(names)
    known = [a.name for a in machine.agents]
    missing = sorted(wanted - set(known))
    if missing:
        raise ConfigError(f"--trace-agent {missing[0]}: no such agent (agents: {', '.join(known)})")
    return wanted


def check_pc(machine: Any, pcs: PcRange | None) -> None:
    """A PC range must overlap some mapped region of one of the machine's address spaces."""
    if pcs is None:
        return
    for space in machine.spaces.values():
        for region in space.regions:
            if region.start < pcs.end and pcs.start < region.end:
                return
    raise ConfigError(f"--trace-pc {pcs} lies outside every mapped region of the machine")
