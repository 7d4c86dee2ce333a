"""Semantic functions of the Tensix instructions, registered by vendor mnemonic.

Each module registers its functions with :func:`op` under the vendor's instruction
name (``SFPMAD``, ``SFPLOAD``, ``ADDDMAREG`` …); the encoding tables look them up by
the same name, so tables and semantics grow separately.  Signature:
``fn(thread, ins) -> None`` (Tensix threads never branch).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

REGISTRY: dict[str, Callable[[Any, Any], Any]] = {}


def op(*names: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a semantic function under one or more instruction names."""

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
        importlib.import_module(f"{__name__}.{info.name}")
    return REGISTRY
