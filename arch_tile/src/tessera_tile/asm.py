"""The tile assembler: RISC-V assembly plus one mnemonic per tile operation and ``.ace``.

A tile mnemonic (``tld.g.us``, ``tmma.bf16_fp32``, ``tsync`` ... see
:mod:`tessera_tile.syntax` and docs/tile.md) expands into the ``.ace`` words of the
operation — W2, W1, W0 as the tables say — so RISC-V and tile lines mix freely.
``.ace`` takes a raw word or a word by its fields (:mod:`tessera_tile.raw`).  Words are
encoded on custom-3, or on the first ACE opcode of the architecture when it was built
without custom-3.
"""

from __future__ import annotations

from typing import Any

from tessera.isa import Architecture
from tessera.isa.asm import split_operands
from tessera_riscv.asm import RiscvAssembler
from tessera_tile import raw, syntax, tables


class TileAssembler(RiscvAssembler):
    def __init__(self, arch: Architecture, decoder: Any = None) -> None:
        super().__init__(arch, decoder)
        self.tile_tables = tables.builtin()
        t = self.tile_tables
        opcodes = sorted({e.match & 0x7F for e in arch.encodings if "ace" in e.flags})
        self.ace_opcode = t.opcodes["custom-3"] if t.opcodes["custom-3"] in opcodes or not opcodes else opcodes[0]
        self.csr_names = {name: int(e["index"]) for name, e in t.csr_map().items()}

    def expand(self, mnemonic: str, operands_text: str, location: int) -> list[str] | None:
        t = self.tile_tables
        if mnemonic.startswith(("ace", ".")):
            return super().expand(mnemonic, operands_text, location)
        ops = split_operands(operands_text)
        ctx = self.context
        assert ctx is not None
        offsets = [o for o, _ in ops]

        def value(text: str, index: int) -> int:
            return ctx.value(text, offsets[index] if 0 <= index < len(offsets) else 0)

        try:
            words = syntax.encode(t, mnemonic, [text for _, text in ops], value, self.ace_opcode,
                                  self.csr_names)
        except syntax.SyntaxProblem as exc:
            at = offsets[exc.index] if 0 <= exc.index < len(offsets) else 0
            raise ctx.error(f"{mnemonic}: {exc.message}", at) from None
        if words is None:
            return super().expand(mnemonic, operands_text, location)
        return [f".ace {w:#010x}" for w in words]

    def directive(self, name: str, args_text: str, ctx: Any) -> bool:
        if name != ".ace":
            return super().directive(name, args_text, ctx)
        try:
            word = raw.parse(self.tile_tables, args_text, lambda text: ctx.value(text, 0))
        except raw.RawProblem as exc:
            raise ctx.error(f".ace: {exc}", 0) from None
        ctx.emit(word.to_bytes(4, "little"))
        return True
