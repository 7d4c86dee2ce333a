"""Pseudo-instructions and alternative spellings of the rfPhoenix assembler (spec 4.10).

Pure text rewriting, kept apart from the assembler's pass logic: each rule turns one
line into the table mnemonic it stands for.  A size suffix written on the pseudo
(``ldi.w``) is carried to the instruction it becomes.

=================  =============================================  ==================
pseudo             becomes                                        spec
=================  =============================================  ==================
ldi Rt, imm        ori Rt, r0, imm                                4.1
mov Rt, Ra         or Rt, Ra, r0                                  4.1
neg Rt, Rb         sub Rt, r0, Rb                                 4.1
com/not Rt, Ra     xori Rt, Ra, -1                                4.1
fmul Rt, Ra, Rb    fma Rt, Ra, Rb, r0                             4.6
ret / rts [n]      ret sp, lr1, n                                 4.7 (C12)
bgt/ble/bgtu/bleu  blt/bge/bltu/bgeu with the operands swapped    4.7
call/bsr L         call/bsr lr1, L                                4.7
brk [n]            brk r0, n                                      4.9
ldt/stt            ld.t / st.t                                    C37
load/loadu/store   ld/ldu/st                                      4.8
vmovs              vex                                            4.5
op …, [Ra]         op …, 0[Ra]                                    4.10
op …, [Ra+Rb]      the indexed form (ldx, stx, cachex …)          4.10
=================  =============================================  ==================

Extra operands (a mask register, a rounding mode) pass through unchanged.
"""

from __future__ import annotations

import re

from tessera.isa.asm import split_operands

_ALIASES = {"load": "ld", "loadu": "ldu", "store": "st", "vmovs": "vex"}
_SIZED_ALIASES = {"ldt": "ld.t", "stt": "st.t"}
_SWAPPED = {"bgt": "blt", "ble": "bge", "bgtu": "bltu", "bleu": "bgeu"}
#: memory mnemonics, the index of their memory operand and their indexed form
_MEMORY = {"ld": (1, "ldx"), "ldu": (1, "ldux"), "st": (1, "stx"), "ldsr": (1, "ldsrx"),
           "stcr": (1, "stcrx"), "cache": (2, "cachex")}
_INDEXED = re.compile(r"\[\s*([^\]+]+?)\s*\+\s*([^\]]+?)\s*\]")
_BARE = re.compile(r"\[\s*([^\]+]+?)\s*\]")


def _line(mnemonic: str, operands: list[str]) -> list[str]:
    return [f"{mnemonic} {', '.join(operands)}".rstrip()]


def expand(mnemonic: str, operands_text: str) -> list[str] | None:
    """The lines a pseudo-instruction stands for, or ``None`` for a table instruction."""
    base, dot, suffix = mnemonic.partition(".")
    sfx = dot + suffix
    ops = [text for _, text in split_operands(operands_text)]
    if base in _SIZED_ALIASES and not sfx:
        return _line(_SIZED_ALIASES[base], ops)
    if base in _ALIASES:
        return _line(_ALIASES[base] + sfx, ops)
    if base == "ldi" and len(ops) >= 2:
        return _line("ori" + sfx, [ops[0], "r0", *ops[1:]])
    if base == "mov" and len(ops) >= 2:
        return _line("or" + sfx, [ops[0], ops[1], "r0", *ops[2:]])
    if base == "neg" and len(ops) >= 2:
        return _line("sub" + sfx, [ops[0], "r0", *ops[1:]])
    if base in ("com", "not") and len(ops) >= 2:
        return _line("xori" + sfx, [ops[0], ops[1], "-1", *ops[2:]])
    if base == "fmul" and len(ops) >= 3:
        return _line("fma" + sfx, [*ops[:3], "r0", *ops[3:]])
    if base in ("ret", "rts") and len(ops) <= 1 and not sfx:
        return _line("ret", ["sp", "lr1", ops[0] if ops else "0"])
    if base in _SWAPPED and len(ops) == 3:
        return _line(_SWAPPED[base] + sfx, [ops[1], ops[0], ops[2]])
    if base in ("call", "bsr") and len(ops) == 1 and not sfx:
        return _line(base, ["lr1", ops[0]])
    if base == "brk" and len(ops) <= 1 and not sfx:
        return _line("brk", ["r0", ops[0] if ops else "0"])
    if base in _MEMORY:
        return _memory(base, sfx, ops)
    return None


def _memory(base: str, sfx: str, ops: list[str]) -> list[str] | None:
    index, indexed = _MEMORY[base]
    if len(ops) <= index:
        return None
    operand = ops[index]
    if m := _INDEXED.fullmatch(operand):
        return _line(indexed + sfx, [*ops[:index], f"[{m.group(1)}+{m.group(2)}]",
                                     *ops[index + 1:]])
    if _BARE.fullmatch(operand):
        return _line(base + sfx, [*ops[:index], "0" + operand, *ops[index + 1:]])
    return None
