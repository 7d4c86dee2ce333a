"""Memory management: TLB, page tables, PMA table (spec section 5).

``install(machine, shared)`` puts the MMU and the PMA checker on the shared state.
"""

from __future__ import annotations

from typing import Any


def install(machine: Any, shared: Any) -> None:
    shared.mmu = None
    shared.pma = None
