"""ADC instructions: SETADC, SETADCXX, SETADCXY, SETADCZW, INCADCXY, INCADCZW, ADDRCRXY, ADDRCRZW.

Functional models of the WormholeB0 pages of those names and ADCs.md (Blackhole has no
pages of its own for them; the spec lists no difference, so both chips share these).
The state is :func:`tessera_tensix.adc.adcs`: ``ADCs[3]`` of three sets (Unpacker 0,
Unpacker 1, the packers) of two channels of X/Y/Z/W counters and their ``_Cr`` copies.

* ``cnt_set_mask`` [23:21] is PK·U1·U0: bit 0 applies the instruction to the Unpacker 0
  set, bit 1 to Unpacker 1's, bit 2 to the packers'.
* The ADC used is the current thread's unless ``ThreadOverride`` (n = 1..3: thread
  n-1's) says otherwise: [19:18] of SETADCXY/ZW, INCADCXY/ZW and ADDRCRXY/ZW, and for
  SETADC the top two bits [17:16] of its 18-bit value (which is also written, whole, to
  the counter — an X counter keeps all 18 bits, the narrower ones their low bits).
  SETADCXX always uses the current thread's ADC.
* SETADC*/ADDRCR* write a counter and its ``_Cr`` copy; INCADC* add to the counters only;
  ADDRCR* add to the ``_Cr`` copy and copy it into the counter.  The XY/ZW forms carry
  3-bit values; every result wraps at the counter's width (X 18, Y 13, Z and W 8 bits).
"""

from __future__ import annotations

from typing import Any

from tessera_tensix.adc import adcs
from tessera_tensix.semantics import op

_SETS = (0, 1, 2)


def _targets(thread: Any, mask: int, override: int) -> tuple[int, list[int]]:
    """(ADC index, the sets ``mask`` selects) for an instruction of ``thread``."""
    which = thread.tid if override == 0 else override - 1
    return which, [s for s in _SETS if mask >> s & 1]


def _pairs(ins: Any, names: str) -> tuple[tuple[int, str, int, int], ...]:
    """(channel, counter, value, enable bit) of the four slots of an XY/ZW instruction;
    ``names`` is ``"XY"`` or ``"ZW"``; ``bit_mask`` bits are X0/Z0, Y0/W0, X1/Z1, Y1/W1."""
    a, b = names[0], names[1]
    return ((0, a, ins.ch0_x, 0), (0, b, ins.ch0_y, 1), (1, a, ins.ch1_x, 2), (1, b, ins.ch1_y, 3))


@op("SETADC")
def setadc(thread: Any, ins: Any) -> None:
    value = ins.value
    adc, sets = _targets(thread, ins.cnt_set_mask, value >> 16)
    counter = "XYZW"[ins.dimension_index]
    state = adcs(thread.core)
    for s in sets:
        state.set(adc, s, ins.channel_index, counter, value)
        state.set(adc, s, ins.channel_index, counter + "_Cr", value)


@op("SETADCXX")
def setadcxx(thread: Any, ins: Any) -> None:
    adc, sets = _targets(thread, ins.cnt_set_mask, 0)
    state = adcs(thread.core)
    for s in sets:
        for channel, value in ((0, ins.x_start), (1, ins.x_end2)):
            state.set(adc, s, channel, "X", value)
            state.set(adc, s, channel, "X_Cr", value)


def _set_some(thread: Any, ins: Any, names: str) -> None:
    adc, sets = _targets(thread, ins.cnt_set_mask, ins.thread_override)
    state = adcs(thread.core)
    for s in sets:
        for channel, counter, value, bit in _pairs(ins, names):
            if ins.bit_mask >> bit & 1:
                state.set(adc, s, channel, counter, value)
                state.set(adc, s, channel, counter + "_Cr", value)


def _increment(thread: Any, ins: Any, names: str) -> None:
    adc, sets = _targets(thread, ins.cnt_set_mask, ins.thread_override)
    state = adcs(thread.core)
    for s in sets:
        for channel, counter, value, _bit in _pairs(ins, names):
            state.add(adc, s, channel, counter, value)


def _carriage_return(thread: Any, ins: Any, names: str) -> None:
    adc, sets = _targets(thread, ins.cnt_set_mask, ins.thread_override)
    state = adcs(thread.core)
    for s in sets:
        for channel, counter, value, bit in _pairs(ins, names):
            if ins.bit_mask >> bit & 1:
                state.add(adc, s, channel, counter + "_Cr", value)
                state.set(adc, s, channel, counter, state.get(adc, s, channel, counter + "_Cr"))


@op("SETADCXY")
def setadcxy(thread: Any, ins: Any) -> None:
    _set_some(thread, ins, "XY")


@op("SETADCZW")
def setadczw(thread: Any, ins: Any) -> None:
    _set_some(thread, ins, "ZW")


@op("INCADCXY")
def incadcxy(thread: Any, ins: Any) -> None:
    _increment(thread, ins, "XY")


@op("INCADCZW")
def incadczw(thread: Any, ins: Any) -> None:
    _increment(thread, ins, "ZW")


@op("ADDRCRXY")
def addrcrxy(thread: Any, ins: Any) -> None:
    _carriage_return(thread, ins, "XY")


@op("ADDRCRZW")
def addrcrzw(thread: Any, ins: Any) -> None:
    _carriage_return(thread, ins, "ZW")
