"""What the cycle models' parameters share: validators and the cache parameters' meanings.

Each model declares its parameters as an attrs record (``InOrderParams``, ``BarrelParams``)
whose validators raise a one-line ``ValueError`` naming the parameter — the plugin turns
it into a configuration error — and a ``PARAM_DOCS`` dict the listing command shows;
both models time I and D caches, described here once.
"""

from __future__ import annotations

from typing import Any, TypeVar

import attrs

from tessera.errors import ConfigError

__all__ = ["CACHE_DOCS", "boolean", "check_geometry", "non_negative", "parse", "positive", "power_of_two"]

#: the cache parameters both models take (``tessera cycles list`` shows them)
CACHE_DOCS: dict[str, str] = {
    "icache_size": "instruction cache size in bytes (power of two)",
    "icache_ways": "instruction cache associativity (power of two)",
    "icache_line": "instruction cache line size in bytes (power of two)",
    "dcache_size": "data cache size in bytes (power of two)",
    "dcache_ways": "data cache associativity (power of two)",
    "dcache_line": "data cache line size in bytes (power of two)",
    "miss_penalty": "stall cycles per cache line missed (both caches)",
    "caches": "model the caches; false = perfect memory, no cache stalls",
}


def non_negative(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{attribute.name} must be a non-negative integer, got {value!r}")


def positive(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{attribute.name} must be a positive integer, got {value!r}")


def power_of_two(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0 or value & (value - 1):
        raise ValueError(f"{attribute.name} must be a positive power of two, got {value!r}")


def boolean(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, bool):
        raise ValueError(f"{attribute.name} must be true or false, got {value!r}")


def check_geometry(params: Any) -> None:
    """Each cache's size must hold whole sets (``size % (ways * line) == 0``): the geometry
    only makes sense as a whole, so it is checked after the fields one by one."""
    for cache in ("icache", "dcache"):
        size, ways, line = (getattr(params, f"{cache}_{part}") for part in ("size", "ways", "line"))
        if size % (ways * line):
            raise ValueError(f"{cache}_size {size} is not a multiple of "
                             f"{cache}_ways * {cache}_line = {ways * line}")


P = TypeVar("P")


def parse(record: type[P], params: dict[str, Any]) -> P:
    """The model's parameter record built from the ``cycles.*`` settings, or a one-line
    configuration error: an unknown name (``TypeError``) or a value a validator refuses
    (``ValueError``) is the user's mistake, not the model's, so it must not surface as a
    traceback."""
    try:
        return record(**params)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"cycles: {exc}") from None
