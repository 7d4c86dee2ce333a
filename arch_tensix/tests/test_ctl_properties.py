"""Hypothesis properties: the vectorised ctl instructions against the per-lane reference model.

Random machine states (LRegs, LaneFlags, UseLaneFlags, a flag stack of any depth,
LaneConfig with ROW_MASK / EXCHANGE_SRCB_SRCC / ENABLE_DEST_INDEX bits, the backdoor
on or off) and random instruction words of every ctl SFPU opcode, every field value,
run with ``lenient=True`` so that every encoding has a defined outcome.  After each
instruction the whole vector-unit state must equal the reference model's.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tensix_ctl_support import M32, OPCODES, RefSfpu, Thread, execute

SPECIAL = [0, 1, 2, 0x7F, 0x80, 0xFFFF_FFFF, 0x8000_0000, 0x7FFF_FFFF, 0x8000_0001,
           0x3F80_0000, 0xBF80_0000, 0x7F80_0000, 0xFF80_0000, 0x7FC0_0000, 0xFFC0_0000,
           0x0000_0001, 0x0080_0000, 0xFFFF_FFE0, 0x0000_001F, 0xFFFF_FFF0, 3, 0xFFFF_FFFD]
mask32 = st.one_of(st.just(0), st.just(M32), st.integers(0, M32))
CTL_SFPU = sorted(op for op, name in OPCODES.items()
                  if name.startswith("SFP") and name != "SFPLOADMACRO")
_BIT = np.uint64(1) << np.arange(32, dtype=np.uint64)


def bits(mask: int) -> np.ndarray:
    return (np.uint64(mask) & _BIT) != 0


@st.composite
def row(draw) -> np.ndarray:
    """32 lanes: random bytes, then some lanes replaced by special values (fast to draw)."""
    values = np.frombuffer(draw(st.binary(min_size=128, max_size=128)), dtype=np.uint32).copy()
    small = bits(draw(mask32))
    values[small] = (values[small] & np.uint32(0x3F)) - np.uint32(32)          # -32..31
    for lane, k in draw(st.lists(st.tuples(st.integers(0, 31), st.integers(0, len(SPECIAL) - 1)),
                                 max_size=12)):
        values[lane] = SPECIAL[k]
    return values


@st.composite
def machine_state(draw):
    t = Thread(lenient=True)
    s = t.sfpu
    for i in range(8):
        s.lreg[i] = draw(row())
    for _ in range(draw(st.integers(0, 3))):               # equal lanes across registers (ties)
        a, b = draw(st.integers(0, 7)), draw(st.integers(0, 7))
        same = bits(draw(mask32))
        s.lreg[b][same] = s.lreg[a][same]
    s.lane_flags[:] = bits(draw(mask32))
    s.use_lane_flags[:] = bits(draw(st.one_of(st.just(M32), mask32)))
    for _ in range(draw(st.integers(0, 8))):
        s.flag_stack.append((bits(draw(mask32)), bits(draw(mask32))))
    # LaneConfig: mostly clear (the fast paths), else the backdoor closed and/or random bits
    kind = draw(st.sampled_from(["clear", "clear", "clear", "backdoor-off", "bits"]))
    if kind != "clear":
        per_lane = np.frombuffer(draw(st.binary(min_size=128, max_size=128)), dtype=np.uint32)
        keep = draw(st.sampled_from([0, 0x104, 0xF104, 0x3_F1FF & ~0x2])) if kind == "bits" else 0
        backdoor_off = kind == "backdoor-off" or draw(st.booleans())
        s.lane_config[:] = (per_lane & np.uint32(keep)) | np.uint32(2 if backdoor_off else 0)
    for i in range(4):
        s.sequence[i] = draw(row())
    s.misc[:] = draw(st.integers(0, 0xFFF))
    return t


@st.composite
def instruction(draw):
    opcode = draw(st.sampled_from(CTL_SFPU))
    reg = st.one_of(st.integers(0, 7), st.integers(0, 15))
    vd = draw(reg)
    vc = draw(reg)
    mod1 = draw(st.integers(0, 15))
    hi = draw(st.integers(0, 0xFFF))
    if opcode == 0x91:                                     # SFPCONFIG: Imm16 [23:8]
        return (opcode << 24) | (draw(st.integers(0, 0xFFFF)) << 8) | (vd << 4) | mod1
    return (opcode << 24) | (hi << 12) | (vc << 8) | (vd << 4) | mod1


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(machine_state(), st.lists(instruction(), min_size=1, max_size=12))
def test_ctl_instructions_match_reference(thread, words):
    ref = RefSfpu(thread)
    for word in words:
        ref.step(word)
        execute(thread, word)
        problems = ref.mismatches(thread)
        assert not problems, f"after {OPCODES[word >> 24]} {word:#010x}: " + "; ".join(problems[:3])


@settings(max_examples=200, deadline=None)
@given(machine_state(), st.lists(st.sampled_from([0x87, 0x88, 0x8B, 0x8A, 0x7B, 0x96, 0x97]),
                                 min_size=1, max_size=30), st.data())
def test_predication_sequences_match_reference(thread, opcodes, data):
    """Long runs of the stack / flag instructions only (deep nesting, overflow, underflow)."""
    ref = RefSfpu(thread)
    for opcode in opcodes:
        mod1 = data.draw(st.one_of(st.just(0), st.integers(0, 15)))
        word = (opcode << 24) | (data.draw(st.integers(0, 3)) << 12) | (data.draw(st.integers(0, 7)) << 8) \
            | (data.draw(st.integers(0, 7)) << 4) | mod1
        ref.step(word)
        execute(thread, word)
        assert not ref.mismatches(thread), f"after {word:#010x}"
