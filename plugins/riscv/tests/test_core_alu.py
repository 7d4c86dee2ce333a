"""Integer instructions of RV32I/RV64I: results, x0, sign extension, shift amounts."""

from __future__ import annotations

import random

import pytest
from rvcore_support import XLENS, execute, mask, reg_index, signed, value

M32 = 0xFFFF_FFFF


@pytest.mark.parametrize("xlen", XLENS)
@pytest.mark.parametrize(("op", "a", "b", "expected"), [
    ("add", 5, 7, 12),
    ("add", -1, 1, 0),
    ("sub", 5, 7, -2),
    ("xor", 0b1100, 0b1010, 0b0110),
    ("or", 0b1100, 0b1010, 0b1110),
    ("and", 0b1100, 0b1010, 0b1000),
    ("slt", -1, 0, 1),
    ("slt", 0, -1, 0),
    ("slt", 3, 3, 0),
    ("sltu", -1, 0, 0),
    ("sltu", 0, -1, 1),
    ("sll", 1, 3, 8),
    ("srl", -8, 1, None),   # computed below: logical
    ("sra", -8, 1, -4),
])
def test_register_register(xlen, op, a, b, expected):
    got = value(xlen, f"{op} a0, a1, a2", a1=a, a2=b)
    if expected is None:
        expected = ((-8) & mask(xlen)) >> 1
    assert got == expected & mask(xlen)


@pytest.mark.parametrize("xlen", XLENS)
def test_add_wraps_at_xlen(xlen):
    top = mask(xlen)
    assert value(xlen, "add a0, a1, a2", a1=top, a2=2) == 1
    assert value(xlen, "addi a0, a1, 1", a1=top) == 0
    assert value(xlen, "sub a0, a1, a2", a1=0, a2=1) == top


@pytest.mark.parametrize("xlen", XLENS)
def test_shift_amounts_use_only_the_low_bits(xlen):
    assert value(xlen, "sll a0, a1, a2", a1=1, a2=xlen) == 1          # shift by XLEN is by 0
    assert value(xlen, "sll a0, a1, a2", a1=1, a2=xlen + 3) == 8
    assert value(xlen, "srl a0, a1, a2", a1=16, a2=2 * xlen + 2) == 4
    assert value(xlen, "sra a0, a1, a2", a1=-16, a2=xlen + 2) == (-4) & mask(xlen)
    assert value(xlen, "sll a0, a1, a2", a1=1, a2=xlen - 1) == 1 << (xlen - 1)


@pytest.mark.parametrize("xlen", XLENS)
def test_immediates_are_sign_extended(xlen):
    m = mask(xlen)
    assert value(xlen, "addi a0, a1, -2048", a1=0) == -2048 & m
    assert value(xlen, "addi a0, a1, 2047", a1=1) == 2048
    assert value(xlen, "xori a0, a1, -1", a1=0x1234) == ~0x1234 & m
    assert value(xlen, "andi a0, a1, -16", a1=0x1234_5678) == 0x1234_5670
    assert value(xlen, "ori a0, a1, -2048", a1=1) == (-2048 | 1) & m
    assert value(xlen, "slti a0, a1, -1", a1=-2) == 1
    assert value(xlen, "slti a0, a1, 5", a1=5) == 0
    assert value(xlen, "sltiu a0, a1, -1", a1=5) == 1        # -1 compares as the largest value
    assert value(xlen, "sltiu a0, a1, 1", a1=0) == 1         # seqz


@pytest.mark.parametrize("xlen", XLENS)
def test_shift_immediates(xlen):
    m = mask(xlen)
    assert value(xlen, f"slli a0, a1, {xlen - 1}", a1=3) == 1 << (xlen - 1)
    assert value(xlen, f"srli a0, a1, {xlen - 1}", a1=-1) == 1
    assert value(xlen, f"srai a0, a1, {xlen - 1}", a1=1 << (xlen - 1)) == m
    assert value(xlen, "srai a0, a1, 0", a1=-5) == -5 & m


def test_rv32_shift_immediate_with_bit_5_is_illegal():
    # slli a0, a1, 32 on RV32 would need shamt[5]: the word is not a valid RV32 instruction
    from tessera.isa import Decoder
    from tessera_riscv import RV32IM, RV64IM

    word = 0x0205_9513  # slli a0, a1, 32 in RV64
    assert Decoder(RV32IM).decode(word).mnemonic == ".illegal"
    assert Decoder(RV64IM).decode(word).mnemonic == "slli"


@pytest.mark.parametrize("xlen", XLENS)
def test_lui_and_auipc(xlen):
    m = mask(xlen)
    assert value(xlen, "lui a0, 0x12345") == 0x1234_5000
    assert value(xlen, "lui a0, 0x80000") == 0xFFFF_FFFF_8000_0000 & m   # sign-extended on RV64
    h = execute(xlen, "nop\nauipc a0, 1\nauipc a1, 0xfffff")
    assert h.x[reg_index("a0")] == 0x10004 + 0x1000
    assert h.x[reg_index("a1")] == (0x10008 - 0x1000) & m


@pytest.mark.parametrize("xlen", XLENS)
def test_writes_to_x0_are_discarded(xlen):
    h = execute(xlen, """
        addi zero, zero, 5
        lui  zero, 0x12345
        add  zero, a1, a1
        mul  zero, a1, a1
        lw   zero, 0(sp)
        jal  zero, next
    next: auipc zero, 1
        csrrs zero, mscratch, zero
        addi a0, zero, 1
    """, a1=7)
    assert h.x[0] == 0
    assert h.x[reg_index("a0")] == 1


@pytest.mark.parametrize("xlen", XLENS)
def test_source_equal_to_destination(xlen):
    assert value(xlen, "add a0, a0, a0", a0=21) == 42
    assert value(xlen, "sub a0, a0, a0", a0=21) == 0


# ------------------------------------------------------------------ RV64 *W forms

W_CASES = [
    ("addw", 0x7FFF_FFFF, 1, -0x8000_0000),                      # overflows 32 bits, sign-extends
    ("addw", 0xFFFF_FFFF_0000_0005, 0x1_0000_0003, 8),            # upper halves ignored
    ("subw", 0, 1, -1),
    ("subw", 0x8000_0000, 1, 0x7FFF_FFFF),
    ("sllw", 1, 31, -0x8000_0000),
    ("sllw", 1, 32, 1),                                           # shift amount mod 32
    ("srlw", 0xFFFF_FFFF_8000_0000, 0, -0x8000_0000),             # shift by 0 still sign-extends
    ("srlw", 0x8000_0000, 31, 1),
    ("srlw", 0x1_8000_0000, 4, 0x0800_0000),
    ("sraw", 0x8000_0000, 4, -0x0800_0000),
    ("sraw", 0x1_7FFF_FFFF, 36, 0x07FF_FFFF),
]


@pytest.mark.parametrize(("op", "a", "b", "expected"), W_CASES)
def test_rv64_word_ops(op, a, b, expected):
    assert value(64, f"{op} a0, a1, a2", a1=a, a2=b) == expected & mask(64)


def test_rv64_word_immediates():
    m = mask(64)
    assert value(64, "addiw a0, a1, 1", a1=0x7FFF_FFFF) == 0xFFFF_FFFF_8000_0000
    assert value(64, "addiw a0, a1, 0", a1=0x1_2345_6789) == 0x2345_6789        # sext.w
    assert value(64, "addiw a0, a1, -1", a1=0) == m
    assert value(64, "slliw a0, a1, 31", a1=1) == 0xFFFF_FFFF_8000_0000
    assert value(64, "srliw a0, a1, 0", a1=0x8000_0000) == 0xFFFF_FFFF_8000_0000
    assert value(64, "srliw a0, a1, 1", a1=0xFFFF_FFFF_FFFF_FFFF) == 0x7FFF_FFFF
    assert value(64, "sraiw a0, a1, 31", a1=0x8000_0000) == m


def test_rv64_word_shift_immediate_with_bit_5_is_illegal():
    from tessera.isa import Decoder
    from tessera_riscv import RV64IM

    assert Decoder(RV64IM).decode(0x0205_951B).mnemonic == ".illegal"   # slliw a0, a1, 32


def test_rv32_has_no_word_or_doubleword_forms():
    from tessera.errors import AssemblyError
    from tessera.isa.asm import assemble
    from tessera_riscv import RV32IM

    for line in ("addw a0, a1, a2", "ld a0, 0(a1)", "sd a0, 0(a1)", "lwu a0, 0(a1)",
                 "add.uw a0, a1, a2", "amoadd.d a0, a1, (a2)", "clzw a0, a1"):
        with pytest.raises(AssemblyError, match="unknown mnemonic"):
            assemble(RV32IM, line)


# ------------------------------------------------------------------ against a reference


def _reference(op: str, a: int, b: int, xlen: int) -> int:
    """An independent model over Python's signed integers."""
    sa, sb = signed(a, xlen), signed(b, xlen)
    s = b % xlen
    table = {
        "add": sa + sb, "sub": sa - sb, "xor": a ^ b, "or": a | b, "and": a & b,
        "slt": int(sa < sb), "sltu": int(a < b), "sll": a * 2 ** s, "srl": a // 2 ** s,
        "sra": sa // 2 ** s,
    }
    return table[op] & mask(xlen)


@pytest.mark.parametrize("xlen", XLENS)
def test_random_register_ops_match_the_reference(xlen):
    rng = random.Random(xlen)
    special = [0, 1, 2, mask(xlen), 1 << (xlen - 1), (1 << (xlen - 1)) - 1, M32, 0x8000_0000]
    ops = ["add", "sub", "xor", "or", "and", "slt", "sltu", "sll", "srl", "sra"]
    lines, expected = [], []
    regs = {}
    for i in range(8):   # several operations per run, different registers
        op = rng.choice(ops)
        a = rng.choice(special) if rng.random() < 0.3 else rng.getrandbits(xlen)
        b = rng.choice(special) if rng.random() < 0.3 else rng.getrandbits(xlen)
        regs[f"s{i + 2}"] = a
        regs[f"t{i % 7}"] = b
        lines.append(f"{op} a{i}, s{i + 2}, t{i % 7}")
        expected.append((f"a{i}", op, a, b))
    # each t register is used once: later assignments would overwrite earlier operands
    regs = {k: v for k, v in regs.items()}
    h = execute(xlen, "\n".join(lines), **regs)
    for name, op, a, b in expected:
        b = regs[f"t{int(name[1:]) % 7}"]
        assert h.x[reg_index(name)] == _reference(op, a, b, xlen), (op, hex(a), hex(b))
