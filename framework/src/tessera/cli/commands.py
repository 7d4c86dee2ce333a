"""The built-in subcommands, in help order."""

from tessera.cli.bench import bench
from tessera.cli.demo import demo
from tessera.cli.info import archs, plugins
from tessera.cli.newplugin import new_plugin
from tessera.cli.run import resume, run
from tessera.cli.tools import asm, disasm

ALL = [run, resume, asm, disasm, plugins, archs, demo, new_plugin, bench]
