"""Assembling mnemonic suffixes (``ld.b``) and optional last operands (``{mask?}``).

The round trip through the disassembler is a property in test_roundtrip.py; these
pin the spellings, the lookup order and the exact error positions.
"""

import pytest
from isa_toyarch import REGS, toyx

from tessera.errors import AssemblyError, ConfigError
from tessera.isa import Architecture, Decoder, Disassembler, Encoder, Encoding, Field
from tessera.isa.asm import Assembler, assemble
from tessera.isa.asm.forms import Form, omit_optional

ARCH = toyx()
DEC = Decoder(ARCH)


def decoded(text, arch=ARCH):
    """``[(mnemonic, operands)]`` of the assembled words."""
    addr, data = assemble(arch, text).image()
    dec = DEC if arch is ARCH else Decoder(arch)
    return [(ins.mnemonic, ins.operands) for ins in
            (dec.decode(int.from_bytes(data[i:i + 4], "little"), addr + i)
             for i in range(0, len(data), 4))]


def where(text, arch=ARCH, cls=AssemblyError):
    with pytest.raises(cls) as info:
        assemble(arch, text)
    err = info.value
    return err.line, err.column, err.message


# -- optional operands -----------------------------------------------------------------

def test_optional_operand_takes_the_field_default_when_left_out():
    assert decoded("add r1, r2, r3\nadd r1, r2, r3, r5\nadd r1, r2, r3, sp") == [
        ("add", {"rt": 1, "ra": 2, "rb": 3, "mask": 7}),
        ("add", {"rt": 1, "ra": 2, "rb": 3, "mask": 5}),
        ("add", {"rt": 1, "ra": 2, "rb": 3, "mask": 7})]
    assert decoded("shl r1, r2\nshl r1, r2, 0\nshl r1, r2 , 31") == [
        ("shl", {"rt": 1, "ra": 2, "sh": 1}), ("shl", {"rt": 1, "ra": 2, "sh": 0}),
        ("shl", {"rt": 1, "ra": 2, "sh": 31})]


def test_a_form_whose_only_operand_is_optional():
    assert decoded("fence\nfence 3\nfence end\nend:") == [
        ("fence", {"scope": 2, "lanes": 0xFFFF}), ("fence", {"scope": 2, "lanes": 3}),
        ("fence", {"scope": 2, "lanes": 12})]


def test_separator_cut_is_the_disassemblers():
    assert omit_optional("{rt}, {ra}, {rb}, {mask?}", "mask") == ("{rt}, {ra}, {rb}", ", {mask?}", "")
    assert omit_optional("{rb}, {d}[{ra}], {mask?}", "mask") == ("{rb}, {d}[{ra}]", ", {mask?}", "")
    assert omit_optional("{a} ) , {b?}", "b") == ("{a} )", " , {b?}", "")
    assert omit_optional("{a}+{b?}", "b") == ("{a}+", "{b?}", "")  # '+' is no separator
    assert omit_optional("{a}({b?})", "b") == ("{a}(", "{b?}", ")")
    assert omit_optional("{a} {b?}", "b") == ("{a}", " {b?}", "")
    assert omit_optional("{lanes?}", "lanes") == ("", "{lanes?}", "")


def test_shapes_show_the_suffix_and_the_optional_part():
    shapes = {enc.mnemonic + enc.syntax: Form.of(enc).shape for enc in ARCH.encodings}
    assert shapes["add{rt}, {ra}, {rb}, {mask?}"] == "add rt, ra, rb[, mask]"
    assert shapes["st{rb}, {sdisp}[{ra}], {mask?}"] == "st[.sz] rb, sdisp[ra][, mask]"
    assert shapes["fence{lanes?}"] == "fence[.scope] [lanes]"
    assert shapes["sync"] == "sync[.scope]"


# -- suffixes ------------------------------------------------------------------------------

def test_suffix_sets_the_field_and_its_absence_the_default():
    assert decoded("ld.b r1, 4[r2]\nld r1, 4[r2]\nld.t r1, 4[r2]\nLD.H r1, -4[r2]\nld.W r1, 0[r2]") == [
        ("ld", {"sz": 0, "rt": 1, "disp": 4, "ra": 2}), ("ld", {"sz": 2, "rt": 1, "disp": 4, "ra": 2}),
        ("ld", {"sz": 2, "rt": 1, "disp": 4, "ra": 2}), ("ld", {"sz": 4, "rt": 1, "disp": -4, "ra": 2}),
        ("ld", {"sz": 1, "rt": 1, "disp": 0, "ra": 2})]


def test_suffix_and_optional_operand_together():
    assert decoded("st.o r1, -4[r2], r3\nst.b r1, 0[r2]\nst r1, 1[r2], r3\nst r1, 1 [ r2 ]") == [
        ("st", {"sz": 3, "rb": 1, "ra": 2, "sdisp": -4, "mask": 3}),
        ("st", {"sz": 0, "rb": 1, "ra": 2, "sdisp": 0, "mask": 7}),
        ("st", {"sz": 2, "rb": 1, "ra": 2, "sdisp": 1, "mask": 3}),
        ("st", {"sz": 2, "rb": 1, "ra": 2, "sdisp": 1, "mask": 7})]
    assert decoded("fence.cta\nfence.ALL 5\nsync.gpu\nsync") == [
        ("fence", {"scope": 0, "lanes": 0xFFFF}), ("fence", {"scope": 3, "lanes": 5}),
        ("sync", {"scope": 1}), ("sync", {"scope": 2})]


def test_suffix_forms_share_the_mnemonic_with_plain_forms():
    # A bare mnemonic tries every form; a suffixed one only the forms with a suffix.
    assert decoded("ld r1, (r2)\nld r1, 8[r2]") == [
        ("ld", {"rt": 1, "ra": 2}), ("ld", {"sz": 2, "rt": 1, "disp": 8, "ra": 2})]
    assert where("ld.b r1, (r2)") == (1, 14, "expected 'ld[.sz] rt, disp[ra]'")


def test_dotted_mnemonics_split_at_the_last_dot():
    assert decoded("vec.ld.w r1, (r2)\nvec.ld r1, (r2)\nsem.wait r3") == [
        ("vec.ld", {"sz": 1, "rt": 1, "ra": 2}), ("vec.ld", {"sz": 2, "rt": 1, "ra": 2}),
        ("sem.wait", {"ra": 3})]


def test_a_whole_mnemonic_wins_over_a_suffix():
    sz = Field("sz", "9:8", kind="enum", names=("b", "w", "t", "o"), default=2)
    ra = Field("ra", "12:10", kind="reg", regfile="r")
    arch = Architecture("dots", 32, (REGS,), (sz, ra), (
        Encoding("ld", 0x01, 0xFFFFFFFF & ~(sz.field_mask | ra.field_mask), "{ra}", suffix="sz"),
        Encoding("ld.o", 0x02, 0xFFFFFFFF & ~ra.field_mask, "{ra}"),
        Encoding("cmp_eq", 0x03, 0xFFFFFFFF & ~ra.field_mask, "{ra}"),
    ))
    assert decoded("ld.o r1\nld.w r1\nLD.O r2\ncmp_eq r3", arch) == [
        ("ld.o", {"ra": 1}), ("ld", {"sz": 1, "ra": 1}), ("ld.o", {"ra": 2}),
        ("cmp_eq", {"ra": 3})]
    assert where("ld.x r1", arch) == (1, 3, "unknown suffix '.x' for ld (expected one of: b, w, t, o)")


# -- errors ----------------------------------------------------------------------------------

@pytest.mark.parametrize("text, line, column, message", [
    ("halt\n  ld.q r1, 4[r2]", 2, 5, "unknown suffix '.q' for ld (expected one of: b, w, t, o, h, x5, x6, x7)"),
    ("ld.2 r1, 4[r2]", 1, 3, "unknown suffix '.2' for ld (expected one of: b, w, t, o, h, x5, x6, x7)"),
    ("ld. r1, 4[r2]", 1, 3, "unknown suffix '.' for ld (expected one of: b, w, t, o, h, x5, x6, x7)"),
    ("vec.ld.q r1, (r2)", 1, 7, "unknown suffix '.q' for vec.ld (expected one of: b, w, t, o, h, x5, x6, x7)"),
    ("sync.7", 1, 5, "unknown suffix '.7' for sync (expected one of: cta, gpu, sys, all)"),
    ("frob.b", 1, 1, "unknown mnemonic 'frob.b'"),
    ("halt.b", 1, 1, "unknown mnemonic 'halt.b'; did you mean 'halt'?"),
    ("sem.wait.b r1", 1, 1, "unknown mnemonic 'sem.wait.b'; did you mean 'sem.wait'?"),
    ("add r1, r2", 1, 11, "expected 'add rt, ra, rb[, mask]'"),
    ("add r1, r2, r3,", 1, 16, "expected 'add rt, ra, rb[, mask]'"),
    ("add r1, r2, r3, r9", 1, 17, "unknown register 'r9'"),
    ("st r1, 0[r2], r1, r2", 1, 17, "expected 'st[.sz] rb, sdisp[ra][, mask]'"),
    ("st r1, 0[r2],", 1, 14, "expected 'st[.sz] rb, sdisp[ra][, mask]'"),
    ("st r1, 0[r2", 1, 12, "expected 'st[.sz] rb, sdisp[ra][, mask]'"),
    ("ld r1, 4(r2)", 1, 13, "ld expects one of: ld[.sz] rt, disp[ra] | ld rt, (ra)"),
    ("fence.cta 1, 2", 1, 12, "expected 'fence[.scope] [lanes]'"),
    ("sync.cta r1", 1, 10, "sync takes no operands"),
    ("shl r1, r2, 32", 1, 13, "shl: sh=32 does not fit in 0..31"),
    ("st.b r1, 40[r2]", 1, 10, "st: sdisp=40 does not fit in -32..31"),
])
def test_error_positions(text, line, column, message):
    assert where(text) == (line, column, message)


def test_defaults_that_do_not_fit_and_partial_suffix_names_are_refused_when_built():
    # Architecture bugs: caught when the description is built, not when assembling.
    with pytest.raises(ConfigError, match="default 9 does not fit 0..7"):
        Field("opt", "12:10", default=9)
    sz = Field("sz", "9:8", kind="enum", names=("a", "b", "c"), default=0)
    with pytest.raises(ConfigError, match="must be an enum naming every value"):
        Architecture("bad", 32, (REGS,), (sz,),
                     (Encoding("op", 0x01, 0xFFFFFFFF & ~sz.field_mask, "", suffix="sz"),))


# -- extension points ----------------------------------------------------------------------

def test_hooks_see_suffixed_mnemonics_and_written_operands_only():
    seen = []

    class Hooked(Assembler):
        def expand(self, mnemonic, operands_text, location):
            if mnemonic == "ld.z":                 # a pseudo suffix: ld.z -> ld.b
                return [f"ld.b {operands_text}"]
            return None

        def parse_operand(self, field, text, ctx, offset):
            seen.append((field.name, text))
            if text.startswith("@"):               # "@imm" spelling
                return ctx.value(text[1:], offset + 1)
            return super().parse_operand(field, text, ctx, offset)

    prog = Hooked(ARCH).assemble("ld.z r1, @4[r2]\nshl r1, r2, @3\nshl r1, r2")
    words = [int.from_bytes(prog.segments[0][1][i:i + 4], "little") for i in (0, 4, 8)]
    assert [DEC.decode(w).operands for w in words] == [
        {"sz": 0, "rt": 1, "disp": 4, "ra": 2}, {"rt": 1, "ra": 2, "sh": 3},
        {"rt": 1, "ra": 2, "sh": 1}]
    assert "sz" not in {name for name, _ in seen} and ("sh", "@3") in seen
    assert [name for name, _ in seen].count("sh") == 1  # the left-out one is not parsed


# -- the disassembler's cut before an optional operand -------------------------------------

def test_optional_operand_after_a_closing_bracket_round_trips():
    f = (Field("rb", "9:7", kind="reg", regfile="r"), Field("ra", "17:15", kind="reg", regfile="r"),
         Field("d", "31:26", kind="imm", signed=True),
         Field("mask", "25:23", kind="reg", regfile="r", default=7))
    used = sum(x.field_mask for x in f)
    arch = Architecture("br", 32, (REGS,), f,
                        (Encoding("st", 0x23, 0xFFFFFFFF & ~used, "{rb}, {d}[{ra}], {mask?}"),))
    word = Encoder(arch).encode(arch.encodings[0], {"rb": 1, "d": 0, "ra": 2, "mask": 7})
    text = Disassembler(arch).word(word)
    assert text == "st r1, 0[r2]"  # only the ", " separator goes with the default operand
    assert assemble(arch, text).segments[0][1] == word.to_bytes(4, "little"), text
