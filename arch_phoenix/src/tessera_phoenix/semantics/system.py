"""System instructions: CSR access, BRK, RTI, REX, hardware queues, PFX (spec 1.4–1.7, 4.9).

Every check that can trap (CSR access rule, privilege, RTI depth) happens before any
state changes, so exceptions stay precise.  BRK is the exception: it is reported
*after* the instruction (EIP = IP + 6), so its Rt write happens first.

Instructions that change what is examined at instruction boundaries — CSR writes
(CR0 enables, STATUS interrupt enables and single step, debug registers), RTI and
REX — end the thread's slice (``Yield``), so the effect is seen before the next
instruction: another thread enabled in CR0 starts on the next cycle, a pending
interrupt that became recognisable is taken at once.

Machine-only (spec 1.6 proposal): the queue operations.  RTI only with the config
``rti_machine_only``: a handler that REX redirected to a lower mode returns with
RTI, so by default RTI is allowed in every mode (with a non-zero nesting depth).
REX has its own rule (target mode below the current one).
"""

from __future__ import annotations

from typing import Any

from tessera.control import Trap, WaitFor, Yield
from tessera_phoenix import causes, csrs, exceptions
from tessera_phoenix.registers import SP_ALIAS
from tessera_phoenix.semantics import op
from tessera_phoenix.semantics.lanes import T_BIT, mask_of, read_scalar

MASK32 = 0xFFFF_FFFF
OM_BITS = 3 << 10
PL_BITS = 0xFF << 24
IPL_BITS = 7 << 5


def put(thread: Any, spec: int, value: int, mask_reg: int, pc: int) -> None:
    """Write a 32-bit result to 7-bit destination ``spec``: a GPR, or every enabled lane."""
    if spec & T_BIT:
        lanes = thread.lane_mask_array(mask_reg, pc)
        thread.vr[spec & 63][lanes] = value & MASK32
    else:
        thread.wr(spec & 63, value)


# ---------------------------------------------------------------------------- CSRs


@op("csrrd", "csrrw", "csrrc", "csrrs")
def csr(thread: Any, ins: Any) -> None:
    """Rt = CSR[n]; then CSR[n] = Ra / &= ~Ra / |= Ra for CsrOp 1/2/3 (bits 37:36)."""
    number = ins.csr & 0x3FFF
    kind = (ins.word >> 36) & 3
    csrs.check_access(thread, number)
    if csrs.reads_clock(number):
        exact_clock(thread, ins)
    operand = read_scalar(thread, ins.ra, ins.address) if kind != csrs.RD else 0
    old = csrs.read(thread, number)
    if kind != csrs.RD:
        csrs.write(thread, number, kind, operand)
    put(thread, ins.rt, old, 0, ins.address)  # the CSR format's Mask field is ignored
    if kind != csrs.RD:
        raise Yield(ins.next)


def exact_clock(thread: Any, ins: Any) -> None:
    """Make the instruction the first of a slice, where the thread's cycle count is exact.

    The first time round this raises a wait that ends at once (nothing has changed
    yet); the engine commits the slice up to here and the instruction runs again at
    the start of the next slice, now allowed through.
    """
    if thread.clock_read_pc != ins.address:
        thread.clock_read_pc = ins.address
        raise WaitFor(thread.shared.slice_break, "exact clock read")
    thread.clock_read_pc = None


# ---------------------------------------------------------------------------- exceptions


@op("brk")
def brk(thread: Any, ins: Any) -> None:
    """Rt = imm (if Rt is not r0), then exception BRK (63) with EIP = IP + 6."""
    if ins.rt:
        put(thread, ins.rt, ins.value, mask_of(ins), ins.address)
    raise Trap(causes.BRK, 0, name="BRK", eip=(ins.address + 6) & MASK32)


@op("rti")
def rti(thread: Any, ins: Any) -> None:
    """Return from exception: pop the status and IP stacks, continue at the old EIP."""
    if thread.shared.config.rti_machine_only:
        exceptions.require_machine(thread, "RTI")
    if thread.depth <= 0:
        raise Trap(causes.RTI, 0, name="RTI with no active exception")
    raise Yield(exceptions.leave(thread))


@op("rex")
def rex(thread: Any, ins: Any) -> None:
    """Redirect the current exception to lower mode Tm (bits 7:6) with PL = Ra[7:0].

    Doc semantics (spec 1.7): Irq4 (bits 11:8) = 1nnn sets IPL to nnn; v (bit 33) = 1
    jumps to TVEC[Tm] (+ 64 x current mode with ``rex_mode_offset``), v = 0 continues
    with the next instruction; REX fails (falls through, nothing changes) when the
    target level's interrupt enable (STATUS bit Tm) is clear.  CAUSE and BADADDR of the
    mode the exception came from (status stack entry 1) are copied to mode Tm's copies.
    """
    word = ins.word
    tm = (word >> 6) & 3
    irq4 = (word >> 8) & 15
    jump = (word >> 33) & 1
    status = thread.status_stack[0]
    mode = (status >> 10) & 3
    if mode <= tm:
        raise Trap(causes.PRIV, 0, name=f"REX to mode {tm} from mode {mode}")
    if not (status >> tm) & 1:
        return None  # interrupts disabled at the target level: REX fails
    pl = read_scalar(thread, ins.ra, ins.address) & 0xFF
    new = status & ~(OM_BITS | PL_BITS) | tm << 10 | pl << 24
    if irq4 & 8:
        new = new & ~IPL_BITS | (irq4 & 7) << 5
    thread.status_stack[0] = new & MASK32
    source = (thread.status_stack[1] >> 10) & 3
    thread.cause[tm] = thread.cause[source]
    thread.badaddr[tm] = thread.badaddr[source]
    thread.sp_sel = SP_ALIAS[tm]
    if thread.shared.mmu is not None:
        thread.space.flush()  # leaving machine mode: translation starts to apply
    if jump:
        offset = 64 * mode if thread.shared.config.rex_mode_offset else 0
        raise Yield((thread.shared.tvec[tm] + offset) & MASK32)
    raise Yield(ins.next)


# ---------------------------------------------------------------------------- queues


def _queue(thread: Any, ins: Any, what: str) -> Any:
    """The hardware queue named by bits 16:13, or None (only queue 15 exists)."""
    exceptions.require_machine(thread, what)
    return thread.shared.queues.get((ins.word >> 13) & 15)


@op("peekq")
def peekq(thread: Any, ins: Any) -> None:
    """Rt = head of queue q (not removed); an empty or absent queue reads 0."""
    queue = _queue(thread, ins, "PEEKQ")
    put(thread, ins.rt, queue[0] if queue else 0, mask_of(ins), ins.address)


@op("popq")
def popq(thread: Any, ins: Any) -> None:
    """Rt = head of queue q, removed; an empty or absent queue reads 0."""
    queue = _queue(thread, ins, "POPQ")
    put(thread, ins.rt, queue.popleft() if queue else 0, mask_of(ins), ins.address)


@op("statq")
def statq(thread: Any, ins: Any) -> None:
    """Rt = queue status: bit 31 empty, bit 30 valid (not empty), bits 10:0 entries."""
    queue = _queue(thread, ins, "STATQ")
    if queue is None:
        value = 0
    else:
        value = (1 << 30 if queue else 1 << 31) | min(len(queue), 0x7FF)
    put(thread, ins.rt, value, mask_of(ins), ins.address)


@op("resetq")
def resetq(thread: Any, ins: Any) -> None:
    """Empty queue q."""
    queue = _queue(thread, ins, "RESETQ")
    if queue is not None:
        queue.clear()


@op("pushq")
def pushq(thread: Any, ins: Any) -> None:
    """Push Rb onto queue q (queue number in the Ra slot); absent queues drop it."""
    queue = _queue(thread, ins, "PUSHQ")
    if queue is not None:
        queue.append(read_scalar(thread, ins.rb, ins.address) & MASK32)


# ---------------------------------------------------------------------------- postfix


@op("pfx")
def pfx(thread: Any, ins: Any) -> None:
    """A postfix reached as an instruction (e.g. a branch target) does nothing."""


@op("too_many_postfixes")
def too_many_postfixes(thread: Any, ins: Any) -> None:
    """An instruction followed by a third consecutive postfix raises PFX (spec 2.4).

    Not a row of its own: ``encoding.refine`` installs it as the ``too-many-postfixes``
    variant every postfix-capable row declares.
    """
    raise Trap(causes.PFX, ins.word, name="too many postfixes")
