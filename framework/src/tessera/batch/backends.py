"""Where runs execute: a pool of local worker processes, or a Dask distributed cluster.

Both take checked payloads and yield results in the order runs finish; both run each
spec with :func:`tessera.batch.execute.run_in_worker`, so a result does not depend on
the backend or on the number of workers.

**Local pool.**  ``workers`` processes, each a fresh ``python -m tessera.batch.worker``
(:mod:`tessera.batch.worker`: no state inherited from the parent, safe whatever threads
the parent has, and no re-import of the parent's main module) running one spec at a
time and asking for the next.  A worker that dies while running a spec (killed, out of
memory, a crash in native code) costs only that spec: it gets an ``error`` result
saying so, with the exit status a shell would show (137 for ``SIGKILL``), and a fresh
worker takes its place.  Workers run in sessions of their own, out of reach of the
terminal's Ctrl-C; the batch stops them when it stops.

**Dask.**  Each spec is one task (``client.submit``), at most a few per worker thread
in flight so a batch of a million lines does not flood the scheduler; a task that
fails — Dask gives up on one whose workers keep dying (``KilledWorker``) — is an
``error`` result, and the batch goes on.  ``distributed`` is imported only here.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections import deque
from collections.abc import Generator, Iterable
from multiprocessing.connection import Connection, wait
from typing import Any

from tessera.batch.execute import crashed_result
from tessera.errors import ConfigError

__all__ = ["DASK_MISSING", "DEFAULT_TASK", "connect", "scheduler_option", "dask_results", "local_results", "task_function"]

#: What a worker runs for each payload unless told otherwise: one ``tessera run`` spec.
DEFAULT_TASK = "tessera.batch.execute:run_in_worker"


def task_function(name: str) -> Any:
    """The function ``module.path:attr`` names (a task: ``fn(payload, recipe[, shared])``)."""
    import importlib

    module, _, attr = name.partition(":")
    try:
        fn = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"task {name!r} cannot be imported: {exc}") from None
    if not callable(fn):
        raise ConfigError(f"task {name!r} is not a function")
    return fn


def call_task(fn: Any, payload: dict[str, Any], recipe: Any, shared: Any) -> dict[str, Any]:
    """Run one payload: ``fn(payload, recipe)``, or with ``shared`` data when there is some."""
    result: dict[str, Any] = fn(payload, recipe) if shared is None else fn(payload, recipe, shared)
    return result

#: The one line saying how to get Dask.
DASK_MISSING = ("a Dask cluster needs the distributed package, which is not installed: "
                "pip install 'tessera[dask]'")


# --------------------------------------------------------------------------- local pool


class _Worker:
    """One ``python -m tessera.batch.worker`` process and the two pipes to it."""

    def __init__(self, recipe: Any, task: str, shared: Any) -> None:
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "tessera.batch.worker", str(to_child_r), str(from_child_w)],
                pass_fds=(to_child_r, from_child_w), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                start_new_session=True, close_fds=True)
        finally:
            os.close(to_child_r)
            os.close(from_child_w)
        self.outbox = Connection(to_child_w, readable=False)
        self.inbox = Connection(from_child_r, writable=False)
        self.payload: dict[str, Any] | None = None
        self.outbox.send(list(sys.path))
        self.outbox.send(recipe)
        self.outbox.send((task, shared))  # sent once per worker, not with every payload

    def give(self, payload: dict[str, Any]) -> None:
        self.payload = payload
        self.outbox.send(payload)

    def answer(self) -> dict[str, Any] | None:
        """The result it sent, or ``None`` if it died instead."""
        try:
            result: dict[str, Any] = self.inbox.recv()
        except (EOFError, OSError):
            return None
        return result

    def death(self) -> tuple[str, int]:
        """How the process ended: words for the message, and the exit status a shell shows."""
        code = self.process.wait()
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return f"killed by {name}", 128 - code
        return f"exit status {code}", code or 1

    def stop(self, kill: bool) -> None:
        if not kill:
            try:
                self.outbox.send(None)
                self.process.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                pass
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.outbox.close()
        self.inbox.close()


def local_results(payloads: Iterable[dict[str, Any]], recipe: Any, workers: int, *, task: str = DEFAULT_TASK,
                  shared: Any = None) -> Generator[dict[str, Any], None, None]:
    """Run ``payloads`` on ``workers`` local processes; results in the order they finish.

    Each worker calls ``task`` (``module:function``) on every payload, with ``shared``
    (data every payload needs, sent to each worker once) when it is not ``None``.
    """
    todo = deque(payloads)
    pool: list[_Worker] = []
    busy: dict[Any, _Worker] = {}
    stopped_cleanly = False
    try:
        for _ in range(max(1, min(workers, len(todo)))):
            pool.append(_Worker(recipe, task, shared))
        for worker in pool:
            if todo:
                worker.give(todo.popleft())
                busy[worker.inbox] = worker
        while busy:
            for ready in wait(list(busy)):
                worker = busy.pop(ready)
                payload = worker.payload
                assert payload is not None
                result = worker.answer()
                if result is None:  # it died running this spec: report it, start another
                    how, status = worker.death()
                    result = crashed_result(payload, f"the worker process running this spec died ({how})",
                                            status)
                    worker.stop(kill=True)
                    pool.remove(worker)
                    worker = _Worker(recipe, task, shared)
                    pool.append(worker)
                worker.payload = None
                if todo:
                    worker.give(todo.popleft())
                    busy[worker.inbox] = worker
                yield result
        stopped_cleanly = True
    finally:  # Ctrl-C, an error, or the caller closing us early: nothing may outlive the batch
        for worker in pool:
            worker.stop(kill=not stopped_cleanly)


# --------------------------------------------------------------------------- Dask


def _distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise ConfigError(DASK_MISSING) from None
    return distributed


#: a scheduler address: ``[PROTOCOL://]HOST:PORT`` (a host name, an IPv4 address or a
#: bracketed IPv6 one), with a protocol Dask's comms know
_ADDRESS = re.compile(r"(?:(?:tcp|tls|ws|wss|ucx)://)?(?:[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])"
                      r":(\d{1,5})")


def check_address(address: str) -> str | None:
    """Why ``address`` is not a scheduler address (None: it looks like one).  Checked before
    Dask sees it: Dask answers some malformed addresses with exceptions of its own and may
    keep its event loop threads waiting."""
    match = _ADDRESS.fullmatch(address)
    if match is None:
        return f"{address!r} is not a scheduler address: write tcp://HOST:PORT"
    if not 0 < int(match.group(1)) < 65536:
        return f"{address!r}: port {int(match.group(1))} is not 1..65535"
    return None


def scheduler_option(_ctx: Any, _param: Any, value: str | None) -> str | None:
    """A click callback for a ``--scheduler`` option: a malformed address is a usage error
    (exit 2) before anything connects."""
    import click

    problem = None if value is None else check_address(value)
    if problem is not None:
        raise click.BadParameter(problem)
    return value


def connect(address: str) -> Any:
    """A Dask client of the scheduler at ``address`` (``tcp://HOST:PORT``)."""
    problem = check_address(address)
    if problem is not None:
        raise ConfigError(f"--scheduler {problem}")
    distributed = _distributed()
    try:
        return distributed.Client(address, timeout=10)
    except (OSError, TimeoutError, ValueError) as exc:
        raise ConfigError(f"cannot reach the Dask scheduler at {address}: {exc}") from None


def call_tasks(fn: Any, payloads: list[dict[str, Any]], recipe: Any, shared: Any) -> list[dict[str, Any]]:
    """Run a chunk of payloads one after the other (one Dask task: see :func:`dask_results`)."""
    return [call_task(fn, payload, recipe, shared) for payload in payloads]


#: the most payloads one Dask task runs, and how many tasks per worker thread a batch is
#: at least cut into (so the slowest chunk does not leave threads idle at the end)
CHUNK_MAX, CHUNKS_PER_THREAD = 16, 8


def chunk_size(count: int, threads: int) -> int:
    """Payloads per Dask task: many short runs share a task, because each task costs the
    scheduler and the worker some milliseconds of their own (measured: 8–10 ms of the
    client's process per task; on a 2-core machine that time is taken from the runs)."""
    return max(1, min(CHUNK_MAX, count // max(1, threads * CHUNKS_PER_THREAD)))


def dask_results(payloads: Iterable[dict[str, Any]], recipe: Any, client: Any, *, task: str = DEFAULT_TASK,
                 shared: Any = None) -> Generator[dict[str, Any], None, None]:
    """Run ``payloads`` as tasks of ``client``'s cluster; results in the order they finish.

    ``shared`` is scattered to every worker once (``client.scatter(broadcast=True)``) and
    each task gets it from there, so large data (a campaign's golden snapshots) is not
    sent with every task.  Payloads travel in chunks (:func:`chunk_size`): a task runs
    several, and its results arrive together when it finishes.
    """
    distributed = _distributed()
    fn = task_function(task)
    shared_data = client.scatter(shared, broadcast=True) if shared is not None else None
    items = list(payloads)
    threads = sum(client.nthreads().values()) or 1
    size = chunk_size(len(items), threads)
    todo = iter([items[i:i + size] for i in range(0, len(items), size)])
    window = max(4, 2 * threads)
    pending: dict[Any, list[dict[str, Any]]] = {}
    finished = distributed.as_completed()

    def submit() -> bool:
        chunk = next(todo, None)
        if chunk is None:
            return False
        future = client.submit(call_tasks, fn, chunk, recipe, shared_data, pure=False)
        pending[future] = chunk
        finished.add(future)
        return True

    try:
        while len(pending) < window and submit():
            pass
        for future in finished:
            chunk = pending.pop(future)
            if future.status == "finished":
                results = future.result()
            else:
                exc = future.exception()
                results = [crashed_result(payload, f"the Dask task running this spec failed: "
                                                   f"{type(exc).__name__}: {exc}") for payload in chunk]
            future.release()
            submit()
            yield from results
    finally:
        if pending:
            client.cancel(list(pending))
