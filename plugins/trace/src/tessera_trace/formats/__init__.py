"""The trace formats, by the name ``--trace`` takes."""

from __future__ import annotations

from tessera_trace.formats.base import Format
from tessera_trace.formats.jsonl import JsonlFormat
from tessera_trace.formats.perfetto import PerfettoFormat
from tessera_trace.formats.profile import ProfileFormat
from tessera_trace.formats.text import TextFormat

FORMATS: dict[str, type[Format]] = {
    "text": TextFormat,
    "jsonl": JsonlFormat,
    "perfetto": PerfettoFormat,
    "profile": ProfileFormat,
}

__all__ = ["FORMATS", "Format"]
