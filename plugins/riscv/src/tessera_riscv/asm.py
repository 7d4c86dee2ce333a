"""The RISC-V assembler: the table-driven assembler plus the usual RISC-V conveniences.

* **Pseudo-instructions** (as in the RISC-V assembly manual): ``li`` with any 32/64-bit
  constant (the shortest ``lui``/``addi(w)``/``slli`` sequence), ``la``/``lla``, ``mv``,
  ``not``, ``neg(w)``, ``sext.w``, ``zext.b``, ``zext.w``, ``seqz``/``snez``/``sltz``/``sgtz``,
  ``j``, ``jal label``, ``jr``, ``jalr rs``, ``ret``, ``call``, ``tail``,
  ``beqz``/``bnez``/``blez``/``bgez``/``bltz``/``bgtz``, ``bgt``/``ble``/``bgtu``/``bleu``,
  ``csrr``/``csrw``/``csrs``/``csrc`` (and ``…i``), ``rdcycle``/``rdtime``/``rdinstret``
  (and ``…h`` on RV32), ``fence`` without operands (``fence iorw, iorw``) and ``unimp``.
* **Operands**: ABI register names and ``x0``–``x31``, CSR names (``csrrw t0, mstatus, t1``)
  or numbers, ``%hi(sym)``, ``%lo(sym)``, ``%pcrel_hi(sym)`` and ``%pcrel_lo(label)``
  (``label`` marks the ``auipc``), ``lw a0, (a1)`` for ``lw a0, 0(a1)``, and negative
  ``lui`` immediates (``lui a0, -1`` is ``lui a0, 0xfffff``).
* **Directives**: as GNU as for RISC-V, ``.align n`` aligns to ``2**n`` bytes
  (``.balign`` takes bytes); ``.quad``/``.8byte``, ``.4byte``, ``.2byte`` are data;
  ``.option``, ``.attribute``, ``.file``, ``.ident``, ``.type`` and ``.size`` are accepted
  and ignored.

``li`` needs its value when the line is laid out, so its operand may not refer to a
label defined further down (use ``la`` for addresses).
"""

from __future__ import annotations

from typing import Any

from tessera.isa import Architecture, Field
from tessera.isa.asm import Assembler, split_operands
from tessera_riscv import csrs

_IGNORED_DIRECTIVES = frozenset({".option", ".attribute", ".file", ".ident", ".type", ".size"})
_DATA_ALIASES = {".quad": ".dword", ".8byte": ".dword", ".4byte": ".word", ".2byte": ".half"}
_MEMORY = frozenset({"lb", "lh", "lw", "ld", "lbu", "lhu", "lwu", "sb", "sh", "sw", "sd"})
_RELOCATIONS = ("%pcrel_hi(", "%pcrel_lo(", "%hi(", "%lo(")
_BRANCH_ZERO = {"beqz": ("beq", "{r}, zero"), "bnez": ("bne", "{r}, zero"),
                "blez": ("bge", "zero, {r}"), "bgez": ("bge", "{r}, zero"),
                "bltz": ("blt", "{r}, zero"), "bgtz": ("blt", "zero, {r}")}
_BRANCH_SWAP = {"bgt": "blt", "ble": "bge", "bgtu": "bltu", "bleu": "bgeu"}
_CSR_PSEUDO = {"csrw": "csrrw", "csrs": "csrrs", "csrc": "csrrc",
               "csrwi": "csrrwi", "csrsi": "csrrsi", "csrci": "csrrci"}
_COUNTER_READS = {"rdcycle": "cycle", "rdtime": "time", "rdinstret": "instret",
                  "rdcycleh": "cycleh", "rdtimeh": "timeh", "rdinstreth": "instreth"}


def sext12(value: int) -> int:
    return ((value & 0xFFF) ^ 0x800) - 0x800


def hi20(value: int) -> int:
    """The ``lui``/``auipc`` immediate that, with :func:`sext12` of ``value``, makes ``value``."""
    return ((value + 0x800) >> 12) & 0xFFFFF


def li_sequence(rd: str, value: int, xlen: int) -> list[str]:
    """The instructions ``li rd, value`` expands to (``value`` already in range)."""
    mask = (1 << xlen) - 1
    sign = 1 << (xlen - 1)
    v = ((value & mask) ^ sign) - sign          # as a signed XLEN value
    if xlen == 32:
        if -2048 <= v < 2048:
            return [f"addi {rd}, zero, {v}"]
        lo = sext12(v)
        return [f"lui {rd}, {hi20(v)}"] + ([f"addi {rd}, {rd}, {lo}"] if lo else [])
    return _li64(rd, v)


def _li64(rd: str, v: int) -> list[str]:
    if -2048 <= v < 2048:
        return [f"addi {rd}, zero, {v}"]
    if -(1 << 31) <= v < 1 << 31:
        lo = sext12(v)
        return [f"lui {rd}, {hi20(v)}"] + ([f"addiw {rd}, {rd}, {lo}"] if lo else [])
    lo = sext12(v)
    upper = (v - lo) >> 12
    shift = 12
    trailing = (upper & -upper).bit_length() - 1
    upper >>= trailing
    shift += trailing
    seq = _li64(rd, upper) + [f"slli {rd}, {rd}, {shift}"]
    if lo:
        seq.append(f"addi {rd}, {rd}, {lo}")
    return seq


class RiscvAssembler(Assembler):
    """Assembler for RV32/RV64 (see the module docstring for what it adds)."""

    def __init__(self, arch: Architecture, decoder: Any = None) -> None:
        super().__init__(arch, decoder)
        self.xlen = arch.register_file_map["x"].width
        self._mask = (1 << self.xlen) - 1
        self._csr_numbers = csrs.numbers(self.xlen)
        self._pcrel: dict[int, int] = {}  # address of an auipc -> its %pcrel_hi target

    # ------------------------------------------------------------------ operands

    def parse_operand(self, field: Field, text: str, ctx: Any, offset: int) -> int:
        if field.name == "csr":
            number = self._csr_numbers.get(text.strip().lower())
            return number if number is not None else ctx.value(text, offset)
        if field.kind in ("imm", "uimm") and text.startswith(_RELOCATIONS):
            return self._relocation(text, ctx, offset)
        value = super().parse_operand(field, text, ctx, offset)
        if field.name == "imm20" and -0x80000 <= value < 0:
            value &= 0xFFFFF
        return value

    def _relocation(self, text: str, ctx: Any, offset: int) -> int:
        kind, _, rest = text.partition("(")
        if not rest.endswith(")"):
            raise ctx.error(f"{kind}(...) is missing its closing parenthesis", offset)
        inner = rest[:-1]
        at = offset + len(kind) + 1
        value = ctx.value(inner, at)
        if kind == "%hi":
            return hi20(value)
        if kind == "%lo":
            return sext12(value)
        if kind == "%pcrel_hi":
            self._pcrel[ctx.location] = value
            return hi20(self._delta(value, ctx.location))
        target = self._pcrel.get(value)  # %pcrel_lo(label of the auipc)
        if target is None:
            if ctx.final:
                raise ctx.error(f"%pcrel_lo({inner}) does not name an auipc with %pcrel_hi", at)
            return 0
        return sext12(self._delta(target, value))

    def _delta(self, target: int, location: int) -> int:
        delta = (target - location) & self._mask
        return delta - (1 << self.xlen) if delta >> (self.xlen - 1) else delta

    def _pc_offset(self, ops: list[tuple[int, str]], index: int) -> tuple[int, int]:
        """``(hi20, lo12)`` of the distance from this line to the symbol operand ``index``."""
        ctx = self.context
        assert ctx is not None  # set for each statement while assembling
        offset, text = ops[index]
        delta = self._delta(ctx.value(text, offset), ctx.location)
        if ctx.final and not -(1 << 31) - 0x800 <= delta < (1 << 31) - 0x800:
            raise ctx.error(f"{text} is more than 2 GiB away from {ctx.location:#x}", offset)
        return hi20(delta), sext12(delta)

    # ------------------------------------------------------------------ pseudo-instructions

    def expand(self, mnemonic: str, operands_text: str, location: int) -> list[str] | None:
        ops = split_operands(operands_text)
        t = [text for _, text in ops]
        n = len(t)
        ctx = self.context
        assert ctx is not None  # set for each statement while assembling
        if mnemonic in _MEMORY and n == 2 and t[1].startswith("("):
            return [f"{mnemonic} {t[0]}, 0{t[1]}"]
        if mnemonic.startswith("amo") and n == 3 and t[2].startswith("0("):
            return [f"{mnemonic} {t[0]}, {t[1]}, {t[2][1:]}"]
        if mnemonic == "li" and n == 2:
            value = ctx.value(t[1], ops[1][0], layout=True)
            if not -(1 << (self.xlen - 1)) <= value <= self._mask:
                raise ctx.error(f"li: {value} does not fit in {self.xlen} bits", ops[1][0])
            return li_sequence(t[0], value, self.xlen)
        if mnemonic in ("la", "lla") and n == 2:
            hi, lo = self._pc_offset(ops, 1)
            return [f"auipc {t[0]}, {hi}", f"addi {t[0]}, {t[0]}, {lo}"]
        if mnemonic == "call" and n in (1, 2):
            rd = t[0] if n == 2 else "ra"
            hi, lo = self._pc_offset(ops, n - 1)
            return [f"auipc {rd}, {hi}", f"jalr {rd}, {lo}({rd})"]
        if mnemonic == "tail" and n == 1:
            hi, lo = self._pc_offset(ops, 0)
            return [f"auipc t1, {hi}", f"jalr zero, {lo}(t1)"]
        simple = self._simple(mnemonic, t)
        if simple is not None:
            return [simple]
        return None

    def _simple(self, m: str, t: list[str]) -> str | None:  # one table of spellings
        n = len(t)
        if n == 2:
            rd, rs = t
            table = {"mv": f"addi {rd}, {rs}, 0", "not": f"xori {rd}, {rs}, -1",
                     "neg": f"sub {rd}, zero, {rs}", "seqz": f"sltiu {rd}, {rs}, 1",
                     "snez": f"sltu {rd}, zero, {rs}", "sltz": f"slt {rd}, {rs}, zero",
                     "sgtz": f"slt {rd}, zero, {rs}", "zext.b": f"andi {rd}, {rs}, 255",
                     "csrr": f"csrrs {rd}, {rs}, zero"}
            if self.xlen == 64:
                table.update({"negw": f"subw {rd}, zero, {rs}", "sext.w": f"addiw {rd}, {rs}, 0",
                              "zext.w": f"add.uw {rd}, {rs}, zero"})
            if m in table:
                return table[m]
            if m in _BRANCH_ZERO:
                op, regs = _BRANCH_ZERO[m]
                return f"{op} {regs.format(r=rd)}, {rs}"
            if m in _CSR_PSEUDO:
                return f"{_CSR_PSEUDO[m]} zero, {rd}, {rs}"
            if m == "jalr" and "(" not in rs:
                return f"jalr {rd}, 0({rs})"
            if m == "jalr" and rs.startswith("("):
                return f"jalr {rd}, 0{rs}"
        if n == 3 and m in _BRANCH_SWAP:
            return f"{_BRANCH_SWAP[m]} {t[1]}, {t[0]}, {t[2]}"
        if n == 3 and m == "jalr" and "(" not in t[2]:
            return f"jalr {t[0]}, {t[2]}({t[1]})"
        if n == 1:
            (op,) = t
            if m == "j":
                return f"jal zero, {op}"
            if m == "jal":
                return f"jal ra, {op}"
            if m == "jr":
                return f"jalr zero, 0({op})"
            if m == "jalr":
                return f"jalr ra, 0({op})" if "(" not in op else f"jalr ra, {op}"
            if m in _COUNTER_READS and (self.xlen == 32 or not m.endswith("h")):
                return f"csrrs {op}, {_COUNTER_READS[m]}, zero"
        if n == 0:
            if m == "ret":
                return "jalr zero, 0(ra)"
            if m == "fence":
                return "fence iorw, iorw"
            if m == "unimp":
                return ".word 0xc0001073"  # csrrw zero, cycle, zero: a write to a read-only CSR
        return None

    # ------------------------------------------------------------------ directives

    def directive(self, name: str, args_text: str, ctx: Any) -> bool:
        if name in _IGNORED_DIRECTIVES:
            return True
        if name == ".align":      # GNU as for RISC-V: a power of two
            return self.builtin_directive(".p2align", ctx)
        if name == ".balign":
            return self.builtin_directive(".align", ctx)
        if name in _DATA_ALIASES:
            return self.builtin_directive(_DATA_ALIASES[name], ctx)
        return False
