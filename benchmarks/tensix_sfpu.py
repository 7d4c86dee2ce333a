"""ns per 32-lane SFPU instruction: now ``tessera bench --only sfpu`` (this wrapper keeps the old path working).

The measurement moved into the ``tessera bench`` command (workload ``sfpu``, offered
by the Tensix plugin: ``tessera_tensix.bench``): an exp/recip kernel over a 32×32
FP32 tile in Tensix direct mode, beside as many SFPNOPs and the bare numpy floor.  Options are those of
``tessera bench``, e.g. ``python benchmarks/tensix_sfpu.py --quick --json``.
"""

from __future__ import annotations

import sys

from tessera.cli.main import main

if __name__ == "__main__":
    main(["bench", "--only", "sfpu", *sys.argv[1:]])
