"""Compiling and launching the CUDA C++ kernels (CuPy), shared by every GPU module.

- :func:`load_module` / :func:`function`: a ``.cu`` file compiled once per process, on first
  use, by ``cupy.RawModule`` (``segmented.cuh``, the shared device helpers beside this file,
  is on the include path), and its kernels; a module whose cubin the package ships for this
  source and toolchain is loaded from it instead (:mod:`hornet.core.cubins`).
  :func:`prebuild` compiles a list of modules in background threads (NVRTC runs without the
  GIL), so that a first run builds them side by side instead of one after the other; a
  module's first kernel waits for its build, and :func:`building` lets a caller with an
  exact alternative take it meanwhile (:func:`finish_prebuild` waits for the builds before a
  process ends).
  :func:`prebuild_cupy_kernels` does the same for CuPy's own elementwise and reduction
  kernels a run is known to compile (recorded as :mod:`hornet.core.cupy_records`). CuPy keeps the
  compiled module in its on-disk kernel cache (``~/.cupy/kernel_cache`` or
  ``$CUPY_CACHE_DIR``), keyed by the source text
  and the options; the source is given a digest of hornet's ``.cuh`` headers, which that key
  would not see otherwise. The build time goes to :func:`hornet.core.jit.compile_timer`; a
  build not done before prints the "compiling kernels, first run only" notice;
- :func:`launch`: block size 256, grid capped for grid-stride loops;
- :func:`scan`: exclusive scan with the total last;
- :func:`upload`: a small host array to the device through a reused pinned buffer;
- :func:`item_type`: the C++ type that the byte-size-generic kernels move for a dtype.

Importable without CuPy (``cupy`` is then None); every function needs it when called.
"""
from __future__ import annotations

import hashlib
import json
import os
import threading

import numpy as np

from . import cubins
from .cupy_records import cupy_compile_arguments, cupy_install
from .jit import announce_compile, cache_dir, timed_compile

try:  # importable without CuPy; every function needs it when called
    import cupy
except ImportError:  # pragma: no cover - CPU-only machines
    cupy = None

BLOCK = 256
HEADERS = os.path.dirname(os.path.abspath(__file__))   # segmented.cuh, shared device helpers
_MODULES: dict = {}
_FUNCS: dict = {}
_LOCK = threading.Lock()
_BUILD_LOCKS: dict = {}     # module key -> lock held while that module compiles
_PENDING: set = set()       # module keys a prebuild thread has queued or is compiling
_PREBUILD_THREADS: list = []
#: module keys ``(path, name_expressions)`` in the order this process first loaded them
loaded_modules: list = []
_MAX_GRID: list = []

# itemsize -> C++ type moved by the byte-size-generic kernels
ITEM_TYPES = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int",
              8: "unsigned long long"}


def load_module(path: str, name_expressions: tuple = ()):
    """The ``cupy.RawModule`` of one ``.cu`` file with these template instances, compiled once
    per process; or its shipped cubin (:mod:`hornet.core.cubins`), which needs no compile."""
    key = (path, tuple(name_expressions))
    mod = _MODULES.get(key)
    if mod is None:
        with _LOCK:
            mod = _MODULES.get(key)
            if mod is None:
                code, options = module_source(path)

                def compile_module(code=code, options=options):
                    return cupy.RawModule(code=code, options=options,
                                          name_expressions=list(name_expressions) or None)

                # the shipped cubin when it holds this source for this toolchain
                mod = cubins.load(path, code, options, key[1], cupy, compile_module)
                if mod is None:
                    mod = compile_module()
                    _BUILD_KEYS[key] = _build_key(code, options, name_expressions)
                _MODULES[key] = mod
                loaded_modules.append(key)
    return mod


def module_source(path: str) -> tuple:
    """(the source text NVRTC compiles for the ``.cu`` file ``path``: the file and the digest
    of hornet's headers, the compiler options)."""
    with open(path, encoding="utf-8") as f:
        code = f.read() + f"\n// hornet headers {_headers_digest()}\n"
    return code, ("-std=c++17", f"-I{HEADERS}")


def _module_lock(key: tuple) -> threading.Lock:
    with _LOCK:
        lock = _BUILD_LOCKS.get(key)
        if lock is None:
            lock = _BUILD_LOCKS[key] = threading.Lock()
    return lock


def build_module(path: str, name_expressions: tuple = ()) -> None:
    """Compile the module of ``path`` (with these template instances) now, in the calling
    thread, unless CuPy's kernel cache holds it already (then it is loaded on first use)."""
    key = (path, tuple(name_expressions))
    mod = load_module(path, name_expressions)
    with _module_lock(key):
        marker = _build_marker(key)
        if marker is not None:
            mod.compile()
            _mark_built(marker)


def prebuild(modules: list, workers: int | None = None) -> list:
    """Compile the modules ``modules`` (``(path, name_expressions)`` pairs) that CuPy's kernel
    cache lacks, in ``workers`` daemon threads (default: one per CPU core but one, at most
    8), while the caller goes on; a kernel of a module being built waits for the build.
    Returns the threads. A module that fails to build here is built (and its error raised)
    where it is first used."""
    todo = []
    for path, name_expressions in modules:
        key = (path, tuple(name_expressions))
        load_module(path, name_expressions)
        if not _built(key):
            todo.append(key)
    if workers is None:
        workers = max(1, min(8, (os.cpu_count() or 2) - 1))
    device = cupy.cuda.Device().id
    queue = list(reversed(todo))
    with _LOCK:
        _PENDING.update(todo)

    def work():
        with cupy.cuda.Device(device):
            while True:
                with _LOCK:
                    if not queue:
                        return
                    key = queue.pop()
                try:
                    build_module(*key)
                except Exception:        # built again, and reported, where it is used
                    pass
                finally:
                    with _LOCK:
                        _PENDING.discard(key)

    threads = [threading.Thread(target=work, name="hornet-cuda-build", daemon=True)
               for _ in range(min(workers, len(todo)))]
    for t in threads:
        t.start()
    _PREBUILD_THREADS.extend(threads)
    return threads


def prebuild_cupy_kernels(records: list, workers: int = 4) -> list:
    """Compile CuPy's own kernels (elementwise kernels and reductions a run is known to use,
    as :func:`cupy_compile_record` s of this CuPy version) into CuPy's on-disk kernel cache
    in ``workers`` daemon threads, in order, while the caller goes on. CuPy compiles its
    kernels where they are first called, one after another in the caller's thread; a kernel
    built here is read from the cache there instead (one called before its build is done is
    compiled there as without this). Records whose cubin the package ships for this CuPy
    version and toolchain are written into the cache instead of compiled
    (:func:`hornet.core.cubins.seed_cupy_cache`). Returns the threads (:func:`finish_prebuild`
    waits for them); none when a marker file says that this kernel cache holds the records'
    builds (written once all of them are built). A record that does not compile on this
    install is skipped."""
    from cupy.cuda import compiler
    marker = _cupy_marker(records)
    if not records or os.path.exists(marker):
        return []
    todo = cubins.seed_cupy_cache(records)      # the shipped cubins of this CuPy version
    if not todo:
        _mark_built(marker)
        return []
    records = todo
    install = cupy_install()
    device = cupy.cuda.Device().id
    queue = list(reversed(records))
    state = {"running": min(workers, len(records)), "failed": False}

    def work():
        with cupy.cuda.Device(device):
            while True:
                with _LOCK:
                    if not queue:
                        state["running"] -= 1
                        if state["running"] == 0 and not state["failed"]:
                            _mark_built(marker)
                        return
                    record = queue.pop()
                try:
                    source, options, extra, backend, jitify = cupy_compile_arguments(
                        record, install)
                    compiler._compile_module_with_cache(
                        source, options, extra_source=extra, backend=backend, jitify=jitify)
                except Exception:   # noqa: BLE001 - a head start only
                    state["failed"] = True

    threads = [threading.Thread(target=work, name="hornet-cupy-build", daemon=True)
               for _ in range(state["running"])]
    for t in threads:
        t.start()
    _PREBUILD_THREADS.extend(threads)
    return threads


def _cupy_marker(records: list) -> str:
    """The marker file of a list of CuPy compile records: the records, the CuPy version, the
    GPU architecture and CuPy's cache folder."""
    cache = os.environ.get("CUPY_CACHE_DIR") or os.path.expanduser("~/.cupy/kernel_cache")
    text = "\0".join([json.dumps(records, sort_keys=True), cupy.__version__,
                       cupy.cuda.Device().compute_capability, os.path.abspath(cache)])
    return os.path.join(cache_dir(), "cuda",
                        "cupy-" + hashlib.sha256(text.encode()).hexdigest()[:32])


def building(path: str, name_expressions: tuple = ()) -> bool:
    """Whether :func:`prebuild` has this module queued or is compiling it: a caller with an
    exact alternative to the module's kernels can take it meanwhile instead of waiting."""
    return (path, tuple(name_expressions)) in _PENDING


def finish_prebuild() -> None:
    """Wait for the modules :func:`prebuild` is building (so that CuPy's cache holds them for
    the next process: a build cut short by the end of the process is lost)."""
    while _PREBUILD_THREADS:
        _PREBUILD_THREADS.pop().join()


def function(path: str, name: str, name_expressions: tuple = ()):
    """Kernel ``name`` (a plain name or a template instance listed in name_expressions)."""
    key = (path, name)
    fn = _FUNCS.get(key)
    if fn is None:
        # the module is built (or read from CuPy's cache) at its first get_function
        module_key = (path, tuple(name_expressions))
        with timed_compile():
            mod = load_module(path, name_expressions)
            with _module_lock(module_key):        # a background build finishes first
                marker = _build_marker(module_key)
                fn = mod.get_function(name)
                if marker is not None:
                    _mark_built(marker)
        _FUNCS[key] = fn
    return fn


# The first CUDA module build of a process that is not in CuPy's kernel cache prints the
# "compiling kernels, first run only" notice (hornet.core.jit). CuPy's cache key is internal;
# a marker file per module (its source, options, CuPy version, GPU architecture and CuPy's
# cache folder) in hornet's cache folder records that a build has been done.
_BUILD_KEYS: dict = {}
_MARKED: set = set()


def _build_key(code: str, options: tuple, name_expressions: tuple) -> str:
    cache = os.environ.get("CUPY_CACHE_DIR") or os.path.expanduser("~/.cupy/kernel_cache")
    arch = cupy.cuda.Device().compute_capability
    text = "\0".join([code, *options, *name_expressions, cupy.__version__, arch,
                       os.path.abspath(cache)])
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _built(module_key: tuple) -> bool:
    """Whether a loaded module (``(path, name_expressions)``) is known to be built: in this
    process, or by any process with this kernel cache (its marker file)."""
    key = _BUILD_KEYS.get(module_key)
    if key is None or key in _MARKED:
        return True
    if os.path.exists(os.path.join(cache_dir(), "cuda", key)):
        _MARKED.add(key)
        return True
    return False


def _build_marker(module_key: tuple) -> str | None:
    """The marker file of a module (``(path, name_expressions)``, as ``load_module`` keys
    it); None once it is known to be built. Announces the build when the marker is absent."""
    if _built(module_key):
        return None
    announce_compile(os.environ.get("CUPY_CACHE_DIR")
                     or os.path.expanduser("~/.cupy/kernel_cache"))
    return os.path.join(cache_dir(), "cuda", _BUILD_KEYS[module_key])


def _mark_built(marker: str) -> None:
    _MARKED.add(os.path.basename(marker))
    try:
        os.makedirs(os.path.dirname(marker), exist_ok=True)
        with open(marker, "w", encoding="utf-8"):
            pass
    except OSError:          # no writable cache folder: the notice may show again
        pass


_HEADERS_DIGEST: list = []


def _headers_digest() -> str:
    """SHA-256 of every ``.cuh`` file of the package (the headers the ``.cu`` files include),
    computed once per process."""
    if not _HEADERS_DIGEST:
        root = os.path.dirname(HEADERS)
        digest = hashlib.sha256()
        for folder, _, files in sorted(os.walk(root)):
            for name in sorted(files):
                if name.endswith(".cuh"):
                    with open(os.path.join(folder, name), "rb") as f:
                        digest.update(name.encode() + b"\0" + f.read())
        _HEADERS_DIGEST.append(digest.hexdigest()[:16])
    return _HEADERS_DIGEST[0]


def _max_grid() -> int:
    if not _MAX_GRID:
        sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
        _MAX_GRID.append(int(sms) * 32)
    return _MAX_GRID[0]


def launch(fn, n: int, args: tuple, threads_per_item: int = 1) -> None:
    """Run ``fn`` over ``n`` items (grid-stride kernels): 256 threads a block; no-op if n == 0."""
    n = int(n) * threads_per_item
    if n <= 0:
        return
    grid = min((n + BLOCK - 1) // BLOCK, _max_grid())
    fn((grid,), (BLOCK,), args)


def i64(x: int) -> np.int64:
    return np.int64(x)


def as_i64(a):
    """A contiguous int64 CuPy array (no copy when it already is one)."""
    if type(a) is cupy.ndarray and a.dtype == np.int64 and a.flags.c_contiguous:
        return a                       # the usual case, without three CuPy calls
    return cupy.ascontiguousarray(cupy.asarray(a).astype(cupy.int64, copy=False))


def scan(lengths) -> tuple:
    """(off int64 of length n + 1: exclusive scan of ``lengths`` with the total last, total).

    The total crosses to the host (one count, never per-item data).
    """
    n = lengths.shape[0]
    off = cupy.zeros(n + 1, dtype=cupy.int64)
    if n:
        off[1:] = cupy.cumsum(lengths, dtype=cupy.int64)
    return off, int(off[-1]) if n else 0


class PreparedLaunch:
    """A kernel launched through the driver with a reused argument buffer, for launches on
    a per-batch path: CuPy's call inspects and converts every argument on each launch
    (microseconds per argument), here the caller's values go into one int64 buffer whose
    slot addresses the driver reads. Every slot is 8 bytes: device pointers (ints),
    int64 and uint64 values (an unsigned value at or above 2**63 is stored as its two's
    complement), and int parameters, which read the low half of their slot. Thread-unsafe,
    like the launches."""

    def __init__(self, fn, nargs: int):
        self.fn = fn
        self.args = np.zeros(nargs, dtype=np.int64)
        self._slots = (np.arange(nargs, dtype=np.uint64) * np.uint64(8) +
                       np.uint64(self.args.ctypes.data))
        self._slots_address = int(self._slots.ctypes.data)
        self._ptr = None

    def __call__(self, grid: int, block: int, values, stream: int | None = None) -> None:
        """Launch on ``grid`` blocks of ``block`` threads with ``values`` (ints, one per
        kernel parameter, in order) on the current stream (``stream``: on that stream's
        handle instead)."""
        if self._ptr is None:
            self._ptr = self.fn.kernel.ptr          # compiles the module on first use
        self.args[:] = values
        cupy.cuda.driver.launchKernel(self._ptr, int(grid), 1, 1, int(block), 1, 1, 0,
                                      cupy.cuda.get_current_stream().ptr if stream is None
                                      else stream, self._slots_address, 0)

    def again(self, grid: int, block: int) -> None:
        """Launch with the values the buffer ``args`` holds now (the caller wrote the words
        that changed since the last launch)."""
        if self._ptr is None:
            self._ptr = self.fn.kernel.ptr
        cupy.cuda.driver.launchKernel(self._ptr, int(grid), 1, 1, int(block), 1, 1, 0,
                                      cupy.cuda.get_current_stream().ptr,
                                      self._slots_address, 0)


class CooperativeLaunch(PreparedLaunch):
    """A :class:`PreparedLaunch` through ``cuLaunchCooperativeKernel``: every block of the
    grid resident at once, for kernels that wait at a grid barrier (``grid_barrier.cuh``);
    the caller sizes the grid to what fits."""

    def __call__(self, grid: int, block: int, values, stream: int | None = None) -> None:
        if self._ptr is None:
            self._ptr = self.fn.kernel.ptr
        self.args[:] = values
        # (cuLaunchCooperativeKernel takes no "extra" argument)
        cupy.cuda.driver.launchCooperativeKernel(
            self._ptr, int(grid), 1, 1, int(block), 1, 1, 0,
            cupy.cuda.get_current_stream().ptr if stream is None else stream,
            self._slots_address)


def as_signed64(value: int) -> int:
    """An unsigned 64-bit value as the int64 of the same bits (for :class:`PreparedLaunch`)."""
    return value - (1 << 64) if value >= 1 << 63 else value


STAGING_BUFFERS = 8
"""Pinned buffers :func:`upload` cycles through: an upload waits only for the copy made
``STAGING_BUFFERS`` uploads earlier, so the few uploads of one batch never wait for the
device's queue (one shared buffer would make every upload after the first wait for the
previous copy, that is for the kernels queued before it)."""


STAGING_BYTES = 1 << 20
"""The least size of a staging buffer: a batch's uploads (request rows, lookup tables, the
pairs of a small batch) fit without replacing a buffer."""


class _Staging:
    """Pinned host buffers reused by :func:`upload`, in turn; per buffer an event tells when
    the device has finished reading it."""

    def __init__(self, count: int = STAGING_BUFFERS):
        self.buffers = [None] * count
        self.done = [None] * count
        self.turn = 0

    def _allocate_all(self) -> None:
        """Every buffer not made yet, ``STAGING_BYTES`` each, from one pinned allocation: a
        pinned allocation costs about as much as a small kernel, so a process pays it once,
        at its first upload, not at the first upload of every turn (one of which would
        otherwise fall on a later call, such as an algorithm's first call on a new state)."""
        import cupyx
        missing = [i for i, b in enumerate(self.buffers) if b is None]
        block = cupyx.empty_pinned(len(missing) * STAGING_BYTES, dtype=np.uint8)
        for k, i in enumerate(missing):
            self.buffers[i] = block[k * STAGING_BYTES:(k + 1) * STAGING_BYTES]
            self.done[i] = cupy.cuda.Event(block=False, disable_timing=True)

    def copy(self, host: np.ndarray):
        nbytes = host.nbytes
        i = self.turn
        self.turn = (i + 1) % len(self.buffers)
        if self.buffers[i] is None and nbytes <= STAGING_BYTES:
            self._allocate_all()
        buffer, done = self.buffers[i], self.done[i]
        if buffer is None or buffer.nbytes < nbytes:
            import cupyx
            if done is not None:
                done.synchronize()          # the old buffer may still be read: let it go
            buffer = self.buffers[i] = cupyx.empty_pinned(max(nbytes, STAGING_BYTES),
                                                          dtype=np.uint8)
            done = self.done[i] = cupy.cuda.Event(block=False, disable_timing=True)
        else:
            done.synchronize()              # the copy made from it a turn ago has left it
        staged = buffer[:nbytes]
        staged[...] = np.ascontiguousarray(host).reshape(-1).view(np.uint8)
        out = cupy.empty(host.shape, dtype=host.dtype)
        out.data.copy_from_host_async(staged.ctypes.data, nbytes)
        done.record()
        return out


_STAGING = _Staging()


def upload(host: np.ndarray):
    """A device copy of a small host array, without waiting for the device's queue (the copy
    goes through one of ``STAGING_BUFFERS`` reused pinned buffers, in stream order).
    Thread-unsafe, like the launches."""
    if host.nbytes == 0:
        return cupy.empty(host.shape, dtype=host.dtype)
    return _STAGING.copy(host)


def item_type(dtype) -> str:
    """The C++ type of the byte-size-generic kernels for ``dtype``'s itemsize."""
    size = np.dtype(dtype).itemsize
    if size not in ITEM_TYPES:
        raise TypeError(f"no GPU kernel for items of {size} bytes ({np.dtype(dtype)})")
    return ITEM_TYPES[size]
