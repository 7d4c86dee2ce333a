"""The tile disassembler: RISC-V as usual; ACE words as operations or as ``.ace`` fields.

A single word out of context (``Disassembler.word``/``text``: traces, ``--dump``) is shown
by its fields, ``.ace W1.tgmem.mem{td=4, tilesize=1, rs1=10}``.  A listing
(:meth:`TileDisassembler.lines`, what ``tessera disasm`` prints) follows the sequencer: the
words of a complete operation are gathered and the operation's mnemonic is printed at
the word that dispatches it (the W0, or a lone W1), the words before it as comments
naming their role; words that form no operation are printed by their fields.  An
operation is only printed as a mnemonic when that text assembles back to exactly its
words, so nothing in a listing misrepresents the bytes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from tessera.isa import Disassembler, Instruction
from tessera_tile import raw, syntax, tables
from tessera_tile.tables import Tables


def is_ace(arch: Any, word: int) -> bool:
    return any("ace" in e.flags and word & e.mask == e.match for e in arch.encodings)


class TileDisassembler(Disassembler):
    def __init__(self, arch: Any, decoder: Any = None) -> None:
        super().__init__(arch, decoder)
        self.tile_tables: Tables = tables.builtin()
        t = self.tile_tables
        self.csr_by_index = {int(e["index"]): name for name, e in t.csr_map().items()}
        self._ace_rows = [e for e in arch.encodings if "ace" in e.flags]
        self._assembler: Any = None

    def _ace(self, word: int) -> bool:
        return any(word & e.mask == e.match for e in self._ace_rows)

    def text(self, ins: Instruction, symbols: Mapping[int, str] | None = None) -> str:
        if "ace" in ins.encoding.flags:
            return raw.render(self.tile_tables, ins.word)
        return super().text(ins, symbols)

    # ------------------------------------------------------------------ operations
    def operation(self, words: dict[str, int]) -> str | None:
        """The mnemonic text of a complete sequence (``{"W1": w, "W0": w}``), or ``None``."""
        t = self.tile_tables
        order = [w for w in ("W2", "W1", "W0") if w in words]
        form = t.identify(words)
        if form is None or any(words[w] & form.layouts[w].reserved for w in order):
            return None
        text = syntax.render(t, form, words, self.csr_by_index)
        if text is None or not self._same(text, [words[w] for w in order]):
            return None
        return text

    def _same(self, text: str, words: list[int]) -> bool:
        from tessera.errors import TesseraError

        if self._assembler is None:
            from tessera_tile.asm import TileAssembler

            self._assembler = TileAssembler(self.arch, self.decoder)
            opcodes = {w & 0x7F for w in words}
            if len(opcodes) == 1:
                self._assembler.ace_opcode = opcodes.pop()
        else:
            self._assembler.ace_opcode = words[0] & 0x7F
        try:
            program = self._assembler.assemble(text, base=0)
        except TesseraError:
            return False
        data = b"".join(d for _, d in program.segments)
        return data == b"".join(w.to_bytes(4, "little") for w in words)

    def lines(self, data: bytes, base: int = 0,
              symbols: Mapping[int, str] | None = None) -> Iterator[tuple[int, int | None, str]]:
        rows = list(super().lines(data, base, symbols))
        texts = [text for _, _, text in rows]
        t = self.tile_tables
        pending: list[int] = []          # indices of staged rows (W2 and/or W1), in order

        def flush() -> None:
            pending.clear()

        for i, (_addr, word, _text) in enumerate(rows):
            if word is None or not self._ace(word):
                flush()
                continue
            r, cls = raw.role(t, word)
            if r == "W2":
                flush()
                pending.append(i)
                continue
            if r == "W1" and cls not in t.lone_classes:
                if pending and raw.role(t, rows[pending[-1]][1] or 0)[0] != "W2":
                    flush()
                pending.append(i)
                continue
            group = [*pending, i] if r == "W0" else [i]
            if r == "W1":
                flush()
                group = [i]
            words = {raw.role(t, rows[j][1] or 0)[0]: rows[j][1] or 0 for j in group}
            if len(words) == len(group):
                text = self.operation(words)
                if text is not None:
                    for j in group[:-1]:
                        role = raw.role(t, rows[j][1] or 0)[0]
                        texts[j] = f"# {role} of the {text.split()[0]} below"
                    texts[i] = text
            flush()
        for (address, word, _), text in zip(rows, texts):
            yield address, word, text
