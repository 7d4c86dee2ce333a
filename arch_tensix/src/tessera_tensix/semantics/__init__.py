"""Semantic functions of the Tensix instructions, registered by vendor mnemonic.

Each module registers its functions with :func:`op` under the vendor's instruction
name (``SFPMAD``, ``SFPLOAD``, ``ADDDMAREG`` …); the encoding tables look them up by
the same name, so tables and semantics grow separately.  Signature:
``fn(thread, ins) -> None`` (Tensix threads never branch).
"""

from __future__ import annotations

from tessera.isa.registry import SemanticsRegistry

REGISTRY = SemanticsRegistry(__name__, __path__)
#: decorator: ``@op("name")`` registers a semantic function
op = REGISTRY.op


def load_all() -> SemanticsRegistry:
    """Import every semantics module (they register themselves) and return the registry."""
    return REGISTRY.load_all()
