"""Compiling a run's kernels in a second process while the first one starts.

Numba compiles one kernel at a time per process (one compiler lock), so a cold start uses
one core. :func:`start` hands a list of the kernels a run will compile (a *kernel list*:
module, qualified name and argument types of each, in the order the run first compiles them,
and the compile seconds each took; :func:`record_kernels` makes one) to a helper process. The
calling process compiles from the front as it runs; the helper compiles into the on-disk
cache the kernels needed last, as many as make up half of the list's compile seconds, the
longest first, then the others from the back (:func:`helper_order`). A kernel the
helper has compiled is loaded from the cache, so that each process compiles about half, and
the calling process reaches the helper's share when the helper has finished it (dividing
the list by count, or meeting in the middle of a large kernel, would keep it waiting).

The two share out the kernels through marker files in a claims folder (:class:`Claims`): a
process about to compile a kernel missing from the cache claims it. The calling process waits
for a kernel the helper is compiling (compiling it too would take as long), and compiles the
ones nobody claimed; the helper skips listed kernels the calling process claimed, and
compiles a callee claimed by the other again rather than wait, so that neither can wait on
the other in a circle. The helper stops when its list is done, or when :func:`stop` ends it.
"""
from __future__ import annotations

import atexit
import contextlib
import importlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from hashlib import sha1
from typing import Iterator

from numba.core import event as numba_event

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: index writes are not serialized
    fcntl = None

from . import jit

#: marker file contents: which process claimed a kernel
_MAIN, _HELPER = "main", "helper"
# seconds between two looks at the claims folder while waiting for the helper
_POLL_S = 0.01
# the longest wait for one kernel of the helper's (a stuck helper): the main process then
# compiles it itself
WAIT_LIMIT_S = 300.0

_helper: subprocess.Popen | None = None
_claims_folder: str | None = None


class Claims:
    """Claims on the compiles of one cold start, shared by two processes through marker files
    in ``folder``. ``role`` is ``"main"`` (the process doing the work, which waits for the
    helper) or ``"helper"`` (which never waits). ``helper`` (main only): the helper's process,
    whose end also ends a wait."""

    def __init__(self, folder: str, role: str, helper: subprocess.Popen | None = None):
        self.folder = folder
        self.role = role
        self.helper = helper
        self.open: set[str] = set()         # keys this process claimed and has not finished
        self.waited_seconds = 0.0           # main: time spent waiting for the helper

    def _path(self, key: str) -> str:
        return os.path.join(self.folder, sha1(key.encode()).hexdigest())

    def owner(self, key: str) -> str | None:
        """Who claimed ``key`` (``"main"``, ``"helper"``) or None."""
        try:
            with open(self._path(key)) as f:
                return f.read() or None
        except OSError:
            return None

    def claim(self, key: str) -> bool:
        """Claim ``key`` before compiling it. Returns True when the main process has waited
        for the helper to compile it (look in the cache again), False when the caller
        compiles it."""
        path = self._path(key)
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            if self.role == _MAIN and self.owner(key) == _HELPER:
                self._wait(path + ".done")
                return True
            return False
        except OSError:
            return False
        with os.fdopen(fd, "w") as f:
            f.write(self.role)
        self.open.add(key)
        return False

    def done(self, key: str) -> None:
        """Mark ``key`` compiled (and saved in the cache, where it can be)."""
        if key in self.open:
            self.open.discard(key)
            with contextlib.suppress(OSError):
                open(self._path(key) + ".done", "w").close()

    @contextlib.contextmanager
    def index_lock(self, index_path: str) -> Iterator[None]:
        """Context holding an exclusive lock (shared with the other process) on the cache
        index file ``index_path`` while an overload is added to it: Numba rewrites the whole
        index, so two unlocked writers could drop each other's entry."""
        if fcntl is None or not index_path:
            yield
            return
        name = sha1(index_path.encode()).hexdigest() + ".lock"
        try:
            fd = os.open(os.path.join(self.folder, name), os.O_CREAT | os.O_WRONLY)
        except OSError:
            yield
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)            # closing releases the lock

    def release_all(self) -> None:
        """Mark every compile this process claimed and did not finish as done (after a failed
        compile: the other process then compiles it itself)."""
        for key in list(self.open):
            self.done(key)

    def _wait(self, done_path: str) -> None:
        """Wait until ``done_path`` exists, the helper has ended or :data:`WAIT_LIMIT_S` has
        passed. The wait counts as compile time in the active compile timers (a wait inside
        a Numba compile counts there already)."""
        t = time.monotonic()
        try:
            while not os.path.exists(done_path) and time.monotonic() < t + WAIT_LIMIT_S:
                if self.helper is not None and self.helper.poll() is not None:
                    return
                time.sleep(_POLL_S)
        finally:
            self.waited_seconds += time.monotonic() - t
            if _compiling.depth == 0:
                jit.record_compile(time.monotonic() - t)


class _CompileDepth(numba_event.Listener):
    """Numba compiles in progress in this process (a ``numba:compile`` event listener)."""

    def __init__(self):
        self.depth = 0

    def on_start(self, ev):
        self.depth += 1

    def on_end(self, ev):
        self.depth -= 1


_compiling = _CompileDepth()


# ---- kernel lists -------------------------------------------------------------------------

_ARRAY = re.compile(r"^(readonly )?array\((\w+), (\d+)d, ([CFA])\)$")
_UNITUPLE = re.compile(r"^UniTuple\((.*) x (\d+)\)$")


def _items(text: str) -> list:
    """The comma-separated items of ``text`` at bracket depth 0."""
    items, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            items.append(text[start:i].strip())
            start = i + 1
    return items + [text[start:].strip()] if text.strip() else items


def parse_type(text: str):
    """The Numba type written ``text`` (``str`` of the type): arrays, scalars and tuples of
    them (``Tuple(a, b)``, ``UniTuple(a x n)``). Raises ValueError for any other type."""
    from numba.core import types
    m = _UNITUPLE.match(text)
    if m:
        return types.UniTuple(parse_type(m.group(1)), int(m.group(2)))
    if text.startswith("Tuple(") and text.endswith(")"):
        return types.Tuple([parse_type(t) for t in _items(text[len("Tuple("):-1])])
    m = _ARRAY.match(text)
    if m:
        return types.Array(parse_type(m.group(2)), int(m.group(3)), m.group(4),
                           readonly=bool(m.group(1)))
    scalar = types.boolean if text == "bool" else getattr(types, text, None)
    if not isinstance(scalar, (types.Integer, types.Float, types.Boolean)):
        raise ValueError(f"no Numba type {text!r} in a kernel list")
    return scalar


@contextlib.contextmanager
def record_kernels() -> Iterator[list]:
    """Context collecting the kernels of :data:`hornet.core.jit.kernels` that the process
    compiles inside it: a list of ``[module, qualified name, [argument types as str], depth,
    seconds]`` (depth 1: compiled from Python; more: inside another kernel's compile;
    seconds: the compile's CPU seconds, the kernels compiled inside it included), in the
    order the compiles start."""
    known: dict = {}
    found: list = []
    open_compiles: list = []        # (entry or None, CPU clock at its start), innermost last

    class Listener(numba_event.Listener):
        def on_start(self, ev):
            if len(known) != len(jit.kernels):        # kernels of modules imported since
                known.update((id(d), key) for key, d in jit.kernels.items())
            key = known.get(id(ev.data["dispatcher"]))
            entry = None
            if key is not None:
                entry = [key[0], key[1], [str(t) for t in ev.data["args"]],
                         len(open_compiles) + 1]
                found.append(entry)
            open_compiles.append((entry, time.process_time()))

        def on_end(self, ev):
            entry, t = open_compiles.pop()
            if entry is not None:
                entry.append(round(time.process_time() - t, 3))

    with numba_event.install_listener("numba:compile", Listener()):
        yield found


def load_kernels(path: str) -> list:
    """The kernel list in the JSON file ``path`` (see :func:`record_kernels`)."""
    with open(path) as f:
        return json.load(f)["kernels"]


def _resolve(entry) -> tuple:
    """``(dispatcher, argument types)`` of a kernel-list entry; the modules are imported."""
    module, qualname, args = entry[0], entry[1], entry[2]
    importlib.import_module(module)
    dispatcher = jit.kernels.get((module, qualname))
    if dispatcher is None:
        raise LookupError(f"no kernel {module}.{qualname}")
    return dispatcher, tuple(parse_type(t) for t in args)


def _cached(dispatcher) -> bool:
    return jit.compiled_or_cached(dispatcher)


def helper_order(entries: list) -> list:
    """The order in which a helper compiles the kernel-list entries ``entries`` (depth-1
    entries, in the order a run needs them) beside a process compiling them from the front:
    the last entries whose recorded compile seconds make up about half of the list's, the
    longest first, then the others from the last to the first (taken only where the calling
    process has not reached them yet). Where the calling process reaches the helper's share
    early, the two then share what is left of it, meeting at a short compile. Entries
    without seconds: from the last to the first."""
    costs = [e[4] if len(e) > 4 and isinstance(e[4], (int, float)) else None for e in entries]
    if not entries or None in costs:
        return entries[::-1]
    half = sum(costs) / 2
    split, share = len(entries), 0.0
    # take an entry while that brings the helper's share closer to half
    while split > 0 and share + costs[split - 1] / 2 <= half:
        split -= 1
        share += costs[split]
    longest_first = sorted(range(split, len(entries)), key=lambda i: -costs[i])
    return [entries[i] for i in longest_first] + entries[:split][::-1]


# ---- the two processes ----------------------------------------------------------------------

#: A helper starts only where more than this share of the list is missing from the cache: a
#: first run. Some listed kernels are compiled only where a first run's timing sends it (a cold
#: ``DynamicTruss`` whose compile-laden updates teach its budget to go static compiles the
#: static decomposition's kernels); a later run that finds the rest cached compiles them
#: itself if it needs them, instead of starting a helper for them every run.
START_SHARE = 0.5


def start(kernel_list: str) -> bool:
    """Start a helper process compiling the kernels of the kernel-list file ``kernel_list``
    that are not cached yet (in :func:`helper_order`; entries naming no kernel of this
    version are left out). Returns whether one started: not when at most :data:`START_SHARE`
    of the listed kernels are missing from the cache, when the list cannot be read, when there is no writable cache, or when this
    process has a helper already. :func:`stop` (run
    at exit too) ends it."""
    global _helper, _claims_folder
    if _helper is not None or jit.compile_claims is not None:
        return False
    try:
        entries = [e for e in load_kernels(kernel_list) if e[3] == 1]
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return False
    missing, cache = [], None
    for entry in entries:
        try:
            dispatcher, _ = _resolve(entry)
        except (ValueError, LookupError, ImportError, IndexError, TypeError):
            continue                # a kernel renamed or retyped since the list was made
        cache = getattr(dispatcher, "_cache", None)
        if not _cached(dispatcher):
            missing.append(entry)
    if len(missing) <= len(entries) * START_SHARE or getattr(cache, "_cache_path", None) is None:
        return False
    _claims_folder = tempfile.mkdtemp(prefix="hornet-compile-")
    with open(os.path.join(_claims_folder, "kernels.json"), "w") as f:
        json.dump({"kernels": helper_order(missing)}, f)
    # the helper imports the hornet this process runs (a checkout or an install), whatever
    # its working folder holds
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    code = (f"import sys; sys.path.insert(0, {here!r}); "
            f"from hornet.core.precompile import helper_main; helper_main({_claims_folder!r})")
    try:
        _helper = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except OSError:
        shutil.rmtree(_claims_folder, ignore_errors=True)
        _claims_folder = None
        return False
    jit.compile_claims = Claims(_claims_folder, _MAIN, _helper)
    numba_event.register("numba:compile", _compiling)
    jit.announce_compile(cache._cache_path)
    atexit.register(stop)
    return True


#: seconds the main process waited for its helper (summed over :func:`stop`)
waited_seconds = 0.0


def stop() -> None:
    """End the helper process (if any; what it has saved stays in the cache) and remove the
    claims folder."""
    global _helper, _claims_folder, waited_seconds
    if jit.compile_claims is not None and jit.compile_claims.role == _MAIN:
        waited_seconds += jit.compile_claims.waited_seconds
        with contextlib.suppress(ValueError, KeyError):
            numba_event.unregister("numba:compile", _compiling)
    jit.compile_claims = None
    if _helper is not None:
        if _helper.poll() is None:
            _helper.terminate()
            try:
                _helper.wait(timeout=10)
            except subprocess.TimeoutExpired:
                _helper.kill()
                _helper.wait()
        _helper = None
    if _claims_folder is not None:
        shutil.rmtree(_claims_folder, ignore_errors=True)
        _claims_folder = None


def helper_main(folder: str) -> None:
    """The helper process: compile the kernels of ``folder/kernels.json`` in their order
    (:func:`helper_order`), skipping those the main process has claimed."""
    jit.announce_compiles = False
    claims = Claims(folder, _HELPER)
    jit.compile_claims = claims
    for entry in load_kernels(os.path.join(folder, "kernels.json")):
        try:
            dispatcher, args = _resolve(entry)
            key = jit.claim_key(f"{entry[0]}.{entry[1]}", args)
            if claims.owner(key) is not None:
                continue
            dispatcher.compile(args)
        except Exception:      # a kernel that fails here is compiled by the main process
            pass
        finally:
            claims.release_all()



def signature_cached(dispatcher, args) -> bool:
    """Whether the on-disk cache of a dispatcher made by :func:`hornet.core.jit.njit` holds
    its compile for the argument types ``args`` (a tuple of Numba types), read from the
    cache's index without loading the compiled code. False where it cannot tell."""
    if dispatcher.overloads.get(tuple(args)) is not None:
        return True
    cache = getattr(dispatcher, "_cache", None)
    try:
        key = cache._index_key(tuple(args), dispatcher.targetctx.codegen())
        return key in cache._cache_file._load_index()
    except Exception:          # no cache, or another Numba's internals
        return False


def compile_all(entries: list) -> int:
    """Compile the kernels of the kernel-list entries ``entries`` (see
    :func:`record_kernels`; depth-1 entries are used) into the on-disk cache, in two
    processes: a helper (:func:`start`, in :func:`helper_order`), this one from the front,
    then wait for the helper. Signatures cached already are skipped without loading them,
    as are entries naming no kernel of this version. Returns the number of kernels this
    process compiled (the helper's are not counted). For a program that is about to start
    several processes needing these kernels (a test run's workers)."""
    entries = [e for e in entries if e[3] == 1]
    if not entries or _helper is not None or jit.compile_claims is not None:
        return 0
    for entry in entries:
        try:
            dispatcher, _ = _resolve(entry)
        except (ValueError, LookupError, ImportError, IndexError, TypeError):
            continue
        if getattr(getattr(dispatcher, "_cache", None), "_cache_path", None) is None:
            return 0        # no writable cache: the processes needing them compile them
        break
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"kernels": entries}, f)
    try:
        start(f.name)
    finally:
        os.unlink(f.name)
    claims = jit.compile_claims
    compiled = 0
    try:
        for entry in entries:
            try:
                dispatcher, args = _resolve(entry)
            except (ValueError, LookupError, ImportError, IndexError, TypeError):
                continue
            if signature_cached(dispatcher, args):
                continue
            if claims is not None:
                key = jit.claim_key(f"{entry[0]}.{entry[1]}", args)
                if claims.owner(key) == _HELPER:
                    claims._wait(claims._path(key) + ".done")
                    continue
            try:
                dispatcher.compile(args)
                compiled += 1
            except Exception:     # compiled where it is called instead
                if claims is not None:
                    claims.release_all()
        if _helper is not None:
            _helper.wait()
    finally:
        stop()
    return compiled
