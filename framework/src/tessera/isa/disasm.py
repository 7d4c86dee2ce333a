"""Disassembler generated from the encoding table.

Each form's ``syntax`` template is filled with its operands rendered by field kind,
in a form the assembler reads back: registers by canonical name, immediates in
decimal (hex when large), PC-relative operands as the absolute target address (the
assembler turns a target back into an offset), enums by name.  So
``assemble(disassemble(word)) == word`` for every form.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from tessera.isa.decoder import ILLEGAL, Decoder
from tessera.isa.description import Architecture, Field, omit_optional
from tessera.isa.instruction import Instruction


def format_int(value: int) -> str:
    """Decimal for small magnitudes, hex otherwise (signed)."""
    if -256 <= value <= 255:
        return str(value)
    return f"-{-value:#x}" if value < 0 else f"{value:#x}"


class Disassembler:
    """Render instructions of one architecture as assembly text."""

    def __init__(self, arch: Architecture, decoder: Decoder | None = None) -> None:
        self.arch = arch
        self.decoder = decoder or Decoder(arch)
        self._fields = arch.field_map
        self._files = arch.register_file_map
        self.addr_digits = max(8, (arch.address_bits + 3) // 4)

    def operand(self, field: Field, value: int, address: int,
                symbols: Mapping[int, str] | None = None) -> str:
        if field.kind == "reg":
            assert field.regfile is not None  # Field refuses a reg field without a regfile
            names = self._files[field.regfile].names
            return names[value] if 0 <= value < len(names) else f"{field.regfile}?{value}"
        if field.kind == "pcrel":
            target = (address + value) & ((1 << self.arch.address_bits) - 1)
            if symbols and target in symbols:
                return symbols[target]
            return f"{target:#x}"
        if field.kind == "enum" and 0 <= value < len(field.names):
            return field.names[value]
        return format_int(value)

    def text(self, ins: Instruction, symbols: Mapping[int, str] | None = None) -> str:
        """The assembly text of one decoded instruction (no address column)."""
        enc = ins.encoding
        if enc is ILLEGAL:
            return f".word {ins.word:#0{2 + self.arch.word_bits // 4}x}"
        out = enc.syntax
        optional = enc.optional_operand
        if optional is not None:
            slot = "{" + optional + "?}"
            if ins.operands[optional] == self._fields[optional].default:
                before, _, after = omit_optional(out, optional)
                out = before + after
            else:
                out = out.replace(slot, "{" + optional + "}")
        for name in enc.operand_names:
            if name == enc.suffix:
                continue
            out = out.replace("{" + name + "}", self.operand(self._fields[name], ins.operands[name],
                                                             ins.address, symbols), 1)
        mnemonic = enc.mnemonic
        if enc.suffix is not None:
            field = self._fields[enc.suffix]
            value = ins.operands[enc.suffix]
            if value != field.default:
                mnemonic += "." + self.operand(field, value, ins.address)
        return f"{mnemonic} {out}".rstrip()

    def word(self, word: int, address: int = 0, symbols: Mapping[int, str] | None = None) -> str:
        """Decode and render one word; an undecodable word renders as ``.word``."""
        enc = self.decoder.match(word)
        if enc is None:
            return f".word {word:#0{2 + self.arch.word_bits // 4}x}"
        return self.text(self.decoder.decode(word, address), symbols)

    def lines(self, data: bytes, base: int = 0,
              symbols: Mapping[int, str] | None = None) -> Iterator[tuple[int, int | None, str]]:
        """``(address, word, text)`` for each word of ``data``; a short tail renders as ``.byte``."""
        step = self.arch.word_bytes
        wrap = (1 << self.arch.address_bits) - 1  # addresses wrap like the machine's
        for off in range(0, len(data) - len(data) % step, step):
            w = int.from_bytes(data[off:off + step], self.arch.endian)
            addr = (base + off) & wrap
            yield addr, w, self.word(w, addr, symbols)
        tail = data[len(data) - len(data) % step:]
        if tail:
            yield ((base + len(data) - len(tail)) & wrap, None,
                   ".byte " + ", ".join(f"{b:#04x}" for b in tail))

    def listing(self, data: bytes, base: int = 0, symbols: Mapping[int, str] | None = None) -> str:
        """A human listing: address, word, text, and labels where symbols name an address."""
        width = self.arch.word_bits // 4
        rows = []
        for addr, w, text in self.lines(data, base, symbols):
            if symbols and addr in symbols:
                rows.append(f"{symbols[addr]}:")
            wtxt = f"{w:0{width}x}" if w is not None else " " * width
            rows.append(f"  {addr:0{self.addr_digits}x}:  {wtxt}  {text}")
        return "\n".join(rows)
