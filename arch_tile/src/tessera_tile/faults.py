"""The traps tile words raise, with the rule they broke in the trap's name.

Everything goes through the RISC-V host's own trap causes (tessera_riscv.traps), so a
program with a trap handler sees an ordinary illegal instruction (mcause 2, mtval = the
word) or load/store fault (mcause 4-7, mtval = the address) at the PC of the word that
raised it.  Without a handler the run stops with one line naming the PC, the word and —
because the rule is part of the trap's name — what was wrong::

    unhandled trap: illegal instruction: W0 with nothing staged (cause 2, value 0x0000607b)
    and no handler (agent hart0, pc 0x00010004, word 0x0000607b)
"""

from __future__ import annotations

from tessera.control import Trap
from tessera_riscv import traps

ILLEGAL = traps.ILLEGAL_INSTRUCTION
LOAD_MISALIGNED = traps.LOAD_MISALIGNED
STORE_MISALIGNED = traps.STORE_MISALIGNED
LOAD_FAULT = traps.LOAD_ACCESS_FAULT
STORE_FAULT = traps.STORE_ACCESS_FAULT


def illegal(word: int, rule: str) -> Trap:
    """Illegal instruction (mtval = the word) for a tile word that breaks ``rule``."""
    return Trap(ILLEGAL, word, name=f"illegal instruction: {rule}", word=word, rule=rule)


def access(cause: int, address: int, word: int, rule: str) -> Trap:
    """A load/store misaligned or access fault of a tile operation (mtval = the address)."""
    return Trap(cause, address, name=f"{traps.CAUSE_NAMES[cause]}: {rule}", word=word, rule=rule)
