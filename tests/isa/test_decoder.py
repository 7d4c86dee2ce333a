"""Decoder, encoder and disassembler generated from the encoding table."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from isa_toyarch import ENCODINGS32, _illegal, toy32, toy48

from tessera.control import Trap
from tessera.errors import ConfigError, DecodeError, EncodeError
from tessera.isa import ILLEGAL, Decoder, Disassembler, Encoder, Encoding

ARCH = toy32()
DEC = Decoder(ARCH)
ENC = Encoder(ARCH)
DIS = Disassembler(ARCH)
TRAPPING = Decoder(toy32(illegal=_illegal))


@pytest.mark.parametrize("enc", ENCODINGS32, ids=lambda e: f"{e.mnemonic}:{e.syntax}")
def test_every_row_decodes_to_itself(enc):
    word = enc.match | (~enc.mask & 0xFFFFFFFF)  # every operand bit set
    ins = DEC.decode(word, 0x40)
    assert ins.encoding is enc
    assert ins.mnemonic == enc.mnemonic
    assert (ins.address, ins.size, ins.next) == (0x40, 4, 0x44)
    assert set(ins.operands) == set(enc.operand_names)
    for name, value in ins.operands.items():
        assert getattr(ins, name) == value


def test_more_specific_mask_wins():
    assert DEC.decode(0x13).mnemonic == "nop"           # addi r0, r0, 0
    assert DEC.decode(0x13 | 1 << 7).mnemonic == "addi"  # addi r1, r0, 0


def test_operands_are_decoded_by_field():
    ins = DEC.decode(0xFE009EE3, 0x100)  # bne r1, r0, -4
    assert ins.mnemonic == "bne"
    assert ins.operands == {"rs1": 1, "rs2": 0, "off": -4}


def test_unmatched_word_without_illegal_is_decode_error():
    with pytest.raises(DecodeError) as info:
        DEC.decode(0x7F, 0x20)
    assert info.value.word == 0x7F
    assert info.value.address == 0x20


def test_unmatched_word_with_illegal_decodes_to_trap_form():
    ins = TRAPPING.decode(0x7F, 0x20)
    assert ins.encoding is ILLEGAL
    assert isinstance(ins.trap, Trap)
    assert (ins.trap.cause, ins.trap.tval) == (2, 0x7F)
    with pytest.raises(Trap):
        ins.run(None, ins)


def test_illegal_hook_must_return_a_trap():
    dec = Decoder(toy32(illegal=lambda word, address: "nope"))
    with pytest.raises(ConfigError):
        dec.decode(0x7F)


@pytest.mark.parametrize("word", [-1, 1 << 32, "0x13", 1.5, None])
def test_out_of_range_words_are_decode_errors(word):
    for dec in (DEC, TRAPPING):
        with pytest.raises(DecodeError):
            dec.decode(word)


@settings(deadline=None)
@given(st.integers(0, 0xFFFFFFFF))
def test_any_word_decodes_or_is_a_decode_error(word):
    try:
        ins = DEC.decode(word)
    except DecodeError:
        assert DEC.match(word) is None
    else:
        assert word & ins.encoding.mask == ins.encoding.match
    ins = TRAPPING.decode(word)  # with an illegal trap, decoding never fails
    assert ins.word == word


@settings(deadline=None)
@given(st.integers(0, (1 << 48) - 1))
def test_48_bit_words_decode_or_fail_cleanly(word):
    dec = Decoder(toy48())
    try:
        ins = dec.decode(word)
    except DecodeError:
        return
    assert ins.size == 6


def test_duplicate_match_and_mask_is_config_error():
    arch = toy32(encodings=ENCODINGS32 + (Encoding("dup", 0x73, 0xFFFFFFFF),))
    with pytest.raises(ConfigError, match="dup and halt|halt and dup"):
        Decoder(arch)


# -- encoder -------------------------------------------------------------------------

ADDI = next(e for e in ENCODINGS32 if e.mnemonic == "addi")


def test_encode_builds_the_word():
    assert ENC.encode(ADDI, {"rd": 1, "rs1": 1, "imm": -1}) == 0xFFF08093
    assert ENC.to_bytes(0xFFF08093) == bytes.fromhex("9380f0ff")
    assert Encoder(toy48()).to_bytes(0x0102030405FF) == bytes.fromhex("0102030405ff")


@pytest.mark.parametrize("operands, message", [
    ({"rd": 1, "rs1": 1}, "addi: missing operand(s) imm"),
    ({"rd": 1, "rs1": 1, "imm": 0, "rs2": 0}, "addi: unexpected operand(s) rs2"),
    ({"rd": 1, "rs1": 1, "imm": 5000}, "addi: imm=5000 does not fit in -2048..2047"),
    ({"rd": 8, "rs1": 1, "imm": 0}, "addi: rd=8 does not fit in 0..7"),
])
def test_encode_errors(operands, message):
    with pytest.raises(EncodeError) as info:
        ENC.encode(ADDI, operands)
    assert info.value.message == message


# -- disassembler ----------------------------------------------------------------------

@pytest.mark.parametrize("word, address, text", [
    (0x003100B3, 0, "add r1, r2, r3"),
    (0xFFF08093, 0, "addi r1, r1, -1"),
    (0x13, 0, "nop"),
    (0xFF83A103, 0, "ld r2, -8(r7)"),
    (0x0021B103, 0, "ldw r2, 8(r3)"),
    (0xFE009EE3, 0x100, "bne r1, r0, 0xfc"),
    (0x00008067, 0, "jmp (r1)"),
    (0x000010F3, 0, "mode super"),
    (0x00012073, 0, "sem.wait r2"),
    (0x00000073, 0, "halt"),
    (0x12340137, 0, "li r2, 0x1234"),
    (0x0000007F, 0, ".word 0x0000007f"),
])
def test_disassembly_text(word, address, text):
    assert DIS.word(word, address) == text


def test_pcrel_operands_wrap_and_use_symbols():
    assert DIS.word(0xFE009EE3, 0) == "bne r1, r0, 0xfffffffc"
    assert DIS.word(0xFE009EE3, 0x100, {0xFC: "top"}) == "bne r1, r0, top"


def test_listing_and_short_tail():
    data = bytes.fromhex("b3003100" "73000000" "aa")
    rows = list(DIS.lines(data, 0x10))
    assert rows == [(0x10, 0x003100B3, "add r1, r2, r3"), (0x14, 0x73, "halt"),
                    (0x18, None, ".byte 0xaa")]
    listing = DIS.listing(data, 0x10, {0x14: "stop"})
    assert "stop:\n  00000014:  00000073  halt" in listing


def test_listing_addresses_wrap_at_the_address_width():
    arch = toy32()
    word = Encoder(arch).encode(arch.encodings_named("add")[0], {"rd": 1, "rs1": 2, "rs2": 3})
    data = word.to_bytes(4, "little") * 3
    addresses = [addr for addr, _, _ in Disassembler(arch).lines(data, 0xFFFF_FFFC)]
    assert addresses == [0xFFFF_FFFC, 0x0, 0x4]


def test_a_word_decoded_again_is_a_new_instruction():
    """The decoder remembers words, not instructions: each decode is its own object with
    its own operands (a semantic or a tool may change an instruction's attributes)."""
    first = DEC.decode(0xFE009EE3, 0x100)
    first.operands["off"] = 99
    first.off = 99
    again = DEC.decode(0xFE009EE3, 0x200)
    assert again is not first
    assert (again.address, again.off, again.operands["off"]) == (0x200, -4, -4)


def test_illegal_words_are_not_remembered():
    """An undecodable word's trap names its address, so each decode builds its own."""
    a, b = TRAPPING.decode(0xFFFFFFFF, 0x10), TRAPPING.decode(0xFFFFFFFF, 0x20)
    assert a.trap is not b.trap
    assert not TRAPPING._known.get(0xFFFFFFFF)


def test_machines_of_one_architecture_share_a_decoder():
    from tessera.isa.decoder import shared_decoder
    from tessera.machine import Machine

    arch = toy32()
    one, two = Machine(arch, host=None), Machine(arch, host=None)
    assert one.decoder(arch) is two.decoder(arch) is shared_decoder(arch)
    assert shared_decoder(toy32()) is not shared_decoder(arch)   # another object, its own
