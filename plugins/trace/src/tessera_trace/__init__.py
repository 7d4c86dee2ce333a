"""tessera-trace: commit-log, JSON-lines, Perfetto and profile traces of Tessera runs.

From the command line: ``tessera run PROGRAM --trace FORMAT --trace-out FILE``.  From
Python::

    import tessera_trace
    host.register(tessera_trace.plugin, "trace")        # (installed: already registered)
    machine = Machine(arch, host=host)
    ...load a program...
    with tessera_trace.attach(machine, "text", "run.log", pc=(0x10000, 0x10100)) as tracer:
        machine.run()

See docs/trace.md for every option and format.
"""

from __future__ import annotations

from tessera_trace import plugin
from tessera_trace.filters import PcRange, Window
from tessera_trace.formats import FORMATS
from tessera_trace.output import DEFAULT_LIMIT
from tessera_trace.tracer import Tracer, attach, tracers_of

__all__ = ["DEFAULT_LIMIT", "FORMATS", "PcRange", "Tracer", "Window", "attach", "plugin", "tracers_of"]
