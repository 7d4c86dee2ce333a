"""Parameter types shared by the commands: addresses, sizes, key=value settings."""

from __future__ import annotations

from typing import Any

import click

_SUFFIX = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_int(text: str) -> int:
    return int(text.replace("_", ""), 0)


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
    """A byte size: ``4096``, ``0x1000``, ``64K``, ``256M``, ``2G``."""

    name = "SIZE"

    def convert(self, value: Any, param: Any, ctx: Any) -> int:
        if isinstance(value, int):
            return value
        text = str(value).strip().lower().removesuffix("b").removesuffix("i")
        mult = 1
        if text and text[-1] in _SUFFIX:
            mult, text = _SUFFIX[text[-1]], text[:-1]
        try:
            out = parse_int(text) * mult
        except ValueError:
            self.fail(f"{value!r} is not a size (use e.g. 256M)", param, ctx)
        if out <= 0:
            self.fail(f"{value!r} must be positive", param, ctx)
        return out


def parse_settings(items: tuple[str, ...]) -> dict[str, Any]:
    """``--set key=value`` pairs; values that look like ints/bools become them."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{item!r} is not KEY=VALUE", param_hint="--set")
        value: Any = raw
        low = raw.lower()
        if low in ("true", "yes", "on"):
            value = True
        elif low in ("false", "no", "off"):
            value = False
        else:
            try:
                value = parse_int(raw)
            except ValueError:
                pass
        out[key] = value
    return out


ADDRESS = Address()
SIZE = Size()
