"""ADC instructions: SETADC, SETADCXX, SETADCXY, SETADCZW, INCADCXY, INCADCZW, ADDRCRXY,
ADDRCRZW (the WormholeB0 pages of those names and ADCs.md; both chips)."""

from __future__ import annotations

import pytest
from tensix_unit_support import (
    ADDRCRXY,
    ADDRCRZW,
    CHIPS,
    INCADCXY,
    INCADCZW,
    SETADC,
    SETADCXX,
    SETADCXY,
    SETADCZW,
    Thread,
    execute,
    machine,
)

from tessera.control import Trap
from tessera_tensix.adc import FIELDS, adcs

U0, U1, PK = 1, 2, 4
SETS = {U0: 0, U1: 1, PK: 2}


def counters(t, adc, which, channel):
    state = adcs(t.core)
    return {f: state.get(adc, which, channel, f) for f in FIELDS}


def nonzero(t):
    """{(adc, set, channel): {field: value}} of every counter set that is not all zero."""
    state = adcs(t.core)
    return {(a, s, c): {f: v for f, v in zip(FIELDS, map(int, state.values[a, s, c])) if v}
            for a in range(3) for s in range(3) for c in range(2) if state.values[a, s, c].any()}


@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("xyzw, counter, width", [(0, "X", 18), (1, "Y", 13), (2, "Z", 8), (3, "W", 8)])
def test_setadc_writes_a_counter_and_its_cr_copy(chip, xyzw, counter, width):
    t = Thread(chip, tid=2)
    execute(t, SETADC(U1 | PK, 1, xyzw, 0x0ABCD))      # bits 17:16 = 0: the current thread
    want = 0x0ABCD & ((1 << width) - 1)
    got = nonzero(t)
    assert got == {(2, s, 1): {counter: want, counter + "_Cr": want} for s in (1, 2)}


@pytest.mark.parametrize("chip", CHIPS)
def test_setadc_thread_override_is_the_top_of_the_value(chip):
    t = Thread(chip, tid=0)
    execute(t, SETADC(U0, 0, 0, 0x2_1234))            # override 2: thread 1's ADC; X keeps all 18 bits
    execute(t, SETADC(U0, 0, 1, 0x3_1FFF))            # override 3: thread 2's; Y keeps 13 bits
    assert nonzero(t) == {(1, 0, 0): {"X": 0x2_1234, "X_Cr": 0x2_1234},
                          (2, 0, 0): {"Y": 0x1FFF, "Y_Cr": 0x1FFF}}


@pytest.mark.parametrize("chip", CHIPS)
def test_setadcxx_sets_x_of_both_channels(chip):
    t = Thread(chip, tid=1)
    execute(t, SETADCXX(U0 | PK, 0x3FF, 0x155))
    assert nonzero(t) == {(1, s, c): {"X": v, "X_Cr": v}
                          for s in (0, 2) for c, v in ((0, 0x155), (1, 0x3FF))}


@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("name, word, a, b", [
    ("XY", SETADCXY, "X", "Y"), ("ZW", SETADCZW, "Z", "W")])
def test_setadc_xy_zw_write_only_the_enabled_slots(chip, name, word, a, b):
    t = Thread(chip)
    execute(t, word(U1, 7, 6, 5, 4, 0b0110))           # enables Y0/W0 and X1/Z1
    assert nonzero(t) == {(0, 1, 0): {b: 5, b + "_Cr": 5}, (0, 1, 1): {a: 6, a + "_Cr": 6}}
    execute(t, word(PK, 1, 2, 3, 4, 0b1001, override=3))   # X0/Z0 and Y1/W1 of thread 2's ADC
    assert nonzero(t)[(2, 2, 0)] == {a: 4, a + "_Cr": 4}
    assert nonzero(t)[(2, 2, 1)] == {b: 1, b + "_Cr": 1}


@pytest.mark.parametrize("chip", CHIPS)
def test_incadc_adds_to_the_counters_only_and_wraps(chip):
    t = Thread(chip)
    execute(t, SETADC(U0, 0, 0, 0x0FFFE))             # X = X_Cr = 0xFFFE (override bits clear)
    state = adcs(t.core)
    state.set(0, 0, 0, "X", (1 << 18) - 2)
    state.set(0, 0, 1, "Z", 255)
    execute(t, INCADCXY(U0, 1, 2, 3, 5), INCADCZW(U0, 4, 3, 2, 1))
    ch0, ch1 = counters(t, 0, 0, 0), counters(t, 0, 0, 1)
    assert (ch0["X"], ch0["Y"], ch1["X"], ch1["Y"]) == (3, 3, 2, 1)       # X wraps at 18 bits
    assert (ch0["Z"], ch0["W"], ch1["Z"], ch1["W"]) == (1, 2, 2, 4)       # Z wraps at 8 bits
    assert ch0["X_Cr"] == 0xFFFE and ch0["Y_Cr"] == 0                      # _Cr untouched
    execute(t, INCADCXY(U0, 0, 0, 0, 1, override=2))
    assert counters(t, 1, 0, 0)["X"] == 1


@pytest.mark.parametrize("chip", CHIPS)
def test_addrcr_advances_the_cr_copy_and_returns_the_counter_to_it(chip):
    t = Thread(chip)
    execute(t, SETADCXY(PK, 0, 0, 5, 6, 0b0011))      # X0 = X0_Cr = 6, Y0 = Y0_Cr = 5
    execute(t, INCADCXY(PK, 0, 0, 7, 7))              # X0 13, Y0 12; Cr copies stay
    execute(t, ADDRCRXY(PK, 4, 4, 3, 5, 0b0001))      # only X0: X0_Cr 11, X0 = 11
    ch0 = counters(t, 0, 2, 0)
    assert (ch0["X"], ch0["X_Cr"], ch0["Y"], ch0["Y_Cr"]) == (11, 11, 12, 5)
    assert counters(t, 0, 2, 1) == dict.fromkeys(FIELDS, 0)
    state = adcs(t.core)
    state.set(0, 2, 1, "W_Cr", 254)
    execute(t, ADDRCRZW(PK, 3, 0, 0, 0, 0b1000))      # W1_Cr 254 + 3 wraps to 1
    assert counters(t, 0, 2, 1)["W"] == 1 and counters(t, 0, 2, 1)["W_Cr"] == 1


@pytest.mark.parametrize("chip", CHIPS)
def test_bit_20_is_still_reserved(chip):
    with pytest.raises(Trap, match="reserved bits"):
        execute(Thread(chip), SETADCXY(U0, 0, 0, 0, 1, 1) | 1 << 20)


@pytest.mark.parametrize("chip", CHIPS)
def test_adc_kernel_on_the_machine(chip):
    kernel = [SETADCXX(U0 | U1, 16, 1), SETADCZW(U0, 0, 0, 2, 3, 0b0011), INCADCXY(U1, 0, 5, 0, 4),
              INCADCZW(U0, 1, 1, 1, 1), ADDRCRZW(U0, 0, 0, 0, 1, 0b0001), SETADC(PK, 1, 1, 0x1_0009)]
    m = machine(chip, kernel)
    assert m.run(max_steps=100).exit_code == 0
    units = m.agent("t0").core.state()["units"]["adcs"]
    assert units["T0.Unpacker0.ch0"] == {"X": 1, "X_Cr": 1, "Y": 0, "Y_Cr": 0, "Z": 4, "Z_Cr": 4,
                                         "W": 3, "W_Cr": 2}
    assert units["T0.Unpacker1.ch1"]["X"] == 21 and units["T0.Unpacker1.ch1"]["X_Cr"] == 16
    assert units["T0.Packers.ch1"] == {**dict.fromkeys(FIELDS, 0), "Y": 9, "Y_Cr": 9}
