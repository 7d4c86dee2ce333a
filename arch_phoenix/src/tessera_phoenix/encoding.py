"""The rfPhoenix encoding table (spec sections 2–4) and the postfix refinement (2.4).

One :class:`~tessera.isa.Encoding` row per instruction form; the decoder, encoder,
assembler and disassembler are all derived from it.  Decisions encoded here:

* **What a row matches.**  The opcode and the sub-fields that *select* an operation
  (R2 Func, R1 Func1, compare N, branch Cnd, CsrOp, TLB Op2, bit 39 of op 26, Lk = 0
  of JMP/BRA) plus the T bits of branch operands, which must be 0 (vector branches
  are undefined, so such words are UNIMP).  Every other bit is an operand or is
  *ignored*: reserved bits (Op2/RM/F where unused, the branch "A"/"B" bits, R1 bit 26,
  bits 35:34 of CSR …) are emitted as 0 by the assembler but not checked by the
  decoder, as the HDL does.  That keeps the shipped binaries decoding: vasm put R2
  Func bits into 35:30, so the Appendix A compare has bits 33:31 set and must still
  decode as CMP_EQ.  Sz/Mask are ignored where they mean nothing (CSR, BRK, RET/JMPR
  bits 47:40, system, queue and MMU ops, CACHE).
* **Spelling.**  Forms where Sz matters carry it as a mnemonic suffix (``add.w``,
  ``ld.b``, ``beq.w``; default ``.t``) and vector-capable forms take the lane-mask
  register as an optional last operand.  Operation variants the named mnemonic does
  not cover get a second row of the same mnemonic that spells the value out: FP
  rounding mode (``fadd v1, v2, v3, rtz``), shift fill bit (``sll r1, r2, r3, 1``),
  reserved compare selectors (``cmp r1, r2, r3, 3``), the REX Irq4/v fields.  The
  decoder prefers the named row (its mask is more specific).
* **Semantics.**  A row names its operation in the semantics registry
  (``REGISTRY.ref("add")``, :mod:`tessera.isa.registry`): the semantics modules are
  written and loaded independently of this table, and the engine binds the name to
  the function when it fills the decode cache, so the indirection costs nothing at
  run time.  Every row names a registered operation (``test_table_roundtrip``), so
  there is no fallback for a missing one: it would be a configuration error.  Rows
  with a postfix-capable immediate declare the one function :func:`refine` may swap
  in, ``too-many-postfixes`` (PFX trap).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from tessera.isa import Encoding, SemanticRef, swap
from tessera_phoenix.postfix import MAX_POSTFIXES, is_postfix, merge, payload
from tessera_phoenix.semantics import REGISTRY

MASK32 = 0xFFFF_FFFF
WORD = 6


# --------------------------------------------------------------------------- semantics

#: the variant ``refine`` installs when a third consecutive postfix follows (spec 2.4)
TOO_MANY_POSTFIXES = "too-many-postfixes"
#: the operand fields a postfix extends; a row with one declares :data:`TOO_MANY_POSTFIXES`
POSTFIX_IMMEDIATES = ("imm", "imm13", "bdisp")


def _variants(syntax: str) -> dict[str, SemanticRef]:
    """The functions ``refine`` may swap in for a row written ``syntax`` (Encoding.variants)."""
    if any(f"{{{name}}}" in syntax for name in POSTFIX_IMMEDIATES):
        return {TOO_MANY_POSTFIXES: REGISTRY.ref("too_many_postfixes")}
    return {}


# --------------------------------------------------------------------------- row builders

Bits = tuple[int, int, int]  # (hi, lo, value) fixed in the match


def _fixed(parts: Iterable[Bits]) -> tuple[int, int]:
    match = mask = 0
    for hi, lo, value in parts:
        m = ((1 << (hi - lo + 1)) - 1) << lo
        if value << lo & ~m:
            raise ValueError(f"value {value} does not fit bits {hi}:{lo}")
        match |= value << lo
        mask |= m
    return match, mask


def _row(mnemonic: str, parts: Iterable[Bits], syntax: str, name: str, timing: str, *,
         vector: bool = False, sized: bool = False, doc: str = "",
         flags: Iterable[str] = ()) -> Encoding:
    """One form.  ``vector``: Sz suffix plus optional mask; ``sized``: Sz suffix only;
    ``flags``: its control flags (``branch``, ``jump``, ``trap``, ``halt``, ``wait``)."""
    match, mask = _fixed(parts)
    if vector:
        syntax = f"{syntax}, {{mask?}}" if syntax else "{mask?}"
    return Encoding(mnemonic, match, mask, syntax, REGISTRY.ref(name), timing, frozenset(flags),
                    suffix="sz" if vector or sized else None, doc=doc, variants=_variants(syntax))


def _op(n: int) -> Bits:
    return (5, 0, n)


def _r2(func: int, *more: Bits) -> list[Bits]:
    return [_op(2), (32, 27, func), *more]


def _r1(func1: int, *more: Bits) -> list[Bits]:
    return [_op(2), (32, 27, 1), (25, 20, func1), *more]


RM0 = (36, 34, 0)
F0 = (33, 33, 0)

# --------------------------------------------------------------------------- the table

_INT_R2 = (  # R2 func, mnemonic, timing: Rt = Ra op Rb, element-wise
    (4, "add", "alu"), (5, "sub", "alu"), (6, "mul", "mul"), (8, "and", "alu"),
    (9, "or", "alu"), (10, "xor", "alu"), (11, "andc", "alu"), (12, "nand", "alu"),
    (13, "nor", "alu"), (14, "xnor", "alu"), (15, "orc", "alu"),
)
_RI = (  # major opcode, mnemonic, timing: Rt = Ra op imm
    (4, "addi", "alu"), (5, "subfi", "alu"), (6, "muli", "mul"), (8, "andi", "alu"),
    (9, "ori", "alu"), (10, "xori", "alu"),
)
_R1 = (  # R1 func1, mnemonic, timing: Rt = op Ra
    (0, "cntlz", "alu"), (2, "cntpop", "alu"), (17, "mcmprss", "alu"), (20, "vcmprss", "vector"),
    (32, "ffinite", "fpmove"), (35, "fneg", "fpmove"), (36, "frsqrte", "fpest"), (37, "fres", "fpest"),
    (38, "fsigmoid", "fpest"), (40, "itof", "fp"), (41, "ftoi", "fp"), (42, "fabs", "fpmove"),
    (43, "fnabs", "fpmove"), (44, "fclass", "fpmove"), (45, "fman", "fp"), (46, "fsign", "fpmove"),
    (47, "ftrunc", "fp"), (56, "sextb", "alu"), (57, "sextw", "alu"),
)
#: integer compare selector N (spec 3.4); 15 = whole relation vector (plain CMP)
INT_CONDITIONS = {"eq": 0, "lt": 1, "le": 2, "ltu": 5, "leu": 6, "ne": 8, "ge": 9, "gt": 10,
                  "geu": 13, "gtu": 14}
#: float compare selector N (spec 3.4); abslt/absge compare magnitudes
FLOAT_CONDITIONS = {"eq": 0, "lt": 1, "le": 2, "abslt": 3, "un": 4, "ne": 5, "ge": 9, "gt": 10,
                    "absge": 11, "or": 12}
FULL_VECTOR = 15
#: branch Cnd (bits 47:45): integer (4 reserved) and float (4, 5 reserved)
INT_BRANCHES = {"blt": 0, "bge": 1, "bltu": 2, "bgeu": 3, "beq": 6, "bne": 7}
FLOAT_BRANCHES = {"fblt": 0, "fbge": 1, "fble": 2, "fbgt": 3, "fbeq": 6, "fbne": 7}
BBS = 5
_MEMORY = (  # major opcode / R2 func, mnemonic, semantics of the displacement form
    (40, "st", "store"), (42, "stcr", "stcr"), (44, "ld", "load"), (45, "ldu", "loadu"),
    (46, "ldsr", "ldsr"),
)
_INDEXED = {"st": "stx", "stcr": "stcrx", "ld": "ldx", "ldu": "ldux", "ldsr": "ldsrx"}
_FMA = ((36, "fma"), (37, "fms"), (38, "fnma"), (39, "fnms"))
CSR_OPS = ("csrrd", "csrrw", "csrrc", "csrrs")  # CsrOp bits 37:36 (spec C20)


def _integer() -> list[Encoding]:
    rows = [_row(mn, _r2(f), "{rt}, {ra}, {rb}", mn, t, vector=True) for f, mn, t in _INT_R2]
    rows += [_row(mn, [_op(op)], "{rt}, {ra}, {imm}", mn, t, vector=True) for op, mn, t in _RI]
    rows += [_row(mn, _r1(f), "{rt}, {ra}", mn, t, vector=True) for f, mn, t in _R1]
    for n, mn in ((27, "sll"), (28, "srl")):  # fill bit F: named row F = 0, generic row
        rows.append(_row(mn, _r2(n, F0), "{rt}, {ra}, {rb}", mn, "alu", vector=True))
        rows.append(_row(mn, _r2(n), "{rt}, {ra}, {rb}, {fill}", mn, "alu", vector=True,
                         doc="shift with an explicit fill bit F (bit 33)"))
    rows.append(_row("sra", _r2(29), "{rt}, {ra}, {rb}", "sra", "alu", vector=True))
    for n, mn in ((24, "slli"), (25, "srli")):
        rows.append(_row(mn, _r2(n, F0), "{rt}, {ra}, {shamt}", mn, "alu", vector=True))
        rows.append(_row(mn, _r2(n), "{rt}, {ra}, {shamt}, {fill}", mn, "alu", vector=True,
                         doc="shift with an explicit fill bit F (bit 33)"))
    rows.append(_row("srai", _r2(26), "{rt}, {ra}, {shamt}", "srai", "alu", vector=True))
    rows.append(_row("remask", _r2(22), "{rt}, {ra}, {remask_e}, {amt}", "remask", "alu",
                     vector=True))
    return rows


def _compares() -> list[Encoding]:
    rows = []
    for op, opi, base, conds, name in ((15, 14, "cmp", INT_CONDITIONS, "cmp"),
                                       (31, 30, "fcmp", FLOAT_CONDITIONS, "fcmp")):
        rows.append(_row(base, [_op(op), (30, 27, FULL_VECTOR)], "{rt}, {ra}, {rb}", name,
                         "alu", vector=True))
        rows += [_row(f"{base}_{c}", [_op(op), (30, 27, n)], "{rt}, {ra}, {rb}", name, "alu",
                      vector=True) for c, n in conds.items()]
        rows.append(_row(base, [_op(op)], "{rt}, {ra}, {rb}, {n}", name, "alu", vector=True,
                         doc="compare with an explicit selector N (bits 30:27)"))
        rows.append(_row(f"{base}i", [_op(opi), (36, 33, FULL_VECTOR)], "{rt}, {ra}, {imm13}",
                         name + "i", "alu", vector=True))
        rows += [_row(f"{base}_{c}i", [_op(opi), (36, 33, n)], "{rt}, {ra}, {imm13}",
                      name + "i", "alu", vector=True) for c, n in conds.items()]
        rows.append(_row(f"{base}i", [_op(opi)], "{rt}, {ra}, {imm13}, {ni}", name + "i", "alu",
                         vector=True, doc="compare with an explicit selector N (bits 36:33)"))
    return rows


def _control() -> list[Encoding]:
    scalar = ((19, 19, 0), (12, 12, 0))  # T bits of the branch operands: vector = UNIMP
    b, j, jh = {"branch"}, {"jump"}, {"jump", "halt"}  # JMP/BRA to itself may halt (halt_on_self_loop)
    rows = [_row(mn, [_op(28), (47, 45, c), *scalar], "{bra}, {brb}, {bdisp}", "bcc", "branch",
                 sized=True, flags=b) for mn, c in INT_BRANCHES.items()]
    rows.append(_row("bbs", [_op(28), (47, 45, BBS), *scalar], "{bra}, {bit}, {bdisp}", "bcc",
                     "branch", sized=True, flags=b))
    rows += [_row(mn, [_op(29), (47, 45, c), *scalar], "{bra}, {brb}, {bdisp}", "fbcc", "branch",
                  sized=True, flags=b) for mn, c in FLOAT_BRANCHES.items()]
    rows += [
        _row("jmp", [_op(24), (7, 6, 0)], "{target}", "jmp", "branch", flags=jh),
        _row("call", [_op(24)], "{lk}, {target}", "jmp", "branch", flags=j),
        _row("bra", [_op(25), (7, 6, 0)], "{reltarget}", "bra", "branch", flags=jh),
        _row("bsr", [_op(25)], "{lk}, {reltarget}", "bra", "branch", flags=j),
        _row("ret", [_op(26), (39, 39, 0)], "{rt}, {ra}, {imm}", "ret", "branch", flags=j),
        _row("jmpr", [_op(26), (39, 39, 1)], "{rt}, {imm}[{ra}]", "jmpr", "branch", flags=j),
    ]
    return rows


def _memory() -> list[Encoding]:
    rows = []
    for op, mn, name in _MEMORY:
        rows.append(_row(mn, [_op(op)], "{rt}, {imm}[{ra}]", name, "mem", vector=True))
        rows.append(_row(_INDEXED[mn], _r2(op), "{rt}, [{ra}+{rb}]", _INDEXED[mn], "mem",
                         vector=True))
    rows.append(_row("cache", [_op(41)], "{ic}, {dc}, {imm}[{ra}]", "cache", "cache"))
    rows.append(_row("cachex", _r2(41), "{ic}, {dc}, [{ra}+{rb}]", "cachex", "cache"))
    return rows


def _float() -> list[Encoding]:
    rows = []
    for f, mn in ((36, "fadd"), (37, "fsub")):
        rows.append(_row(mn, _r2(f, RM0), "{rt}, {ra}, {rb}", mn, "fp", vector=True))
        rows.append(_row(mn, _r2(f), "{rt}, {ra}, {rb}, {rm}", mn, "fp", vector=True,
                         doc="explicit rounding mode RM (bits 36:34)"))
    for op, mn in _FMA:
        rows.append(_row(mn, [_op(op), RM0], "{rt}, {ra}, {rb}, {rc}", mn, "fp", vector=True))
        rows.append(_row(mn, [_op(op)], "{rt}, {ra}, {rb}, {rc}, {rm}", mn, "fp", vector=True,
                         doc="explicit rounding mode RM (bits 36:34)"))
    return rows


def _vector() -> list[Encoding]:
    three = ((0, "veins"), (2, "vshuf"), (3, "vex"), (34, "vsllv"), (35, "vsrlv"))
    rows = [_row(mn, _r2(f), "{rt}, {ra}, {rb}", mn, "vector", vector=True) for f, mn in three]
    rows += [_row(mn, _r2(f), "{rt}, {ra}, {shamt}", mn, "vector", vector=True)
             for f, mn in ((32, "vsllvi"), (33, "vsrlvi"))]
    return rows


def _system() -> list[Encoding]:
    rows = [_row("brk", [_op(0)], "{rt}, {imm}", "brk", "sys", flags={"trap"}),
            _row("nop", [_op(11)], "", "nop", "nop"),
            _row("pfx", [(5, 3, 0b010)], "{pimm}", "pfx", "nop")]
    rows += [_row(mn, [_op(7), (37, 36, n)], "{rt}, {ra}, {csr}", mn, "csr")
             for n, mn in enumerate(CSR_OPS)]
    rows += [
        _row("rti", _r1(25), "", "rti", "sys", flags={"trap"}),
        _row("rex", _r1(26, (33, 33, 1), (11, 8, 0)), "{tm}, {ra}", "rex", "rex", flags={"trap"},
             doc="redirect to mode Tm and jump to its vector (v = 1), IPL unchanged"),
        _row("rex", _r1(26), "{tm}, {ra}, {irq4}, {v}", "rex", "rex", flags={"trap"},
             doc="REX with explicit Irq4 (bits 11:8) and v (bit 33)"),
        _row("peekq", _r1(8), "{rt}, {q}", "peekq", "sys"),
        _row("popq", _r1(9), "{rt}, {q}", "popq", "sys"),
        _row("statq", _r1(11), "{rt}, {q}", "statq", "sys"),
        _row("resetq", _r1(12), "{q}", "resetq", "sys"),
        _row("pushq", _r2(23), "{q}, {rb}", "pushq", "sys"),
        _row("ptghash", _r1(7), "{rt}, {ra}", "ptghash", "mmu"),
        _row("tlbrd", _r2(7, (38, 37, 0)), "{rt}, {ra}", "tlbrd", "mmu"),
        _row("tlbrw", _r2(7, (38, 37, 1)), "{rt}, {ra}, {rb}", "tlbrw", "mmu"),
        _row("shptendx", _r2(43), "{rt}, {ra}, {rb}", "shptendx", "mmu"),
    ]
    return rows


ENCODINGS: tuple[Encoding, ...] = tuple(
    _integer() + _compares() + _control() + _memory() + _float() + _vector() + _system())

#: Timing classes the table uses (timing.py gives each a cycle count).
TIMING_CLASSES = frozenset(e.timing for e in ENCODINGS)

# --------------------------------------------------------------------------- refinement

#: mnemonic -> the field holding its own immediate (postfix-capable forms, spec 2.4)
POSTFIX_FIELDS = {e.mnemonic: n for e in ENCODINGS for n in e.operand_names
                  if n in POSTFIX_IMMEDIATES}
_ABSOLUTE = frozenset(e.mnemonic for e in ENCODINGS if "target" in e.operand_names)
_RELATIVE = frozenset(e.mnemonic for e in ENCODINGS if "reltarget" in e.operand_names)


def refine(ins: Any, peek: Callable[[int], int | None]) -> None:
    """Complete a decoded instruction: merge the postfixes that follow it (spec 2.4).

    Sets ``ins.value`` (the complete sign-extended immediate) for every form with an
    immediate.  J forms ignore postfixes: op 24 gets the absolute Target[31:0], op 25
    the sign-extended 40-bit offset.  Up to two following PFX words are merged and
    ``ins.span`` grows to cover them, so rewriting a postfix invalidates this entry;
    a third consecutive postfix makes the instruction raise PFX (200): ``refine``
    installs the row's declared :data:`TOO_MANY_POSTFIXES` variant.  The postfixes
    themselves still execute as NOPs when reached (``ins.next`` is unchanged).
    """
    mnemonic = ins.mnemonic
    field = POSTFIX_FIELDS.get(mnemonic)
    if field is None:
        if mnemonic in _ABSOLUTE:
            ins.value = ins.target & MASK32
        elif mnemonic in _RELATIVE:
            ins.value = ins.reltarget
        return
    payloads: list[int] = []
    address = ins.address
    while True:
        word = peek((address + WORD * (len(payloads) + 1)) & MASK32)
        if word is None or not is_postfix(word):  # unreadable, or not a postfix
            break
        if len(payloads) == MAX_POSTFIXES:
            swap(ins, TOO_MANY_POSTFIXES)
            ins.span = WORD * (len(payloads) + 2)
            break
        payloads.append(payload(word))
        ins.span = WORD * (len(payloads) + 1)
    ins.value = merge(getattr(ins, field), payloads)
