"""Every table row: encode -> decode -> disassemble -> assemble gives the same word.

Operand values are drawn by hypothesis from each field's full range; PC-relative
forms are placed at drawn addresses so offsets (and their wrap-around) are exercised.
Fields with a default (optional operands, mnemonic suffixes) are drawn equal to the
default half the time, since that is when the disassembler leaves them out.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from isa_toyarch import toy32, toy48, toyx

from tessera.isa import Decoder, Disassembler, Encoder
from tessera.isa.asm import Assembler, split_operands

ARCHES = [toy32(), toy48(), toyx()]
ROWS = [(arch, enc) for arch in ARCHES for enc in arch.encodings]


def _operand(draw, field, arch, *, suffix=False):
    if field.kind == "reg":
        values = st.integers(0, arch.register_file_map[field.regfile].count - 1)
    else:
        lo, hi = field.value_range()
        step = 1 << field.scale
        values = st.integers(lo // step, hi // step).map(lambda v: v * step)
    if field.default is not None:
        if draw(st.booleans()):
            return field.default
        values = values.filter(lambda v: v != field.default)
    return draw(values)


@pytest.mark.parametrize("arch, enc", ROWS, ids=[f"{a.name}-{e.mnemonic}-{e.syntax}"
                                                 for a, e in ROWS])
@settings(deadline=None)
@given(data=st.data())
def test_round_trip(arch, enc, data):
    fields = arch.field_map
    operands = {name: _operand(data.draw, fields[name], arch, suffix=name == enc.suffix)
                for name in enc.operand_names}
    word = Encoder(arch).encode(enc, operands)
    top = (1 << arch.address_bits) - arch.word_bytes
    address = data.draw(st.integers(0, top // arch.word_bytes)) * arch.word_bytes
    decoder = Decoder(arch)
    ins = decoder.decode(word, address)
    assert ins.word == word
    if ins.encoding is enc:  # else a more specific alias (nop) claimed the word
        assert ins.operands == operands
    text = Disassembler(arch, decoder).text(ins)
    expected = Encoder(arch).to_bytes(word)

    if ins.encoding is enc:  # defaults are left out of the text, other values written
        mnemonic, _, args = text.partition(" ")
        if enc.suffix is not None:
            written = operands[enc.suffix] != fields[enc.suffix].default
            assert (mnemonic != enc.mnemonic) == written, text
        optional = enc.optional_operand
        if optional is not None:
            left_out = operands[optional] == fields[optional].default
            assert len(split_operands(args)) == len(split_operands(enc.syntax)) - left_out, text

    asm = Assembler(arch, decoder)
    at_org = asm.assemble(f".org {address:#x}\n{text}\n")
    assert at_org.segments == ((address, expected),), text
    at_base = asm.assemble(text, base=address)
    assert at_base.segments == ((address, expected),), text
    assert asm.assemble(text.upper(), base=address).segments == at_base.segments
