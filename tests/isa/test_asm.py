"""The generic assembler: labels, expressions, directives, sections, hooks and errors."""

import pytest
from isa_toyarch import REGS, ToyAssembler, toy32, toy48

from tessera.errors import AssemblyError, ConfigError, EncodeError
from tessera.isa import Architecture, Decoder, Encoding, Field
from tessera.isa.asm import Assembler, Program, assemble, split_operands

ARCH = toy32()
DEC = Decoder(ARCH)


def asm(text, arch=ARCH, **kw) -> Program:
    return Assembler(arch).assemble(text, **kw)


def blob(text, arch=ARCH, **kw) -> bytes:
    prog = asm(text, arch, **kw)
    assert len(prog.segments) == 1, prog.segments
    return prog.segments[0][1]


def decoded(text, **kw):
    """``[(mnemonic, operands)]`` of the assembled words."""
    addr, data = asm(text, **kw).image()
    return [(ins.mnemonic, ins.operands) for ins in
            (DEC.decode(int.from_bytes(data[i:i + 4], "little"), addr + i)
             for i in range(0, len(data), 4))]


def error(text, arch=ARCH, cls=AssemblyError, **kw) -> AssemblyError:
    with pytest.raises(cls) as info:
        Assembler(arch).assemble(text, **kw)
    return info.value


def where(err) -> tuple[int, int, str]:
    return err.line, err.column, err.message


# -- instructions and labels ---------------------------------------------------------

def test_labels_forward_and_backward():
    prog = asm("""
start:  beq r0, r0, fwd
back:   halt
fwd:    bne r1, r2, back
        jmp start
""")
    assert dict(prog.symbols) == {"start": 0, "back": 4, "fwd": 8}
    assert decoded("""
start:  beq r0, r0, fwd
back:   halt
fwd:    bne r1, r2, back
        jmp start
""") == [("beq", {"rs1": 0, "rs2": 0, "off": 8}), ("halt", {}),
         ("bne", {"rs1": 1, "rs2": 2, "off": -4}), ("jmp", {"target": -12})]


def test_several_labels_on_a_line_and_case_insensitivity():
    prog = asm("a: b:  ADD R1, r2, SP\n.L1: a$b.c: Halt")
    assert dict(prog.symbols) == {"a": 0, "b": 0, ".L1": 4, "a$b.c": 4}
    assert decoded("a: b:  ADD R1, r2, SP") == [("add", {"rd": 1, "rs1": 2, "rs2": 7})]


def test_operand_expressions():
    assert decoded("""
        .equ size, 3
        addi r1, r0, (3 + 4) * 2 - 'a' % 7
        ld r2, size * 4(r3)
        ld r2, (size)(r3)
start:  li r1, end - start
        beq r0, r0, . + 8
        addi r1, r0, -(1 << 11)
end:
""") == [("addi", {"rd": 1, "rs1": 0, "imm": 8}), ("ld", {"rd": 2, "rs1": 3, "imm": 12}),
         ("ld", {"rd": 2, "rs1": 3, "imm": 3}), ("li", {"rd": 1, "uimm": 12}),
         ("beq", {"rs1": 0, "rs2": 0, "off": 8}), ("addi", {"rd": 1, "rs1": 0, "imm": -2048})]


def test_forms_sharing_a_mnemonic_and_dotted_mnemonics():
    assert decoded("jmp (r3)\njmp 0\nsem.wait sp") == [
        ("jmp", {"rs1": 3}), ("jmp", {"target": -4}), ("sem.wait", {"rs1": 7})]


def test_enum_operands_by_name_or_value():
    assert decoded("mode MACHINE\nmode user\nmode 1 + 1") == [
        ("mode", {"mode": 3}), ("mode", {"mode": 0}), ("mode", {"mode": 2})]


def test_comments():
    data = blob("""# whole line
    // also whole line
    addi r1, r0, '#'   ; trailing
    .ascii "a;b#c//d"  // trailing
    .byte ';'          # trailing""")
    assert data[4:] == b"a;b#c//d;"
    assert decoded("addi r1, r0, '#' ; x") == [("addi", {"rd": 1, "rs1": 0, "imm": 35})]


def test_comment_chars_come_from_the_architecture():
    assert blob("halt ! stop\n  ! nothing", toy48()) == bytes.fromhex("ff0000000000")
    err = error("movi r1, 1 # 2", toy48())
    assert where(err) == (1, 12, "unexpected '#'")


def test_48_bit_big_endian_words():
    data = blob("movi r1, 0x12345678\nloop: jmp loop\naddi r2, sp, -1", toy48())
    assert data == bytes.fromhex("021012345678" "030000000000" "0127ffffffff")
    assert blob(".half 0x1234\n.word 0x01020304", toy48()) == bytes.fromhex("123401020304")


# -- directives ------------------------------------------------------------------------

def test_data_directives_little_endian():
    assert blob(".byte 1, -1, 255, 'A'\n.half 0x1234, -2\n.word 0x12345678\n.dword -1") == (
        bytes.fromhex("01ffff41" "3412feff" "78563412") + b"\xff" * 8)


def test_data_item_location_is_its_own_address():
    assert blob(".org 0x10\n.byte ., .") == b"\x10\x11"


@pytest.mark.parametrize("text, column, message", [
    (".byte 1, 256", 10, "value 256 does not fit in 1 byte (-128..255)"),
    (".half -32769", 7, "value -32769 does not fit in 2 bytes (-32768..65535)"),
    (".word 1 << 32", 7, "value 4294967296 does not fit in 4 bytes (-2147483648..4294967295)"),
    (".byte", 6, "usage: .byte value[, value ...]"),
    (".byte 1,,2", 9, "missing operand"),
])
def test_data_value_errors(text, column, message):
    assert where(error(text)) == (1, column, message)


def test_space_zero_and_strings():
    assert blob('.space 3\n.space 2, 0xAA\n.zero 2\n.ascii "ab", "c"\n.asciz "hi"\n'
                '.string "x\\ty"') == b"\0\0\0\xaa\xaa\0\0abchi\0x\ty\0"


def test_alignment():
    assert blob(".byte 1\n.align 8\n.byte 2") == b"\x01" + b"\0" * 7 + b"\x02"
    assert blob(".byte 1\n.align 4, 0xff\n.byte 2") == b"\x01\xff\xff\xff\x02"
    assert blob(".byte 1\n.p2align 3\n.byte 2") == b"\x01" + b"\0" * 7 + b"\x02"
    assert blob(".byte 1\n.align 1\n.byte 2") == b"\x01\x02"
    assert where(error(".align 3")) == (1, 8, "alignment 3 is not a power of two in the "
                                              "address space")
    assert where(error(".p2align 40")) == (1, 10, "alignment exponent 40 is not in 0..32")


def test_org_and_image():
    prog = asm("halt\n.org 0x10\n.byte 7")
    assert prog.segments == ((0, bytes.fromhex("73000000")), (0x10, b"\x07"))
    assert prog.size == 5
    assert prog.image() == (0, bytes.fromhex("73000000") + b"\0" * 12 + b"\x07")
    assert prog.image(fill=0xEE)[1][4:16] == b"\xee" * 12
    assert Program().image() == (0, b"")


def test_image_refuses_a_huge_span():
    prog = asm(".byte 1\n.org 0x20000000\n.byte 2")
    assert prog.size == 2
    with pytest.raises(AssemblyError, match="256 MiB"):
        prog.image()


def test_equ_set_and_assignment():
    prog = asm(".equ N, 10\n.set M, N * 2\nK = M + 1\n.byte N, M, K\n"
               ".set v, 1\n.byte v\n.set v, v + 1\n.byte v\nv = 9")
    assert prog.segments[0][1] == bytes([10, 20, 21, 1, 2])
    assert {k: prog.symbols[k] for k in "NMKv"} == {"N": 10, "M": 20, "K": 21, "v": 9}


def test_assignments_may_refer_forward():
    prog = asm(".word SIZE, A\n.equ A, B + 1\n.equ B, C * 2\n.equ C, end\n"
               ".equ SIZE, end - start\nstart: .space 6\nend:")
    assert prog.symbols["SIZE"] == 6
    assert prog.symbols["A"] == 2 * 14 + 1
    assert prog.segments[0][1][:8] == (6).to_bytes(4, "little") + (29).to_bytes(4, "little")


@pytest.mark.parametrize("text, line, column, message", [
    (".equ N, 1\n.equ N, 2", 2, 6, "'N' is already defined on line 1"),
    (".equ N, 1\n.set N, 2", 2, 6, "'N' is already defined on line 1"),
    ("x: halt\nx = 1", 2, 1, "'x' is already defined on line 1"),
    (".set y, 1\ny: halt", 2, 1, "'y' is already defined on line 1"),
    (".equ 5x, 1", 1, 6, "'5x' is not a valid symbol name"),
    (".equ A, B\n.equ B, A\n.word A", 1, 9, "undefined symbol 'B'"),
    (".equ X", 1, 6, "usage: .equ name, value"),
    (". : halt", 1, 1, "'.' is the current location and cannot be defined"),
])
def test_symbol_errors(text, line, column, message):
    assert where(error(text)) == (line, column, message)


def test_global_and_entry():
    assert asm(".globl main\n.global a, b\nmain: halt\n.entry main").entry == 0
    assert asm("halt\n_start: halt").entry == 4
    assert asm("halt\n_start: halt\n.entry 0").entry == 0
    assert asm("halt").entry is None
    assert where(error(".global 1x")) == (1, 9, "'1x' is not a valid symbol name")
    assert where(error(".entry 0\n.entry 4")) == (2, 8, "the entry point is already set on line 1")
    assert where(error(".entry -4")) == (1, 8, "entry point -4 is outside the address space")


# -- sections --------------------------------------------------------------------------

SECTIONS = """\
        .text
_start: jmp main
        .data
value:  .word 7
        .text
main:   ld r1, value(r0)
        ld r2, msg(r0)
        add r1, r1, r2
        add r1, r1, r2
        halt
        .section .rodata
msg:    .asciz "hey"
"""


def test_sections_follow_each_other_16_byte_aligned():
    prog = asm(SECTIONS)
    # .text holds 6 words (0..0x18), so .data starts at 0x20 and .rodata at 0x30, even
    # though only one word of .text preceded .data's first appearance.
    assert prog.symbols["value"] == 0x20
    assert prog.symbols["msg"] == 0x30
    assert [(a, len(d)) for a, d in prog.segments] == [(0, 24), (0x20, 4), (0x30, 4)]
    assert prog.segments[2][1] == b"hey\0"
    loads = [DEC.decode(int.from_bytes(prog.segments[0][1][i:i + 4], "little")) for i in (4, 8)]
    assert [(ld.mnemonic, ld.imm) for ld in loads] == [("ld", 0x20), ("ld", 0x30)]


def test_sections_start_after_base():
    prog = asm("halt\n.data\n.byte 1", base=0x1000)
    assert prog.segments == ((0x1000, bytes.fromhex("73000000")), (0x1010, b"\x01"))


def test_section_with_its_own_org():
    prog = asm("halt\n.section vectors\n.org 0x800\n.word 1\n.data\nd: .byte 2")
    assert [a for a, _ in prog.segments] == [0, 0x800, 0x810]
    assert prog.symbols["d"] == 0x810


def test_unsettled_layout_is_an_error():
    err = error("halt\n.data\nd: .word 0\n.text\n.space d & 16")
    assert where(err)[:2] == (2, 1)
    assert "does not settle" in err.message


@pytest.mark.parametrize("text, line, column, message", [
    ("halt\nhalt\n.data\n.org 4\n.word 1", 5, 7, "output at 0x4 overlaps output of line 2"),
    ("halt\nhalt\n.org 0\n  nop", 4, 3, "output at 0x0 overlaps output of line 1"),
    (".text foo", 1, 7, ".text takes no operands"),
    (".section 'x'", 1, 10, "\"'x'\" is not a valid section name"),
])
def test_section_errors(text, line, column, message):
    assert where(error(text)) == (line, column, message)


# -- errors ------------------------------------------------------------------------------

@pytest.mark.parametrize("text, line, column, message", [
    ("halt\n    addi r1, r2, 5000", 2, 18, "addi: imm=5000 does not fit in -2048..2047"),
    ("add r1, r9, r2", 1, 9, "unknown register 'r9'"),
    ("add r1, spp, r2", 1, 9, "unknown register 'spp'; did you mean 'sp'?"),
    ("  ad r1, r2, r3", 1, 3, "unknown mnemonic 'ad'; did you mean 'add'?"),
    ("frobnicate", 1, 1, "unknown mnemonic 'frobnicate'"),
    ("beq r1, r2, nowhere", 1, 13, "undefined symbol 'nowhere'"),
    ("addi r1, r2", 1, 12, "expected 'addi rd, rs1, imm'"),
    ("add r1, r2, r3, r4", 1, 15, "expected 'add rd, rs1, rs2'"),
    ("halt r1", 1, 6, "halt takes no operands"),
    ("jmp r1, r2", 1, 7, "jmp expects one of: jmp target | jmp (rs1)"),
    ("beq r0, r0, 0x2000", 1, 13, "beq: off=8192 does not fit in -4096..4094 (target 0x2000)"),
    ("beq r0, r0, 3", 1, 13, "beq: off=3 is not a multiple of 2 (target 0x3)"),
    ("beq r0, r0, -4", 1, 13, "target -4 is outside the 32-bit address space"),
    ("mode 4", 1, 6, "mode: mode=4 does not fit in 0..3"),
    ("mode kernel", 1, 6, "undefined symbol 'kernel'"),
    ("ldw r1, 6(r2)", 1, 9, "ldw: woff=6 is not a multiple of 4"),
    ("ld r1, 8(r2", 1, 12, "expected 'ld rd, imm(rs1)'"),
    ("addi r1, r2, 1 +", 1, 17, "expected a value"),
    ("addi r1, r2, 4/0", 1, 15, "division by zero"),
    ("li r1, -1", 1, 8, "li: uimm=-1 does not fit in 0..65535"),
    (".wrod 1", 1, 1, "unknown directive '.wrod'; did you mean '.word'?"),
    ("123", 1, 1, "expected a label, directive or instruction, not '1'"),
    ("x: @", 1, 4, "expected a label, directive or instruction, not '@'"),
    ('.ascii "abc', 1, 8, "unterminated string"),
    ('.ascii "a" x', 1, 12, "unexpected 'x' after the string"),
    (".org later\nlater: halt", 1, 6,
     "undefined symbol 'later' (a value that decides the layout must be defined before it "
     "is used)"),
    (".org 0xfffffffc\nhalt\nhalt", 3, 1, "output at 0x100000000 runs past the end of the 32-bit "
                                         "address space"),
    (".org 0x100000001", 1, 6, "address 4294967297 is outside the 32-bit address space"),
    (".space -1", 1, 8, "negative size -1"),
    (".space 0x10000001", 1, 8, "268435457 bytes exceed the 256 MiB output limit"),
    (".space 4, 300", 1, 11, "fill value 300 does not fit in a byte"),
])
def test_error_positions(text, line, column, message):
    err = error(text)
    assert where(err) == (line, column, message)


def test_error_text_names_the_file():
    err = error("halt\n    addi r1, r2, 5000", file="prog.s", cls=EncodeError)
    assert str(err) == "prog.s:2:18: encode error: addi: imm=5000 does not fit in -2048..2047"


def test_total_output_is_bounded():
    err = error(".space 0x8000000\n.space 0x8000000\n.byte 1")
    assert where(err) == (3, 7, "program output exceeds 256 MiB")


def test_base_outside_address_space():
    with pytest.raises(AssemblyError, match="base address"):
        asm("halt", base=1 << 32)


def test_fields_that_collide_are_caught_by_reading_back():
    arch = Architecture("cp", 32, (REGS,),
                        (Field("rd", "9:7", kind="reg", regfile="r"),
                         Field("rs", "9:7", kind="reg", regfile="r")),
                        (Encoding("cp", 0x01, 0xFFFFFFFF & ~(7 << 7), "{rd}, {rs}"),))
    assert asm("cp r2, r2", arch).segments[0][1] == (0x101).to_bytes(4, "little")
    err = error("cp r1, r2", arch, cls=EncodeError)
    assert where(err) == (1, 4, "cp: rd=1 does not survive encoding with the other operands "
                                "(fields share bits)")


def test_operands_overlapping_fixed_bits_are_refused_when_the_architecture_is_built():
    # Such a form could never encode most operand values; the description refuses it.
    with pytest.raises(ConfigError, match="operand 'imm' overlaps the fixed bits"):
        Architecture("fix", 32, (REGS,), (Field("imm", "7:0"),),
                     (Encoding("f", 0x00, 0xFF, "{imm}"),))


# -- extension hooks ---------------------------------------------------------------------

TOY = toy32(assembler=ToyAssembler)


def test_assemble_uses_the_architecture_assembler():
    assert assemble(TOY, "mv r1, r2").segments == asm("addi r1, r2, 0").segments
    assert where(error("mv r1, r2")) == (1, 1, "unknown mnemonic 'mv'")


def test_expansions_and_extra_directives():
    prog = assemble(TOY, "call2 end\n.twice 0x41\n.word 1\nend: halt")
    data = prog.segments[0][1]
    words = [DEC.decode(int.from_bytes(data[i:i + 4], "little"), i) for i in (0, 4)]
    assert [w.operands["target"] for w in words] == [14, 10]
    assert data[8:14] == b"AA\x01\0\0\0"


@pytest.mark.parametrize("text, message", [
    ("  bad", "addi: imm=99999 does not fit in -2048..2047 (in the expansion of 'bad')"),
    ("  loop", "pseudo-instructions nest deeper than 8 (in the expansion of 'loop')"),
])
def test_expansion_errors_point_at_the_original_line(text, message):
    with pytest.raises(AssemblyError) as info:
        assemble(TOY, "halt\n" + text)
    assert where(info.value) == (2, 3, message)


def test_expansion_may_not_define_labels():
    class LabelAsm(Assembler):
        def expand(self, mnemonic, operands_text, location):
            return ["x: halt"] if mnemonic == "lab" else None

    with pytest.raises(AssemblyError, match="may not define labels"):
        LabelAsm(ARCH).assemble("lab")


def test_hook_sees_the_context_and_passes():
    seen = []

    class Spy(Assembler):
        def expand(self, mnemonic, operands_text, location):
            if mnemonic != "li2":
                return None
            value = self.context.value(operands_text.split(",", 1)[1], layout=False)
            seen.append((self.context.final, location, value))
            return [f"li {operands_text}"]

    prog = Spy(ARCH).assemble("halt\nli2 r1, later\nlater: halt")
    assert seen[0] == (False, 4, 0)            # layout pass: 'later' not known yet
    assert seen[-1] == (True, 4, 8)
    assert prog.symbols["later"] == 8


def test_split_operands():
    assert split_operands(" a, (b, c) ,',' , \"s,t\" ") == [
        (1, "a"), (4, "(b, c)"), (12, "','"), (18, '"s,t"')]
    assert split_operands("'x,'") == [(0, "'x"), (3, "'")]  # not a character literal
    assert split_operands("   ") == []


def test_context_api_for_directive_handlers():
    class Hooked(Assembler):
        def directive(self, name, args_text, ctx):
            if name == ".table":               # .table name, count: a zeroed table + its size
                (_, sym), (offset, count) = ctx.split()
                ctx.define(sym, ctx.location, kind="equ")
                ctx.define(sym + ".size", ctx.value(count, offset, layout=True), kind="equ")
                ctx.fill(ctx.value(count, offset, layout=True), 0x5A)
                return True
            if name == ".word":                # redefine a built-in: words become bytes
                ctx.emit(bytes([ctx.value() & 0xFF]))
                return True
            return False

    prog = Hooked(ARCH).assemble("halt\n.table t, 3\n.word 0x1234\n.section .text\n.byte 1")
    assert prog.symbols["t"] == 4 and prog.symbols["t.size"] == 3
    assert prog.segments[0][1][4:] == b"ZZZ\x34\x01"
    err = error(".table")
    assert where(err) == (1, 1, "unknown directive '.table'")


def test_program_is_immutable():
    prog = asm("x: halt")
    with pytest.raises(AttributeError):
        prog.entry = 4
    with pytest.raises(TypeError):
        prog.symbols["x"] = 1
