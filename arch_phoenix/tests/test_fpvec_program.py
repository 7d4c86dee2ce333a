"""FP and vector semantics behind the real encoding table (decode, postfix merge, run).

The other test_fpvec_* files call the semantic functions directly; this one checks
the operand contract with :mod:`tessera_phoenix.encoding` — attribute names, FCMPI
immediates completed by a postfix, FBcc displacements, Sz/Mask/RM taken from the
word — by running small programs.
"""

from __future__ import annotations

from fpvec_support import f32
from phoenix_support import encode as asm
from phoenix_support import run_words, v

from tessera_phoenix.postfix import postfix_word


def li(rt: int, value: int) -> list[int]:
    """ORI + postfix loading a 32-bit constant whose low 19 bits are 0 (typical floats)."""
    assert value & 0x7FFFF == 0
    return [asm("ori", rt=rt, ra=0, imm=0), postfix_word(value >> 19)]


def run(words: list[int], steps: int = 10_000):
    """Run ``words`` from DRAM with 4 lanes; thread 0."""
    return run_words(words, steps=steps, lanes=4)[1]


def test_fpvec_program_scalar_fp_loop():
    prog = [
        *li(1, f32(1.5)),                                        # 0x00
        *li(2, f32(2.0)),                                        # 0x0C
        asm("fma", rt=3, ra=1, rb=2, rc=1),                      # 0x18 r3 = 4.5
        asm("fcmp_gti", rt=4, ra=3, imm13=0),                    # 0x1E r3 > 4.0 ?
        postfix_word(f32(4.0) >> 19),                            # 0x24
        asm("addi", rt=5, ra=5, imm=1),                          # 0x2A loop: count
        asm("fsub", rt=3, ra=3, rb=1),                           # 0x30 r3 -= 1.5
        asm("fbgt", bra=3, brb=0, bdisp=-12),                    # 0x36 -> 0x2A while r3 > 0
        asm("ftoi", rt=6, ra=2),                                 # 0x3C r6 = 2
        asm("fcmp", rt=7, ra=1, rb=2),                           # 0x42 full relation vector
        asm("bra", reltarget=0),                                 # 0x48 halt
    ]
    t = run(prog)
    assert t.status == "halted"
    assert t.gpr[4] == 1
    assert t.gpr[5] == 3 and t.gpr[3] == 0                       # 4.5 -> 3.0 -> 1.5 -> 0.0
    assert t.gpr[6] == 2
    assert t.gpr[7] == (1 << 1 | 1 << 2 | 1 << 3 | 1 << 5 | 1 << 12)


def test_fpvec_program_vector_fp_and_moves():
    prog = [
        *li(1, f32(3.0)),                                        # 0x00
        asm("ori", rt=2, ra=0, imm=0b0101),                      # 0x0C mask: lanes 0, 2
        asm("ori", rt=3, ra=0, imm=2),                           # 0x12 index 2
        asm("fadd", rt=v(1), ra=1, rb=0),                        # 0x18 v1 = 3.0 everywhere
        asm("vsrlvi", rt=v(2), ra=v(1), shamt=1),                # 0x1E v2 = [3, 3, 3, 0]
        asm("fadd", rt=v(3), ra=v(1), rb=v(2), mask=2),          # 0x24 v3 = [6, 0, 6, 0]
        asm("vex", rt=4, ra=v(3), rb=3),                         # 0x2A r4 = v3[2] = 6.0
        asm("fcmp_gt", rt=5, ra=v(3), rb=1),                     # 0x30 r5 = elements > 3.0
        asm("bra", reltarget=0),                                 # 0x36
    ]
    t = run(prog)
    assert [int(x) for x in t.vr[2]] == [f32(3.0)] * 3 + [0]
    assert [int(x) for x in t.vr[3]] == [f32(6.0), 0, f32(6.0), 0]
    assert t.gpr[4] == f32(6.0)
    assert t.gpr[5] == 0b0101


def test_fpvec_program_rounding_mode_from_word():
    prog = [
        *li(1, f32(1.0)),
        *li(2, f32(2.0**-24 + 2.0**-25)),                        # 1.5 half-ulps of 1.0
        asm("fadd", rt=3, ra=1, rb=2, rm=1),                     # rtz
        asm("fadd", rt=4, ra=1, rb=2),                           # rne (named row, RM = 0)
        *li(5, 0x4B80_0000),                                     # 2^24
        *li(6, f32(3.0)),
        asm("fadd", rt=7, ra=5, rb=6, rm=1),                     # 2^24 + 3 toward zero
        asm("fadd", rt=8, ra=5, rb=6, rm=0),                     # ... to nearest even
        asm("bra", reltarget=0),
    ]
    t = run(prog)
    assert t.gpr[3] == 0x3F80_0000 and t.gpr[4] == 0x3F80_0001
    assert t.gpr[7] == f32(2.0**24 + 2) and t.gpr[8] == f32(2.0**24 + 4)


def test_fpvec_program_fman_traps_unimp():
    prog = [asm("fman", rt=1, ra=2)]
    t = run(prog, steps=1)
    assert t.cause[3] == 37                                      # UNIMP taken from machine mode
