"""Configuration of a Tensix machine (``--set key=value``), and the config-register space.

``TensixConfig`` holds the emulator's choices (documented in ``docs/tensix.md``).
``ConfigSpace`` is the hardware configuration state the instructions read — thread
config (per thread) and backend config — addressed by field name as in the vendor's
register map (e.g. ``DEST_TARGET_REG_CFG_MATH_Offset``); unset fields read 0.
"""

from __future__ import annotations

from typing import Any

import attrs

from tessera.errors import ConfigError


@attrs.frozen
class TensixConfig:
    threads: int = 1            # Tensix threads in direct mode
    lenient: bool = False       # continue with hardware-like behaviour where a rule is broken
    ttsim_reset: bool = False   # LReg[12] power-on value of the vendor simulator (0x3B000000)
    lane_flags_reset: bool = False  # initial LaneFlags (seed: false; ttsim: true)

    @classmethod
    def from_machine(cls, config: dict[str, Any]) -> TensixConfig:
        known = {f.name: f for f in attrs.fields(cls)}
        values: dict[str, Any] = {}
        for key, value in config.items():
            if key in ("echo", "dest_in", "dest_out") or key.startswith(("cfg.", "tcfg.")):
                continue
            if key not in known:
                raise ConfigError(f"unknown Tensix setting {key!r} (known: {', '.join(sorted(known))})")
            want = known[key].type
            if want in (bool, "bool") and value in (0, 1):
                value = bool(value)
            if want in (int, "int") and isinstance(value, bool):
                raise ConfigError(f"Tensix setting {key} takes a number")
            values[key] = value
        return cls(**values)


class ConfigSpace:
    """Named configuration fields (thread or backend config); unset fields read 0."""

    def __init__(self, initial: dict[str, int] | None = None) -> None:
        self.fields: dict[str, int] = dict(initial or {})

    def get(self, name: str) -> int:
        return self.fields.get(name, 0)

    def set(self, name: str, value: int) -> None:
        self.fields[name] = int(value)

    def state(self) -> dict[str, int]:
        return {k: v for k, v in sorted(self.fields.items()) if v}
