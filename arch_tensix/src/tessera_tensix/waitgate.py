"""The wait gate's latched wait: what STALLWAIT / SEMWAIT block, and when their wait is over.

WormholeB0 .../TensixCoprocessor/WaitGate.md, STALLWAIT.md, SEMWAIT.md and their
BlackholeA0 versions.  STALLWAIT and SEMWAIT retire at once, leaving a *latched wait*
(:class:`Latch`) in their thread's wait gate (:mod:`tessera_tensix.frontend` keeps it);
each later instruction that reaches the gate is held while the latch's block mask
catches it (:func:`catches`) and its condition is not yet fully satisfied
(:func:`met`); the latch is forgotten as soon as the condition holds.
:func:`describe` names the unmet conditions (what a deadlock report prints).

Block mask (B0..B8; 0 means B6, "the matrix unit")
    Which bits catch an instruction follows the table of STALLWAIT.md, summarised by
    the instruction's execution unit (:func:`tessera_tensix.isa.resource`) plus the
    table's exceptions: matrix unit B6, vector unit B8, configuration unit B7, sync
    unit B1, scalar unit (ThCon) B0+B5, packers B0+B2, unpackers B0+B3, mover B0+B4,
    and the "TDMA" instructions of the encoding tables (SETADC*, INCADC*, ADDRCR*,
    SETDVALID) B0 alone.  The table's own exceptions: DMANOP is B0+B5 although the
    tables file it under TDMA, RSTDMA B0 alone although they file it under ThCon;
    STALLWAIT (and on Blackhole SEMWAIT and STREAMWAIT) is caught by every bit; NOP
    only when all nine bits are set.  MOP, MOP_CFG and REPLAY are expanded in front of
    the gate and never reach it; neither does Blackhole's RESOURCEDECL (handled by
    Auto TTSync).  Where the page's table is silent (instructions it does not list:
    TBUFCMD, TRNSPSRCA, SETASHRM*, SETIBRWC, SETPKEDGOF, RAREB, MOVDBGB2D) the unit
    decides.  Direct mode's END word is not a Tensix instruction and never waits: a
    kernel that ends with a wait still latched simply ends.

Condition mask
    Wormhole B0 numbers STALLWAIT's conditions C0..C14, Blackhole C0..C12 (renumbered;
    a zero mask means 0x7F on Wormhole, 0x0F on Blackhole).  The four SrcA/SrcB
    ownership conditions (Wormhole C8-C11, Blackhole C5-C8) are evaluated on the
    banks' ``AllowedClient`` (:mod:`tessera_tensix.srcab`).  Every other condition —
    an instruction of this thread still in an unpacker, packer, matrix-unit or
    vector-unit pipeline, outstanding scalar-unit or mover memory requests, RISC-V
    requests not yet processed, the Blackhole configuration unit busy — is always
    satisfied here: in this functional model every unit finishes an instruction when
    it issues, so no pipeline ever holds work.  SEMWAIT's two conditions are on the
    semaphores its mask selects (:mod:`tessera_tensix.syncunit`): C0 waits while any
    has ``Value == 0``, C1 while any has ``Value >= Max``; SEMWAIT with no condition
    bit latches a STALLWAIT with the default mask instead (its page).

Semaphore names in reports are those tt-llk gives them (``ckernel_structs.h``,
``ckernel::semaphore``, the same on both chips): 1 MATH_PACK, 2 UNPACK_TO_DEST,
3 UNPACK_OPERAND_SYNC, 4 PACK_DONE, 5 UNPACK_SYNC, 6 UNPACK_MATH_DONE, 7 MATH_DONE;
semaphore 0 has no name there and is ``sem 0``.
"""

from __future__ import annotations

import functools
from typing import Any

from tessera_tensix.isa import resource, row_info
from tessera_tensix.srcab import MATRIX, UNPACKERS

ALL_BLOCK = 0x1FF
DEFAULT_BLOCK = 1 << 6                                    # B6: the matrix unit
#: STALLWAIT's default condition mask (a zero mask) per chip
DEFAULT_CONDITIONS = {"wh": 0x7F, "bh": 0x0F}

#: names of the semaphores in tt-llk (ckernel::semaphore)
SEMAPHORE_NAMES = {1: "MATH_PACK", 2: "UNPACK_TO_DEST", 3: "UNPACK_OPERAND_SYNC", 4: "PACK_DONE",
                   5: "UNPACK_SYNC", 6: "UNPACK_MATH_DONE", 7: "MATH_DONE"}

#: block bits per execution unit of the encoding tables (STALLWAIT.md's table)
_UNIT_BLOCK = {"MATH": 1 << 6, "SFPU": 1 << 8, "CFG": 1 << 7, "SYNC": 1 << 1,
               "THCON": 1 << 0 | 1 << 5, "PACK": 1 << 0 | 1 << 2, "UNPACK": 1 << 0 | 1 << 3,
               "XMOV": 1 << 0 | 1 << 4, "TDMA": 1 << 0}
#: the table's exceptions to the unit rule; 0 = never reaches the gate
_EXCEPTIONS = {"DMANOP": 1 << 0 | 1 << 5, "RSTDMA": 1 << 0, "STALLWAIT": ALL_BLOCK,
               "STREAMWAIT": ALL_BLOCK, "MOP": 0, "MOP_CFG": 0, "REPLAY": 0, "RESOURCEDECL": 0}


def semaphore_name(index: int) -> str:
    """``MATH_PACK (sem 1)``, or ``sem 0`` for a semaphore tt-llk does not name."""
    name = SEMAPHORE_NAMES.get(index)
    return f"{name} (sem {index})" if name else f"sem {index}"


def _bits(mask: int, prefix: str) -> str:
    return ",".join(f"{prefix}{i}" for i in range(mask.bit_length()) if mask >> i & 1)


# ----------------------------------------------------------------------------- the latch
class Latch:
    """A thread's latched wait instruction (``WaitGate[t].LatchedWaitInstruction``).

    ``opcode`` is ``"STALLWAIT"`` or ``"SEMWAIT"``; ``block`` the nine-bit block mask
    (already defaulted); ``conditions`` the condition mask (STALLWAIT: C0..C14 / C0..C12
    of ``chip``; SEMWAIT: C0 ``Value == 0``, C1 ``Value >= Max``); ``semaphores`` the
    SEMWAIT semaphore mask (0 for STALLWAIT).
    """

    __slots__ = ("block", "chip", "conditions", "opcode", "semaphores")

    def __init__(self, opcode: str, chip: str, block: int, conditions: int, semaphores: int = 0) -> None:
        self.opcode, self.chip = opcode, chip
        self.block, self.conditions, self.semaphores = block, conditions, semaphores

    @classmethod
    def stallwait(cls, chip: str, block: int, conditions: int) -> Latch:
        """What STALLWAIT latches (its functional model: zero masks take the defaults)."""
        return cls("STALLWAIT", chip, block or DEFAULT_BLOCK, conditions or DEFAULT_CONDITIONS[chip])

    @classmethod
    def semwait(cls, chip: str, block: int, semaphores: int, conditions: int) -> Latch:
        """What SEMWAIT latches: without a condition bit, a default STALLWAIT."""
        if not conditions:
            return cls("STALLWAIT", chip, block or DEFAULT_BLOCK, DEFAULT_CONDITIONS[chip])
        return cls("SEMWAIT", chip, block or DEFAULT_BLOCK, conditions, semaphores)

    def __getstate__(self) -> tuple[Any, ...]:
        return (self.opcode, self.chip, self.block, self.conditions, self.semaphores)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        self.opcode, self.chip, self.block, self.conditions, self.semaphores = state

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Latch) and self.__getstate__() == other.__getstate__()

    def __hash__(self) -> int:
        return hash(self.__getstate__())

    def __repr__(self) -> str:
        return f"Latch({self.text()})"

    def text(self) -> str:
        """``STALLWAIT block B3 conditions C8`` / ``SEMWAIT block B1,B6 on MATH_PACK (sem 1):
        C1`` — the latch in a state dump."""
        head = f"{self.opcode} block {_bits(self.block, 'B')}"
        if self.opcode == "SEMWAIT":
            sems = ", ".join(semaphore_name(i) for i in range(8) if self.semaphores >> i & 1) or "no semaphore"
            return f"{head} on {sems}: {_bits(self.conditions, 'C')}"
        return f"{head} conditions {_bits(self.conditions, 'C')}"


# ------------------------------------------------------------------------ the block mask
@functools.cache
def block_bits(name: str, chip: str) -> int:
    """The block-mask bits that catch vendor instruction ``name`` on ``chip`` (0: none;
    NOP's special case is :func:`catches`'s)."""
    if name == "SEMWAIT":
        return ALL_BLOCK if chip == "bh" else 1 << 1
    if name in _EXCEPTIONS:
        return _EXCEPTIONS[name]
    return _UNIT_BLOCK.get(resource(name), 0)


def _vendor_name(ins: Any) -> str:
    """The vendor name of a decoded instruction (``ttsemwait`` -> ``SEMWAIT``)."""
    info = row_info(ins.encoding) if getattr(ins, "encoding", None) is not None else None
    if info is not None:
        return info.name
    name = str(ins.mnemonic).upper()
    return name[2:] if name.startswith("TT") else name


def instruction_bits(ins: Any, chip: str) -> int:
    """The block-mask bits that catch decoded instruction ``ins`` on ``chip`` (NOP: all
    nine, the only mask that catches it) — for a timing model, which holds a caught
    instruction in its own time."""
    name = _vendor_name(ins)
    return ALL_BLOCK if name == "NOP" else block_bits(name, chip)


def latch_of(ins: Any, chip: str) -> Latch | None:
    """What decoded STALLWAIT or SEMWAIT ``ins`` latches on ``chip`` (None: neither)."""
    name = _vendor_name(ins)
    if name == "STALLWAIT":
        return Latch.stallwait(chip, ins.stall_res, ins.wait_res)
    if name == "SEMWAIT":
        return Latch.semwait(chip, ins.stall_res, ins.sem_sel, ins.wait_sem_cond)
    return None


def catches(latch: Latch, ins: Any) -> bool:
    """Does ``latch``'s block mask catch ``ins`` at the gate?"""
    name = _vendor_name(ins)
    if name == "NOP":
        return latch.block == ALL_BLOCK
    return bool(block_bits(name, latch.chip) & latch.block)


# ------------------------------------------------------------------------- the conditions
#: STALLWAIT's SrcA/SrcB conditions per chip: bit -> (register, side, client it waits for)
_SRC_CONDITIONS = {
    "wh": {8: ("srca", "unpacker_bank", UNPACKERS), 9: ("srcb", "unpacker_bank", UNPACKERS),
           10: ("srca", "matrix_bank", MATRIX), 11: ("srcb", "matrix_bank", MATRIX)},
    "bh": {5: ("srca", "unpacker_bank", UNPACKERS), 6: ("srcb", "unpacker_bank", UNPACKERS),
           7: ("srca", "matrix_bank", MATRIX), 8: ("srcb", "matrix_bank", MATRIX)},
}


def _unmet(thread: Any, latch: Latch) -> list[str]:
    """The texts of ``latch``'s conditions that still say "keep on waiting"."""
    core = thread.core
    out = []
    if latch.opcode == "SEMWAIT":
        from tessera_tensix.syncunit import SyncUnit

        sync = core.unit("sync", SyncUnit)
        for i in range(8):
            if not latch.semaphores >> i & 1:
                continue
            value, top = sync.value[i], sync.max[i]
            if latch.conditions & 1 and value == 0:
                out.append(f"{semaphore_name(i)} value 0")
            elif latch.conditions & 2 and value >= top:
                relation = "= max" if value == top else f"> max {top}"
                out.append(f"{semaphore_name(i)} value {value} {relation}")
        return out
    for bit, (reg, side, client) in _SRC_CONDITIONS[latch.chip].items():
        if latch.conditions >> bit & 1:
            src = getattr(core, reg)
            bank = getattr(src, side)
            if src.allowed[bank] != client:
                out.append(f"C{bit}: {src.owner_text(bank)}")
    return out


def met(thread: Any, latch: Latch) -> bool:
    """Is ``latch``'s condition fully satisfied (every selected condition met at once)?"""
    return not _unmet(thread, latch)


def describe(thread: Any, latch: Latch, ins: Any) -> str:
    """Why ``ins`` is held: ``STALLWAIT C8: SrcA bank 0 is owned by the matrix unit (B3
    blocks UNPACR)`` / ``SEMWAIT MATH_PACK (sem 1) value 2 = max (B6 blocks MVMUL)``."""
    name = _vendor_name(ins)
    caught = latch.block if name == "NOP" else block_bits(name, latch.chip) & latch.block
    unmet = ", ".join(_unmet(thread, latch)) or "conditions not met"
    return f"{latch.opcode} {unmet} ({_bits(caught, 'B')} blocks {name})"
