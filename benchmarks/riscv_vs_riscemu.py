"""RV32 against riscemu: now ``tessera bench --only rv32,riscemu`` (this wrapper keeps the old path working).

The measurement moved into the ``tessera bench`` command (workloads ``rv32`` and
``riscemu``, offered by the riscv plugin: ``tessera_riscv.bench``): a C sum loop
compiled for RV32IM, run on both engines, and the same loop in riscemu in the same
process (``pip install -r requirements-bench.txt``).  Options are those of
``tessera bench``, e.g. ``python benchmarks/riscv_vs_riscemu.py --quick --json``.
"""

from __future__ import annotations

import sys

from tessera.cli.main import main

if __name__ == "__main__":
    main(["bench", "--only", "rv32,riscemu", *sys.argv[1:]])
