"""Declared machine settings: what ``--set KEY=VALUE`` and ``Machine(config=...)`` may say.

An architecture declares its settings in ``Architecture.settings``: one :class:`Setting`
per key (name, kind, default, range or choices, help) and, for keys whose names are
not known in advance, a :class:`SettingFamily` (Tensix ``cfg.NAME``, whose names come
from a register map; ``acc.*``, owned by a RISC-V extension).  The core checks a
machine's configuration against that declaration before the board is built, so a
typo, a value of the wrong kind or one out of range is a one-line
:class:`~tessera.errors.ConfigError` (exit status 64) — never a silently different
machine, and never a run that hangs building a million agents.  ``tessera archs
--settings`` lists every declaration, so users can discover them.

One syntax for numbers everywhere, in settings and in command-line options alike:
integers are decimal, ``0x`` hex, ``0o`` octal or ``0b`` binary with optional ``_``
separators; sizes are integers with an optional ``K``, ``M``, ``G`` or ``T`` suffix
(powers of 1024; ``KB``/``KiB`` spellings too).
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs

from tessera.errors import ConfigError

__all__ = ["KINDS", "Setting", "SettingFamily", "Settings", "setting", "parse_int", "guess_value", "parse_size",
           "format_size"]

#: The kinds of value a setting takes.
KINDS = ("int", "size", "bool", "choice", "str", "path")

_SIZE_SUFFIX = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_TRUE = ("true", "yes", "on", "1")
_FALSE = ("false", "no", "off", "0")
_META = "tessera_setting"
#: Above this many keys an "unknown setting" message points at the listing instead.
_LIST_AT_MOST = 24


# ---------------------------------------------------------------------- number syntax

def parse_int(text: str) -> int:
    """An integer: decimal, ``0x``/``0o``/``0b``, ``_`` separators; :class:`ValueError` else."""
    return int(str(text).strip().replace("_", ""), 0)


def guess_value(text: str) -> Any:
    """A setting's text as ``--set`` reads it for a key no architecture declares: ``true``/
    ``yes``/``on`` and ``false``/``no``/``off`` become booleans, an integer (any base) an
    int, anything else stays text (a declared key's own declaration converts its text)."""
    low = text.lower()
    if low in ("true", "yes", "on"):
        return True
    if low in ("false", "no", "off"):
        return False
    try:
        return parse_int(text)
    except ValueError:
        return text


def parse_size(text: str) -> int:
    """A byte count: an integer with an optional ``K``/``M``/``G``/``T`` (1024-based) suffix.

    ``4096``, ``0x1000``, ``64K``, ``256M``, ``2GiB``, ``1T``; :class:`ValueError` if none of these.
    """
    low = str(text).strip().lower()
    try:
        return parse_int(low)  # first, so that hex digits (0x1b) are never read as a unit
    except ValueError:
        pass
    if low.endswith("ib") and low[-3:-2] in tuple(_SIZE_SUFFIX):
        low = low[:-2]
    elif low.endswith("b"):
        low = low[:-1]
    mult = 1
    if low[-1:] in _SIZE_SUFFIX:
        low, mult = low[:-1], _SIZE_SUFFIX[low[-1]]
    return parse_int(low) * mult


def format_size(n: int) -> str:
    """``n`` bytes in the size syntax, exactly (``4G``, ``256M``, ``0x1234``)."""
    for suffix, mult in (("T", 1 << 40), ("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n and n % mult == 0:
            return f"{n // mult}{suffix}"
    return str(n) if n < 1 << 16 else f"{n:#x}"


def _format_int(n: int) -> str:
    """Decimal, except for large masks and powers of two (``0xffffffff``, ``0x10000000``)."""
    if n >= 1 << 16 and (n & (n + 1) == 0 or n & (n - 1) == 0):
        return f"{n:#x}"
    return str(n)


# ---------------------------------------------------------------------- one setting

def _check_kind(instance: Any, attribute: Any, value: str) -> None:
    if value not in KINDS:
        raise ConfigError(f"setting {instance.name!r}: unknown kind {value!r} (use {', '.join(KINDS)})")


def _as_tuple(values: Iterable[Any]) -> tuple[Any, ...]:
    """A typed ``tuple`` converter (type checkers see what the attribute takes)."""
    return tuple(values)


def _as_settings(values: Iterable[Setting]) -> tuple[Setting, ...]:
    return tuple(values)


@attrs.frozen
class Setting:
    """One configuration key of an architecture.

    ``kind`` is ``int``, ``size`` (bytes, ``64M``), ``bool``, ``choice`` (one of
    ``choices``: strings matched case-insensitively, or integers), ``str`` or ``path``
    (a file name).  ``min``/``max`` bound ``int`` and ``size`` values (inclusive);
    ``note`` says where the bound comes from and is shown when a value is refused.
    A ``default`` of ``None`` means "not set" (the plugin then derives a value).
    """

    name: str
    kind: str = attrs.field(validator=_check_kind)
    default: Any = None
    min: int | None = None
    max: int | None = None
    choices: tuple[Any, ...] = attrs.field(default=(), converter=_as_tuple)
    help: str = ""
    note: str = ""

    def __attrs_post_init__(self) -> None:
        if not self.name or any(c.isspace() or c == "=" for c in self.name):
            raise ConfigError(f"setting name {self.name!r} must be non-empty, without blanks or '='")
        if self.kind == "choice" and not self.choices:
            raise ConfigError(f"setting {self.name!r}: a choice needs choices")
        if self.kind != "choice" and self.choices:
            raise ConfigError(f"setting {self.name!r}: only a choice has choices")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ConfigError(f"setting {self.name!r}: min {self.min} is above max {self.max}")
        if self.default is not None:  # a declaration whose own default is refused is a plugin bug
            self.convert(self.default, label="default of")

    @property
    def range_text(self) -> str:
        """The accepted values in words: ``1..3``, ``16..4G``, ``allow | trap``, ``true/false``."""
        if self.kind == "bool":
            return "true/false"
        if self.kind == "choice":
            return " | ".join(str(c) for c in self.choices)
        if self.kind in ("int", "size"):
            fmt = format_size if self.kind == "size" else _format_int
            lo = "" if self.min is None else fmt(self.min)
            hi = "" if self.max is None else fmt(self.max)
            if not lo and not hi:
                return "any"
            if not hi:
                return f"at least {lo}"
            if not lo:
                return f"at most {hi}"
            return f"{lo}..{hi}"
        return "text" if self.kind == "str" else "a file name"

    @property
    def default_text(self) -> str:
        if self.default is None:
            return "-"
        if isinstance(self.default, bool):
            return str(self.default).lower()
        if self.kind == "size":
            return format_size(self.default)
        if self.kind == "int":
            return _format_int(self.default)
        return str(self.default) if self.default != "" else '""'

    def describe(self) -> dict[str, Any]:
        """JSON-able description (what ``tessera archs --settings --json`` prints)."""
        return {"key": self.name, "kind": self.kind, "default": self.default, "min": self.min,
                "max": self.max, "choices": list(self.choices), "range": self.range_text,
                "help": self.help, "note": self.note}

    def convert(self, value: Any, *, label: str = "") -> Any:
        """``value`` as this setting's type (command-line text or a Python value), checked.

        :class:`ConfigError` naming the setting if it is of the wrong kind or out of range.
        """
        where = f"{label} setting {self.name}".strip()
        if value is None:
            if self.default is None:
                return None
            raise ConfigError(f"{where} needs a value ({self.range_text})")
        converter = getattr(self, f"_as_{self.kind}")
        return converter(value, where)

    def _as_bool(self, value: Any, where: str) -> bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, numbers.Integral) and int(value) in (0, 1):
            return bool(value)
        if isinstance(value, str) and value.strip().lower() in _TRUE + _FALSE:
            return value.strip().lower() in _TRUE
        raise ConfigError(f"{where} must be true or false, not {value!r}")

    def _as_int(self, value: Any, where: str) -> int:
        return self._in_range(self._number(value, where, parse_int, "an integer (e.g. 42, 0x2a)"), where)

    def _as_size(self, value: Any, where: str) -> int:
        return self._in_range(self._number(value, where, parse_size,
                                           "a number of bytes (e.g. 4096, 0x1000, 64K, 256M, 2G)"), where)

    @staticmethod
    def _number(value: Any, where: str, parse: Callable[[str], int], what: str) -> int:
        if isinstance(value, numbers.Integral) and not isinstance(value, bool):
            return int(value)
        if isinstance(value, str):
            try:
                return parse(value)
            except ValueError:
                pass
        raise ConfigError(f"{where} must be {what}, not {value!r}")

    def _in_range(self, value: int, where: str) -> int:
        low_ok = self.min is None or value >= self.min
        high_ok = self.max is None or value <= self.max
        if not (low_ok and high_ok):
            shown = format_size(value) if self.kind == "size" and value > 0 else str(value)
            note = f": {self.note}" if self.note else ""
            raise ConfigError(f"{where}={shown} is out of range ({self.range_text}{note})")
        return value

    def _as_choice(self, value: Any, where: str) -> Any:
        if all(isinstance(c, bool) for c in self.choices):
            try:
                flag = self._as_bool(value, where)
            except ConfigError:
                flag = None
            if flag in self.choices:
                return flag
        elif all(isinstance(c, int) for c in self.choices):
            try:
                number = self._number(value, where, parse_int, "an integer")
            except ConfigError:
                number = None
            if number in self.choices:
                return number
        else:
            text = str(value).strip().lower()  # True from a Python caller reads as "true"
            for choice in self.choices:
                if str(choice).lower() == text:
                    return choice
        if len(self.choices) == 1:
            raise ConfigError(f"{where}={value!r}: only {self.choices[0]!r} is implemented"
                              + (f" ({self.help})" if self.help else ""))
        raise ConfigError(f"{where} must be one of {', '.join(str(c) for c in self.choices)}, "
                          f"not {value!r}")

    def _as_str(self, value: Any, where: str) -> str:
        if not isinstance(value, str):
            raise ConfigError(f"{where} must be text, not {value!r}")
        return value.strip()

    def _as_path(self, value: Any, where: str) -> str:
        if isinstance(value, os.PathLike):
            value = os.fspath(value)
        if not isinstance(value, str):
            raise ConfigError(f"{where} must be a file name, not {value!r}")
        return value


# ---------------------------------------------------------------------- families of keys

@attrs.frozen
class SettingFamily:
    """Keys ``<prefix>NAME`` checked as a group.

    * ``check(key, value) -> value``: the names are open-ended or come from data (a
      register map); the function converts the value or raises a one-line
      :class:`ConfigError` (an unknown name, a value wider than its field).
    * ``settings``: a closed namespace (an extension's own declared keys, full names
      such as ``tile.vlen``); ``label`` names it in messages.
    * neither: the keys belong to someone who checks them later (a RISC-V extension
      that declared nothing); the core passes them through unchanged.

    ``help`` and ``range`` describe the family in ``tessera archs --settings``.
    """

    prefix: str
    help: str = ""
    check: Callable[[str, Any], Any] | None = None
    settings: tuple[Setting, ...] = attrs.field(default=(), converter=_as_settings)
    label: str = ""
    kind: str = "int"
    range: str = ""

    def __attrs_post_init__(self) -> None:
        if not self.prefix.endswith(".") or len(self.prefix) < 2:
            raise ConfigError(f"setting family prefix {self.prefix!r} must end with '.' (e.g. 'cfg.')")
        for s in self.settings:
            if not s.name.startswith(self.prefix):
                raise ConfigError(f"setting {s.name!r} of family {self.prefix}* must start with {self.prefix!r}")

    @property
    def closed(self) -> bool:
        return bool(self.settings)

    def describe(self) -> dict[str, Any]:
        return {"key": f"{self.prefix}NAME", "kind": self.kind if self.check else "any",
                "default": None, "min": None, "max": None, "choices": [],
                "range": self.range or ("checked by its owner" if self.check is None else ""),
                "help": self.help, "note": ""}


def _settings_tuple(items: Iterable[Setting]) -> tuple[Setting, ...]:
    return tuple(items)


def _families_tuple(items: Iterable[SettingFamily]) -> tuple[SettingFamily, ...]:
    return tuple(items)


@attrs.frozen
class Settings:
    """Everything an architecture may be configured with.

    ``label`` names the architecture in messages (``unknown RISC-V setting(s): …``);
    empty means the architecture's name.
    """

    items: tuple[Setting, ...] = attrs.field(default=(), converter=_settings_tuple)
    families: tuple[SettingFamily, ...] = attrs.field(default=(), converter=_families_tuple)
    label: str = ""
    #: the command that lists these keys, for messages (default: ``tessera archs --settings``;
    #: a tool's own listing, such as ``tessera cycles list``)
    listing: str = ""

    def __attrs_post_init__(self) -> None:
        seen: set[str] = set()
        for s in self.all_settings():
            if s.name in seen:
                raise ConfigError(f"setting {s.name!r} is declared twice")
            seen.add(s.name)
        prefixes = [f.prefix for f in self.families]
        if len(set(prefixes)) != len(prefixes):
            raise ConfigError(f"a setting family is declared twice ({', '.join(prefixes)})")
        for s in self.items:
            if any(s.name.startswith(p) for p in prefixes):
                raise ConfigError(f"setting {s.name!r} lies inside a family; declare it there")

    # ---------------------------------------------------------------- building

    @classmethod
    def from_attrs(cls, config_class: type, *, label: str = "",
                   families: Iterable[SettingFamily] = (), **changes: Mapping[str, Any]) -> Settings:
        """The settings an ``attrs`` configuration class declares with :func:`setting` fields.

        A plain field (``x: int = 3``) is a setting too, its kind taken from its default
        (``bool``, ``int`` or ``str``).  ``changes`` adjust a setting by name, e.g.
        ``ram={"max": 1 << xlen}`` where a bound depends on the architecture variant.
        """
        items = []
        for f in attrs.fields(config_class):
            meta = dict(f.metadata.get(_META, {}))
            default = f.default
            kind = meta.pop("kind", None) or ("choice" if meta.get("choices") else
                                              _infer_kind(config_class, f.name, default))
            meta.update(changes.get(f.name, {}))
            items.append(Setting(f.name, kind, default, **meta))
        unknown = set(changes) - {s.name for s in items}
        if unknown:
            raise ConfigError(f"{config_class.__name__} has no setting(s) {', '.join(sorted(unknown))}")
        return cls(items, families, label)

    # ---------------------------------------------------------------- looking up

    def all_settings(self) -> list[Setting]:
        """Every named setting, including those of closed families."""
        return [*self.items, *(s for fam in self.families for s in fam.settings)]

    def get(self, key: str) -> Setting | None:
        for s in self.all_settings():
            if s.name == key:
                return s
        return None

    def family_of(self, key: str) -> SettingFamily | None:
        for fam in self.families:
            if key.startswith(fam.prefix):
                return fam
        return None

    def declares(self, key: str) -> bool:
        """Whether ``key`` has a declared type (so command-line text goes to it unguessed)."""
        if self.get(key) is not None:
            return True
        fam = self.family_of(key)
        return fam is not None and fam.check is not None

    def describe(self) -> list[dict[str, Any]]:
        rows = [s.describe() for s in self.items]
        for fam in self.families:
            if fam.closed:
                rows.extend(s.describe() for s in fam.settings)
            else:
                rows.append(fam.describe())
        return rows

    # ---------------------------------------------------------------- checking

    def check(self, config: Mapping[str, Any], *, label: str = "", arch: str = "") -> dict[str, Any]:
        """``config`` with every value converted and checked; unknown keys refused.

        Keys the configuration does not give keep no entry (defaults are filled by
        :meth:`resolve`).  ``label`` names the architecture in messages when the
        declaration has no label of its own; ``arch`` is its name, for the pointer to
        ``tessera archs --settings ARCH``.  Raises :class:`ConfigError` with one line.
        """
        label = self.label or label
        listing = (f"`{self.listing}`" if self.listing else
                   f"`tessera archs --settings {arch}`" if arch else "`tessera archs --settings`")
        out: dict[str, Any] = {}
        unknown: list[str] = []
        unknown_in: dict[str, list[str]] = {}
        for key, value in config.items():
            key = str(key)
            setting = self.get(key)
            fam = self.family_of(key)
            if setting is not None:
                out[key] = setting.convert(value, label=(fam.label or label) if fam else label)
            elif fam is None:
                unknown.append(key)
            elif fam.closed:
                unknown_in.setdefault(fam.prefix, []).append(key)
            elif fam.check is not None:
                out[key] = fam.check(key, value)
            else:
                out[key] = value
        if unknown:
            what = f"{label} setting(s)" if label else "setting(s)"
            raise ConfigError(f"unknown {what}: {', '.join(sorted(unknown))} "
                              f"({self._known(unknown, listing)})")
        for prefix, keys in unknown_in.items():
            fam = self.family_of(prefix)
            assert fam is not None
            names = [s.name for s in fam.settings]
            hint = _closest(keys[0], names)
            raise ConfigError(f"unknown {fam.label or prefix[:-1]} setting(s): {', '.join(sorted(keys))} "
                              f"({hint}{len(names)} keys: see {listing})")
        return out

    def resolve(self, config: Mapping[str, Any], *, label: str = "") -> dict[str, Any]:
        """Every top-level setting's value: the configuration's (checked), else its default."""
        given = self.check(config, label=label)
        return {s.name: given.get(s.name, s.default) for s in self.items}

    def _known(self, unknown: list[str], listing: str) -> str:
        names = [s.name for s in self.items]
        hint = _closest(unknown[0], names)
        listed = f"known: {', '.join(names)}" if len(names) <= _LIST_AT_MOST else \
            f"{len(names)} keys: see {listing}"
        if self.families:
            listed += "; also " + ", ".join(f"{f.prefix}NAME" for f in self.families)
        return hint + listed


def _closest(key: str, names: list[str]) -> str:
    import difflib  # only on the error path: keep it out of every command's start-up

    close = difflib.get_close_matches(key, names, n=1, cutoff=0.75)
    return f"did you mean {close[0]}? " if close else ""


def _infer_kind(owner: type, name: str, default: Any) -> str:
    if isinstance(default, bool):
        return "bool"
    if isinstance(default, int):
        return "int"
    if isinstance(default, str):
        return "str"
    raise ConfigError(f"{owner.__name__}.{name}: give the setting's kind (its default {default!r} "
                      "does not say)")


def setting(default: Any, kind: str | None = None, *, min: int | None = None,
            max: int | None = None, choices: Iterable[Any] = (), help: str = "",
            note: str = "") -> Any:
    """An ``attrs`` field that is also a declared :class:`Setting` (see :meth:`Settings.from_attrs`).

    ``threads: int = setting(4, min=1, max=16, help="hardware threads")``; the kind is
    taken from the default unless given (``kind="size"``, ``kind="choice"`` …).
    """
    meta = {"kind": kind, "min": min, "max": max, "choices": tuple(choices), "help": help, "note": note}
    return attrs.field(default=default, metadata={_META: meta})


def check_config(arch: Any, config: Mapping[str, Any] | None) -> dict[str, Any]:
    """The configuration a machine of ``arch`` is built with, checked against its declaration.

    An architecture that declares no settings (``settings=None``) gets ``config``
    unchanged: its board checks what it reads.
    """
    config = dict(config or {})
    declared = getattr(arch, "settings", None)
    if declared is None:
        return config
    name = getattr(arch, "name", "")
    return declared.check(config, label=name, arch=name)


def split_tool_config(config: Mapping[str, Any] | None,
                      tools: Sequence[Settings]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(tool keys checked, the rest)`` of a machine's configuration: the keys a tool plugin
    declares (``tools``: the ``Settings`` of ``tessera_tool_settings``) checked against its
    declaration (:class:`ConfigError`: one line), the others left for the architecture."""
    rest = dict(config or {})
    checked: dict[str, Any] = {}
    for tool in tools:
        mine = {k: v for k, v in rest.items() if tool_declares(tool, str(k))}
        if mine:
            checked.update(tool.check(mine, label=tool.label))
            for key in mine:
                del rest[key]
    return checked, rest


def tool_declares(tool: Settings, key: str) -> bool:
    """Is ``key`` one of a tool's keys: a setting it names, or under one of its families' prefixes?"""
    return tool.get(key) is not None or tool.family_of(key) is not None
