"""The fault space of a campaign: its populations, their sizes, and the faults sampled from them.

A *population* is one structure (or one instruction class) under one fault model; its
faults are every (time point, entry, bit position) it allows:

* a structure (``hart0.x``, ``mem.ram[0x1000:0x1100]``, ``t0.v``, ``dest``): its entries
  (excluding hard-wired ones) × the bit positions of the model (a K-bit adjacent flip
  starts at any of ``bits - K + 1`` positions; a stuck-at holds one of ``bits``; random
  value, zero value and a flip of K *random* bits have one, their choice comes from the
  fault's seed) × the golden run's steps in the window (``at=step:S``);
* an instruction class (``load``, ``fp``, ``sfpu``; NVBitFI's "destination of the N-th
  instruction of class C"): the golden run's executions of the class (``at=class:C#N``),
  the bit chosen with the fault's seed;
* ``skip``: per CPU agent, the golden run's steps (the agent's next instruction is skipped).

Sampling (all deterministic in the campaign seed and the population's name, so the same
seed gives the same list on any machine):

* ``exhaustive``: every fault (refused above ``max_faults``: use ``statistical``);
* ``random``: ``count`` faults per population, drawn without replacement;
* ``statistical``: per population, the sample size for error margin *e* at confidence
  *c* from Leveugle, Calvez, Maistri and Vanhauwaert, "Statistical fault injection:
  quantified error and confidence", DATE 2009 (their eq. 1, with the worst case p = 0.5):
  ``n = N / (1 + e² (N - 1) / (t² p (1 - p)))``, *t* the normal quantile of (1 + c) / 2.
"""

from __future__ import annotations

import math
import random
import re
import statistics
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from tessera.errors import ConfigError
from tessera.settings import parse_int
from tessera_faults.campaign.config import Campaign, ModelChoice
from tessera_faults.spec import Fault
from tessera_faults.targets import Target

__all__ = ["PlannedFault", "Population", "leveugle_sample_size", "plan", "populations"]

_RANGE = re.compile(r"^\s*([^\[\]\s]+)\s*(?:\[\s*([^\]:]+?)\s*:\s*([^\]]+?)\s*\])?\s*$")
#: fault models a structure population takes (skip is its own population, per agent)
_VALUE_MODELS = ("flip", "random", "zero")


def leveugle_sample_size(population: int, margin: float, confidence: float, p: float = 0.5) -> int:
    """Injections needed for error ``margin`` at ``confidence`` in a population of ``population``
    faults (Leveugle et al., DATE 2009, eq. 1); never more than the population."""
    if population <= 0:
        return 0
    t = statistics.NormalDist().inv_cdf((1 + confidence) / 2)
    n = population / (1 + margin * margin * (population - 1) / (t * t * p * (1 - p)))
    return min(population, math.ceil(n))


@attrs.frozen
class Population:
    """One structure (or class, or agent for ``skip``) under one model; see the module doc."""

    name: str
    model: ModelChoice
    times: int                      # time points: steps in the window, or executions of the class
    first: int = 0                  # the first step of the window
    structure: str | None = None    # the target's name (None: a class or skip population)
    label_of: Any = None            # entry index -> its label (``hart0.x[5]``), for structures
    entries: Sequence[int] = ()     # the entries faults may hit
    bits: int | None = None         # an entry's width
    cls: str | None = None
    agent: str | None = None        # skip: whose instruction

    @property
    def units(self) -> int:
        """Bit positions per entry (see the module doc)."""
        m = self.model
        if self.bits is None or m.model in ("random", "zero", "skip") or (m.model == "flip" and m.spread == "random"):
            return 1
        if m.model == "flip":
            return self.bits - m.k + 1
        return self.bits  # stuck0 / stuck1: one bit

    @property
    def size(self) -> int:
        if self.structure is None:
            return self.times
        return len(self.entries) * self.units * self.times

    @property
    def size_bits(self) -> int | None:
        """The structure's size in bits (entries × width): what an AVF is weighted by."""
        return len(self.entries) * self.bits if self.structure is not None and self.bits else None

    def describe(self, sampled: int) -> dict[str, Any]:
        return {"name": self.name, "structure": self.structure, "model": str(self.model), "class": self.cls,
                "size": self.size, "bits": self.size_bits, "sampled": sampled, "first_step": self.first,
                "time_points": self.times}


@attrs.frozen
class PlannedFault:
    """One fault to inject, with what the results and the fast-forward need."""

    text: str
    population: str
    model: str
    step: int | None     # the step it fires at (None: a class or pc trigger, found only by running)
    cls: str | None = None


def _fault_seed(seed: int, population: str, index: int) -> int:
    return zlib.crc32(f"{seed}:{population}:{index}".encode())


def fault_at(pop: Population, index: int, seed: int, stuck_window: int | None) -> PlannedFault:
    """The ``index``-th fault of ``pop`` (time-major, then entry, then bit position)."""
    m = pop.model
    fseed = _fault_seed(seed, pop.name, index)
    k = m.k if m.model == "flip" else 1
    if pop.cls is not None:
        fault = Fault(at=f"class:{pop.cls}#{index + 1}", model=m.model, k=k, spread=m.spread, seed=fseed)
        return PlannedFault(str(fault), pop.name, str(m), None, pop.cls)
    per_time = len(pop.entries) * pop.units if pop.structure is not None else 1
    t, rest = divmod(index, per_time)
    step = pop.first + t
    if pop.structure is None:  # skip
        fault = Fault(at=f"step:{step}", target=f"{pop.agent}.insn", model="skip")
        return PlannedFault(str(fault), pop.name, "skip", step)
    entry, unit = divmod(rest, pop.units)
    label = pop.label_of(pop.entries[entry])
    bit = unit if m.model not in ("random", "zero") and not (m.model == "flip" and m.spread == "random") else None
    window = stuck_window if m.model in ("stuck0", "stuck1") else None
    fault = Fault(at=f"step:{step}", target=label, model=m.model, bit=bit, k=k, spread=m.spread, window=window,
                  seed=fseed)
    return PlannedFault(str(fault), pop.name, str(m), step)


# ------------------------------------------------------------------ building the populations


def _entry_range(target: Target, lo_text: str, hi_text: str, text: str, symbols: Mapping[str, int]) -> range:
    def number(value: str, base: int) -> int:
        value = value.strip()
        if value.startswith("+"):
            return base + _number(value[1:], text, symbols)
        return _number(value, text, symbols)

    lo = number(lo_text, 0)
    hi = number(hi_text, lo)
    if target.base is not None:
        lo, hi = lo - target.base, hi - target.base
    if not 0 <= lo < hi <= target.entries:
        raise ConfigError(f"faults.targets {text!r}: the range is empty or outside {target.name} "
                          f"({target.size_text()})")
    return range(lo, hi)


def _number(value: str, text: str, symbols: Mapping[str, int]) -> int:
    name, plus, offset = value.partition("+")
    try:
        return parse_int(value)
    except ValueError:
        pass
    try:
        return int(symbols[name.strip()]) + (parse_int(offset) if plus else 0)
    except (KeyError, ValueError):
        raise ConfigError(f"faults.targets {text!r}: {value!r} is not a number or a symbol of the program") from None


def _structure(text: str, targets: Mapping[str, Target], machine: Any) -> tuple[Target, Sequence[int], str]:
    found = _RANGE.match(text)
    if found is None:
        raise ConfigError(f"faults.targets {text!r}: write NAME or NAME[FIRST:END]")
    name = found.group(1)
    target = targets.get(name)
    if target is None:
        known = ", ".join(sorted(t for t in targets if targets[t].kind != "decode"))
        raise ConfigError(f"faults.targets: unknown target {name!r} on {machine.arch.name} (targets: {known})")
    if found.group(2) is not None:
        span: Sequence[int] = _entry_range(target, found.group(2), found.group(3), text, machine.symbols)
        label = f"{name}[{found.group(2)}:{found.group(3)}]"
    else:
        span = range(target.entries)
        label = name
    if target.exclude:
        span = [i for i in span if i not in target.exclude]
    if not span:
        raise ConfigError(f"faults.targets {text!r}: no entry of it holds state a fault can change")
    return target, span, label


def populations(campaign: Campaign, machine: Any, golden_steps: int,
                class_counts: Mapping[str, int]) -> list[Population]:
    """The campaign's populations on ``machine`` (the program loaded), for a golden run of
    ``golden_steps`` steps whose class executions ``class_counts`` counted."""
    from tessera_faults.targets import targets_of

    first, end = campaign.window if campaign.window is not None else (0, golden_steps)
    end = min(end, golden_steps)
    if first >= end:
        raise ConfigError(f"faults.window [{first}, {end}) holds none of the golden run's {golden_steps} steps")
    times = end - first
    targets = targets_of(machine)
    out: list[Population] = []
    for text in campaign.targets:
        target, span, label = _structure(text, targets, machine)
        for m in campaign.models:
            if m.model == "skip":
                continue
            if target.kind == "decode" and m.model not in _VALUE_MODELS:
                raise ConfigError(f"faults.targets {text!r}: an instruction word takes flip, random or zero, "
                                  f"not {m}")
            if m.model == "flip" and m.k > target.bits:
                raise ConfigError(f"faults.models {m}: {target.name} has {target.bits}-bit entries")
            out.append(Population(f"{label}/{m}", m, times, first, target.name, target.label, span,
                                  target.bits))
    for cls in campaign.classes:
        count = class_counts.get(cls, 0)
        if count == 0:
            raise ConfigError(f"faults.classes: the golden run executes no instruction of class {cls!r}")
        for m in campaign.models:
            if m.model not in _VALUE_MODELS:
                raise ConfigError(f"faults.classes {cls!r}: an instruction's destination takes flip, random "
                                  f"or zero, not {m}")
            out.append(Population(f"class:{cls}/{m}", m, count, cls=cls))
    if any(m.model == "skip" for m in campaign.models):
        for cpu in machine.cpus:
            out.append(Population(f"{cpu.name}.insn/skip", ModelChoice("skip"), times, first, agent=cpu.name))
    return out


def sample_size(campaign: Campaign, pop: Population) -> int:
    """How many faults the campaign's sampling takes from ``pop``."""
    if campaign.sampling == "exhaustive":
        return pop.size
    n = campaign.count if campaign.sampling == "random" else \
        leveugle_sample_size(pop.size, campaign.margin, campaign.confidence)
    return min(n, pop.size)


def sample(campaign: Campaign, pop: Population) -> list[int]:
    """The indices of ``pop``'s faults the campaign's sampling picks, in increasing order."""
    if campaign.sampling == "exhaustive":
        return list(range(pop.size))
    n = sample_size(campaign, pop)
    rng = random.Random(f"{campaign.seed}:{pop.name}")
    return sorted(rng.sample(range(pop.size), n))


def plan(campaign: Campaign, pops: Sequence[Population]) -> tuple[list[PlannedFault], list[dict[str, Any]]]:
    """Every fault to inject (populations' samples, then the explicit faults) and the
    populations' descriptions for the campaign's metadata."""
    total = sum(sample_size(campaign, p) for p in pops) + len(campaign.faults)
    if total > campaign.max_faults:  # before anything is drawn: a huge count costs no memory
        hint = ("narrow faults.targets or faults.window, or use sampling = \"statistical\""
                if campaign.sampling == "exhaustive" else "lower faults.count or raise faults.margin")
        raise ConfigError(f"{campaign.sampling} sampling would inject {total:,} faults (run.max_faults is "
                          f"{campaign.max_faults:,}): {hint}")
    faults: list[PlannedFault] = []
    described = []
    seen: set[str] = set()
    for pop in pops:
        picked = sample(campaign, pop)
        described.append(pop.describe(len(picked)))
        for index in picked:
            planned = fault_at(pop, index, campaign.seed, campaign.stuck_window)
            if planned.text not in seen:
                seen.add(planned.text)
                faults.append(planned)
    for text in campaign.faults:
        fault = Fault.parse(text)
        trig = fault.trigger
        planned = PlannedFault(str(fault), "explicit", fault.model, trig.value if trig.kind == "step" else None,
                               trig.name if trig.kind == "class" else None)
        if planned.text not in seen:
            seen.add(planned.text)
            faults.append(planned)
    if explicit_count := len(campaign.faults):
        described.append({"name": "explicit", "structure": None, "model": None, "class": None, "size": explicit_count,
                          "bits": None, "sampled": explicit_count, "first_step": None, "time_points": None})
    return faults, described


