"""Zba (address generation) and Zbb (basic bit manipulation)."""

from __future__ import annotations

import pytest
from rvcore_support import XLENS, mask, value

M64 = mask(64)


@pytest.mark.parametrize("xlen", XLENS)
def test_shift_and_add(xlen):
    m = mask(xlen)
    assert value(xlen, "sh1add a0, a1, a2", a1=5, a2=100) == 110
    assert value(xlen, "sh2add a0, a1, a2", a1=5, a2=100) == 120
    assert value(xlen, "sh3add a0, a1, a2", a1=5, a2=100) == 140
    assert value(xlen, "sh3add a0, a1, a2", a1=1 << (xlen - 2), a2=1) == 1     # wraps
    assert value(xlen, "sh1add a0, a1, a2", a1=-1, a2=0) == -2 & m


def test_rv64_unsigned_word_forms():
    assert value(64, "add.uw a0, a1, a2", a1=0xFFFF_FFFF_8000_0000, a2=1) == 0x8000_0001
    assert value(64, "sh1add.uw a0, a1, a2", a1=0xFFFF_FFFF_FFFF_FFFF, a2=0) == 0x1_FFFF_FFFE
    assert value(64, "sh2add.uw a0, a1, a2", a1=0x1_0000_0001, a2=3) == 7
    assert value(64, "sh3add.uw a0, a1, a2", a1=0x8000_0000, a2=0) == 0x4_0000_0000
    assert value(64, "slli.uw a0, a1, 0", a1=0xFFFF_FFFF_8000_0000) == 0x8000_0000
    assert value(64, "slli.uw a0, a1, 40", a1=0xFFFF_FFFF_FFFF_FFFF) == 0xFFFF_FF00_0000_0000
    assert value(64, "zext.w a0, a1", a1=-1) == 0xFFFF_FFFF                     # add.uw rd, rs, zero


@pytest.mark.parametrize("xlen", XLENS)
def test_logic_with_negate(xlen):
    m = mask(xlen)
    assert value(xlen, "andn a0, a1, a2", a1=0b1111, a2=0b0101) == 0b1010
    assert value(xlen, "orn a0, a1, a2", a1=0, a2=0b0101) == ~0b0101 & m
    assert value(xlen, "xnor a0, a1, a2", a1=0b1100, a2=0b1010) == ~0b0110 & m


@pytest.mark.parametrize("xlen", XLENS)
def test_count_bits(xlen):
    assert value(xlen, "clz a0, a1", a1=0) == xlen
    assert value(xlen, "clz a0, a1", a1=1) == xlen - 1
    assert value(xlen, "clz a0, a1", a1=-1) == 0
    assert value(xlen, "ctz a0, a1", a1=0) == xlen
    assert value(xlen, "ctz a0, a1", a1=8) == 3
    assert value(xlen, "ctz a0, a1", a1=1 << (xlen - 1)) == xlen - 1
    assert value(xlen, "cpop a0, a1", a1=-1) == xlen
    assert value(xlen, "cpop a0, a1", a1=0xF0F0) == 8


def test_rv64_count_word():
    # only the low 32 bits count (spec: clzw/ctzw/cpopw look at rs1[31:0])
    assert value(64, "clzw a0, a1", a1=0xFFFF_FFFF_0000_0000) == 32
    assert value(64, "clzw a0, a1", a1=0x8000_0000) == 0
    assert value(64, "ctzw a0, a1", a1=0x8000_0000_0000_0000) == 32
    assert value(64, "ctzw a0, a1", a1=0x0000_FF00_0000_0000) == 32
    assert value(64, "ctzw a0, a1", a1=0x1_0000_0010) == 4
    assert value(64, "cpopw a0, a1", a1=0xFFFF_FFFF_0000_0003) == 2


@pytest.mark.parametrize("xlen", XLENS)
def test_min_max(xlen):
    m = mask(xlen)
    assert value(xlen, "max a0, a1, a2", a1=-1, a2=1) == 1
    assert value(xlen, "min a0, a1, a2", a1=-1, a2=1) == m
    assert value(xlen, "maxu a0, a1, a2", a1=-1, a2=1) == m
    assert value(xlen, "minu a0, a1, a2", a1=-1, a2=1) == 1
    assert value(xlen, "min a0, a1, a2", a1=1 << (xlen - 1), a2=0) == 1 << (xlen - 1)


@pytest.mark.parametrize("xlen", XLENS)
def test_extend(xlen):
    m = mask(xlen)
    assert value(xlen, "sext.b a0, a1", a1=0x1280) == -0x80 & m
    assert value(xlen, "sext.b a0, a1", a1=0x127F) == 0x7F
    assert value(xlen, "sext.h a0, a1", a1=0x1_8000) == -0x8000 & m
    assert value(xlen, "zext.h a0, a1", a1=-1) == 0xFFFF
    assert value(xlen, "zext.b a0, a1", a1=-1) == 0xFF                        # andi pseudo


@pytest.mark.parametrize("xlen", XLENS)
def test_rotates(xlen):
    m = mask(xlen)
    top = 1 << (xlen - 1)
    assert value(xlen, "rol a0, a1, a2", a1=top | 1, a2=1) == 3
    assert value(xlen, "ror a0, a1, a2", a1=3, a2=1) == top | 1
    assert value(xlen, "rol a0, a1, a2", a1=0x1234, a2=xlen) == 0x1234           # amount mod XLEN
    assert value(xlen, "ror a0, a1, a2", a1=0x1234, a2=0) == 0x1234
    assert value(xlen, "rori a0, a1, 4", a1=0x1234) == (0x123 | 4 << (xlen - 4)) & m
    assert value(xlen, f"rori a0, a1, {xlen - 1}", a1=1) == 2


def test_rv64_rotate_words():
    assert value(64, "rolw a0, a1, a2", a1=0x8000_0001, a2=1) == 3
    assert value(64, "rorw a0, a1, a2", a1=3, a2=1) == 0xFFFF_FFFF_8000_0001   # sign-extended
    assert value(64, "rorw a0, a1, a2", a1=0xF_0000_0002, a2=33) == 1          # amount mod 32
    assert value(64, "roriw a0, a1, 0", a1=0x8000_0000) == 0xFFFF_FFFF_8000_0000
    assert value(64, "roriw a0, a1, 4", a1=0x1234) == 0x4000_0123


@pytest.mark.parametrize("xlen", XLENS)
def test_byte_ops(xlen):
    assert value(xlen, "orc.b a0, a1", a1=0x0100_2000) == 0xFF00_FF00
    assert value(xlen, "orc.b a0, a1", a1=0) == 0
    if xlen == 32:
        assert value(32, "rev8 a0, a1", a1=0x1122_3344) == 0x4433_2211
    else:
        assert value(64, "rev8 a0, a1", a1=0x1122_3344_5566_7788) == 0x8877_6655_4433_2211


@pytest.mark.parametrize("xlen", XLENS)
def test_encodings_match_the_specification(xlen):
    """A few words checked against the Zba/Zbb specification's encodings."""
    from tessera.isa.asm import assemble
    from tessera_riscv import RV32IM, RV64IM

    arch = RV32IM if xlen == 32 else RV64IM

    def word(line: str) -> int:
        (_, blob), = assemble(arch, line).segments
        return int.from_bytes(blob, "little")

    assert word("sh1add a0, a1, a2") == 0x20C5_A533
    assert word("andn a0, a1, a2") == 0x40C5_F533
    assert word("clz a0, a1") == 0x6005_9513
    assert word("cpop a0, a1") == 0x6025_9513
    assert word("orc.b a0, a1") == 0x2875_D513
    assert word("rev8 a0, a1") == (0x6985_D513 if xlen == 32 else 0x6B85_D513)
    assert word("zext.h a0, a1") == (0x0805_C533 if xlen == 32 else 0x0805_C53B)
    assert word("max a0, a1, a2") == 0x0AC5_E533
    if xlen == 64:
        assert word("add.uw a0, a1, a2") == 0x08C5_853B
        assert word("slli.uw a0, a1, 3") == 0x0835_951B
        assert word("rori a0, a1, 63") == 0x63F5_D513
