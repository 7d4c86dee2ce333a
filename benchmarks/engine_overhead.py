"""Idle hook families: now ``tessera bench --only hooks`` (this wrapper keeps the old path working).

The measurement moved into the ``tessera bench`` command (workload ``hooks``, offered
by the riscv plugin: ``tessera_riscv.bench_hooks``): the compiled RV32 loop under a
host with the riscv plugin only, and with a plugin implementing every hook family
but subscribing to nothing.
Options are those of ``tessera bench``, e.g.
``python benchmarks/engine_overhead.py --quick --json`` or ``--check``.
"""

from __future__ import annotations

import sys

from tessera.cli.main import main

if __name__ == "__main__":
    main(["bench", "--only", "hooks", *sys.argv[1:]])
