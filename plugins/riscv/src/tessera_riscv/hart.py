"""The RISC-V hart: the CPU agent with its machine-mode CSRs, trap entry and interrupts.

State beyond the engine's (``x`` registers, ``pc``, ``instret``, ``cycles``): the
CSRs listed in :mod:`tessera_riscv.csrs`, the counter offsets that make ``mcycle``
and ``minstret`` writable, and the pending interrupts.

**Exact counters.**  Inside a slice the engine counts retired instructions and
cycles in local variables, so ``hart.instret``/``hart.cycles`` lag behind.  A CSR
instruction that touches a counter therefore first raises a wait on a
:class:`SliceBreak` — which releases at once — so the engine commits the slice up to
that instruction and runs it again as the first of the next slice, where both
counts are exact.  Reading ``minstret`` gives the instructions retired before the
reading one; a value written to ``mcycle``/``minstret`` is what the next
instruction reads (privileged spec 3.1.10).

**Interrupts.**  There are no interrupt sources on the board; devices and
extensions raise them with :meth:`RiscvHart.set_pending` (bits of ``mip``).  A
pending, enabled interrupt (``mip & mie`` and ``mstatus.MIE``) is taken at the
start of the hart's next slice — at once after a CSR write or ``mret`` that enables
it, which end the slice — in the priority order MEI, MSI, MTI, then platform
interrupts (16 and up) from the highest number down.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tessera.control import Trap, WaitFor, Yield
from tessera.dumptext import INDENT, extras, render
from tessera.engine import RUNNABLE, CpuAgent
from tessera.errors import ConfigError
from tessera.sync import SyncObject
from tessera_riscv import csrs, traps

M64 = (1 << 64) - 1
M32 = 0xFFFF_FFFF
_INF = float("inf")

COUNTERS = frozenset({csrs.MCYCLE, csrs.MINSTRET, csrs.MCYCLEH, csrs.MINSTRETH, csrs.CYCLE, csrs.TIME,
                      csrs.INSTRET, csrs.CYCLEH, csrs.TIMEH, csrs.INSTRETH})
#: CSRs that read as zero and ignore writes (performance counters and events, inhibit, ...)
_ZERO = frozenset({csrs.MCOUNTINHIBIT, csrs.MSTATUSH, csrs.MCONFIGPTR, csrs.MVENDORID, csrs.MARCHID,
                   csrs.MIMPID}
                  | {0xB00 + i for i in range(3, 32)} | {0x320 + i for i in range(3, 32)}
                  | {0xC00 + i for i in range(3, 32)} | {0xB80 + i for i in range(3, 32)}
                  | {0xC80 + i for i in range(3, 32)})
_RV32_ONLY = frozenset({csrs.MSTATUSH, csrs.MCYCLEH, csrs.MINSTRETH, csrs.CYCLEH, csrs.TIMEH,
                        csrs.INSTRETH} | {0xB80 + i for i in range(3, 32)}
                       | {0xC80 + i for i in range(3, 32)})
#: Interrupt priority (privileged spec 3.1.9): external, software, timer.
_PRIORITY = (csrs.MEI, csrs.MSI, csrs.MTI)


class SliceBreak(SyncObject):
    """A wait that ends at once: it makes the engine commit the slice up to an instruction.

    Raising ``WaitFor(slice_break)`` before any side effect ends the slice with
    ``cycles``/``instret`` committed up to the instruction, which then runs again as
    the first of the next slice.
    """

    kind = "slice-break"

    def park(self, agent: Any) -> None:
        # reported as a wait (tools pair an instruction's before callback, fired again when it
        # runs again, with this), then never actually waits
        if self.machine is None:   # not one of the machine's sync objects: report through the agent's
            self.machine = getattr(agent, "machine", None)
        self.emit_event("wait", agent, getattr(agent, "wait_reason", None) or None)
        agent.wake()


class RiscvHart(CpuAgent):
    """One RV32/RV64 hart (machine mode only).

    ``hart.x`` holds the 32 integer registers as unsigned XLEN-bit ints (``x[0]`` is
    always 0: semantic functions never write it); ``hart.pc`` is the next PC between
    slices.  CSRs are read and written from Python with :meth:`csr_read` and
    :meth:`csr_write`.
    """

    kind = "hart"
    #: The integer register file, made by ``CpuAgent`` from the architecture's "x" declaration.
    x: list[int]

    def __init__(self, name: str, arch: Any, space: Any, *, xlen: int, hartid: int = 0,
                 misaligned: str = "allow", syscalls: bool = True, pc: int | None = None,
                 **kw: Any) -> None:
        super().__init__(name, arch, space, pc=pc, **kw)
        if xlen not in (32, 64):
            raise ConfigError(f"xlen must be 32 or 64, not {xlen}")
        self.xlen = xlen
        self.mask = (1 << xlen) - 1
        self.hartid = hartid
        self.trap_misaligned = misaligned == "trap"
        self.syscalls = syscalls
        # machine-mode CSRs
        self.mstatus = 0          # only MIE and MPIE are stored; MPP always reads M (3)
        self.mie = 0
        self.mip = 0
        self.mtvec = 0
        self.mscratch = 0
        self.mepc = 0
        self.mcause = 0
        self.mtval = 0
        self.cycle_offset = 0     # mcycle = cycles + cycle_offset (mod 2**64)
        self.instret_offset = 0   # minstret = instret + instret_offset
        self.irq_ready = False    # mip & mie and mstatus.MIE: take an interrupt at the next boundary
        self.exact_pc: int | None = None
        self.slice_break = SliceBreak(f"{name}.counters")
        self.misa = (1 if xlen == 32 else 2) << (xlen - 2) | 1 << 8 | 1 << 12   # MXL, I, M

    # ------------------------------------------------------------------ traps

    def enter_trap(self, cause: int, tval: int = 0, *, interrupt: bool = False) -> None:
        """Take a trap now: the CSR updates of trap entry, then the PC moves to the handler."""
        mask = self.mask
        self.mepc = self.pc & mask & ~3
        self.mcause = (cause | 1 << (self.xlen - 1)) & mask if interrupt else cause & mask
        self.mtval = tval & mask
        self.mstatus = csrs.MSTATUS_MPIE if self.mstatus & csrs.MSTATUS_MIE else 0
        base = self.mtvec & ~3
        self.pc = (base + 4 * cause) & mask if interrupt and self.mtvec & 1 else base
        self._update_irq()

    def leave_trap(self) -> int:
        """``mret``: ``MIE = MPIE``, ``MPIE = 1``, ``MPP = M``; returns ``mepc``."""
        self.mstatus = (csrs.MSTATUS_MIE if self.mstatus & csrs.MSTATUS_MPIE else 0) | csrs.MSTATUS_MPIE
        self._update_irq()
        return self.mepc

    # ------------------------------------------------------------------ interrupts

    def set_pending(self, bit: int, pending: bool = True) -> None:
        """Raise (or clear) interrupt ``bit`` of ``mip`` — for devices and extensions.

        Taken at the start of the hart's next slice when enabled; an agent interrupting
        the hart from inside the hart's own instruction should raise
        :class:`~tessera.control.Yield` to end the slice at once.
        """
        if not 0 <= bit < self.xlen:
            raise ConfigError(f"interrupt {bit} does not exist on an RV{self.xlen} hart")
        if self.machine is not None:
            self.machine.disturb(self)  # a hart running ahead of its turn must see it in time
        if pending:
            self.mip |= 1 << bit
        else:
            self.mip &= ~(1 << bit)
        self._update_irq()

    def _update_irq(self) -> None:
        self.irq_ready = bool(self.mip & self.mie) and bool(self.mstatus & csrs.MSTATUS_MIE)

    def _next_interrupt(self) -> int:
        ready = self.mip & self.mie
        for bit in _PRIORITY:
            if ready >> bit & 1:
                return bit
        return ready.bit_length() - 1

    def boundary_quiet(self) -> bool:
        """No interrupt to take at the next boundaries: a barrel run may run this hart ahead."""
        return not (self.irq_ready and self.mtvec)

    def run_slice(self, limit: int, cycle_limit: float = _INF) -> int:
        if self.irq_ready and self.mtvec and limit > 0 and self.status == RUNNABLE:
            cause = self._next_interrupt()
            self.deliver_trap(Trap(cause, 0, name=traps.INTERRUPT_NAMES.get(cause, f"interrupt {cause}"),
                                   interrupt=True))
            if limit == 1 or self.status != RUNNABLE:
                return 1
            return 1 + super().run_slice(limit - 1, cycle_limit)
        return super().run_slice(limit, cycle_limit)

    # ------------------------------------------------------------------ CSRs

    def csr_instruction(self, ins: Any, kind: int, operand: int, write: bool) -> None:
        """Execute a Zicsr instruction: ``kind`` 0 = write, 1 = set bits, 2 = clear bits.

        ``write`` is false for ``csrrs``/``csrrc`` with ``x0`` and for the immediate
        forms with 0, which do not write (so they may read a read-only CSR).  An
        unimplemented CSR, or a write to a read-only one, is an illegal instruction.
        """
        number = ins.csr
        if not self.csr_exists(number) or (write and csrs.read_only(number)):
            raise traps.illegal(ins.word, ins.address)
        if number in COUNTERS:  # make the counts exact: first run of this instruction ends the slice
            if self.exact_pc != ins.address:
                self.exact_pc = ins.address
                raise WaitFor(self.slice_break, "an exact counter read")
            self.exact_pc = None
        old = self._csr_get(number)
        if write:
            new = operand if kind == 0 else (old | operand if kind == 1 else old & ~operand)
            self._csr_set(number, new & self.mask, retiring=ins.cycles)
        if ins.rd:
            self.x[ins.rd] = old
        if write and self.irq_ready and self.mtvec:
            raise Yield((ins.address + 4) & self.mask)  # an interrupt just became takeable

    def csr_exists(self, number: int) -> bool:
        if number in _RV32_ONLY and self.xlen != 32:
            return False
        return (number in COUNTERS or number in _ZERO
                or number in (csrs.MSTATUS, csrs.MISA, csrs.MIE, csrs.MTVEC, csrs.MSCRATCH, csrs.MEPC,
                              csrs.MCAUSE, csrs.MTVAL, csrs.MIP, csrs.MHARTID))

    def csr_read(self, number: int) -> int:
        """The value CSR ``number`` reads as (:class:`ConfigError` if it does not exist)."""
        if not self.csr_exists(number):
            raise ConfigError(f"RV{self.xlen} hart {self.name} has no CSR {number:#05x}")
        return self._csr_get(number)

    def csr_write(self, number: int, value: int) -> None:
        """Write CSR ``number`` as a CSR instruction would (WARL rules applied)."""
        if not self.csr_exists(number):
            raise ConfigError(f"RV{self.xlen} hart {self.name} has no CSR {number:#05x}")
        if csrs.read_only(number):
            raise ConfigError(f"CSR {number:#05x} is read-only")
        self._csr_set(number, value & self.mask, retiring=None)

    def _counter(self, number: int) -> int:
        low = number & 0x7F
        if number == csrs.TIME or number == csrs.TIMEH:
            return self.cycles & M64                      # time: the hart's cycle count
        if low == 0:                                      # mcycle, cycle (and the h halves)
            return (self.cycles + self.cycle_offset) & M64
        return (self.instret + self.instret_offset) & M64  # minstret, instret

    def _csr_get(self, number: int) -> int:
        if number == csrs.MSTATUS:
            return self.mstatus | csrs.MSTATUS_MPP
        if number in COUNTERS:
            value = self._counter(number)
            if self.xlen == 32:
                return value >> 32 if number & 0x80 else value & M32
            return value
        if number in _ZERO:
            return 0
        return {csrs.MISA: self.misa, csrs.MIE: self.mie, csrs.MTVEC: self.mtvec,
                csrs.MSCRATCH: self.mscratch, csrs.MEPC: self.mepc, csrs.MCAUSE: self.mcause,
                csrs.MTVAL: self.mtval, csrs.MIP: self.mip, csrs.MHARTID: self.hartid}[number]

    def _csr_set(self, number: int, value: int, *, retiring: int | None) -> None:
        """Store ``value``; ``retiring`` is the cycle price of the writing instruction (or None)."""
        if number == csrs.MSTATUS:
            self.mstatus = value & (csrs.MSTATUS_MIE | csrs.MSTATUS_MPIE)
            self._update_irq()
        elif number == csrs.MIE:
            self.mie = value & (0x888 | (self.mask & ~0xFFFF))   # MSIE, MTIE, MEIE, platform 16+
            self._update_irq()
        elif number == csrs.MTVEC:
            self.mtvec = value & ~2     # MODE: 0 direct, 1 vectored (2 and 3 are reserved)
        elif number == csrs.MSCRATCH:
            self.mscratch = value
        elif number == csrs.MEPC:
            self.mepc = value & ~3      # IALIGN = 32
        elif number == csrs.MCAUSE:
            self.mcause = value
        elif number == csrs.MTVAL:
            self.mtval = value
        elif number in (csrs.MCYCLE, csrs.MCYCLEH, csrs.MINSTRET, csrs.MINSTRETH):
            self._set_counter(number, value, retiring)
        # misa, mip, mstatush, mcountinhibit, hpm counters/events: writes are ignored

    def _set_counter(self, number: int, value: int, retiring: int | None) -> None:
        cycles = number & 0x7F == 0
        # the count just after the writing instruction retires: what the write replaces
        if cycles:
            base = self.cycles + (retiring or 0)
            current = (base + self.cycle_offset) & M64
        else:
            base = self.instret + (0 if retiring is None else 1)
            current = (base + self.instret_offset) & M64
        if self.xlen == 32:
            if number & 0x80:
                value = (value & M32) << 32 | current & M32
            else:
                value = current & ~M32 & M64 | value & M32
        if cycles:
            self.cycle_offset = value - base
        else:
            self.instret_offset = value - base

    # ------------------------------------------------------------------ state

    def dump(self) -> dict[str, Any]:
        """CSRs for ``agent.state()`` (``--dump-state``)."""
        names = {csrs.MSTATUS: "mstatus", csrs.MISA: "misa", csrs.MIE: "mie", csrs.MIP: "mip",
                 csrs.MTVEC: "mtvec", csrs.MSCRATCH: "mscratch", csrs.MEPC: "mepc",
                 csrs.MCAUSE: "mcause", csrs.MTVAL: "mtval", csrs.MHARTID: "mhartid"}
        out = {name: self._csr_get(n) for n, name in names.items()}
        out["mcycle"] = self._counter(csrs.MCYCLE)
        out["minstret"] = self._counter(csrs.MINSTRET)
        return {"xlen": self.xlen, "csrs": out}


def dump(hart: Any) -> dict[str, Any]:
    """``Architecture.dump``: the hart's CSRs (other agents of a board have none)."""
    return hart.dump() if isinstance(hart, RiscvHart) else {}


def dump_text(section: str, name: str, state: Mapping[str, Any]) -> list[str] | None:
    """``Architecture.dump_text``: the CSRs as XLEN-bit hex, named like the registers;
    what an extension adds (the tile's state, say) by the core's generic rule."""
    if section != "agent" or not isinstance(state.get("csrs"), Mapping) or "xlen" not in state:
        return None
    digits = state["xlen"] // 4
    cells = [f"{csr:>8}={value:#0{digits + 2}x}" for csr, value in state["csrs"].items()]
    lines = [f"xlen {state['xlen']}", "csrs"]
    lines += [INDENT + "  ".join(cells[i:i + 4]) for i in range(0, len(cells), 4)]
    return lines + render({k: v for k, v in extras(state).items() if k not in ("xlen", "csrs")})
