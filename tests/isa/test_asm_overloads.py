"""Overloaded mnemonics: literal words in syntax, and errors that list every form."""

import pytest

from tessera.errors import AssemblyError, EncodeError
from tessera.isa import Architecture, Decoder, Disassembler, Encoding, Field, RegisterFile
from tessera.isa.asm import assemble

# A CHIP-8-like machine: several forms share "ld" and "jp", told apart by literal words
# (i, [i], dt, v0) as well as by registers.
V = RegisterFile("v", 16, 8, names=tuple(f"v{i:x}" for i in range(16)))
FIELDS = (
    Field("vx", "11:8", kind="reg", regfile="v"),
    Field("vy", "7:4", kind="reg", regfile="v"),
    Field("byte", "7:0", kind="uimm"),
    Field("nnn", "11:0", kind="uimm"),
    Field("addr", "11:0", kind="uimm"),
)
LD_FORMS = ("ld vx, byte", "ld vx, vy", "ld i, nnn", "ld [i], vx", "ld vx, [i]", "ld dt, vx")
CHIP = Architecture(
    name="chip", word_bits=16, endian="big", address_bits=12, register_files=(V,),
    fields=FIELDS, encodings=(
        Encoding("ld", 0x6000, 0xF000, "{vx}, {byte}"),
        Encoding("ld", 0x8000, 0xF00F, "{vx}, {vy}"),
        Encoding("ld", 0xA000, 0xF000, "i, {nnn}"),
        Encoding("ld", 0xF055, 0xF0FF, "[i], {vx}"),
        Encoding("ld", 0xF065, 0xF0FF, "{vx}, [i]"),
        Encoding("ld", 0xF015, 0xF0FF, "dt, {vx}"),
        Encoding("jp", 0x1000, 0xF000, "{addr}"),
        Encoding("jp", 0xB000, 0xF000, "v0, {addr}"),
        Encoding("cls", 0x00E0, 0xFFFF, ""),
    ))
LISTING = "ld expects one of: " + " | ".join(LD_FORMS)


def word(text: str) -> int:
    (_, data), = assemble(CHIP, text).segments
    return int.from_bytes(data, "big")


def error(text: str, cls=AssemblyError) -> AssemblyError:
    with pytest.raises(cls) as info:
        assemble(CHIP, text)
    (err,) = info.value.errors
    return err


@pytest.mark.parametrize("text, expected", [
    ("ld v1, 0x20", 0x6120),
    ("ld v1, v2", 0x8120),
    ("ld i, 0x200", 0xA200),
    ("LD I, 0x200", 0xA200),          # literal words match case-insensitively
    ("ld [i], v3", 0xF355),
    ("ld [ i ] , v3", 0xF355),        # blanks around punctuation are free
    ("ld v3, [I]", 0xF365),
    ("ld dt, v4", 0xF415),
    ("jp 0x345", 0x1345),
    ("jp v0, 0x345", 0xB345),
])
def test_literal_words_select_the_form(text, expected):
    assert word(text) == expected


def test_disassembly_of_every_form_assembles_back():
    dis, dec = Disassembler(CHIP), Decoder(CHIP)
    for w in (0x6120, 0x8120, 0xA200, 0xF355, 0xF365, 0xF415, 0x1345, 0xB345, 0x00E0):
        text = dis.text(dec.decode(w, 0))
        assert word(text) == w, text


def test_a_literal_word_is_never_an_unknown_register():
    err = error("ld v1, i")
    assert (err.column, err.message) == (8, LISTING)
    err = error("ld i, v1")  # only "ld i, nnn" reads 'i'; its operand is what failed
    assert err.message == f"undefined symbol 'v1' ({LISTING})"
    assert "unknown register 'i'" not in err.message


def test_a_literal_word_is_written_whole():
    assert "unknown register 'ix'" in error("ld ix, 5").message   # not "i" then "x, 5"
    assert "unknown register 'd t'" in error("ld d t, v1").message


def test_wrong_shape_lists_every_form_as_written():
    err = error("ld v1")
    assert (err.column, err.message) == (6, LISTING)
    assert error("jp v1, 5").message == "jp expects one of: jp addr | jp v0, addr"


def test_the_operand_that_got_furthest_is_reported_with_the_forms():
    err = error("ld dt, 5")
    assert (err.column, err.message) == (8, f"unknown register '5'; did you mean 'v5'? ({LISTING})")


def test_a_value_that_does_not_fit_names_its_form_only():
    err = error("ld i, 0x1000", EncodeError)
    assert (err.column, err.message) == (7, "ld: nnn=4096 does not fit in 0..4095")


def test_one_form_of_the_right_shape_is_the_one_meant():
    err = error("jp nowhere")   # "jp v0, addr" needs two operands: only "jp addr" fits
    assert err.message == "undefined symbol 'nowhere'"
    assert error("cls 1").message == "cls takes no operands"


def test_a_gap_in_the_template_is_required_next_to_a_word():
    arch = Architecture(name="gap", word_bits=16, register_files=(V,), fields=FIELDS,
                        encodings=(Encoding("out", 0x1000, 0xF000, "port {nnn}"),
                                   Encoding("out", 0x2000, 0xF000, "v{nnn}")))  # glued
    assert assemble(arch, "out port 5").segments[0][1] == (0x1005).to_bytes(2, "little")
    assert assemble(arch, "out v3").segments[0][1] == (0x2003).to_bytes(2, "little")
    with pytest.raises(AssemblyError, match=r"out expects one of: out port nnn \| out vnnn"):
        assemble(arch, "out port5")


def test_rfphoenix_overloads_list_their_forms():
    pytest.importorskip("tessera_phoenix")
    from tessera.plugins import PluginHost

    arch = PluginHost().architecture("phoenix")
    with pytest.raises(AssemblyError) as info:
        assemble(arch, "sll r1, r2\nrex r1")
    assert [e.message for e in info.value.errors] == [
        "sll expects one of: sll[.sz] rt, ra, rb[, mask] | sll[.sz] rt, ra, rb, fill[, mask]",
        "rex expects one of: rex tm, ra | rex tm, ra, irq4, v",
    ]
    with pytest.raises(EncodeError, match="sll: fill=9 does not fit in 0..1"):
        assemble(arch, "sll r1, r2, r3, 9")
