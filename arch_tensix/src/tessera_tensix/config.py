"""Configuration of a Tensix machine (``--set key=value``), and the config-register space.

``TensixConfig`` holds the emulator's choices (documented in ``docs/tensix.md``), each
declared with :func:`tessera.settings.setting`.  ``cfg.NAME`` / ``tcfg.NAME`` preset a
backend-config / thread-config field named as in the vendor's register map; the map
(``data/config_fields.json``, field widths per chip) is what checks them, so an unknown
name or a value wider than its field is refused before the machine is built.
``ConfigSpace`` is the hardware configuration state the instructions read — thread
config (per thread) and backend config — addressed by field name; unset fields read 0.
"""

from __future__ import annotations

import difflib
import functools
import json
from importlib import resources
from typing import Any

import attrs

from tessera.errors import ConfigError
from tessera.settings import SettingFamily, Settings, parse_int, setting

#: A Tensix core has three threads (T0 unpack, T1 math, T2 pack) that share its units.
MAX_THREADS = 3
CHIP_NAMES = {"bh": "Blackhole", "wh": "Wormhole B0"}
#: The two field families: key prefix -> (section of the register map, what it is).
FAMILIES = {"cfg.": ("cfg", "backend-config"), "tcfg.": ("tcfg", "thread-config")}


@attrs.frozen
class TensixConfig:
    threads: int = setting(1, min=1, max=MAX_THREADS, help="Tensix threads in direct mode (T0 runs the kernel)",
                           note="a Tensix core has three threads, T0..T2")
    lenient: bool = setting(False, help="continue with hardware-like behaviour where a rule is broken")
    ttsim_reset: bool = setting(False, help="LReg[12] power-on value of the vendor simulator (0x3B000000) "
                                            "instead of BH soft reset (1/65536)")
    lane_flags_reset: bool = setting(False, help="initial LaneFlags true (ttsim) instead of false "
                                                 "(BH soft reset)")
    dest_in: str | None = setting(None, "path", help="load Dest from this (1024, 16) .npy file (--dest-in)")
    dest_out: str | None = setting(None, "path", help="write Dest to this .npy file when the run ends "
                                                      "(--dest-out)")
    l1: str | None = setting(None, "str", help="load L1 before the run: ADDR[:FORMAT]=FILE.npy, comma-separated "
                                               "(--l1; docs/tensix.md)")
    l1_out: str | None = setting(None, "str", help="save L1 when the run ends: ADDR:SHAPE:FORMAT=FILE.npy, "
                                                   "comma-separated (--l1-out)")
    strict_rdcfg: bool = setting(False, help="Blackhole: stop when the instruction right after RDCFG reads "
                                             "the GPR it writes (RDCFG.md); off by default because the "
                                             "vendor's own matmul kernels do it and pass on silicon "
                                             "(docs/tensix.md)")
    store_push_gap: bool = setting(True, help="tile: an instruction pushed by a store to INSTRN_BUF_BASE "
                                              "never reaches the wait gate right after the one before it, "
                                              "nor the next one right after it (the 'instruction right "
                                              "after' rules do not apply across it; docs/tensix.md)")
    park_polls: bool = setting(True, help="tile: park a baby RISC-V core that only polls memory (or loops "
                                          "in 'j .') until what it reads changes, instead of running it; "
                                          "a deadlock between polling cores is then reported, not a budget "
                                          "(docs/tensix.md)")
    echo: bool = setting(True, help="no effect (Tensix has no console to echo; accepted so a tool can pass "
                                    "echo=false to any architecture)")

    @classmethod
    def from_machine(cls, config: dict[str, Any], declared: Settings | None = None) -> TensixConfig:
        """The settings of ``config``, checked against ``declared`` (the architecture's
        declaration; default: Blackhole's).  ``cfg.*``/``tcfg.*`` are checked too; the
        board reads them with :func:`presets`."""
        return cls(**(declared or settings("bh")).resolve(config))


@functools.cache
def field_widths(chip: str) -> dict[str, dict[str, int]]:
    """``{"cfg": {name: bits}, "tcfg": {name: bits}}`` of ``chip`` (``bh`` or ``wh``)."""
    text = resources.files("tessera_tensix").joinpath("data", "config_fields.json").read_text(encoding="utf-8")
    return json.loads(text)[chip]


class FieldPreset:
    """Checks ``cfg.NAME=V`` / ``tcfg.NAME=V`` against the chip's register map.

    A class rather than a closure so the architecture record (which holds it) pickles.
    """

    def __init__(self, chip: str, prefix: str) -> None:
        self.chip = chip
        self.prefix = prefix

    def __call__(self, key: str, value: Any) -> int:
        section, what = FAMILIES[self.prefix]
        name = key[len(self.prefix):]
        widths = field_widths(self.chip)[section]
        chip = CHIP_NAMES[self.chip]
        if name not in widths:
            others = [c for c in CHIP_NAMES if c != self.chip and name in field_widths(c)[section]]
            close = difflib.get_close_matches(name, list(widths), n=1, cutoff=0.75)
            hint = f" (it is a {CHIP_NAMES[others[0]]} field)" if others else \
                f"; did you mean {self.prefix}{close[0]}?" if close else ""
            raise ConfigError(f"unknown Tensix {what} field {key!r}: not in the {chip} register map{hint}")
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise ConfigError(f"Tensix setting {key} takes an integer, not {value!r}")
        try:
            number = parse_int(value) if isinstance(value, str) else int(value)
        except ValueError:
            raise ConfigError(f"Tensix setting {key} takes an integer, not {value!r}") from None
        bits = widths[name]
        if not 0 <= number < 1 << bits:
            raise ConfigError(f"Tensix setting {key}={value} is out of range (0..{(1 << bits) - 1}: "
                              f"a {bits}-bit field)")
        return number

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FieldPreset) and (other.chip, other.prefix) == (self.chip, self.prefix)

    def __hash__(self) -> int:
        return hash((self.chip, self.prefix))


@functools.cache
def settings(chip: str = "bh") -> Settings:
    """The declared settings of a Tensix machine of ``chip``: the fields above plus the presets."""
    families = tuple(
        SettingFamily(prefix, check=FieldPreset(chip, prefix), kind="int",
                      range="0..2**bits-1 (the field's width)",
                      help=f"preset {what} field NAME (the {CHIP_NAMES[chip]} register map's names, "
                           f"e.g. {prefix}{example})")
        for prefix, (_section, what), example in (
            ("cfg.", FAMILIES["cfg."], "ALU_ACC_CTRL_SFPU_Fp32_enabled"),
            ("tcfg.", FAMILIES["tcfg."], "ADDR_MOD_DST_SEC1_DestIncr")))
    return Settings.from_attrs(TensixConfig, label="Tensix", families=families)


def presets(config: dict[str, Any], prefix: str) -> dict[str, int]:
    """The ``prefix``-family fields of a checked configuration: ``{NAME: value}``."""
    return {key[len(prefix):]: int(value) for key, value in config.items() if key.startswith(prefix)}


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
