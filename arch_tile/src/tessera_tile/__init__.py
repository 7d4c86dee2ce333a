"""Tessera architecture plugin: a RISC-V RV64IM host driving a tile coprocessor through ACE words.

``TILE`` is the architecture record (imported lazily: ``tessera_tile.numerics`` can be used
without building it); see ``docs/tile.md``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["TILE", "make_tile_arch"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from tessera_tile import arch

        return getattr(arch, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
