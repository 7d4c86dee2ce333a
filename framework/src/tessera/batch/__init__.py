"""Batch runs: many independent ``tessera run`` specifications, on local processes or a Dask cluster.

A batch is a JSON-lines file (or a list of dicts), one run per line — program,
architecture, settings, budgets, as ``tessera run`` takes them (docs/batch.md).
:func:`run_batch` checks every spec first, skips those whose results are already in
the output file (resume), runs the rest on a local process pool or a Dask cluster and
writes one result line per run as it finishes.  ``tessera batch`` is the command line
over it.

Modules: :mod:`~tessera.batch.spec` (a line checked), :mod:`~tessera.batch.execute`
(one run in a worker), :mod:`~tessera.batch.backends` (local pool, Dask; any task, for
tools such as fault-injection campaigns: :func:`run_tasks`),
:mod:`~tessera.batch.results` (the results file and resume),
:mod:`~tessera.batch.runner` (the whole batch), :mod:`~tessera.batch.cli` (the command).
"""

from __future__ import annotations

from tessera.batch.backends import check_address, connect, scheduler_option
from tessera.batch.execute import (
    RESULT_KEYS,
    TIMING_KEYS,
    captured_output,
    captured_text,
    crashed_result,
    error_line,
    exit_status,
    worker_host,
)
from tessera.batch.hostrecipe import HostRecipe
from tessera.batch.progress import BatchProgress
from tessera.batch.results import ResultsFile, read_results
from tessera.batch.runner import BatchSummary, load_specs, run_batch, run_tasks
from tessera.batch.spec import KEYS, Spec

__all__ = ["KEYS", "RESULT_KEYS", "TIMING_KEYS", "BatchProgress", "BatchSummary", "HostRecipe", "ResultsFile",
           "Spec", "captured_output", "check_address", "connect", "captured_text", "crashed_result", "error_line", "exit_status", "load_specs", "read_results", "run_batch",
           "run_tasks", "scheduler_option", "worker_host"]
