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

import importlib
from typing import Any

#: public name -> the module that defines it; imported on first use, because the
#: ``tessera`` entry point imports this package on every ``tessera run``
_EXPORTS = {
    "plugin": "tessera_trace.plugin", "PcRange": "tessera_trace.filters",
    "Window": "tessera_trace.filters", "FORMATS": "tessera_trace.formats",
    "DEFAULT_LIMIT": "tessera_trace.output", "Tracer": "tessera_trace.tracer",
    "attach": "tessera_trace.tracer", "tracers_of": "tessera_trace.tracer",
}

__all__ = ["DEFAULT_LIMIT", "FORMATS", "PcRange", "Tracer", "Window", "attach", "plugin", "tracers_of"]


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(_EXPORTS[name])
    return module if name == "plugin" else getattr(module, name)
