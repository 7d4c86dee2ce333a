"""A campaign's results, aggregated: one plain, JSON-able dict that every report renders.

Rates.  An outcome's rate is over the *injected* faults: every result except
``not-injected`` (the trigger never fired, so nothing was tested) and ``error`` (the tool
failed on that fault); those two are counted beside, never in a denominator.  Every
rate comes with its Wilson interval (:mod:`.stats`), with the finite-population
correction where the group is exactly one whole population of known size whose size
counts its faults exactly (:func:`enumerated`: not where a fault draws a random bit or
value from its seed).

Groups.  The same counts per population (``hart0.x/flip``), per structure hit (the
record's ``structure``: for a class fault the destination's structure), per instruction
class (class faults only) and per fault model.

Vulnerability (AVF-style).  A failure is an outcome the program's user would see:
``sdc``, ``detected``, ``crash``, ``hang``, ``deadlock`` (``masked`` and ``latent`` are
not).  A structure's AVF is the failure fraction of the faults drawn *uniformly* from it
(over its bits and the run's steps: the populations named after the structure).  Class
faults and explicit faults hit a structure too, but not uniformly, so they count in the
structure's outcome mix and failure fraction and not in its AVF — that keeps the AVF the
quantity Mukherjee et al. define (the probability that a fault in a random bit at a
random time fails the program; "A systematic methodology to compute the architectural
vulnerability factors for a high-performance microprocessor", MICRO 2003).  Weighted by
the structures' sizes in bits (from the metadata) the AVFs give the machine's
``sum(AVF_s × bits_s) / sum(bits_s)``; its bounds are the same weighting of the
structures' bounds (an envelope, wider than a pooled interval, since the structures'
errors are not all at their extremes together).

Timeline.  The golden run's steps (the metadata's ``golden.steps``; without metadata the
latest step a fault fired at) cut into about 20 equal bins; per bin the injected faults
that fired in it and their failure fraction.

Keys come in a fixed order and groups sorted by name, so the same results always give
the same JSON text.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from tessera_faults.report.stats import wilson

__all__ = ["FAILURES", "INJECTED_OUTCOMES", "NOT_COUNTED", "OUTCOMES", "TIMELINE_BINS", "enumerated", "summarize"]

#: every outcome a campaign writes, in the order reports list them (as tessera_faults.campaign.task)
OUTCOMES = ("masked", "latent", "sdc", "detected", "crash", "hang", "deadlock", "not-injected", "error")
#: results that tested nothing: counted, never in a rate's denominator
NOT_COUNTED = ("not-injected", "error")
#: outcomes of an injected fault
INJECTED_OUTCOMES = tuple(o for o in OUTCOMES if o not in NOT_COUNTED)
#: outcomes that count as a failure of the program (what a vulnerability factor counts)
FAILURES = ("sdc", "detected", "crash", "hang", "deadlock")
#: how many bins the golden run's timeline is cut into (fewer for a run of fewer steps)
TIMELINE_BINS = 20

Record = Mapping[str, Any]


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def _rate(count: int, n: int, confidence: float, population: int | None) -> dict[str, Any]:
    ci = wilson(count, n, confidence, population)
    return {"count": count, "rate": _round(ci.rate), "low": _round(ci.low), "high": _round(ci.high)}


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


#: models whose fault is fixed by its place in the population (no choice left to the fault's seed)
_FIXED_MODELS = ("flip", "zero", "stuck0", "stuck1", "skip")


def enumerated(pop: Mapping[str, Any]) -> bool:
    """Whether a population's ``size`` counts its faults exactly, so that the finite-population
    correction holds.  Not so where each fault also draws from its seed (docs/faults.md,
    "Campaigns"): a random value (``random``), K random bits (``flip:K:random``), or the bit
    of an instruction class's destination (``class:C/flip``).  Those populations' true fault
    spaces are larger than their size, and injecting "all" of them is no census."""
    model = pop.get("model")
    if not isinstance(model, str):
        return False  # explicit faults, or a population the metadata does not describe
    base = model.split(":", 1)[0]
    if base not in _FIXED_MODELS or model.endswith(":random"):
        return False
    return not (pop.get("class") is not None and base == "flip")


class _Context:
    """What every group needs: the outcome columns, the confidence, the populations."""

    def __init__(self, records: Sequence[Record], meta: Mapping[str, Any] | None, confidence: float) -> None:
        self.confidence = confidence
        seen = {r["outcome"] for r in records}
        extra = sorted(seen - set(OUTCOMES))  # outcomes of a newer campaign: shown, not failures
        self.outcomes = INJECTED_OUTCOMES + tuple(extra)
        self.populations: dict[str, dict[str, Any]] = {}
        for pop in (meta or {}).get("populations", []):
            self.populations[pop["name"]] = dict(pop)
        self.per_population = Counter(population_of(r) for r in records)

    def population_size(self, records: Sequence[Record]) -> int | None:
        """N for the finite-population correction: only for a group that is exactly one
        whole population of known size whose faults its size counts exactly (see
        :func:`enumerated`); any other group is not a simple random sample of N faults."""
        names = {population_of(r) for r in records}
        if len(names) != 1:
            return None
        (name,) = names
        pop = self.populations.get(name, {})
        if self.per_population[name] != len(records) or not enumerated(pop):
            return None
        return _int(pop.get("size"))

    def group(self, records: Sequence[Record]) -> dict[str, Any]:
        """Counts, rates and intervals of ``records``' outcomes (see the module doc)."""
        counts = Counter(r["outcome"] for r in records)
        injected = sum(n for outcome, n in counts.items() if outcome not in NOT_COUNTED)
        size = self.population_size(records)
        failures = sum(counts[o] for o in FAILURES)
        return {"faults": len(records), "injected": injected,
                "not-injected": counts["not-injected"], "error": counts["error"],
                "outcomes": {o: _rate(counts[o], injected, self.confidence, size) for o in self.outcomes},
                "failures": _rate(failures, injected, self.confidence, size),
                "population_size": size}


def population_of(record: Record) -> str:
    name = record.get("population")
    return name if isinstance(name, str) else "(unknown)"


def _structure_of(record: Record, populations: Mapping[str, Mapping[str, Any]]) -> str:
    """The structure hit; for a fault that hit nothing, its population's structure."""
    name = record.get("structure")
    if isinstance(name, str):
        return name
    population = population_of(record)
    pop = populations.get(population, {}).get("structure")
    if isinstance(pop, str):
        return pop
    if _uniform(record) and "/" in population:  # hart0.insn/skip, or no metadata: hart0.x[0:8]/flip
        return population.rsplit("/", 1)[0].split("[", 1)[0]
    return "(nothing hit)"


def _uniform(record: Record) -> bool:
    """A fault drawn uniformly from a structure (not a class fault, not an explicit one)."""
    return record.get("class") is None and population_of(record) not in ("explicit", "(unknown)")


def _by(records: Iterable[Record], key: Any) -> dict[str, list[Record]]:
    groups: dict[str, list[Record]] = {}
    for r in records:
        name = key(r)
        if name is not None:
            groups.setdefault(name, []).append(r)
    return {name: groups[name] for name in sorted(groups)}


def _structure_bits(populations: Mapping[str, Mapping[str, Any]]) -> dict[str, int]:
    """A structure's size in bits: the bits of its populations' (distinct) entry ranges."""
    ranges: dict[str, dict[str, int]] = {}
    for name, pop in populations.items():
        bits, structure = _int(pop.get("bits")), pop.get("structure")
        if bits is not None and isinstance(structure, str):
            label = name.rsplit("/", 1)[0]  # hart0.x/flip and hart0.x/stuck0: the same bits
            ranges.setdefault(structure, {})[label] = bits
    return {s: sum(labels.values()) for s, labels in ranges.items()}


def _populations(ctx: _Context, records: Sequence[Record]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    groups = _by(records, population_of)
    for name in sorted(set(groups) | set(ctx.populations)):
        pop = ctx.populations.get(name, {})
        entry = {"structure": pop.get("structure"), "model": pop.get("model"), "class": pop.get("class"),
                 "size": _int(pop.get("size")), "bits": _int(pop.get("bits")), "sampled": _int(pop.get("sampled"))}
        entry.update(ctx.group(groups.get(name, [])))
        out[name] = entry
    return out


def _structures(ctx: _Context, records: Sequence[Record]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Per structure: the outcome mix of every fault that hit it, its AVF and bits; and the
    size-weighted AVF of the structures whose size is known."""
    bits_of = _structure_bits(ctx.populations)
    out: dict[str, Any] = {}
    weight = low = high = value = 0.0
    included: list[str] = []
    for name, group in _by(records, lambda r: _structure_of(r, ctx.populations)).items():
        entry: dict[str, Any] = {"bits": bits_of.get(name)}
        entry.update(ctx.group(group))
        uniform = [r for r in group if _uniform(r)]
        injected = sum(1 for r in uniform if r["outcome"] not in NOT_COUNTED)
        failures = sum(1 for r in uniform if r["outcome"] in FAILURES)
        avf = _rate(failures, injected, ctx.confidence, ctx.population_size(uniform) if uniform else None)
        avf["injected"] = injected
        entry["avf"] = avf
        bits = entry["bits"]
        entry["vulnerable_bits"] = None if bits is None or avf["rate"] is None else round(avf["rate"] * bits, 3)
        out[name] = entry
        if bits is not None and avf["rate"] is not None:
            included.append(name)
            weight += bits
            value += bits * avf["rate"]
            low += bits * avf["low"]
            high += bits * avf["high"]
    weighted = {"rate": _round(value / weight) if weight else None, "low": _round(low / weight) if weight else None,
                "high": _round(high / weight) if weight else None, "bits": int(weight), "structures": included}
    return out, weighted


def _timeline(ctx: _Context, records: Sequence[Record], golden_steps: int | None) -> dict[str, Any]:
    steps_of = [(s, r) for r in records if r["outcome"] not in NOT_COUNTED and (s := _int(r.get("step"))) is not None]
    source = "golden"
    steps = golden_steps
    if steps is None or steps <= 0:
        source = "latest fault"
        steps = max((s for s, _ in steps_of), default=0)
    bins = min(TIMELINE_BINS, steps)
    members: list[list[Record]] = [[] for _ in range(bins)]
    for s, r in steps_of:
        if bins:
            members[min(bins - 1, max(0, s) * bins // steps)].append(r)
    out = []
    for i, group in enumerate(members):
        first = -(-i * steps // bins)              # ceil(i·steps/bins): the bin's first step
        end = -(-(i + 1) * steps // bins)
        last = steps if i == bins - 1 else end - 1
        failures = sum(1 for r in group if r["outcome"] in FAILURES)
        rate = _rate(failures, len(group), ctx.confidence, None)
        out.append({"first": first, "last": last, "faults": len(group), "failures": rate.pop("count"), **rate})
    unplaced = sum(1 for r in records if r["outcome"] not in NOT_COUNTED and _int(r.get("step")) is None)
    return {"steps": steps, "source": source, "bins": out, "unplaced": unplaced}


def _campaign(meta: Mapping[str, Any] | None, results: str | None, metadata: str | None,
              records: Sequence[Record]) -> dict[str, Any]:
    meta = meta or {}
    golden = meta.get("golden") or {}
    return {"name": meta.get("name"), "arch": meta.get("arch"), "program": meta.get("program"),
            "seed": meta.get("seed"), "sampling": meta.get("sampling"), "margin": meta.get("margin"),
            "confidence": meta.get("confidence"), "planned": _int(meta.get("faults")), "results": len(records),
            "golden": {k: golden.get(k) for k in ("steps", "cycles", "exit", "seconds")} if golden else None,
            "results_file": results, "metadata_file": metadata}


def summarize(records: Iterable[Record], meta: Mapping[str, Any] | None = None, confidence: float | None = None,
              *, results: str | None = None, metadata: str | None = None) -> dict[str, Any]:
    """The report of ``records`` (result lines) with the campaign's ``meta`` (None when its
    metadata file is missing) at ``confidence`` (default: the campaign's, else 0.95).

    ``results`` and ``metadata`` are the files' paths, only shown.  Sections, in order:
    ``campaign``, ``confidence``, ``method``, ``totals``, ``populations``, ``structures``,
    ``classes``, ``models``, ``avf``, ``timeline`` (docs/faults-report.md).
    """
    rows = [r if isinstance(r.get("outcome"), str) else {**r, "outcome": "error"} for r in records]
    if confidence is None:
        given = (meta or {}).get("confidence")
        confidence = float(given) if isinstance(given, (int, float)) and 0 < given < 1 else 0.95
    ctx = _Context(rows, meta, confidence)
    structures, weighted = _structures(ctx, rows)
    golden = (meta or {}).get("golden") or {}
    return {
        "campaign": _campaign(meta, results, metadata, rows),
        "confidence": confidence,
        "method": {"interval": "wilson",
                   "finite_population": "z^2 * (N-n)/(N-1), for a whole population whose size counts its faults",
                   "denominator": "injected faults: all but not-injected and error", "failures": list(FAILURES)},
        "totals": ctx.group(rows),
        "populations": _populations(ctx, rows),
        "structures": structures,
        "classes": {name: ctx.group(g) for name, g in
                    _by(rows, lambda r: r["class"] if isinstance(r.get("class"), str) else None).items()},
        "models": {name: ctx.group(g) for name, g in
                   _by(rows, lambda r: r["model"] if isinstance(r.get("model"), str) else "(unknown)").items()},
        "avf": {"weighted": weighted,
                "structures": {name: s["avf"] | {"bits": s["bits"]} for name, s in structures.items()}},
        "timeline": _timeline(ctx, rows, _int(golden.get("steps"))),
    }
