"""The reports over a campaign's results: intervals, aggregation, terminal, HTML, JSON, command."""

from __future__ import annotations

import json
import math
import random
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest
from click.testing import CliRunner

from tessera.errors import ConfigError, LoadError
from tessera_faults.report import summary as summary_mod
from tessera_faults.report.cli import report
from tessera_faults.report.html import render_html
from tessera_faults.report.inputs import read_records
from tessera_faults.report.stats import fpc_factor, wilson, z_value
from tessera_faults.report.summary import FAILURES, NOT_COUNTED, summarize

Z95 = 1.959963984540054


def closed_form(k: int, n: int, z: float) -> tuple[float, float]:
    """Wilson's bounds in the other common algebraic form,
    (2k + z² ± z·sqrt(z² + 4k(n-k)/n)) / (2(n + z²)), to check the module against."""
    root = z * math.sqrt(z * z + 4 * k * (n - k) / n)
    return (2 * k + z * z - root) / (2 * (n + z * z)), (2 * k + z * z + root) / (2 * (n + z * z))


# ------------------------------------------------------------------ stats


@pytest.mark.parametrize(("k", "n", "published"), [
    # 95% Wilson intervals to 4 places, worked by hand: 0 of 10 reaches z²/(n+z²) = 3.8415/13.8415,
    # 10 of 10 mirrors it, and 5 of 10 is 0.5 ± (z/(1+z²/n))·sqrt(1/4n + z²/4n²)
    (0, 10, (0.0, 0.2775)), (5, 10, (0.2366, 0.7634)), (10, 10, (0.7225, 1.0)),
])
def test_wilson_matches_published_and_closed_form(k, n, published):
    ci = wilson(k, n, 0.95)
    assert ci.rate == k / n
    assert ci.low == pytest.approx(published[0], abs=1e-4)
    assert ci.high == pytest.approx(published[1], abs=1e-4)
    low, high = closed_form(k, n, Z95)
    assert (ci.low, ci.high) == (pytest.approx(max(0.0, low), abs=1e-12), pytest.approx(min(1.0, high), abs=1e-12))


def test_wilson_edges_and_confidence():
    assert z_value(0.95) == pytest.approx(Z95)
    empty = wilson(0, 0, 0.95)
    assert (empty.rate, empty.low, empty.high) == (None, 0.0, 1.0)
    assert wilson(0, 10).low == 0.0 and wilson(10, 10).high == 1.0  # exact, not rounding noise
    assert wilson(3, 40, 0.99).high > wilson(3, 40, 0.95).high > wilson(3, 40, 0.80).high
    for bad in ((4, 3), (-1, 3), (1, -1)):
        with pytest.raises(ValueError):
            wilson(*bad)
    for conf in (0.0, 1.0, 1.5):
        with pytest.raises(ValueError):
            wilson(1, 2, conf)


def test_wilson_finite_population_correction():
    k, n, N = 7, 40, 100
    corrected = wilson(k, n, 0.95, population=N)
    z = Z95 * math.sqrt((N - n) / (N - 1))   # the documented choice: z² × (N-n)/(N-1)
    low, high = closed_form(k, n, z)
    assert (corrected.low, corrected.high) == (pytest.approx(low), pytest.approx(high))
    plain = wilson(k, n, 0.95)
    assert plain.low < corrected.low < corrected.high < plain.high
    census = wilson(k, N, 0.95, population=N)           # every fault injected: the rate is exact
    assert census.low == pytest.approx(k / N) and census.high == pytest.approx(k / N)
    huge = wilson(k, n, 0.95, population=10**12)         # n << N: no correction to speak of
    assert huge.high == pytest.approx(plain.high, rel=1e-9)
    assert fpc_factor(n, None) == 1.0 and fpc_factor(n, n) == 0.0


# ------------------------------------------------------------------ a synthetic campaign

GOLDEN_STEPS = 1000
#: (population, structure hit, class, model, outcome, step)
ROWS = [
    *[("hart0.x/flip", "hart0.x", None, "flip", o, s) for o, s in zip(
        ["masked", "masked", "masked", "masked", "sdc", "sdc", "crash", "latent", "not-injected", "error"],
        range(0, 1000, 100), strict=True)],
    *[("mem.ram/flip", "mem.ram", None, "flip", o, s) for o, s in zip(
        ["masked", "masked", "masked", "hang", "detected", "not-injected"], [10, 60, 120, 999, 1000, 500],
        strict=True)],
    *[("class:load/flip", "hart0.x", "load", "flip", o, s) for o, s in zip(
        ["sdc", "sdc", "masked", "deadlock"], [55, 56, 57, 58], strict=True)],
    ("class:load/flip", None, "load", "flip", "not-injected", None),
]
POPULATIONS = [
    {"name": "hart0.x/flip", "structure": "hart0.x", "model": "flip", "class": None, "size": 992 * 1000,
     "bits": 992, "sampled": 10},
    {"name": "mem.ram/flip", "structure": "mem.ram", "model": "flip", "class": None, "size": 12, "bits": 64,
     "sampled": 6},
    {"name": "class:load/flip", "structure": None, "model": "flip", "class": "load", "size": 40, "bits": None,
     "sampled": 5},
]
HOSTILE = "<script>alert(1)</script>"


def result_line(i, pop, structure, cls, model, outcome, step):
    fault = f"target={structure},bit={i % 32},at=step:{step}"
    return {"id": f"{fault}#{i}", "spec_hash": f"{i:064x}", "fault": fault, "population": pop,
            "structure": None if outcome == "not-injected" else structure, "entry": None, "model": model,
            "bits": [i % 32], "class": cls, "step": step, "outcome": outcome, "exit": 0,
            "error": "worker died" if outcome == "error" else None, "steps": 900, "cycles": 900,
            "differs": ["stdout"] if outcome == "sdc" else [], "diverged_at": None, "seconds": 0.01,
            "old": 1, "new": 3, "a_future_key": {"x": 1}}


def metadata(**changes):
    meta = {"name": "sum", "arch": "rv32im", "program": f"prog{HOSTILE}.elf", "seed": 1,
            "sampling": "statistical", "margin": 0.05, "confidence": 0.95, "faults": len(ROWS),
            "golden": {"steps": GOLDEN_STEPS, "cycles": GOLDEN_STEPS, "exit": 0, "seconds": 0.3},
            "populations": POPULATIONS}
    meta.update(changes)
    return meta


@pytest.fixture
def campaign(tmp_path):
    """A results file (its last line cut short, as a killed campaign leaves it) and its metadata."""
    results = tmp_path / "sum.results.jsonl"
    lines = [json.dumps(result_line(i, *row)) for i, row in enumerate(ROWS)]
    results.write_text("\n".join(lines) + '\n{"id": "cut sho', encoding="utf-8")
    (tmp_path / "sum.results.jsonl.campaign.json").write_text(json.dumps(metadata()), encoding="utf-8")
    return results


def expected(rows):
    """Counts the plain way, for the assertions."""
    injected = [r for r in rows if r[4] not in NOT_COUNTED]
    return len(injected), sum(1 for r in injected if r[4] in FAILURES)


def test_outcomes_match_the_campaign():
    """The report's outcome lists are the campaign's (the classifier's) own."""
    from tessera_faults.campaign import task

    assert summary_mod.OUTCOMES == task.OUTCOMES
    assert summary_mod.FAILURES == task.FAILURES


@pytest.mark.parametrize(("pop", "fixed"), [
    ({"model": "flip", "class": None}, True), ({"model": "flip:2", "class": None}, True),
    ({"model": "stuck1", "class": None}, True), ({"model": "zero", "class": "load"}, True),
    ({"model": "skip", "class": None}, True), ({"model": "flip", "class": "load"}, False),
    ({"model": "random", "class": None}, False), ({"model": "flip:2:random", "class": None}, False),
    ({"model": None, "class": None}, False),
])
def test_which_populations_take_the_correction(pop, fixed):
    assert summary_mod.enumerated(pop) is fixed


def test_totals_exclude_not_injected_and_errors(campaign):
    records = read_records(str(campaign))
    assert len(records) == len(ROWS)   # the cut-short line left out
    s = summarize(records, metadata())
    totals = s["totals"]
    injected, failures = expected(ROWS)
    assert totals["faults"] == len(ROWS)
    assert totals["injected"] == injected
    assert totals["not-injected"] == sum(1 for r in ROWS if r[4] == "not-injected")
    assert totals["error"] == sum(1 for r in ROWS if r[4] == "error")
    for outcome, stat in totals["outcomes"].items():
        count = sum(1 for r in ROWS if r[4] == outcome)
        assert stat["count"] == count
        assert stat["rate"] == pytest.approx(count / injected, abs=1e-6)
        ci = wilson(count, injected, 0.95)
        assert (stat["low"], stat["high"]) == (pytest.approx(ci.low, abs=1e-6), pytest.approx(ci.high, abs=1e-6))
    assert set(totals["outcomes"]) == set(summary_mod.INJECTED_OUTCOMES)
    assert totals["failures"]["count"] == failures
    assert totals["failures"]["rate"] == pytest.approx(failures / injected, abs=1e-6)


def test_groups_and_finite_population(campaign):
    s = summarize(read_records(str(campaign)), metadata())
    pops = s["populations"]
    assert list(pops) == sorted(p["name"] for p in POPULATIONS)
    for pop in POPULATIONS:
        rows = [r for r in ROWS if r[0] == pop["name"]]
        injected, failures = expected(rows)
        got = pops[pop["name"]]
        assert (got["injected"], got["failures"]["count"], got["size"]) == (injected, failures, pop["size"])
        # class faults draw their bit from the seed: their size is no count of the fault space
        size = None if pop["class"] else pop["size"]
        assert got["population_size"] == size
        ci = wilson(failures, injected, 0.95, population=size)
        assert got["failures"]["low"] == pytest.approx(ci.low, abs=1e-6)
    small = pops["mem.ram/flip"]["failures"]       # 5 of 12: the correction narrows the interval visibly
    plain = wilson(small["count"], pops["mem.ram/flip"]["injected"], 0.95)
    assert plain.low < small["low"] and small["high"] < plain.high
    assert s["models"]["flip"]["injected"] == expected(ROWS)[0]
    assert s["models"]["flip"]["population_size"] is None       # three populations: no correction
    assert list(s["classes"]) == ["load"]
    assert s["classes"]["load"]["injected"] == expected([r for r in ROWS if r[2] == "load"])[0]


def test_avf_per_structure_and_weighted(campaign):
    s = summarize(read_records(str(campaign)), metadata())
    structures = s["structures"]
    # every fault that hit hart0.x (class faults too) is in its outcome mix ...
    hit = [r for r in ROWS if r[1] == "hart0.x" and r[4] != "not-injected"]
    assert structures["hart0.x"]["injected"] == expected(hit)[0]
    # ... but its AVF counts only the faults drawn uniformly from it (its own population)
    rates = {}
    for pop in ("hart0.x/flip", "mem.ram/flip"):
        injected, failures = expected([r for r in ROWS if r[0] == pop])
        name = pop.split("/")[0]
        assert structures[name]["avf"]["injected"] == injected
        assert structures[name]["avf"]["rate"] == pytest.approx(failures / injected, abs=1e-6)
        rates[name] = failures / injected
    assert structures["hart0.x"]["avf"]["rate"] != structures["hart0.x"]["failures"]["rate"]
    bits = {p["structure"]: p["bits"] for p in POPULATIONS if p["structure"]}
    weighted = s["avf"]["weighted"]
    assert weighted["bits"] == sum(bits.values())
    assert weighted["rate"] == pytest.approx(sum(rates[n] * bits[n] for n in bits) / sum(bits.values()), abs=1e-6)
    assert weighted["low"] <= weighted["rate"] <= weighted["high"]
    assert structures["mem.ram"]["vulnerable_bits"] == pytest.approx(rates["mem.ram"] * bits["mem.ram"], abs=1e-3)
    assert s["avf"]["structures"]["mem.ram"]["bits"] == bits["mem.ram"]


def test_timeline_bins(campaign):
    timeline = summarize(read_records(str(campaign)), metadata())["timeline"]
    bins = timeline["bins"]
    assert (timeline["steps"], timeline["source"], len(bins)) == (GOLDEN_STEPS, "golden", summary_mod.TIMELINE_BINS)
    assert bins[0]["first"] == 0 and bins[-1]["last"] == GOLDEN_STEPS
    assert all(a["last"] + 1 == b["first"] for a, b in zip(bins, bins[1:], strict=False))
    placed = [r for r in ROWS if r[4] not in NOT_COUNTED and r[5] is not None]
    for b in bins:
        inside = [r for r in placed if b["first"] <= r[5] <= b["last"]]
        assert b["faults"] == len(inside)
        failures = sum(1 for r in inside if r[4] in FAILURES)
        assert b["failures"] == failures
        assert b["rate"] == (pytest.approx(failures / len(inside), abs=1e-6) if inside else None)
    assert sum(b["faults"] for b in bins) == len(placed)


def test_without_metadata(campaign):
    s = summarize(read_records(str(campaign)), None)
    steps = [r[5] for r in ROWS if r[4] not in NOT_COUNTED and r[5] is not None]
    assert (s["timeline"]["steps"], s["timeline"]["source"]) == (max(steps), "latest fault")
    assert s["populations"]["hart0.x/flip"]["size"] is None
    assert s["populations"]["hart0.x/flip"]["population_size"] is None
    assert s["avf"]["weighted"]["rate"] is None           # no sizes in bits
    assert s["structures"]["mem.ram"]["avf"]["rate"] is not None
    assert s["confidence"] == 0.95 and s["campaign"]["name"] is None


def test_deterministic_and_unknown_outcomes(campaign):
    records = read_records(str(campaign))
    shuffled = list(records)
    random.Random(5).shuffle(shuffled)
    assert json.dumps(summarize(records, metadata())) == json.dumps(summarize(shuffled, metadata()))
    newer = records + [dict(records[0], id="new", outcome="corrupted-later")]
    s = summarize(newer, metadata())
    assert list(s["totals"]["outcomes"])[-1] == "corrupted-later"
    assert s["totals"]["injected"] == expected(ROWS)[0] + 1     # injected, not a failure
    assert s["totals"]["failures"]["count"] == expected(ROWS)[1]


# ------------------------------------------------------------------ HTML


class _Checker(HTMLParser):
    """The page's tags and attribute names, as a browser's parser sees them."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attributes: set[str] = set()

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attributes.update(name for name, _ in attrs)


def test_html_charts_and_escaping(campaign):
    records = read_records(str(campaign))
    hostile_structure = '<img src=x onerror="alert(2)">'
    records.append(dict(records[0], id="hostile", structure=hostile_structure, population=hostile_structure + "/flip"))
    page = render_html(summarize(records, metadata(name=HOSTILE)))
    svgs = re.findall(r"<svg\b.*?</svg>", page, re.S)
    assert len(svgs) == 2                                   # outcome mix, timeline
    for svg in svgs:
        ET.fromstring(svg)                                   # well-formed: a browser draws it as written
    assert svgs[0].count("<rect") >= 3 and "sdc" in svgs[0]  # bars and a legend
    assert "failure fraction" in svgs[1] and "golden run step" in svgs[1]
    assert "<script" not in page and "<img" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=&quot;alert(2)&quot;&gt;" in page
    checker = _Checker()
    checker.feed(page)
    assert checker.tags[:3] == ["html", "head", "meta"] and "table" in checker.tags
    assert not {"script", "img", "link", "iframe", "object"} & set(checker.tags)   # nothing run, nothing fetched
    assert not {"src", "href", "onerror", "onload"} & checker.attributes
    assert "@import" not in page and "url(" not in page


# ------------------------------------------------------------------ the command


def test_cli_tables_and_html(campaign, tmp_path):
    out = tmp_path / "report.html"
    result = CliRunner().invoke(report, [str(campaign), "--html", str(out)])
    assert result.exit_code == 0, result.output
    assert "Outcomes of" in result.output and "hart0.x/flip" in result.output
    assert "size-weighted AVF" in result.output
    assert out.read_text(encoding="utf-8").count("<svg") == 2


def test_cli_json(campaign, tmp_path):
    result = CliRunner().invoke(report, [str(campaign), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert list(data) == ["campaign", "confidence", "method", "totals", "populations", "structures", "classes",
                          "models", "avf", "timeline"]
    assert data["campaign"]["metadata_file"] == f"{campaign}.campaign.json"   # found beside the results
    assert data["totals"]["injected"] == expected(ROWS)[0]
    wider = json.loads(CliRunner().invoke(report, [str(campaign), "--json", "--confidence", "0.99"]).output)
    assert wider["confidence"] == 0.99
    assert wider["totals"]["failures"]["high"] > data["totals"]["failures"]["high"]
    other = tmp_path / "other.json"
    other.write_text(json.dumps(metadata(confidence=0.9, name="other")), encoding="utf-8")
    third = json.loads(CliRunner().invoke(report, [str(campaign), "--json", "--meta", str(other)]).output)
    assert (third["campaign"]["name"], third["confidence"]) == ("other", 0.9)   # the campaign's confidence


def _failure(args):
    result = CliRunner().invoke(report, [str(a) for a in args])
    assert result.exit_code != 0
    assert isinstance(result.exception, (LoadError, ConfigError)), result.exception
    text = str(result.exception)
    assert "\n" not in text
    return result.exception, text


def test_cli_bad_inputs(campaign, tmp_path):
    exc, text = _failure([tmp_path / "nope.jsonl"])
    assert isinstance(exc, LoadError) and "does not exist" in text
    notes = tmp_path / "notes.txt"
    notes.write_text("hello\nworld\n", encoding="utf-8")
    exc, text = _failure([notes])
    assert "not a results file of a fault campaign" in text and "line 1" in text
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    assert "holds no results" in _failure([empty])[1]
    batch = tmp_path / "batch.jsonl"
    batch.write_text(json.dumps({"id": "a", "spec_hash": "h", "status": 0}) + "\n", encoding="utf-8")
    assert "has no outcome" in _failure([batch])[1]
    bad_meta = tmp_path / "bad.json"
    bad_meta.write_text("{not json", encoding="utf-8")
    assert "not a campaign metadata file" in _failure([campaign, "--meta", bad_meta])[1]
    assert "does not exist" in _failure([campaign, "--meta", tmp_path / "gone.json"])[1]
    exc, text = _failure([campaign, "--confidence", "95"])
    assert isinstance(exc, ConfigError) and "between 0 and 1" in text
    exc, text = _failure([campaign, "--html", tmp_path])
    assert isinstance(exc, ConfigError) and "directory" in text
