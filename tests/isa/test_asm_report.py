"""The assembler reports every error of a run, in source order, without cascades."""

import pickle

import pytest
from isa_toyarch import ToyAssembler, toy32, toyx

from tessera.errors import AssemblyError, EncodeError
from tessera.isa.asm import Assembler, assemble
from tessera.isa.asm.report import MAX_SHOWN, AssemblyErrors

ARCH = toy32()


def errors_of(text, arch=ARCH, cls=AssemblyError, **kw):
    with pytest.raises(cls) as info:
        assemble(arch, text, file="t.s", **kw)
    return info.value


def where(err) -> tuple[int, int, str]:
    return err.line, err.column, err.message


def test_every_error_in_source_order_with_file_line_column():
    err = errors_of("""\
        frob r1
        addi r1, r2, 99999
        .byte 300
        ld r1, 4(r9)
        halt
        .wrod 1
""")
    assert [where(e) for e in err.errors] == [
        (1, 9, "unknown mnemonic 'frob'"),
        (2, 22, "addi: imm=99999 does not fit in -2048..2047"),
        (3, 15, "value 300 does not fit in 1 byte (-128..255)"),
        (4, 18, "unknown register 'r9'"),
        (6, 9, "unknown directive '.wrod'; did you mean '.word'?"),
    ]
    assert str(err).splitlines() == [
        "t.s:1:9: assembly error: unknown mnemonic 'frob'",
        "t.s:2:22: encode error: addi: imm=99999 does not fit in -2048..2047",
        "t.s:3:15: assembly error: value 300 does not fit in 1 byte (-128..255)",
        "t.s:4:18: assembly error: unknown register 'r9'",
        "t.s:6:9: assembly error: unknown directive '.wrod'; did you mean '.word'?",
    ]
    # the exception stands for the first error: its class, position and message
    assert type(err) is AssemblyErrors and not isinstance(err, EncodeError)
    assert (err.file, err.line, err.column, err.message) == ("t.s", 1, 9, "unknown mnemonic 'frob'")
    assert err.exit_code == 73


def test_first_error_decides_the_class_and_exit_status():
    err = errors_of("addi r1, r2, 4096\nfrob", cls=EncodeError)
    assert err.exit_code == 74 and err.kind == "encode error"
    assert [type(e) for e in err.errors] == [EncodeError, AssemblyError]


def test_a_single_error_is_one_line_and_has_errors_too():
    err = errors_of("halt\nfrob")
    assert str(err) == "t.s:2:1: assembly error: unknown mnemonic 'frob'"
    assert len(err.errors) == 1 and err.errors[0].message == err.message


def test_syntax_errors_and_pass_errors_are_collected_together():
    err = errors_of("x: @\n beq r0, r0, nowhere\n 5 + 2\n halt")
    assert [where(e) for e in err.errors] == [
        (1, 4, "expected a label, directive or instruction, not '@'"),
        (2, 14, "undefined symbol 'nowhere'"),
        (3, 2, "expected a label, directive or instruction, not '5'"),
    ]


def test_failed_instruction_keeps_its_room_so_later_offsets_are_real():
    # 'frob' fails in the layout pass; it still takes a word, so 'target' is at 8 and the
    # branch's offset is computed as it will be once the line is fixed: no second error
    err = errors_of("frob r1\ntarget: halt\nbeq r0, r0, target\n.org target + 8\n.word .")
    assert [where(e) for e in err.errors] == [(1, 1, "unknown mnemonic 'frob'")]


def test_a_line_failing_only_in_the_final_pass_does_not_move_later_labels():
    err = errors_of("jmp nowhere\nl: halt\nbeq r0, r0, l\n.word l")
    assert [where(e) for e in err.errors] == [(1, 5, "undefined symbol 'nowhere'")]


def test_failed_definition_is_reported_once_not_at_every_use():
    err = errors_of("""\
        li r1, size
        x = 3 +
        .equ size
        addi r1, r1, x
        .word x, size, x + 1
        ld r2, x(r3)
        .word other
""")
    assert [where(e) for e in err.errors] == [
        (2, 16, "expected a value"),
        (3, 14, "usage: .equ name, value"),
        (7, 15, "undefined symbol 'other'"),
    ]


def test_a_label_on_a_line_that_does_not_parse_is_still_defined():
    err = errors_of("top: @@\njmp top")
    assert [e.line for e in err.errors] == [1]


def test_each_use_of_a_never_defined_symbol_is_reported():
    err = errors_of("jmp nowhere\njmp nowhere")
    assert [(e.line, e.message) for e in err.errors] == [(1, "undefined symbol 'nowhere'"),
                                                         (2, "undefined symbol 'nowhere'")]


def test_an_error_repeated_by_several_passes_is_reported_once():
    err = errors_of("a: halt\na: halt\n.data\n.word 1")
    assert [where(e) for e in err.errors] == [(2, 1, "'a' is already defined on line 1")]


def test_errors_inside_expansions_are_collected():
    err = errors_of("bad\nhalt\nbad", arch=toy32(assembler=ToyAssembler), cls=EncodeError)
    assert [where(e) for e in err.errors] == [
        (1, 1, "addi: imm=99999 does not fit in -2048..2047 (in the expansion of 'bad')"),
        (3, 1, "addi: imm=99999 does not fit in -2048..2047 (in the expansion of 'bad')")]


def test_output_limit_is_reported_once_and_later_lines_judged_alone():
    err = errors_of(".space 0x10000000\n.space 0x10000000\nfrob")
    assert [(e.line, e.message) for e in err.errors] == [
        (2, "program output exceeds 256 MiB"), (3, "unknown mnemonic 'frob'")]


def test_many_errors_are_shown_up_to_a_limit():
    count = MAX_SHOWN + 7
    err = errors_of("\n".join(f"frob{i}" for i in range(count)))
    assert len(err.errors) == count
    lines = str(err).splitlines()
    assert len(lines) == MAX_SHOWN + 1
    assert lines[0] == "t.s:1:1: assembly error: unknown mnemonic 'frob0'"
    assert lines[-2].startswith(f"t.s:{MAX_SHOWN}:1:")
    assert lines[-1] == "... and 7 more errors"


def test_errors_pickle():
    err = errors_of("frob\naddi r1, r1, 99999")
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is type(err) and str(back) == str(err)
    assert [where(e) for e in back.errors] == [where(e) for e in err.errors]


def test_errors_of_a_suffix_architecture_and_through_assemble():
    with pytest.raises(AssemblyError) as info:
        assemble(toyx(), "ld.q r1, 0[r2]\nshl r1, r2, 99\nfence.cta", file="x.s")
    assert [(e.line, e.column) for e in info.value.errors] == [(1, 3), (2, 13)]
    assert info.value.errors[1].message == "shl: sh=99 does not fit in 0..31"


def test_a_valid_program_still_assembles_after_all_this():
    prog = Assembler(ARCH).assemble("a: addi r1, r1, 1\nbne r1, r2, a\nhalt")
    assert prog.size == 12 and dict(prog.symbols) == {"a": 0}
