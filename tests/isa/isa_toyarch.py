"""Small test architectures: ``toy32`` (32-bit little-endian), ``toy48`` (48-bit big-endian)
and ``toyx`` (mnemonic suffixes and optional operands).

``toy32`` borrows RISC-V's scattered branch offset so the field machinery is
exercised with real-world bit layouts.  Masks are derived from the fields each form
uses, so every bit outside the operand fields is fixed and encode -> decode is exact.
"""

from __future__ import annotations

from tessera.control import Trap
from tessera.isa import Architecture, Encoding, Field, RegisterFile
from tessera.isa.asm import Assembler

REGS = RegisterFile("r", 8, 32, aliases={"sp": 7}, zero=0)

FIELDS32 = (
    Field("rd", "9:7", kind="reg", regfile="r"),
    Field("rs1", "17:15", kind="reg", regfile="r"),
    Field("rs2", "22:20", kind="reg", regfile="r"),
    Field("imm", "31:20", kind="imm", signed=True),
    Field("woff", "31:20", kind="imm", signed=True, scale=2),
    Field("uimm", "31:16", kind="uimm"),
    Field("off", "31,7,30:25,11:8", kind="pcrel", scale=1),
    Field("target", "31,19:15,20,30:21,11:8", kind="pcrel", scale=1),
    Field("mode", "8:7", kind="enum", names=("user", "super", "hyper", "machine")),
)
_FMAP = {f.name: f for f in FIELDS32}


def form(mnemonic: str, opcode: int, funct3: int, syntax: str, *, word_bits: int = 32,
         fields: dict | None = None, **kw) -> Encoding:
    """A form whose mask is every bit not covered by its operand fields."""
    fmap = fields or _FMAP
    used = 0
    for name in Encoding(mnemonic, 0, 0, syntax, suffix=kw.get("suffix")).operand_names:
        used |= fmap[name].field_mask
    mask = ((1 << word_bits) - 1) & ~used
    match = (opcode | funct3 << 12) if word_bits == 32 else opcode << 40
    return Encoding(mnemonic, match, mask, syntax, **kw)


ENCODINGS32 = (
    form("nop", 0x13, 0, ""),                                  # addi r0, r0, 0: more specific
    form("add", 0x33, 0, "{rd}, {rs1}, {rs2}"),
    form("sub", 0x33, 1, "{rd}, {rs1}, {rs2}"),
    form("addi", 0x13, 0, "{rd}, {rs1}, {imm}"),
    form("ld", 0x03, 2, "{rd}, {imm}({rs1})"),
    form("ldw", 0x03, 3, "{rd}, {woff}({rs1})"),
    form("li", 0x37, 0, "{rd}, {uimm}"),
    form("beq", 0x63, 0, "{rs1}, {rs2}, {off}", flags={"branch"}),
    form("bne", 0x63, 1, "{rs1}, {rs2}, {off}", flags={"branch"}),
    form("jmp", 0x6F, 0, "{target}", flags={"branch"}),
    form("jmp", 0x67, 0, "({rs1})", flags={"branch"}),         # shares the mnemonic
    form("mode", 0x73, 1, "{mode}"),
    form("halt", 0x73, 0, "", flags={"halt"}),
    form("sem.wait", 0x73, 2, "{rs1}", flags={"sync"}),
)


def _illegal(word: int, address: int) -> Trap:
    return Trap(2, word, "illegal-instruction")


def toy32(**overrides) -> Architecture:
    kw = dict(name="toy32", word_bits=32, register_files=(REGS,), fields=FIELDS32,
              encodings=ENCODINGS32)
    kw.update(overrides)
    return Architecture(**kw)


FIELDS48 = (
    Field("rd", "38:36", kind="reg", regfile="r"),
    Field("rs1", "34:32", kind="reg", regfile="r"),
    Field("imm", "31:0", kind="imm", signed=True),
    Field("uimm", "31:0", kind="uimm"),
    Field("target", "31:0", kind="pcrel"),
)
_FMAP48 = {f.name: f for f in FIELDS48}


def _form48(mnemonic: str, opcode: int, syntax: str) -> Encoding:
    return form(mnemonic, opcode, 0, syntax, word_bits=48, fields=_FMAP48)


def toy48(**overrides) -> Architecture:
    kw = dict(
        name="toy48", word_bits=48, endian="big", register_files=(REGS,), fields=FIELDS48,
        comment_chars="!",
        encodings=(
            _form48("addi", 0x01, "{rd}, {rs1}, {imm}"),
            _form48("movi", 0x02, "{rd}, {uimm}"),
            _form48("jmp", 0x03, "{target}"),
            _form48("halt", 0xFF, ""),
        ),
    )
    kw.update(overrides)
    return Architecture(**kw)


# toyx: mnemonic-suffix fields and optional last operands (rfPhoenix style), with
# non-zero defaults so a field left at 0 by mistake shows.  A suffix field names all of
# its values (the description refuses one that does not).
FIELDSX = (
    Field("rt", "9:7", kind="reg", regfile="r"),
    Field("sz", "12:10", kind="enum", names=("b", "w", "t", "o", "h", "x5", "x6", "x7"), default=2),
    Field("scope", "11:10", kind="enum", names=("cta", "gpu", "sys", "all"), default=2),
    Field("ra", "17:15", kind="reg", regfile="r"),
    Field("rb", "22:20", kind="reg", regfile="r"),
    Field("mask", "25:23", kind="reg", regfile="r", default=7),
    Field("sh", "24:20", kind="uimm", default=1),
    Field("disp", "31:20", kind="imm", signed=True),
    Field("sdisp", "31:26", kind="imm", signed=True),
    Field("lanes", "31:16", kind="uimm", default=0xFFFF),
)
_FMAPX = {f.name: f for f in FIELDSX}


def _formx(mnemonic: str, opcode: int, syntax: str, **kw) -> Encoding:
    return form(mnemonic, opcode, 0, syntax, fields=_FMAPX, **kw)


ENCODINGSX = (
    _formx("add", 0x33, "{rt}, {ra}, {rb}, {mask?}"),
    _formx("ld", 0x03, "{rt}, {disp}[{ra}]", suffix="sz"),
    _formx("ld", 0x07, "{rt}, ({ra})"),                         # same mnemonic, no suffix
    _formx("st", 0x23, "{rb}, {sdisp}[{ra}], {mask?}", suffix="sz"),  # keeps ']' if omitted
    _formx("shl", 0x13, "{rt}, {ra}, {sh?}"),
    _formx("fence", 0x0F, "{lanes?}", suffix="scope"),          # the only operand is optional
    _formx("sync", 0x0B, "", suffix="scope"),
    _formx("vec.ld", 0x57, "{rt}, ({ra})", suffix="sz"),        # dotted base with a suffix
    _formx("sem.wait", 0x73, "{ra}"),
    _formx("halt", 0x7F, "", flags={"halt"}),
)


def toyx(**overrides) -> Architecture:
    kw = dict(name="toyx", word_bits=32, register_files=(REGS,), fields=FIELDSX,
              encodings=ENCODINGSX)
    kw.update(overrides)
    return Architecture(**kw)


class ToyAssembler(Assembler):
    """Adds pseudo-instructions and a directive, the way an architecture plugin would."""

    def expand(self, mnemonic, operands_text, location):
        if mnemonic == "mv":                       # mv rd, rs -> addi rd, rs, 0
            return [f"addi {operands_text}, 0"]
        if mnemonic == "call2":                    # two jumps, via another pseudo-op
            return [f"jmp {operands_text}", f"jmp {operands_text}"]
        if mnemonic == "loop":                     # expands into itself forever
            return ["loop"]
        if mnemonic == "bad":
            return ["addi r1, r1, 99999"]
        return None

    def directive(self, name, args_text, ctx):
        if name == ".twice":                       # .twice expr: the byte, two times
            value = ctx.value()
            ctx.emit(bytes([value & 0xFF]) * 2)
            return True
        return False
