"""The MOP expander of a Tensix thread: its configuration and the two templates.

WormholeB0 .../TensixCoprocessor/MOPExpander.md (functional model and the
"Configuration" table), MOP.md, MOP_CFG.md.  Each thread's front end starts with a MOP
expander: a ``MOP`` instruction is replaced by a sequence of instruction words built
from a template and the nine 32-bit words of the thread's ``MopCfg``; ``MOP_CFG``
sets the high half of template 0's 32-bit mask.  Everything else passes through.

What this module models
    * :class:`MopExpander` — the per-thread state: ``MopCfg[0..8]`` (write-only from the
      thread's RISC-V core at ``TENSIX_MOP_CFG_BASE`` = 0xFFB8_0000, nine words; see
      :meth:`MopExpander.store`) and ``MaskHi`` (the last ``MOP_CFG``).
    * :func:`expand` — the pure function from a MOP's fields and ``MopCfg`` to the words
      it expands to, for template 0 (zmask loop: ``Count1 + 1`` iterations, each the A
      instructions — ``InsnA0``, with ``HasA123`` also A1..A3, with ``HasB`` also B — or,
      where the mask bit is set, ``SkipA0`` (and ``SkipB``)) and template 1 (outer and
      inner loop of at most 127 each, ``StartOp``, ``EndOp0``/``EndOp1``, ``LoopOp``
      alternating with ``LoopOp1`` when that is not a NOP, the last inner iteration
      replaced by ``Loop1Last`` — or ``Loop0Last`` on the last outer iteration — and the
      documented hardware bug: outer count 1, no start op, no inner loop and an end op
      run 129 outer iterations).  :func:`slots` gives the same sequence as indices
      into ``MopCfg``, so a message can name the entry a bad word came from.

Choices where the page is silent (also in docs/tensix.md, "MOP and replay expanders")
    * ``MopCfg`` and ``MaskHi`` are 0 at reset.  A 0 word is not an instruction (opcode
      0 is unassigned), so a MOP that would issue one breaks a rule naming the entry
      ("was it programmed?"); leniently the word is dropped.
    * A ``MOP`` or ``MOP_CFG`` word in the expansion would go past the MOP expander to
      the wait gate, which never sees them (STALLWAIT.md): a rule break; leniently
      dropped.  ``REPLAY`` words are fine: the replay expander comes next.
    * The hardware samples ``MopCfg`` during the expansion (software must not change it
      meanwhile); Tessera samples it when the MOP starts, as the functional model does.
    * Blackhole has no page of its own.  Its ``assembly.yaml`` says a template-1 MOP
      with non-zero fields takes its loop counts from them (10-bit inner and outer
      counts), without saying how that combines with ``LoopOp1`` or the bug; the vendor's
      kernels always issue ``MOP 1,0,0``.  Tessera expands Blackhole MOPs by the Wormhole
      model and stops on a template-1 MOP with non-zero fields (leniently: the fields
      are ignored, as on Wormhole).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

#: opcodes (word[31:24]) the expanders care about
NOP_OPCODE = 0x02
MOP_OPCODE = 0x01
MOP_CFG_OPCODE = 0x03
REPLAY_OPCODE = 0x04
#: the opcodes of the front end's own words (MOP, MOP_CFG, REPLAY): the expanders consume
#: them, so they never reach a backend unit, a replay recording or the hazard count
FRONT_END_OPCODES = frozenset({MOP_OPCODE, MOP_CFG_OPCODE, REPLAY_OPCODE})

#: ``MopCfg`` of Tensix thread i is mapped in RISC-V Ti's address space as uint32_t[9] here
MOP_CFG_BASE = 0xFFB8_0000
CFG_WORDS = 9
MASK32 = 0xFFFF_FFFF

#: what each ``MopCfg`` entry is called by template (MOPExpander.md "Configuration")
SLOT_NAMES = (
    ("unused", "Flags", "InsnB", "InsnA0", "InsnA1", "InsnA2", "InsnA3", "SkipA0", "SkipB"),
    ("OuterCount", "InnerCount", "StartOp", "EndOp0", "EndOp1", "LoopOp", "LoopOp1", "Loop0Last",
     "Loop1Last"),
)


def is_nop(word: int) -> bool:
    """The expander's NOP test: plain ``NOP`` (opcode 0x02) only, not DMANOP or SFPNOP."""
    return (word >> 24) & 0xFF == NOP_OPCODE


@functools.lru_cache(maxsize=256)
def template0_slots(mask: int, count1: int, flags: int) -> tuple[int, ...]:
    """The ``MopCfg`` indices template 0 issues: ``count1 + 1`` iterations; iteration i
    takes the A path (3; 4, 5, 6 if HasA123; 2 if HasB) when bit i of the 32-bit
    ``mask`` is clear, else the skip path (7; 8 if HasB).  Bits past 31 read as 0."""
    has_b = bool(flags & 1)
    a_path: tuple[int, ...] = (3, 4, 5, 6) if flags & 2 else (3,)
    if has_b:
        a_path += (2,)
    skip_path = (7, 8) if has_b else (7,)
    out: list[int] = []
    for i in range(count1 + 1):
        out.extend(skip_path if (mask >> i) & 1 else a_path)
    return tuple(out)


@functools.lru_cache(maxsize=256)
def template1_slots(outer: int, inner: int, start: bool, end0: bool, end1: bool,
                    alternate: bool) -> tuple[int, ...]:
    """The ``MopCfg`` indices template 1 issues, given the 7-bit loop counts and which of
    StartOp, EndOp0, EndOp1, LoopOp1 are not NOPs.  ``LoopOp ^= LoopOp ^ LoopOp1`` in the
    functional model alternates between entries 5 and 6, which is how it is written here."""
    if alternate:
        inner *= 2
    if outer == 1 and not start and inner == 0 and end0:
        outer += 128  # the documented hardware bug
    out: list[int] = []
    for j in range(outer):
        if start:
            out.append(2)
        loop = 5
        for i in range(inner):
            if i != inner - 1:
                out.append(loop)
            else:
                out.append(8 if j != outer - 1 else 7)
            if alternate:
                loop ^= 5 ^ 6
        if end0:
            out.append(3)
            if end1:
                out.append(4)
    return tuple(out)


def slots(template: int, count1: int, mask: int, cfg: Sequence[int]) -> tuple[int, ...]:
    """The ``MopCfg`` index of each word a MOP expands to (``mask`` is all 32 bits)."""
    if template == 0:
        return template0_slots(mask & MASK32, count1, cfg[1] & 3)
    return template1_slots(cfg[0] & 127, cfg[1] & 127, not is_nop(cfg[2]), not is_nop(cfg[3]),
                           not is_nop(cfg[4]), not is_nop(cfg[6]))


def expand(template: int, count1: int, mask: int, cfg: Sequence[int]) -> list[int]:
    """The instruction words a MOP expands to: ``template`` (0 or 1), ``count1`` (7 bits),
    ``mask`` = ``(MaskHi << 16) | MaskLo`` (template 0), ``cfg`` the nine ``MopCfg`` words."""
    return [cfg[s] for s in slots(template, count1, mask, cfg)]


class MopExpander:
    """One thread's MOP expander state: ``MopCfg[0..8]`` and ``MaskHi``."""

    def __init__(self) -> None:
        self.cfg = [0] * CFG_WORDS
        self.mask_hi = 0

    def write(self, index: int, value: int) -> None:
        """``MopCfg[index] = value`` (what a RISC-V store to ``MOP_CFG_BASE + 4*index`` does)."""
        if not 0 <= index < CFG_WORDS:
            raise IndexError(f"MopCfg has {CFG_WORDS} entries, not index {index}")
        self.cfg[index] = value & MASK32

    def store(self, offset: int, value: int) -> bool:
        """A 32-bit RISC-V store at ``MOP_CFG_BASE + offset``: False if ``offset`` is not
        one of the nine aligned words (the caller decides what such a store does)."""
        if offset % 4 or not 0 <= offset < 4 * CFG_WORDS:
            return False
        self.write(offset // 4, value)
        return True

    def program(self, words: Sequence[int]) -> None:
        """Write ``MopCfg[0..len(words)-1]`` at once (a kernel's MOP programming)."""
        for index, value in enumerate(words):
            self.write(index, value)

    def mask(self, mask_lo: int) -> int:
        """Template 0's 32-bit mask for a MOP whose ``MaskLo`` is ``mask_lo``."""
        return ((self.mask_hi & 0xFFFF) << 16) | (mask_lo & 0xFFFF)

    def state(self) -> dict[str, Any]:
        return {"mop_cfg": [f"{w:#010x}" for w in self.cfg], "mask_hi": f"{self.mask_hi:#06x}"}


def expander_of(thread: Any) -> MopExpander:
    """``thread``'s MOP expander (made on first use, kept in ``thread.frontend.mop``)."""
    frontend = thread.frontend
    if frontend.mop is None:
        frontend.mop = MopExpander()
    return frontend.mop
