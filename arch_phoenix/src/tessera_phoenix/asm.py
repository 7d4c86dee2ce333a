"""The rfPhoenix assembler: the generic table-driven assembler plus what the ISA adds.

Additions over :class:`tessera.isa.asm.Assembler` (spec 4.10):

* **Operand spellings**: immediates with or without ``#`` (so ``#`` does not start a
  comment here, whatever ``Architecture.comment_chars`` says; use ``;`` or ``//``); CSR names (``hartid``,
  ``tvec3`` …) wherever a CSR number goes; ``r57``/``r58`` for the link field of
  CALL/BSR.  Memory operands ``disp[Ra]`` and ``[Ra+Rb]`` are written in the table's
  syntax templates; ``[Ra]`` means ``0[Ra]`` and ``ld …, [Ra+Rb]`` picks the indexed
  form (:mod:`tessera_phoenix.pseudo`, with the other pseudo-instructions).
* **Automatic postfixes**: an immediate or displacement that does not fit its field
  (19 bits; 13 for CMPI/FCMPI; 17 for branches) gets one or two PFX words after the
  instruction (:mod:`tessera_phoenix.postfix` does the arithmetic).  How many words a
  line needs can depend on labels further down, so sizes are settled by *relaxation*:
  every postfix-capable line starts with none; the final pass records each line that
  needs more, and the whole assembly is repeated with the grown sizes until nothing
  grows.  Sizes only ever grow, so this ends (a line needing fewer postfixes than it
  has gets redundant ones, which repeat the sign and change nothing).  Within one
  repetition every pass uses the same sizes, which the generic assembler requires.
"""

from __future__ import annotations

from typing import Any

import attrs

from tessera.errors import AssemblyError
from tessera.isa import Architecture, Field
from tessera.isa.asm import Assembler
from tessera_phoenix import pseudo, registers
from tessera_phoenix.encoding import POSTFIX_FIELDS
from tessera_phoenix.postfix import postfix_word, postfixes_needed, split

#: Safety bound on assembly repetitions; each one grows at least one line, at most twice per line.
MAX_RELAXATION = 256

_LINKS = {"r57": 1, "lr1": 1, "r58": 2, "lr2": 2}


def _csr_names() -> dict[str, int]:
    """CSR names usable where a CSR number goes (spec 1.4).

    Per-mode registers take a u/s/h/m prefix for the view or copy of that mode; the
    bare name is the machine one (0x3xxx), except TIME/TIMESEC whose bare name is the
    user-level number every mode may read (writing needs ``mtime``/``mtimesec``).
    """
    r = registers
    names = {"cr0": r.CR0, "hartid": r.HARTID, "tick": r.TICK, "ptbr": r.PTBR,
             "hmask": r.HMASK, "asid": r.ASID, "dbcr": r.DBCR, "dbsr": r.DBSR, "eip": r.EIP,
             "plstack": r.PLSTACK, "pmstack": r.PMSTACK, "time": r.TIME_LOW,
             "timesec": r.TIMESEC_LOW, "mtime": 0x3000 | r.TIME_LOW,
             "mtimesec": 0x3000 | r.TIMESEC_LOW}
    for i in range(4):
        names[f"dbad{i}"] = r.DBAD[i]
        names[f"dbam{i}"] = r.DBAM[i]
        names[f"tvec{i}"] = r.TVEC[i]
    for low, name in ((r.STATUS_LOW, "status"), (r.CAUSE_LOW, "cause"), (0x007, "badaddr")):
        names[name] = 0x3000 | low
        for mode, prefix in enumerate("ushm"):
            names[prefix + name] = mode << 12 | low
    return names


CSR_NAMES = _csr_names()


class PhoenixAssembler(Assembler):
    """Assembler for rfPhoenix: pseudo-instructions, operand spellings, automatic postfixes."""

    def __init__(self, arch: Architecture, decoder: Any = None) -> None:
        if "#" in arch.comment_chars:  # '#' marks immediates here, it cannot start a comment
            arch = attrs.evolve(arch, comment_chars=arch.comment_chars.replace("#", ""))
        super().__init__(arch, decoder)
        self._word_bytes = arch.word_bytes
        self._wide = {enc.mnemonic.lower(): POSTFIX_FIELDS[enc.mnemonic]
                      for enc in arch.encodings if enc.mnemonic in POSTFIX_FIELDS}
        #: line key -> postfixes decided for it (grows between repetitions)
        self._decided: dict[tuple, int] = {}
        #: line key -> postfixes found necessary in the current repetition
        self._grow: dict[tuple, int] = {}
        #: the postfix-capable line being encoded: field name, decided count, full value
        self._capture: dict[str, Any] | None = None

    # -- driver: relaxation of postfix sizes ---------------------------------------------
    def assemble(self, text: str, *, file: str = "<input>", base: int = 0) -> Any:
        self._decided = {}
        for _ in range(MAX_RELAXATION):
            self._grow = {}
            try:
                program = super().assemble(text, file=file, base=base)
            except AssemblyError:
                if not self._grow:
                    raise
                program = None  # may be an artefact of sizes still growing: try again
            if not self._grow:
                return program
            for key, count in self._grow.items():
                self._decided[key] = max(self._decided.get(key, 0), count)
        raise AssemblyError("postfix sizes do not settle", file=file)

    def expand(self, mnemonic: str, operands_text: str, location: int) -> list[str] | None:
        return pseudo.expand(mnemonic, operands_text)

    # -- postfix-capable instructions ----------------------------------------------------
    def _instruction(self, ctx: Any, stmt: Any) -> None:
        base = stmt.name.split(".", 1)[0]
        field = self._wide.get(stmt.name) or self._wide.get(base)
        if field is None:
            super()._instruction(ctx, stmt)
            return
        key = (stmt.line, stmt.column, stmt.name, stmt.args)
        count = self._decided.get(key, 0)
        self._capture = {"field": field, "count": count, "key": key, "value": None}
        try:
            super()._instruction(ctx, stmt)
        finally:
            capture, self._capture = self._capture, None
        if not ctx.final:
            ctx.fill(self._word_bytes * count)
            return
        value = capture["value"]
        width = self.arch.field_map[field].width
        for p in split(value if value is not None else 0, width, count)[1]:
            ctx.emit(self.encoder.to_bytes(postfix_word(p)))

    def _own_part(self, field: Field, value: int, ctx: Any, offset: int) -> int:
        """The field value for a complete immediate ``value``; records growth if needed."""
        capture = self._capture
        assert capture is not None
        capture["value"] = value
        need = postfixes_needed(value, field.width)
        if need is None:
            raise ctx.error(self._unencodable(field, value), offset)
        if need > capture["count"]:
            key = capture["key"]
            self._grow[key] = max(self._grow.get(key, 0), need)
            return 0  # placeholder; the line is re-assembled with room for the postfixes
        return split(value, field.width, capture["count"])[0]

    @staticmethod
    def _unencodable(field: Field, value: int) -> str:
        what = "branch displacement" if field.kind == "pcrel" else "immediate"
        shown = f"{value:#x}" if value >= 0 else f"-{-value:#x}"
        if field.width < 19 and -(1 << 63) <= value < 1 << 63:
            return (f"{what} {shown} cannot be encoded: the {field.width}-bit field is "
                    f"sign-extended into bits 18:{field.width - 1}, so with a postfix those "
                    "bits must all equal the sign" + ("; use bra/jmp for far targets"
                                                      if field.kind == "pcrel" else ""))
        return f"{what} {shown} does not fit in 109 bits (two postfixes)"

    # -- operand spellings ---------------------------------------------------------------
    def parse_operand(self, field: Field, text: str, ctx: Any, offset: int) -> int:
        if text.startswith("#") and field.kind != "reg":
            stripped = text[1:].lstrip()
            offset += len(text) - len(stripped)
            text = stripped
        if field.name == "csr" and text.lower() in CSR_NAMES:
            return CSR_NAMES[text.lower()]
        if field.name == "lk" and text.lower() in _LINKS:
            return _LINKS[text.lower()]
        value = super().parse_operand(field, text, ctx, offset)
        capture = self._capture
        if capture is not None and field.name == capture["field"] and ctx.final:
            return self._own_part(field, value, ctx, offset)
        return value
