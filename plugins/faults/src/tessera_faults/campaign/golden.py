"""The golden run: the program without faults, what it outputs, and snapshots to fast-forward from.

Two runs of the program, in the process that starts the campaign:

1. a plain run on the fast engine: its outputs, steps, cycles, exit status, final state
   digest, and — when the campaign samples instruction classes — how often each class
   executes (counted by instrumenting just those instructions);
2. a run that stops at checkpoints spread evenly over those steps (``run.snapshots`` of
   them; pauses, so the run is the same run) and keeps, at each, the machine's snapshot
   (the safe snapshot format of ``tessera.machine.snapshot``), the standard output so
   far, a register digest and a digest of the whole machine (for convergence: see
   :mod:`~tessera_faults.campaign.task`).  It must end exactly as the first did: a program whose
   two runs differ cannot have a golden run, and the campaign stops saying so.

Checkpoint 0 is the machine just after loading, so an injection always restores a
snapshot — the nearest one at or before its trigger (GemFI's fast-forward); with
``snapshots = 0`` that is checkpoint 0, i.e. a run from the start.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from tessera.batch import captured_output, captured_text, error_line, exit_status
from tessera.errors import ConfigError, TesseraError
from tessera_faults.campaign.config import Campaign
from tessera_faults.campaign.observe import convergence_digest, outputs, register_digest, state_digest

__all__ = ["Checkpoint", "Golden", "build_machine", "golden_run"]

#: divergence checkpoints taken when no snapshots are (``run.snapshots = 0``)
DIGEST_POINTS = 16


@attrs.frozen
class Checkpoint:
    """The golden run at ``step``: its snapshot (``b""``: not kept), standard output so far,
    register digest, and convergence digest (``""``: ``run.converge`` is off)."""

    step: int
    snapshot: bytes
    stdout: str
    digest: str
    whole: str = ""


@attrs.frozen
class Golden:
    """What the golden run did (see the module doc)."""

    steps: int
    cycles: int
    exit: int
    outputs: dict[str, Any]
    state: str
    seconds: float
    checkpoints: tuple[Checkpoint, ...]
    class_counts: dict[str, int]

    def describe(self) -> dict[str, Any]:
        """For the campaign's metadata file (no snapshots)."""
        return {"steps": self.steps, "cycles": self.cycles, "exit": self.exit, "seconds": round(self.seconds, 6),
                "checkpoints": [c.step for c in self.checkpoints],
                "snapshots": sum(1 for c in self.checkpoints if c.snapshot),
                "snapshot_bytes": sum(len(c.snapshot) for c in self.checkpoints),
                "class_counts": dict(sorted(self.class_counts.items()))}


def build_machine(payload: Mapping[str, Any], host: Any) -> Any:
    """The machine of a checked ``[program]`` payload, its program loaded (as ``tessera run`` does)."""
    from tessera.loaders import load_program
    from tessera.machine import Machine

    arch = host.architecture(payload["arch"])
    machine = Machine(arch, host=host, memory_cap=payload["memory_cap"], config=payload["config"])
    load_program(machine, payload["program"], fmt=payload["format"], load=payload["load"],
                 entry=payload["entry"], auto_map=payload["auto_map"], any_elf_machine=payload["any_elf_machine"])
    machine.set_engine(payload["engine"])
    return machine


def _run(machine: Any, payload: Mapping[str, Any]) -> Any:
    return machine.run(max_steps=payload["max_steps"] or None, max_cycles=payload["max_cycles"],
                       max_seconds=payload["max_seconds"], until_pc=payload["until_pc"],
                       until_symbol=payload["until_symbol"], stop_on_trap=payload["stop_on_trap"])


class _ClassCounter:
    """Counts completed instructions of the campaign's classes (an injector-like entry of the
    faults plugin's registry: the plugin's hook instruments just those instructions)."""

    def __init__(self, classes: Sequence[str]) -> None:
        from tessera_faults.triggers import row_classes

        self.key = "(class counter)"
        self.classes = tuple(classes)
        self.counts = dict.fromkeys(self.classes, 0)
        self._row_classes = row_classes
        self._of: dict[Any, tuple[str, ...]] = {}

    def instrument(self, machine: Any, ins: Any) -> tuple[Any, Any] | None:
        found = self._of.get(ins.encoding)
        if found is None:
            names = self._row_classes(ins.encoding)
            found = self._of[ins.encoding] = tuple(c for c in self.classes if c in names)
        if not found:
            return None

        def after(agent: Any, ins: Any) -> None:
            for c in found:
                self.counts[c] += 1

        return None, after


def _first_run(campaign: Campaign, payload: Mapping[str, Any], host: Any) -> tuple[Any, dict[str, Any]]:
    from tessera_faults import injector

    machine = build_machine(payload, host)
    counter = None
    if campaign.classes:
        from tessera_faults.triggers import check_class

        archs = list({cpu.arch.name: cpu.arch for cpu in machine.cpus}.values())
        for cls in campaign.classes:
            problems = []
            for arch in archs:
                try:
                    check_class(arch, cls)
                    break
                except ConfigError as exc:
                    problems.append(exc)
            else:
                raise problems[0] if problems else ConfigError("faults.classes: the machine has no processor")
        if not injector.plugin_hooked(machine):
            raise ConfigError("faults.classes: counting instruction classes needs the faults plugin on the "
                              "machine's host")
        counter = _ClassCounter(campaign.classes)
        injector.INJECTORS.setdefault(machine, []).append(counter)  # type: ignore[arg-type]
        machine.flush_caches()
    start = machine.snapshot()
    t0 = time.perf_counter()
    with captured_output() as (out, _err):
        result = _golden_result(machine, payload)
        stdout = captured_text(out)
    seconds = time.perf_counter() - t0
    if counter is not None:
        injector.INJECTORS[machine].remove(counter)  # type: ignore[arg-type]
    status = exit_status(result)
    found = outputs(machine, campaign.outputs, stdout, status, golden=True)
    return machine, {"start": start, "result": result, "stdout": stdout, "exit": status, "outputs": found,
                     "state": state_digest(machine), "seconds": seconds,
                     "class_counts": dict(counter.counts) if counter is not None else {}}


def _golden_result(machine: Any, payload: Mapping[str, Any]) -> Any:
    try:
        result = _run(machine, payload)
    except TesseraError as exc:
        raise ConfigError(f"the golden run (no fault) did not end cleanly: {error_line(exc)}; a campaign "
                          "needs a program that runs to its end") from None
    if result.reason not in ("halted", "breakpoint"):
        raise ConfigError(f"the golden run (no fault) stopped with {result.reason}: a campaign needs a program "
                          "that runs to its end")
    return result


def checkpoint_steps(steps: int, snapshots: int) -> list[int]:
    """Checkpoint steps spread evenly over a run of ``steps`` (0 always first)."""
    points = snapshots if snapshots > 0 else DIGEST_POINTS
    return sorted({0, *(steps * i // (points + 1) for i in range(1, points + 1))} - {steps})


def golden_run(campaign: Campaign, payload: Mapping[str, Any], host: Any) -> Golden:
    """Both golden runs (see the module doc); a :class:`ConfigError` if the program fails or
    does not run the same twice."""
    machine, first = _first_run(campaign, payload, host)
    result = first["result"]
    steps = int(result.steps)
    points = checkpoint_steps(steps, campaign.snapshots)
    keep = campaign.snapshots > 0
    second = build_machine(payload, host)
    taken: list[Checkpoint] = []
    with captured_output() as (out, _err):
        def take(m: Any) -> None:
            snap = m.snapshot() if keep or m.total_steps == 0 else b""
            whole = convergence_digest(m) if campaign.converge else ""
            taken.append(Checkpoint(m.total_steps, snap, captured_text(out), register_digest(m), whole))

        for step in points:
            second.pause_at(step, take, plugin="faults")
        again = _golden_result(second, payload)
        stdout = captured_text(out)
    status = exit_status(again)
    if (int(again.steps), status, stdout) != (steps, first["exit"], first["stdout"]) \
            or outputs(second, campaign.outputs, stdout, status, golden=True) != first["outputs"]:
        raise ConfigError(f"the program did not run the same twice without faults ({steps} then {again.steps} "
                          "steps, or other outputs): a campaign needs a deterministic golden run")
    checkpoints = tuple(taken)
    if not checkpoints or checkpoints[0].step != 0:
        raise ConfigError("the golden run took no checkpoint at its start")
    checkpoints = (attrs.evolve(checkpoints[0], snapshot=first["start"]), *checkpoints[1:])
    return Golden(steps=steps, cycles=int(result.cycles), exit=first["exit"], outputs=first["outputs"],
                  state=first["state"], seconds=first["seconds"], checkpoints=checkpoints,
                  class_counts=first["class_counts"])
