"""Tile assembly syntax: one mnemonic per operation, to and from its words (tile.md 9.7).

Both directions use the tables for every bit and code, and this module for the
spelling only.  An operation is written with its positional operands first and then
options (``key=value``) and flags in any order, e.g.::

    tld.g.us   t4, (a0), 0, ts=2, tmask       # W1 + W0
    tld.g.ix   t0, (a0), v2, ew=h             # W2 + W1 + W0
    tmma.bf16_fp32 t0, t1, t2                 # tiles, or (a3) for a shared-memory operand
    talu2.add  t0, t1, v3, neg2               # binary with a vector (v) or FPR (f) operand
    tma.tiled  a1, a0, v1, dim=2, srctm, dst=shared, mbar=a3
    tmv.tx     t2, a0, 3, ew=w                # GPR -> tile element 3
    tsync      0, 0b11                        # barrier 0, threads 0 and 1
    twait      mma, alu

Register names: tiles ``t0``-``t255`` (by position: a GPR operand named ``t0`` is still
the RISC-V ``t0``), vectors ``v0``-``v31``, FPRs ``f0``-``f31``, GPRs by ABI name or
``x<n>``.  The complete list is in docs/tile.md.  :func:`encode` returns the words of an
operation; :func:`render` the text of a decoded sequence (and ``None`` when the words
do not fit any spelling, e.g. informational fields that disagree, so the disassembler
falls back to raw ``.ace`` words).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from tessera_riscv.fields import ABI_NAMES
from tessera_tile.tables import OpForm, Tables, pattern_value

_GPR = {name: i for i, name in enumerate(ABI_NAMES)} | {f"x{i}": i for i in range(32)} | {"fp": 8}
_NUMBERED = re.compile(r"^([tvf])(\d+)$")


class SyntaxProblem(Exception):
    """Bad operand text; ``offset`` indexes the operand list (or -1 for the mnemonic)."""

    def __init__(self, message: str, index: int = -1) -> None:
        super().__init__(message)
        self.message = message
        self.index = index


# --------------------------------------------------------------------------- operands
class Operands:
    """The operand list of one line: positional operands, options, flags."""

    def __init__(self, texts: list[str], value: Callable[[str, int], int],
                 flag_words: frozenset[str] | None = None) -> None:
        flag_words = _FLAG_WORDS if flag_words is None else flag_words
        self.value = value
        self.positional: list[tuple[int, str]] = []
        self.options: dict[str, tuple[int, str]] = {}
        self.flags: dict[str, int] = {}
        for i, text in enumerate(texts):
            t = text.strip()
            key, eq, rest = t.partition("=")
            if eq and key.strip().isidentifier():
                self.options[key.strip().lower()] = (i, rest.strip())
            elif t.lower() in flag_words:
                self.flags[t.lower()] = i
            else:
                self.positional.append((i, t))

    def need(self, count: int, shape: str) -> list[tuple[int, str]]:
        if len(self.positional) != count:
            raise SyntaxProblem(f"expected {shape}")
        return self.positional

    def flag(self, name: str) -> int:
        return 1 if self.flags.pop(name, None) is not None else 0

    def option(self, name: str) -> tuple[int, str] | None:
        return self.options.pop(name, None)

    def done(self) -> None:
        for name, i in self.flags.items():
            raise SyntaxProblem(f"unknown flag {name!r}", i)
        for name, (i, _) in self.options.items():
            raise SyntaxProblem(f"unknown option {name}=", i)


_FLAG_WORDS = frozenset({"tmask", "rtn", "ta", "tb", "neg1", "neg2", "negd", "reuse1", "reuse2", "reused",
                         "multitile", "bc", "v0.t", "srctm", "dsttm", "multicast", "nonblk", "shared",
                         "commit", "mma", "alu", "tma", "all"})


def gpr(op: tuple[int, str]) -> int:
    i, text = op
    t = text.strip().lower()
    if t not in _GPR:
        raise SyntaxProblem(f"{text!r} is not a general-purpose register", i)
    return _GPR[t]


def numbered(op: tuple[int, str], letter: str, limit: int, what: str) -> int:
    i, text = op
    m = _NUMBERED.match(text.strip().lower())
    if m is None or m.group(1) != letter or int(m.group(2)) >= limit:
        raise SyntaxProblem(f"{text!r} is not a {what} ({letter}0..{letter}{limit - 1})", i)
    return int(m.group(2))


def tile(op: tuple[int, str]) -> int:
    return numbered(op, "t", 256, "tile register")


def vreg(op: tuple[int, str]) -> int:
    return numbered(op, "v", 32, "vector register")


def fpr(op: tuple[int, str]) -> int:
    return numbered(op, "f", 32, "floating-point register")


def memory(op: tuple[int, str]) -> int:
    i, text = op
    t = text.strip()
    if not (t.startswith("(") and t.endswith(")")):
        raise SyntaxProblem(f"expected a (register) memory operand, not {text!r}", i)
    return gpr((i, t[1:-1]))


def is_memory(op: tuple[int, str]) -> bool:
    return op[1].strip().startswith("(")


def is_gpr(op: tuple[int, str]) -> bool:
    return op[1].strip().lower() in _GPR


def number(ops: Operands, op: tuple[int, str], lo: int, hi: int, what: str) -> int:
    v = ops.value(op[1], op[0])
    if not lo <= v <= hi:
        raise SyntaxProblem(f"{what} {v} is not in {lo}..{hi}", op[0])
    return v


def xname(i: int) -> str:
    return ABI_NAMES[i]


# --------------------------------------------------------------------------- building words
class Words:
    """Field values per word of one operation; :meth:`encode` makes the words."""

    def __init__(self, tables: Tables, form: OpForm, opcode: int) -> None:
        self.tables = tables
        self.form = form
        self.opcode = opcode
        self.values: dict[str, dict[str, int]] = {w: {} for w in form.words}
        for w, fname, pattern in form.match:
            self.values[w][fname] = pattern_value(pattern)

    def set(self, word: str, field: str, value: int) -> None:
        layout = self.form.layouts[word]
        f = layout.field(field)
        if not 0 <= value < 1 << f.width:
            raise SyntaxProblem(f"{field}={value} does not fit {f.width} bits")
        self.values[word][field] = value

    def encode(self) -> list[int]:
        out = []
        for w in self.form.words:
            role = "w2" if w == "W2" else "w0" if w == "W0" else self.form.cls
            assert role is not None   # an operation with a W1 has a class
            tuop = self.tables.tuop[role]
            base = self.tables.tuop_field.insert(self.tables.opcode_field.insert(0, self.opcode), tuop)
            out.append(self.form.layouts[w].encode(self.values[w], base))
        return out


def _by_name(table: dict[str, Any], name: str, what: str, index: int) -> int:
    if name not in table:
        raise SyntaxProblem(f"unknown {what} {name!r} (one of {', '.join(table)})", index)
    v = table[name]
    return int(v["code"] if isinstance(v, dict) else v)


def _name_of(table: dict[str, Any], code: int) -> str | None:
    for name, v in table.items():
        if (v["code"] if isinstance(v, dict) else v) == code:
            return name
    return None


# --------------------------------------------------------------------------- per kind: parse
def _offset(w: Words, ops: Operands, op: tuple[int, str] | None, wide: bool) -> None:
    if op is None:
        return
    if is_gpr(op):
        w.set("W0", "offseten", 1)
        w.set("W0", "lo5", gpr(op))
        return
    bits = 10 if wide else 5
    v = number(ops, op, -(1 << (bits - 1)), (1 << bits) - 1, "offset")
    v &= (1 << bits) - 1
    w.set("W0", "lo5", v & 31)
    if wide:
        w.set("W0", "hi5", v >> 5)


def _tilesize(w: Words, ops: Operands, word: str) -> None:
    o = ops.option("ts")
    n = "1" if o is None else str(ops.value(o[1], o[0]))
    w.set(word, "tilesize", _by_name(w.tables.table("tilesize"), n, "register count (ts=)", o[0] if o else -1))


def _func6_vector(w: Words, ops: Operands, word: str, direction: str, default: str) -> None:
    o = ops.option("ew")
    name = default if o is None else o[1].lower()
    code = _by_name(w.tables.table("func6_vector")[direction], name, "element width (ew=)", o[0] if o else -1)
    unmasked = 0 if ops.flag("v0.t") else 1 << w.tables.table("func6_vector_unmasked")["bit"]
    w.set(word, "func6", code | unmasked)


def parse_mem(w: Words, ops: Operands, kind: str) -> None:
    mode = w.form.params.get("mode")
    shape = {"unit": "td, (rs1)[, offset]", "stride": "td, (rs1), rs2[, offset]",
             "index": "td, (rs1), vs2[, offset]"}.get(mode or "", "td, (rs1)[, offset]")
    pos = ops.positional
    fixed = 3 if mode in ("stride", "index") else 2
    if not fixed <= len(pos) <= fixed + 1:
        raise SyntaxProblem(f"expected {shape}")
    w.set("W1", "td", tile(pos[0]))
    w.set("W1", "rs1", memory(pos[1]))
    if mode == "stride":
        w.set("W0", "rs2", gpr(pos[2]))
    elif mode == "index":
        v = vreg(pos[2])
        w.set("W0", "vs2", v)
        w.set("W2", "reg", v)
        _func6_vector(w, ops, "W2", "into", "h")
    _offset(w, ops, pos[fixed] if len(pos) > fixed else None, mode not in ("stride", "index"))
    if kind == "mem":
        _tilesize(w, ops, "W1")
    w.set("W0", "tmask", ops.flag("tmask"))


def _ew(w: Words, ops: Operands, word: str) -> None:
    o = ops.option("ew")
    name = "32" if o is None else o[1]
    w.set(word, "vec_size", _by_name(w.tables.table("vec_size"), name, "element width (ew=)", o[0] if o else -1))


def parse_tatomic(w: Words, ops: Operands, sub: str, index: int) -> None:
    w.set("W0", "memuop", 0b100000 | _by_name(w.tables.table("atomic"), sub, "atomic operation", index))
    parse_mem(w, ops, "tatomic")
    _ew(w, ops, "W1")
    w.set("W1", "rtn", ops.flag("rtn"))


def parse_satomic(w: Words, ops: Operands, sub: str, index: int) -> None:
    code = _by_name(w.tables.table("atomic"), sub, "atomic operation", index)
    w.set("W0", "memuop", 0b100000 | code)
    result = w.form.params["result"]
    pos = ops.positional
    first = 1 if result else 0
    if result:
        if len(pos) not in (3, 4):
            raise SyntaxProblem("expected rd, rs2, (rs1)[, rs3]")
        rd = gpr(pos[0])
        w.set("W1", "rd", rd)
        w.set("W1", "rd_en", 1)
    elif len(pos) not in (2, 3):
        raise SyntaxProblem("expected rs2, (rs1)[, offset or rs3]")
    w.set("W0", "rs2", gpr(pos[first]))
    w.set("W1", "rs1", memory(pos[first + 1]))
    extra = pos[first + 2] if len(pos) > first + 2 else None
    cas = sub == "cas"
    w.set("W0", "cas_en", int(cas))
    if cas:
        if extra is None:
            raise SyntaxProblem("compare-and-swap needs rs3 (the compare value)")
        w.set("W0", "lo5", gpr(extra))
    elif extra is not None:
        if result:
            raise SyntaxProblem("only cas takes a fourth operand in the result form", extra[0])
        w.set("W0", "lo5", number(ops, extra, -16, 31, "offset") & 31)
    _ew(w, ops, "W1")
    w.set("W0", "tmask", ops.flag("tmask"))


def parse_tma(w: Words, ops: Operands, sub: str, index: int) -> None:
    t = w.tables
    w.set("W1", "tmauop", _by_name(t.table("tmauop"), sub, "TMA mode", index))
    pos = ops.need(3, "dst, src, vs1")
    w.set("W1", "dst", gpr(pos[0]))
    w.set("W1", "src", gpr(pos[1]))
    v = vreg(pos[2])
    w.set("W2", "reg", v)
    w.set("W0", "vs", v)
    o = ops.option("dim")
    w.set("W1", "dim", (number(ops, (o[0], o[1]), 1, 4, "dim") if o else 1) - 1)
    w.set("W1", "dsttm", ops.flag("dsttm"))
    w.set("W1", "srctm", ops.flag("srctm"))
    for key, table in (("dst", "dstloc"), ("src", "srcloc")):
        o = ops.option(key)
        w.set("W1", table, _by_name(t.table(table), o[1].lower() if o else "global", f"{key} location",
                                    o[0] if o else -1))
    chosen = [(k, ops.option(k)) for k in ("group", "mbar", "sem")]
    given = [(k, o) for k, o in chosen if o is not None]
    if len(given) > 1:
        raise SyntaxProblem("give one of group=, mbar=, sem=", given[1][1][0])
    kind, o = given[0] if given else ("group", None)
    names = {"group": "bulk", "mbar": "mbar", "sem": "sem"}
    w.set("W0", "completion", _by_name(t.table("completion"), names[kind], "completion", -1))
    if kind == "mbar":
        assert o is not None
        w.set("W0", "completeobj", gpr(o))
    else:
        w.set("W0", "completeobj", number(ops, o, 0, 31, kind) if o else 0)
    w.set("W0", "multicast", ops.flag("multicast"))
    w.set("W0", "tmask", ops.flag("tmask"))
    w.set("W0", "offseten", 1)
    _func6_vector(w, ops, "W2", "into", "w")


def parse_mma(tables: Tables, ops: Operands, sub: str, index: int, opcode: int) -> list[int]:
    pos = ops.need(3, "td, A (tile or (rs1)), B (tile or (rs2))")
    a_mem, b_mem = is_memory(pos[1]), is_memory(pos[2])
    form = tables.op_named[{(False, False): "tmma.tt", (False, True): "tmma.tm", (True, False): "tmma.mt",
                            (True, True): "tmma.mm"}[(a_mem, b_mem)]]
    w = Words(tables, form, opcode)
    w.set("W0", "mmauop", _by_name(tables.table("mmauop"), sub, "MMA data type", index))
    w.set("W1", "td", tile(pos[0]))
    if a_mem:
        w.set("W1", "rs1", memory(pos[1]))
    else:
        w.set("W1", "ts1", tile(pos[1]))
    if b_mem:
        w.set("W0", "rs2", memory(pos[2]))
    else:
        w.set("W0", "ts2", tile(pos[2]))
    _tilesize(w, ops, "W0")
    for flag, word, field in (("multitile", "W0", "multitile"), ("ta", "W1", "transmata"),
                              ("tb", "W0", "transmatb"), ("neg1", "W1", "neg1"), ("negd", "W0", "negd"),
                              ("reuse1", "W1", "reuse1"), ("reuse2", "W0", "reuse2"), ("reused", "W1", "reused")):
        w.set(word, field, ops.flag(flag))
    ops.done()
    return w.encode()


def parse_talu(tables: Tables, ops: Operands, mnemonic: str, sub: str, index: int, opcode: int) -> list[int]:
    lo_bits = tables.table("talu_op_bits")["lo_bits"]
    pos = ops.positional
    if mnemonic == "talu1":
        form = tables.op_named["talu1"]
        code = _by_name(tables.table("talu_unary"), sub, "unary operation", index)
        pos = ops.need(2, "td, ts1")
    elif mnemonic == "talu2":
        form = tables.op_named["talu2"]
        code = _by_name(tables.table("talu_binary"), sub, "binary operation", index)
        pos = ops.need(3, "td, ts1, vs2 or fs2")
    else:
        code = _by_name(tables.table("talu_ternary"), sub, "ternary operation", index)
        pos = ops.need(4, "td, ts1, ts2 (or fs2/vs2), ts3")
        scalar = not pos[2][1].strip().lower().startswith("t")
        form = tables.op_named["talu3.s" if scalar else "talu3"]
    w = Words(tables, form, opcode)
    w.set("W1", "td", tile(pos[0]))
    w.set("W1", "ts1", tile(pos[1]))
    if mnemonic == "talu3":
        w.set("W1", "op_hi", code)
        w.set("W0", "ts3", tile(pos[3]))
    else:
        w.set("W1", "op_hi", code >> lo_bits)
        w.set("W0", "op_lo", code & ((1 << lo_bits) - 1))
    if "W2" in form.layouts:
        second = pos[2]
        vector = second[1].strip().lower().startswith("v")
        reg = vreg(second) if vector else fpr(second)
        w.set("W2", "vec_en", int(vector))
        w.set("W2", "reg", reg)
        w.set("W0", "src_type", tables.code("src_type", "vector" if vector else "scalar"))
        w.set("W0", "vs2" if mnemonic == "talu2" else "frs2", reg)
        _func6_vector(w, ops, "W2", "into", "b")
    elif mnemonic == "talu3":
        w.set("W0", "ts2", tile(pos[2]))
    for flag in ("neg1", "neg2", "reuse1", "reuse2"):
        if flag in form.layouts["W0"].decode(0):
            w.set("W0", flag, ops.flag(flag))
    w.set("W0", "tmask", ops.flag("tmask"))
    ops.done()
    return w.encode()


_MOVES = {"tv": ("vec.into", "t", "v"), "vt": ("vec.out", "v", "t"), "tx": ("gpr.into", "t", "x"),
          "xt": ("gpr.out", "x", "t"), "tf": ("fpr.into", "t", "f"), "ft": ("fpr.out", "f", "t")}


def parse_move(w: Words, ops: Operands, sub: str, index: int) -> None:
    t = w.tables
    if sub not in _MOVES:
        raise SyntaxProblem(f"unknown move {sub!r} (one of {', '.join(_MOVES)})", index)
    kind, first, second = _MOVES[sub]
    side, direction = kind.split(".")
    w.set("W2", "mvop", t.code("mvop", kind))
    pos = ops.need(3, f"{first}d, {second}s, index")
    regs = {"t": tile, "v": vreg, "x": gpr, "f": fpr}
    tile_op, cpu_op = (pos[0], pos[1]) if first == "t" else (pos[1], pos[0])
    w.set("W0", "tile", tile(tile_op))
    w.set("W2", "reg", regs[second if first == "t" else first](cpu_op))
    if is_gpr(pos[2]):
        w.set("W0", "rs2_en", 1)
        w.set("W0", "index", gpr(pos[2]))
    else:
        w.set("W0", "index", number(ops, pos[2], 0, 31, "index"))
    w.set("W2", "bc", ops.flag("bc"))
    table = {"vec": "func6_vector", "gpr": "func6_gpr", "fpr": "func6_fpr"}[side]
    o = ops.option("ew")
    default = {"vec": "b", "gpr": "d", "fpr": "d"}[side]
    name = default if o is None else o[1].lower()
    code = _by_name(t.table(table)[direction], name, "element width (ew=)", o[0] if o else -1)
    if side == "vec":
        code |= 0 if ops.flag("v0.t") else 1 << t.table("func6_vector_unmasked")["bit"]
    w.set("W2", "func6", code)


def parse_csr(w: Words, ops: Operands, csr_names: dict[str, int]) -> None:
    name = w.form.name
    pos = ops.positional

    def csr(op: tuple[int, str]) -> int:
        key = op[1].strip().lower()
        return csr_names[key] if key in csr_names else number(ops, op, 0, 1023, "CSR number")

    if name == "tcsrr":
        pos = ops.need(2, "rd, csr")
        w.set("W1", "rd", gpr(pos[0]))
        w.set("W1", "csr", csr(pos[1]))
        return
    pos = ops.need(3, "rd, csr, rs1" if not w.form.params.get("imm") else "rd, csr, uimm")
    rd = gpr(pos[0])
    w.set("W1", "rd", rd)
    w.set("W1", "rd_en", int(rd != 0))
    value = csr(pos[1])
    if value > 255:
        raise SyntaxProblem(f"TCSRW reaches CSRs 0..255, not {value:#x}", pos[1][0])
    w.set("W1", "csr", value)
    if w.form.params.get("imm"):
        w.set("W1", "rs1", number(ops, pos[2], 0, 31, "uimm"))
    else:
        w.set("W1", "rs1", gpr(pos[2]))


def parse_sync(tables: Tables, ops: Operands, opcode: int) -> list[int]:
    pos = ops.positional
    if not 1 <= len(pos) <= 2:
        raise SyntaxProblem("expected id[, mask]")
    id_reg = is_gpr(pos[0])
    mask_reg = len(pos) == 2 and is_gpr(pos[1])
    if not id_reg and len(pos) == 1:
        raise SyntaxProblem("an immediate barrier number needs a mask")
    name = {(False, False): "tsync", (False, True): "tsync.imm_rs", (True, False): "tsync.reg",
            (True, True): "tsync.reg_rs"}[(id_reg, mask_reg)]
    if id_reg and len(pos) == 2 and not mask_reg:
        raise SyntaxProblem("with a register barrier number the mask is a register too (or left out)",
                            pos[1][0])
    w = Words(tables, tables.op_named[name], opcode)
    if id_reg:
        w.set("W1", "sync_rs", gpr(pos[0]))
    else:
        w.set("W1", "sync_id", number(ops, pos[0], 0, 31, "barrier number"))
    if mask_reg:
        w.set("W1", "mask_rs", gpr(pos[1]))
    elif len(pos) == 2:
        w.set("W1", "mask", number(ops, pos[1], 1, 255, "mask"))
    o = ops.option("scope")
    w.set("W1", "scope", _by_name(tables.table("sync_scope"), o[1].lower() if o else "cta", "scope",
                                  o[0] if o else -1))
    w.set("W1", "nonblk", ops.flag("nonblk"))
    ops.done()
    return w.encode()


def parse_wait(tables: Tables, ops: Operands, sub: str | None, opcode: int) -> list[int]:
    if sub == "mem":
        w = Words(tables, tables.op_named["twait.mem"], opcode)
        ops.need(0, "ld=N, st=N[, shared]")
        for key in ("ld", "st"):
            o = ops.option(key)
            w.set("W1", f"{key}_cnt", number(ops, o, 0, 31, key) if o else 31)
        w.set("W1", "shared", ops.flag("shared"))
    elif sub == "tma":
        w = Words(tables, tables.op_named["twait.tma"], opcode)
        pos = ops.need(1, "group")
        w.set("W1", "group", number(ops, pos[0], 0, 31, "group"))
        w.set("W1", "wait", 0 if ops.flag("commit") else 1)
    else:
        if sub is not None:
            raise SyntaxProblem(f"unknown t_wait form {sub!r} (mem, tma, or units)")
        w = Words(tables, tables.op_named["twait"], opcode)
        bits = tables.table("waitop")
        value = 0
        ops.need(0, "mma, alu, tma or all")
        if ops.flag("all"):
            value = sum(1 << b for b in bits.values())
        for unit, b in bits.items():
            if ops.flag(unit):
                value |= 1 << b
        if value in (0, 1 << bits["tma"]):
            raise SyntaxProblem("twait needs mma or alu (twait.tma waits for a group, 'all' for everything)")
        w.set("W1", "waitop", value)
    ops.done()
    return w.encode()


def parse_mbar(w: Words, ops: Operands, sub: str, index: int) -> None:
    t = w.tables
    w.set("W1", "sub", _by_name(t.table("mbar_sub"), sub, "mbarrier operation", index))
    shapes = {"init": ("rs1", "rs2"), "arrive": ("rd", "rs1"), "arrive_tx": ("rd", "rs1", "rs2"),
              "expect_tx": ("rs1", "rs2"), "try_wait": ("rd", "rs1", "rs2")}
    names = shapes[sub]
    pos = ops.need(len(names), ", ".join(names))
    for name, op in zip(names, pos):
        w.set("W1", name, gpr(op))


def parse_sem(w: Words, ops: Operands, sub: str, index: int) -> None:
    w.set("W1", "sub", _by_name(w.tables.table("sem_sub"), sub, "semaphore operation", index))
    pos = ops.need(2, "index, rs2")
    w.set("W1", "index", number(ops, pos[0], 0, 31, "semaphore"))
    w.set("W1", "rs2", gpr(pos[1]))


def encode(tables: Tables, mnemonic: str, texts: list[str], value: Callable[[str, int], int],
           opcode: int, csr_names: dict[str, int]) -> list[int] | None:
    """The words of one tile operation line, or ``None`` if ``mnemonic`` is not a tile mnemonic."""
    head, _, sub = mnemonic.partition(".")
    ops = Operands(texts, value, frozenset() if head.startswith("tcsr") else None)
    if head in ("tld", "tst"):
        form = tables.op_named.get(mnemonic)
        if form is None:
            return None
        w = Words(tables, form, opcode)
        parse_mem(w, ops, "mem")
    elif head in ("tamo", "tsamo", "tsred"):
        if head == "tamo":
            space, _, op = sub.partition(".")
            form = tables.op_named.get(f"tamo.{space}")
            if form is None or not op:
                return None
            w = Words(tables, form, opcode)
            parse_tatomic(w, ops, op, -1)
        else:
            w = Words(tables, tables.op_named[head], opcode)
            parse_satomic(w, ops, sub, -1)
    elif head == "tma" and sub:
        w = Words(tables, tables.op_named["tma"], opcode)
        parse_tma(w, ops, sub, -1)
    elif head == "tmma" and sub:
        return parse_mma(tables, ops, sub, -1, opcode)
    elif head in ("talu1", "talu2", "talu3") and sub:
        return parse_talu(tables, ops, head, sub, -1, opcode)
    elif head == "tmv" and sub:
        w = Words(tables, tables.op_named["tmv"], opcode)
        parse_move(w, ops, sub, -1)
    elif mnemonic in ("tcsrr", "tcsrw", "tcsrs", "tcsrc", "tcsrwi", "tcsrsi", "tcsrci"):
        w = Words(tables, tables.op_named[mnemonic], opcode)
        parse_csr(w, ops, csr_names)
    elif mnemonic == "tsync":
        return parse_sync(tables, ops, opcode)
    elif head == "twait":
        return parse_wait(tables, ops, sub or None, opcode)
    elif head == "tmbar" and sub:
        w = Words(tables, tables.op_named["tmbar"], opcode)
        parse_mbar(w, ops, sub, -1)
    elif head == "tsem" and sub:
        w = Words(tables, tables.op_named["tsem"], opcode)
        parse_sem(w, ops, sub, -1)
    else:
        return None
    ops.done()
    return w.encode()


# --------------------------------------------------------------------------- rendering
def render(tables: Tables, form: OpForm, words: dict[str, int], csr_by_index: dict[int, str]) -> str | None:
    """The text of a decoded operation, or ``None`` when no spelling fits it."""
    f: dict[str, int] = {}
    for w, layout in form.layouts.items():
        for k, v in layout.decode(words[w]).items():
            f[f"{w}.{k}"] = v
    renderer = _RENDERERS.get(form.kind)
    if renderer is None:
        return None
    try:
        return renderer(tables, form, f, csr_by_index)
    except (KeyError, ValueError, IndexError):        # fields no spelling fits
        return None


def _opts(*items: str | None) -> str:
    return "".join(f", {i}" for i in items if i)


def _off(f: dict[str, int], wide: bool) -> str | None:
    if f["W0.offseten"]:
        return xname(f["W0.lo5"])
    if wide:
        v = f["W0.hi5"] << 5 | f["W0.lo5"]
        v = v - 1024 if v >= 512 else v
    else:
        v = f["W0.lo5"] - 32 if f["W0.lo5"] >= 16 else f["W0.lo5"]
    return str(v) if v else None


def _ts(tables: Tables, code: int) -> str | None:
    n = _name_of(tables.table("tilesize"), code)
    if n is None:
        raise ValueError
    return None if n == "1" else f"ts={n}"


def _vec_ew(tables: Tables, func6: int, direction: str, default: str) -> list[str | None]:
    bit = tables.table("func6_vector_unmasked")["bit"]
    name = _name_of(tables.table("func6_vector")[direction], func6 & 0x1F)
    if name is None:
        raise ValueError
    return [None if name == default else f"ew={name}", None if func6 >> bit & 1 else "v0.t"]


def _flag(f: dict[str, int], key: str, text: str) -> str | None:
    """``text`` when the one-bit field ``key`` is set (a flag operand), else nothing."""
    return text if f.get(key) else None


def _render_mem(tables: Tables, form: OpForm, f: dict[str, int], csrs: dict[int, str]) -> str | None:
    """Tile loads and stores (tile.md 5.1): unit stride, strided, or indexed by a vector
    whose W2 copy must name the same register."""
    mode = form.params["mode"]
    mid = ""
    extra: list[str | None] = []
    if mode == "stride":
        mid = f", {xname(f['W0.rs2'])}"
    elif mode == "index":
        if f["W0.vs2"] != f["W2.reg"] or f["W2.addrctl"]:
            return None
        mid = f", v{f['W2.reg']}"
        extra = _vec_ew(tables, f["W2.func6"], "into", "h")
    off = _off(f, mode == "unit")
    return (f"{form.name} t{f['W1.td']}, ({xname(f['W1.rs1'])}){mid}"
            + _opts(off, _ts(tables, f["W1.tilesize"]), _flag(f, "W0.tmask", "tmask"), *extra))


def _render_tatomic(tables: Tables, form: OpForm, f: dict[str, int], csrs: dict[int, str]) -> str | None:
    """Tile atomics (tile.md 5.2): the operation in the mnemonic, 32-bit elements by default."""
    op = _name_of(tables.table("atomic"), f["W0.memuop"] & 31)
    ew = _name_of(tables.table("vec_size"), f["W1.vec_size"])
    return (f"{form.name}.{op} t{f['W1.td']}, ({xname(f['W1.rs1'])})"
            + _opts(_off(f, True), None if ew == "32" else f"ew={ew}", _flag(f, "W1.rtn", "rtn"),
                    _flag(f, "W0.tmask", "tmask")))


def _render_satomic(tables: Tables, form: OpForm, f: dict[str, int], csrs: dict[int, str]) -> str | None:
    """Scalar atomics and reductions (tile.md 5.2): only CAS has a compare register, the
    result register only where the form returns one; other field mixes have no spelling."""
    op = _name_of(tables.table("atomic"), f["W0.memuop"] & 31)
    if op is None or (op == "cas") != bool(f["W0.cas_en"]) or f["W1.rtn"]:
        return None
    ew = _name_of(tables.table("vec_size"), f["W1.vec_size"])
    head = f"{form.name}.{op} "
    if form.params["result"]:
        head += f"{xname(f['W1.rd'])}, "
    text = head + f"{xname(f['W0.rs2'])}, ({xname(f['W1.rs1'])})"
    if op == "cas":
        text += f", {xname(f['W0.lo5'])}"
    elif not form.params["result"] and f["W0.lo5"]:
        text += f", {f['W0.lo5'] - 32 if f['W0.lo5'] >= 16 else f['W0.lo5']}"
    elif form.params["result"] and f["W0.lo5"]:
        return None
    return text + _opts(None if ew == "32" else f"ew={ew}", _flag(f, "W0.tmask", "tmask"))


def _render_tma(tables: Tables, form: OpForm, f: dict[str, int], csrs: dict[int, str]) -> str | None:
    """TMA copies (tile.md 5.3): global locations and bulk-group completion are the defaults."""
    if f["W0.vs"] != f["W2.reg"] or not f["W0.offseten"] or f["W2.addrctl"]:
        return None
    mode = _name_of(tables.table("tmauop"), f["W1.tmauop"])
    comp = _name_of(tables.table("completion"), f["W0.completion"])
    dst = _name_of(tables.table("dstloc"), f["W1.dstloc"])
    src = _name_of(tables.table("srcloc"), f["W1.srcloc"])
    if None in (mode, comp, dst, src):
        return None
    obj = f["W0.completeobj"]
    completion = {"bulk": f"group={obj}" if obj else None, "mbar": f"mbar={xname(obj)}",
                  "sem": f"sem={obj}"}[comp or "bulk"]
    return (f"tma.{mode} {xname(f['W1.dst'])}, {xname(f['W1.src'])}, v{f['W2.reg']}"
            + _opts(f"dim={f['W1.dim'] + 1}" if f["W1.dim"] else None, _flag(f, "W1.dsttm", "dsttm"),
                    _flag(f, "W1.srctm", "srctm"), None if dst == "global" else f"dst={dst}",
                    None if src == "global" else f"src={src}", completion,
                    _flag(f, "W0.multicast", "multicast"), _flag(f, "W0.tmask", "tmask"),
                    *_vec_ew(tables, f["W2.func6"], "into", "w")))


def _render_mma(tables: Tables, form: OpForm, f: dict[str, int], csrs: dict[int, str]) -> str | None:
    """Matrix multiply (tile.md 5.5): A and B are tiles, or a shared-memory address when
    the form has the GPR field instead."""
    dtype = _name_of(tables.table("mmauop"), f["W0.mmauop"])
    if dtype is None:
        return None
    a = f"({xname(f['W1.rs1'])})" if "W1.rs1" in f else f"t{f['W1.ts1']}"
    b = f"({xname(f['W0.rs2'])})" if "W0.rs2" in f else f"t{f['W0.ts2']}"
    return (f"tmma.{dtype} t{f['W1.td']}, {a}, {b}"
            + _opts(_ts(tables, f["W0.tilesize"]), _flag(f, "W0.multitile", "multitile"),
                    _flag(f, "W1.transmata", "ta"), _flag(f, "W0.transmatb", "tb"),
                    _flag(f, "W1.neg1", "neg1"), _flag(f, "W0.negd", "negd"),
                    _flag(f, "W1.reuse1", "reuse1"), _flag(f, "W0.reuse2", "reuse2"),
                    _flag(f, "W1.reused", "reused")))


def _render_csr(tables: Tables, form: OpForm, f: dict[str, int], csrs: dict[int, str]) -> str | None:
    """Tile CSR access (tile.md 5.4): CSRs by name where known; rd_en must agree with rd."""
    index = f["W1.csr"]
    csr = csrs.get(index, f"{index:#x}")
    if form.name == "tcsrr":
        return f"tcsrr {xname(f['W1.rd'])}, {csr}"
    if bool(f["W1.rd_en"]) != bool(f["W1.rd"]):
        return None
    src = str(f["W1.rs1"]) if form.params.get("imm") else xname(f["W1.rs1"])
    return f"{form.name} {xname(f['W1.rd'])}, {csr}, {src}"


def _render_sync(tables: Tables, form: OpForm, f: dict[str, int], csrs: dict[int, str]) -> str | None:
    """Barriers (tile.md 5.8): id and thread mask from a register or an immediate, CTA scope
    by default."""
    scope = _name_of(tables.table("sync_scope"), f["W1.scope"])
    if scope is None:
        return None
    first = xname(f["W1.sync_rs"]) if "W1.sync_rs" in f else str(f["W1.sync_id"])
    mask = (xname(f["W1.mask_rs"]) if "W1.mask_rs" in f
            else f"{f['W1.mask']:#x}" if "W1.mask" in f else None)
    return "tsync " + first + _opts(mask, None if scope == "cta" else f"scope={scope}",
                                    _flag(f, "W1.nonblk", "nonblk"))


def _render_wait(tables: Tables, form: OpForm, f: dict[str, int], csrs: dict[int, str]) -> str | None:
    """Waits (tile.md 5.8): on memory counters (31 = do not wait), a TMA group, or units."""
    if form.params["form"] == "memory":
        ld, st = f["W1.ld_cnt"], f["W1.st_cnt"]
        items = [None if ld == 31 else f"ld={ld}", None if st == 31 else f"st={st}",
                 _flag(f, "W1.shared", "shared")]
        return "twait.mem " + ", ".join(i for i in items if i) if any(items) else "twait.mem"
    if form.params["form"] == "tma":
        return f"twait.tma {f['W1.group']}" + _opts(None if f["W1.wait"] else "commit")
    bits = tables.table("waitop")
    value = f["W1.waitop"]
    if value == sum(1 << b for b in bits.values()):
        return "twait all"
    return "twait " + ", ".join(u for u, b in bits.items() if value >> b & 1)


def _render_mbar(tables: Tables, form: OpForm, f: dict[str, int], csrs: dict[int, str]) -> str | None:
    """mbarrier operations (tile.md Appendix B): each names only the registers it uses, and
    the unused ones must be zero."""
    sub = _name_of(tables.table("mbar_sub"), f["W1.sub"])
    shapes = {"init": ("rs1", "rs2"), "arrive": ("rd", "rs1"), "arrive_tx": ("rd", "rs1", "rs2"),
              "expect_tx": ("rs1", "rs2"), "try_wait": ("rd", "rs1", "rs2")}
    if sub is None:
        return None
    used = shapes[sub]
    if any(f[f"W1.{r}"] for r in ("rd", "rs1", "rs2") if r not in used):
        return None
    return f"tmbar.{sub} " + ", ".join(xname(f[f"W1.{r}"]) for r in used)


def _render_sem(tables: Tables, form: OpForm, f: dict[str, int], csrs: dict[int, str]) -> str | None:
    """Semaphore operations (tile.md Appendix B): index and value register."""
    sub = _name_of(tables.table("sem_sub"), f["W1.sub"])
    return None if sub is None else f"tsem.{sub} {f['W1.index']}, {xname(f['W1.rs2'])}"


def _render_talu(tables: Tables, form: OpForm, f: dict[str, int], csrs: dict[int, str]) -> str | None:
    """TALU (tile.md 5.7): the operation code split over W1 and W0; a binary's second source
    is a tile, or a vector / FPR whose register W2 must repeat."""
    lo_bits = tables.table("talu_op_bits")["lo_bits"]
    pform = form.params["form"]
    if pform == "ternary":
        name = _name_of(tables.table("talu_ternary"), f["W1.op_hi"])
    else:
        code = f["W1.op_hi"] << lo_bits | f["W0.op_lo"]
        name = _name_of(tables.table("talu_unary" if pform == "unary" else "talu_binary"), code)
    if name is None:
        return None
    head = {"unary": "talu1", "binary": "talu2", "ternary": "talu3"}[pform]
    text = f"{head}.{name} t{f['W1.td']}, t{f['W1.ts1']}"
    extra: list[str | None] = []
    if "W2.reg" in f:
        vector = bool(f["W2.vec_en"])
        info = f["W0.vs2"] if "W0.vs2" in f else f["W0.frs2"]
        want = tables.code("src_type", "vector" if vector else "scalar")
        if info != f["W2.reg"] or f["W0.src_type"] != want or f["W2.addrctl"]:
            return None
        text += f", {'v' if vector else 'f'}{f['W2.reg']}"
        extra = _vec_ew(tables, f["W2.func6"], "into", "b")
    elif pform == "ternary":
        text += f", t{f['W0.ts2']}"
    if pform == "ternary":
        text += f", t{f['W0.ts3']}"
    return text + _opts(_flag(f, "W0.neg1", "neg1"), _flag(f, "W0.neg2", "neg2"),
                        _flag(f, "W0.reuse1", "reuse1"), _flag(f, "W0.reuse2", "reuse2"),
                        _flag(f, "W0.tmask", "tmask"), *extra)


def _render_move(tables: Tables, form: OpForm, f: dict[str, int], csrs: dict[int, str]) -> str | None:
    """Tile moves (tile.md 5.6): the mvop names direction and CPU register file; the
    sub-mnemonic comes from the same _MOVES table the assembler uses."""
    kind = _name_of(tables.table("mvop"), f["W2.mvop"])
    if kind is None or f["W2.addrctl"]:
        return None
    sub = next(k for k, v in _MOVES.items() if v[0] == kind)
    _, first, second = _MOVES[sub]
    side, direction = kind.split(".")
    reg = f["W2.reg"]
    cpu = {"v": f"v{reg}", "x": xname(reg), "f": f"f{reg}"}[second if first == "t" else first]
    t = f"t{f['W0.tile']}"
    ops = f"{t}, {cpu}" if first == "t" else f"{cpu}, {t}"
    index = xname(f["W0.index"]) if f["W0.rs2_en"] else str(f["W0.index"])
    table = {"vec": "func6_vector", "gpr": "func6_gpr", "fpr": "func6_fpr"}[side]
    func6 = f["W2.func6"]
    extra: list[str | None]
    if side == "vec":
        bit = tables.table("func6_vector_unmasked")["bit"]
        name = _name_of(tables.table(table)[direction], func6 & 0x1F)
        extra = [None if name == "b" else f"ew={name}", None if func6 >> bit & 1 else "v0.t"]
    else:
        name = _name_of(tables.table(table)[direction], func6)
        extra = [None if name == "d" else f"ew={name}"]
    if name is None:
        return None
    return f"tmv.{sub} {ops}, {index}" + _opts(*extra, "bc" if f["W2.bc"] else None)


#: Operation-form kind (tables) → the spelling of its operands; a kind not listed has none
_RENDERERS: dict[str, Callable[[Tables, OpForm, dict[str, int], dict[int, str]], str | None]] = {
    "mem": _render_mem, "tatomic": _render_tatomic, "satomic": _render_satomic, "tma": _render_tma,
    "mma": _render_mma, "talu": _render_talu, "move": _render_move, "csr": _render_csr,
    "sync": _render_sync, "wait": _render_wait, "mbar": _render_mbar, "sem": _render_sem,
}
