"""Fault-injection campaigns: a campaign file, its golden run, sampled faults, outcomes.

``tessera faults run campaign.toml`` and, from Python::

    from tessera_faults.campaign import Campaign, run_campaign
    summary = run_campaign(Campaign.load("campaign.toml"), "results.jsonl", workers=2)
    summary.outcomes          # {"masked": 310, "sdc": 41, "crash": 33}

    from distributed import Client
    run_campaign("campaign.toml", "results.jsonl", client=Client("tcp://host:8786"))

Modules: :mod:`~.config` (the file), :mod:`~.golden` (the golden run and its
checkpoints), :mod:`~.space` (populations and sampling), :mod:`~.observe` (outputs and
state digests), :mod:`~.task` (one injection in a worker, and the outcome classes),
:mod:`~.runner` (the whole campaign on :func:`tessera.batch.run_tasks`).  docs/faults.md
has the file's keys and a worked example.
"""

from __future__ import annotations

import importlib
from typing import Any

#: public name -> the module that defines it; imported on first use (``tessera run`` imports
#: the faults plugin's command line, which names the campaign commands)
_EXPORTS = {
    "Campaign": "config", "ModelChoice": "config", "OutputSpec": "config", "load_campaign": "config",
    "CampaignPlan": "runner", "CampaignSummary": "runner", "prepare": "runner", "run_campaign": "runner",
    "leveugle_sample_size": "space", "FAILURES": "task", "OUTCOMES": "task",
}

__all__ = ["FAILURES", "OUTCOMES", "Campaign", "CampaignPlan", "CampaignSummary", "ModelChoice", "OutputSpec",
           "leveugle_sample_size", "load_campaign", "prepare", "run_campaign"]


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"tessera_faults.campaign.{_EXPORTS[name]}"), name)
