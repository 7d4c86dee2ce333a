"""Scalar-unit GPR instructions (seed 000, tensix.md §5.2)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tensix_ctl_support import (
    ADDDMAREG,
    BITWOPDMAREG,
    CMPDMAREG,
    FLUSHDMA,
    M32,
    MULDMAREG,
    SETDMAREG,
    SHIFTDMAREG,
    SUBDMAREG,
    Thread,
    execute,
)

from tessera.control import Trap

u32 = st.integers(0, M32)
idx = st.integers(0, 63)


def _thread(values: dict[int, int]) -> Thread:
    t = Thread()
    for i, v in values.items():
        t.gpr[i] = v
    return t


def test_add_sub_mul_register_and_immediate():
    t = _thread({1: 0xFFFF_FFFF, 2: 2, 3: 0x0001_0003, 4: 0xFFFF_0002})
    execute(t, ADDDMAREG(0, 10, 2, 1))
    assert t.gpr[10] == 1                                  # wraps
    execute(t, ADDDMAREG(1, 11, 63, 2))
    assert t.gpr[11] == 65                                 # 6-bit immediate
    execute(t, SUBDMAREG(0, 12, 1, 2))
    assert t.gpr[12] == 3                                  # 2 - 0xFFFFFFFF
    execute(t, SUBDMAREG(1, 13, 5, 2))
    assert t.gpr[13] == 0xFFFF_FFFD
    execute(t, MULDMAREG(0, 14, 4, 3))
    assert t.gpr[14] == 3 * 2                              # low 16 bits only
    t.gpr[5] = 0xFFFF
    execute(t, MULDMAREG(0, 15, 5, 5))
    assert t.gpr[15] == 0xFFFF * 0xFFFF                    # full 32-bit product
    execute(t, MULDMAREG(1, 16, 40, 3))
    assert t.gpr[16] == 120


def test_result_may_alias_operands():
    t = _thread({7: 5})
    execute(t, ADDDMAREG(0, 7, 7, 7))
    assert t.gpr[7] == 10


@pytest.mark.parametrize("mode, fn", [(0, lambda a, b: a & b), (1, lambda a, b: a | b),
                                      (2, lambda a, b: a ^ b)])
def test_bitwop(mode, fn):
    t = _thread({1: 0xF0F0_1234, 2: 0x0FF0_0F0F})
    execute(t, BITWOPDMAREG(0, mode, 3, 2, 1))
    assert t.gpr[3] == fn(0xF0F0_1234, 0x0FF0_0F0F)
    execute(t, BITWOPDMAREG(1, mode, 4, 0x2A, 1))
    assert t.gpr[4] == fn(0xF0F0_1234, 0x2A)


def test_shift():
    t = _thread({1: 0x8000_0001, 2: 33})
    execute(t, SHIFTDMAREG(0, 0, 3, 2, 1))                 # 33 & 31 = 1
    assert t.gpr[3] == 2
    execute(t, SHIFTDMAREG(0, 1, 4, 2, 1))
    assert t.gpr[4] == 0x4000_0000                         # unsigned right shift
    execute(t, SHIFTDMAREG(1, 1, 5, 31, 1))
    assert t.gpr[5] == 1
    execute(t, SHIFTDMAREG(1, 0, 6, 4, 1))
    assert t.gpr[6] == 0x10


@pytest.mark.parametrize("mode, fn", [(0, lambda a, b: a > b), (1, lambda a, b: a < b),
                                      (2, lambda a, b: a == b)])
def test_cmp_unsigned(mode, fn):
    t = _thread({1: 0xFFFF_FFFF, 2: 1, 3: 1})
    for a, b in ((1, 2), (2, 1), (2, 3)):
        execute(t, CMPDMAREG(0, mode, 10, b, a))
        assert t.gpr[10] == int(fn(t.gpr[a], t.gpr[b]))
    execute(t, CMPDMAREG(1, mode, 11, 1, 2))               # GPR2 (1) vs immediate 1
    assert t.gpr[11] == int(fn(1, 1))


@pytest.mark.parametrize("word, name", [
    (BITWOPDMAREG(0, 3, 1, 2, 3), "ttbitwopdmareg: mode 3"),
    (SHIFTDMAREG(0, 2, 1, 2, 3), "ttshiftdmareg: mode 2"),
    (CMPDMAREG(1, 7, 1, 2, 3), "ttcmpdmareg: mode 7"),
])
def test_undefined_modes_stop_or_do_nothing(word, name):
    t = _thread({1: 77, 2: 5, 3: 9})
    with pytest.raises(Trap, match=f"{name} is undefined") as info:
        execute(t, word, address=0x1C)
    assert info.value.tval == word
    t = Thread(lenient=True)
    t.gpr[1] = 77
    execute(t, word)
    assert t.gpr[1] == 77


def test_setdmareg_halves():
    t = Thread()
    execute(t, SETDMAREG(0, 0xBEEF, 2 * 5))                # low half of GPR5
    execute(t, SETDMAREG(0, 0xDEAD, 2 * 5 + 1))            # high half
    assert t.gpr[5] == 0xDEAD_BEEF
    execute(t, SETDMAREG(0, 0x0001, 2 * 5))
    assert t.gpr[5] == 0xDEAD_0001
    execute(t, SETDMAREG(0, 0xFFFF, 127))                  # high half of GPR63
    assert t.gpr[63] == 0xFFFF_0000


def test_setdmareg_special_form_not_supported():
    for lenient in (False, True):
        t = Thread(lenient=lenient)
        with pytest.raises(Trap, match="ttsetdmareg: the special form"):
            execute(t, SETDMAREG(1, 0x10, 3))


def test_flushdma_completes():
    t = _thread({1: 42})
    for mask in (0, 1, 0xF):
        execute(t, FLUSHDMA(mask))
    assert t.gpr[1] == 42 and t.gpr.count(0) == 63


@given(u32, u32, idx, idx, idx, st.integers(0, 63), st.booleans())
def test_arithmetic_properties(a, b, ia, ib, ir, imm, const):
    t = Thread()
    t.gpr[ia] = a
    t.gpr[ib] = b
    right = imm if const else t.gpr[ib]
    left = t.gpr[ia]
    for word, want in ((ADDDMAREG(int(const), ir, imm if const else ib, ia), (left + right) & M32),
                       (SUBDMAREG(int(const), ir, imm if const else ib, ia), (left - right) & M32),
                       (MULDMAREG(int(const), ir, imm if const else ib, ia),
                        (left & 0xFFFF) * (right & 0xFFFF))):
        t.gpr[ia], t.gpr[ib] = a, b
        execute(t, word)
        assert t.gpr[ir] == want
        assert 0 <= t.gpr[ir] <= M32
