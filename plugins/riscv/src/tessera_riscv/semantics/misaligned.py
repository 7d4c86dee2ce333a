"""Instruction-address-misaligned traps (mcause 0): the variants ``refine`` installs.

Without the C extension every instruction address is a multiple of 4.  ``jalr``
checks its computed target itself; everything else is known when the instruction is
decoded, so :func:`tessera_riscv.encoding.refine` installs one of these instead of
the row's function, through the variants the rows declare (``misaligned-fetch`` on
every row, ``misaligned-target`` on ``jal`` and the branches).  Nothing here depends
on XLEN.
"""

from __future__ import annotations

from typing import Any

from tessera_riscv import traps
from tessera_riscv.semantics import REGISTRY

op = REGISTRY.op


@op("misaligned_fetch")
def misaligned_fetch(h: Any, ins: Any) -> None:
    """A word fetched from an address that is not 4-byte aligned (any row's ``misaligned-fetch``)."""
    raise traps.trap(traps.INSTRUCTION_MISALIGNED, ins.address)


@op("misaligned_jump")
def misaligned_jump(h: Any, ins: Any) -> None:
    """``jal`` to a target that is not 4-byte aligned: the trap is reported on the jump."""
    raise traps.trap(traps.INSTRUCTION_MISALIGNED, ins.target)


@op("misaligned_branch")
def misaligned_branch(h: Any, ins: Any) -> Any:
    """A branch whose target is misaligned traps only when taken (``ins.taken``: the row's function)."""
    if ins.taken(h, ins) is not None:
        raise traps.trap(traps.INSTRUCTION_MISALIGNED, ins.target)
    return None
