"""One error hierarchy for everything the emulator cannot express.

An architecture that defines a trap *takes* it: that is emulation, not an error.
Only what the emulated machine cannot express stops a run, and it does so with a
:class:`TesseraError` subclass that carries the context a user needs to find the
cause (address, instruction word, agent, plugin).  The command line prints
``str(error)`` as one line and exits with the class's ``exit_code``; every class
has its own code so scripts can tell them apart.
"""

from __future__ import annotations

from typing import Any

__all__ = ["TesseraError", "ConfigError", "LoadError", "DecodeError", "MemoryFault", "UnhandledTrap",
           "BudgetExceeded", "Deadlock", "PluginError", "AssemblyError", "EncodeError", "SnapshotError",
           "HostMemoryError", "CheckFailed", "EngineMismatch", "INTERNAL_ERROR_EXIT", "INTERRUPTED_EXIT", "all_error_classes"]


class TesseraError(Exception):
    """Base of every error Tessera raises on purpose.

    ``message`` is the reason, without context; the context fields are optional and
    are rendered after the reason so the one-line form reads naturally::

        memory fault: write to read-only rom 'rom' (agent core0, pc 0x00000008, address 0x00020000)
    """

    exit_code = 70
    kind = "error"

    def __init__(
        self,
        message: str,
        *,
        address: int | None = None,
        word: int | None = None,
        agent: str | None = None,
        plugin: str | None = None,
        pc: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.address = address
        self.word = word
        self.agent = agent
        self.plugin = plugin
        self.pc = pc

    def context(self) -> dict[str, Any]:
        """The context fields that are set, for structured logs and JSON output."""
        fields = {
            "address": self.address,
            "word": self.word,
            "agent": self.agent,
            "plugin": self.plugin,
            "pc": self.pc,
        }
        return {k: v for k, v in fields.items() if v is not None}

    def with_context(self, **fields: Any) -> TesseraError:
        """Fill context fields that are still unset (the engine adds agent and pc)."""
        for key, value in fields.items():
            if getattr(self, key, None) is None and value is not None:
                setattr(self, key, value)
        return self

    def __str__(self) -> str:
        parts = []
        if self.plugin is not None:
            parts.append(f"plugin {self.plugin}")
        if self.agent is not None:
            parts.append(f"agent {self.agent}")
        if self.pc is not None:
            parts.append(f"pc {self.pc:#010x}")
        if self.address is not None and self.address != self.pc:
            parts.append(f"address {self.address:#010x}")
        if self.word is not None:
            parts.append(f"word {self.word:#x}")
        suffix = f" ({', '.join(parts)})" if parts else ""
        return f"{self.kind}: {self.message}{suffix}"


class ConfigError(TesseraError):
    """A user choice that cannot work: unknown architecture, bad option value, bad map."""

    exit_code = 64
    kind = "configuration error"


class LoadError(TesseraError):
    """A program file that cannot be loaded (missing, truncated, wrong machine, too big)."""

    exit_code = 65
    kind = "load error"


class DecodeError(TesseraError):
    """A word the architecture does not define and for which it has no illegal-instruction trap."""

    exit_code = 66
    kind = "decode error"


class MemoryFault(TesseraError):
    """An access the address space refuses: unmapped, wrong permission, misaligned, device error."""

    exit_code = 67
    kind = "memory fault"

    def __init__(self, message: str, *, access: str = "read", size: int = 0, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.access = access
        self.size = size


class UnhandledTrap(TesseraError):
    """The program trapped and the architecture (as configured) has nowhere to send it."""

    exit_code = 68
    kind = "unhandled trap"

    def __init__(self, message: str, *, cause: int | None = None, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.cause = cause


class BudgetExceeded(TesseraError):
    """A run used its instruction, cycle or wall-time budget; the machine can be resumed."""

    exit_code = 69
    kind = "budget exceeded"

    def __init__(self, message: str, *, result: Any = None, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.result = result


class Deadlock(TesseraError):
    """Every live agent waits and nothing can wake any of them.

    ``waits`` maps each waiting agent to a description of what it waits for; the
    message lists them all so the report needs no debugger.
    """

    exit_code = 71
    kind = "deadlock"

    def __init__(self, waits: dict[str, str], **kw: Any) -> None:
        described = "; ".join(f"{agent} waits for {what}" for agent, what in waits.items())
        super().__init__(f"every agent is waiting: {described}", **kw)
        self.waits = dict(waits)


class PluginError(TesseraError):
    """A plugin failed to import, targets an unsupported API version, or raised in a hook."""

    exit_code = 72
    kind = "plugin error"


class AssemblyError(TesseraError):
    """Assembler input that cannot be assembled; names ``file:line:column``."""

    exit_code = 73
    kind = "assembly error"

    def __init__(
        self, message: str, *, file: str = "<input>", line: int = 0, column: int = 0, **kw: Any
    ) -> None:
        super().__init__(message, **kw)
        self.file = file
        self.line = line
        self.column = column

    def __str__(self) -> str:
        if not self.line:  # raised outside the assembler (e.g. Encoder.encode): no position
            return f"{self.kind}: {self.message}"
        return f"{self.file}:{self.line}:{self.column}: {self.kind}: {self.message}"


class EncodeError(AssemblyError):
    """An operand value that does not fit its field, or an unknown mnemonic."""

    exit_code = 74
    kind = "encode error"


class SnapshotError(TesseraError):
    """A snapshot that cannot be read: bad magic, unknown format, damaged, or
    referring to code (an architecture or plugin module) that is not installed."""

    exit_code = 75
    kind = "snapshot error"


class HostMemoryError(TesseraError):
    """The host cannot give the run the memory it asks for (a RAM size, a cap, a huge segment).

    Not a bug and not the program's fault: the user's settings ask for more than this
    machine has.  Python's own :class:`MemoryError` anywhere in a run is reported the
    same way by the command line.
    """

    exit_code = 77
    kind = "out of host memory"


class CheckFailed(TesseraError):
    """The program ran to its end but its output is not the expected one.

    For programs that come with their expected (golden) outputs — a Tensix kernel's
    manifest names them — the first differing element is in the message: where it
    is, the value found and the value expected.
    """

    exit_code = 79
    kind = "check failed"


class EngineMismatch(TesseraError):
    """Check mode (``--engine check``) found a translated block that does not do what stepping does.

    A bug, like an internal error, but a precise one: in the fast engine's translator,
    or in semantics breaking the rules it relies on (docs/writing-plugins.md).  The
    message names the architecture, the block, the instruction and the register or
    memory byte that differs with both values; the same are attributes (``arch``,
    ``block``, ``instruction``, ``location``, ``fast``, ``step``).  The machine is left
    as it was when the block started, so a state dump shows what both paths started from.
    """

    exit_code = 78
    kind = "engine mismatch"

    def __init__(self, message: str, *, arch: str = "", block: int | None = None,
                 instruction: int | None = None, location: str = "", fast: Any = None,
                 step: Any = None, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.arch = arch
        self.block = block
        self.instruction = instruction
        self.location = location
        self.fast = fast
        self.step = step


#: Exit code for an unexpected exception (a bug); the CLI suggests ``--debug``.
INTERNAL_ERROR_EXIT = 76
#: Exit code when the user interrupts a run with Ctrl-C.
INTERRUPTED_EXIT = 130


def all_error_classes() -> list[type[TesseraError]]:
    """Every error class of this module with its exit code (for docs and tests).

    Only the classes defined here: subclasses elsewhere (the assembler's expression
    errors, a plugin's own errors) reuse their base's code, and the answer must not
    depend on which modules happen to be imported.
    """
    seen: list[type[TesseraError]] = []
    stack: list[type[TesseraError]] = [TesseraError]
    while stack:
        cls = stack.pop(0)
        seen.append(cls)
        stack.extend(c for c in cls.__subclasses__() if c.__module__ == __name__)
    return seen
