"""The ``.ace`` spelling of single ACE words: a raw number, or a word's fields by layout.

``.ace 0x0000627b`` is one word.  ``.ace W1.tgmem.mem{td=4, tilesize=1, rs1=10}`` is the
same word by its fields (role, W1 class, layout name of the tables, then the fields in
decimal; ``rsv=0x...`` gives reserved bits that are set, ``op=custom-0`` another major
opcode).  The disassembler prints words outside a complete operation this way, so a
listing can be diffed field by field against another toolchain's, and every line it
prints assembles back to the same word.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from tessera_tile.tables import Layout, Tables

_FORM = re.compile(r"^\s*(W[012])\.([A-Za-z0-9_]+)(?:\.([A-Za-z0-9_]+))?\s*\{(.*)\}\s*$", re.DOTALL)


class RawProblem(Exception):
    pass


def role(tables: Tables, word: int) -> tuple[str, str | None]:
    """``("W2"|"W1"|"W0", class or None)`` of an ACE word, by its tuop."""
    cls = tables.class_of_tuop[tables.tuop_of(word)]
    if cls == "w2":
        return "W2", None
    if cls == "w0":
        return "W0", None
    return "W1", cls


def layout_for(tables: Tables, word: int) -> Layout | None:
    """The layout used to show a lone word (the first one whose fixed bits match)."""
    r, cls = role(tables, word)
    if r == "W0":
        return tables.layout(tables.raw_layout["W0"])
    return next((lay for lay in tables.layouts_for(r, cls) if lay.applies(word)), None)


def render(tables: Tables, word: int) -> str:
    """``.ace W1.tgmem.mem{...}`` (or ``.ace 0x...`` when no layout fits)."""
    layout = layout_for(tables, word)
    if layout is None:
        return f".ace {word:#010x}"
    r, cls = role(tables, word)
    name = f"{r}.{cls}.{layout.short}" if cls else f"{r}.{layout.short}"
    items = [f"{k}={v}" for k, v in layout.decode(word).items()]
    if word & layout.reserved:
        items.append(f"rsv={word & layout.reserved:#x}")
    opcode = tables.opcode_field.extract(word)
    if opcode != tables.opcodes["custom-3"]:
        items.append(f"op={next(n for n, v in tables.opcodes.items() if v == opcode)}")
    return f".ace {name}{{{', '.join(items)}}}"


def parse(tables: Tables, text: str, value: Callable[[str], int]) -> int:
    """The word ``.ace`` text stands for (``value`` evaluates a number/expression)."""
    m = _FORM.match(text)
    if m is None:
        return value(text) & 0xFFFF_FFFF
    r, a, b, body = m.groups()
    if r == "W1":
        cls, short = a, b
        if cls not in tables.tuop or cls in ("w0", "w2") or short is None:
            raise RawProblem(f"W1 words are written W1.<class>.<layout>{{...}}, not {r}.{a}")
    else:
        cls, short = r.lower(), a
        if b is not None:
            raise RawProblem(f"{r} words are written {r}.<layout>{{...}}")
    layout = tables.layouts.get(f"{r}.{short}")
    if layout is None:
        raise RawProblem(f"no layout {r}.{short} (layouts: "
                         f"{', '.join(n for n in tables.layouts if n.startswith(r))})")
    if r == "W1" and cls not in layout.classes:
        raise RawProblem(f"layout {layout.name} is not one of class {cls}")
    values: dict[str, int] = {}
    extra = 0
    opcode = tables.opcodes["custom-3"]
    for item in filter(None, (i.strip() for i in body.split(","))):
        key, eq, val = item.partition("=")
        key = key.strip()
        if not eq:
            raise RawProblem(f"expected field=value, not {item!r}")
        if key == "op":
            if val.strip() not in tables.opcodes:
                raise RawProblem(f"unknown opcode {val.strip()!r} (one of {', '.join(tables.opcodes)})")
            opcode = tables.opcodes[val.strip()]
            continue
        v = value(val.strip())
        if key == "rsv":
            if v & ~layout.reserved:
                raise RawProblem(f"rsv={v:#x} names bits that are not reserved in {layout.name}")
            extra = v
            continue
        try:
            field = layout.field(key)
        except KeyError:
            raise RawProblem(f"layout {layout.name} has no field {key!r} (fields: "
                             f"{', '.join(f.name for f in layout.fields)})") from None
        if not 0 <= v < 1 << field.width:
            raise RawProblem(f"{key}={v} does not fit {field.width} bits")
        values[key] = v
    base = tables.tuop_field.insert(tables.opcode_field.insert(0, opcode), tables.tuop[cls])
    return layout.encode(values, base) | extra
