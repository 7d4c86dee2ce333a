"""Breaking a hardware rule: stop with a clear message, or continue when lenient.

Undefined or reserved encodings, writes to read-only LRegs, predication-stack
overflow/underflow, reads of Dest rows the hardware leaves undefined: the run stops
with one line naming the instruction, its address in the kernel and the rule
(``tessera: unhandled trap: SFPPOPC: flag stack is empty … (agent t0, pc 0x…, word …)``).
With ``--set lenient=true`` the documented hardware-like behaviour is taken instead.
"""

from __future__ import annotations

from typing import Any

from tessera.control import Trap

#: the cause code of a rule violation (Tensix has no architectural traps)
RULE = 0x100


def broken(thread: Any, ins: Any, rule: str) -> bool:
    """Report breaking ``rule``; returns True (continue leniently) or raises the stop."""
    if thread.core.config.lenient:
        return True
    raise Trap(RULE, ins.word, name=f"{ins.mnemonic}: {rule}", word=ins.word)
