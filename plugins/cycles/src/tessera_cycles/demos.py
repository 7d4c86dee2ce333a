"""``tessera demo``'s cycle-model demos: each architecture's first example under its model.

For every installed architecture a model applies to (``cycles = auto``), the example
runs twice — without a model and with — and the demo passes when both runs end alike
(reason, exit status, instructions), the example's own check passes on the modelled
run, and the model's clock is at least the pipeline's fill beyond the instructions.
Its line says where the time went.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["demos"]


def _load(machine: Any, example: Any) -> None:
    from tessera.isa.asm import assemble

    program = assemble(machine.arch, example.source, file=f"<{machine.arch.name}:{example.name}>",
                       base=example.load_address)
    for address, blob in program.segments:
        machine.space.write_bytes(address, blob, force=True)
    machine.symbols.update(program.symbols)
    machine.set_entry(program.entry if program.entry is not None else example.load_address)


def _summary(report: dict[str, Any]) -> str:
    if "core" in report:
        core = report["core"]
        waits: dict[str, int] = {}
        for rep in report["agents"].values():
            for cause, n in rep["issue_stalls"].items():
                waits[cause] = waits.get(cause, 0) + n
        told = ", ".join(f"{k} {v:,}" for k, v in waits.items() if v)
        return (f"{report['model']}: {core['instructions']:,} instructions in {core['cycles']:,} cycles "
                f"(IPC {core['ipc']:.2f}){'; waits: ' + told if told else ''}")
    if report.get("model") == "tile":
        ops = sum(u["instructions"] for u in report["units"].values())
        busiest = max(report["units"].items(), key=lambda kv: kv[1]["busy"], default=None)
        unit = f"; busiest engine {busiest[0]} ({busiest[1]['busy']:,} cycles)" if busiest else ""
        instructions = sum(r["instructions"] for r in report["agents"].values())
        return (f"{report['model']}: {instructions:,} hart instructions and {ops:,} engine operations in "
                f"{report['clock']:,} cycles{unit}")
    if "units" in report:
        agents = report["agents"]
        cores = sum(r["instructions"] for r in agents.values() if "stalls" in r)
        tensix = sum(r["instructions"] for r in agents.values() if "waits" in r)
        busiest = max(report["units"].items(), key=lambda kv: kv[1]["busy"], default=None)
        unit = f"; busiest unit {busiest[0]} ({busiest[1]['busy']:,} cycles)" if busiest else ""
        return (f"{report['model']}: {cores:,} core and {tensix:,} Tensix instructions in {report['clock']:,} "
                f"cycles{unit}")
    parts = []
    for rep in report["agents"].values():
        stalls = ", ".join(f"{k} {v:,}" for k, v in rep["stalls"].items() if v and k not in ("load_use", "mul_div"))
        parts.append(f"{rep['instructions']:,} instructions in {rep['cycles']:,} cycles (CPI {rep['cpi']:.2f})"
                     f"{'; stalls: ' + stalls if stalls else ''}")
    return f"{report['model']}: " + "; ".join(parts)


def _runner(host: Any, arch: Any, example: Any) -> Callable[[Any], tuple[bool, str]]:
    def run(_workdir: Any) -> tuple[bool, str]:
        import tessera_cycles
        from tessera.machine import Machine

        results = []
        for config in ({}, {"cycles": "auto"}):
            machine = Machine(arch, host=host, config=config)
            _load(machine, example)
            from tessera.batch import captured_output

            with captured_output():
                result = machine.run(max_steps=example.max_steps)
            results.append((machine, result))
        (plain, a), (modelled, b) = results
        report = tessera_cycles.report(modelled)
        if report is None:
            return False, "the machine ran no cycle model"
        same = (a.reason, a.exit_code, a.steps) == (b.reason, b.exit_code, b.steps)
        problem = example.check(modelled, b) if example.check is not None else None
        summary = _summary(report)
        if not same:
            return False, f"{summary}: the run ended differently with the model ({b.reason}, {b.steps} steps)"
        if problem:
            return False, f"{summary}: {problem}"
        # the model counts at least one cycle per instruction of its busiest agent
        return modelled.clock >= max(a.instret for a in modelled.agents), summary

    return run


def demos(host: Any) -> list[dict[str, Any]]:
    """What ``tessera_tool_demos`` returns: one demo per architecture a model applies to."""
    from tessera_cycles.models import MODELS, info

    out = []
    for name, (arch, _plugin) in sorted(host.architectures().items()):
        model = next((m for m in MODELS if info(m).applies(arch)), None)
        if model is None or not arch.examples or not arch.examples[0].source:
            continue
        example = arch.examples[0]
        out.append({"name": f"{model}/{example.name}", "arch": name,
                    "description": f"{arch.name}'s {example.name} example under the {model} cycle model",
                    "run": _runner(host, arch, example)})
    return out
