"""tessera-faults: fault targets, fault models and triggers on any architecture.

From the command line: ``tessera run PROGRAM --fault target=x5,model=flip,bit=3,at=retired:1000``
and ``tessera faults targets --arch ARCH``.  From Python::

    import tessera_faults
    machine = Machine(arch, host=host)          # a host with the faults plugin (installed: any)
    ...load a program...
    record = tessera_faults.inject(machine, "target=x5,bit=3,at=retired:1000")
    machine.run()
    record["status"], record["old"], record["new"]

See docs/faults.md for targets, models, triggers and the ``tessera_fault_targets`` hook.
"""

from __future__ import annotations

import importlib
from typing import Any

#: public name -> the module that defines it; imported on first use, because the
#: ``tessera`` entry point imports this package on every ``tessera run``
_EXPORTS = {
    "plugin": "tessera_faults.plugin", "Fault": "tessera_faults.spec", "inject": "tessera_faults.injector",
    "records": "tessera_faults.injector", "Target": "tessera_faults.targets",
    "targets_of": "tessera_faults.targets", "resolve": "tessera_faults.targets",
    "MODELS": "tessera_faults.models", "parse_trigger": "tessera_faults.triggers",
}

__all__ = ["MODELS", "Fault", "Target", "inject", "parse_trigger", "plugin", "records", "resolve", "targets_of"]


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(_EXPORTS[name])
    return module if name == "plugin" else getattr(module, name)
