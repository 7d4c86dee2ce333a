"""The Tensix encoding tables: one per chip, generated from the vendor's reference data.

``tables("bh")`` / ``tables("wh")`` build the :class:`~tessera.isa.Field` and
:class:`~tessera.isa.Encoding` records of Blackhole / Wormhole B0 from the generated
modules ``_bh.py`` / ``_wh.py`` (``arch_tensix/tools/gen_tables.py`` writes them from
tt-llk's ``assembly.yaml`` and ttsim's ``tensix_isa.json``; see its docstring for the
rules).  Every instruction of the chip has a row; the opcode is ``word[31:24]``.

Decoding
    * the row of an instruction matches its opcode with every *reserved* bit (a bit of
      [23:0] no field covers) zero;
    * a second row of the same mnemonic matches the opcode alone, for words with
      reserved bits set: executing one breaks the rule "reserved bits must be zero"
      (stop, or with ``lenient`` ignore the bits as the hardware does);
    * the all-zero word is the pseudo-instruction ``end`` (END: the kernel ends, exit 0);
    * any other word (an unassigned opcode, or opcode 0 with other bits set) is an
      undefined encoding: executing it stops the run naming the word.

Semantics
    Rows name their function in :data:`tessera_tensix.semantics.REGISTRY`
    (``REGISTRY.ref("SFPMAD")``, the core's :class:`~tessera.isa.SemanticRef`): the
    engine binds it when it fills the decode cache, and a row pickles as the name.  The
    row of a word with reserved bits names ``reserved_name("SFPMAD", bits)``, registered
    by :mod:`tessera_tensix.semantics.reserved` (break the rule, then run SFPMAD); a name
    nothing registers (the matrix unit, packers …) runs the registry's ``missing``
    function, which stops with "not supported in direct mode yet".

Control flow
    Tensix threads never branch: no semantic function returns a PC, so the rows declare
    their control flow (``control_flow="flags"``): ``end`` carries ``halt``, the
    instructions that stall the thread until a condition holds (:data:`WAITS`) carry
    ``wait``, every other row none.  MOP and REPLAY also carry ``expands`` (they issue the
    instructions they expand to, which carry ``issued_by``: a trace lists them under
    their issuer), and every row of a backend instruction names its execution unit
    (``Encoding.unit``, the vendor's ``ex_resource``: ``MATH``, ``SFPU``, ``UNPACK`` …;
    none for the front end's MOP, MOP_CFG, REPLAY and for NOP): ``--trace perfetto``
    draws one track per unit.

Operands
    Each field of the instruction is an operand and, on the decoded instruction, an
    attribute holding the raw unsigned field value (``ins.lreg_dest``, ``ins.imm16`` …;
    ``ins.word`` is the whole word).  Field names are the json's (see ``_bh.FIELDS``);
    a name used with several ranges keeps the plain name for the most common range and
    gets ``_<hi>_<lo>`` elsewhere (SFPSETCC's ``imm12_math_12_12``).  The VB register
    of SFPAND/SFPOR/SFPARECIP is ``lreg_src_b``.

Syntax (what the vendor's disassembler prints): ``sfpmad L3,L0,L1,L2,0``,
``ttsetc16 41,257`` — see :mod:`tessera_tensix.isa.asm`.
"""

from __future__ import annotations

import functools
import importlib
from typing import Any

import attrs

from tessera.control import Trap
from tessera.isa import Encoding, Field
from tessera_tensix import rules
from tessera_tensix.semantics import REGISTRY, reserved_name
from tessera_tensix.timing import timing_class

__all__ = ["CHIPS", "DIRECT_MODE", "EXPANDERS", "FRONT_END", "ISSUE5", "ISSUE16", "WAITS", "RowInfo", "Tables", "resource", "row_info", "tables"]

#: chip -> (generated module, name used in messages)
CHIPS = {"bh": ("_bh", "Blackhole"), "wh": ("_wh", "Wormhole B0")}

OPCODE_MASK = 0xFF00_0000

#: The instructions direct mode executes (issue 5): every SFPU instruction of Blackhole,
#: ZEROACC, the scalar-unit GPR instructions of seed 000, and the END pseudo-instruction.
ISSUE5 = frozenset({
    "SFPLOAD", "SFPLOADI", "SFPSTORE", "SFPLUT", "SFPMULI", "SFPADDI", "SFPDIVP2", "SFPEXEXP",
    "SFPEXMAN", "SFPIADD", "SFPSHFT", "SFPSETCC", "SFPMOV", "SFPABS", "SFPAND", "SFPOR", "SFPNOT",
    "SFPLZ", "SFPSETEXP", "SFPSETMAN", "SFPMAD", "SFPADD", "SFPMUL", "SFPPUSHC", "SFPPOPC",
    "SFPSETSGN", "SFPENCC", "SFPCOMPC", "SFPTRANSP", "SFPXOR", "SFP_STOCH_RND", "SFPNOP", "SFPCAST",
    "SFPCONFIG", "SFPSWAP", "SFPLOADMACRO", "SFPSHFT2", "SFPLUTFP32", "SFPLE", "SFPGT", "SFPMUL24",
    "SFPARECIP",
    "ZEROACC",
    "ADDDMAREG", "SUBDMAREG", "MULDMAREG", "BITWOPDMAREG", "SHIFTDMAREG", "CMPDMAREG", "SETDMAREG",
    "FLUSHDMA",
    "END",
})

#: The rest of the coprocessor (issue 16): front end, sync unit, configuration unit,
#: ADCs, SrcA/SrcB and the matrix unit, unpackers, packers, mover, scalar-unit memory.
#: (Rows of instructions no vendor page describes — the 3x3 pooling/convolution family,
#: SETASHRM*, TRNSPSRCA, SETIBRWC, RAREB … — still stop as "not supported".)
ISSUE16 = frozenset({
    "ADDRCRXY", "ADDRCRZW", "ATCAS", "ATGETM", "ATINCGET", "ATINCGETPTR", "ATRELM", "ATSWAP",
    "CFGSHIFTMASK", "CLEARDVALID", "CLREXPHIST", "DMANOP", "DOTPV", "ELWADD", "ELWMUL", "ELWSUB",
    "GAPOOL", "GATESRCRST", "GMPOOL", "INCADCXY", "INCADCZW", "INCRWC", "LOADIND", "LOADREG",
    "MOP", "MOP_CFG", "MOVA2D", "MOVB2A", "MOVB2D", "MOVD2A", "MOVD2B", "MOVDBGA2D", "MVMUL", "NOP",
    "PACR", "PACR_SETREG", "RDCFG", "REG2FLOP", "REPLAY", "RMWCIB0", "RMWCIB1", "RMWCIB2", "RMWCIB3",
    "SEMGET", "SEMINIT", "SEMPOST", "SEMWAIT", "SETADC", "SETADCXX", "SETADCXY", "SETADCZW", "SETC16",
    "SETDVALID", "SETRWC", "SHIFTXA", "SHIFTXB", "STALLWAIT", "STOREIND", "STOREREG", "STREAMWAIT",
    "STREAMWRCFG", "TRNSPSRCB", "UNPACR", "UNPACR_NOP", "WRCFG", "XMOV", "ZEROSRC",
})
#: Every instruction direct mode executes (rows flagged ``direct-mode``).
DIRECT_MODE = ISSUE5 | ISSUE16

#: The front end's own instructions: the MOP and replay expanders consume them, so they
#: never reach a backend unit (their rows declare no ``unit``).
FRONT_END = frozenset({"MOP", "MOP_CFG", "REPLAY"})
#: Instructions that issue other instructions while they run (the ``expands`` flag: a
#: trace lists them before their expansion, :mod:`tessera_tensix.frontend`).
EXPANDERS = frozenset({"MOP", "REPLAY"})

#: Instructions that stall the issuing thread until a condition holds (the vendor's ISA
#: pages): their rows carry the ``wait`` control flag, so a translated block ends there.
WAITS = frozenset({"STALLWAIT", "SEMWAIT", "STREAMWAIT", "ATGETM", "ATRELM", "FLUSHDMA",
                   "MOP", "REPLAY",  # an instruction they expand to may wait (expanders.py)
                   # implicit waits for a Src bank to belong to the matrix unit (srcmoves.py)
                   "MOVA2D", "MOVB2D", "MOVB2A", "TRNSPSRCB", "SHIFTXA", "SHIFTXB",
                   # … and for both banks (matrix_ops.py)
                   "MVMUL", "DOTPV", "GAPOOL", "GMPOOL", "ELWMUL", "ELWADD", "ELWSUB",
                   # L1 conditions; STOREIND to SrcA/SrcB waits for the unpackers' bank
                   "ATCAS", "ATINCGETPTR", "STOREIND",
                   # the unpackers wait for their Src bank (unpack.py)
                   "UNPACR", "UNPACR_NOP"})


@attrs.frozen
class RowInfo:
    """What the table knows about a row beyond the :class:`Encoding`.

    ``operands`` are the fields in the vendor's syntax order; ``extras`` the further
    fields with their defaults (the disassembler leaves trailing ones out while they hold
    the default, the assembler fills them in); ``macro`` the argument order of
    ``TT_OP_<NAME>`` (assembly.yaml), where ``-name:hi:lo`` stands for an argument over
    reserved bits; ``ghosts`` the ``(position, name, display)`` of operands the vendor's
    syntax shows over reserved bits (SFPGT's immediate: always 0).  ``display`` maps each
    field to ``L``, ``dec``, ``hex3`` or ``s16``.
    """

    name: str
    chip: str
    opcode: int
    resource: str
    operands: tuple[str, ...]
    extras: tuple[tuple[str, int], ...]
    macro: tuple[str, ...]
    ghosts: tuple[tuple[int, str, str], ...]
    reserved: int
    ttsim_unsupported: bool
    source: str
    display: Any  # Mapping[str, str]
    lreg: frozenset[str]

    @property
    def fields(self) -> tuple[str, ...]:
        return self.operands + tuple(name for name, _ in self.extras)


@attrs.frozen
class Tables:
    """One chip's table: what ``Architecture`` needs, and the per-row metadata."""

    chip: str
    title: str
    fields: tuple[Field, ...]
    encodings: tuple[Encoding, ...]
    rows: Any  # Mapping[str, RowInfo] by vendor name
    illegal: Any
    examples: tuple[Any, ...]
    assembler: type
    disassembler: type

    def row(self, name: str) -> RowInfo:
        return self.rows[name]

    def encoding(self, name: str) -> Encoding:
        """The (strict) row of vendor instruction ``name``."""
        info = self.rows[name]
        return next(e for e in self.encodings
                    if e.match == info.opcode << 24 and _INFO.get(e) is info and "reserved-bits" not in e.flags)


#: Encoding -> RowInfo, for the assembler and disassembler.  Encodings hash by value; the
#: chip's name in ``doc`` keeps equal-looking Blackhole and Wormhole rows apart.
_INFO: dict[Encoding, RowInfo] = {}


def row_info(enc: Encoding) -> RowInfo | None:
    """The metadata of a table row (``None`` for the END row and foreign encodings)."""
    return _INFO.get(enc)


def _illegal_bh(word: int, address: int) -> Trap:
    return _illegal(word, "Blackhole")


def _illegal_wh(word: int, address: int) -> Trap:
    return _illegal(word, "Wormhole B0")


def _illegal(word: int, title: str) -> Trap:
    opcode = word >> 24
    if opcode == 0:
        why = "opcode 0x00 is only valid as the all-zero END word"
    else:
        why = f"opcode {opcode:#04x} is not a {title} Tensix instruction"
    return Trap(rules.RULE, word, name=f"undefined encoding {word:#010x}: {why}", word=word)


def _end_row() -> Encoding:
    return Encoding("end", 0, 0xFFFF_FFFF, "", REGISTRY.ref("END"), timing="end",
                    flags=frozenset({"halt", "pseudo"}),
                    doc="END (pseudo-instruction): the all-zero word ends the kernel (exit status 0)")


@functools.cache
def tables(chip: str) -> Tables:
    """The encoding table of ``chip`` ("bh" or "wh")."""
    from tessera_tensix.isa.asm import TensixAssembler, TensixDisassembler

    modname, title = CHIPS[chip]
    data = importlib.import_module(f"{__name__}.{modname}")
    fields = []
    display: dict[str, str] = {}
    lreg = set()
    for name, (hi, lo, kind, fmt) in data.FIELDS.items():
        fields.append(Field(name, f"{hi}:{lo}", kind="uimm"))
        display[name] = fmt
        if kind == "lreg":
            lreg.add(name)
    encodings: list[Encoding] = []
    rows: dict[str, RowInfo] = {}
    for (name, opcode, mnemonic, resource, operands, extras, macro, ghosts, reserved, unsupported,
         source) in data.INSTRUCTIONS:
        info = RowInfo(name, chip, opcode, resource, tuple(operands), tuple(extras), tuple(macro),
                       tuple(ghosts), reserved, unsupported, source,
                       {f: display[f] for f in (*operands, *(e for e, _ in extras))},
                       frozenset(f for f in (*operands, *(e for e, _ in extras)) if f in lreg))
        rows[name] = info
        syntax = ",".join("{" + f + "}" for f in info.fields)
        flags = {resource.lower() or "none"}
        if unsupported:
            flags.add("ttsim-unsupported")
        if name in DIRECT_MODE:
            flags.add("direct-mode")
        if name in WAITS:
            flags.add("wait")
        if name in EXPANDERS:
            flags.add("expands")
        unit = "" if name in FRONT_END or resource in ("", "NONE") else resource
        doc = (f"{title} {name}: opcode {opcode:#04x}, {resource} unit; field ranges from {source}"
               + (f"; reserved bits {reserved:#08x}" if reserved else ""))
        timing = timing_class(name, resource)
        strict = Encoding(mnemonic, opcode << 24, OPCODE_MASK | reserved, syntax, REGISTRY.ref(name),
                          timing=timing, flags=frozenset(flags), doc=doc, unit=unit)
        encodings.append(strict)
        _INFO[strict] = info
        if reserved:
            lax = Encoding(mnemonic, opcode << 24, OPCODE_MASK, syntax,
                           REGISTRY.ref(reserved_name(name, reserved)), timing=timing,
                           flags=frozenset(flags | {"reserved-bits"}),
                           doc=f"{title} {name} with reserved bits {reserved:#08x} set (a rule violation)",
                           unit=unit)
            encodings.append(lax)
            _INFO[lax] = info
    encodings.append(_end_row())
    from tessera_tensix import examples

    return Tables(
        chip=chip,
        title=title,
        fields=tuple(fields),
        encodings=tuple(encodings),
        rows=rows,
        illegal=_illegal_bh if chip == "bh" else _illegal_wh,
        examples=examples.for_chip(chip),
        assembler=TensixAssembler,
        disassembler=TensixDisassembler,
    )


@functools.cache
def _resources() -> dict[str, str]:
    resources: dict[str, str] = {}
    for modname, _title in CHIPS.values():
        data = importlib.import_module(f"{__name__}.{modname}")
        for row in data.INSTRUCTIONS:
            resources.setdefault(row[0], row[3])
    return resources


def resource(name: str) -> str:
    """The execution unit of vendor instruction ``name`` ("MATH", "SFPU" …; the same on
    both chips), or "" for a name no table has (END)."""
    return _resources().get(name, "")
