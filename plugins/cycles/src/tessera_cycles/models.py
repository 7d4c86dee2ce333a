"""The cycle models this plugin offers, and the configuration keys they declare.

Each model names the architectures it applies to and its parameters; the plugin's
``tessera_tool_settings`` declares ``cycles`` (the model's name, or ``off``) and one
``cycles.NAME`` key per parameter of any model, so the core checks them before the
machine is built.  A parameter of another model than the one chosen, or a model that
does not apply to the machine's architecture, is a one-line configuration error when
the model is built (:func:`build`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from tessera.errors import ConfigError
from tessera.settings import Setting, SettingFamily, Settings

__all__ = ["MODELS", "ModelInfo", "build", "declared_settings", "params_of"]

#: the ELF machine number of RISC-V (e_machine 243): the in-order model's architectures
EM_RISCV = 0xF3


@attrs.frozen
class ModelInfo:
    """One model: its name, what it models, which architectures it applies to, its parameters."""

    name: str
    doc: str
    applies: Callable[[Any], bool]
    applies_text: str
    #: (name, default, one line) of each parameter
    params: tuple[tuple[str, Any, str], ...]
    #: ``factory(machine, params) -> timing model`` (imported when a model is built)
    factory: str = ""
    #: which agents' architectures the model times (default: ``applies``); a board whose
    #: agents run other architectures too (the tile's Tensix threads) says so here
    covers: Callable[[Any], bool] | None = None


def _riscv(arch: Any) -> bool:
    """A RISC-V host without extensions: its boards hold harts only.  Boards built on the
    harts with extensions (the tile's engines, the Tensix tile's coprocessor) add agents of
    their own, which their own models will time."""
    return (getattr(arch, "elf_machine", None) == EM_RISCV and getattr(arch, "register_uses", None) is not None
            and "extensions" not in getattr(arch, "capabilities", ()))


def _inorder_params() -> tuple[tuple[str, Any, str], ...]:
    from tessera_cycles.inorder import PARAM_DOCS, InOrderParams

    return tuple((f.name, f.default, PARAM_DOCS[f.name]) for f in attrs.fields(InOrderParams))


def _phoenix(arch: Any) -> bool:
    return getattr(arch, "name", None) == "phoenix"


def _barrel_params() -> tuple[tuple[str, Any, str], ...]:
    from tessera_cycles.barrel import PARAM_DOCS, BarrelParams

    return tuple((f.name, f.default, PARAM_DOCS[f.name]) for f in attrs.fields(BarrelParams))


def _tensix_params() -> tuple[tuple[str, Any, str], ...]:
    from tessera_cycles.tensix_model import PARAM_DOCS, TensixParams

    return tuple((f.name, f.default, PARAM_DOCS[f.name]) for f in attrs.fields(TensixParams))


def _tile(arch: Any) -> bool:
    from tessera_cycles.tensix import applies

    return applies(arch)


def _tile_agents(arch: Any) -> bool:
    from tessera_cycles.tensix import covers

    return covers(arch)


def _tilex_params() -> tuple[tuple[str, Any, str], ...]:
    from tessera_cycles.tile_model import PARAM_DOCS, TileParams

    return tuple((f.name, f.default, PARAM_DOCS[f.name]) for f in attrs.fields(TileParams))


def _tilex(arch: Any) -> bool:
    return getattr(arch, "name", None) == "tile"


def _tilex_agents(arch: Any) -> bool:
    """A hart of the tile architecture, or one of its engines (agents without an architecture)."""
    return arch is None or getattr(arch, "name", None) == "tile"


MODELS: dict[str, Callable[[], ModelInfo]] = {
    "inorder": lambda: ModelInfo(
        "inorder", "a classic five-stage in-order pipeline (IF ID EX MEM WB, full forwarding): load-use and "
                   "multiply/divide latencies, a branch predictor, I and D caches",
        _riscv, "machines of RISC-V harts only (rv32im, rv64im)", _inorder_params(),
        "tessera_cycles.riscv:RiscvInOrder"),
    "barrel": lambda: ModelInfo(
        "barrel", "rfPhoenix's fine-grained multithreaded pipeline (spec 6): one issue a clock, threads in turn, "
                  "a per-thread scoreboard without forwarding, taken-transfer bubbles, I and D caches",
        _phoenix, "rfPhoenix (phoenix)", _barrel_params(), "tessera_cycles.phoenix:PhoenixBarrel"),
    "tensix": lambda: ModelInfo(
        "tensix", "a Tensix tile: baby RISC-V cores (scoreboard, L1 and local-RAM latencies), each thread's "
                  "instruction FIFO, MOP/replay expansion and wait gate, the backend units shared by the threads",
        _tile, "Tensix tiles (tensix-tile, tensix-tile-wh) and the coprocessor alone (tensix, tensix-wh)", _tensix_params(), "tessera_cycles.tensix:TensixTile",
        _tile_agents),
    "tile": lambda: ModelInfo(
        "tile", "the tile extension (tile.md 9.3, 9.6): in-order RISC-V harts, each thread's LSU, TMA, MMA and "
                "ALU engines (busy by bandwidth, completing in order after their latency), t_wait and "
                "mbarrier waits", _tilex, "the tile architecture (tile)", _tilex_params(),
        "tessera_cycles.tilex:TileCycles", _tilex_agents),
}


def info(name: str) -> ModelInfo:
    return MODELS[name]()


def params_of(name: str, tool_config: dict[str, Any]) -> dict[str, Any]:
    """The ``cycles.NAME`` values of ``tool_config`` for model ``name`` (others refused)."""
    known = {p for p, _d, _t in info(name).params}
    given = {k[len("cycles."):]: v for k, v in tool_config.items() if k.startswith("cycles.")}
    foreign = sorted(k for k in given if k not in known)
    if foreign:
        raise ConfigError(f"cycles.{foreign[0]} is not a parameter of the {name} model "
                          f"(see `tessera cycles list`)")
    return given


def _kind(default: Any) -> str:
    if isinstance(default, bool):
        return "bool"
    if isinstance(default, int):
        return "int"
    return "str"


def declared_settings() -> Settings:
    """What ``tessera_tool_settings`` returns: ``cycles`` and every model's ``cycles.NAME``
    (a parameter two models share is one key; each model keeps its own default)."""
    found: dict[str, tuple[Any, str, list[str]]] = {}
    for name in MODELS:
        for pname, default, text in info(name).params:
            found.setdefault(f"cycles.{pname}", (default, text, []))[2].append(name)
    params: dict[str, Setting] = {}
    for key, (default, text, users) in found.items():
        kind = _kind(default)
        params[key] = Setting(key, kind, default, min=0 if kind == "int" else None,
                              help=f"{text} ({', '.join(users)})")
    choices: tuple[Any, ...] = ("off", "auto", *MODELS)
    members: tuple[Setting, ...] = tuple(params.values())
    return Settings([Setting("cycles", "choice", "off", choices=choices,
                             help="the cycle model that owns the clock (off: nominal latencies; auto: the "
                                  "one for the machine's architecture)")],
                    [SettingFamily("cycles.", settings=members, label="cycles model")],
                    label="cycles", listing="tessera cycles list")


def check_agents(machine: Any, name: str) -> None:
    """Refuse a board whose agents the model does not model (asked when the machine is ready:
    the timing model is chosen before the board adds its agents)."""
    model = info(name)
    covers = model.covers or model.applies
    others = sorted({getattr(getattr(a, "arch", None), "name", None) or type(a).__name__ for a in machine.agents
                     if not covers(getattr(a, "arch", None))})
    if others:
        raise ConfigError(f"the {name} cycle model does not apply to architecture {machine.arch.name}: its "
                          f"board has {', '.join(others)} agents, and the model covers {model.applies_text}")


def build(machine: Any) -> Any | None:
    """The timing model ``machine``'s configuration asks for (``None``: ``cycles`` is off)."""
    name = machine.tool_config.get("cycles", "off")
    if name == "auto":
        name = next((m for m in MODELS if info(m).applies(machine.arch)), "")
        if not name:
            raise ConfigError(f"no cycle model applies to architecture {machine.arch.name} "
                              "(see `tessera cycles list`)")
    if name == "off":
        params = [k for k in machine.tool_config if k.startswith("cycles.")]
        if params:
            raise ConfigError(f"{params[0]} is set but no cycle model is (give --cycles MODEL)")
        return None
    model = info(name)
    if not model.applies(machine.arch):
        raise ConfigError(f"the {name} cycle model does not apply to architecture {machine.arch.name}: "
                          f"it models {model.applies_text}")
    import importlib

    module, cls = model.factory.split(":")
    return getattr(importlib.import_module(module), cls)(machine, params_of(name, machine.tool_config))
