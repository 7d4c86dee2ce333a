"""Semantic functions of rfPhoenix, one plain function per operation.

Each module registers its functions by canonical name with :func:`op`; the encoding
table (:mod:`tessera_phoenix.encoding`) looks them up by the same name, so the table
and the semantics can be read (and grown) separately.  Signature:
``fn(thread, ins) -> next_pc | None``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

REGISTRY: dict[str, Callable[[Any, Any], Any]] = {}


def op(*names: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a semantic function under one or more operation names."""

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        for name in names:
            if name in REGISTRY:
                raise ValueError(f"semantics for {name!r} defined twice")
            REGISTRY[name] = fn
        return fn

    return deco


def load_all() -> dict[str, Callable[[Any, Any], Any]]:
    """Import every semantics module (they register themselves) and return the registry."""
    import importlib
    import pkgutil

    for info in pkgutil.iter_modules(__path__):
        if info.name != "lanes":
            importlib.import_module(f"{__name__}.{info.name}")
    return REGISTRY
