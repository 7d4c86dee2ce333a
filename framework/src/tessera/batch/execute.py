"""Run one checked spec in this process and answer with a plain-dict result (one results line).

What a worker does with a spec is what ``tessera run`` does with the same options —
pick the architecture, build the machine with the settings, load the program, set the
engine, configure the tool plugins, run with the budgets and stop conditions, write
``--snapshot-out`` — except that nothing reaches the terminal: the program's standard
output and error (a RISC-V ``write``, a console device, log lines) are captured per run
and become the result's ``stdout`` and ``stderr``.  Nothing raises out of
:func:`execute`: a run that fails is a result with outcome ``error`` (or ``budget``,
``deadlock``) and the exit status ``tessera run`` would give (docs/cli.md, "Exit
statuses"; docs/errors.md), so one bad spec never stops a batch.

The capture replaces ``sys.stdout``/``sys.stderr``, which belong to the whole process,
so a process runs one spec at a time (:data:`_ONE_RUN`): a Dask worker with several
threads runs its tasks one after the other.  Emulation is Python code under the GIL,
so threads would not have run them faster anyway.
"""

from __future__ import annotations

import contextlib
import io
import threading
import time
from collections.abc import Iterator
from typing import Any

from tessera.errors import (
    INTERNAL_ERROR_EXIT,
    BudgetExceeded,
    Deadlock,
    HostMemoryError,
    TesseraError,
)

__all__ = ["RESULT_KEYS", "TIMING_KEYS", "captured_output", "captured_text", "crashed_result", "execute",
           "exit_status", "error_line", "run_in_worker", "worker_host"]

#: The keys of a result line, in the order they are written.
RESULT_KEYS = ("id", "spec_hash", "outcome", "exit", "exit_code", "steps", "cycles", "agent", "pc",
               "detail", "error", "stdout", "stderr", "seconds")
#: The keys that depend on the host's speed: everything else is the same on every run.
TIMING_KEYS = ("seconds",)

_ONE_RUN = threading.Lock()
_HOSTS: dict[Any, Any] = {}


def exit_status(result: Any = None, error: BaseException | None = None) -> int:
    """The exit status ``tessera run`` gives for a run that ended with ``result`` or ``error``.

    As ``tessera run`` (docs/cli.md, "Exit statuses"): a halted program's own exit code
    modulo 256; 0 for a stop at ``until_pc``/``until_symbol``/``stop_on_trap``; an error's
    class's code (69 for a budget, 71 a deadlock, docs/errors.md); 77 when the host ran
    out of memory; 76 for anything that is not a Tessera error (a bug).
    """
    if error is not None:
        if isinstance(error, TesseraError):
            return error.exit_code
        if isinstance(error, MemoryError):
            return HostMemoryError.exit_code
        return INTERNAL_ERROR_EXIT
    if result is not None and result.reason == "halted":
        return (result.exit_code or 0) & 0xFF
    return 0


def error_line(error: BaseException) -> str:
    """The one line ``tessera run`` prints for ``error`` (without its ``tessera: `` prefix)."""
    if isinstance(error, TesseraError):
        lines = str(error).splitlines()
        return lines[0] if len(lines) == 1 else f"{lines[0]} (and {len(lines) - 1} more lines)"
    if isinstance(error, MemoryError):
        return str(HostMemoryError("the host ran out of memory (lower memory_cap, the RAM size or the budget)"))
    first = str(error).splitlines()[0] if str(error) else ""
    return f"internal error: {type(error).__name__}: {first}"


def _outcome(result: Any, error: BaseException | None) -> str:
    if isinstance(error, BudgetExceeded):
        return "budget"
    if isinstance(error, Deadlock):
        return "deadlock"
    if error is not None:
        return "error"
    return str(result.reason)


@contextlib.contextmanager
def captured_output() -> Iterator[tuple[io.TextIOWrapper, io.TextIOWrapper]]:
    """``sys.stdout`` and ``sys.stderr`` (text and ``.buffer``) into memory, for one run.

    Holds the process's one-run lock (:data:`_ONE_RUN`) while capturing: the streams
    belong to the whole process, so two threads of a Dask worker take turns.
    """
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="replace", write_through=True)
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="replace", write_through=True)
    with _ONE_RUN, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        yield out, err


def captured_text(stream: io.TextIOWrapper) -> str:
    """What was written, as text; bytes that are not UTF-8 appear as ``\\xNN``."""
    stream.flush()
    data: bytes = stream.buffer.getvalue()  # type: ignore[attr-defined]
    return data.decode("utf-8", "backslashreplace")


def _run(payload: dict[str, Any], host: Any, state: dict[str, Any]) -> Any:
    """Build, load and run as ``tessera run`` does; the machine goes into ``state``."""
    from tessera.batch.tooloptions import ToolOptions
    from tessera.loaders import load_program
    from tessera.machine import Machine, configure_tools

    arch = host.architecture(payload["arch"])
    machine = Machine(arch, host=host, memory_cap=payload["memory_cap"], config=payload["config"])
    state["machine"] = machine
    load_program(machine, payload["program"], fmt=payload["format"], load=payload["load"],
                 entry=payload["entry"], auto_map=payload["auto_map"],
                 any_elf_machine=payload["any_elf_machine"])
    machine.set_engine(payload["engine"])
    configure_tools(machine, ToolOptions.of(host).values(payload["options"]))
    state["start"] = machine.total_steps
    return machine.run(max_steps=payload["max_steps"] or None, max_cycles=payload["max_cycles"],
                       max_seconds=payload["max_seconds"], until_pc=payload["until_pc"],
                       until_symbol=payload["until_symbol"], stop_on_trap=payload["stop_on_trap"])


def _save_snapshot(machine: Any, path: str) -> TesseraError | None:
    from tessera.errors import ConfigError

    try:
        machine.save_snapshot(path)
    except TesseraError as exc:
        return exc
    except OSError as exc:
        return ConfigError(f"cannot write {exc.filename or path}: {exc.strerror or exc}")
    return None


def execute(payload: dict[str, Any], host: Any) -> dict[str, Any]:
    """Run one spec (its checked ``payload``) with ``host``'s plugins; never raises.

    The answer has :data:`RESULT_KEYS`: ``outcome`` is the run's result reason
    (``halted``, ``breakpoint``, ``trap``) or ``budget``, ``deadlock``, ``error``; ``exit``
    the exit status ``tessera run`` would give; ``exit_code`` the program's own (the first
    non-daemon agent's, ``None`` if it has none); ``steps`` and ``cycles`` what the run
    used (``None`` when it never started); ``error`` the error's one line.
    """
    t0 = time.perf_counter()
    state: dict[str, Any] = {}
    result: Any = None
    error: BaseException | None = None
    with captured_output() as (out, err):
        try:
            result = _run(payload, host, state)
        except BudgetExceeded as exc:
            result, error = exc.result, exc
        except (TesseraError, MemoryError) as exc:
            error = exc
        except Exception as exc:  # noqa: BLE001 - a bug in a plugin or the core: an error outcome, the batch goes on
            error = exc
        machine = state.get("machine")
        if machine is not None and payload.get("snapshot_out"):
            failed = _save_snapshot(machine, payload["snapshot_out"])
            error = error or failed
        stdout, stderr = captured_text(out), captured_text(err)
    return _result(payload, machine, state.get("start"), result, error, stdout, stderr,
                   time.perf_counter() - t0)


def _result(payload: dict[str, Any], machine: Any, start: int | None, result: Any,
            error: BaseException | None, stdout: str, stderr: str, seconds: float) -> dict[str, Any]:
    started = machine is not None and start is not None
    steps = cycles = exit_code = agent = pc = None
    if result is not None:
        steps, cycles, exit_code, agent, pc = (result.steps, result.cycles, result.exit_code,
                                               result.agent, result.pc)
    elif started:
        steps, cycles = machine.total_steps - start, machine.clock
        primary = next((a for a in machine.agents if not a.daemon), None)
        exit_code = primary.exit_code if primary is not None else None
    if isinstance(error, TesseraError):
        agent = error.agent if error.agent is not None else agent
        pc = error.pc if error.pc is not None else pc
    return {
        "id": payload["id"],
        "spec_hash": payload["spec_hash"],
        "outcome": _outcome(result, error),
        "exit": exit_status(result, error),
        "exit_code": exit_code,
        "steps": steps,
        "cycles": cycles,
        "agent": agent,
        "pc": pc,
        "detail": result.detail if result is not None else "",
        "error": error_line(error) if error is not None else None,
        "stdout": stdout,
        "stderr": stderr,
        "seconds": round(seconds, 6),
    }


def crashed_result(payload: dict[str, Any], message: str, exit: int = INTERNAL_ERROR_EXIT) -> dict[str, Any]:
    """The result of a spec whose worker died or whose task failed outside :func:`execute`."""
    return {"id": payload["id"], "spec_hash": payload["spec_hash"], "outcome": "error", "exit": exit,
            "exit_code": None, "steps": None, "cycles": None, "agent": None, "pc": None, "detail": "",
            "error": message, "stdout": "", "stderr": "", "seconds": 0.0}


def worker_host(recipe: Any) -> Any:
    """The plugin host ``recipe`` builds, built once per process (tasks call this)."""
    host = _HOSTS.get(recipe)
    if host is None:
        host = _HOSTS[recipe] = recipe.build()
    return host


def run_in_worker(payload: dict[str, Any], recipe: Any) -> dict[str, Any]:
    """:func:`execute` with the plugin host ``recipe`` builds, built once per process.

    What the local pool's workers and Dask tasks call: it must be importable by name
    (Dask sends it by reference) and take only plain data.
    """
    try:
        host = worker_host(recipe)
    except Exception as exc:  # noqa: BLE001 - reported as this spec's error, like any other failure
        return crashed_result(payload, error_line(exc), exit_status(error=exc))
    return execute(payload, host)
