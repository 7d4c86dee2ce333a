"""A campaign report as one self-contained HTML page (``tessera faults report RESULTS --html FILE``).

One file, to mail or attach to a CI run: the CSS is inline, the charts are SVG written
here (no JavaScript, no fonts or images fetched, no new dependency), and a hover tooltip
on a chart's part is an SVG ``<title>``.  Every text that comes from the campaign's files
(names, paths, the program) goes through :func:`html.escape`, so a hostile program name
cannot inject markup.  Renders the dict of
:func:`tessera_faults.report.summary.summarize`, like the terminal report.

Charts: the outcome mix per structure as stacked horizontal bars (each bar is 100% of
the structure's injected faults, one fixed colour per outcome, with a legend), and the
failure fraction over the golden run's timeline (a bar per bin with its interval as a
whisker, axes labelled).
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

from tessera_faults.report.summary import FAILURES
from tessera_faults.report.terminal import interval, percent

__all__ = ["COLOURS", "render_html", "write_html"]

#: one colour per outcome, the same in every chart and table: benign outcomes green,
#: failures warm or dark, what tested nothing grey
COLOURS = {
    "masked": "#59a14f", "latent": "#a0cbe8", "sdc": "#e15759", "detected": "#f28e2b", "crash": "#b07aa1",
    "hang": "#9c755f", "deadlock": "#4e79a7", "not-injected": "#bab0ac", "error": "#555555",
}
_OTHER_COLOURS = ("#edc948", "#ff9da7", "#76b7b2", "#d37295")
_FAILURE_COLOUR = "#e15759"
_CHAR = 7.0          # width of a 12 px sans-serif character, near enough to lay out labels
_WIDTH = 760         # the charts' width in SVG units (they scale to the page)

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif;
       color: #222; background: #fff; margin: 2em auto; max-width: 1100px; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.2em; margin-top: 1.8em; border-bottom: 1px solid #ddd; padding-bottom: 0.2em; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.82em; }
th, td { padding: 0.25em 0.5em; border-bottom: 1px solid #e4e4e4; text-align: left; vertical-align: bottom; }
th { background: #f4f4f4; font-weight: 600; }
abbr { text-decoration: underline dotted; cursor: help; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.total td { font-weight: 600; }
tr.dim td { color: #888; }
table.meta th { background: none; width: 12em; }
.swatch { display: inline-block; width: 0.9em; height: 0.9em; margin-right: 0.4em; vertical-align: -0.1em;
          border-radius: 2px; }
.note { color: #555; font-size: 0.9em; max-width: 60em; }
figure { margin: 0.8em 0; }
figure svg { width: 100%; max-width: 760px; height: auto; display: block; }
figcaption { color: #555; font-size: 0.85em; margin-top: 0.3em; }
code { font-size: 0.95em; }
"""


def _esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _num(value: float) -> str:
    """A number for an SVG attribute: short, and never in exponent notation."""
    return f"{value:.2f}".rstrip("0").rstrip(".")


def _compact(steps: int) -> str:
    """A step for an axis label: 980, 9,750, 20.8k, 416k, 1.25M."""
    for unit, suffix in ((1_000_000, "M"), (1000, "k")):
        if steps >= max(unit, 10_000):
            value = steps / unit
            digits = 2 if value < 10 else 1 if value < 100 else 0
            return f"{value:.{digits}f}".rstrip("0").rstrip(".") + suffix
    return f"{steps:,}"


def colour_of(outcome: str, outcomes: Sequence[str]) -> str:
    if outcome in COLOURS:
        return COLOURS[outcome]
    extra = [o for o in outcomes if o not in COLOURS]
    return _OTHER_COLOURS[extra.index(outcome) % len(_OTHER_COLOURS)] if outcome in extra else "#999999"


def _text(x: float, y: float, content: str, *, anchor: str = "start", size: int = 12, fill: str = "#222",
          extra: str = "", tooltip: str | None = None) -> str:
    tip = "" if tooltip is None else f"<title>{_esc(tooltip)}</title>"
    return (f'<text x="{_num(x)}" y="{_num(y)}" font-size="{size}" fill="{fill}" text-anchor="{anchor}" '
            f'font-family="system-ui, Helvetica, Arial, sans-serif"{extra}>{tip}{_esc(content)}</text>')


def _fit(label: str, room: float) -> str:
    """``label`` cut (with an ellipsis) to the characters that fit in ``room`` units."""
    chars = max(4, int(room / _CHAR))
    return label if len(label) <= chars else label[:chars - 1] + "\u2026"


def _legend(outcomes: Sequence[str], every: Sequence[str], y: float, left: float) -> tuple[list[str], float]:
    """Legend items (the outcomes that occur) in rows across the chart; returns the SVG parts
    and the y below them; ``every`` is all the outcome columns, which fix the colours."""
    parts: list[str] = []
    x = left
    for outcome in outcomes:
        width = 18 + _CHAR * len(outcome) + 14
        if x + width > _WIDTH and x > left:
            x, y = left, y + 18
        parts.append(f'<rect x="{_num(x)}" y="{_num(y - 10)}" width="12" height="12" rx="2" '
                     f'fill="{colour_of(outcome, every)}"/>')
        parts.append(_text(x + 17, y, outcome))
        x += width
    return parts, y + 14


def outcome_chart(summary: Mapping[str, Any]) -> str:
    """Stacked horizontal bars: each structure's injected faults split by outcome."""
    outcomes = list(summary["totals"]["outcomes"])
    groups = summary["structures"]
    names = list(groups)
    label_w = min(230.0, max(80.0, 12 + _CHAR * max((len(n) for n in names), default=8)))
    right_w = 80.0
    bar_x, bar_w = label_w, _WIDTH - label_w - right_w
    occurring = [o for o in outcomes if summary["totals"]["outcomes"][o]["count"]] or outcomes
    parts, y = _legend(occurring, outcomes, 16, bar_x)
    top = y + 8
    row = 24
    for i, name in enumerate(names):
        g = groups[name]
        yy = top + i * row
        shown = _fit(name, label_w - 10)
        parts.append(_text(label_w - 8, yy + 15, shown, anchor="end", tooltip=name if shown != name else None))
        n = g["injected"]
        x = bar_x
        if n == 0:
            parts.append(f'<rect x="{_num(bar_x)}" y="{_num(yy + 3)}" width="{_num(bar_w)}" height="16" '
                         'fill="#f4f4f4" stroke="#ccc"/>')
            parts.append(_text(bar_x + 6, yy + 15, "no injected faults", fill="#777", size=11))
        for outcome in outcomes:
            stat = g["outcomes"][outcome]
            if not stat["count"]:
                continue
            w = bar_w * stat["count"] / n
            parts.append(f'<rect x="{_num(x)}" y="{_num(yy + 3)}" width="{_num(w)}" height="16" '
                         f'fill="{colour_of(outcome, outcomes)}"><title>{_esc(name)}: {_esc(outcome)} '
                         f'{stat["count"]:,} of {n:,} ({percent(stat["rate"])})</title></rect>')
            x += w
        parts.append(_text(bar_x + bar_w + 6, yy + 15, f"n = {n:,}", size=11, fill="#555"))
    bottom = top + len(names) * row + 4
    for tick in range(0, 101, 25):  # the axis: 0..100 % of a structure's injected faults
        tx = bar_x + bar_w * tick / 100
        parts.append(f'<line x1="{_num(tx)}" y1="{_num(top)}" x2="{_num(tx)}" y2="{_num(bottom)}" '
                     'stroke="#999" stroke-width="0.5" stroke-dasharray="2,3"/>')
        parts.append(_text(tx, bottom + 14, f"{tick}%", anchor="middle", size=11, fill="#555"))
    parts.append(_text(bar_x + bar_w / 2, bottom + 32, "share of the structure's injected faults",
                       anchor="middle", size=12, fill="#333"))
    height = bottom + 40
    return _svg(height, "Outcome mix per structure", parts)


def timeline_chart(summary: Mapping[str, Any]) -> str:
    """The failure fraction per bin of the golden run's steps, with the interval as a whisker."""
    timeline = summary["timeline"]
    bins = timeline["bins"]
    left, right, top, plot_h = 64.0, 16.0, 14.0, 200.0
    plot_w = _WIDTH - left - right
    base = top + plot_h
    parts: list[str] = []
    for tick in range(0, 101, 25):  # y axis: failure fraction in percent
        ty = base - plot_h * tick / 100
        parts.append(f'<line x1="{_num(left)}" y1="{_num(ty)}" x2="{_num(left + plot_w)}" y2="{_num(ty)}" '
                     f'stroke="{"#666" if tick == 0 else "#ddd"}" stroke-width="{1 if tick == 0 else 0.7}"/>')
        parts.append(_text(left - 6, ty + 4, f"{tick}%", anchor="end", size=11, fill="#555"))
    count = max(1, len(bins))
    bw = plot_w / count
    for i, b in enumerate(bins):
        x = left + i * bw
        tip = (f"steps {b['first']:,}-{b['last']:,}: {b['faults']:,} faults, failures {percent(b['rate'])} "
               f"{interval(b)}")
        if b["rate"] is None:
            parts.append(f'<rect x="{_num(x + 1)}" y="{_num(base - 3)}" width="{_num(max(1.0, bw - 2))}" '
                         f'height="3" fill="#ccc"><title>{_esc(tip)}</title></rect>')
            continue
        h = plot_h * b["rate"]
        parts.append(f'<rect x="{_num(x + 1)}" y="{_num(base - h)}" width="{_num(max(1.0, bw - 2))}" '
                     f'height="{_num(h)}" fill="{_FAILURE_COLOUR}" fill-opacity="0.85"><title>{_esc(tip)}</title></rect>')
        cx, y_low, y_high = x + bw / 2, base - plot_h * b["low"], base - plot_h * b["high"]
        parts.append(f'<line x1="{_num(cx)}" y1="{_num(y_low)}" x2="{_num(cx)}" y2="{_num(y_high)}" '
                     'stroke="#333" stroke-width="1"/>')
        for yy in (y_low, y_high):
            parts.append(f'<line x1="{_num(cx - 3)}" y1="{_num(yy)}" x2="{_num(cx + 3)}" y2="{_num(yy)}" '
                         'stroke="#333" stroke-width="1"/>')
        if bw >= 22:
            parts.append(_text(cx, y_high - 4, f"{b['faults']:,}", anchor="middle", size=9, fill="#555"))
    steps = timeline["steps"]
    marks = sorted({0, *range(0, len(bins), max(1, len(bins) // 5)), len(bins)}) if bins else [0]
    for i in marks:  # x axis: the first step of every few bins, and the run's end
        tx = left + i * bw
        step = steps if i >= len(bins) else bins[i]["first"]
        parts.append(f'<line x1="{_num(tx)}" y1="{_num(base)}" x2="{_num(tx)}" y2="{_num(base + 5)}" stroke="#666"/>')
        parts.append(_text(tx, base + 18, _compact(step), anchor="middle", size=11, fill="#555"))
    source = "golden run step" if timeline["source"] == "golden" else "step (no golden run: up to the latest fault)"
    parts.append(_text(left + plot_w / 2, base + 38, source, anchor="middle", size=12, fill="#333"))
    parts.append(_text(16, top + plot_h / 2, "failure fraction", anchor="middle", size=12, fill="#333",
                       extra=f' transform="rotate(-90 16 {_num(top + plot_h / 2)})"'))
    return _svg(base + 48, "Failure fraction over the golden run", parts)


def _svg(height: float, label: str, parts: list[str]) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_WIDTH} {_num(height)}" '
            f'width="{_WIDTH}" height="{_num(height)}" role="img" aria-label="{_esc(label)}">'
            + "".join(parts) + "</svg>")


# ------------------------------------------------------------------ tables


#: the headings of the columns of what was not counted, short (a table of every outcome is wide)
_NOT_INJECTED = '<abbr title="not injected: the trigger never fired">n/i</abbr>'
_ERRORS = '<abbr title="tool errors (a worker died, ...)">err</abbr>'


def _table(head: Sequence[str], rows: Sequence[tuple[Sequence[str], str]], numeric_from: int = 1) -> str:
    """A table; ``head`` and ``rows`` (cells, row class) are HTML, already escaped.  Columns from
    ``numeric_from`` on are numbers."""
    out = ['<div class="scroll"><table><thead><tr>']
    out += [f'<th{" class=num" if i >= numeric_from else ""}>{h}</th>' for i, h in enumerate(head)]
    out.append("</tr></thead><tbody>")
    for cells, css in rows:
        out.append(f'<tr class="{css}">' if css else "<tr>")
        out += [f'<td{" class=num" if i >= numeric_from else ""}>{c}</td>' for i, c in enumerate(cells)]
        out.append("</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def _swatch(outcome: str, outcomes: Sequence[str]) -> str:
    return f'<span class="swatch" style="background:{colour_of(outcome, outcomes)}"></span>{_esc(outcome)}'


def _outcome_table(summary: Mapping[str, Any]) -> str:
    totals = summary["totals"]
    outcomes = list(totals["outcomes"])
    rows: list[tuple[Sequence[str], str]] = []
    for name, stat in totals["outcomes"].items():
        rows.append(([_swatch(name, outcomes), f"{stat['count']:,}", percent(stat["rate"]), interval(stat)], ""))
    fail = totals["failures"]
    rows.append((["failures (" + _esc(", ".join(FAILURES)) + ")", f"{fail['count']:,}", percent(fail["rate"]),
                  interval(fail)], "total"))
    for name in ("not-injected", "error"):
        rows.append(([_swatch(name, outcomes), f"{totals[name]:,}", "not counted", ""], "dim"))
    return _table(["outcome", "faults", "rate", "interval"], rows)  # headings: fixed text, no escaping needed


def _group_table(key: str, groups: Mapping[str, Mapping[str, Any]], outcomes: Sequence[str],
                 extra: Sequence[tuple[str, Any]] = ()) -> str:
    head = [key, *(h for h, _ in extra), "injected", *(_esc(o) for o in outcomes), _NOT_INJECTED, _ERRORS, "failures", "interval"]
    rows: list[tuple[Sequence[str], str]] = []
    for name, g in groups.items():
        cells = [f"<code>{_esc(name)}</code>", *(_esc(render(g)) for _, render in extra), f"{g['injected']:,}",
                 *(f"{g['outcomes'][o]['count']:,}" for o in outcomes), f"{g['not-injected']:,}", f"{g['error']:,}",
                 percent(g["failures"]["rate"]), interval(g["failures"])]
        rows.append((cells, ""))
    return _table(head, rows)


def _bits(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def _count(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else str(value)


def _meta_table(summary: Mapping[str, Any]) -> str:
    c = summary["campaign"]
    totals = summary["totals"]
    golden = c["golden"]
    items: list[tuple[str, Any]] = [("campaign", c["name"]), ("program", c["program"]), ("architecture", c["arch"]),
                                    ("seed", c["seed"]), ("sampling", c["sampling"])]
    if c["margin"] is not None and c["sampling"] == "statistical":  # what the sample size was chosen for
        items.append(("planned error margin", f"{c['margin']} at confidence {c['confidence']}"))
    if golden:
        items.append(("golden run", f"{_count(golden.get('steps'))} steps, {_count(golden.get('cycles'))} cycles, "
                                    f"exit {golden.get('exit')}, {golden.get('seconds')} s"))
    done = f"{c['results']:,}" + (f" of {c['planned']:,} planned" if c["planned"] is not None else "")
    items += [("faults with a result", done),
              ("injected", f"{totals['injected']:,} ({totals['not-injected']:,} not injected, "
                           f"{totals['error']:,} tool errors, not counted)"),
              ("intervals", f"Wilson score, {100 * summary['confidence']:g}% confidence"),
              ("results file", c["results_file"]),
              ("metadata file", c["metadata_file"] or "none (no population sizes)")]
    rows = "".join(f"<tr><th>{_esc(k)}</th><td>{_esc(v)}</td></tr>" for k, v in items if v is not None)
    return f'<table class="meta"><tbody>{rows}</tbody></table>'


def _structure_section(summary: Mapping[str, Any]) -> str:
    """Per structure: what hit it and failed, and its AVF (uniform faults only) with its bits."""
    weighted = summary["avf"]["weighted"]
    note = ("<p class=note>AVF: the failure fraction of the faults drawn uniformly from the structure (over "
            "its bits and the run's steps: its own populations, the <i>uniform</i> column); class and explicit "
            "faults that hit it count in its failures only.")
    if weighted["rate"] is not None:
        note += (f" Size-weighted AVF over {weighted['bits']:,} bits of "
                 f"{_esc(', '.join(weighted['structures']))}: <b>{percent(weighted['rate'])}</b> "
                 f"{interval(weighted)}.")
    note += "</p>"
    rows: list[tuple[Sequence[str], str]] = []
    for name, g in summary["structures"].items():
        avf = g["avf"]
        vulnerable = "-" if g["vulnerable_bits"] is None else f"{g['vulnerable_bits']:,.1f}"
        rows.append(([f"<code>{_esc(name)}</code>", f"{g['injected']:,}", percent(g["failures"]["rate"]),
                      interval(g["failures"]), f"{avf['injected']:,}", f"<b>{percent(avf['rate'])}</b>",
                      interval(avf), _bits(g["bits"]), vulnerable], ""))
    return note + _table(["structure", "injected", "failures", "interval", "uniform", "AVF", "AVF interval",
                          "bits", "vulnerable bits"], rows)


def _timeline_table(summary: Mapping[str, Any]) -> str:
    rows: list[tuple[Sequence[str], str]] = [
        ([f"{b['first']:,}-{b['last']:,}", f"{b['faults']:,}", f"{b['failures']:,}", percent(b["rate"]), interval(b)], "")
        for b in summary["timeline"]["bins"]]
    return _table(["steps", "faults", "failures", "fraction", "interval"], rows)


def render_html(summary: Mapping[str, Any]) -> str:
    """The whole page."""
    c = summary["campaign"]
    name = c["name"] or c["results_file"] or "campaign"
    totals = summary["totals"]
    shown = [o for o, s in totals["outcomes"].items() if s["count"]] or list(totals["outcomes"])
    body = [f"<h1>Fault-injection report: {_esc(name)}</h1>", _meta_table(summary),
            "<h2>Outcomes</h2>", _outcome_table(summary)]
    if summary["structures"]:
        body += ["<h2>Outcome mix per structure</h2>",
                 f"<figure>{outcome_chart(summary)}<figcaption>Each bar is 100% of the structure's injected "
                 "faults (not-injected faults and tool errors left out).</figcaption></figure>",
                 _structure_section(summary)]
    timeline = summary["timeline"]
    if timeline["bins"]:
        body += ["<h2>Vulnerability over the run</h2>",
                 f"<figure>{timeline_chart(summary)}<figcaption>Failure fraction of the faults injected in each "
                 f"bin of {timeline['steps']:,} steps, with its interval; the number above a bar is its "
                 "faults.</figcaption></figure>"]
        if timeline["unplaced"]:
            body.append(f"<p class=note>{timeline['unplaced']:,} injected faults have no step and are not in "
                        "the chart.</p>")
    legend = ("<p class=note>n/i counts the faults not injected (their trigger never fired), err the tool "
              "errors; both are left out of the rates.</p>")
    groups = [("Per population", "population", summary["populations"],
               [("size", lambda g: _bits(g["size"])), ("sampled", lambda g: _bits(g["sampled"]))]),
              ("Per fault model", "model", summary["models"], []),
              ("Per instruction class", "class", summary["classes"], [])]
    for title, key, table, extra in groups:
        if table:
            body += [f"<h2>{title}</h2>", legend, _group_table(key, table, shown, extra)]
            legend = ""  # said once, above the first of these tables
    if timeline["bins"]:
        body += ["<h2>Timeline</h2>", _timeline_table(summary)]
    body.append("<p class=note>Rates are over the injected faults. Intervals: Wilson score interval (Wilson, "
                "1927); for a whole population of known size N, with the finite-population factor (N-n)/(N-1) "
                "in its variance. Failures: " + _esc(", ".join(FAILURES)) + ".</p>")
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>Fault-injection report: {_esc(name)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
            + "\n".join(body) + "\n</body>\n</html>\n")


def write_html(summary: Mapping[str, Any], path: str) -> None:
    """Write the page to ``path`` (:class:`ConfigError` when it cannot be written)."""
    from tessera.errors import ConfigError

    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(render_html(summary))
    except OSError as exc:
        raise ConfigError(f"cannot write the HTML report {path}: {exc.strerror or exc}") from None
