"""``tessera bench``: Tessera's speed against its peers, measured in one process run.

No test depends on timing; this package is the one place speed is measured.  Each
workload (``phoenix``, ``rv32``, ``riscemu``, ``sfpu``, ``hooks``, ``tracing``) is
a small module, and ``startup`` times whole ``tessera`` commands as a user
waits for them; :mod:`tessera.bench.runner` runs them interleaved and best-of-K,
:mod:`tessera.bench.report` prints the result.  Every sample's result is checked,
so a fast wrong answer is a failure, never a benchmark number.  See
docs/performance.md for what each workload measures and the targets.

This module imports nothing: the ``tessera`` command lists the names below in
its help without paying for numpy and the machine model at every start.
"""

#: the workloads, in run and report order (``tessera.bench.runner.WORKLOADS`` maps them)
WORKLOAD_NAMES = ("phoenix", "rv32", "riscemu", "sfpu", "hooks", "tracing", "startup")
