"""Pushing Tensix instructions from a baby RISC-V core: ``.ttinsn`` words and the push window.

BlackholeA0 .../BabyRISCV/PushTensixInstruction.md: a store of a 32-bit value to
``INSTRN_BUF_BASE`` pushes it as a Tensix instruction into the FIFO of a Tensix
thread — RISCV T<i> to thread T<i>; RISCV B to T0 (``INSTRN_BUF_BASE``), T1
(``INSTRN1_BUF_BASE``) or T2 (``INSTRN2_BUF_BASE``); a TRISC storing to
``INSTRN1/2_BUF_BASE`` hangs, and RISCV NC cannot push.  The ``.ttinsn``
extension makes such a store one instruction: a word whose low two bits are not
``11`` is the value rotated left by two; the core rotates it back and stores it to
``INSTRN_BUF_BASE`` — exactly an ``sw``, so a full FIFO stalls it the same way.

Pushes from RISCV B enter *after* the MOP expander in hardware; Tessera has one FIFO
per thread in front of its MOP expander, so a MOP pushed by RISCV B expands (a
documented simplification: the vendor's boot code pushes no MOPs from B).
"""

from __future__ import annotations

from typing import Any

from tessera.errors import MemoryFault
from tessera.isa import Encoding, Field
from tessera_tensix.tile import memmap

#: the pushed value's bits 29:0 are the word's bits 31:2; its bits 31:30 are the word's bits
#: 1:0, which tell the three rows apart (``ttinsn``: 00, ``ttinsn_b30``: 01, ``ttinsn_b31``: 10)
TTBITS = Field("ttbits", "31:2", kind="uimm")
#: the rows' mnemonics by the word's low two bits
MNEMONICS = {0b00: "ttinsn", 0b01: "ttinsn_b30", 0b10: "ttinsn_b31"}
#: the RISC-V timing class of a push (one cycle, as a store)
TIMING = {"ttinsn": 1}


def push(hart: Any, fifo: Any, value: int, pc: int) -> None:
    """``hart`` pushes ``value`` (from its instruction at ``pc``) into ``fifo`` (may park it)."""
    if fifo is None:
        raise MemoryFault(f"{hart.name} cannot push Tensix instructions (only RISCV B and T0..T2 can)",
                          access="write", size=4, address=memmap.INSTRN_BUF_BASE)
    fifo.push(hart, value, pc)


def value_of(word: int) -> int:
    """The Tensix instruction a ``.ttinsn`` word carries: the word rotated right by 2."""
    return (word >> 2) | (word & 3) << 30


def ttinsn(hart: Any, ins: Any) -> None:
    """``.ttinsn``: push the rotated word to the core's own thread (``INSTRN_BUF_BASE``)."""
    push(hart, hart.tensix_fifo, value_of(ins.word), ins.address)


def rows() -> tuple[Encoding, ...]:
    """The three ``.ttinsn`` rows: low bits 00, 01, 10 (11 is every other RISC-V instruction).

    Assembly: ``ttinsn BITS`` pushes ``BITS`` (< 2**30); a Tensix instruction with bit
    30 or 31 set is ``ttinsn_b30``/``ttinsn_b31`` of its low 30 bits."""
    return tuple(Encoding(MNEMONICS[low], low, 0b11, "{ttbits}", ttinsn, "ttinsn", {"sync", "store"},
                          doc=f"push the Tensix instruction {low:02b}:BITS (the word rotated right by 2) "
                              "to this core's Tensix thread, as a store to INSTRN_BUF_BASE", unit="PUSH")
                 for low in (0b00, 0b01, 0b10))


class PushWindow:
    """``INSTRN_BUF_BASE`` .. ``INSTRN2_BUF_BASE + 0xFFFF`` as one core sees it."""

    def __init__(self, hart: Any, fifos: list[Any]) -> None:
        self.hart = hart
        brisc = hart.name == "brisc"
        own = getattr(hart, "tensix_fifo", None)
        #: per 64 KiB window: the FIFO a store there pushes to, or the text of what it does instead
        self.targets: list[Any] = [own if own is not None else "RISCV NC cannot push Tensix instructions",
                                   fifos[1] if brisc else "a TRISC storing to INSTRN1_BUF_BASE hangs",
                                   fifos[2] if brisc else "a TRISC storing to INSTRN2_BUF_BASE hangs"]

    def write(self, offset: int, size: int, value: int) -> None:
        target = self.targets[offset >> 16]
        if isinstance(target, str):
            raise MemoryFault(f"{self.hart.name}: store to {memmap.INSTRN_BUF_BASE + offset:#010x}: {target}",
                              access="write", size=size, address=memmap.INSTRN_BUF_BASE + offset)
        # A device is not told which instruction stores, and the hart's pc is exact only
        # between slices: the pushed word is attributed to the window address it was stored
        # to (deterministic however a run is sliced); a .ttinsn word carries its own pc
        target.push(self.hart, value, memmap.INSTRN_BUF_BASE + offset)

    def read(self, offset: int, size: int) -> int:
        return 0   # reads of the push window return nothing meaningful (the page defines none)
