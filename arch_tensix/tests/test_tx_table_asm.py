"""The Tensix assembler: vendor syntax round trips, the LLK macro spelling, extras, errors."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tensix_table_support import ARCHS, decoder, dis, encode, word, words

from tessera.errors import AssemblyError
from tessera.isa import Disassembler, Encoder
from tessera_tensix.isa import row_info, tables

_GENERIC = {chip: Disassembler(arch) for chip, arch in ARCHS.items()}
ROWS = [(chip, enc) for chip in ("bh", "wh") for enc in ARCHS[chip].encodings
        if row_info(enc) is not None and "reserved-bits" not in enc.flags]


@pytest.mark.parametrize("chip, enc", ROWS, ids=[f"{c}-{e.mnemonic}" for c, e in ROWS])
@settings(deadline=None, max_examples=25)
@given(data=st.data())
def test_table_round_trip_every_row(chip, enc, data):
    arch = ARCHS[chip]
    fields = arch.field_map
    info = row_info(enc)
    defaults = dict(info.extras)
    operands = {}
    for name in enc.operand_names:
        lo, hi = fields[name].value_range()
        value = st.integers(lo, hi)
        if name in defaults:
            value = st.one_of(st.just(defaults[name]), value)
        operands[name] = data.draw(value, label=name)
    value = Encoder(arch).encode(enc, operands)
    ins = decoder(chip).decode(value)
    assert ins.encoding is enc and ins.operands == operands
    text = dis(value, arch)
    assert text.split(" ")[0] == enc.mnemonic
    assert word(text, arch) == value, text
    generic = _GENERIC[chip].word(value)           # what a plain Disassembler prints also assembles
    assert word(generic, arch) == value, generic


def _macro_text(chip, enc, operands):
    """``NAME a, b, …`` in the TT_OP argument order (reserved arguments written as 0)."""
    info = row_info(enc)
    args = []
    for slot in info.macro:
        args.append("0" if slot.startswith("-") else str(operands[slot]))
    return f"{info.name} {', '.join(args)}".rstrip()


@pytest.mark.parametrize("chip, enc", ROWS, ids=[f"{c}-{e.mnemonic}" for c, e in ROWS])
@settings(deadline=None, max_examples=10)
@given(data=st.data())
def test_table_macro_spelling_of_every_row(chip, enc, data):
    arch = ARCHS[chip]
    info = row_info(enc)
    defaults = dict(info.extras)
    operands = {n: data.draw(st.integers(*arch.field_map[n].value_range()), label=n)
                if n in info.macro else defaults.get(n, 0) for n in enc.operand_names}
    value = Encoder(arch).encode(enc, operands)
    assert word(_macro_text(chip, enc, operands), arch) == value
    call = f"TTI_{info.name}({', '.join('0' if s.startswith('-') else str(operands[s]) for s in info.macro)})"
    assert word(call, arch) == value
    by_bits = sorted(enc.operand_names, key=lambda n: -arch.field_map[n].bits[0][1])
    if len(by_bits) != len(info.macro):        # the hardware fields alone, same order
        assert word(f"{info.name} {', '.join(str(operands[n]) for n in by_bits)}", arch) == value


def test_table_vendor_examples():
    assert word("sfpload L0,0,3,7") == 0x7003_E000
    assert word("sfpload L0, 0, 3, 7") == 0x7003_E000          # blanks are fine
    assert word("SfpLoad l0,0,3,7") == 0x7003_E000              # mixed case: vendor order
    assert word("sfpadd L0,L10,L0,L1,0") == 0x850A_0100        # decode vector
    assert word("ttsetc16 41,257") == 0xB229_0101
    assert word("ttstallwait 8,1024") == 0xA204_0400
    assert word("ttsemwait 322,2,2") == 0xA6A1_000A
    assert word("sfpiadd L1,L2,-0x800,1") == word("sfpiadd L1,L2,0x800,1") == 0x7980_0211
    assert word("sfploadi L3,-8192,4") == word("sfploadi L3,57344,4") == 0x7134_E000
    assert word("sfpmad LREG3,LREG0,LREG1,LREG2,0") == word("sfpmad L3,L0,L1,L2,0")
    assert word("sfpmad 3,0,1,2,0") == word("sfpmad L3,L0,L1,L2,0")
    assert word("ttsfpload L0,0,3,7") == 0x7003_E000            # "tt" + name is accepted
    assert word("sfpgt L0,L0,0x000,15") == word("sfpgt L0,L0,15") == 0x9700_000F     # reserved imm
    assert dis(0x9700_000F) == "sfpgt L0,L0,0x000,15" and dis(0x9600_0071) == "sfple L7,L0,0x000,1"
    assert word("end") == 0
    assert words("sfpnop\nttnop\nend") == [0x8F00_0000, 0x0200_0000, 0]


def test_table_macro_examples():
    assert word("SFPLOAD 0, 3, 7, 0") == word("sfpload L0,0,3,7")
    assert word("SFPSTORE 3, 3, 7, 2") == word("sfpstore 2,L3,3,7")
    assert word("SFPMAD 0, 1, 2, 3, 0") == word("sfpmad L3,L0,L1,L2,0")
    assert word("TTI_SFPMAD(0, 1, 2, 3, 0)") == word("sfpmad L3,L0,L1,L2,0")
    assert word("TT_SFPLOADI(2, 0, 0x3f80)") == word("sfploadi L2,16256,0")
    assert word("SETC16 41, 257") == word("setc16 41, 257") == word("ttsetc16 41,257")
    assert word("SFP_STOCH_RND 2, 31, 1, 2, 3, 9") == word("SFPSTOCHRND 2, 31, 1, 2, 3, 9") \
        == word("sfpstochrnd L3,L1,L2,9,2,31")
    assert word("MOP_CFG 5") == word("MOPCFG 5") == word("ttmopcfg 5")
    # TT_OP_SFPMOV(imm12_math, lreg_c, lreg_dest, instr_mod1): the reserved argument, or without it
    assert word("SFPMOV 0, 1, 2, 8") == word("SFPMOV 1, 2, 8") == word("sfpmov L2,L1,8")
    assert word("SFPLOAD L1, 3, 7, 0") == word("sfpload L1,0,3,7")
    assert word("n = 5\nSFPLOAD n, 3, 7, n*2") == word("sfpload L5,10,3,7")


def test_table_extras_may_be_left_out():
    assert word("sfpand L1,L2") == word("sfpand L1,L2,L0,0") == encode("SFPAND", lreg_dest=1, lreg_c=2)
    assert word("sfpand L1,L2,L3") == encode("SFPAND", lreg_dest=1, lreg_c=2, lreg_src_b=3)
    assert word("sfpmul24 L0,L1,L2,0") == encode("SFPMUL24", lreg_src_a=1, lreg_src_b=2, lreg_src_c=9)
    assert word("sfpmul24 L0,L1,L2,0,L3") == encode("SFPMUL24", lreg_src_a=1, lreg_src_b=2, lreg_src_c=3)
    assert word("sfpcompc") == 0x8B00_0000 and word("sfpcompc L2") == 0x8B00_0020
    assert word("sfppushc 3") == 0x8700_0003


@pytest.mark.parametrize("text, message", [
    ("sfpload L16,0,3,7", "not an LReg"),
    ("sfpload Q1,0,3,7", "undefined symbol"),
    ("sfpload L0,1024,3,7", "does not fit"),
    ("sfpload L0,0,3", "expected"),
    ("SFPLOAD 0, 3, 7", "SFPLOAD takes 4 arguments"),
    ("SFPMOV 1, 1, 2, 8", "imm12_math must be 0 (bits 23:12 are reserved)"),
    ("SFPMAD 16, 1, 2, 3, 0", "lreg_src_a=16 is not an LReg"),
    ("TTI_SFPNOP(1)", "SFPNOP takes 0 arguments"),
    ("ttfoo 1", "unknown mnemonic"),
    ("sfpand L1,L2,L3,1,2", "expected"),
    ("sfpgt L0,L1,1,2", "sfpgt: the imm12_math operand must be 0"),
    ("sfpmad L0,L1,L2,L3,0\nsfpmad L0,L1", "expected 'sfpmad lreg_dest,lreg_src_a,lreg_src_b,lreg_src_c,instr_mod1'"),
])
def test_table_assembly_errors(text, message):
    with pytest.raises(AssemblyError) as exc:
        word(text)
    assert message in str(exc.value)


def test_table_wormhole_uses_its_own_field_widths():
    assert word("sfpload L0,0,3,3", ARCHS["wh"]) == 0x7003_C000       # AddrMod [15:14] on WH
    with pytest.raises(AssemblyError, match="does not fit"):
        word("sfpload L0,0,3,7", ARCHS["wh"])
    assert word("sfpstochrnd L0,L1,L2,0,1,0", ARCHS["wh"]) == 0x8E20_1200      # RoundingMode [21]
    with pytest.raises(AssemblyError, match="does not fit"):
        word("sfpstochrnd L0,L1,L2,0,2,0", ARCHS["wh"])
    assert word("sfpstochrnd L0,L1,L2,0,2,0") == 0x8E40_1200                   # BH: 2 bits [22:21]
    with pytest.raises(AssemblyError, match="unknown mnemonic"):
        word("sfpmul24 L0,L1,L2,0", ARCHS["wh"])
    wh = tables("wh").row("ZEROACC")
    assert wh.fields == ("clear_mode", "addr_mode", "dst", "revert")     # Revert [18]: an extra
    assert wh.extras == (("revert", 0),) and "revert" not in wh.macro
    assert ARCHS["wh"].field_map["revert"].bits == ((18, 18),)
    assert word("ttzeroacc 3,0,0", ARCHS["wh"]) == 0x1018_0000 == word("ZEROACC 3,0,0", ARCHS["wh"])
    assert word("ttzeroacc 3,0,0,1", ARCHS["wh"]) == 0x101C_0000
    assert dis(0x1018_0000, ARCHS["wh"]) == "ttzeroacc 3,0,0"
    assert dis(0x101C_0000, ARCHS["wh"]) == "ttzeroacc 3,0,0,1"
    assert ARCHS["wh"].field_map["clear_mode"].bits == ((21, 19),)
