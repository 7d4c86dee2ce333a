"""Command-line option helpers shared by ``tessera tensix build`` and ``tessera tensix check``."""

from __future__ import annotations

import re

import click

#: the MATH_FIDELITY values the build header takes
_FIDELITIES = ("LoFi", "HiFi2", "HiFi3", "HiFi4")


def _dims(_ctx: click.Context, _param: click.Parameter, value: str | None) -> tuple[int, int] | None:
    if value is None:
        return None
    match = re.fullmatch(r"\s*(\d+)\s*[xX,]\s*(\d+)\s*", value)
    if not match:
        raise click.BadParameter("write ROWSxCOLUMNS in elements, e.g. 64x128")
    return int(match.group(1)), int(match.group(2))
