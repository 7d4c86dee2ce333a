"""The sequencer (tile.md 2.3): staging, dispatch, illegal sequences and their traps."""

from __future__ import annotations

import pytest
from tile_support import EXIT, machine, run, word

from tessera.errors import ConfigError, UnhandledTrap

W2, W0, TGMEM, CTRL = 0b111, 0b110, 0b000, 0b101
W1_LOAD = word(TGMEM, {31: 1, (30, 23): 4, (19, 15): 10})          # tld.g.us t4, (a0)
W0_LOAD = word(W0, {})
W2_INDEX = word(W2, {30: 1, (25, 20): 0b100011, (11, 7): 2})


def _words(*words: int) -> str:
    return "\n".join(f"        .word {w:#x}" for w in words)


def _trap(words: str, match: str, **kw) -> None:
    with pytest.raises(UnhandledTrap, match=match) as info:
        run(f"_start:\n        la a0, data\n{words}\n{EXIT}\n        .data\n        .align 6\ndata: .space 2048\n",
            **kw)
    assert info.value.cause == 2


def test_w0_with_nothing_staged_is_an_illegal_instruction_naming_pc_word_and_rule():
    with pytest.raises(UnhandledTrap) as info:
        run(f"_start:\n{_words(W0_LOAD)}\n{EXIT}")
    text = str(info.value)
    assert "illegal instruction: W0 with nothing staged" in text
    assert "pc 0x00010000" in text and f"word {W0_LOAD:#x}" in text


def test_a_second_w2_before_dispatch_is_illegal():
    _trap(_words(W2_INDEX, W2_INDEX), "a second W2 before dispatch")


def test_a_second_w1_before_dispatch_is_illegal():
    _trap(_words(W1_LOAD, W1_LOAD), "a second W1 before dispatch")


def test_a_lone_w1_with_a_staged_w2_is_illegal():
    _trap(_words(W2_INDEX, word(CTRL, {(28, 26): 0b111, (9, 7): 1})), "takes no ASP operand")


def test_reserved_bits_trap_in_strict_mode_and_are_ignored_otherwise():
    w1 = W1_LOAD | 1 << 9                                   # [11:9] are reserved in W1.mem
    _trap(_words(w1, W0_LOAD), r"reserved bits 0x00000200 set in the W1 \(W1.mem\)")
    m, result = run(f"_start:\n        la a0, data\n{_words(w1, W0_LOAD)}\n{EXIT}\n        .data\n"
                    "        .align 6\ndata: .space 2048\n", config={"tile.strict_reserved": False})
    assert result.reason == "halted"


def test_reserved_w2_mode_and_unknown_combination():
    _trap(_words(word(W2, {30: 1, (29, 28): 0b10})), "reserved W2 form")
    _trap(_words(W1_LOAD, word(W0, {(30, 25): 0b000100})), "no operation matches the sequence W1->W0")
    _trap(_words(W2_INDEX, W0_LOAD), r"no operation is the sequence W2->W0|no operation matches")


def test_placeholders_are_illegal_unless_enabled():
    mbar_init = word(CTRL, {(19, 15): 10, (24, 20): 11, (9, 7): 0b010})
    _trap(_words(mbar_init), "Appendix B placeholder")
    m, result = run(f"_start:\n        li a0, 64\n        li a1, 2\n{_words(mbar_init)}\n{EXIT}",
                    config={"tile.mbar_instructions": True})
    assert result.reason == "halted"
    state = m.tile.mbar_packing.unpack(m.tile.pes[0].shmem.read(64, 8))
    assert state == {"phase": 0, "pending": 2, "expected": 2, "tx": 0}


def test_disabled_opcode_is_illegal():
    _trap(_words(W1_LOAD, W0_LOAD), "major opcode 0x7b is not enabled", config={"tile.opcodes": ""})
    with pytest.raises(ConfigError, match="custom-0 not decoded by architecture tile"):
        machine("nop", config={"tile.opcodes": "custom-0"})


def test_gprs_are_read_when_each_word_executes():
    # rs1 is read by the W1: changing a0 between W1 and W0 must not move the load
    m, _ = run(f"""_start:
        la a0, data
        .word {W1_LOAD:#x}
        la a0, other
        .word {W0_LOAD:#x}
        {EXIT}
        .data
        .align 6
data:   .space 1024, 7
other:  .space 1024, 9
""")
    assert m.tile.threads["hart0"].tile(4).tobytes() == bytes([7]) * 1024
    assert [str(r) for r in m.tile.reports] == [
        f"hart0 pc {0x10014:#010x} word {W0_LOAD:#010x}: the W1 staged at 0x10008 is not directly before "
        "this word (interleaved sequence)"]


def test_strict_sequencing_trap_and_off():
    src = f"_start:\n        la a0, data\n        .word {W1_LOAD:#x}\n        nop\n        .word {W0_LOAD:#x}\n{EXIT}" \
          "\n        .data\n        .align 6\ndata: .space 1024\n"
    with pytest.raises(UnhandledTrap, match="interleaved sequence"):
        run(src, config={"tile.strict_sequencing": "trap"})
    m, result = run(src, config={"tile.strict_sequencing": "false"})
    assert result.reason == "halted" and m.tile.reports == []


def test_illegal_sequence_goes_to_the_trap_handler_with_mcause_2_and_the_word():
    m, result = run(f"""_start:
        la t0, handler
        csrw mtvec, t0
bad:    .word {W0_LOAD:#x}
        mv a0, s1
        {EXIT}
        .align 2
handler:
        csrr s1, mcause
        csrr s2, mtval
        csrr s3, mepc
        addi t1, s3, 4
        csrw mepc, t1
        mret
""")
    hart = m.agent("hart0")
    assert result.exit_code == 2
    assert hart.x[18] == W0_LOAD and hart.x[19] == m.symbols["bad"]


def test_staging_survives_a_trap_between_words():
    # an illegal word between W1 and W0 traps into a handler; the W1 stays staged
    m, result = run(f"""_start:
        la t0, handler
        csrw mtvec, t0
        la a0, data
        .word {W1_LOAD:#x}
        .word 0xffffffff
        .word {W0_LOAD:#x}
        {EXIT}
        .align 2
handler:
        csrr t1, mepc
        addi t1, t1, 4
        csrw mepc, t1
        mret
        .data
        .align 6
data:   .space 1024, 5
""")
    assert result.reason == "halted"
    assert m.tile.threads["hart0"].tile(4).tobytes() == bytes([5]) * 1024


def test_a_trapping_dispatch_drops_the_staged_words():
    m, result = run(f"""_start:
        la t0, handler
        csrw mtvec, t0
        li a0, 0x40000000
        .word {W1_LOAD:#x}
        .word {W0_LOAD:#x}
        {EXIT}
        .align 2
handler:
        csrr s1, mcause
        csrr t1, mepc
        addi t1, t1, 4
        csrw mepc, t1
        mret
""")
    assert result.reason == "halted"
    hart = m.agent("hart0")
    assert hart.x[9] == 5                               # load access fault
    thread = m.tile.threads["hart0"]
    assert thread.asp is None and thread.w1 is None


def test_addrctl_must_be_zero():
    _trap(_words(word(W2, {30: 1, 26: 1, (25, 20): 0b100011, (11, 7): 2})), "addrCtl must be 0")
