"""A local pool worker: ``python -m tessera.batch.worker READ_FD WRITE_FD``.

A fresh interpreter that imports nothing of the program that started the batch (so a
script calling :func:`tessera.batch.run_batch` needs no ``if __name__ == "__main__"``
guard, unlike ``multiprocessing``'s ``spawn``), in a session of its own (so Ctrl-C at
the terminal reaches only the batch, which then stops it).  It talks to the batch
through two pipes with :class:`multiprocessing.connection.Connection`: it receives the
batch's ``sys.path``, then the :class:`~tessera.batch.hostrecipe.HostRecipe`, then the
task (``module:function``) with the data shared by every payload, then one payload at a
time, answering each with its result; ``None`` or the batch going away ends it.
"""

from __future__ import annotations

import signal
import sys
from multiprocessing.connection import Connection


def serve(inbox: Connection, outbox: Connection) -> None:
    """Run payloads from ``inbox`` until told to stop, answering on ``outbox``."""
    try:
        path = inbox.recv()
        sys.path[:] = [p for p in path if p not in sys.path] + sys.path  # the batch's modules too
        from tessera.batch.backends import call_task, task_function

        recipe = inbox.recv()
        task, shared = inbox.recv()
        fn = task_function(task)
        while True:
            payload = inbox.recv()
            if payload is None:
                return
            outbox.send(call_task(fn, payload, recipe, shared))
    except (EOFError, BrokenPipeError):  # the batch is gone: nothing left to do
        return


def _die_with_parent() -> None:
    """On Linux, be killed when the batch dies, even by ``kill -9`` (``PR_SET_PDEATHSIG``):
    a worker deep in a long run would otherwise notice only when it asks for the next spec."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the batch's to handle
    _die_with_parent()
    serve(Connection(int(args[0]), writable=False), Connection(int(args[1]), readable=False))


if __name__ == "__main__":
    main()
