"""Tessera architecture plugin for the Tenstorrent Tensix coprocessor (see docs/tensix.md)."""
