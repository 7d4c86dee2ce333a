"""The rfPhoenix assembler: pseudo-ops, operand spellings, automatic postfixes, errors."""

from __future__ import annotations

import pytest
from table_support import DIS, decode_at, words
from table_support import assemble as assemble_at

from tessera.errors import AssemblyError

BASE = 0xFFFD0000


def assemble(text: str, base: int = BASE, file: str = "<input>") -> bytes:
    return assemble_at(text, base, file)


def same(a: str, b: str, base: int = BASE) -> None:
    assert assemble(a, base) == assemble(b, base), (a, b)


@pytest.mark.parametrize(("pseudo", "real"), [
    ("ldi r1, 42", "ori r1, r0, 42"),
    ("ldi.w v1, -3, vm1", "ori.w v1, r0, -3, vm1"),
    ("mov r1, r2", "or r1, r2, r0"),
    ("mov v1, v2, vm3", "or v1, v2, r0, vm3"),
    ("neg r1, r2", "sub r1, r0, r2"),
    ("com r1, r2", "xori r1, r2, -1"),
    ("not r1, r2", "xori r1, r2, -1"),
    ("fmul v1, v2, v3", "fma v1, v2, v3, r0"),
    ("fmul.w v1, v2, v3, rtz, vm0", "fma.w v1, v2, v3, r0, rtz, vm0"),
    ("ret", "ret sp, lr1, 0"),
    ("rts #16", "ret r47, r57, 16"),
    ("ldt v1, 0[r2]", "ld.t v1, 0[r2]"),
    ("stt v1, 16[r2]", "st.t v1, 16[r2]"),
    ("load.b r1, 4[r2]", "ld.b r1, 4[r2]"),
    ("loadu.w r1, 4[r2]", "ldu.w r1, 4[r2]"),
    ("store r1, 4[r2]", "st.t r1, 4[r2]"),
    ("vmovs r1, v2, r3", "vex r1, v2, r3"),
    ("ld r1, [r2]", "ld r1, 0[r2]"),
    ("ld.b r1, [ r2 + r3 ]", "ldx.b r1, [r2+r3]"),
    ("st v1, [r2+v3], vm1", "stx v1, [r2+v3], vm1"),
    ("ldsr r1, [r2+r3]", "ldsrx r1, [r2+r3]"),
    ("stcr r1, [r2]", "stcr r1, 0[r2]"),
    ("cache 1, 3, [r2+r3]", "cachex 1, 3, [r2+r3]"),
    ("cache 1, 3, [r2]", "cache 1, 3, 0[r2]"),
    ("brk", "brk r0, 0"),
    ("brk #7", "brk r0, 7"),
    ("call sub\nsub: nop", "call lr1, sub\nsub: nop"),
    ("call r58, sub\nsub: nop", "call lr2, sub\nsub: nop"),
    ("bsr sub\nsub: nop", "bsr lr1, sub\nsub: nop"),
    ("addi r1, r2, #5", "addi r1, r2, 5"),
    ("bbs r1, #3, .", "bbs r1, 3, ."),
    ("csrrd r1, r0, hartid", "csrrd r1, r0, 0x3001"),
    ("csrrw r0, r1, tvec3", "csrrw r0, r1, 0x3033"),
    ("csrrs r1, r2, ustatus", "csrrs r1, r2, 0x0004"),
    ("csrrd r1, r0, cause", "csrrd r1, r0, 0x3006"),
])
def test_table_pseudo_ops_and_spellings(pseudo, real):
    same(pseudo, real)


@pytest.mark.parametrize(("pseudo", "real"), [
    ("bgt r1, r2, .", "blt r2, r1, ."), ("ble r1, r2, .", "bge r2, r1, ."),
    ("bgtu r1, r2, .", "bltu r2, r1, ."), ("bleu.w r1, r2, .", "bgeu.w r2, r1, ."),
])
def test_table_swapped_branch_pseudo_ops(pseudo, real):
    same(pseudo, real)


def test_table_branches_to_labels_backward_and_forward():
    data = assemble("top: nop\n beq r1, r2, top\n bne r1, r0, done\n bra top\n done: jmp top")
    texts = [DIS.word(w, BASE + 6 * i) for i, w in enumerate(words(data))]
    assert texts == ["nop", f"beq r1, r2, {BASE:#x}", f"bne r1, r0, {BASE + 24:#x}",
                     f"bra {BASE:#x}", f"jmp {BASE:#x}"]


def test_table_big_immediate_gets_a_postfix():
    ws = words(assemble("ldi r1, 0xFFFC0000"))
    assert len(ws) == 2 and DIS.word(ws[1]) == "pfx 0x1fff"
    assert decode_at(BASE, ws).value == 0xFFFC0000


@pytest.mark.parametrize(("source", "count", "value"), [
    ("addi r1, r2, 0x3FFFF", 1, 0x3FFFF),            # largest 19-bit value: no postfix
    ("addi r1, r2, -0x40000", 1, -0x40000),
    ("addi r1, r2, 0x40000", 2, 0x40000),            # one more: a postfix
    ("ldi r1, 0xFFFFFFFF", 2, 0xFFFFFFFF),            # values are exact, not 32-bit wrapped
    ("ldi r1, -1", 1, -1),
    ("cmpi r1, r2, 4095", 1, 4095),                   # 13-bit field
    ("cmpi r1, r2, -0x80000", 2, -0x80000),           # bits 18:12 all sign copies: encodable
    ("ldi.o v1, 0x7FFFFFFFFFFFFFFF", 2, (1 << 63) - 1),
    ("ldi.h v1, 0x8000000000000000", 3, 1 << 63),    # beyond 64 bits: a second postfix
    ("ldi.h v1, -0x123456789ABCDEF0123456", 3, -0x123456789ABCDEF0123456),
    ("st r1, -0x100000[r2]", 2, -0x100000),
    ("jmpr r0, 0x12345678[r3]", 2, 0x12345678),
    ("brk #0x40000", 2, 0x40000),
])
def test_table_postfixes_are_inserted_only_when_needed(source, count, value):
    ws = words(assemble(source))
    assert len(ws) == count
    assert decode_at(BASE, ws).value == value


def test_table_forward_references_are_sized_by_relaxation():
    src = "ldi r1, end\n ldi r2, end\n addi r3, r0, small\n end: nop\n small = 5"
    ws = words(assemble(src))
    assert len(ws) == 6  # two postfixed loads of a far address, one plain addi, the nop
    end = BASE + 5 * 6
    assert decode_at(BASE, ws, 0).value == end
    assert decode_at(BASE, ws, 2).value == end
    assert decode_at(BASE, ws, 4).value == 5


def test_table_far_forward_branch_gets_a_postfix():
    ws = words(assemble("beq r1, r2, far\n .space 0x80000 - 12\n far: nop", 0x1000))
    ins = decode_at(0x1000, ws[:2])
    assert ins.value == 0x80000 and ins.span == 12


def test_table_listing_with_postfixes_reassembles_to_the_same_bytes():
    data = assemble("ldi r1, 0xFFFC0000\n cmp_eqi r2, r1, -0x80000\n nop")
    text = "\n".join(DIS.word(w, BASE + 6 * i) for i, w in enumerate(words(data)))
    assert assemble(text) == data


def test_table_hash_marks_immediates_and_semicolon_or_slashes_start_comments():
    same("addi r1, r2, #5 ; comment\n nop // another", "addi r1, r2, 5\n nop")


def test_table_base_directives_still_work():
    data = assemble(".word 0x11223344\n .byte 1, 2\n nop")
    assert data[:6] == bytes([0x44, 0x33, 0x22, 0x11, 1, 2]) and len(data) == 12


@pytest.mark.parametrize(("source", "column", "message"), [
    ("nop\n  frob r1, r2", 3, "unknown mnemonic 'frob'"),
    ("nop\nadd r1, r2, r99", 13, "unknown register"),
    ("nop\nslli r1, r2, 64", 14, "shamt=64"),
    ("nop\nadd.q r1, r2, r3", 4, "unknown suffix '.q'"),
    ("nop\ncmp_eqi r3, r2, 0x12305678", 17, "cannot be encoded"),
    ("nop\nbeq r1, r2, far\n .space 0x10000\nfar: nop", 13, "use bra/jmp"),
    ("nop\nori r1, r0, 1 << 120", 13, "does not fit in 109 bits"),
    ("nop\nldi r1, 1 << 120", 1, "(in the expansion of 'ldi')"),  # expansions: the mnemonic
    ("nop\nld r1, 4[r2", 12, "expected"),
])
def test_table_assembler_errors_name_file_line_column(source, column, message):
    with pytest.raises(AssemblyError) as info:
        assemble(source, file="prog.s")
    err = info.value
    assert (err.file, err.line, err.column) == ("prog.s", 2, column), str(err)
    assert message in str(err)
    assert str(err).startswith(f"prog.s:2:{column}:")
