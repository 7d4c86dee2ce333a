"""Execution engine: agents, the decode-cache fill path and the per-instruction loop."""

from tessera.engine.agent import HALTED, RUNNABLE, WAITING, Agent, EngineAgent
from tessera.engine.cpu import CpuAgent
from tessera.engine.decodecache import DecodeCache
from tessera.engine.fill import DecodeFiller

__all__ = ["Agent", "EngineAgent", "CpuAgent", "DecodeCache", "DecodeFiller", "RUNNABLE", "WAITING", "HALTED"]
