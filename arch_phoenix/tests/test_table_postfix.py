"""Postfix merging (spec 2.4): refine() on decoded words, the split/merge arithmetic, execution."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from phoenix_support import run_words
from table_support import ENC, decode_at, row, run

from tessera.control import Trap
from tessera_phoenix import causes
from tessera_phoenix.encoding import TOO_MANY_POSTFIXES
from tessera_phoenix.postfix import merge, postfix_word, postfixes_needed, sext, split

BASE = 0x2000


def enc(mnemonic: str, index: int = 0, **ops: int) -> int:
    e = row(mnemonic, index)
    full = {"sz": 2, "mask": 0, **ops}
    return ENC.encode(e, {k: v for k, v in full.items() if k in e.operand_names})


ADDI = enc("addi", rt=1, ra=2, imm=0)


def test_table_no_postfix_value_is_the_sign_extended_field():
    ins = decode_at(BASE, [enc("addi", rt=1, ra=2, imm=-5), enc("add", rt=1, ra=1, rb=1)])
    assert (ins.value, ins.span, ins.next) == (-5, 6, BASE + 6)


def test_table_one_postfix_supplies_bits_127_19():
    ins = decode_at(BASE, [enc("ori", rt=1, ra=0, imm=0x40000 - (1 << 19)), postfix_word(0x1FFF)])
    assert ins.value == 0xFFFC0000  # imm[18:0] from the own field, imm[63:19] = P
    assert ins.span == 12 and ins.next == BASE + 6


def test_table_negative_postfix_sign_extends_to_128_bits():
    ins = decode_at(BASE, [enc("addi", rt=1, ra=2, imm=5), postfix_word(-1)])
    assert ins.value == -(1 << 19) + 5


def test_table_second_postfix_supplies_bits_127_64():
    p1, p2 = 0x1234_5678_9AB, -3
    ins = decode_at(BASE, [enc("ori", rt=1, ra=0, imm=7), postfix_word(p1), postfix_word(p2)])
    assert ins.value == (p2 << 64) | (p1 << 19) | 7
    assert ins.span == 18


def test_table_third_postfix_raises_pfx_when_executed():
    ws = [ADDI, postfix_word(1), postfix_word(2), postfix_word(3)]
    ins = decode_at(BASE, ws)
    assert ins.span == 24
    assert ins.run is ins.encoding.variant(TOO_MANY_POSTFIXES).resolve()  # the declared variant
    with pytest.raises(Trap) as info:
        ins.run(None, ins)
    assert info.value.cause == causes.PFX


def test_table_third_postfix_traps_through_the_engine():
    """The engine accepts refine's swap (the row declares it) and the PFX trap is taken."""
    _, t = run_words([ADDI, postfix_word(1), postfix_word(2), postfix_word(3)], BASE, steps=1)
    assert t.cause[3] == causes.PFX and t.ip_stack[0] == BASE  # EIP: the instruction itself
    assert t.gpr[1] == 0  # addi r1, r2, 0 did not execute


def test_table_two_postfixes_do_not_trap():
    ins = decode_at(BASE, [ADDI, postfix_word(1), postfix_word(2), enc("nop")])
    assert ins.run is ins.encoding.semantics and ins.span == 18


def test_table_cmpi_postfix_keeps_sign_copies_of_imm13_in_bits_18_13():
    ins = decode_at(BASE, [enc("cmpi", rt=1, ra=2, imm13=-1), postfix_word(0)])
    assert ins.value == 0x7FFFF  # imm[18:0] = low 19 bits of sext(imm13) = all ones


def test_table_branch_postfix_extends_disp17():
    ws = [enc("beq", bra=1, brb=2, bdisp=-6), postfix_word(1)]
    ins = decode_at(BASE, ws)
    assert ins.value == (1 << 19) + ((-6) & 0x7FFFF)


@pytest.mark.parametrize("mnemonic", ["add", "csrrw", "fma", "cntlz"])
def test_table_postfix_is_ignored_by_forms_without_an_immediate(mnemonic):
    ins = decode_at(BASE, [enc(mnemonic, rt=1, ra=2, rb=3, rc=4, csr=5), postfix_word(9)])
    assert ins.span == 6 and not hasattr(ins, "value")


def test_table_jumps_ignore_postfixes_and_give_their_target():
    call = decode_at(BASE, [enc("call", lk=1, target=(0xAB << 32) | 0x1234), postfix_word(9)])
    assert (call.value, call.span) == (0x1234, 6)
    bsr = decode_at(BASE, [enc("bsr", lk=2, reltarget=-0x100), postfix_word(9)])
    assert (bsr.value, bsr.span) == (-0x100, 6)


def test_table_unfetchable_next_word_means_no_postfix():
    ins = decode_at(0xFFFF_FFFA, [ADDI])  # the next address wraps to 0, which is absent
    assert (ins.value, ins.span) == (0, 6)


@pytest.mark.parametrize("mnemonic", ["brk", "ret", "jmpr", "ld", "st", "ldsr", "stcr", "cache",
                                      "cmp_eqi", "fcmpi", "fbne", "bbs", "subfi", "muli", "xori"])
def test_table_every_postfix_capable_form_merges(mnemonic):
    ins = decode_at(BASE, [enc(mnemonic, rt=1, ra=2, imm=3, imm13=3, bdisp=3, bra=1, brb=2,
                               bit=2, ic=0, dc=0), postfix_word(2)])
    assert ins.value == (2 << 19) | 3


WIDTHS = st.sampled_from([19, 13, 17])
VALUES = st.one_of(st.integers(-(1 << 20), 1 << 20), st.integers(-(1 << 110), 1 << 110))


@given(value=VALUES, width=WIDTHS)
def test_table_split_then_merge_gives_the_value_back(value, width):
    need = postfixes_needed(value, width)
    if need is None:
        top = sext(value, 19) >> (width - 1)
        assert top not in (0, -1) or not -(1 << 108) <= value < 1 << 108
        return
    for count in range(need, 3):  # redundant postfixes change nothing
        own, payloads = split(value, width, count)
        assert -(1 << (width - 1)) <= own < 1 << (width - 1)
        assert len(payloads) == count
        assert merge(own, payloads) == value


def test_table_postfixed_immediates_execute_and_the_postfix_runs_as_a_nop():
    m, t = run("""
        ldi r1, 0xFFFC0000
        addi r2, r1, 0x12345678
        cmp_eqi r3, r2, 0x12300000
        cmp_gtui r4, r2, 0x12300000
        bra .
    """)
    assert t.status == "halted" and t.pc == 0x1000 + 8 * 6  # four instructions, four postfixes
    assert [t.gpr[i] for i in (1, 2, 3, 4)] == [0xFFFC0000, 0x12305678, 0, 1]


def test_table_rewriting_a_postfix_invalidates_the_decoded_instruction():
    m, t = run("start: ldi r1, 0x80000\n bra .")
    assert t.gpr[1] == 0x80000
    m.space.write_bytes(0x1006, postfix_word(2).to_bytes(6, "little"))
    t.pc, t.status = 0x1000, "runnable"
    m.run(max_steps=100, raise_on_budget=False)
    assert t.gpr[1] == 0x100000
