"""Helpers for the integer-semantics tests (test_int_*.py): opcode numbers and word builders.

The semantic functions are called directly with decoded-like objects
(:func:`phoenix_support.run`), so the tests do not depend on the encoding table;
the words are built with the spec's layouts (section 2.3) so word-derived
sub-fields (N, F, Sz, Mask, Cnd, Lk, bit 39) are the ones the real decoder would see.
"""

from __future__ import annotations

from phoenix_support import (  # noqa: F401 - re-exported for the test_int_* modules
    M32,
    PC,
    bcc_word,
    cmp_word,
    cmpi_word,
    j_word,
    machine,
    r1,
    r2,
    ri,
    run,
    thread,
    v,
    vget,
    vset,
)

ls_word = ri  # LS (load/store/cache with displacement) has the RI layout

# R2 funcs / R1 funcs / major opcodes used by the tests (spec 3.1–3.3)
F = {"add": 4, "sub": 5, "mul": 6, "and": 8, "or": 9, "xor": 10, "andc": 11, "nand": 12,
     "nor": 13, "xnor": 14, "orc": 15, "remask": 22, "slli": 24, "srli": 25, "srai": 26,
     "sll": 27, "srl": 28, "sra": 29, "stx": 40, "cachex": 41, "stcrx": 42, "ldx": 44,
     "ldux": 45, "ldsrx": 46}
F1 = {"cntlz": 0, "cntpop": 2, "mcmprss": 17, "sextb": 56, "sextw": 57}
OP = {"addi": 4, "subfi": 5, "muli": 6, "andi": 8, "ori": 9, "xori": 10, "nop": 11,
      "jmp": 24, "bra": 25, "ret": 26, "bcc": 28, "store": 40, "cache": 41, "stcr": 42,
      "load": 44, "loadu": 45, "ldsr": 46}
