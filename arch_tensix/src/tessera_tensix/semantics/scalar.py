"""Scalar-unit (ThCon) GPR instructions of seed 000 on the thread's 64 GPRs.

ADDDMAREG 0x58, SUBDMAREG 0x59, MULDMAREG 0x5A, BITWOPDMAREG 0x5B, SHIFTDMAREG 0x5C,
CMPDMAREG 0x5D: OpBisConst[23] Mode[20:18] Result[17:12] OpB-or-Imm[11:6] OpA[5:0]
(spec tensix.md §5.2; seed 000; functional models of the Wormhole ISA pages, which
Blackhole shares).  SETDMAREG 0x45 (immediate form), FLUSHDMA 0x46.

* ADD/SUB wrap modulo 2^32; MUL multiplies the low 16 bits of each operand (a full
  32-bit product); BITWOP/SHIFT/CMP are unsigned; SHIFT uses the low 5 bits of its
  right operand (register or 5-bit immediate [10:6]); the immediate of the others is
  the unsigned 6-bit [11:6].  Bits [22:21] are unused and ignored.
* An undefined Mode (BITWOP 3..7, SHIFT 2..7, CMP 3..7) is a rule stop; leniently
  the instruction does nothing (the result GPR keeps its value).
* SETDMAREG with bit 7 clear writes NewValue16 [23:8] into half ResultHalfReg [6:0]
  of the GPR file (GPR h >> 1, low half when h is even).  The "special" form (bit 7
  set: the value comes from packer/unpacker signals) is not supported: the run stops.
* FLUSHDMA waits until its conditions (mask [3:0], 0 = all four: scalar-unit memory
  requests, unpacker 0/1 and packer 0 busy for this thread) are met.  In direct mode
  no unit has outstanding work, so it completes at once.
"""

from __future__ import annotations

from typing import Any

from tessera.control import Trap
from tessera_tensix import rules
from tessera_tensix.semantics import op

MASK32 = 0xFFFF_FFFF


def _operands(thread: Any, ins: Any) -> tuple[int, int, int]:
    """(left value, right value, result index) of the DMAREG arithmetic forms."""
    gpr = thread.gpr
    b = ins.op_b_reg_index
    return gpr[ins.op_a_reg_index], b if ins.op_b_is_const else gpr[b], ins.result_reg_index


@op("ADDDMAREG")
def adddmareg(thread: Any, ins: Any) -> None:
    left, right, result = _operands(thread, ins)
    thread.gpr[result] = (left + right) & MASK32


@op("SUBDMAREG")
def subdmareg(thread: Any, ins: Any) -> None:
    left, right, result = _operands(thread, ins)
    thread.gpr[result] = (left - right) & MASK32


@op("MULDMAREG")
def muldmareg(thread: Any, ins: Any) -> None:
    left, right, result = _operands(thread, ins)
    thread.gpr[result] = (left & 0xFFFF) * (right & 0xFFFF)


@op("BITWOPDMAREG")
def bitwopdmareg(thread: Any, ins: Any) -> None:
    mode = ins.op_sel
    if mode > 2:
        rules.broken(thread, ins, f"mode {mode} is undefined (0 AND, 1 OR, 2 XOR)")
        return
    left, right, result = _operands(thread, ins)
    if mode == 0:
        thread.gpr[result] = left & right
    elif mode == 1:
        thread.gpr[result] = left | right
    else:
        thread.gpr[result] = left ^ right


@op("SHIFTDMAREG")
def shiftdmareg(thread: Any, ins: Any) -> None:
    mode = ins.op_sel
    if mode > 1:
        rules.broken(thread, ins, f"mode {mode} is undefined (0 LEFT, 1 RIGHT)")
        return
    left, right, result = _operands(thread, ins)
    amount = right & 0x1F                          # 5-bit immediate / low 5 bits of the GPR
    thread.gpr[result] = (left << amount) & MASK32 if mode == 0 else left >> amount


@op("CMPDMAREG")
def cmpdmareg(thread: Any, ins: Any) -> None:
    mode = ins.op_sel
    if mode > 2:
        rules.broken(thread, ins, f"mode {mode} is undefined (0 GT, 1 LT, 2 EQ)")
        return
    left, right, result = _operands(thread, ins)
    if mode == 0:
        thread.gpr[result] = int(left > right)
    elif mode == 1:
        thread.gpr[result] = int(left < right)
    else:
        thread.gpr[result] = int(left == right)


@op("SETDMAREG")
def setdmareg(thread: Any, ins: Any) -> None:
    if ins.set_signals_mode:
        raise Trap(rules.RULE, ins.word,
                   name=f"{ins.mnemonic}: the special form (bit 7 set: value from "
                        "packer/unpacker signals) is not supported", word=ins.word)
    half = ins.reg_index_16b
    # the immediate form's NewValue [23:8] spans the two fields of the special form's
    # layout, which is the table's (payload_sig_sel_size [23:22], payload_sig_sel [21:8])
    value = ins.payload_sig_sel_size << 14 | ins.payload_sig_sel
    index, shift = half >> 1, 16 * (half & 1)
    gpr = thread.gpr
    gpr[index] = (gpr[index] & ~(0xFFFF << shift) & MASK32) | (value << shift)


@op("FLUSHDMA")
def flushdma(thread: Any, ins: Any) -> None:
    # Waits until none of the selected units (mask [3:0], 0 meaning 0xF) has work of
    # this thread in flight; direct mode has no unpackers, packers or scalar-unit
    # memory traffic outstanding, so the wait is already over.
    return None
