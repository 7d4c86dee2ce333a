"""The M extension: products, high halves, division by zero and overflow as the spec defines."""

from __future__ import annotations

import random
from fractions import Fraction
from math import trunc

import pytest
from rvcore_support import XLENS, execute, mask, reg_index, signed, value


@pytest.mark.parametrize("xlen", XLENS)
def test_division_by_zero(xlen):
    m = mask(xlen)
    for a in (0, 7, -7, 1 << (xlen - 1)):
        assert value(xlen, "div a0, a1, zero", a1=a) == m                # -1
        assert value(xlen, "divu a0, a1, zero", a1=a) == m               # 2**XLEN - 1
        assert value(xlen, "rem a0, a1, zero", a1=a) == a & m            # the dividend
        assert value(xlen, "remu a0, a1, zero", a1=a) == a & m


@pytest.mark.parametrize("xlen", XLENS)
def test_signed_overflow(xlen):
    most_negative = 1 << (xlen - 1)
    assert value(xlen, "div a0, a1, a2", a1=most_negative, a2=-1) == most_negative
    assert value(xlen, "rem a0, a1, a2", a1=most_negative, a2=-1) == 0


@pytest.mark.parametrize("xlen", XLENS)
@pytest.mark.parametrize(("a", "b", "q", "r"), [
    (7, 2, 3, 1), (-7, 2, -3, -1), (7, -2, -3, 1), (-7, -2, 3, -1), (0, 5, 0, 0), (6, 3, 2, 0),
])
def test_division_truncates_towards_zero(xlen, a, b, q, r):
    m = mask(xlen)
    assert value(xlen, "div a0, a1, a2", a1=a, a2=b) == q & m
    assert value(xlen, "rem a0, a1, a2", a1=a, a2=b) == r & m


@pytest.mark.parametrize("xlen", XLENS)
def test_unsigned_division(xlen):
    m = mask(xlen)
    assert value(xlen, "divu a0, a1, a2", a1=-1, a2=2) == m >> 1
    assert value(xlen, "remu a0, a1, a2", a1=-1, a2=16) == 15
    assert value(xlen, "divu a0, a1, a2", a1=5, a2=-1) == 0


@pytest.mark.parametrize("xlen", XLENS)
def test_multiplication_halves(xlen):
    m = mask(xlen)
    assert value(xlen, "mul a0, a1, a2", a1=-3, a2=5) == -15 & m
    assert value(xlen, "mulh a0, a1, a2", a1=-3, a2=5) == m                   # high half of -15
    assert value(xlen, "mulhu a0, a1, a2", a1=-1, a2=-1) == m - 1
    assert value(xlen, "mulhsu a0, a1, a2", a1=-1, a2=-1) == m                # -1 * (2**n - 1)
    assert value(xlen, "mulh a0, a1, a2", a1=1 << (xlen - 1), a2=1 << (xlen - 1)) == 1 << (xlen - 2)
    assert value(xlen, "mulhu a0, a1, a2", a1=1 << (xlen - 1), a2=2) == 1


def test_rv64_word_forms():
    m = mask(64)
    sext = lambda v: (((v & 0xFFFF_FFFF) ^ 0x8000_0000) - 0x8000_0000) & m  # noqa: E731
    assert value(64, "mulw a0, a1, a2", a1=0x1_0000_0003, a2=0x7FFF_FFFF) == sext(3 * 0x7FFF_FFFF)
    assert value(64, "divw a0, a1, a2", a1=0x8000_0000, a2=-1) == sext(0x8000_0000)   # overflow
    assert value(64, "remw a0, a1, a2", a1=0x8000_0000, a2=-1) == 0
    assert value(64, "divw a0, a1, zero", a1=5) == m
    assert value(64, "divuw a0, a1, zero", a1=5) == m
    assert value(64, "remw a0, a1, zero", a1=0x1_8000_0001) == sext(0x8000_0001)
    assert value(64, "remuw a0, a1, zero", a1=0x1_8000_0001) == sext(0x8000_0001)
    assert value(64, "divuw a0, a1, a2", a1=0xFFFF_FFFF, a2=1) == m        # 32-bit result sign-extends
    assert value(64, "divw a0, a1, a2", a1=0x1_FFFF_FFF9, a2=2) == sext(-3)  # upper bits ignored
    assert value(64, "remuw a0, a1, a2", a1=0x1_0000_0007, a2=0x1_0000_0004) == 3


def _ref(op: str, a: int, b: int, xlen: int) -> int:
    """Reference semantics written directly from the spec's table."""
    m = mask(xlen)
    sa, sb = signed(a, xlen), signed(b, xlen)
    if op == "mul":
        return (sa * sb) & m
    if op == "mulh":
        return ((sa * sb) >> xlen) & m
    if op == "mulhsu":
        return ((sa * b) >> xlen) & m
    if op == "mulhu":
        return (a * b) >> xlen
    if op == "div":
        if b == 0:
            return m
        return trunc(Fraction(sa, sb)) & m
    if op == "divu":
        return a // b if b else m
    if op == "rem":
        if b == 0:
            return a
        return (sa - sb * trunc(Fraction(sa, sb))) & m
    if op == "remu":
        return a % b if b else a
    raise AssertionError(op)


@pytest.mark.parametrize("xlen", XLENS)
def test_random_against_the_reference(xlen):
    rng = random.Random(1234 + xlen)
    edges = [0, 1, 2, 3, mask(xlen), mask(xlen) - 1, 1 << (xlen - 1), (1 << (xlen - 1)) - 1]
    ops = ["mul", "mulh", "mulhsu", "mulhu", "div", "divu", "rem", "remu"]
    for _ in range(4):
        lines, checks, regs = [], [], {}
        for i, op in enumerate(ops):
            a = rng.choice(edges) if rng.random() < 0.4 else rng.getrandbits(xlen)
            b = rng.choice(edges) if rng.random() < 0.4 else rng.getrandbits(rng.choice((4, xlen)))
            regs[f"s{i + 2}"] = a
            regs[f"a{i}"] = b
            lines.append(f"{op} t{i % 7}, s{i + 2}, a{i}")
            lines.append(f"mv a{i}, t{i % 7}")
            checks.append((i, op, a, b))
        h = execute(xlen, "\n".join(lines), **regs)
        for i, op, a, b in checks:
            assert h.x[reg_index(f"a{i}")] == _ref(op, a, b, xlen), (op, hex(a), hex(b))
