"""The encoding and code tables (``data/encoding.toml``, ``data/codes.toml``), loaded once.

The tables are the only place that knows bit positions and code values: the sequencer,
the executors, the assembler and the disassembler ask a :class:`Tables` object by name
(``tables.layout("W1.mem")``, ``tables.code("atomic", "add")``).  That is what lets the
real SiOrigin encoding replace ours without a code change (tile.md, preamble): a machine
may even merge a file of overrides over the built-in tables (``tile.tables``).

A :class:`Layout` is one word format: the bits that must hold fixed values for it to
apply, its named fields, and — everything else in the ACE payload — its reserved bits.
An :class:`OpForm` is one operation: a word sequence with a layout per word and field
patterns that select it.
"""

from __future__ import annotations

import copy
import functools
import tomllib
from collections.abc import Iterable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import attrs

from tessera.errors import ConfigError
from tessera.isa import Field

WORDS = ("W2", "W1", "W0")


def bitfield(name: str, spec: str) -> Field:
    """A :class:`tessera.isa.Field` (unsigned) for a ``"hi:lo,hi:lo"`` bit spec."""
    pieces = []
    for part in str(spec).split(","):
        hi, _, lo = part.strip().partition(":")
        pieces.append((int(hi), int(lo or hi)))
    return Field(name, tuple(pieces), kind="uimm")


def pattern_matches(pattern: str | list[str], value: int, width: int) -> bool:
    """Does ``value`` (``width`` bits) match a binary pattern such as ``"1xxxxx"`` (or any of a list)?"""
    if isinstance(pattern, list):
        return any(pattern_matches(p, value, width) for p in pattern)
    bits = format(value, f"0{width}b")
    if len(pattern) != width:
        raise ConfigError(f"tile tables: pattern {pattern!r} has {len(pattern)} bits, the field {width}")
    return all(p in "xX" or p == b for p, b in zip(pattern, bits))


def pattern_value(pattern: str | list[str]) -> int:
    """The value a pattern asks for, don't-care bits as 0 (what the assembler writes)."""
    if isinstance(pattern, list):
        pattern = pattern[0]
    return int(pattern.replace("x", "0").replace("X", "0"), 2)


@attrs.frozen
class Layout:
    """One word format: fixed bits, named fields, reserved bits (tile.md 4-5)."""

    name: str
    word: str
    classes: tuple[str, ...]
    fixed: tuple[tuple[str, Field, int], ...]
    fields: tuple[Field, ...]
    regs: Mapping[str, str]
    reserved: int
    source: str = ""

    @property
    def short(self) -> str:
        return self.name.split(".", 1)[1]

    def field(self, name: str) -> Field:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(f"layout {self.name} has no field {name!r}")

    def applies(self, word: int) -> bool:
        """Do the fixed bits of ``word`` match this layout?"""
        return all(f.extract(word) == value for _, f, value in self.fixed)

    def decode(self, word: int) -> dict[str, int]:
        return {f.name: f.extract(word) for f in self.fields}

    def encode(self, values: Mapping[str, int], base: int = 0) -> int:
        """``base`` (opcode and tuop) with the fixed bits and the given field values."""
        word = base
        for _, f, value in self.fixed:
            word = f.insert(word, value)
        for f in self.fields:
            if f.name in values:
                word = f.insert(word, values[f.name])
        return word


@attrs.frozen
class OpForm:
    """One operation: words, a layout per word, selecting patterns, executor and params."""

    name: str
    kind: str
    cls: str | None
    layouts: Mapping[str, Layout]
    match: tuple[tuple[str, str, Any], ...]
    params: Mapping[str, Any]
    placeholder: bool = False
    words: tuple[str, ...] = ()          # the roles of its words, in order (filled by Tables)

    def matches(self, words: Mapping[str, int]) -> bool:
        for w, layout in self.layouts.items():
            if not layout.applies(words[w]):
                return False
        for w, fname, pattern in self.match:
            f = self.layouts[w].field(fname)
            if not pattern_matches(pattern, f.extract(words[w]), f.width):
                return False
        return True


def _deep_merge(base: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in extra.items():
        if isinstance(v, Mapping) and isinstance(out.get(k), dict):
            out[k] = _deep_merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def _read_data(name: str) -> dict[str, Any]:
    return tomllib.loads(resources.files("tessera_tile").joinpath("data", name).read_text(encoding="utf-8"))


class Tables:
    """The encoding and code tables of one configuration (built-in, or with overrides)."""

    def __init__(self, encoding: Mapping[str, Any], codes: Mapping[str, Any]) -> None:
        self.raw_encoding = encoding
        self.raw_codes = codes
        word = encoding["word"]
        self.tuop_field = bitfield("tuop", word["tuop"])
        self.opcode_field = bitfield("opcode", word["opcode"])
        self.payload_field = bitfield("payload", word["payload"])
        self.payload_mask = self.payload_field.field_mask
        self.opcodes: dict[str, int] = dict(encoding["opcodes"])
        self.tuop: dict[str, int] = dict(encoding["tuop"])
        self.class_of_tuop = {v: k for k, v in self.tuop.items()}
        if len(self.class_of_tuop) != len(self.tuop):
            raise ConfigError("tile tables: two classes share a tuop value")
        self.lone_classes = frozenset(encoding["classes"]["lone"])
        self.layouts: dict[str, Layout] = {}
        for name, spec in encoding["layouts"].items():
            self.layouts[name] = self._layout(name, spec)
        self.raw_layout = dict(encoding.get("raw", {}))
        self.ops: list[OpForm] = [self._op(spec) for spec in encoding["ops"]]
        self.op_named = {op.name: op for op in self.ops}
        self._by_sequence: dict[tuple[tuple[str, ...], str | None], list[OpForm]] = {}
        for op in self.ops:
            self._by_sequence.setdefault((op.words, op.cls), []).append(op)
        self.codes = codes

    # ------------------------------------------------------------------ building
    def _layout(self, name: str, spec: Mapping[str, Any]) -> Layout:
        word = spec["word"]
        if word not in WORDS:
            raise ConfigError(f"tile tables: layout {name} has word {word!r}, not one of {WORDS}")
        fixed = tuple((k, bitfield(k, v[0]), int(v[1])) for k, v in spec.get("fixed", {}).items())
        fields = tuple(bitfield(k, v) for k, v in spec.get("fields", {}).items())
        used = 0
        for f in (*(f for _, f, _ in fixed), *fields):
            if used & f.field_mask:
                raise ConfigError(f"tile tables: layout {name}: field {f.name} overlaps another field")
            used |= f.field_mask
        if used & ~self.payload_mask:
            raise ConfigError(f"tile tables: layout {name} uses bits outside the ACE payload")
        classes = tuple(spec.get("classes", ()))
        for c in classes:
            if c not in self.tuop:
                raise ConfigError(f"tile tables: layout {name} names unknown class {c!r}")
        return Layout(name, word, classes, fixed, fields, dict(spec.get("regs", {})),
                      self.payload_mask & ~used, spec.get("source", ""))

    def _op(self, spec: Mapping[str, Any]) -> OpForm:
        name = spec["name"]
        layouts = {}
        for w in WORDS:
            if w in spec:
                layout = self.layouts.get(spec[w])
                if layout is None or layout.word != w:
                    raise ConfigError(f"tile tables: operation {name}: {w} layout {spec[w]!r} is not a {w} layout")
                layouts[w] = layout
        cls = spec.get("class")
        if "W1" in layouts and cls not in layouts["W1"].classes:
            raise ConfigError(f"tile tables: operation {name}: class {cls!r} is not one of its W1 layout's")
        match = []
        for key, pattern in spec.get("match", {}).items():
            w, _, fname = key.partition(".")
            if w not in layouts:
                raise ConfigError(f"tile tables: operation {name} matches on {key} but has no {w}")
            width = layouts[w].field(fname).width
            for p in pattern if isinstance(pattern, list) else [pattern]:
                if len(p) != width:
                    raise ConfigError(f"tile tables: operation {name}: pattern {p!r} for {key} "
                                      f"is not {width} bits")
            match.append((w, fname, pattern))
        return OpForm(name, spec["kind"], cls, layouts, tuple(match), dict(spec.get("params", {})),
                      bool(spec.get("placeholder", False)), tuple(w for w in WORDS if w in layouts))

    # ------------------------------------------------------------------ queries
    def layout(self, name: str) -> Layout:
        return self.layouts[name]

    def table(self, name: str) -> dict[str, Any]:
        """A code table by name (``"atomic"``, ``"mmauop"``, ``"func6_gpr"`` ...)."""
        return self.codes[name]

    def code(self, table: str, name: str) -> int:
        value = self.codes[table][name]
        return int(value["code"] if isinstance(value, Mapping) else value)

    def name_of(self, table: str, code: int) -> str | None:
        """The name whose code is ``code`` in a flat table, or ``None``."""
        for name, value in self.codes[table].items():
            v = value["code"] if isinstance(value, Mapping) else value
            if v == code:
                return name
        return None

    def csr_map(self) -> dict[str, dict[str, Any]]:
        return self.codes["csr"]

    def ops_for(self, words: Iterable[str], cls: str | None) -> list[OpForm]:
        return self._by_sequence.get((tuple(words), cls), [])

    def layouts_for(self, word: str, cls: str | None = None) -> list[Layout]:
        return [lay for lay in self.layouts.values()
                if lay.word == word and (cls is None or cls in lay.classes)]

    def identify(self, words: Mapping[str, int]) -> OpForm | None:
        """The operation a complete sequence (``{"W1": w1, "W0": w0}`` ...) is, or ``None``."""
        cls = self.class_of_tuop[self.tuop_of(words["W1"])] if "W1" in words else None
        return next((f for f in self.ops_for([w for w in WORDS if w in words], cls) if f.matches(words)),
                    None)

    def tuop_of(self, word: int) -> int:
        return self.tuop_field.extract(word)

    def with_overrides(self, encoding: Mapping[str, Any] | None = None,
                       codes: Mapping[str, Any] | None = None) -> Tables:
        """A copy with ``encoding``/``codes`` deep-merged over these tables."""
        enc = _deep_merge(dict(self.raw_encoding), encoding or {})
        cod = _deep_merge(dict(self.raw_codes), codes or {})
        return Tables(enc, cod)


@functools.cache
def builtin() -> Tables:
    """The tables shipped with the plugin (what the architecture and assembler use)."""
    return Tables(_read_data("encoding.toml"), _read_data("codes.toml"))


def load_overrides(path: str) -> Tables:
    """The built-in tables with a TOML file merged over them.

    The file may have ``[encoding]`` and ``[codes]`` sections (each shaped like the
    built-in file of that name).
    """
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"tile.tables: cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:  # a binary file, or text in another encoding
        raise ConfigError(f"tile.tables: {path} is not a UTF-8 text (TOML) file: byte {exc.object[exc.start]:#04x} "
                          f"at offset {exc.start} is not UTF-8") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"tile.tables: {path} is not TOML: {exc}") from None
    unknown = set(data) - {"encoding", "codes"}
    if unknown:
        raise ConfigError(f"tile.tables: {path} has unknown section(s) {', '.join(sorted(unknown))} "
                          "(use [encoding] and [codes])")
    return builtin().with_overrides(data.get("encoding"), data.get("codes"))
