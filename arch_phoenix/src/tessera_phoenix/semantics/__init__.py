"""Semantic functions of rfPhoenix, one plain function per operation.

Each module registers its functions by canonical name with :func:`op`; the encoding
table (:mod:`tessera_phoenix.encoding`) names them with ``REGISTRY.ref(name)``, so the
table and the semantics can be read (and grown) separately, and the engine binds each
name when it decodes a word (``tessera.isa.SemanticsRegistry``).  Signature:
``fn(thread, ins) -> next_pc | None``.
"""

from __future__ import annotations

from tessera.isa import SemanticsRegistry

REGISTRY = SemanticsRegistry(__name__, __path__, skip=('lanes',))
#: decorator: ``@op("name")`` registers a semantic function
op = REGISTRY.op


def load_all() -> SemanticsRegistry:
    """Import every semantics module (they register themselves) and return the registry."""
    return REGISTRY.load_all()
