"""Every row of the encoding table: coverage of the spec, semantics, and the round trip.

encode → decode → disassemble → assemble must give the same bytes back for operands
drawn anywhere in their fields' ranges, so the table, the disassembler's spelling and
the assembler's reading of it can never drift apart.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from table_support import ARCH, DEC, DIS, ENC, M32, assemble

from tessera.isa import Decoder, SemanticRef
from tessera_phoenix.asm import PhoenixAssembler
from tessera_phoenix.encoding import (
    ENCODINGS,
    POSTFIX_FIELDS,
    POSTFIX_IMMEDIATES,
    TOO_MANY_POSTFIXES,
)
from tessera_phoenix.semantics import REGISTRY, load_all
from tessera_phoenix.semantics.system import too_many_postfixes

FIELDS = ARCH.field_map
FILES = ARCH.register_file_map

#: Every operation of spec sections 3–4 by mnemonic (conditions counted separately).
SPEC_MNEMONICS = """
add sub mul and or xor andc nand nor xnor orc addi subfi muli andi ori xori nop
cmp cmp_eq cmp_ne cmp_lt cmp_le cmp_gt cmp_ge cmp_ltu cmp_leu cmp_gtu cmp_geu
cmpi cmp_eqi cmp_nei cmp_lti cmp_lei cmp_gti cmp_gei cmp_ltui cmp_leui cmp_gtui cmp_geui
fcmp fcmp_eq fcmp_ne fcmp_lt fcmp_le fcmp_gt fcmp_ge fcmp_un fcmp_or fcmp_abslt fcmp_absge
fcmpi fcmp_eqi fcmp_nei fcmp_lti fcmp_lei fcmp_gti fcmp_gei fcmp_uni fcmp_ori
sll srl sra slli srli srai cntlz cntpop sextb sextw mcmprss remask
vex veins vshuf vsllvi vsrlvi vsllv vsrlv vcmprss
fadd fsub fma fms fnma fnms fneg fabs fnabs fsign ffinite fclass ftrunc itof ftoi fres frsqrte
fsigmoid fman
beq bne blt bge bltu bgeu bbs fblt fbge fble fbgt fbeq fbne bra bsr jmp call ret jmpr
ld ldu st ldx ldux stx ldsr ldsrx stcr stcrx cache cachex
csrrd csrrw csrrc csrrs brk rti rex peekq popq statq resetq pushq tlbrd tlbrw ptghash shptendx pfx
""".split()


def test_table_covers_every_spec_operation():
    mnemonics = {e.mnemonic for e in ENCODINGS}
    assert sorted(set(SPEC_MNEMONICS) - mnemonics) == []
    assert len(SPEC_MNEMONICS) == len(set(SPEC_MNEMONICS))


def test_table_every_row_has_semantics():
    """Every row names a registered operation: the registry has no ``missing`` fallback,
    so an unregistered name would be a configuration error when the word is decoded."""
    load_all()
    missing = sorted({e.semantics.name for e in ENCODINGS} - set(REGISTRY))
    assert missing == []
    assert REGISTRY.missing is None
    assert all(e.semantics.resolve() is REGISTRY[e.semantics.name] for e in ENCODINGS)


def test_table_rows_are_registry_refs_and_pickle_by_name():
    import pickle

    assert all(isinstance(e.semantics, SemanticRef) and e.semantics.package == REGISTRY.package
               for e in ENCODINGS)
    enc = ENCODINGS[0]
    assert pickle.loads(pickle.dumps(enc)) == enc


def test_table_postfix_capable_rows_and_only_they_declare_the_pfx_variant():
    """``refine`` swaps in the PFX trap only through the variant the row declares."""
    for enc in ENCODINGS:
        capable = bool(set(enc.operand_names) & set(POSTFIX_IMMEDIATES))
        assert capable == (enc.mnemonic in POSTFIX_FIELDS), enc.mnemonic
        expected = (TOO_MANY_POSTFIXES,) if capable else ()
        assert enc.variant_names == expected, enc.mnemonic
        if expected:
            assert enc.variant(TOO_MANY_POSTFIXES).resolve() is too_many_postfixes


def test_table_decoder_has_no_same_mask_collisions():
    Decoder(ARCH, check_overlaps=True)  # raises ConfigError on two rows with one match/mask


def test_table_real_architecture_record_uses_this_table():
    arch_mod = pytest.importorskip("tessera_phoenix.arch", exc_type=ImportError)
    arch = arch_mod.PHOENIX
    assert arch.encodings == ENCODINGS
    assert arch.assembler is PhoenixAssembler
    assert arch.refine is not None


def _operand(field, draw):
    if field.name == "reltarget":  # addresses wrap at 2^32: larger offsets are aliases
        return draw(st.integers(-(1 << 31), (1 << 31) - 1))
    if field.kind == "reg":
        return draw(st.integers(0, FILES[field.regfile].count - 1))
    if field.kind == "enum":
        return draw(st.integers(0, len(field.names) - 1))
    low, high = field.value_range()
    return draw(st.integers(low, high))


_ASM = PhoenixAssembler(ARCH)


@pytest.mark.parametrize("enc", ENCODINGS, ids=[f"{i}-{e.mnemonic}" for i, e in enumerate(ENCODINGS)])
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_table_round_trip_every_row(enc, data):
    ops = {name: _operand(FIELDS[name], data.draw) for name in enc.operand_names}
    address = data.draw(st.integers(0, M32 - 64), label="address")
    word = ENC.encode(enc, ops)
    ins = DEC.decode(word, address)
    # the word runs the row's operation (a generic row's word may decode as its named twin)
    assert ins.encoding.semantics == enc.semantics
    assert ENC.encode(ins.encoding, ins.operands) == word
    text = DIS.text(ins)
    program = _ASM.assemble(text, base=address)
    assert program.segments == ((address, ENC.to_bytes(word)),), text


def test_table_assembles_suffix_mask_and_optional_forms():
    data = assemble("add.w v1, v2, r3, vm0\nadd r1, r2, r3\nld.b r1, -4[r2]\nst.h v1, 8[r2], r9")
    texts = [DIS.word(int.from_bytes(data[i:i + 6], "little")) for i in range(0, len(data), 6)]
    assert texts == ["add.w v1, v2, r3, r48", "add r1, r2, r3", "ld.b r1, -4[r2]",
                     "st.h v1, 8[r2], r9"]
