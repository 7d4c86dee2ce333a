"""Fake injectors for the ``tool-effect`` check (cases marked ``changes`` / ``transparent``).

They reuse ``fakeplugins``' ``tiny`` architecture and its option-driven
``FaultInjector`` (``--fi-at PC`` flips bit 0 of r1 after the instruction at PC).  Each
is wrong in one way the other checks cannot see, because they compare runs made with
the same options.
"""

from __future__ import annotations

from fakeplugins import SUM, FaultInjector

import tessera

#: SUM's `add r1, r2` is at 0x4: 12 becomes 13.  0x3fe is never executed.
EFFECT_CASES = [
    {"name": "fi-changes-the-sum", "source": SUM, "max_steps": 100, "tool_options": {"--fi-at": "0x4"},
     "changes": True, "expect": {"exit_code": 13}},
    {"name": "fi-armed-never-fires", "source": SUM, "max_steps": 100, "tool_options": {"--fi-at": "0x3fe"},
     "transparent": True, "expect": {"exit_code": 12}},
]

#: a fault that claims to change the sum but is aimed at an address never executed; its
#: expectation is the untouched sum, so `cases` passes it
DUD_CASES = [
    {"name": "fi-claims-a-change", "source": SUM, "max_steps": 100, "tool_options": {"--fi-at": "0x3fe"},
     "changes": True, "expect": {"exit_code": 12}},
]


class Leaky(FaultInjector):
    """Armed (``--fi-at`` given) it writes r0 when configured, whether or not the fault ever fires:
    the same on every engine and in every run, so only a comparison with the unarmed run sees it."""

    @tessera.hookimpl
    def tessera_run_configure(self, machine, options):
        super().tessera_run_configure(machine, options)
        if options.get("fi_at") is not None:
            machine.cpus[0].r[0] = 1


class FastOnly(FaultInjector):
    """Injects as told, but armed it also flips r0 after every `li` the fast engine runs: wrong
    on one engine only."""

    @tessera.hookimpl
    def tessera_execute_instrument(self, machine, ins):
        own = super().tessera_execute_instrument(machine, ins)
        if own is not None or self.at.get(machine) is None or ins.mnemonic != "li":
            return own
        if machine.engine != "fast":
            return None

        def after(agent, ins):
            agent.r[0] ^= 1

        return None, after


class Marker(FaultInjector):
    """Injects into state ``machine.state()`` does not show (like Tensix's Dest): a list kept in
    ``machine.ext``, which only a case's ``check`` reads."""

    @tessera.hookimpl
    def tessera_run_configure(self, machine, options):
        super().tessera_run_configure(machine, options)
        if "fimarks" not in machine.ext:
            machine.ext.declare("fimarks", [])

    @tessera.hookimpl
    def tessera_execute_instrument(self, machine, ins):
        if self.at.get(machine) != ins.address:
            return None

        def after(agent, ins):
            machine.ext["fimarks"].append(ins.address)

        return None, after


def marked_once(machine, outcome):
    marks = machine.ext["fimarks"]
    return None if marks == [4] else f"marks {marks}, expected [4]"


MARKER_CASES = [
    {"name": "fi-marks-the-add", "source": SUM, "max_steps": 100, "tool_options": {"--fi-at": "0x4"},
     "changes": True, "expect": {"exit_code": 12}, "check": marked_once},
]


good_effects = FaultInjector(cases=EFFECT_CASES)
marker = Marker(cases=MARKER_CASES)
dud = FaultInjector(cases=EFFECT_CASES + DUD_CASES)
leaky = Leaky(cases=EFFECT_CASES)
fast_only = FastOnly(cases=EFFECT_CASES)
malformed = FaultInjector(cases=[
    {"name": "fi-both", "source": SUM, "tool_options": {"fi_at": 4}, "changes": True, "transparent": True,
     "expect": {"exit_code": 13}},
    {"name": "fi-no-options", "source": SUM, "changes": True, "expect": {"exit_code": 12}},
    {"name": "fi-not-a-bool", "source": SUM, "tool_options": {"fi_at": 4}, "transparent": "yes",
     "expect": {"exit_code": 13}},
])
