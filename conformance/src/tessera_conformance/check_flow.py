"""Checks of an architecture's declared control flow against its semantic functions.

Block ends come from the rows' control flags (``branch``, ``jump``, ``trap``,
``halt``, ``wait``); the fast engine's analysis of the semantic functions is a safety
net and this cross-check.  No program runs here.
"""

from __future__ import annotations

import pytest

from tessera.semantics import control_flow_rows


def test_control_flags(arch_target):
    """In an architecture declaring ``control_flow="flags"``, no row's flags disagree with its code."""
    arch = arch_target.arch
    if arch.control_flow != "flags":
        pytest.skip(f"{arch.name} does not declare its control flags (control_flow={arch.control_flow!r}): "
                    "blocks end where its semantic functions may return a PC")
    rows = control_flow_rows(arch)
    if rows and all(r.code is None for r in rows):
        pytest.skip(f"{arch.name}: no row's semantic function can be read (registry objects or no "
                    "source): its flags cannot be checked against code")
    bad = [r for r in rows if r.problem is not None]
    if bad:
        unknown = sum(1 for r in rows if r.code is None)
        lines = [f"{r.mnemonic} (flags: {', '.join(sorted(r.flags)) or 'none'}): {r.problem}" for r in bad]
        more = f"; {unknown} row(s) unknown (code not readable)" if unknown else ""
        pytest.fail(f"{arch.name}: {len(bad)} row(s) whose control flags disagree with their code{more}: "
                    + "; ".join(lines), pytrace=False)
