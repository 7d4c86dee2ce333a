"""Encoder generated from the encoding table: operand values → instruction word."""

from __future__ import annotations

from collections.abc import Mapping

from tessera.errors import EncodeError
from tessera.isa.description import Architecture, Encoding


class Encoder:
    """Build words from a form and its operand values."""

    def __init__(self, arch: Architecture) -> None:
        self.arch = arch
        self._fields = arch.field_map

    def encode(self, enc: Encoding, operands: Mapping[str, int]) -> int:
        """``enc.match`` with every operand inserted; :class:`EncodeError` when one does not fit."""
        word = enc.match
        names = enc.operand_names
        missing = [n for n in names if n not in operands]
        if missing:
            raise EncodeError(f"{enc.mnemonic}: missing operand(s) {', '.join(missing)}")
        extra = [n for n in operands if n not in names]
        if extra:
            raise EncodeError(f"{enc.mnemonic}: unexpected operand(s) {', '.join(extra)}")
        for name in names:
            field = self._fields[name]
            try:
                word = field.insert(word, int(operands[name]))
            except EncodeError as exc:
                raise EncodeError(f"{enc.mnemonic}: {exc.message}") from None
        return word

    def to_bytes(self, word: int) -> bytes:
        return word.to_bytes(self.arch.word_bytes, self.arch.endian)
