"""The same batch on a Dask cluster (a ``distributed.LocalCluster`` of two worker processes)
gives the same results as on the local pool, and resumes from the local pool's file."""

from __future__ import annotations

import pytest

from tessera.batch import read_results, run_batch

from .conftest import batch_lines, untimed, write_batch
from .test_batch_local import KILLER

distributed = pytest.importorskip("distributed", reason="tessera[dask] (distributed) is not installed")


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, distributed.Client(cluster) as c:
        yield c


def test_a_dask_cluster_gives_the_local_pools_results(programs, toy_host, client):
    batch = write_batch(programs / "runs.jsonl", batch_lines())
    dask = run_batch(batch, "dask.jsonl", client=client, host=toy_host, progress=False)
    local = run_batch(batch, "local.jsonl", workers=2, host=toy_host, progress=False)
    assert dask.ran == local.ran == len(batch_lines()) and dask.outcomes == local.outcomes
    assert untimed(read_results("dask.jsonl")) == untimed(read_results("local.jsonl"))


def test_a_batch_begun_locally_is_finished_on_dask(programs, toy_host, client):
    lines = batch_lines()
    batch = write_batch(programs / "runs.jsonl", lines)
    run_batch(lines[:4], "out.jsonl", workers=1, host=toy_host, progress=False)
    summary = run_batch(batch, "out.jsonl", client=client, host=toy_host, progress=False)
    assert (summary.skipped, summary.ran) == (4, len(lines) - 4)
    run_batch(batch, "local.jsonl", workers=2, host=toy_host, progress=False)
    assert untimed(read_results("out.jsonl")) == untimed(read_results("local.jsonl"))


def test_a_task_whose_worker_dies_is_an_error_result(programs, toy_host, monkeypatch):
    """Dask gives up on a task that killed its worker (``KilledWorker``, at once with
    ``allowed-failures`` 0): that spec is an ``error`` result and the batch goes on."""
    import dask

    (programs / "batch_dask_killer.py").write_text(KILLER)
    (programs / "die.s").write_text("_start: nop\ndie:    halt r0\n")
    monkeypatch.syspath_prepend(str(programs))
    monkeypatch.setenv("PYTHONPATH", str(programs))      # the nanny's fresh worker imports it too
    toy_host.load_module("killer=batch_dask_killer")
    lines = [{"id": "die", "program": "die.s", "arch": "toy", "set": {"cores": 1}},
             {"id": "after", "program": "sum.s", "arch": "toy", "set": {"cores": 1}}]
    # two workers, one task each: only the killer's task was on the worker that died
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}), \
            distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                     dashboard_address=":0") as cluster, distributed.Client(cluster) as c:
        summary = run_batch(lines, "out.jsonl", client=c, host=toy_host, progress=False)
    results = read_results("out.jsonl")
    assert summary.outcomes == {"error": 1, "halted": 1}
    assert results["die"]["error"].startswith("the Dask task running this spec failed: KilledWorker")
    assert results["after"]["exit"] == 55


def test_dask_tasks_carry_chunks_of_runs_but_leave_every_thread_work():
    from tessera.batch.backends import CHUNK_MAX, CHUNKS_PER_THREAD, chunk_size

    assert chunk_size(5, 2) == 1                       # a small batch: one run per task
    assert chunk_size(240, 2) == 240 // (2 * CHUNKS_PER_THREAD)
    assert chunk_size(10**6, 2) == CHUNK_MAX           # never more than CHUNK_MAX a task
    assert chunk_size(240, 64) == 1                    # many threads: one run each, none idle
