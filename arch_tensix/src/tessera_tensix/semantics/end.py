"""END: the pseudo-instruction of the all-zero word, which ends a direct-mode kernel.

Opcode 0 is not a Tensix instruction; a kernel given as words (or assembled) stops at the
first all-zero word with exit status 0 (``end`` in assembly).
"""

from __future__ import annotations

from typing import Any

from tessera.control import Halt
from tessera_tensix.semantics import op


@op("END")
def end(thread: Any, ins: Any) -> None:
    frontend = getattr(thread, "frontend", None)
    macro = getattr(frontend, "macro", None)
    if macro is not None and macro.busy:  # SFPLOADMACRO's schedule runs out as cycles pass
        macro.idle(thread)
    if frontend is not None:  # a rerun of the kernel starts with no hazard pending
        frontend.recent = frontend.watch = None
    raise Halt(0)
