"""What the Tensix backend's automatic stall logic sees of one decoded instruction.

Some instructions make their unit refuse certain instructions on the cycles right after
the one it accepted them in; a thread that presents a refused instruction is stalled by
the hardware, with no instruction of software's in between.  The pages say which
(Wormhole B0 and Blackhole A0 ``TensixTile/TensixCoprocessor``; Blackhole has no pages
of its own for the matrix unit's moves and shares Wormhole's, as arch_tensix does):

* **SFPSWAP** (SFPSWAP.md "Instruction scheduling", both chips): on the next cycle the
  vector unit accepts only SFPNOP (an SFPSWAP and an SFPNOP take two cycles, an SFPSWAP
  and anything else three).
* **SFPSHFT2**'s shuffles, Mod1 2, 3 and 4 (SFPSHFT2.md "Instruction scheduling"):
  Blackhole as SFPSWAP; Wormhole leaves the next cycle to software (a rule the
  functional model checks), so nothing is charged there.
* **The MAD family** on Blackhole — SFPMAD, SFPADD, SFPMUL, SFPADDI, SFPMULI, SFPLUT,
  SFPLUTFP32, SFPMUL24 (SFPMAD.md, and the others' pages, which refer to it): its result
  takes two cycles, and a vector-unit instruction on the next cycle that *the stall
  logic sees* read an LReg it writes is stalled one cycle.  The stall logic's view is
  the instruction's reads as its page's functional model gives them, except where the
  pages document it differs: an indirect VA (``SFPMAD_MOD1_INDIRECT_VA``) reads every
  LReg and an indirect VD writes every LReg; SFPLUTFP32 is judged by ``Mod1Mirror``
  (SFPLUTFP32.md); SFPSTOCHRND is seen to read VB whatever its mode (the false
  dependency SFPSTOCHRND_*.md work around with VB = VC); and the bugs SFPMAD.md lists
  (lines 76-84): SFPAND / SFPOR are seen to read VD, never VB; SFPIADD and SFPSHFT not
  to read VD; SFPCONFIG not to read LReg[0]; SFPSWAP other than ``SFPSWAP_MOD1_SWAP``
  to read nothing (its first-cycle reads go unseen); SFPSHFT2's shuffles to read
  nothing, and its shifts (Mod1 5, 6) to read VD instead of VB.  Wormhole's MAD family
  leaves the next cycle to software (its pages): not charged.
* **The matrix unit's moves** (Wormhole B0 pages): after MOVD2A or MOVB2A only MOVD2A
  and MOVB2A are accepted on the next cycle (MOVD2A.md, MOVB2A.md); after MOVD2B only
  MOVD2B for the next three (MOVD2B.md); after MOVA2D or MOVB2D, for three cycles, none
  of the instructions those pages list that read Dest, wherever they read (MOVA2D.md,
  MOVB2D.md); after SHIFTXB no matrix-unit instruction on the next cycle (SHIFTXB.md).

LRegs compare by their 4-bit index as the instruction names them (a write to a constant
register, which changes nothing, still counts: the pages do not say the stall logic
knows better).  :func:`view` is a pure function of the chip, the mnemonic and the
decoded fields, computed once per decoded instruction; the timing model
(:meth:`tessera_cycles.tensix_model.TileTimes.tensix`) applies it.
"""

from __future__ import annotations

from typing import Any, NamedTuple

__all__ = ["Bar", "View", "view"]

EMPTY: frozenset[int] = frozenset()
#: "every LReg" (SFPMAD.md: an indirect VA / VD)
ALL = frozenset(range(16))


class Bar(NamedTuple):
    """What a unit refuses on the ``cycles`` cycles after the one it accepted an instruction in."""

    cycles: int
    #: only these mnemonics are accepted then (None: any not refused otherwise)
    only: frozenset[str] | None = None
    #: these are refused
    barred: frozenset[str] = frozenset()
    #: an instruction the stall logic sees read one of these LRegs is refused
    lregs: frozenset[int] = EMPTY

    def refuses(self, mnemonic: str, reads: frozenset[int]) -> bool:
        if self.only is not None and mnemonic not in self.only:
            return True
        return mnemonic in self.barred or bool(self.lregs & reads)


class View(NamedTuple):
    """An instruction as the stall logic sees it: the LRegs it reads, what it refuses after it."""

    reads: frozenset[int]
    bar: Bar | None


NOP_ONLY = Bar(1, only=frozenset({"sfpnop"}))
#: instructions MOVA2D.md / MOVB2D.md stall for three cycles after them
DEST_READERS = frozenset(f"tt{n}" for n in (
    "movd2a", "movd2b", "elwmul", "mvmul", "dotpv", "gmpool", "gapool", "mfconv3s1", "conv3s1", "mpool3s1",
    "apool3s1", "conv3s2", "mpool3s2", "apool3s2"))
MATRIX_BARS = {
    "ttmovd2a": Bar(1, only=frozenset({"ttmovd2a", "ttmovb2a"})),
    "ttmovb2a": Bar(1, only=frozenset({"ttmovd2a", "ttmovb2a"})),
    "ttmovd2b": Bar(3, only=frozenset({"ttmovd2b"})),
    "ttmova2d": Bar(3, barred=DEST_READERS),
    "ttmovb2d": Bar(3, barred=DEST_READERS),
    "ttshiftxb": Bar(1, only=frozenset()),
}
#: SFPSHFT2 Mod1 values whose next cycle takes only SFPNOP on Blackhole (SFPSHFT2.md)
SHUFFLES = (2, 3, 4)
#: Blackhole's MAD sub-unit instructions, and the field holding their VD
MAD_FAMILY = {"sfpmad": "lreg_dest", "sfpadd": "lreg_dest", "sfpmul": "lreg_dest", "sfpmul24": "lreg_dest",
              "sfpaddi": "lreg_dest", "sfpmuli": "lreg_dest", "sfplut": "lreg_ind", "sfplutfp32": "lreg_dest"}


def view(chip: str, mnemonic: str, ins: Any) -> View | None:
    """``ins`` (``mnemonic``, of chip ``"bh"`` or ``"wh"``) as the stall logic sees it, or
    None when it neither reads an LReg the logic looks at nor makes it refuse anything."""
    bar = MATRIX_BARS.get(mnemonic)
    if bar is not None:
        return View(EMPTY, bar)
    if not mnemonic.startswith("sfp"):
        return None
    if chip != "bh":                        # Wormhole: SFPSWAP's is the vector unit's only one
        return View(EMPTY, NOP_ONLY) if mnemonic == "sfpswap" else None
    reads = _reads(mnemonic, ins)
    if mnemonic == "sfpswap" or (mnemonic == "sfpshft2" and _f(ins, "instr_mod1") in SHUFFLES):
        bar = NOP_ONLY
    elif mnemonic in MAD_FAMILY:
        bar = Bar(1, lregs=_mad_writes(mnemonic, ins))
    if bar is None and not reads:
        return None
    return View(reads, bar)


def _f(ins: Any, name: str) -> int:
    return int(getattr(ins, name, 0) or 0)


def _mad_writes(mnemonic: str, ins: Any) -> frozenset[int]:
    """What the stall logic takes a MAD-family instruction to write (SFPMAD.md; SFPLUT's
    indirect VD is Mod0 bit 3, SFPLUTFP32's is ``Mod1Mirror``'s, SFPLUTFP32.md)."""
    mod = _f(ins, "instr_mod0") if mnemonic == "sfplut" else \
        _f(ins, "mod1_mirror") if mnemonic == "sfplutfp32" else _f(ins, "instr_mod1")
    return ALL if mod & 8 else frozenset({_f(ins, MAD_FAMILY[mnemonic])})


def _reads(m: str, ins: Any) -> frozenset[int]:
    """The LRegs the Blackhole stall logic sees ``ins`` read (see the module docstring)."""
    vc_field = getattr(ins, "lreg_c", None)
    vc = int(vc_field) if vc_field is not None else _f(ins, "lreg_src_c")
    vd = _f(ins, "lreg_dest")
    mod = _f(ins, "instr_mod1")
    out: set[int]
    if m in ("sfpmad", "sfpadd", "sfpmul", "sfpmul24"):
        if mod & 4:                                    # INDIRECT_VA
            return ALL
        out = {_f(ins, "lreg_src_a"), _f(ins, "lreg_src_b"), vc} | ({7} if mod & 8 else set())
    elif m in ("sfpaddi", "sfpmuli"):
        out = {vd, 7} if mod & 8 else {vd}
    elif m == "sfplut":
        out = {0, 1, 2, 3, 7} if _f(ins, "instr_mod0") & 8 else {0, 1, 2, 3}
    elif m == "sfplutfp32":
        return ALL if _f(ins, "mod1_mirror") & 8 else ALL - {7}
    elif m in ("sfpand", "sfpor", "sfpxor", "sfpgt", "sfple"):   # AND/OR: USE_VB unseen (the bug)
        out = {vc, vd}
    elif m in ("sfpnot", "sfpabs", "sfplz", "sfpdivp2", "sfpexexp", "sfpexman", "sfpcast", "sfpiadd"):
        out = {vc}                                     # SFPIADD: its VD read unseen (the bug)
    elif m == "sfpshft":                               # VD read unseen (the bug): VC unless an immediate alone
        out = set() if mod & 1 and not mod & 4 else {vc}
    elif m in ("sfpsetexp", "sfpsetman", "sfpsetsgn"):
        out = {vc} if mod & 1 else {vc, vd}
    elif m == "sfpmov":
        out = set() if mod & 8 else {vc}
    elif m == "sfpsetcc":
        out = set() if mod & 9 else {vc}
    elif m == "sfparecip":
        out = {vc, _f(ins, "lreg_src_b")} if mod == 1 else {vc}
    elif m == "sfpstochrnd":
        out = {vc, _f(ins, "lreg_src_b")}
    elif m == "sfpswap":
        out = {vc, vd} if mod == 0 else set()
    elif m == "sfpshft2":
        out = {1, 2, 3} if mod == 0 else {0, 1, 2, 3} if mod == 1 else {vc, vd} if mod == 5 else \
            {vd} if mod == 6 else set()
    elif m == "sfpstore":
        out = {_f(ins, "lreg_ind")}
    elif m == "sfpload":                               # LO16_ONLY / HI16_ONLY keep half of VD
        out = {_f(ins, "lreg_ind")} if _f(ins, "instr_mod0") in (14, 15) else set()
    elif m == "sfploadi":                              # UPPER / LOWER keep half of VD
        out = {_f(ins, "lreg_ind")} if _f(ins, "instr_mod0") in (8, 10) else set()
    elif m == "sfptransp":
        out = set(range(8))
    else:                                              # SFPCONFIG (the bug), SFPNOP, the flag stack …
        return EMPTY
    return frozenset(out)
