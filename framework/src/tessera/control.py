"""Control-flow signals raised by semantic functions and caught by the engine.

These are *not* errors: a trap is emulated behaviour, a halt ends an agent, a wait
parks an agent on a sync object, a stop request ends a run at a breakpoint.  The
engine catches :class:`ControlSignal` before anything else, so these never reach a
user as failures; any other exception escaping a semantic function or a plugin
callback is turned into a named :class:`~tessera.errors.TesseraError`.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ControlSignal", "Trap", "Halt", "WaitFor", "Yield", "StopRequest", "RunInterrupted"]


class ControlSignal(Exception):
    """Base of the signals the engine handles itself."""


class Trap(ControlSignal):
    """Raised by semantics (or the decoder's illegal form) to take an architectural trap.

    ``cause`` is the architecture's cause code and ``tval`` the trap value (faulting
    address or instruction word).  The engine hands the trap to the architecture's
    ``take_trap``; if that declines, the run stops with :class:`UnhandledTrap`.
    """

    def __init__(self, cause: int, tval: int = 0, name: str = "trap", **info: Any) -> None:
        super().__init__(name)
        self.cause = cause
        self.tval = tval
        self.name = name
        self.info = info

    def __repr__(self) -> str:
        return f"Trap({self.name}, cause={self.cause}, tval={self.tval:#x})"


class Halt(ControlSignal):
    """The agent stops for good (``exit_code`` is the program's exit status)."""

    def __init__(self, exit_code: int = 0) -> None:
        super().__init__(exit_code)
        self.exit_code = exit_code


class WaitFor(ControlSignal):
    """The instruction cannot proceed until ``obj`` changes.

    The engine parks the agent on ``obj`` *without* retiring the instruction; when the
    object changes the agent is woken and the instruction is executed again.  So a
    semantic function must raise ``WaitFor`` before it has any side effect.
    """

    def __init__(self, obj: Any, reason: str) -> None:
        super().__init__(reason)
        self.obj = obj
        self.reason = reason


class Yield(ControlSignal):
    """The instruction completed and the agent must give up the rest of its slice.

    Raised *after* all side effects, with the PC to continue at; the engine retires
    the instruction and ends the slice, so the scheduler sees at once what the
    instruction changed (e.g. it enabled another hardware thread).
    """

    def __init__(self, next_pc: int) -> None:
        super().__init__(next_pc)
        self.next_pc = next_pc


class StopRequest(ControlSignal):
    """A stop condition (breakpoint PC or symbol) was reached before an instruction ran."""

    def __init__(self, reason: str, pc: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.pc = pc


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C honoured by the scheduler between two slices, so the machine is exact.

    Unlike a bare :class:`KeyboardInterrupt` (which may land inside an instruction),
    this one guarantees a consistent, resumable machine: the command line still writes
    ``--snapshot-out`` and ``--dump-state``.  ``result`` is the run so far (reason
    ``interrupted``).
    """

    def __init__(self, result: Any = None) -> None:
        super().__init__("interrupted")
        self.result = result
