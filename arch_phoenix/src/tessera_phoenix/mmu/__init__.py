"""Memory management: TLB, page-table walks, PMA table (spec section 5).

``install(machine, shared)`` puts the MMU (``shared.mmu``) and the PMA checker
(``shared.pma``) on the shared state and maps the PMA register window.  The
thread views (:mod:`tessera_phoenix.view`) call them on every access.

Modules: :mod:`.tlb` (entries, lookup, replacement), :mod:`.walk` (hierarchical
and hashed walks), :mod:`.hashing` (PTG hash and small-PTE rules), :mod:`.ptbr`
(PTBR fields), :mod:`.unit` (the MMU: translation, faults, flushes), :mod:`.pma`
(region table and check) and :mod:`.pmaio` (its register window).
"""

from __future__ import annotations

from typing import Any

from tessera_phoenix.mmu.pma import PMA
from tessera_phoenix.mmu.pmaio import WINDOW_BASE, WINDOW_SIZE, PMAWindow
from tessera_phoenix.mmu.unit import MMU

__all__ = ["MMU", "PMA", "PMAWindow", "install"]


def install(machine: Any, shared: Any) -> None:
    """Create the MMU and PMA table for one core and map the PMA registers.

    The test-bench memory (``memory=testbench``) has no PMA table and no register
    window, and page-table walks read it through its aliasing like every access.
    """
    if shared.config.memory == "testbench":
        from tessera_phoenix.testbench import FoldedReads

        shared.mmu = MMU(shared, FoldedReads(machine.space))
        shared.pma = PMA(enabled=False)
        return
    shared.mmu = MMU(shared, machine.space)
    shared.pma = PMA(enabled=bool(shared.config.pma))
    machine.space.add_mmio("pma", WINDOW_BASE, WINDOW_SIZE, PMAWindow(shared.pma, shared))
