"""Loads, stores, reservations and cache commands, scalar and vector (spec 4.8, 5.1).

Every access goes through the thread's address view (``thread.space``, a
:class:`~tessera_phoenix.view.ThreadView`), which translates, checks the PMA and
turns bus errors into the architecture's traps; effective addresses wrap modulo
2^32.  Exceptions are precise (spec 1.7): loads read everything before writing a
register, and stores check every byte they will write before writing any, so a
faulting instruction leaves registers and memory unchanged.

Access shapes:

* scalar — Sz bytes (.b 1, .w 2, .t 4; .o/.h act as .t because registers are
  32 bits [PROPOSAL]); loads sign- or zero-extend; unaligned is legal.  An access
  that crosses a 16 KiB page (or wraps past 2^32) is split into bytes so each
  byte is translated on its own page.
* vector — one 32-bit transfer per lane, lanes in order 0..NLANES-1, lanes whose
  mask bit is 0 are not accessed (an all-zero mask is a no-op).  Lane i's address
  is ``A_i + B_i`` where A is Ra (scalar) or Va[i], and B is the displacement, Rb
  or Vb[i]; with scalar A and B it is the contiguous block ``A + B + 4i``.
  A scalar Rt/Rs with a vector address: loads read lane 0's address only (a scalar
  destination receives element 0), stores broadcast Rs to every enabled lane.
"""

from __future__ import annotations

from typing import Any

from tessera.control import Trap
from tessera_phoenix import causes, debug, exceptions
from tessera_phoenix.semantics import op
from tessera_phoenix.semantics.lanes import T_BIT, mask_of, sz_of
from tessera_phoenix.view import READ, WRITE

MASK32 = 0xFFFF_FFFF
#: Sz → bytes for a scalar register (octa and hexi act as tetra)
SIZES = {0: 1, 1: 2, 2: 4, 3: 4, 4: 4}
#: smallest translation unit (TLB pages are 16 KiB); accesses crossing it are split
PAGE = 1 << 14
#: reservation granule (spec C28)
GRANULE = 64


def _size(ins: Any) -> int:
    """Bytes for the Sz field; the reserved codes 5..7 are undefined instructions."""
    size = SIZES.get(sz_of(ins))
    if size is None:
        raise exceptions.undefined(ins)
    return size


# ---------------------------------------------------------------------------- single accesses


def _splits(va: int, size: int) -> bool:
    return (va & (PAGE - 1)) + size > PAGE


def _watch(thread: Any, va: int, is_write: bool) -> None:
    """Data address breakpoints (DBG 33) fire before the access; free while none is enabled."""
    if thread.shared.dbcr & 0xF:
        debug.check_data(thread, va, is_write)


def read(thread: Any, va: int, size: int) -> int:
    """Read ``size`` bytes little-endian at effective address ``va`` (may be unaligned)."""
    space = thread.space
    va &= MASK32
    _watch(thread, va, False)
    if not _splits(va, size):
        return space.read(va, size)
    value = 0
    for k in range(size):
        value |= space.read((va + k) & MASK32, 1) << (8 * k)
    return value


def check_write(thread: Any, va: int, size: int) -> None:
    """Raise the trap a write of ``size`` bytes at ``va`` would raise, writing nothing.

    Translation and PMA come from the view; the physical range must then be one
    writable region (the view would report anything else as a data bus error).
    """
    space = thread.space
    va &= MASK32
    _watch(thread, va, True)
    pieces = [(va, size)] if not _splits(va, size) else [((va + k) & MASK32, 1) for k in range(size)]
    for addr, n in pieces:
        pa = space.translate(addr, WRITE)
        region = space.phys.region_at(pa)
        if region is None or pa + n > region.end or not region.writable:
            raise Trap(causes.DBE, addr, name="data bus error")


def write(thread: Any, va: int, size: int, value: int) -> None:
    """Write the low ``size`` bytes of ``value`` at ``va``; all-or-nothing."""
    space = thread.space
    va &= MASK32
    if not _splits(va, size):
        _watch(thread, va, True)
        space.write(va, size, value)  # one physical access: faults before writing
        return
    check_write(thread, va, size)
    for k in range(size):
        space.write((va + k) & MASK32, 1, value >> (8 * k))


def _sext(value: int, size: int) -> int:
    bits = 8 * size
    return value - (1 << bits) if value >> (bits - 1) else value


# ---------------------------------------------------------------------------- address plans


def _lane_addresses(thread: Any, ins: Any, a_spec: int, b_spec: int | None, disp: int) -> list[int]:
    """Per-lane effective addresses A_i + B_i (B = ``disp`` when ``b_spec`` is None)."""
    pc = ins.address
    n = thread.lanes
    if a_spec & T_BIT:
        a = [int(x) for x in thread.vr[a_spec & 63]]
    else:
        a = [thread.rd(a_spec & 63, pc)] * n
    if b_spec is None:
        b = [disp] * n
    elif b_spec & T_BIT:
        b = [int(x) for x in thread.vr[b_spec & 63]]
    else:
        b = [thread.rd(b_spec & 63, pc)] * n
    if not (a_spec & T_BIT or (b_spec is not None and b_spec & T_BIT)):
        base = a[0] + b[0]
        return [(base + 4 * i) & MASK32 for i in range(n)]  # contiguous block
    return [(x + y) & MASK32 for x, y in zip(a, b)]


def _enabled(thread: Any, ins: Any) -> list[int]:
    """Lane numbers the Mask field enables, in order."""
    bits = thread.lane_mask(mask_of(ins), ins.address)
    return [i for i in range(thread.lanes) if (bits >> i) & 1]


def _is_vector(ins: Any, a_spec: int, b_spec: int | None) -> bool:
    return bool((ins.rt | a_spec | (b_spec or 0)) & T_BIT)


def _scalar_ea(thread: Any, ins: Any, a_spec: int, b_spec: int | None, disp: int) -> int:
    """Ra + (``disp``, or Rb when ``b_spec`` is given) for an all-scalar access."""
    pc = ins.address
    b = disp if b_spec is None else thread.rd(b_spec, pc)
    return (thread.rd(a_spec, pc) + b) & MASK32


# ---------------------------------------------------------------------------- load / store bodies


def _load(thread: Any, ins: Any, a_spec: int, b_spec: int | None, disp: int, signed: bool) -> None:
    if not _is_vector(ins, a_spec, b_spec):
        ea = _scalar_ea(thread, ins, a_spec, b_spec, disp)
    else:
        addrs = _lane_addresses(thread, ins, a_spec, b_spec, disp)
        if ins.rt & T_BIT:
            loaded = [(i, read(thread, addrs[i], 4)) for i in _enabled(thread, ins)]
            reg = thread.vr[ins.rt & 63]
            for i, value in loaded:
                reg[i] = value
            return None
        ea = addrs[0]  # scalar destination: element 0's address, Sz honoured
    size = _size(ins)
    value = read(thread, ea, size)
    thread.wr(ins.rt, _sext(value, size) if signed else value)
    return None


def _store(thread: Any, ins: Any, a_spec: int, b_spec: int | None, disp: int) -> None:
    pc = ins.address
    if not _is_vector(ins, a_spec, b_spec):
        size = _size(ins)
        write(thread, _scalar_ea(thread, ins, a_spec, b_spec, disp), size, thread.rd(ins.rt, pc))
        return None
    addrs = _lane_addresses(thread, ins, a_spec, b_spec, disp)
    lanes = _enabled(thread, ins)
    if ins.rt & T_BIT:
        data = [int(x) for x in thread.vr[ins.rt & 63]]
    else:
        data = [thread.rd(ins.rt, pc)] * thread.lanes  # scalar Rs is broadcast
    for i in lanes:
        check_write(thread, addrs[i], 4)
    for i in lanes:
        write(thread, addrs[i], 4, data[i])
    return None


# ---------------------------------------------------------------------------- loads and stores


@op("load")
def load(thread: Any, ins: Any) -> None:
    """LOAD.sz Rt, d[Ra] (op 44): sign-extending."""
    _load(thread, ins, ins.ra, None, ins.value, True)


@op("loadu")
def loadu(thread: Any, ins: Any) -> None:
    """LOADU.sz Rt, d[Ra] (op 45): zero-extending."""
    _load(thread, ins, ins.ra, None, ins.value, False)


@op("store")
def store(thread: Any, ins: Any) -> None:
    """STORE.sz Rs, d[Ra] (op 40): Rs is in the Rt field."""
    _store(thread, ins, ins.ra, None, ins.value)


@op("ldx")
def ldx(thread: Any, ins: Any) -> None:
    """LDX.sz Rt, [Ra+Rb] (R2 func 44)."""
    _load(thread, ins, ins.ra, ins.rb, 0, True)


@op("ldux")
def ldux(thread: Any, ins: Any) -> None:
    """LDUX.sz Rt, [Ra+Rb] (R2 func 45)."""
    _load(thread, ins, ins.ra, ins.rb, 0, False)


@op("stx")
def stx(thread: Any, ins: Any) -> None:
    """STX.sz Rs, [Ra+Rb] (R2 func 40)."""
    _store(thread, ins, ins.ra, ins.rb, 0)


# ---------------------------------------------------------------------------- reservations
# LDSR/STCR are tetra-only scalar operations; nothing architectural reads the
# reservation (STCR is unconditional and reports no status), so it is bookkeeping
# for tools and for a future conditional store.


def _load_reserved(thread: Any, ins: Any, a_spec: int, b_spec: int | None, disp: int) -> None:
    if _is_vector(ins, a_spec, b_spec):
        raise exceptions.undefined(ins)
    ea = _scalar_ea(thread, ins, a_spec, b_spec, disp)
    value = read(thread, ea, 4)
    thread.wr(ins.rt, value)
    thread.reservation = ea & ~(GRANULE - 1)
    return None


def _store_conditional(thread: Any, ins: Any, a_spec: int, b_spec: int | None, disp: int) -> None:
    if _is_vector(ins, a_spec, b_spec):
        raise exceptions.undefined(ins)
    ea = _scalar_ea(thread, ins, a_spec, b_spec, disp)
    write(thread, ea, 4, thread.rd(ins.rt, ins.address))
    granules = {ea & ~(GRANULE - 1), ((ea + 3) & MASK32) & ~(GRANULE - 1)}
    machine = thread.shared.machine
    for agent in (machine.agents if machine is not None else [thread]):
        if getattr(agent, "reservation", None) in granules:
            agent.reservation = None
    return None


@op("ldsr")
def ldsr(thread: Any, ins: Any) -> None:
    """LDSR Rt, d[Ra] (op 46): load tetra, reserve its 64-byte granule."""
    _load_reserved(thread, ins, ins.ra, None, ins.value)


@op("ldsrx")
def ldsrx(thread: Any, ins: Any) -> None:
    """LDSRX Rt, [Ra+Rb] (R2 func 46)."""
    _load_reserved(thread, ins, ins.ra, ins.rb, 0)


@op("stcr")
def stcr(thread: Any, ins: Any) -> None:
    """STCR Rs, d[Ra] (op 42): store tetra unconditionally, drop every reservation on the granule."""
    _store_conditional(thread, ins, ins.ra, None, ins.value)


@op("stcrx")
def stcrx(thread: Any, ins: Any) -> None:
    """STCRX Rs, [Ra+Rb] (R2 func 42)."""
    _store_conditional(thread, ins, ins.ra, ins.rb, 0)


# ---------------------------------------------------------------------------- cache commands


def _cache(thread: Any, ins: Any, ea: int) -> None:
    """CACHE: machine mode only [PROPOSAL, spec 1.6]; a functional no-op.

    The line commands (IC 1, DC 3) name the line holding EA, so the address is
    checked like a load's (data breakpoint, translation, PMA); the other commands
    ignore it.
    """
    exceptions.require_machine(thread, "CACHE")
    ic = (ins.word >> 6) & 7
    dc = (ins.word >> 9) & 7
    if ic == 1 or dc == 3:
        ea &= MASK32
        _watch(thread, ea, False)
        thread.space.translate(ea, READ)


@op("cache")
def cache(thread: Any, ins: Any) -> None:
    """CACHE ic, dc, d[Ra] (op 41)."""
    _cache(thread, ins, (thread.rd(ins.ra & 63, ins.address) + ins.value))


@op("cachex")
def cachex(thread: Any, ins: Any) -> None:
    """CACHEX ic, dc, [Ra+Rb] (R2 func 41)."""
    pc = ins.address
    _cache(thread, ins, thread.rd(ins.ra & 63, pc) + thread.rd(ins.rb & 63, pc))
