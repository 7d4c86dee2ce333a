"""Parameter types shared by the commands: addresses, sizes, seconds, key=value settings.

Numbers and sizes use the one syntax of :mod:`tessera.settings` (``0x1000``, ``64K``,
``2G``, ``1T``), so ``--memory-cap 2G`` and ``--set ram=2G`` read alike.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import click

from tessera.settings import Settings, guess_value, parse_int, parse_size

__all__ = ["ADDRESS", "SECONDS", "SIZE", "Address", "Seconds", "Size", "parse_int", "parse_settings"]


class Address(click.ParamType):
    """An address: decimal, 0x hex, 0o octal or 0b binary."""

    name = "ADDR"

    def convert(self, value: Any, param: Any, ctx: Any) -> int:
        if isinstance(value, int):
            return value
        try:
            out = parse_int(str(value))
        except ValueError:
            self.fail(f"{value!r} is not an address (use e.g. 0x1000)", param, ctx)
        if out < 0:
            self.fail(f"{value!r} is negative", param, ctx)
        return out


class Size(click.ParamType):
    """A byte size: ``4096``, ``0x1000``, ``64K``, ``256M``, ``2G``, ``1T``."""

    name = "SIZE"

    def convert(self, value: Any, param: Any, ctx: Any) -> int:
        if isinstance(value, int):
            return value
        try:
            out = parse_size(str(value))
        except ValueError:
            self.fail(f"{value!r} is not a size (use e.g. 256M)", param, ctx)
        if out <= 0:
            self.fail(f"{value!r} must be positive", param, ctx)
        return out


class Seconds(click.ParamType):
    """A duration in seconds: a finite number above 0 (``nan``, ``inf`` and ``0`` are refused)."""

    name = "SECONDS"

    def convert(self, value: Any, param: Any, ctx: Any) -> float:
        try:
            out = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number of seconds", param, ctx)
        if not math.isfinite(out) or out <= 0:
            self.fail(f"{value!r} must be a finite number of seconds above 0", param, ctx)
        return out


def parse_settings(items: tuple[str, ...], declared: Settings | None = None,
                   tools: Sequence[Settings] = ()) -> dict[str, Any]:
    """``--set key=value`` pairs.

    A key the architecture (``declared``) or a tool plugin (``tools``) declares keeps
    its text: the declaration converts it (so a file name ``0x10`` or a text ``on``
    stays what was typed).  For other keys, values that look like ints/bools become them.
    """
    out: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{item!r} is not KEY=VALUE", param_hint="--set")
        if any(t.declares(key) for t in tools) or (declared is not None and declared.declares(key)):
            out[key] = raw
            continue
        out[key] = guess_value(raw)
    return out


ADDRESS = Address()
SIZE = Size()
SECONDS = Seconds()
