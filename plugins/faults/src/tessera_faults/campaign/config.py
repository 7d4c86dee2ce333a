"""A campaign file (TOML), read and checked: the program, what counts as its output, the fault space.

::

    name = "sum"                      # default: the file's stem
    seed = 1                          # the seed of the fault list (and of every fault's own choices)

    [program]                         # one run, as a line of `tessera batch` (docs/batch.md)
    program = "sum.elf"               # relative paths are relative to the campaign file
    arch = "rv32im"
    set = { ram = "1M" }

    [outputs]                         # what must equal the golden run's for a run to be correct
    stdout = true                     # the program's standard output (default true)
    exit = true                       # its exit status (default true)
    memory = ["result:+4"]            # ranges: SYM or ADDR, then :+SIZE or :END (symbols allowed)
    structures = []                   # fault targets compared whole at the end (t0.v, dest, ...)
    checker = "mymodule:check"        # function(machine) -> JSON value, compared with the golden's
    detected = [3]                    # exit statuses by which the program says it caught an error

    [faults]
    targets = ["hart0.x", "mem.ram[0x1000:0x1100]"]   # structures, or a range of their entries
    classes = []                      # NVBitFI-style: destinations of instructions of these classes
    models = ["flip"]                 # flip, flip:K (K adjacent bits), flip:K:random, random, zero,
                                      # stuck0, stuck1, skip
    sampling = "statistical"          # exhaustive | random | statistical
    count = 100                       # random: faults per population
    margin = 0.05                     # statistical: the error margin ...
    confidence = 0.95                 # ... at this confidence (Leveugle et al., DATE 2009)
    window = [0, 1000]                # the steps triggers fall in (default: the whole golden run)
    stuck_window = 100                # a stuck-at's length in instructions (default: to the end)
    faults = []                       # explicit faults (``--fault`` texts), run as well

    [run]
    snapshots = 32                    # golden-run snapshots to fast-forward from (0: from the start)
    budget_factor = 2.0               # a run longer than golden steps × this (+ budget_slack) hangs
    budget_slack = 1000
    converge = true                   # stop a run whose whole state is the golden run's again (masked)
    prune = true                      # decide faults in registers never read again without running on
    max_faults = 1000000              # refuse a fault list longer than this

Every problem is one :class:`~tessera.errors.ConfigError` line naming the file and the key.
"""

from __future__ import annotations

import math
import os
import tomllib
from collections.abc import Mapping
from typing import Any

import attrs

from tessera.errors import ConfigError, LoadError

__all__ = ["SAMPLINGS", "Campaign", "ModelChoice", "OutputSpec", "load_campaign"]

SAMPLINGS = ("exhaustive", "random", "statistical")
TOP_KEYS = ("name", "seed", "program", "outputs", "faults", "run")
OUTPUT_KEYS = ("stdout", "exit", "memory", "structures", "checker", "detected")
FAULT_KEYS = ("targets", "classes", "models", "sampling", "count", "margin", "confidence", "window",
              "stuck_window", "faults")
RUN_KEYS = ("snapshots", "budget_factor", "budget_slack", "converge", "prune", "max_faults")
#: the fault models a campaign samples (``flip:K[:random]`` adds a bit count and spread)
MODEL_NAMES = ("flip", "random", "zero", "stuck0", "stuck1", "skip")


@attrs.frozen
class ModelChoice:
    """One fault model of the campaign: ``flip`` with ``k`` bits (``adjacent`` or ``random``), or another."""

    model: str
    k: int = 1
    spread: str = "adjacent"

    @classmethod
    def parse(cls, text: str, where: str) -> ModelChoice:
        parts = str(text).strip().lower().split(":")
        name = parts[0]
        if name not in MODEL_NAMES:
            raise ConfigError(f"{where}: model {text!r}: choose from {', '.join(MODEL_NAMES)} (flip:K for K bits)")
        if len(parts) == 1:
            return cls(name)
        if name != "flip" or len(parts) > 3:
            raise ConfigError(f"{where}: model {text!r}: only flip takes a bit count (flip:2, flip:2:random)")
        try:
            k = int(parts[1])
        except ValueError:
            raise ConfigError(f"{where}: model {text!r}: {parts[1]!r} is not a number of bits") from None
        spread = parts[2] if len(parts) == 3 else "adjacent"
        if k < 1 or spread not in ("adjacent", "random"):
            raise ConfigError(f"{where}: model {text!r}: write flip:K or flip:K:random with K >= 1")
        return cls("flip", k, spread)

    def __str__(self) -> str:
        if self.model != "flip" or (self.k == 1 and self.spread == "adjacent"):
            return self.model
        return f"flip:{self.k}" + (":random" if self.spread == "random" else "")


@attrs.frozen
class OutputSpec:
    """What defines a correct run (the ``[outputs]`` table)."""

    stdout: bool = True
    exit: bool = True
    memory: tuple[str, ...] = ()
    structures: tuple[str, ...] = ()
    checker: str | None = None
    detected: tuple[int, ...] = ()


@attrs.frozen
class Campaign:
    """A checked campaign file (see the module doc); ``program`` is the ``[program]`` table
    with its paths made absolute, ready for :func:`tessera.batch.load_specs`."""

    name: str
    seed: int
    program: dict[str, Any]
    outputs: OutputSpec
    targets: tuple[str, ...]
    classes: tuple[str, ...]
    models: tuple[ModelChoice, ...]
    sampling: str
    count: int
    margin: float
    confidence: float
    window: tuple[int, int] | None
    stuck_window: int | None
    faults: tuple[str, ...]
    snapshots: int = 32
    budget_factor: float = 2.0
    budget_slack: int = 1000
    converge: bool = True
    prune: bool = True
    max_faults: int = 1_000_000
    source: str = "(in memory)"

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, base_dir: str = ".", source: str = "(in memory)") -> Campaign:
        """A campaign from the parsed TOML (``base_dir``: where relative paths start)."""
        return _build(data, base_dir, source)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Campaign:
        return load_campaign(path)

    def identity(self) -> dict[str, Any]:
        """What the results of this campaign depend on (hashed into every result's ``spec_hash``):
        everything but where it came from and the execution knobs that cannot change outcomes."""
        data = attrs.asdict(self, recurse=True)
        data.pop("source")
        data.pop("max_faults")
        data["models"] = [str(m) for m in self.models]
        return data


def load_campaign(path: str | os.PathLike[str]) -> Campaign:
    """Read and check a campaign file (:class:`LoadError` if unreadable, :class:`ConfigError` if wrong)."""
    name = os.fspath(path)
    try:
        with open(name, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise LoadError(f"campaign file {name} does not exist") from None
    except IsADirectoryError:
        raise LoadError(f"campaign file {name} is a directory") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{name}: not valid TOML: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise LoadError(f"cannot read campaign file {name}: {exc}") from None
    data.setdefault("name", os.path.splitext(os.path.basename(name))[0])
    return _build(data, os.path.dirname(os.path.abspath(name)), name)


# ------------------------------------------------------------------ checking


def _table(data: Mapping[str, Any], key: str, where: str, keys: tuple[str, ...]) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: [{key}] must be a table")
    unknown = [k for k in value if k not in keys]
    if unknown:
        raise ConfigError(f"{where}: [{key}] has no key {unknown[0]!r} (keys: {', '.join(keys)})")
    return value


def _strings(table: Mapping[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = table.get(key, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ConfigError(f"{where}: {key} must be a list of strings")
    return tuple(v.strip() for v in value)


def _int(table: Mapping[str, Any], key: str, where: str, default: int, minimum: int) -> int:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(f"{where}: {key} must be a whole number >= {minimum}, not {value!r}")
    return int(value)


#: the most golden-run snapshots a campaign keeps (each is the machine's non-zero state)
MAX_SNAPSHOTS = 1024


def _snapshots(run: Mapping[str, Any], where: str) -> int:
    value = _int(run, "snapshots", where, 32, 0)
    if value > MAX_SNAPSHOTS:
        raise ConfigError(f"{where}: run.snapshots must be at most {MAX_SNAPSHOTS} (each keeps the whole "
                          f"machine), not {value}")
    return value


def _fraction(table: Mapping[str, Any], key: str, where: str, default: float) -> float:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1:
        raise ConfigError(f"{where}: {key} must be a number between 0 and 1 (exclusive), not {value!r}")
    return float(value)


def _run_checks(run: Mapping[str, Any], where: str) -> float:
    """Check ``[run]``'s flags; its budget factor."""
    for flag in ("converge", "prune"):
        if not isinstance(run.get(flag, True), bool):
            raise ConfigError(f"{where}: run.{flag} must be true or false")
    factor = run.get("budget_factor", 2.0)
    if isinstance(factor, bool) or not isinstance(factor, int | float) or not math.isfinite(factor) or factor < 1:
        raise ConfigError(f"{where}: run.budget_factor must be a number >= 1, not {factor!r}")
    return float(factor)


def _build(data: Mapping[str, Any], base_dir: str, source: str) -> Campaign:
    where = source
    unknown = [k for k in data if k not in TOP_KEYS]
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r} (a campaign has {', '.join(TOP_KEYS)})")
    name = data.get("name", "campaign")
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"{where}: name must be a non-empty string")
    seed = _int(data, "seed", where, 0, 0)
    program = data.get("program")
    if not isinstance(program, dict) or "program" not in program:
        raise ConfigError(f"{where}: [program] must be a table naming the program (program = \"prog.elf\")")
    program = dict(program)
    for key in ("program", "snapshot_out"):
        if isinstance(program.get(key), str) and program[key] and not os.path.isabs(program[key]):
            program[key] = os.path.normpath(os.path.join(base_dir, program[key]))
    if "snapshot_out" in program:
        raise ConfigError(f"{where}: [program] snapshot_out has no meaning in a campaign")

    out = _table(data, "outputs", where, OUTPUT_KEYS)
    for key in ("stdout", "exit"):
        if not isinstance(out.get(key, True), bool):
            raise ConfigError(f"{where}: outputs.{key} must be true or false")
    checker = out.get("checker")
    if checker is not None and (not isinstance(checker, str) or ":" not in checker):
        raise ConfigError(f"{where}: outputs.checker must be \"module:function\", not {checker!r}")
    detected = out.get("detected", [])
    if not isinstance(detected, list) or not all(isinstance(d, int) and not isinstance(d, bool)
                                                 and 0 <= d <= 255 for d in detected):
        raise ConfigError(f"{where}: outputs.detected must be a list of exit statuses 0..255")
    outputs = OutputSpec(out.get("stdout", True), out.get("exit", True), _strings(out, "memory", where),
                         _strings(out, "structures", where), checker, tuple(detected))
    if not (outputs.stdout or outputs.exit or outputs.memory or outputs.structures or outputs.checker):
        raise ConfigError(f"{where}: [outputs] compares nothing: every run would be masked")

    faults = _table(data, "faults", where, FAULT_KEYS)
    models = tuple(ModelChoice.parse(m, where) for m in _strings(faults, "models", where) or ("flip",))
    if len(set(models)) != len(models):
        raise ConfigError(f"{where}: faults.models names a model twice")
    sampling = faults.get("sampling", "statistical")
    if sampling not in SAMPLINGS:
        raise ConfigError(f"{where}: faults.sampling must be one of {', '.join(SAMPLINGS)}, not {sampling!r}")
    window = faults.get("window")
    if window is not None:
        if not (isinstance(window, list) and len(window) == 2 and all(isinstance(w, int) and not isinstance(w, bool)
                                                                     and w >= 0 for w in window)
                and window[0] < window[1]):
            raise ConfigError(f"{where}: faults.window must be [FIRST, END] steps with FIRST < END")
        window = (int(window[0]), int(window[1]))
    stuck = faults.get("stuck_window")
    if stuck is not None:
        stuck = _int(faults, "stuck_window", where, 1, 1)
    targets, classes = _strings(faults, "targets", where), _strings(faults, "classes", where)
    explicit = _strings(faults, "faults", where)
    if not (targets or classes or explicit or any(m.model == "skip" for m in models)):
        raise ConfigError(f"{where}: [faults] names no targets, classes or faults: nothing to inject")

    run = _table(data, "run", where, RUN_KEYS)
    factor = _run_checks(run, where)
    return Campaign(
        name=name.strip(), seed=seed, program=program, outputs=outputs, targets=targets, classes=classes,
        models=models, sampling=sampling, count=_int(faults, "count", where, 100, 1),
        margin=_fraction(faults, "margin", where, 0.05), confidence=_fraction(faults, "confidence", where, 0.95),
        window=window, stuck_window=stuck, faults=explicit, snapshots=_snapshots(run, where),
        budget_factor=float(factor), budget_slack=_int(run, "budget_slack", where, 1000, 0),
        converge=run.get("converge", True), prune=run.get("prune", True),
        max_faults=_int(run, "max_faults", where, 1_000_000, 1), source=source)
