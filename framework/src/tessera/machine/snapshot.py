"""Snapshot files: a checked header, a digest, and a pickle that can only build state.

A snapshot travels between processes and machines (``tessera resume``, fault-injection
campaigns restoring it on workers), so reading one must be safe and must never give a
silently different run.  The file is::

    MAGIC | SHA-256 of everything after it (32 bytes) | header length (u32, big endian)
          | header (JSON) | payload (pickle, protocol 5)

* **Integrity.**  The digest covers the header and the payload, and is checked before
  either is parsed: a truncated file or a flipped bit anywhere after the magic is a
  :class:`~tessera.errors.SnapshotError` that says the file is damaged.
* **Provenance.**  The header (plain JSON, parsed before any unpickling) names the
  Tessera version, the architecture, the plugins whose code the state needs (with
  their distributions and versions) and every package the pickle refers to.
  Restoring checks them against the plugin host first: a plugin that is missing,
  disabled, failed, or of another release series is refused with one line naming it.
* **No code chosen by the file.**  The payload is read by :class:`SafeUnpickler`,
  which (1) resolves only *classes* (never functions or other objects) from the core,
  from the packages of active plugins that the header declares, and from packages
  registered with :func:`allow_package`, plus a short list of plain-data types
  (builtins, :mod:`collections`, numpy arrays and dtypes); (2) allows the pickle
  ``REDUCE`` call only on those plain-data types, enum classes and constructors
  registered with :func:`allow_reconstructor` — ordinary objects are rebuilt with
  ``cls.__new__`` and their saved attributes, so no ``__init__`` with arguments from
  the file runs; (3) refuses the opcodes that call classes directly (``INST``,
  ``OBJ``) and the copyreg extension registry.  Architectures are not pickled at all:
  they are written as their name and taken from the installed plugin on restore, so
  no semantic function, build function or example check is named by the file.

The choice of a restricted unpickler over a data-only record format is explained in
docs/machine.md ("Snapshots").

``Machine.snapshot``, ``restore``, ``save_snapshot`` and ``load_snapshot`` are
:func:`capture`, :func:`restore`, :func:`write` and :func:`read_bytes` at the end of
this module: the machine only says which of its attributes are rebuilt rather than
saved (``tessera.machine.machine.TRANSIENT``) and how to rebuild them.
"""

from __future__ import annotations

import enum
import hashlib
import importlib
import io
import json
import pickle
import struct
from collections.abc import Callable, Iterable
from typing import Any

from tessera.errors import SnapshotError, TesseraError
from tessera.isa.description import Architecture
from tessera.version import __version__

MAGIC = b"TESSERA-SNAPSHOT\x00"
#: Format 1 was an unchecked pickle of the whole machine (architecture included);
#: it is refused, because reading it would mean trusting it.
FORMAT = 2
_DIGEST_SIZE = 32
_LENGTH = struct.Struct(">I")
_MAX_HEADER = 1 << 20
CORE_PACKAGE = "tessera"

# --------------------------------------------------------------------------- allow-lists

#: Plain-data types that may appear as globals, and whether ``REDUCE`` may call them.
_DATA_GLOBALS: dict[tuple[str, str], bool] = {
    **{("builtins", n): True for n in (
        "set", "frozenset", "bytearray", "bytes", "complex", "slice", "range", "list",
        "dict", "tuple", "int", "float", "str", "bool")},
    **{("collections", n): True for n in ("deque", "OrderedDict", "defaultdict", "Counter")},
}
for _np in ("numpy.core", "numpy._core"):  # numpy 1.x and 2.x spell the same functions so
    _DATA_GLOBALS[(f"{_np}.multiarray", "_reconstruct")] = True
    _DATA_GLOBALS[(f"{_np}.multiarray", "scalar")] = True
    _DATA_GLOBALS[(f"{_np}.numeric", "_frombuffer")] = True
_DATA_GLOBALS[("numpy", "dtype")] = True
_DATA_GLOBALS[("numpy", "ndarray")] = False
for _dtype in ("Float64DType", "Float32DType", "Float16DType", "Int8DType", "Int16DType",
               "Int32DType", "Int64DType", "UInt8DType", "UInt16DType", "UInt32DType",
               "UInt64DType", "BoolDType", "ObjectDType"):
    _DATA_GLOBALS[("numpy.dtypes", _dtype)] = False

#: Packages of the plain-data globals above (a header may name them without a plugin).
_DATA_PACKAGES = frozenset({"builtins", "collections", "numpy"})
_PACKAGES: set[str] = {CORE_PACKAGE}
_RECONSTRUCTORS: set[Any] = set()


def allow_package(name: str) -> None:
    """Let snapshots build classes from the top-level package ``name``.

    The core and every active plugin's package are allowed already; this is for code
    that puts its own classes into a machine without being a plugin (an embedding
    application, a test module).  Only classes are ever resolved, never functions.
    """
    _PACKAGES.add(name.partition(".")[0])


def allow_reconstructor(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Let snapshots call ``fn`` to rebuild an object (for classes whose ``__reduce__``
    returns ``(fn, args)``).  ``fn`` must build plain state from its arguments and do
    nothing else: a snapshot file chooses the arguments.  Usable as a decorator."""
    _RECONSTRUCTORS.add(fn)
    return fn


def _top(module: str) -> str:
    return module.partition(".")[0]


# --------------------------------------------------------------------------- writing

class _Pickler(pickle.Pickler):
    """Writes architectures as their names and records every module the pickle names."""

    def __init__(self, stream: Any, archs: dict[str, Architecture]) -> None:
        super().__init__(stream, protocol=5)
        self.archs = archs
        self.modules: set[str] = set()

    def persistent_id(self, obj: Any) -> Any:
        if isinstance(obj, Architecture):
            self.archs.setdefault(obj.name, obj)
            return ("arch", obj.name)
        return None

    def reducer_override(self, obj: Any) -> Any:
        module = getattr(obj, "__module__", None) if isinstance(obj, type) else None
        if module is None and not isinstance(obj, type):
            module = getattr(type(obj), "__module__", None)
        if isinstance(module, str):
            self.modules.add(module)
        return NotImplemented


def _plugin_entry(record: Any) -> dict[str, str]:
    return {"name": record.name, "distribution": record.distribution, "version": record.version}


class Registry:
    """The plugins a snapshot is checked against: a host, then the installed plugins.

    A plugin the given host knows (active, disabled or failed) is judged by that host
    alone, so ``--no-plugin phoenix resume ph.snap`` is refused; one it has never heard
    of (a test's bare host, ``host=None``) is looked up among the installed plugins,
    whatever the environment selects.  Only the plugins a snapshot names are imported.
    """

    def __init__(self, host: Any) -> None:
        self.host = host

    def _hosts(self) -> list[Any]:
        return [h for h in (self.host, _installed()) if h is not None]

    def record(self, name: str) -> Any:
        for host in self._hosts():
            found = host.record(name)
            if found is not None:
                return found
        return None

    def owner(self, arch: str) -> Any:
        """The record of the active plugin providing architecture ``arch``, or ``None``."""
        for host in self._hosts():
            try:
                plugin = host.plugin_of(arch)
            except TesseraError:  # a broken plugin declares it: not a provider
                plugin = None
            if plugin is not None:
                return host.record(plugin)
        return None

    def architecture(self, arch: str) -> Any:
        for host in self._hosts():
            try:
                if host.plugin_of(arch) is not None:
                    return host.architecture(arch)
            except TesseraError:
                continue
        return None

    def by_package(self) -> dict[str, Any]:
        """The plugin record of each plugin package, imported or not (the given host wins)."""
        out: dict[str, Any] = {}
        for host in reversed(self._hosts()):
            for record in host.found_records():
                if record.module:
                    out[_top(record.module)] = record
        return out


_INSTALLED: list[Any] = []


def _installed() -> Any:
    """A host of every installed plugin, ignoring the environment's selection (cached)."""
    if not _INSTALLED:
        from tessera.plugins import PluginHost

        _INSTALLED.append(PluginHost(use_environment=False))
    return _INSTALLED[0]


def dump(machine: Any, registry: Registry) -> bytes:
    """Serialise ``machine``; ``registry`` names the plugins its state needs."""
    archs: dict[str, Architecture] = {}
    buffer = io.BytesIO()
    pickler = _Pickler(buffer, archs)
    try:
        pickler.dump(machine)
    except (pickle.PicklingError, TypeError, AttributeError) as exc:
        raise SnapshotError(f"machine state cannot be saved: {exc}") from None
    packages = sorted({_top(m) for m in pickler.modules} - {"builtins"})
    by_package = registry.by_package()
    plugins: dict[str, dict[str, str]] = {}
    arch_plugins: dict[str, str | None] = {}
    for name in sorted(archs):
        record = registry.owner(name)
        if record is not None:
            provided = registry.architecture(name)
            if provided is not archs[name] and provided != archs[name]:
                record = None  # a description of the same name that the plugin does not provide
        arch_plugins[name] = record.name if record is not None else None
        if record is not None:
            plugins[record.name] = _plugin_entry(record)
    libraries: list[dict[str, str]] = []
    for package in packages:
        record = by_package.get(package)
        if record is not None and record.name not in plugins:
            libraries.append({**_plugin_entry(record), "package": package})
    header = {
        "format": FORMAT,
        "tessera": __version__,
        "arch": machine.arch.name,
        "architectures": arch_plugins,
        "plugins": [plugins[k] for k in sorted(plugins)],
        "packages": packages,
        "libraries": libraries,
    }
    head = json.dumps(header, sort_keys=True).encode()
    body = _LENGTH.pack(len(head)) + head + buffer.getvalue()
    return MAGIC + hashlib.sha256(body).digest() + body


# --------------------------------------------------------------------------- reading

def _series(version: str) -> tuple[str, ...]:
    """The release series a version belongs to: ``0.3`` for 0.3.x, ``2`` for 2.x.y."""
    parts = version.split(".")
    if not parts[0].isdigit():
        return (version,)
    return tuple(parts[:2]) if parts[0] == "0" else (parts[0],)


def compatible(saved: str, installed: str) -> bool:
    """Versions that read each other's snapshots: the same release series (same major
    version, or for 0.x the same minor), or both unversioned (``-``)."""
    if "-" in (saved, installed):
        return saved == installed
    return _series(saved) == _series(installed)


def read_header(data: bytes) -> tuple[dict[str, Any], memoryview]:
    """Check magic and digest, parse the header; ``(header, payload)``."""
    if not data.startswith(MAGIC):
        raise SnapshotError("not a Tessera snapshot (bad magic)")
    start = len(MAGIC)
    old = _looks_like_format_1(data[start:])
    digest = data[start:start + _DIGEST_SIZE]
    body = memoryview(data)[start + _DIGEST_SIZE:]
    if len(digest) < _DIGEST_SIZE or len(body) < _LENGTH.size:
        raise SnapshotError(old or f"snapshot is damaged: truncated ({len(data)} bytes)")
    if hashlib.sha256(body).digest() != digest:
        raise SnapshotError(old or "snapshot is damaged: its SHA-256 digest does not match its "
                                   "contents (truncated or modified)")
    (length,) = _LENGTH.unpack_from(body)
    if length > _MAX_HEADER or _LENGTH.size + length > len(body):
        raise SnapshotError("snapshot is damaged: impossible header length")
    try:
        header = json.loads(bytes(body[_LENGTH.size:_LENGTH.size + length]))
    except (ValueError, UnicodeDecodeError):
        raise SnapshotError("snapshot is damaged: unreadable header") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        got = header.get("format") if isinstance(header, dict) else None
        raise SnapshotError(f"unsupported snapshot format {got!r} (this Tessera reads format {FORMAT})")
    for key, kind in (("tessera", str), ("arch", str), ("architectures", dict), ("plugins", list),
                      ("packages", list), ("libraries", list)):
        if not isinstance(header.get(key), kind):
            raise SnapshotError(f"snapshot header is invalid: {key!r} missing or not a {kind.__name__}")
    return header, body[_LENGTH.size + length:]


def _looks_like_format_1(rest: bytes) -> str | None:
    if rest[:1] == b"\x80":  # format 1 put a pickle right after the magic
        return ("unsupported snapshot format 1 (an unchecked pickle, which is not read because "
                "it could run code): make the snapshot again with this Tessera")
    return None


#: the "distributions" of plugins that have none: a module named to the host, and an object
#: registered in-process.  A batch worker rebuilds an in-process plugin by its module (see
#: tessera.batch.hostrecipe), so a snapshot made by one is read by the other.
_NO_DISTRIBUTION = frozenset({"(module)", "(registered)"})


def _same_distribution(made_by: str, here: str) -> bool:
    return made_by == here or {made_by, here} <= _NO_DISTRIBUTION


def _check_plugins(header: dict[str, Any], registry: Registry) -> set[str]:
    """Refuse a snapshot whose plugins are not usable here; the packages it may use."""
    if not compatible(header["tessera"], __version__):
        raise SnapshotError(f"snapshot was made by Tessera {header['tessera']}, which this "
                            f"Tessera {__version__} cannot read (another release series)")
    allowed = set(_PACKAGES)
    for entry in header["plugins"]:
        if not isinstance(entry, dict) or not all(isinstance(entry.get(k), str)
                                                   for k in ("name", "distribution", "version")):
            raise SnapshotError("snapshot header is invalid: bad plugin entry")
        name, dist, version = entry["name"], entry["distribution"], entry["version"]
        made_by = f"{dist} {version}"
        record = registry.record(name)
        if record is None:
            raise SnapshotError(f"snapshot needs plugin {name} ({made_by}), which is not installed")
        if record.status == "disabled":
            raise SnapshotError(f"snapshot needs plugin {name} ({made_by}), which is disabled "
                                f"({record.reason})")
        if record.status != "active":
            raise SnapshotError(f"snapshot needs plugin {name} ({made_by}), which is "
                                f"{record.status}: {record.reason}")
        if not _same_distribution(dist, record.distribution) or not compatible(version, record.version):
            raise SnapshotError(f"snapshot needs plugin {name} ({made_by}), but {record.distribution} "
                                f"{record.version} is installed (another release series)")
        if record.module:
            allowed.add(_top(record.module))
    for entry in header["libraries"]:
        allowed.add(_check_library(entry, registry))
    for package in header["packages"]:
        if package not in allowed and package not in _DATA_PACKAGES:
            raise SnapshotError(f"snapshot refers to package {package!r}, which is neither the core "
                                "nor an active plugin's (allow_package() admits others)")
    return allowed & set(header["packages"])


def _check_library(entry: Any, registry: Registry) -> str:
    """A plugin package the state uses as code (the tile architecture's RISC-V harts):
    the plugin must be installed and compatible, not necessarily enabled, since
    disabling a plugin turns off its hooks, not its classes.  Returns the package."""
    if not isinstance(entry, dict) or not all(isinstance(entry.get(k), str)
                                               for k in ("name", "distribution", "version", "package")):
        raise SnapshotError("snapshot header is invalid: bad library entry")
    name, dist, version, package = (entry[k] for k in ("name", "distribution", "version", "package"))
    made_by = f"{dist} {version}"
    record = registry.record(name)
    if record is None:
        raise SnapshotError(f"snapshot uses package {package} of plugin {name} ({made_by}), which is "
                            "not installed")
    if record.status in ("failed", "refused"):
        raise SnapshotError(f"snapshot uses package {package} of plugin {name} ({made_by}), which "
                            f"is {record.status}: {record.reason}")
    if not _same_distribution(dist, record.distribution) or not compatible(version, record.version):
        raise SnapshotError(f"snapshot uses package {package} of plugin {name} ({made_by}), but "
                            f"{record.distribution} {record.version} is installed (another release series)")
    if not record.module or _top(record.module) != package:
        raise SnapshotError(f"snapshot names package {package} for plugin {name}, whose package is "
                            f"{_top(record.module) or 'unknown'}")
    return package


_REFUSED_OPCODES = {pickle.INST[0]: "INST", pickle.OBJ[0]: "OBJ", pickle.EXT1[0]: "EXT1",
                    pickle.EXT2[0]: "EXT2", pickle.EXT4[0]: "EXT4"}


class SafeUnpickler(pickle._Unpickler):  # type: ignore[name-defined,misc]
    """A pickle reader that builds state and refuses to call anything else (module doc)."""

    dispatch = dict(pickle._Unpickler.dispatch)  # type: ignore[attr-defined]

    def __init__(self, stream: Any, *, packages: set[str],
                 architecture: Callable[[str], Architecture]) -> None:
        super().__init__(stream)
        self.packages = packages
        self.architecture = architecture
        self.constructors: list[Any] = []  # the plain-data globals REDUCE may call

    def find_class(self, module: str, name: str) -> Any:
        callable_ = _DATA_GLOBALS.get((module, name))
        if callable_ is not None:
            obj = getattr(importlib.import_module(module), name)
            if callable_:
                self.constructors.append(obj)
            return obj
        where = f"{module}.{name}"
        if "." in name or _top(module) not in self.packages:
            raise SnapshotError(f"snapshot refers to {where}, which is not an allowed class")
        try:
            obj = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError):
            raise SnapshotError(f"snapshot refers to {where}, which this installation does not "
                                "have (another plugin version?)") from None
        if not isinstance(obj, type) or _top(getattr(obj, "__module__", "")) not in self.packages:
            raise SnapshotError(f"snapshot refers to {where}, which is not an allowed class")
        return obj

    def persistent_load(self, pid: Any) -> Any:
        if isinstance(pid, tuple) and len(pid) == 2 and pid[0] == "arch" and isinstance(pid[1], str):
            return self.architecture(pid[1])
        raise SnapshotError("snapshot refers to an unknown persistent object")

    def load_reduce(self) -> None:
        func = self.stack[-2]  # type: ignore[attr-defined]  # the pure-Python unpickler's stack
        allowed = (any(func is c for c in self.constructors) or any(func is r for r in _RECONSTRUCTORS)
                   or (isinstance(func, type) and issubclass(func, enum.Enum)))
        if not allowed:
            name = getattr(func, "__qualname__", type(func).__name__)
            raise SnapshotError(f"snapshot asks to call {getattr(func, '__module__', '?')}.{name}, "
                                "which is not an allowed constructor")
        super().load_reduce()  # type: ignore[misc]

    dispatch[pickle.REDUCE[0]] = load_reduce  # type: ignore[assignment]

    def _refuse(self) -> None:
        raise SnapshotError("snapshot uses a pickle opcode that calls code directly; refused")

    for _code in _REFUSED_OPCODES:
        dispatch[_code] = _refuse  # type: ignore[assignment]
    del _code


def load(data: bytes, registry: Registry, *, architectures: Iterable[Architecture] = ()) -> Any:
    """Check and read snapshot ``data``: the object the payload holds (a machine).

    ``registry`` holds the plugins that must match the header; architectures are taken
    from them by name.  ``architectures`` supplies descriptions that no plugin provides
    (a test's own), matched by name.
    """
    header, payload = read_header(data)
    packages = _check_plugins(header, registry)
    extra = {a.name: a for a in architectures}
    wanted = header["architectures"]

    def architecture(name: str) -> Architecture:
        if name in extra:
            return extra[name]
        if name not in wanted:
            raise SnapshotError(f"snapshot refers to architecture {name!r} without naming its plugin")
        if wanted[name] is None:
            raise SnapshotError(f"snapshot needs architecture {name!r}, which no plugin provides: "
                                "pass the description to Machine.restore(architectures=[...])")
        owner = registry.owner(name)
        if owner is None or owner.name != wanted[name]:
            raise SnapshotError(f"snapshot needs architecture {name!r} from plugin {wanted[name]}, "
                                "which does not provide it here")
        return registry.architecture(name)

    try:
        return SafeUnpickler(io.BytesIO(payload), packages=packages,
                             architecture=architecture).load()
    except SnapshotError:
        raise
    except RecursionError:
        raise SnapshotError("snapshot payload is nested too deeply") from None
    except Exception as exc:  # noqa: BLE001 - a payload that passed the digest but does not build
        raise SnapshotError(f"snapshot payload cannot be read: {type(exc).__name__}: {exc}") from None


# --------------------------------------------------------------------------- machines

def capture(machine: Any) -> bytes:
    """``machine`` as snapshot bytes, checked against its own host's plugins (``Machine.snapshot``)."""
    return dump(machine, Registry(machine.host))


def restore(cls: type, data: bytes, *, host: Any = None, architectures: Iterable[Architecture] = ()) -> Any:
    """The machine (of class ``cls``) in snapshot ``data``, attached to ``host`` (``Machine.restore``).

    Besides what :func:`load` checks, the payload must be a machine with an
    architecture and plugin extensions, and must make sense as one: its transient
    state (decoders, hook lists, the timing model) is rebuilt for ``host`` and its
    state read once, and whatever fails there is a :class:`SnapshotError` too.
    """
    from tessera.machine.ext import MachineExtensions

    loaded = load(bytes(data), Registry(host), architectures=architectures)
    if not isinstance(loaded, cls):
        raise SnapshotError(f"snapshot holds a {type(loaded).__name__}, not a machine")
    machine: Any = loaded
    if not isinstance(machine.__dict__.get("arch"), Architecture):
        raise SnapshotError("snapshot holds a machine without an architecture")
    if not isinstance(machine.__dict__.get("ext"), MachineExtensions):
        raise SnapshotError("snapshot holds a machine without plugin extensions (machine.ext): "
                            "made by an older Tessera; make it again")
    machine.host = host
    machine.restored = True
    try:
        machine._init_transient()
        machine.state()
    except TesseraError as exc:
        raise SnapshotError(f"snapshot holds an inconsistent machine: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - whatever the restored state makes fail is the file's fault
        raise SnapshotError(f"snapshot holds an inconsistent machine: "
                            f"{type(exc).__name__}: {exc}") from None
    return machine


def write(machine: Any, path: str) -> None:
    """Save a snapshot of ``machine`` to ``path`` (``Machine.save_snapshot``)."""
    data = capture(machine)
    with open(path, "wb") as fh:
        fh.write(data)


def read_bytes(path: str) -> bytes:
    """The bytes of the snapshot file ``path``; a :class:`SnapshotError` if it cannot be read."""
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise SnapshotError(f"cannot read snapshot {path}: {exc.strerror}") from None


__all__ = ["MAGIC", "FORMAT", "Registry", "SafeUnpickler", "allow_package", "allow_reconstructor", "compatible",
           "dump", "load", "read_header"]
