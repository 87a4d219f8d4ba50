"""Prebuilt CUDA binaries (cubins) of hornet's modules, shipped in the package.

A first GPU run would otherwise compile hornet's CUDA modules with NVRTC.
``cubins_sm90.zip`` beside this file holds, for the modules a GPU replay loads
(``streams/data/replay_modules_gpu.json``), the cubin CuPy builds for them on a Hopper card
(compute capability 9.0: H100, H200), written by ``python3 -m bench.tools.build_cubins`` on
such a card. Its ``index.json`` records the toolchain that built them (NVRTC and CuPy
versions, the architecture) and, per module, the key of what decides the binary (:func:`key`:
the module's path in the package, its source with the digest of hornet's headers, the
options, the template instances) with each template instance's lowered (mangled) name.

:func:`load` gives a module's cubin only when its key is in the index (a changed source or
header never finds one) and this process has the same toolchain: the device's compute
capability, NVRTC's version and CuPy's version (major.minor) equal the recorded ones.
Otherwise, and after any failure to read or load a cubin (for instance a driver too old for
it: then no cubin is tried again in this process), the caller compiles as without the
archive. A cubin is extracted into hornet's cache folder (``cuda/cubins``, named by its key
and content) and loaded from there by ``cupy.RawModule(path=...)`` when a kernel of its
module is first asked for.

The archive also holds the cubins of CuPy's own kernels the replay compiles, for the exact
CuPy version that built them: :func:`seed_cupy_cache` writes them into CuPy's kernel cache.

``$HORNET_CUBINS``: ``0`` turns the archive off; a path names another archive.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
import zipfile

from .cupy_records import cupy_compile_arguments, cupy_install
from .jit import cache_dir

#: the archive in the package
ARCHIVE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cubins_sm90.zip")
#: the package's root folder: module paths in the index are relative to it
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: the archive's layout version
FORMAT = 1
#: the include folder option of hornet's modules, as the key writes it (the folder of an
#: install is no part of the binary)
INCLUDE_PLACEHOLDER = "-I{hornet}/core"

_LOCK = threading.Lock()
_STATE: dict = {}       # "index": the archive's index (None: no usable archive); "off": bool
#: the archive's files of the modules loaded from a cubin in this process, in order
loaded: list = []


def key(path: str, code: str, options, name_expressions) -> str:
    """The key of a module's binary: its path relative to the package root, its source as
    compiled (with the digest of hornet's headers that ``load_module`` appends), its options
    (hornet's include folder as :data:`INCLUDE_PLACEHOLDER`) and its template instances."""
    core = os.path.join(ROOT, "core")
    options = [INCLUDE_PLACEHOLDER if o == f"-I{core}" else o for o in options]
    rel = os.path.relpath(os.path.abspath(path), ROOT).replace(os.sep, "/")
    text = "\0".join([rel, code, "\1", *options, "\1", *name_expressions])
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def archive_path() -> str | None:
    """The archive this process uses (``$HORNET_CUBINS``), None when turned off."""
    explicit = os.environ.get("HORNET_CUBINS")
    if explicit == "0":
        return None
    return explicit or ARCHIVE


def toolchain() -> dict:
    """What this process would compile with: the current device's compute capability and
    NVRTC's and CuPy's versions (needs CuPy)."""
    import cupy
    from cupy.cuda import nvrtc
    return {"arch": str(cupy.cuda.Device().compute_capability),
            "nvrtc": list(nvrtc.getVersion()),
            "cupy": ".".join(cupy.__version__.split(".")[:2])}


def matches(index: dict, here: dict) -> bool:
    """Whether an archive's index holds binaries for the toolchain ``here``
    (:func:`toolchain`)."""
    return (index.get("format") == FORMAT and str(index.get("arch")) == here["arch"]
            and list(index.get("nvrtc", ())) == list(here["nvrtc"])
            and ".".join(str(index.get("cupy", "")).split(".")[:2]) == here["cupy"])


def _index() -> dict | None:
    """The archive's index, read once per process (None: no archive or not readable)."""
    if "index" not in _STATE:
        index = None
        path = archive_path()
        if path and os.path.exists(path):
            try:
                with zipfile.ZipFile(path) as z:
                    index = json.loads(z.read("index.json"))
                index["archive"] = path
            except (OSError, ValueError, KeyError, zipfile.BadZipFile):
                index = None
        _STATE["index"] = index
    return _STATE["index"]


def entry(path: str, code: str, options, name_expressions) -> dict | None:
    """The index entry of a module's cubin for this toolchain, or None (no such key, another
    toolchain, no archive, or cubins turned off after a failure). Reads the toolchain only
    for a module the index holds."""
    if _STATE.get("off"):
        return None
    index = _index()
    if not index:
        return None
    found = index.get("modules", {}).get(key(path, code, options, name_expressions))
    if found is None:
        return None
    if "usable" not in _STATE:
        try:
            _STATE["usable"] = matches(index, toolchain())
        except Exception:   # noqa: BLE001 - no NVRTC or device to compare: compile instead
            _STATE["usable"] = False
    return found if _STATE["usable"] else None


def _extract(index: dict, found: dict) -> str:
    """The path of an entry's cubin in hornet's cache folder, extracted from the archive
    unless it is there already (the file name holds the key and the content's digest)."""
    folder = os.path.join(cache_dir(), "cuda", "cubins")
    target = os.path.join(folder, found["file"])
    if os.path.exists(target):
        return target
    with zipfile.ZipFile(index["archive"]) as z:
        data = z.read(found["file"])
    if hashlib.sha256(data).hexdigest()[:16] != found["sha256"]:
        raise ValueError(f"{found['file']}: the archive's cubin is damaged")
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, target)
    except BaseException:
        os.unlink(tmp)
        raise
    return target


class CubinModule:
    """A module to load from its shipped cubin, used like the ``cupy.RawModule`` it replaces:
    loaded on first use (as CuPy loads a compiled module), its template instances looked up
    by their lowered names. A cubin that fails to extract or load is replaced by the module
    ``compile_instead()`` gives (NVRTC), and turns cubins off for the rest of the process."""

    def __init__(self, found: dict, cupy, compile_instead):
        self.found, self.cupy, self.compile_instead = found, cupy, compile_instead
        self.raw = None
        self.names: dict = {}
        self._lock = threading.Lock()

    def _module(self):
        if self.raw is None:
            with self._lock:
                if self.raw is None:
                    try:
                        with _LOCK:
                            target = _extract(_index(), self.found)
                        raw = self.cupy.RawModule(path=target)
                        raw.compile()               # loads it now: a failure falls back here
                        self.names = dict(self.found.get("names", {}))
                        loaded.append(self.found["file"])
                    except Exception:   # noqa: BLE001 - any failure: compile instead
                        _STATE["off"] = True
                        raw = self.compile_instead()
                    self.raw = raw
        return self.raw

    def get_function(self, name: str):
        raw = self._module()
        return raw.get_function(self.names.get(name, name))

    def get_global(self, name: str):
        """The module's ``__device__`` variable ``name`` (``cupy.RawModule.get_global``)."""
        return self._module().get_global(name)

    def compile(self) -> None:
        self._module().compile()


def load(path: str, code: str, options, name_expressions, cupy,
         compile_instead) -> CubinModule | None:
    """The module of ``path`` (compiled from ``code`` with ``options`` and these template
    instances) from its shipped cubin, to be loaded on first use by ``cupy`` (the CuPy
    module); None when there is no usable cubin (the caller compiles). ``compile_instead()``:
    the module compiled by NVRTC, for a cubin that fails to load."""
    found = entry(path, code, options, name_expressions)
    return None if found is None else CubinModule(found, cupy, compile_instead)


# CuPy's own kernels (elementwise kernels, reductions) a GPU replay compiles, recorded in
# ``streams/data/replay_cupy_kernels_gpu.json``
# (:func:`hornet.core.cupy_records.cupy_compile_record`):
# the archive holds their cubins too, for the exact CuPy version that built them, and
# :func:`seed_cupy_cache` writes them into CuPy's kernel cache under the names CuPy looks
# them up by on this install (:func:`cupy_cache_name`), where CuPy then finds them.


def record_digest(record: dict) -> str:
    """The key of a recorded CuPy compile (its source, options, extra source, backend)."""
    fields = {k: record[k] for k in ("source", "options", "extra_source", "backend",
                                     "jitify")}
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:32]


def cupy_cache_name(source: str, options, extra_source, backend: str = "nvrtc",
                    jitify: bool = False) -> str:
    """The file name CuPy's kernel cache gives the module it compiles from these arguments of
    ``cupy.cuda.compiler._compile_module_with_cache`` (no template instances, the current
    device's architecture): the key CuPy's ``_compile_with_cache_cuda`` computes. Internal
    to CuPy, so used only with the CuPy version the archive records (the build checks it
    against the names CuPy writes)."""
    from cupy.cuda import compiler as c
    arch = c._get_arch()
    options = tuple(options) + ("-ftz=true",)
    if c._get_bool_env_variable("CUPY_CUDA_COMPILE_WITH_DEBUG", False):
        options += ("--device-debug", "--generate-line-info")
    if jitify and "-DCUPY_USE_JITIFY" not in options:
        options += ("-DCUPY_USE_JITIFY",)
    env = ((arch, options, c._get_nvrtc_version(), backend)
           + c._get_arch_for_options_for_nvrtc(arch))
    base = c._empty_file_preprocess_cache.get(env)
    if base is None:
        base = c._empty_file_preprocess_cache[env] = c._preprocess("", options, arch, backend)
    key_src = "%s %s %s %s %s" % (env, base, source, extra_source, c._get_cupy_cache_key())
    return c._hash_hexdigest(key_src.encode("utf-8")) + ".cubin"


def seed_cupy_cache(records: list) -> list:
    """Write the archive's cubins of these recorded CuPy compiles into CuPy's kernel cache
    (those it lacks), when the archive was built with this CuPy version, NVRTC version and
    architecture; returns the records left to compile (all of them when nothing could be
    seeded, e.g. another toolchain or a cubin that does not load here)."""
    index = None if _STATE.get("off") else _index()
    shipped = (index or {}).get("cupy_kernels")
    if not shipped or not records:
        return records
    try:
        import cupy
        if index.get("cupy") != cupy.__version__ or not matches(index, toolchain()):
            return records
        from cupy.cuda import compiler, function
        install = cupy_install()
        backend = compiler._kernel_cache_backend
        left, checked = [], False
        with _LOCK, zipfile.ZipFile(index["archive"]) as z:
            for record in records:
                found = shipped.get(record_digest(record))
                if found is None:
                    left.append(record)
                    continue
                source, options, extra, kind, jitify = cupy_compile_arguments(record,
                                                                              install)
                name = cupy_cache_name(source, options, extra, kind, jitify)
                if backend.load(name) is not None:
                    continue
                cubin = z.read(found["file"])
                if hashlib.sha256(cubin).hexdigest()[:16] != found["sha256"]:
                    raise ValueError(f"{found['file']}: the archive's cubin is damaged")
                if not checked:             # one that does not load here: none is seeded
                    function.Module().load(cubin)
                    checked = True
                backend.save(name, cubin, source)
    except Exception:   # noqa: BLE001 - a head start only: those seeded are found anyway
        return records
    return left
