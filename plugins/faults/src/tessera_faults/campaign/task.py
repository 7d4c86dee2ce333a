"""One injection, in a worker: restore, fast-forward, inject, run on, classify.

:func:`inject_one` is the task the campaign hands :func:`tessera.batch.run_tasks`: it
runs in a local worker process or on a Dask worker, takes only plain data — the fault's
payload, the plugin host recipe, and the campaign's *shared* data (the golden run's
checkpoints as snapshot bytes in the safe snapshot format, its outputs, the budget),
sent to each worker once — and never raises: whatever happens is a result line.

The run: restore the nearest checkpoint at or before the trigger, arm the fault (a
counted trigger is a pause: the run stays on the fast engine up to it), run with the
hang budget (the golden run's steps × ``budget_factor`` + ``budget_slack``, counted from
the start of the program), and at every later checkpoint compare the registers with
the golden run's there (``diverged_at``: the first that differs).  When they are equal,
the fault has done its work (not a stuck-at still holding) and the standard output so far
is the golden run's, the whole machine is compared too (``convergence_digest``): equal,
the rest of the run would be the golden run's, so it stops there as ``masked``
(``converged_at``) — most masked faults cost one checkpoint interval, not the rest of the
program (``[run] converge = false`` runs every injection to its end).  Before any of
that, when the golden run's def/use record (:mod:`~tessera_faults.campaign.liveness`)
says the register a one-value fault changed is written before it is read again, or never
accessed again, a pause right after the injection stops the run: ``masked`` or
``latent``, ``pruned`` saying which (``[run] prune = false`` turns it off).  Then
:func:`classify`:

==================  ======================================================================
``crash``           the run ended with an error: an unhandled trap, a memory fault, a rule
                    of the architecture broken (any Tessera error but the two below)
``hang``            the budget ran out
``deadlock``        every agent waits and none can go on
``not-injected``    the trigger never fired (the fault changed nothing)
``detected``        the exit status is one of ``[outputs] detected`` (and not the golden's)
``sdc``             an output differs (silent data corruption): ``differs`` names which —
                    ``check`` when the program's own golden check failed at its end (a
                    Tensix kernel manifest's; :class:`~tessera.errors.CheckFailed`)
``latent``          the outputs are right, but the final architectural state differs
``masked``          nothing differs
``error``           the tool failed (not the program): the result's ``error`` says how
==================  ======================================================================
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable
from typing import Any

from tessera.batch import captured_output, captured_text, error_line, exit_status, worker_host
from tessera.errors import BudgetExceeded, CheckFailed, Deadlock, TesseraError
from tessera_faults.campaign.config import OutputSpec
from tessera_faults.campaign.observe import convergence_digest, outputs, register_digest, state_digest

__all__ = ["FAILURES", "OUTCOMES", "classify", "inject_one"]

#: every outcome, in the order reports list them
OUTCOMES = ("masked", "latent", "sdc", "detected", "crash", "hang", "deadlock", "not-injected", "error")
#: the outcomes that count as a failure of the program (what a vulnerability factor counts)
FAILURES = ("sdc", "detected", "crash", "hang", "deadlock")
#: fault records' statuses after which the fault has done its work
_APPLIED = ("injected", "stuck")


class Pruned(TesseraError):
    """Raised from the pause just after the injection when the golden run never reads the
    faulted register again (:mod:`~tessera_faults.campaign.liveness`); caught in
    :func:`_inject`, never seen outside."""

    exit_code = 0
    kind = "pruned"

    def __init__(self, how: str, at: int | None) -> None:
        super().__init__(f"the faulted register is {how}")
        self.how, self.at = how, at


class Converged(TesseraError):
    """Raised from a checkpoint's pause to end an injection whose machine is the golden run's
    again (caught in :func:`_inject`, never seen outside)."""

    exit_code = 0
    kind = "converged"


def _base(payload: dict[str, Any]) -> dict[str, Any]:
    return {"id": payload["id"], "spec_hash": payload["spec_hash"], "fault": payload["fault"],
            "population": payload["population"], "model": payload["model"], "class": payload.get("class"),
            "structure": None, "entry": None, "bits": None, "old": None, "new": None, "step": payload.get("step"),
            "outcome": "error", "exit": None, "error": None, "steps": None, "cycles": None, "differs": [],
            "diverged_at": None, "converged_at": None, "pruned": None, "from_step": None, "seconds": 0.0}


def classify(error: BaseException | None, record: dict[str, Any], differs: list[str], exit: int | None,
             golden_exit: int, detected: tuple[int, ...], latent: bool) -> str:
    """The outcome of a finished injection run (the table of the module doc)."""
    if isinstance(error, BudgetExceeded):
        return "hang"
    if isinstance(error, Deadlock):
        return "deadlock"
    if isinstance(error, CheckFailed):
        return "sdc"  # the program ran to its end; its golden check found the output wrong
    if isinstance(error, TesseraError):
        return "crash"
    if error is not None:
        return "error"
    if record.get("status") not in _APPLIED:
        return "not-injected"
    if exit is not None and exit != golden_exit and exit in detected:
        return "detected"
    if differs:
        return "sdc"
    return "latent" if latent else "masked"


def inject_one(payload: dict[str, Any], recipe: Any, shared: dict[str, Any]) -> dict[str, Any]:
    """Inject ``payload``'s fault into the campaign's program (see the module doc); never raises."""
    t0 = time.perf_counter()
    out = _base(payload)
    try:
        _inject(payload, recipe, shared, out)
    except Exception as exc:  # noqa: BLE001 - the tool failed on this fault: an error result, the campaign goes on
        out.update(outcome="error", error=error_line(exc))
    out["seconds"] = round(time.perf_counter() - t0, 6)
    return out


def _inject(payload: dict[str, Any], recipe: Any, shared: dict[str, Any], out: dict[str, Any]) -> None:
    from tessera.machine import Machine
    from tessera_faults.injector import inject

    host = worker_host(recipe)
    checkpoints = shared["checkpoints"]
    steps = [c[0] for c in checkpoints]
    step = payload.get("step")
    at = 0 if step is None else max(0, bisect.bisect_right(steps, step) - 1)
    while not checkpoints[at][1]:  # only the snapshots kept (checkpoint 0 always is)
        at -= 1
    start, snapshot, stdout_before = checkpoints[at][:3]
    machine = Machine.restore(snapshot, host=host)
    machine.set_engine(shared["engine"])
    out["from_step"] = start
    golden = shared["golden"]
    spec = OutputSpec(**shared["outputs"])
    with captured_output() as (stream, _err):
        record = inject(machine, payload["fault"])
        diverged: list[int] = []

        def comparer(digest: str, whole: str, golden_stdout: str) -> Callable[[Any], None]:
            def compare(m: Any) -> None:
                status = record.get("status")
                if status not in _APPLIED:
                    return
                if register_digest(m) != digest:
                    if not diverged:
                        diverged.append(m.total_steps)
                elif whole and status == "injected" and stdout_before + captured_text(stream) == golden_stdout \
                        and convergence_digest(m) == whole:
                    raise Converged(f"the machine is the golden run's again at step {m.total_steps}")

            return compare

        live = shared.get("liveness")
        if live and step is not None:
            machine.pause_at(step, _pruner(live, record, spec), plugin="faults")
        for cp_step, _snap, text, digest, whole in checkpoints:
            if cp_step > start and (step is None or cp_step > step):
                machine.pause_at(cp_step, comparer(digest, whole, text), plugin="faults")
        result: Any = None
        error: BaseException | None = None
        converged = None
        pruned: Pruned | None = None
        try:
            result = machine.run(max_steps=max(1, shared["budget"] - machine.total_steps))
        except BudgetExceeded as exc:
            result, error = exc.result, exc
        except Converged:
            converged = machine.total_steps
        except Pruned as exc:
            pruned = exc
        except TesseraError as exc:
            error = exc
        stdout = stdout_before + captured_text(stream)
    _fault_fields(out, record)
    out["diverged_at"] = diverged[0] if diverged else None
    if pruned is not None:  # the rest of the run is the golden run's, but for one dead register
        _pruned_result(out, pruned, steps, golden)
        return
    if converged is not None:  # the rest of the run is the golden run's
        out.update(outcome="masked", converged_at=converged, steps=golden["steps"], cycles=golden["cycles"],
                   exit=golden["exit"])
        return
    status = exit_status(result, error)
    out.update(steps=machine.total_steps, cycles=machine.clock, exit=status,
               error=error_line(error) if error is not None else None)
    differs: list[str] = []
    latent = False
    finished = error is None or isinstance(error, CheckFailed)
    if finished and record.get("status") in _APPLIED:
        found = outputs(machine, spec, stdout, status)
        differs = [name for name, value in golden["outputs"].items() if found.get(name) != value]
        if error is not None:
            differs.append("check")
        latent = not differs and state_digest(machine) != golden["state"]
    out["differs"] = differs
    out["outcome"] = classify(error, record, differs, status if error is None else None, golden["exit"],
                              spec.detected, latent)


def _fault_fields(out: dict[str, Any], record: dict[str, Any]) -> None:
    """What the fault changed and where it fired, from the injector's record."""
    for key, field in (("structure", "name"), ("entry", "target"), ("bits", "bits"), ("old", "old"),
                       ("new", "new")):
        out[key] = record.get(field)
    if out["structure"] is None and record.get("status") in _APPLIED and str(record.get("target", "")).endswith(".insn"):
        out["structure"] = record["target"]
    if record.get("step") is not None:
        out["step"] = record["step"]


def _pruner(live: dict[str, Any], record: dict[str, Any], spec: OutputSpec) -> Callable[[Any], None]:
    """The pause just after a step trigger: stop the run when the register the fault changed
    is dead in the golden run from here (:func:`~tessera_faults.campaign.liveness.classify_dead`).
    An unread register makes the fault latent only when no output can see registers."""
    from tessera_faults.campaign.liveness import classify_dead

    def prune(m: Any) -> None:
        entry = live.get(str(record.get("name")))
        if entry is None or record.get("status") != "injected" or record.get("step") != m.total_steps \
                or record.get("new") == record.get("old"):
            return
        agent = m.agent(str(record["name"]).rsplit(".", 1)[0])
        local = int(agent.instret)
        how, at = classify_dead(entry, int(record["index"]), local)
        if how == "read" or (how == "unread" and (spec.structures or spec.checker)):
            return
        # the step after the overwriting instruction, where one agent's count is the machine's
        after = m.total_steps + (at - local) + 1 if at is not None and len(m.cpus) == 1 else None
        raise Pruned(how, after)

    return prune


def _pruned_result(out: dict[str, Any], pruned: Pruned, checkpoints: list[int], golden: dict[str, Any]) -> None:
    """The result of a pruned injection: the golden run's end, the register masked or latent;
    ``diverged_at`` / ``converged_at`` as the checkpoints would have seen them."""
    step = out["step"]
    later = [c for c in checkpoints if c > max(step, out["from_step"] or 0)]
    if pruned.how == "unread":
        out.update(outcome="latent", diverged_at=later[0] if later else None)
    else:
        until = pruned.at
        differs = [c for c in later if until is not None and c < until]
        out.update(outcome="masked", converged_at=until, diverged_at=differs[0] if differs else None)
    out.update(pruned=pruned.how, steps=golden["steps"], cycles=golden["cycles"], exit=golden["exit"], differs=[])
