"""Semantic functions of the Tensix instructions, registered by vendor mnemonic.

Each module registers its functions with :func:`op` under the vendor's instruction
name (``SFPMAD``, ``SFPLOAD``, ``ADDDMAREG`` …); the encoding tables look them up by
the same name, so tables and semantics grow separately.  Signature:
``fn(thread, ins) -> None`` (Tensix threads never branch).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tessera.isa import SemanticsRegistry
from tessera.semantics import no_inline

REGISTRY = SemanticsRegistry(__name__, __path__)


def op(*names: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: ``@op("name")`` registers a semantic function.

    The fast engine's blocks *call* Tensix semantic functions rather than inline them
    (:func:`tessera.semantics.no_inline`): their time goes into numpy and numba
    kernels, so inlining would save one call and cost milliseconds of translation.
    """
    register = REGISTRY.op(*names)

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        return register(no_inline(fn))

    return deco


def load_all() -> SemanticsRegistry:
    """Import every semantics module (they register themselves) and return the registry."""
    return REGISTRY.load_all()
