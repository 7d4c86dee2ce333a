"""Instruction forms as the assembler sees them: spellings, syntax variants, lookup.

An :class:`~tessera.isa.description.Encoding` row says how the disassembler writes
a form; this module derives everything the assembler needs to read it back:

* **Optional operands.**  A last slot written ``{mask?}`` may be left out together
  with the literal separator before it, which is exactly what the disassembler does
  when the field holds its default.  So a form gets two syntax *variants*: with the
  operand, then without it (the field then takes its default).  The cut is computed
  the same way as in :meth:`~tessera.isa.disasm.Disassembler.text` so that
  disassembled text always matches one of the variants.
* **Mnemonic suffixes.**  ``Encoding.suffix`` names an enum field written after a
  dot on the mnemonic (``ld.b``); without a suffix the field takes its default.
  :meth:`FormTable.lookup` tries the whole mnemonic first, because mnemonics may
  contain dots themselves (``sem.wait``), and only if no form is spelled that way
  splits at the last dot and reads the suffix by the field's enum names.  A number
  is not accepted as a suffix (``ld.2``): suffixes are names, so a typo never turns
  into a silently different operand size.
* **Shapes.**  The one-line ``"ld[.sz] rd, imm(rs1)[, mask]"`` summary used in
  "expected ..." errors, and the literal words of the syntax (``i`` in
  ``"i, {nnn}"``), so an operand that is a literal of another form of the same
  mnemonic is not reported as an unknown register.

Kept apart from :mod:`~tessera.isa.asm.assembler` so that module stays about passes
and operand values; everything here is derived once per architecture from the table.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from tessera.isa.asm.syntax import _LITERAL_WORD, _SLOT, _compile_template
from tessera.isa.description import Architecture, Encoding, Field, omit_optional

__all__ = ["Candidate", "Form", "FormTable", "UnknownSuffix", "omit_optional"]


@attrs.frozen
class Variant:
    """One way of writing a form's operands: a compiled template and its slot fields.

    ``omitted`` is the optional field this variant leaves out (it takes its default).
    """

    parts: tuple[tuple[str, str], ...]
    slots: tuple[str, ...]
    omitted: str | None = None


def _variant(syntax: str, omitted: str | None = None) -> Variant:
    return Variant(_compile_template(syntax), tuple(m.group(1) for m in _SLOT.finditer(syntax)),
                   omitted)


@attrs.frozen
class Form:
    """An encoding with its syntax variants (the full one first), its shape and the
    literal words of its syntax (lower-cased)."""

    encoding: Encoding
    variants: tuple[Variant, ...]
    shape: str
    literals: frozenset[str] = frozenset()

    @classmethod
    def of(cls, enc: Encoding) -> Form:
        optional = enc.optional_operand
        mnemonic = enc.mnemonic + (f"[.{enc.suffix}]" if enc.suffix else "")
        if optional is None:
            variants: tuple[Variant, ...] = (_variant(enc.syntax),)
            shown = enc.syntax
        else:
            before, part, after = omit_optional(enc.syntax, optional)
            variants = (_variant(enc.syntax), _variant(before + after, optional))
            shown = f"{before}[{part}]{after}"
        operands = _SLOT.sub(r"\1", shown)
        words = frozenset(w.lower() for w in _LITERAL_WORD.findall(_SLOT.sub(" ", enc.syntax)))
        return cls(enc, variants, f"{mnemonic} {operands}".rstrip(), words)


@attrs.frozen
class Candidate:
    """A form a mnemonic may stand for, with the operands its spelling fixes.

    ``fixed`` holds the suffix field's value (written or default); ``suffix_at`` is
    where the suffix starts in the mnemonic (its dot), or 0 when none was written,
    so errors about that value point at it.
    """

    form: Form
    fixed: dict[str, int]
    suffix_at: int = 0


class UnknownSuffix(Exception):
    """A mnemonic whose base has suffix forms, with a suffix none of them names."""

    def __init__(self, message: str, index: int) -> None:
        super().__init__(message)
        self.message, self.index = message, index


def _enum_value(field: Field, text: str) -> int | None:
    key = text.lower()
    return next((i for i, name in enumerate(field.names) if name.lower() == key), None)


class FormTable:
    """An architecture's forms by lower-cased mnemonic, and mnemonic lookup."""

    def __init__(self, arch: Architecture, keep: Callable[[Encoding], bool] | None = None) -> None:
        self._fields = arch.field_map
        self.forms: dict[str, list[Form]] = {}
        for enc in arch.encodings:
            if keep is None or keep(enc):
                self.forms.setdefault(enc.mnemonic.lower(), []).append(Form.of(enc))
        #: The table's mnemonics, for "did you mean" suggestions.
        self.mnemonics = sorted(self.forms)

    def lookup(self, name: str) -> list[Candidate]:
        """The forms lower-cased mnemonic ``name`` may stand for, in table order.

        ``[]`` when it names none; :class:`UnknownSuffix` when it is a known base
        with suffix forms but a suffix none of them accepts.
        """
        forms = self.forms.get(name)
        if forms:
            return [Candidate(f, self._default_suffix(f.encoding)) for f in forms]
        base, dot, suffix = name.rpartition(".")
        # the base's forms written with a suffix, each with the name of its suffix field
        suffixed = [(f, s) for f in self.forms.get(base, ()) if (s := f.encoding.suffix)] if dot else []
        if not suffixed:
            return []
        out = []
        for form, field in suffixed:
            value = _enum_value(self._fields[field], suffix)
            if value is not None:
                out.append(Candidate(form, {field: value}, len(base)))
        if not out:
            names = dict.fromkeys(n for _, field in suffixed for n in self._fields[field].names)
            raise UnknownSuffix(f"unknown suffix '.{suffix}' for {base} "
                                f"(expected one of: {', '.join(names)})", len(base))
        return out

    def _default_suffix(self, enc: Encoding) -> dict[str, int]:
        if enc.suffix is None:
            return {}
        default = self._fields[enc.suffix].default
        assert default is not None  # Architecture refuses a suffix field without one
        return {enc.suffix: default}
