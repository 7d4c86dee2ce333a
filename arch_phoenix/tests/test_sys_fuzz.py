"""Random instruction words on the real table: every outcome is architectural, never a crash.

A random 48-bit word either decodes to an instruction (which runs, possibly taking an
exception) or is undefined and raises UNIMP (37) at its own address.  Either way the
run must end inside the emulated machine: no Python exception escapes, the thread
reaches its handler or the self-loop after the word.
"""

from __future__ import annotations

import random

import pytest

from tessera.isa import Decoder
from tessera.machine import Machine
from tessera_phoenix import causes
from tessera_phoenix.arch import PHOENIX

CODE, HANDLER = 0x1000, 0x8000
SELF_LOOP = 25  # bra . (op 25, Lk 0, target 0)
DECODER = Decoder(PHOENIX)


def run_word(word: int, **config):
    m = Machine(PHOENIX, config={"dram": 1 << 16, "lanes": 4, **config})
    t = m.agents[0]
    m.space.write_bytes(CODE, word.to_bytes(6, "little") + SELF_LOOP.to_bytes(6, "little") * 4)
    m.space.write_bytes(HANDLER + 0x60, SELF_LOOP.to_bytes(6, "little"))
    m.phoenix.tvec[3] = HANDLER
    t.pc = CODE
    result = m.run(max_steps=50, raise_on_budget=False)
    return m, t, result


@pytest.mark.parametrize("seed", range(8))
def test_random_words_end_in_the_machine(seed):
    rng = random.Random(seed)
    for _ in range(60):
        word = rng.getrandbits(48)
        m, t, result = run_word(word)
        assert result.reason in ("halted", "budget"), hex(word)
        if DECODER.decode(word, CODE).mnemonic == ".illegal":
            assert t.cause[3] == causes.UNIMP and t.ip_stack[0] == CODE, hex(word)
            assert t.depth == 2


@pytest.mark.parametrize("seed", range(4))
def test_random_undefined_words_are_skipped_in_lenient_mode(seed):
    rng = random.Random(100 + seed)
    tried = 0
    while tried < 20:
        word = rng.getrandbits(48)
        if DECODER.decode(word, CODE).mnemonic != ".illegal":
            continue
        tried += 1
        m, t, result = run_word(word, lenient=True)
        assert result.reason == "halted" and t.depth == 1 and t.pc == CODE + 6, hex(word)
