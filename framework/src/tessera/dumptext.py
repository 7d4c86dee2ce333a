"""Readable text for dump state (``--dump-state text``): the generic rule, and helpers.

:meth:`Machine.state() <tessera.machine.Machine.state>` is JSON-able data whose
shape the plugins choose (``Architecture.dump`` adds *extras* to every agent's
state; sync objects report their own).  The core cannot know what those values
mean, so it renders them by their shape alone, which makes any plugin's state
readable without work from the plugin:

* a scalar is a ``key value`` cell; the cells of one mapping are packed several
  to a line.  Integers print in decimal below 0x10000 (counts, indices, modes) and
  in hex from there (addresses, register values); ``None`` prints as ``none``;
* a list of integers is a hex row of equal-width cells, wrapped 8 or 16 to a line
  (continuation lines start with the index of their first element); a list of
  booleans is a bit string, element 0 first, in groups of 8; other lists are rows of
  their values as text; a list of 8 or more equal values is ``all N = value``;
* a list of lists is one row per inner list, labelled ``key[i]``;
* a nested mapping is a section: its key, then its contents indented (``key: cells``
  on one line when it holds only scalars that fit);
* a list of mappings is a table with a header row;
* an empty list or mapping prints as ``none``.

When shape is not enough (bit fields to decode, codes to name, a table stored as
lists of words) the architecture renders its own sections through
``Architecture.dump_text`` and may use :func:`render`, :func:`table`,
:func:`hex_cells` and :func:`scalar` here for the rest.  The helpers return lines
without the enclosing indentation; the caller indents them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tessera.errors import PluginError, TesseraError

#: Keys the core itself puts into an agent's state (``Agent.state``, ``CpuAgent.state``);
#: every other key of an agent's state is an extra from ``Architecture.dump``.
CORE_AGENT_KEYS = frozenset({"kind", "status", "instret", "traps", "cycles", "exit_code",
                             "waiting_for", "pc", "registers"})

#: Lines are wrapped before this many characters (not counting the caller's indent).
WIDTH = 96
INDENT = "    "


def extras(agent_state: Mapping[str, Any]) -> dict[str, Any]:
    """The keys of an agent's state that ``Architecture.dump`` added."""
    return {k: v for k, v in agent_state.items() if k not in CORE_AGENT_KEYS}


def _is_scalar(value: Any) -> bool:
    """Not a container (anything unexpected a plugin returns prints as its ``str``)."""
    return not isinstance(value, (list, tuple, Mapping))


def _is_empty(value: Any) -> bool:
    return isinstance(value, (list, tuple, Mapping)) and not value


def scalar(value: Any) -> str:
    """One value as text: ints in decimal below 0x10000 and in hex from there."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value) if -0x10000 < value < 0x10000 else (f"-{-value:#x}" if value < 0 else f"{value:#x}")
    if isinstance(value, float):
        return f"{value:g}"
    if _is_empty(value):
        return "none"
    if isinstance(value, (list, tuple)) and all(_is_scalar(v) for v in value):
        return "[" + " ".join(scalar(v) for v in value) + "]"
    return str(value)


def pack(cells: Sequence[str], width: int = WIDTH, sep: str = "  ") -> list[str]:
    """``cells`` joined by ``sep`` into lines no longer than ``width`` (a long cell gets its own)."""
    lines: list[str] = []
    line = ""
    for cell in cells:
        if line and len(line) + len(sep) + len(cell) > width:
            lines.append(line)
            line = cell
        else:
            line = f"{line}{sep}{cell}" if line else cell
    if line:
        lines.append(line)
    return lines


def _digits(values: Sequence[int]) -> int:
    """Hex digits for the widest of ``values``: 2, 4, 8, 16, ... (a byte, half, word ...)."""
    need = max((max(v.bit_length(), 1) + 3) // 4 for v in values) if values else 1
    digits = 2
    while digits < need:
        digits *= 2
    return digits


def hex_cells(values: Sequence[int], digits: int | None = None) -> list[str]:
    """``values`` as equal-width hex cells (``digits`` wide, else as wide as the widest needs)."""
    d = _digits(values) if digits is None else digits
    return [f"{v:#0{d + 2}x}" for v in values]


def _row(label: str, cells: list[str], label_width: int) -> list[str]:
    """Cells after a label, 8 or 16 to a line; continuation lines are labelled ``[index]``."""
    if not cells:
        return [f"{label:<{label_width}} none"]
    cell_w = max(len(c) for c in cells)
    per = max(1, (WIDTH - max(label_width, len(label)) - 1) // (cell_w + 1))
    per = 16 if per >= 14 else 8 if per >= 6 else per
    width = max(label_width, len(label), len(f"[{(len(cells) - 1) // per * per}]") if len(cells) > per else 0)
    out = []
    for i in range(0, len(cells), per):
        head = label if i == 0 else f"[{i}]".rjust(len(label))
        out.append(f"{head:<{width}} " + " ".join(c.rjust(cell_w) for c in cells[i:i + per]))
    return out


def list_row(label: str, values: Sequence[Any], label_width: int = 0, digits: int | None = None) -> list[str]:
    """A list of scalars after ``label``: ints as hex (``digits`` wide, default: as the
    widest needs), booleans as bits, others as text; 8 or more equal values in one cell."""
    values = list(values)
    if len(values) >= 8 and all(v == values[0] and type(v) is type(values[0]) for v in values):
        first = list_row("", values[:1], 0, digits)[0].strip()
        return [f"{label:<{label_width}} all {len(values)} = {first}"]
    if values and all(isinstance(v, bool) for v in values):
        bits = "".join("1" if v else "0" for v in values)
        return [f"{label:<{label_width}} " + " ".join(bits[i:i + 8] for i in range(0, len(bits), 8))]
    if values and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in values):
        return _row(label, hex_cells(values, digits), label_width)
    return _row(label, [scalar(v) for v in values], label_width)


def table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None) -> list[str]:
    """``rows`` as a table: a header row of ``columns`` (default: every key, first seen
    first), then one line per row; cells are :func:`scalar` text, left-aligned."""
    if columns is None:
        seen: dict[str, None] = {}
        for row in rows:
            seen.update(dict.fromkeys(map(str, row)))
        columns = list(seen)
    cells = [[scalar(row.get(c)) if c in row else "" for c in columns] for row in rows]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return [fmt.format(*columns).rstrip()] + [fmt.format(*r).rstrip() for r in cells]


def render(mapping: Mapping[Any, Any]) -> list[str]:
    """The generic rule (module docstring) for one mapping: scalar cells first, packed,
    then lists, tables and sections in the mapping's order."""
    items = [(str(k), v) for k, v in mapping.items()]
    cells = [f"{k} {scalar(v)}" for k, v in items if _is_scalar(v) or _is_empty(v)]
    lines = pack(cells)
    rest = [(k, v) for k, v in items if not (_is_scalar(v) or _is_empty(v))]
    label_width = max((len(k) for k, v in rest if isinstance(v, (list, tuple))
                       and all(_is_scalar(x) for x in v)), default=0)
    for key, value in rest:
        if isinstance(value, Mapping):
            body = render(value)
            flat = all(_is_scalar(v) or _is_empty(v) for v in value.values())
            if flat and len(body) == 1 and len(key) + len(body[0]) < WIDTH:
                lines.append(f"{key}: {body[0]}")
            else:
                lines.append(key)
                lines.extend(INDENT + line for line in body)
        elif all(_is_scalar(v) for v in value):
            lines.extend(list_row(key, value, label_width))
        elif all(isinstance(v, Mapping) and all(_is_scalar(x) or _is_empty(x) or
                                                (isinstance(x, (list, tuple)) and all(map(_is_scalar, x)))
                                                for x in v.values()) for v in value):
            lines.append(key)
            lines.extend(INDENT + line for line in table(value))
        elif all(isinstance(v, (list, tuple)) and all(_is_scalar(x) for x in v) for v in value):
            labels = [f"{key}[{i}]" for i in range(len(value))]
            width = max(len(label) for label in labels)
            for label, inner in zip(labels, value, strict=True):
                lines.extend(list_row(label, inner, width))
        else:  # mixed shapes: one section per element
            for i, element in enumerate(value):
                if isinstance(element, Mapping):
                    lines.append(f"{key}[{i}]")
                    lines.extend(INDENT + line for line in render(element))
                else:
                    lines.append(f"{key}[{i}] {scalar(element)}")
    return lines


# ---------------------------------------------------------------- the whole machine

def _hex(value: int, bits: int) -> str:
    return f"{value:#0{2 + (bits + 3) // 4}x}"


def _size(n: int) -> str:
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift}{unit}"
    return str(n)


def _custom(arch: Any, section: str, name: str, state: Mapping[str, Any]) -> list[str] | None:
    """The architecture's own lines for one agent or sync object, or ``None``.

    A ``dump_text`` that raises or returns something else than lines is a bug in its
    plugin, reported as a :class:`~tessera.errors.PluginError` naming the architecture.
    """
    hook = getattr(arch, "dump_text", None)
    if hook is None:
        return None
    try:
        lines = hook(section, name, state)
    except TesseraError:
        raise
    except Exception as exc:  # a plugin's bug, named as such
        raise PluginError(f"architecture {arch.name}: dump_text({section!r}, {name!r}) raised "
                          f"{type(exc).__name__}: {exc}") from exc
    if lines is not None and not (isinstance(lines, list) and all(isinstance(x, str) for x in lines)):
        raise PluginError(f"architecture {arch.name}: dump_text({section!r}, {name!r}) returned "
                          f"{type(lines).__name__}, not a list of lines or None")
    return lines


def _agent(arch: Any, name: str, agent: Mapping[str, Any]) -> list[str]:
    head = f"{name:<8} {agent['kind']:<7} {agent['status']:<9}"
    if agent.get("pc") is not None:
        head += f" pc {_hex(agent['pc'], arch.address_bits)}"
    head += f"  instret {agent['instret']}  cycles {agent['cycles']}"
    if agent.get("traps"):
        head += f"  traps {agent['traps']}"
    if agent.get("exit_code") is not None:
        head += f"  exit {agent['exit_code']}"
    if agent.get("waiting_for"):
        head += f"  waiting for {agent['waiting_for']}"
    lines = [head]
    files = {rf.name: rf for rf in arch.register_files}
    for rfname, values in agent.get("registers", {}).items():
        rf = files.get(rfname)
        names = list(rf.names) if rf else [f"{rfname}{i}" for i in range(len(values))]
        if values and not any(values):
            span = " ".join(names[:len(values)]) if len(values) <= 4 else f"{names[0]}..{names[len(values) - 1]}"
            lines.append(f"{INDENT}{span} all 0")
            continue
        width = rf.width if rf else 32
        cells = [f"{names[i]:>5}={_hex(v, width)}" for i, v in enumerate(values)]
        lines.extend(INDENT + "  ".join(cells[i:i + 4]) for i in range(0, len(cells), 4))
    custom = _custom(arch, "agent", name, agent)
    body = render(extras(agent)) if custom is None else custom
    lines.extend(INDENT + line for line in body)
    return lines


def _flat(state: Mapping[str, Any]) -> bool:
    """Small enough for one line: scalars and short lists of scalars only."""
    return all(_is_scalar(v) or (isinstance(v, (list, tuple)) and len(v) <= 8
                                 and all(_is_scalar(x) for x in v))
               for k, v in state.items() if k != "kind")


def _sync(arch: Any, name: str, obj: Mapping[str, Any]) -> list[str]:
    body = {k: v for k, v in obj.items() if k != "kind"}
    custom = _custom(arch, "sync", name, obj)
    if custom is None and _flat(body):
        desc = ", ".join(f"{k}={scalar(v)}" for k, v in body.items())
        return [f"sync {name} ({obj.get('kind')})" + (f": {desc}" if desc else "")]
    return [f"sync {name} ({obj.get('kind')})"] + [INDENT + line for line in (custom if custom is not None
                                                                             else render(body))]


def _memory(arch: Any, space: str, regions: Sequence[Mapping[str, Any]]) -> list[str]:
    rows = []
    for r in regions:
        row = dict(r)
        if isinstance(r.get("start"), int):
            row["start"] = _hex(r["start"], arch.address_bits)
            if isinstance(r.get("size"), int):
                row["end"] = _hex(r["start"] + r["size"] - 1, arch.address_bits)
        if isinstance(r.get("size"), int):
            row["size"] = _size(r["size"])
        rows.append(row)
    columns = ["name", "kind", "start", "end", "size", "perms"]
    columns += [c for row in rows for c in row if c not in columns]
    return [f"memory {space}"] + [INDENT + line for line in table(rows, list(dict.fromkeys(columns)))]


def _result(result: Mapping[str, Any], arch: Any) -> str:
    line = f"result {result.get('reason')}"
    if result.get("agent"):
        line += f"  agent {result['agent']}"
    if result.get("pc") is not None:
        line += f"  pc {_hex(result['pc'], arch.address_bits)}"
    if result.get("exit_code") is not None:
        line += f"  exit {result['exit_code']}"
    if result.get("detail"):
        line += f"  ({result['detail']})"
    return line


def machine_lines(arch: Any, state: Mapping[str, Any]) -> list[str]:
    """``state`` (:meth:`Machine.state`, with ``"result"`` if the run made one) as text.

    The layout: the clock line and the run's result; per agent a status line, its
    register files (a file that is all zero in one line) and its extras (the
    architecture's ``dump_text``, else the generic rule); the sync objects (one line
    each when flat); the memory map of every address space as a table.
    """
    lines = [f"arch {state['arch']}  clock {state['clock']} cycles  steps {state['steps']}"]
    if state.get("result"):
        lines.append(_result(state["result"], arch))
    for name, agent in state["agents"].items():
        lines.extend(_agent(arch, name, agent))
    for name, obj in state.get("sync", {}).items():
        lines.extend(_sync(arch, name, obj))
    for space, regions in state.get("memory", {}).items():
        lines.extend(_memory(arch, space, regions))
    return lines


__all__ = ["CORE_AGENT_KEYS", "INDENT", "WIDTH", "extras", "hex_cells", "list_row", "machine_lines", "pack", "render",
           "scalar", "table"]
