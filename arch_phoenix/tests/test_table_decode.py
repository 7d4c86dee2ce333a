"""Decoding arbitrary words: every 48-bit word is an instruction or UNIMP, never an error.

Also pins the decoding policy of the table: which words are UNIMP (unassigned
opcodes/funcs/conditions, vector branch operands, TLB Op2 2/3) and which bits are
ignored (reserved bits, and Sz/Mask where they mean nothing).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from table_support import ARCH, DEC, DIS, ENC, refine

from tessera.control import Trap
from tessera.isa import ILLEGAL
from tessera_phoenix import causes

FIELDS = ARCH.field_map
WORDS = st.integers(0, (1 << 48) - 1)


@settings(max_examples=3000, deadline=None)
@given(word=WORDS, address=st.integers(0, 0xFFFF_FFFF), after=st.lists(WORDS, max_size=4))
def test_table_random_words_decode_or_are_unimp(word, address, after):
    ins = DEC.decode(word, address)
    text = DIS.text(ins)
    assert text
    table = {(address + 6 * (i + 1)) & 0xFFFF_FFFF: w for i, w in enumerate(after)}
    refine(ins, table.get)
    if ins.encoding is ILLEGAL:
        assert ins.trap.cause == causes.UNIMP
        return
    # a decoded word is its row's fixed bits plus operands; every other bit is ignored
    enc = ins.encoding
    kept = enc.mask
    for name in enc.operand_names:
        kept |= FIELDS[name].field_mask
    assert ENC.encode(enc, ins.operands) == word & kept
    assert ins.span in (6, 12, 18, 24)


def _r2(func: int, **bits: int) -> int:
    return 2 | func << 27 | sum(v << int(k[1:]) for k, v in bits.items())


UNIMP_WORDS = {
    "opcode 1 (40-bit PFX)": 1, "opcode 3": 3, "opcode 12": 12, "opcode 13": 13, "opcode 27": 27,
    **{f"opcode {op}": op for op in (32, 33, 34, 35, 43, 47, 50, 63)},
    **{f"R2 func {f}": _r2(f) for f in (16, 21, 30, 31, 38, 39, 47, 63)},
    **{f"R1 func1 {f}": _r2(1) | f << 20 for f in (1, 3, 10, 13, 24, 27, 33, 39, 48, 58, 63)},
    "Bcc Cnd 4": 28 | 4 << 45, "FBcc Cnd 4": 29 | 4 << 45, "FBcc Cnd 5": 29 | 5 << 45,
    "Bcc vector Ra": 28 | 6 << 45 | 1 << 19, "Bcc vector Rb": 28 | 6 << 45 | 1 << 12,
    "FBcc vector Ra": 29 | 1 << 19,
    "TLB Op2 2": _r2(7) | 2 << 37, "TLB Op2 3": _r2(7) | 3 << 37,
}


@pytest.mark.parametrize("word", UNIMP_WORDS.values(), ids=UNIMP_WORDS.keys())
def test_table_unassigned_words_are_unimp(word):
    ins = DEC.decode(word, 0x100)
    assert ins.encoding is ILLEGAL
    with pytest.raises(Trap) as info:
        ins.run(None, ins)
    assert info.value.cause == causes.UNIMP


@pytest.mark.parametrize("opcode", range(16, 24))
def test_table_every_pfx_opcode_is_a_postfix(opcode):
    top = 0x323456789AB  # bits 47:6, bit 47 set: the payload is negative
    ins = DEC.decode(top << 6 | opcode)
    assert ins.mnemonic == "pfx" and ins.pimm == (top << 3 | (opcode & 7)) - (1 << 45)


@given(rest=st.integers(0, (1 << 42) - 1))
def test_table_nop_ignores_every_other_bit(rest):
    assert DEC.decode(rest << 6 | 11).mnemonic == "nop"


def test_table_all_zero_word_is_brk():
    ins = DEC.decode(0)
    assert (ins.mnemonic, ins.rt, ins.imm) == ("brk", 0, 0)


@pytest.mark.parametrize(("word", "mnemonic"), [
    (_r2(4) | 3 << 37 | 7 << 34 | 1 << 33, "add"),          # Op2, RM, F reserved: ignored
    (15 | 0x7 << 31 | 3 << 37, "cmp_eq"),                    # vasm's Func bits in 33:31
    (_r2(1) | 1 << 26 | 2 << 20, "cntpop"),                  # R1 bit 26
    (28 | 6 << 45 | 7 << 42 | 3 << 20, "beq"),               # branch "A"/"B" bits
    (7 | 0x3F << 42 | 7 << 39 | 1 << 38 | 3 << 34, "csrrd"),  # CSR: Mask, Sz, 38, 35:34
    (26 | 0xFF << 40, "ret"), (26 | 0xFF << 40 | 1 << 39, "jmpr"),
    (_r2(1) | 8 << 20 | 7 << 17, "peekq"),                   # doc sets bits 18:17 = 11
])
def test_table_reserved_and_meaningless_bits_are_ignored(word, mnemonic):
    assert DEC.decode(word).mnemonic == mnemonic


T = 2 << 39  # Sz = .t, the default suffix


@pytest.mark.parametrize(("word", "text"), [
    (T | _r2(36) | 1 << 34 | 1 << 6 | 2 << 13 | 3 << 20, "fadd r1, r2, r3, rtz"),
    (T | _r2(36) | 5 << 34, "fadd r0, r0, r0, rm5"),             # reserved RM decodes (runs as RNE)
    (T | _r2(27) | 1 << 33, "sll r0, r0, r0, 1"),                 # explicit fill bit
    (T | 15 | 3 << 27, "cmp r0, r0, r0, 3"),                      # reserved N: its own spelling
    (T | 14 | 7 << 33, "cmpi r0, r0, 0, 7"),
    (24 | 3 << 6, "call lk3, 0"),                             # Lk 3: decodes, semantics say UNIMP
    (_r2(1) | 26 << 20 | 1 << 33 | 1 << 6, "rex 1, r0"),
    (_r2(1) | 26 << 20 | 0xA << 8, "rex 0, r0, 10, 0"),
])
def test_table_generic_rows_spell_values_the_named_rows_do_not_cover(word, text):
    assert DIS.word(word) == text
