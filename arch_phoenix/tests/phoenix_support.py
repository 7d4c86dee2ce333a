"""Helpers shared by the arch_phoenix tests; the topic modules (``int_support`` …) build on them.

* test architectures: :func:`make_arch` assembles one from the plugin's parts (so a
  topic can test its semantics or table on its own); :data:`DIRECT_ARCH` has no
  encodings, for tests that call semantic functions directly; :data:`TABLE_ARCH` is
  the full encoding table with refinement and assembler, for end-to-end tests;
* instruction words in the spec's bit layouts (section 2.3), so the sub-fields the
  semantics read from the word (N, F, RM, Sz, Mask, Cnd, Lk, Op2 …) are the ones the
  real decoder would see;
* decoded-like instructions (:func:`ins`) and direct calls (:func:`run`);
* small programs run from DRAM (:func:`run_words`, :func:`run_image`);
* trap helpers.

The module name is prefixed so it cannot clash with another plugin's test helpers
(pytest puts every test directory on ``sys.path``).
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

import pytest

from tessera.control import Trap
from tessera.isa import Architecture, Encoder
from tessera.machine import Machine
from tessera_phoenix import exceptions
from tessera_phoenix.asm import PhoenixAssembler
from tessera_phoenix.board import build
from tessera_phoenix.encoding import ENCODINGS, refine
from tessera_phoenix.fields import FIELDS
from tessera_phoenix.registers import GPR, REG
from tessera_phoenix.semantics import load_all
from tessera_phoenix.timing import TIMING

OPS = load_all()
M32 = 0xFFFF_FFFF
PC = 0x1000          # default address of decoded-like instructions and of test programs


# ---------------------------------------------------------------------------- architectures


def make_arch(name: str, encodings: tuple[Any, ...] = (), **overrides: Any) -> Architecture:
    """An rfPhoenix architecture record with ``encodings`` and the plugin's machine parts."""
    kw: dict[str, Any] = dict(build=build, timing=TIMING, take_trap=exceptions.take_trap,
                              illegal=exceptions.illegal, memory_trap=exceptions.memory_trap,
                              reset_pc=0xFFFD0000, quantum=1, solo_quantum=1024)
    kw.update(overrides)
    return Architecture(name, 48, (GPR, REG), FIELDS, encodings, **kw)


DIRECT_ARCH = make_arch("phoenix-direct-test")
TABLE_ARCH = make_arch("phoenix-table-test", ENCODINGS, refine=refine, assembler=PhoenixAssembler)
TABLE_ENC = Encoder(TABLE_ARCH)


def machine(*, arch: Architecture = DIRECT_ARCH, **config: Any) -> Machine:
    """A machine with 1 MiB of DRAM (PMA on unless ``pma=False``)."""
    return Machine(arch, host=None, config={"dram": 1 << 20, **config})


def thread(**config: Any) -> Any:
    return machine(**config).agents[0]


def v(n: int) -> int:
    """The 7-bit specifier of vector register ``n``."""
    return 0x40 | n


def vset(t: Any, n: int, elements: list[int], w: int = 32) -> None:
    """Set vector register ``n`` from W-bit elements (missing elements = 0, extra ones dropped)."""
    bits = 0
    for i, x in enumerate(elements):
        bits |= (x & ((1 << w) - 1)) << (w * i)
    for lane in range(t.lanes):
        t.vr[n][lane] = (bits >> (32 * lane)) & M32


def vget(t: Any, n: int, w: int = 32) -> list[int]:
    """Vector register ``n`` as W-bit elements, element 0 first."""
    bits = 0
    for lane in range(t.lanes):
        bits |= int(t.vr[n][lane]) << (32 * lane)
    return [(bits >> (w * i)) & ((1 << w) - 1) for i in range(t.lanes * 32 // w)]


# ---------------------------------------------------------------------------- words


def r2(func: int, rt: int, ra: int, rb: int, *, sz: int = 2, mask: int = 0, op2: int = 0,
       rm: int = 0, f: int = 0, opcode: int = 2) -> int:
    """R2 layout: Mask 47:42, Sz 41:39, Op2 38:37, RM 36:34, F 33, Func 32:27, Rb, Ra, Rt."""
    return (mask << 42 | sz << 39 | op2 << 37 | rm << 34 | f << 33 | (func & 63) << 27
            | (rb & 127) << 20 | (ra & 127) << 13 | (rt & 127) << 6 | opcode)


def r1(func1: int, rt: int = 0, ra: int = 0, **kw: Any) -> int:
    """R1 layout: R2 with Func = 1 and Func1 in bits 25:20."""
    return r2(1, rt, ra, func1 & 63, **kw)


def r3(opcode: int, rt: int, ra: int, rb: int, rc: int, *, sz: int = 2, mask: int = 0,
       rm: int = 0) -> int:
    """R3 layout (FMA family): Rc in bits 33:27."""
    return r2(0, rt, ra, rb, sz=sz, mask=mask, rm=rm, opcode=opcode) | (rc & 127) << 27


def ri(opcode: int, rt: int, ra: int, imm: int, *, sz: int = 2, mask: int = 0) -> int:
    """RI / LS layout: Imm19 (or Disp19) in bits 38:20."""
    return mask << 42 | sz << 39 | (imm & 0x7FFFF) << 20 | (ra & 127) << 13 | (rt & 127) << 6 | opcode


def cmp_word(n: int, rt: int, ra: int, rb: int, *, opcode: int = 15, **kw: Any) -> int:
    """CMP (15) / FCMP (31): R2 layout, bits 32:31 = 0, N in 30:27."""
    return r2(n & 15, rt, ra, rb, opcode=opcode, **kw)


def cmpi_word(n: int, rt: int, ra: int, imm13: int = 0, *, sz: int = 2, mask: int = 0,
              opcode: int = 14) -> int:
    """CMPI (14) / FCMPI (30): N in bits 36:33, Imm13 in 32:20."""
    return (mask << 42 | sz << 39 | (n & 15) << 33 | (imm13 & 0x1FFF) << 20 | (ra & 127) << 13
            | (rt & 127) << 6 | opcode)


def bcc_word(cnd: int, ra: int, rb: int, disp: int, *, sz: int = 2, opcode: int = 28) -> int:
    """Bcc (28) / FBcc (29): Cnd 47:45, Sz, Disp17 38:22, Ra 18:13, Rb (or BBS bit) 11:6."""
    return cnd << 45 | sz << 39 | (disp & 0x1FFFF) << 22 | (ra & 63) << 13 | (rb & 63) << 6 | opcode


def j_word(opcode: int, target: int, lk: int = 0) -> int:
    """JMP/CALL (24) / BRA/BSR (25): Target40 in bits 47:8, Lk in 7:6."""
    return (target & ((1 << 40) - 1)) << 8 | lk << 6 | opcode


def csr_word(op: int, rt: int, ra: int, number: int) -> int:
    """CSR format: CsrOp 37:36 (0 RD, 1 RW, 2 RC, 3 RS), CSR number 33:20."""
    return 2 << 39 | op << 36 | (number & 0x3FFF) << 20 | (ra & 127) << 13 | (rt & 127) << 6 | 7


def image(words: list[int]) -> bytes:
    """Instruction words as the bytes in memory (6 bytes each, little-endian)."""
    return b"".join(w.to_bytes(6, "little") for w in words)


# ---------------------------------------------------------------------------- direct calls


def ins(word: int, value: int | None = None, address: int = PC, **fields: Any) -> Any:
    """A decoded-like instruction: the operand attributes of the encoding table's contract.

    Register specifiers come straight from ``word`` (7-bit Rt/Ra/Rb/Rc, 6-bit branch
    operands); ``fields`` add or override attributes (``csr``, ``imm`` …).
    """
    base = dict(word=word, address=address, next=address + 6, value=value,
                rt=(word >> 6) & 127, ra=(word >> 13) & 127, rb=(word >> 20) & 127,
                rc=(word >> 27) & 127, bra=(word >> 13) & 63, brb=(word >> 6) & 63)
    base.update(fields)
    return types.SimpleNamespace(**base)


def run(t: Any, name: str, word: int, value: int | None = None, address: int = PC,
        **fields: Any) -> Any:
    """Call the semantic function ``name`` on ``t`` with a decoded-like ``word``."""
    return OPS[name](t, ins(word, value, address, **fields))


def trap_of(fn: Callable[..., Any], *args: Any) -> Trap:
    """The :class:`Trap` that ``fn(*args)`` raises (fails the test if none)."""
    with pytest.raises(Trap) as info:
        fn(*args)
    return info.value


def skipped_when_lenient(t: Any, call: Callable[[], Any], pc: int = PC) -> None:
    """``call`` raises the undefined-instruction trap, which lenient mode steps over.

    Checks what ``take_trap`` does with it on ``t`` (created with ``lenient=True``):
    the thread continues at ``pc + 6`` and no exception is entered.
    """
    trap = trap_of(call)
    assert trap.info.get("undefined")
    t.pc = pc
    depth = t.depth
    assert exceptions.take_trap(t, trap)
    assert (t.pc, t.depth) == (pc + 6, depth)


# ---------------------------------------------------------------------------- small programs


def encode(mnemonic: str, **ops: int) -> int:
    """Encode with the first row of ``mnemonic`` taking exactly these operands.

    ``sz`` (.t), ``mask`` (none) and ``rm`` (round to nearest even) default when the
    row has them.
    """
    for e in ENCODINGS:
        if e.mnemonic != mnemonic:
            continue
        full = dict(ops)
        for name, default in (("sz", 2), ("mask", 0), ("rm", 0)):
            if name in e.operand_names:
                full.setdefault(name, default)
        if set(full) == set(e.operand_names):
            return TABLE_ENC.encode(e, full)
    raise LookupError(f"no {mnemonic} row with operands {sorted(ops)}")


def load_image(data: bytes, base: int = PC, **config: Any) -> tuple[Machine, Any]:
    """A :data:`TABLE_ARCH` machine (PMA off) with ``data`` at ``base`` in DRAM and thread 0
    about to run it; (machine, thread 0)."""
    m = machine(arch=TABLE_ARCH, **{"pma": False, **config})
    m.space.write_bytes(base, data)
    t = m.agents[0]
    t.pc = base
    return m, t


def run_image(data: bytes, base: int = PC, steps: int = 10_000, **config: Any) -> tuple[Machine, Any]:
    """:func:`load_image`, then run up to ``steps`` steps (running out is not an error)."""
    m, t = load_image(data, base, **config)
    m.run(max_steps=steps, raise_on_budget=False)
    return m, t


def run_words(words: list[int], base: int = PC, steps: int = 10_000, **config: Any) -> tuple[Machine, Any]:
    """:func:`run_image` for instruction words."""
    return run_image(image(words), base, steps, **config)
