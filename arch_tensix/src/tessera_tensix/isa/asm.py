"""Tensix assembly syntax: the vendor's, plus the LLK macro spelling.

**Vendor syntax** (what Tenstorrent's disassembler prints, and what ``tessera disasm``
prints): the mnemonic in lower case without underscores, ``tt`` in front unless it is an
SFPU instruction, operands separated by commas, values in decimal::

    sfpload L0,0,3,7            # VD, Imm10, Mod0, AddrMod
    sfpmad L3,L0,L1,L2,0        # VD, VA, VB, VC, Mod1
    sfpstore 0,L3,3,7           # Imm10, VD, Mod0, AddrMod
    sfpiadd L1,L2,0x7FF,1       # 12-bit immediates print as 0x%03X
    sfploadi L0,-32768,0        # 16-bit immediates print signed
    ttsetc16 41,257             # tt instructions: fields from the highest bit down
    end                         # the all-zero word (END pseudo-instruction)

LRegs are written ``L0`` … ``L15`` (``LREG3`` and a plain ``3`` are accepted too, so the
generic disassembler's text assembles back).  Fields the vendor's
syntax does not show (BH SFPAND's VB and Mod1, SFPSETCC's VD …) are *extra* operands
after the vendor's: the disassembler writes them only when they differ from their
default, and the assembler fills in the ones left out (``sfpand L1,L2`` =
``sfpand L1,L2,L0,0``).  Signed immediates may be written either way (``-1`` or
``65535``).  SFPGT/SFPLE: the vendor's syntax shows a 12-bit immediate over reserved bits
(``sfpgt L0,L1,0x000,1``); it is printed as ``0x000`` and accepted only as 0 (or left out:
``sfpgt L0,L1,1``).

**Macro syntax**: the instruction name in capitals, as in tt-llk's ``TT_OP_<NAME>`` /
``TTI_<NAME>`` macros, with the macro's arguments in its order (assembly.yaml's
arguments from the highest start bit down) and plain numbers for LRegs::

    SFPLOAD 0, 3, 7, 0          # lreg_ind, instr_mod0, sfpu_addr_mode, dest_reg_addr
    SFPMAD 0, 1, 2, 3, 0        # lreg_src_a, lreg_src_b, lreg_src_c, lreg_dest, instr_mod1
    TTI_SFPSTORE(3, 3, 7, 0)    # the macro call itself
    SETC16 41, 257              # names of tt instructions may be written without "tt"

An SFPU name counts as the macro spelling only when written all in capitals (``SFPLOAD``;
``sfpload`` and ``SfpLoad`` are the vendor spelling).  Arguments the macro has but the
hardware reserves (``TT_OP_SFPMOV``'s ``imm12_math``) must be 0; the hardware fields alone,
in the same order, are accepted too (``SFPMOV 1, 2, 0``).  ``SFP_STOCH_RND`` is also
``SFPSTOCHRND``; ``MOP_CFG`` also ``MOPCFG`` …
"""

from __future__ import annotations

import re
from typing import Any

import attrs

from tessera.isa import ILLEGAL, Disassembler, Field, Instruction
from tessera.isa.asm import Assembler, split_operands

_LREG = re.compile(r"(?i)l(?:reg)?(\d{1,2})")
_MACRO_CALL = re.compile(r"(?is)\s*\((.*)\)\s*")
_MACRO_MARK = "^"          # prefix of a statement name spelled as a macro (never a real mnemonic)


def format_value(display: str, value: int) -> str:
    """A field value as the vendor disassembler prints it."""
    if display == "L":
        return f"L{value}"
    if display == "hex3":
        return f"0x{value:03X}"
    if display == "s16":
        return str(value - 0x10000 if value & 0x8000 else value)
    return str(value)


class TensixDisassembler(Disassembler):
    """The vendor disassembler's text: ``sfpadd L0,L10,L0,L1,0``, ``ttsetc16 41,257``."""

    def text(self, ins: Instruction, symbols: Any = None) -> str:
        from tessera_tensix.isa import row_info

        enc = ins.encoding
        info = row_info(enc) if enc is not ILLEGAL else None
        if info is None:
            return super().text(ins, symbols)
        values = ins.operands
        parts = [format_value(info.display[f], values[f]) for f in info.operands]
        keep = len(info.extras)
        while keep and values[info.extras[keep - 1][0]] == info.extras[keep - 1][1]:
            keep -= 1
        parts += [format_value(info.display[f], values[f]) for f, _ in info.extras[:keep]]
        for position, _name, display in info.ghosts:       # vendor operands over reserved bits
            parts.insert(position, format_value(display, 0))
        return f"{enc.mnemonic} {','.join(parts)}".rstrip()


@attrs.frozen
class _Names:
    """Mnemonic lookups of one architecture's table."""

    vendor: dict[str, Any]       # lower-case vendor mnemonic -> RowInfo
    macro: dict[str, Any]        # normalised macro name -> (RowInfo, vendor mnemonic)


def _names(arch: Any) -> _Names:
    from tessera_tensix.isa import row_info

    vendor: dict[str, Any] = {}
    macro: dict[str, Any] = {}
    for enc in arch.encodings:
        info = row_info(enc)
        if info is None or enc.mnemonic in vendor:
            continue
        vendor[enc.mnemonic] = info
        for spelling in {info.name.lower(), info.name.replace("_", "").lower()}:
            macro[spelling] = (info, enc.mnemonic)
    return _Names(vendor, macro)


class TensixAssembler(Assembler):
    """The generic table assembler plus LReg names, omitted extras and the macro spelling."""

    def __init__(self, arch: Any, decoder: Any = None) -> None:
        super().__init__(arch, decoder)
        self._tensix = _names(arch)
        self._lreg_fields = {f for info in self._tensix.vendor.values() for f in info.lreg}
        self._signed_fields = {f for info in self._tensix.vendor.values()
                               for f, d in info.display.items() if d in ("hex3", "s16")}

    def assembles(self, encoding: Any) -> bool:
        # the rows for words with reserved bits set are for decoding only: each has a clean
        # row with the same syntax, which is the one to assemble
        return "reserved-bits" not in encoding.flags

    # -- spelling ----------------------------------------------------------------------
    def parse_line(self, text: str, line: int) -> Any:
        stmt = super().parse_line(text, line)
        if stmt.kind != "instruction":
            return stmt
        written = text[stmt.column - 1:stmt.column - 1 + len(stmt.name)]
        name = stmt.name
        call = None
        if name.startswith(("tti_", "tt_")) and not name.startswith("tt_op_"):
            base = name.split("_", 1)[1]
            if base in self._tensix.macro and (call := _MACRO_CALL.fullmatch(stmt.args)):
                name = base
        if call is not None or (written.isupper() and name in self._tensix.macro) \
                or (name not in self._tensix.vendor and name in self._tensix.macro):
            args, column = stmt.args, stmt.args_column
            if call is not None:
                args, column = call.group(1), stmt.args_column + call.start(1)
            return attrs.evolve(stmt, name=_MACRO_MARK + name, args=args, args_column=column)
        if name.startswith("ttsfp") and name[2:] in self._tensix.vendor:   # ttsfpload = sfpload
            return attrs.evolve(stmt, name=name[2:])
        return stmt

    def expand(self, mnemonic: str, operands_text: str, location: int) -> list[str] | None:
        if mnemonic.startswith(_MACRO_MARK):
            return [self._from_macro(mnemonic[len(_MACRO_MARK):], operands_text)]
        info = self._tensix.vendor.get(mnemonic)
        if info is None or not (info.extras or info.ghosts):
            return None
        given = split_operands(operands_text)
        if info.ghosts and len(given) == len(info.operands) + len(info.ghosts):
            keep = []
            ghosts = {position: name for position, name, _ in info.ghosts}
            for k, (offset, piece) in enumerate(given):
                if k not in ghosts:
                    keep.append(piece)
                elif self.context is not None and self.context.value(piece, offset) != 0:
                    raise self.context.error(f"{mnemonic}: the {ghosts[k]} operand must be 0 "
                                             "(those bits are reserved)", offset)
            return [f"{mnemonic} {','.join(keep)}"]
        full = len(info.fields)
        if len(info.operands) <= len(given) < full:
            missing = [str(default) if f not in info.lreg else f"L{default}"
                       for f, default in info.extras[len(given) - len(info.operands):]]
            return [f"{mnemonic} {','.join([operands_text.strip(), *missing]).lstrip(',')}"]
        return None

    def _from_macro(self, name: str, text: str) -> str:
        """Rewrite ``SFPLOAD 0, 3, 7, 0`` as ``sfpload L0,0,3,7``."""
        ctx = self.context
        assert ctx is not None
        info, mnemonic = self._tensix.macro[name]
        given = split_operands(text)
        by_bits = sorted(info.fields, key=lambda f: -self.arch.field_map[f].bits[0][1])
        if len(given) == len(info.macro):
            order = info.macro
        elif len(given) == len(by_bits):
            order = tuple(by_bits)
        else:
            counts = sorted({len(info.macro), len(by_bits)})
            raise ctx.error(f"{info.name} takes {' or '.join(map(str, counts))} arguments "
                            f"({', '.join(a.split(':')[0].lstrip('-') for a in info.macro) or 'none'}), "
                            f"not {len(given)}")
        values: dict[str, str] = {}
        for slot, (offset, piece) in zip(order, given):
            if not piece:
                raise ctx.error("missing argument", offset)
            if slot.startswith("-"):
                arg, hi, lo = slot[1:].split(":")
                if ctx.value(piece, offset) != 0:
                    raise ctx.error(f"{info.name}: {arg} must be 0 (bits {hi}:{lo} are reserved)", offset)
                continue
            if slot in info.lreg:
                m = _LREG.fullmatch(piece)
                index = int(m.group(1)) if m else ctx.value(piece, offset)
                if not 0 <= index <= 15:
                    raise ctx.error(f"{info.name}: {slot}={index} is not an LReg (0..15)", offset)
                values[slot] = f"L{index}"
            else:
                values[slot] = f"({piece})" if "," in piece else piece
        defaults = dict(info.extras)
        text = ",".join(values.get(f) or (f"L{defaults.get(f, 0)}" if f in info.lreg else str(defaults.get(f, 0)))
                        for f in info.fields)
        return f"{mnemonic} {text}".rstrip()

    # -- operands ----------------------------------------------------------------------
    def parse_operand(self, field: Field, text: str, ctx: Any, offset: int) -> int:
        if field.name in self._lreg_fields:
            m = _LREG.fullmatch(text.strip())
            index = int(m.group(1)) if m else super().parse_operand(field, text, ctx, offset)
            if not 0 <= index <= 15:
                raise ctx.error(f"{field.name}: {text.strip()} is not an LReg (L0..L15)", offset)
            return index
        value = super().parse_operand(field, text, ctx, offset)
        if value < 0 and field.name in self._signed_fields and value >= -(1 << (field.width - 1)):
            value += 1 << field.width
        return value
