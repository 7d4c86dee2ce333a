"""``run_batch``: check every spec, skip what the results file has, run the rest, stream results.

The order of work: every spec is parsed and checked first (so a bad line stops the
batch before anything runs); the results file is read and tidied (resume); the runs
left go to the backend, and each result is written the moment it arrives.  Results are
written in the order runs finish; what a result holds does not depend on that order,
on the number of workers or on the backend — only its ``seconds`` does.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import attrs

from tessera.batch.hostrecipe import HostRecipe
from tessera.batch.progress import BatchProgress
from tessera.batch.results import ResultsFile
from tessera.batch.spec import Spec, check_specs, parse_line, read_lines
from tessera.errors import ConfigError

__all__ = ["BatchSummary", "load_specs", "run_batch", "run_tasks"]


@attrs.frozen
class BatchSummary:
    """What a batch did.

    ``outcomes`` counts how every spec of the batch ended — those run now and those
    found done in the results file; ``ran`` is how many ran now, ``skipped`` how many
    were done before, ``rerun`` the ids run again because their spec or program changed.
    """

    total: int
    ran: int
    skipped: int
    rerun: tuple[str, ...]
    outcomes: dict[str, int]
    output: str
    seconds: float
    truncated: bool = False     # the results file ended in a line cut short (dropped, run again)

    def line(self) -> str:
        """One line for the terminal."""
        counts = ", ".join(f"{name} {n}" for name, n in sorted(self.outcomes.items())) or "nothing to run"
        done = f" ({self.skipped} done before)" if self.skipped else ""
        where = "" if self.output == "-" else f"; results in {self.output}"
        return f"batch: {self.total} runs{done}: {counts}{where} ({self.seconds:.1f} s)"


def load_specs(source: str | os.PathLike[str] | Iterable[Mapping[str, Any]], host: Any) -> list[Spec]:
    """Every spec of a batch file (a path) or of an iterable of dicts, checked against
    ``host`` — or the first problem, one line naming its line (``ConfigError``, ``LoadError``)."""
    if isinstance(source, str | os.PathLike):
        path = os.fspath(source)
        parsed = [(n, f"{path}:{n}", parse_line(text, f"{path}:{n}")) for n, text in read_lines(path)]
    else:
        parsed = []
        for n, item in enumerate(source, 1):
            where = f"spec {n}"
            if not isinstance(item, Mapping):
                raise ConfigError(f"{where}: a spec is a dict, not {type(item).__name__}")
            try:
                text = json.dumps(dict(item))
            except (TypeError, ValueError) as exc:
                raise ConfigError(f"{where}: not JSON data: {exc}") from None
            parsed.append((n, where, parse_line(text, where)))
    return check_specs(parsed, host)


def _default_host(host: Any) -> Any:
    if host is not None:
        return host
    from tessera.plugins import default_host

    return default_host()


def run_batch(specs: str | os.PathLike[str] | Iterable[Mapping[str, Any]], output: str | os.PathLike[str],
              *, workers: int | None = None, client: Any = None, host: Any = None,
              progress: bool | None = None, quiet: bool = False,
              on_note: Callable[[str], None] | None = None) -> BatchSummary:
    """Run a batch of ``tessera run`` specs; results stream to ``output`` (JSON lines).

    ``specs`` is a batch file's path or an iterable of dicts (docs/batch.md has the keys).
    Runs already in ``output`` with the same spec hash are skipped (resume).  They run on
    ``workers`` local processes (default: the CPU count), or on the Dask cluster of
    ``client`` (a ``distributed.Client``) when one is given.  ``host`` chooses the plugins
    (default: the process's host); workers load the same selection.  ``progress`` shows a
    progress bar on stderr (``None``: when stderr is a terminal); notes — a changed spec
    run again, a cut-short last line dropped — go to ``on_note``, else to stderr unless
    ``quiet``.
    """
    t0 = time.perf_counter()
    if client is None and workers is not None and workers < 1:
        raise ConfigError(f"workers must be at least 1, not {workers}")
    host = _default_host(host)
    checked = load_specs(specs, host)
    recipe = HostRecipe.from_host(host)
    out = os.fspath(output)
    if isinstance(specs, str | os.PathLike) and out != "-" \
            and os.path.abspath(out) == os.path.abspath(os.fspath(specs)):
        raise ConfigError(f"the results file {out} is the batch file itself: choose another output")
    results = ResultsFile(out)
    results.open({s.id: s.hash for s in checked})
    todo = [s for s in checked if s.id not in results.done]
    outcomes: Counter[str] = Counter(r["outcome"] for r in results.done.values())
    try:
        with BatchProgress(len(todo), enabled=progress, skipped=len(results.done), quiet=quiet) as bar:
            note = on_note or bar.note
            if results.truncated:
                note(f"{out}: dropped a last line cut short by an interrupted write; that run is done again")
            where = {s.id: s.where for s in checked}
            for ident in results.stale:
                note(f"{where[ident]}: the spec of {ident!r} changed since its result was written: "
                     "running it again")
            for result in _results([s.payload for s in todo], recipe, workers, client):
                results.write(result)
                outcomes[result["outcome"]] += 1
                bar.advance(result["outcome"])
    finally:
        results.close()
    return BatchSummary(total=len(checked), ran=len(todo), skipped=len(checked) - len(todo),
                        rerun=tuple(results.stale), outcomes=dict(sorted(outcomes.items())), output=out,
                        seconds=time.perf_counter() - t0, truncated=results.truncated)


def _results(payloads: list[dict[str, Any]], recipe: HostRecipe, workers: int | None,
             client: Any) -> Iterable[dict[str, Any]]:
    yield from run_tasks(payloads, recipe, workers=workers, client=client)


def run_tasks(payloads: Iterable[dict[str, Any]], recipe: HostRecipe, *, task: str | None = None,
              shared: Any = None, workers: int | None = None, client: Any = None) -> Iterator[dict[str, Any]]:
    """Run ``task`` on every payload, on local worker processes or a Dask cluster; yields the
    results in the order they finish.

    The engine under :func:`run_batch`, public for tools that run many independent jobs of
    their own (a fault-injection campaign): ``task`` is ``"module.path:function"``, called in
    a worker as ``function(payload, recipe)`` — or ``function(payload, recipe, shared)`` when
    ``shared`` is given: data every payload needs, sent to each worker once (pickled to local
    workers, scattered to Dask workers) — and must return a dict, never raise, and be
    importable in the workers.  A payload is plain data with at least ``id`` and
    ``spec_hash``; a payload whose worker dies gets an ``error`` result naming how
    (:func:`tessera.batch.execute.crashed_result`).  Defaults: one ``tessera run`` spec per
    payload (``run_batch``'s task), ``workers`` the CPU count.
    """
    from tessera.batch.backends import DEFAULT_TASK, dask_results, local_results, task_function

    name = task or DEFAULT_TASK
    task_function(name)  # a task that cannot be imported here is refused before any worker starts
    if client is None and workers is not None and workers < 1:
        raise ConfigError(f"workers must be at least 1, not {workers}")
    todo = list(payloads)
    if not todo:
        return
    if client is not None:
        stream = dask_results(todo, recipe, client, task=name, shared=shared)
    else:
        count = workers if workers is not None else (os.cpu_count() or 1)
        stream = local_results(todo, recipe, count, task=name, shared=shared)
    with contextlib.closing(stream):  # stops the workers however the loop ends
        yield from stream
