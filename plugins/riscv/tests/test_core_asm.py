"""The assembler: syntax, pseudo-instructions, relocations, and the round trip of every row."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rvcore_support import ARCHS, XLENS, execute, mask, reg_index, run

from tessera.errors import AssemblyError, EncodeError
from tessera.isa import Decoder, Disassembler, Encoder
from tessera.isa.asm import assemble
from tessera_riscv.asm import li_sequence


def words(xlen: int, text: str, base: int = 0x10000) -> list[int]:
    program = assemble(ARCHS[xlen], text, base=base)
    out = []
    for _, blob in program.segments:
        out += [int.from_bytes(blob[i:i + 4], "little") for i in range(0, len(blob), 4)]
    return out


# ------------------------------------------------------------------ round trip of every row


def _operand_values(field, rng: random.Random) -> list[int]:
    lo, hi = field.value_range()
    step = 1 << field.scale
    picks = [lo, hi, 0 if lo <= 0 <= hi else lo]
    picks += [rng.randrange(lo, hi + 1, step) if field.scale else rng.randint(lo, hi) for _ in range(6)]
    return [v - v % step for v in picks]


@pytest.mark.parametrize("xlen", XLENS)
def test_every_row_disassembles_to_text_that_assembles_to_the_same_word(xlen):
    arch = ARCHS[xlen]
    enc, dis, dec = Encoder(arch), Disassembler(arch), Decoder(arch)
    fields = arch.field_map
    rng = random.Random(xlen)
    address = 0x8000_0000
    checked = 0
    for row in arch.encodings:
        samples = {name: _operand_values(fields[name], rng) for name in row.operand_names}
        for k in range(9):
            operands = {name: values[(k + i) % len(values)] for i, (name, values) in
                        enumerate(samples.items())}
            word = enc.encode(row, operands)
            assert dec.decode(word, address).mnemonic in (row.mnemonic, "nop"), (row.mnemonic, hex(word))
            text = dis.word(word, address)
            assert words(xlen, text, base=address) == [word], (row.mnemonic, text, hex(word))
            checked += 1
    assert checked >= 9 * len(arch.encodings)


@pytest.mark.parametrize("xlen", XLENS)
def test_disassembly_spelling(xlen):
    dis = Disassembler(ARCHS[xlen])
    assert dis.word(0x0000_0013) == "nop"
    assert dis.word(0xFFF5_8513) == "addi a0, a1, -1"
    assert dis.word(0x3400_2573) == "csrrs a0, mscratch, zero"
    assert dis.word(0x7C00_2573) == "csrrs a0, 0x7c0, zero"          # an unnamed CSR: its number
    assert dis.word(0x0FF0_000F) == "fence iorw, iorw"
    assert dis.word(0x0000_0063, 0x100) == "beq zero, zero, 0x100"
    assert dis.word(0x06C5_A52F) == "amoadd.w.aqrl a0, a2, (a1)"
    assert dis.word(0x00C5_A52F) == "amoadd.w a0, a2, (a1)"
    assert dis.word(0x0000_0000) == ".word 0x00000000"
    assert dis.word(0x0000_000B) == ".word 0x0000000b"                  # custom-0: not base


# ------------------------------------------------------------------ syntax


@pytest.mark.parametrize("xlen", XLENS)
def test_register_names(xlen):
    assert words(xlen, "add x10, x11, x12") == words(xlen, "add a0, a1, a2")
    assert words(xlen, "add fp, s0, x8") == words(xlen, "add s0, s0, s0")
    assert words(xlen, "ADD A0, ZERO, RA") == words(xlen, "add a0, zero, ra")
    with pytest.raises(AssemblyError, match="unknown register 'x32'"):
        words(xlen, "add a0, x32, a1")


@pytest.mark.parametrize("xlen", XLENS)
def test_memory_operands(xlen):
    assert words(xlen, "lw a0, 8(sp)") == [0x0081_2503]
    assert words(xlen, "lw a0, (sp)") == words(xlen, "lw a0, 0(sp)")
    assert words(xlen, "sw a0, -4(s0)") == [0xFEA4_2E23]
    assert words(xlen, "sb a0, (a1)") == words(xlen, "sb a0, 0(a1)")
    with pytest.raises(EncodeError, match="does not fit"):
        words(xlen, "lw a0, 2048(sp)")


@pytest.mark.parametrize("xlen", XLENS)
def test_csr_operands(xlen):
    assert words(xlen, "csrrw t0, mstatus, t1") == [0x3003_12F3]
    assert words(xlen, "csrrw t0, 0x300, t1") == [0x3003_12F3]
    assert words(xlen, "csrrw t0, 768, t1") == [0x3003_12F3]
    assert words(xlen, "csrrwi zero, MTVEC, 5") == [0x3052_D073]
    assert words(xlen, "csrr a0, mhartid") == [0xF140_2573]
    with pytest.raises(EncodeError):
        words(xlen, "csrrw t0, 0x1000, t1")


def test_rv32_only_csr_names():
    assert words(32, "csrr a0, mcycleh") == [0xB800_2573]
    assert words(64, "csrr a0, 0xb80") == [0xB800_2573]
    with pytest.raises(AssemblyError):
        words(64, "csrr a0, mcycleh")


@pytest.mark.parametrize("xlen", XLENS)
def test_amo_syntax(xlen):
    assert words(xlen, "amoswap.w a0, a1, (a2)") == [0x08B6_252F]
    assert words(xlen, "amoswap.w.aq a0, a1, (a2)") == [0x0CB6_252F]
    assert words(xlen, "amoswap.w.rl a0, a1, (a2)") == [0x0AB6_252F]
    assert words(xlen, "amoswap.w.aqrl a0, a1, (a2)") == [0x0EB6_252F]
    assert words(xlen, "amoswap.w a0, a1, 0(a2)") == [0x08B6_252F]


@pytest.mark.parametrize("xlen", XLENS)
def test_fence_forms(xlen):
    assert words(xlen, "fence") == [0x0FF0_000F]
    assert words(xlen, "fence rw, w") == [0x0310_000F]
    assert words(xlen, "fence.tso") == [0x8330_000F]
    assert words(xlen, "fence.i") == [0x0000_100F]


# ------------------------------------------------------------------ pseudo-instructions


@pytest.mark.parametrize("xlen", XLENS)
@pytest.mark.parametrize(("pseudo", "real"), [
    ("nop", "addi zero, zero, 0"),
    ("mv a0, a1", "addi a0, a1, 0"),
    ("not a0, a1", "xori a0, a1, -1"),
    ("neg a0, a1", "sub a0, zero, a1"),
    ("seqz a0, a1", "sltiu a0, a1, 1"),
    ("snez a0, a1", "sltu a0, zero, a1"),
    ("sltz a0, a1", "slt a0, a1, zero"),
    ("sgtz a0, a1", "slt a0, zero, a1"),
    ("j 0x10000", "jal zero, 0x10000"),
    ("jal 0x10000", "jal ra, 0x10000"),
    ("jr a0", "jalr zero, 0(a0)"),
    ("jalr a0", "jalr ra, 0(a0)"),
    ("jalr t0, a0", "jalr t0, 0(a0)"),
    ("jalr t0, a0, 8", "jalr t0, 8(a0)"),
    ("ret", "jalr zero, 0(ra)"),
    ("beqz a0, 0x10000", "beq a0, zero, 0x10000"),
    ("bnez a0, 0x10000", "bne a0, zero, 0x10000"),
    ("blez a0, 0x10000", "bge zero, a0, 0x10000"),
    ("bgez a0, 0x10000", "bge a0, zero, 0x10000"),
    ("bltz a0, 0x10000", "blt a0, zero, 0x10000"),
    ("bgtz a0, 0x10000", "blt zero, a0, 0x10000"),
    ("bgt a0, a1, 0x10000", "blt a1, a0, 0x10000"),
    ("ble a0, a1, 0x10000", "bge a1, a0, 0x10000"),
    ("bgtu a0, a1, 0x10000", "bltu a1, a0, 0x10000"),
    ("bleu a0, a1, 0x10000", "bgeu a1, a0, 0x10000"),
    ("csrr a0, mepc", "csrrs a0, mepc, zero"),
    ("csrw mepc, a0", "csrrw zero, mepc, a0"),
    ("csrs mstatus, a0", "csrrs zero, mstatus, a0"),
    ("csrc mstatus, a0", "csrrc zero, mstatus, a0"),
    ("csrwi mstatus, 8", "csrrwi zero, mstatus, 8"),
    ("csrsi mstatus, 8", "csrrsi zero, mstatus, 8"),
    ("csrci mstatus, 8", "csrrci zero, mstatus, 8"),
    ("rdcycle a0", "csrrs a0, cycle, zero"),
    ("rdtime a0", "csrrs a0, time, zero"),
    ("rdinstret a0", "csrrs a0, instret, zero"),
])
def test_pseudo_instruction(xlen, pseudo, real):
    assert words(xlen, pseudo) == words(xlen, real)


def test_rv64_pseudo_instructions():
    assert words(64, "sext.w a0, a1") == words(64, "addiw a0, a1, 0")
    assert words(64, "negw a0, a1") == words(64, "subw a0, zero, a1")
    assert words(64, "zext.w a0, a1") == words(64, "add.uw a0, a1, zero")
    assert words(32, "rdcycleh a0") == words(32, "csrrs a0, cycleh, zero")


@pytest.mark.parametrize("xlen", XLENS)
def test_unimp_is_an_illegal_instruction(xlen):
    assert words(xlen, "unimp") == [0xC000_1073]


@pytest.mark.parametrize("xlen", XLENS)
def test_la_call_tail_reach_their_targets(xlen):
    m, result = run("""
        .globl _start
_start: la    s0, data
        lw    s1, 0(s0)
        call  double
        tail  finish
double: add   s1, s1, s1
        ret
finish: mv    a0, s1
        li    a7, 93
        ecall
        .data
        .space 5000            # data further away than 12 bits
data:   .word 21
""", xlen)
    assert result.exit_code == 42


@pytest.mark.parametrize("xlen", XLENS)
def test_relocation_operators(xlen):
    h = execute(xlen, """
        lui   a0, %hi(0x12345FFF)
        addi  a0, a0, %lo(0x12345FFF)
here:   auipc a1, %pcrel_hi(target)
        addi  a1, a1, %pcrel_lo(here)
        j     target
        .space 0x1800
target: nop
""")
    assert h.x[reg_index("a0")] == 0x1234_5FFF
    assert h.x[reg_index("a1")] == 0x10000 + 5 * 4 + 0x1800


def test_pcrel_lo_needs_an_auipc():
    with pytest.raises(AssemblyError, match="pcrel_lo"):
        words(32, "x: nop\naddi a0, a0, %pcrel_lo(x)")


def test_negative_lui_immediate():
    assert words(32, "lui a0, -1") == words(32, "lui a0, 0xfffff")
    with pytest.raises(EncodeError):
        words(32, "lui a0, 0x100000")


@pytest.mark.parametrize("xlen", XLENS)
def test_gnu_style_directives(xlen):
    program = assemble(ARCHS[xlen], """
        .option norvc
        .attribute arch, "rv32i"
        .file "x.s"
        .type f, @function
        nop
        .align 3                 # 2**3 bytes, as GNU as does on RISC-V
a:      .quad 0x1122334455667788
        .balign 4
b:      .4byte 7
        .2byte 1
""", base=0x10000)
    assert program.symbols["a"] == 0x10008
    assert program.symbols["b"] == 0x10010


# ------------------------------------------------------------------ li


def _li_value(xlen: int, value: int) -> int:
    return execute(xlen, f"li a0, {value}").x[reg_index("a0")]


@pytest.mark.parametrize("xlen", XLENS)
@pytest.mark.parametrize("value", [0, 1, -1, 2047, -2048, 2048, -2049, 0x7FFF_F800, 0x7FFF_FFFF,
                                   -0x8000_0000, 0x8000_0000, 0xFFFF_FFFF, 0x1234_5678, 0xDEAD_BEEF])
def test_li_small_and_32_bit(xlen, value):
    if xlen == 64 or -(1 << 31) <= value < 1 << 32:
        assert _li_value(xlen, value) == value & mask(xlen)


@pytest.mark.parametrize("value", [0x1_0000_0000, 0x7FFF_FFFF_FFFF_FFFF, -0x8000_0000_0000_0000,
                                   0xFFFF_FFFF_FFFF_FFFF, 0x8000_0000_0000_0000, 0x1234_5678_9ABC_DEF0,
                                   0xFFFF_FFFF_0000_0000, 0x0000_0800_0000_0801, -0x1_0000_0001])
def test_li_64_bit(value):
    assert _li_value(64, value) == value & mask(64)
    assert len(li_sequence("a0", value, 64)) <= 8


@settings(max_examples=60, deadline=None)
@given(value=st.integers(-(1 << 63), (1 << 64) - 1))
def test_li_any_64_bit_value(value):
    assert _li_value(64, value) == value & mask(64)


@settings(max_examples=40, deadline=None)
@given(value=st.integers(-(1 << 31), (1 << 32) - 1))
def test_li_any_32_bit_value(value):
    assert _li_value(32, value) == value & mask(32)
    assert len(li_sequence("a0", value, 32)) <= 2


@pytest.mark.parametrize("xlen", XLENS)
def test_li_out_of_range(xlen):
    with pytest.raises(AssemblyError, match="does not fit"):
        words(xlen, f"li a0, {1 << xlen}")


def test_li_needs_its_value_at_layout_time():
    with pytest.raises(AssemblyError, match="undefined symbol"):
        words(32, "li a0, later\nlater: nop")
    assert words(32, "K = 5\nli a0, K") == words(32, "li a0, 5")


def test_assembler_errors_point_at_the_line():
    with pytest.raises(AssemblyError) as info:
        assemble(ARCHS[32], "nop\nadd a0, a1\n", file="x.s")
    assert str(info.value).startswith("x.s:2:")
