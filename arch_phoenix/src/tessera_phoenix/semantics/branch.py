"""Integer control transfer: Bcc/BBS, JMP/CALL, BRA/BSR, RET, JMPR (spec 2.3 and 4.7).

A semantic function returns the taken target (the engine continues there) or None
to fall through.  All target arithmetic wraps modulo 2^32 (spec 1.8); the link
value is always the address of the branch + 6, i.e. the word after it, even when
a postfix follows (the postfix then executes as a NOP on return).

Encodings the spec reserves (Cnd 4, Lk 3, vector registers as branch operands)
raise the decoder's undefined-instruction trap: UNIMP, or skipped like a NOP when
``lenient`` is set (exceptions.take_trap decides, as for undefined opcodes).

``halt_on_self_loop``: an unconditional BRA/JMP (Lk = 0) to its own address is the
idiom test programs end with; executing it forever would only burn the run's
instruction budget, so the thread halts with exit code 0 instead.
"""

from __future__ import annotations

from typing import Any

from tessera.control import Halt
from tessera_phoenix import exceptions
from tessera_phoenix.interrupts import may_be_interrupted
from tessera_phoenix.registers import LR1, LR2
from tessera_phoenix.semantics import op
from tessera_phoenix.semantics.lanes import T_BIT, to_signed

MASK32 = 0xFFFF_FFFF
LINK = (None, LR1, LR2)
#: Bcc condition codes (bits 47:45)
BLT, BGE, BLTU, BGEU, BBS, BEQ, BNE = 0, 1, 2, 3, 5, 6, 7
#: Ta (bit 19) and Tb (bit 12) of the branch format must be 0
_VECTOR_BITS = (1 << 19) | (1 << 12)


def branch_taken(cnd: int, a: int, b: int, w: int) -> bool:
    """The integer branch relation ``a cnd b`` at ``w`` bits (16 or 32)."""
    mask = (1 << w) - 1
    a &= mask
    b &= mask
    if cnd == BEQ:
        return a == b
    if cnd == BNE:
        return a != b
    if cnd == BLT:
        return to_signed(a, w) < to_signed(b, w)
    if cnd == BGE:
        return to_signed(a, w) >= to_signed(b, w)
    if cnd == BLTU:
        return a < b
    return a >= b  # BGEU


@op("bcc")
def bcc(thread: Any, ins: Any) -> int | None:
    """Bcc (op 28): Ra = bits 18:13, Rb (or BBS bit number) = bits 11:6, Sz 1 = 16-bit compare."""
    word = ins.word
    cnd = (word >> 45) & 7
    if cnd == 4 or word & _VECTOR_BITS:
        raise exceptions.undefined(ins)
    pc = ins.address
    a = thread.rd((word >> 13) & 63, pc)
    if cnd == BBS:
        taken = (a >> ((word >> 6) & 31)) & 1
    else:
        w = 16 if (word >> 39) & 7 == 1 else 32
        taken = branch_taken(cnd, a, thread.rd((word >> 6) & 63, pc), w)
    return (pc + ins.value) & MASK32 if taken else None


def _jump(thread: Any, ins: Any, target: int) -> int | None:
    """Common tail of JMP/CALL and BRA/BSR: link per Lk, self-loop halt, go."""
    lk = (ins.word >> 6) & 3
    if lk == 3:
        raise exceptions.undefined(ins)
    if lk:
        thread.wr(LINK[lk], ins.address + 6)
    elif (target == ins.address and thread.shared.config.halt_on_self_loop
          and not may_be_interrupted(thread)):
        raise Halt(0)
    return target


@op("jmp")
def jmp(thread: Any, ins: Any) -> int | None:
    """JMP / CALL (op 24): absolute target, low 32 bits of Target40."""
    return _jump(thread, ins, ins.value & MASK32)


@op("bra")
def bra(thread: Any, ins: Any) -> int | None:
    """BRA / BSR (op 25): target relative to the branch itself, modulo 2^32."""
    return _jump(thread, ins, (ins.address + ins.value) & MASK32)


@op("ret")
def ret(thread: Any, ins: Any) -> int | None:
    """RET (op 26, bit 39 = 0): IP = Ra; Rt = Rt + imm (pops arguments off the stack)."""
    if (ins.rt | ins.ra) & T_BIT:
        raise exceptions.undefined(ins)
    pc = ins.address
    target = thread.rd(ins.ra, pc)
    thread.wr(ins.rt, thread.rd(ins.rt, pc) + ins.value)
    return target & MASK32


@op("jmpr")
def jmpr(thread: Any, ins: Any) -> int | None:
    """JMPR (op 26, bit 39 = 1): t = Ra + imm; Rt = address + 6 (Rt = r0 discards it); IP = t."""
    if (ins.rt | ins.ra) & T_BIT:
        raise exceptions.undefined(ins)
    target = (thread.rd(ins.ra, ins.address) + ins.value) & MASK32
    thread.wr(ins.rt, ins.address + 6)
    return target
