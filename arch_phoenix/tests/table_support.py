"""Helpers for the encoding-table tests (test_table_*.py): one architecture, its tools.

The architecture is assembled here from the table's parts rather than imported from
``tessera_phoenix.arch`` so the table, refinement and assembler are tested on their
own; ``test_table_roundtrip`` also checks the real ``PHOENIX`` record when it loads.
"""

from __future__ import annotations

from typing import Any

from phoenix_support import M32, TABLE_ARCH, TABLE_ENC, run_image  # M32 re-exported

from tessera.isa import Decoder, Disassembler
from tessera_phoenix.asm import PhoenixAssembler
from tessera_phoenix.encoding import ENCODINGS, refine  # re-exported

ARCH = TABLE_ARCH
ENC = TABLE_ENC
DEC = Decoder(ARCH)
DIS = Disassembler(ARCH, DEC)


def assemble(text: str, base: int = 0, file: str = "<input>") -> bytes:
    """The bytes of ``text`` assembled at ``base`` (one contiguous segment expected)."""
    program = PhoenixAssembler(ARCH).assemble(text, base=base, file=file)
    start, data = program.image()
    assert not data or start == base
    return data


def words(data: bytes) -> list[int]:
    return [int.from_bytes(data[i:i + 6], "little") for i in range(0, len(data), 6)]


def row(mnemonic: str, index: int = 0) -> Any:
    return [e for e in ENCODINGS if e.mnemonic == mnemonic][index]


def peek_of(base: int, ws: list[int]) -> Any:
    """A ``peek`` over words placed at ``base`` (``None`` outside them, like unmapped memory)."""
    table = {(base + 6 * i) & M32: w for i, w in enumerate(ws)}
    return table.get


def decode_at(base: int, ws: list[int], index: int = 0) -> Any:
    """Decode word ``index`` of ``ws`` at its address and refine it with the words after."""
    address = (base + 6 * index) & M32
    ins = DEC.decode(ws[index], address)
    refine(ins, peek_of(base, ws))
    return ins


def run(source: str, base: int = 0x1000, steps: int = 10_000, **config: Any) -> Any:
    """Assemble ``source`` at ``base`` into DRAM, run thread 0 from there; (machine, thread)."""
    return run_image(assemble(source, base), base, steps, **config)
