"""Integer semantics behind the real encoding table: decode, postfix merge, run (end to end).

The other test_int_* files call semantic functions directly; this one checks the
contract with :mod:`tessera_phoenix.encoding` (operand attribute names, ``ins.value``
including postfixes, relative/absolute targets) by running small programs.
"""

from __future__ import annotations

import pytest
from phoenix_support import PC, image, load_image, run_words
from phoenix_support import encode as asm

from tessera_phoenix.postfix import postfix_word


def test_int_program_loop_call_memory_and_self_loop_halt():
    big = 0x1234_5678
    own, pay = big & 0x7FFFF, big >> 19  # own field keeps imm[18:0], the postfix the rest
    prog = [
        asm("ori", rt=1, ra=0, imm=0),                    # 0x00 sum = 0
        asm("ori", rt=2, ra=0, imm=10),                   # 0x06 i = 10
        asm("add", rt=1, ra=1, rb=2),                     # 0x0C loop: sum += i
        asm("addi", rt=2, ra=2, imm=-1),                  # 0x12 i -= 1
        asm("bne", bra=2, brb=0, bdisp=-12),              # 0x18 -> 0x0C
        asm("call", lk=1, target=PC + 0x4E),              # 0x1E -> sub
        asm("st", rt=1, ra=0, imm=0x800, sz=1),           # 0x24 store.w
        asm("ld", rt=4, ra=0, imm=0x800, sz=0),           # 0x2A load.b (sign-extends 57)
        asm("cmp_eq", rt=5, ra=4, rb=1),                  # 0x30
        asm("ori", rt=6, ra=0, imm=own - (1 << 19) if own >> 18 else own),  # 0x36
        postfix_word(pay),                                # 0x3C (runs as a NOP)
        asm("sll", rt=7, ra=5, rb=5, fill=1),             # 0x42 1 << 1 with fill -> 3
        asm("bra", reltarget=0),                          # 0x48 self loop: halt
        asm("addi", rt=1, ra=1, imm=2),                   # 0x4E sub: sum += 2
        asm("ret", rt=47, ra=57, imm=0),                  # 0x54
    ]
    m, t = run_words(prog)
    assert t.status == "halted" and t.exit_code == 0
    assert t.pc == PC + 0x48
    assert [t.gpr[i] for i in (1, 2, 4, 5, 6, 7)] == [57, 0, 57, 1, big, 3]
    assert t.gpr[57] == PC + 0x24


def test_int_program_unimp_trap_enters_the_handler():
    # Lk = 3 is reserved: the CALL takes UNIMP at its own address
    m, t = run_words([asm("call", lk=3, target=PC)], steps=1, vector_offset=False)
    assert (t.cause[3], t.ip_stack[0], t.pc, t.depth) == (37, PC, 0xFFFD0000, 2)
    assert t.gpr[57] == 0


def test_int_program_lenient_skips_a_reserved_call():
    prog = [asm("call", lk=3, target=0), asm("ori", rt=1, ra=0, imm=9), asm("bra", reltarget=0)]
    m, t = run_words(prog, lenient=True)
    assert t.gpr[1] == 9 and t.status == "halted"


@pytest.mark.parametrize("lanes", [4, 16])
def test_int_program_vector_compare_mask_and_masked_store(lanes):
    # v1 = lane index via a contiguous load; mask = (v1 < 2); masked store of v1 + 100
    data = b"".join(i.to_bytes(4, "little") for i in range(lanes))
    prog = [
        asm("ld", rt=0x41, ra=0, imm=0x800),              # v1 = [0, 1, 2, ...]
        asm("cmp_lti", rt=48, ra=0x41, imm13=2),         # r48 bit e = v1[e] < 2
        asm("addi", rt=0x42, ra=0x41, imm=100),
        asm("st", rt=0x42, ra=0, imm=0x900, mask=48),
        asm("bra", reltarget=0),
    ]
    m, t = load_image(image(prog), lanes=lanes)
    m.space.write_bytes(0x800, data)
    m.run(max_steps=1000)
    assert t.gpr[48] == 0b11
    out = m.space.read_bytes(0x900, 4 * lanes)
    assert [int.from_bytes(out[4 * i:4 * i + 4], "little") for i in range(lanes)] == \
        [100, 101] + [0] * (lanes - 2)
