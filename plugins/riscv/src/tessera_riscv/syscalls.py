"""The system-call layer: Linux numbers, so one ELF runs here and under qemu-riscv32/64 user mode.

With ``syscalls`` on (the default) ``ecall`` reads the call number from ``a7`` and
its arguments from ``a0``–``a2``:

======  ==============  =====================================================
 a7      call            effect
======  ==============  =====================================================
 64      write           ``write(fd, buf, count)`` for fd 1 (stdout) and 2
                         (stderr): returns ``count`` in ``a0``; another fd
                         returns -9 (EBADF), an unreadable buffer -14 (EFAULT)
 93      exit            the hart halts; exit status ``a0 & 0xff``
 94      exit_group      same as exit (one hart)
 other   —               returns -38 (ENOSYS) in ``a0``
======  ==============  =====================================================

Written bytes are kept in ``machine.ext["riscv_io"]`` (``.stdout`` / ``.stderr``) and, with
``echo`` on (the default), written to this process's standard output or error at
once.  With ``syscalls`` off, ``ecall`` takes the environment-call trap (mcause 11).
"""

from __future__ import annotations

import sys
from typing import Any

from tessera.control import Halt
from tessera.errors import MemoryFault

SYS_WRITE, SYS_EXIT, SYS_EXIT_GROUP = 64, 93, 94
EBADF, EFAULT, ENOSYS = 9, 14, 38


class RiscvIO:
    """What the program wrote: ``stdout`` and ``stderr`` bytes, echoed when ``echo`` is on."""

    def __init__(self, echo: bool = True) -> None:
        self.echo = echo
        self.stdout = bytearray()
        self.stderr = bytearray()

    def write(self, fd: int, data: bytes) -> None:
        (self.stdout if fd == 1 else self.stderr).extend(data)
        if self.echo:
            stream = sys.stdout if fd == 1 else sys.stderr
            binary = getattr(stream, "buffer", None)
            if binary is not None:
                stream.flush()
                binary.write(data)
                binary.flush()
            else:  # a text-only stream (e.g. a test's capture)
                stream.write(data.decode("utf-8", "replace"))
                stream.flush()

    def state(self) -> dict[str, Any]:
        return {"stdout": len(self.stdout), "stderr": len(self.stderr)}


#: what each call reads and writes (``x`` registers), for :func:`uses`
_A0, _A1, _A2, _A7 = ("x", 10), ("x", 11), ("x", 12), ("x", 17)
_USES: dict[int, tuple[tuple[tuple[str, int], ...], tuple[tuple[str, int], ...]]] = {
    SYS_WRITE: ((_A0, _A1, _A2, _A7), (_A0,)),
    SYS_EXIT: ((_A0, _A7), ()),
    SYS_EXIT_GROUP: ((_A0, _A7), ()),
}
_OTHER = ((_A7,), (_A0,))


def uses(hart: Any) -> tuple[tuple[tuple[str, int], ...], tuple[tuple[str, int], ...]]:
    """The registers the call just made read and wrote (``Architecture.register_uses`` of
    ``ecall``, asked after the call: ``a7`` still holds its number — no call writes it)."""
    return _USES.get(hart.x[17], _OTHER)


def system_call(hart: Any) -> None:
    """Carry out the call in ``a7`` (see the module docstring)."""
    x = hart.x
    number = x[17]
    mask = hart.mask
    if number == SYS_WRITE:
        fd, buf, count = x[10], x[11], x[12]
        if fd not in (1, 2):
            x[10] = -EBADF & mask
            return
        try:
            data = hart.space.read_bytes(buf, count) if count else b""
        except MemoryFault:
            x[10] = -EFAULT & mask
            return
        hart.machine.ext["riscv_io"].write(fd, data)
        x[10] = len(data)
    elif number in (SYS_EXIT, SYS_EXIT_GROUP):
        raise Halt(x[10] & 0xFF)
    else:
        x[10] = -ENOSYS & mask
