"""Parfor launchers of the split kernels: warm processes run a split call's parts on Numba's
threads.

A split kernel (:class:`hornet.core.jit.SplitKernel`) runs its parts on hornet's own Python
threads (:mod:`hornet.core.threads`), which costs a thread wake-up and a GIL hand-off per
call. Its *launcher* is a Numba ``parallel=True`` function calling the same serial
compilation once per part::

    for part in prange(parts):
        results[part] = kernel(args..., part, parts)

so that a call pays Numba's parallel launch only. A launcher costs a second or more to
compile, though: a cold start never compiles one. Each launcher is a module generated from
its kernel's signature (:func:`launcher_source`) into hornet's cache folder
(:func:`_folder`), so that Numba caches its compilation there; its cache entry
depends on the kernel's source files as the kernel's does.

- In a process, the first split call of a kernel looks for its launcher (:func:`run`); split
  calls use it where its cache entry holds their argument types, and run on hornet's threads
  otherwise (a missing entry, a forked child, a call made while another thread is in a
  launcher, a machine busier than its cores: :data:`BUSY_LOAD_MARGIN`, any failure to
  load). Nothing is compiled in the calling process.
- The argument types of the split calls that found no launcher are kept; at exit a
  background process (lowest priority, detached) compiles their launchers
  (:func:`compile_main`), so that later processes find them. :data:`policy` changes this.
- A launcher hands back the list of its parts' results (None, scalars, tuples of scalars or
  arrays: :func:`placeholder`), which the kernel's ``combine`` takes as it takes those of
  hornet's threads.

Numba runs the launchers on its default threading layer; hornet sets none.
"""
from __future__ import annotations

import atexit
import hashlib
import importlib
import importlib.util
import inspect
import json
import math
import os
import subprocess
import sys
import tempfile
import threading
import time

import numba
import numpy as np
from numba import types
from numba.core import caching
from numba.core.registry import cpu_target
from numba.extending import overload
from numba.np.numpy_support import as_dtype

from . import jit

__all__ = ["run", "launcher_source", "compile_launcher", "compile_main", "policy"]

#: "background" (the default): cached launchers are used, and the missing ones of this
#: process's split calls are compiled by a background process at exit; "cached": cached
#: launchers are used, none compiled; "never": split calls run on hornet's threads only.
#: ``$HORNET_LAUNCHERS`` (one of these words) sets the default, for processes a program starts
#: (the test suite's, which leave no compile behind).
POLICIES = ("background", "cached", "never")
policy = os.environ.get("HORNET_LAUNCHERS", "background")
if policy not in POLICIES:
    policy = "background"

#: ``(module, qualified name, argument types as str)`` of split calls that found no
#: launcher in this process, in the order they were made
wanted: dict = {}
#: split calls run through a launcher in this process
calls = 0

# seconds after which a compile claim is taken to be left over by an ended process
_CLAIM_STALE_S = 900.0

#: A launcher's call ends when every Numba thread has run its part: on a machine with more
#: runnable threads than cores it can wait a scheduler time slice for one, where a call on
#: hornet's threads runs the parts that a late thread has not begun itself. Split calls run
#: on hornet's threads while the load of other processes (the 1-minute load average less
#: this process's own CPU use, averaged alike) leaves fewer free cores than Numba threads,
#: give or take this margin (looked at once a second).
BUSY_LOAD_MARGIN = 0.5

_pid = os.getpid()                   # launchers run in this process only (not a forked child)
_in_launcher = threading.Lock()      # one launcher call at a time (see run)
# when the load was last read, this process's CPU seconds then, its CPU use averaged as the
# load average is (cores' worth), and whether the machine was busy
_load_seen = [-1.0, 0.0, 0.0, False]
_cache_only = True                   # False in the compiling process
_exit_hook = False


class NotCached(Exception):
    """A launcher's cache holds no compilation for a call's argument types (raised instead of
    compiling it)."""

    def __init__(self, arg_types):
        super().__init__(arg_types)
        self.arg_types = tuple(arg_types)


# ---- what a launcher hands back ---------------------------------------------------------------

def placeholder(kernel, args):
    """A value of the type of ``kernel(*args, part, parts)``'s result (in a launcher: the
    parts' results start as a list of it)."""


def put(results, part, value):
    """Store part ``part``'s result ``value`` in the list ``results`` (in a launcher)."""


@overload(placeholder)
def _placeholder(kernel, args):
    call = kernel.get_call_type(cpu_target.typing_context,
                                tuple(args.types) + (types.int64, types.int64), {})
    result = call.return_type
    if isinstance(result, types.NoneType):
        return lambda kernel, args: None
    if isinstance(result, types.Array):
        dtype, shape = as_dtype(result.dtype), (0,) * result.ndim
        return lambda kernel, args: np.empty(shape, dtype)
    scalars = list(result) if isinstance(result, types.BaseTuple) else [result]
    if not all(isinstance(t, (types.Number, types.Boolean)) for t in scalars):
        return None                # another result type: no launcher
    zeros = tuple(as_dtype(t).type(0) for t in scalars)
    zero = zeros if isinstance(result, types.BaseTuple) else zeros[0]
    return lambda kernel, args: zero


@overload(put)
def _put(results, part, value):
    if isinstance(value, types.NoneType):
        return lambda results, part, value: None

    def put_one(results, part, value):
        results[part] = value
    return put_one


# ---- generated modules ---------------------------------------------------------------------

def _folder() -> str:
    """``cache_dir()/launchers/hornet-<hash of the package's folder>``: two installs (or
    checkouts) of hornet never share launchers."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    digest = hashlib.sha1(package.encode()).hexdigest()[:16]
    return os.path.join(jit.cache_dir(), "launchers", f"{os.path.basename(package)}-{digest}")


def _names(split) -> tuple:
    """(file path, module name) of ``split``'s launcher."""
    name = f"{split.__module__}.{split.__qualname__}"
    # named inside the kernel's package, so that its cache stamp covers the kernel's files
    # (hornet.core.jit.kernel_sources)
    return (os.path.join(_folder(), name + ".py"),
            f"{split.__module__}.__launcher_{split.__qualname__}")


# the names a launcher's own code uses: a kernel with an argument of one of them has none
_RESERVED = {"prange", "launchers", "_split", "_kernel", "_launch_part", "_launch_parts",
             "_launch_results"}


def launcher_source(split) -> str:
    """The source of the launcher module of the split kernel ``split`` (a
    :class:`hornet.core.jit.SplitKernel` that its module holds by its name)."""
    args = "".join(p + ", " for p in _arguments(split))
    return f'''"""Launcher of the split kernel {split.__module__}.{split.__qualname__}, written by
hornet.core.launchers from the kernel's signature: rewritten when it changes."""
from numba import prange

from hornet.core import launchers
from {split.__module__} import {split.__qualname__} as _split

_kernel = _split.kernel


@launchers.launcher_jit
def launch({args}_launch_parts):
    _launch_results = [launchers.placeholder(_kernel, ({args}))] * _launch_parts
    for _launch_part in prange(_launch_parts):
        launchers.put(_launch_results, _launch_part,
                      _kernel({args}_launch_part, _launch_parts))
    return _launch_results
'''


def _arguments(split) -> list:
    """The names of ``split``'s arguments before ``part, parts``."""
    return list(inspect.signature(split.py_func).parameters)[:-2]


def _launchable(split) -> bool:
    """Whether ``split`` can have a launcher: its module holds it by its qualified name, and
    its arguments are plain ones named apart from the launcher's own names."""
    if "." in split.__qualname__ or split.__module__ == "__main__":
        return False
    module = sys.modules.get(split.__module__)
    if getattr(module, split.__qualname__, None) is not split:
        return False
    params = inspect.signature(split.py_func).parameters.values()
    return all(p.kind == p.POSITIONAL_OR_KEYWORD for p in params) and not (
        _RESERVED & set(_arguments(split)))


class _LauncherCache(caching.FunctionCache):
    """hornet's kernel cache (:func:`hornet.core.jit.cache_dir`, stamps covering the files of
    the kernel) for a launcher; outside the compiling process a missing entry raises
    :class:`NotCached` instead of compiling."""

    _impl_class = getattr(jit, "_CacheImpl", None)

    def load_overload(self, sig, target_context):
        try:
            found = super().load_overload(sig, target_context)
        except Exception:                   # an unreadable entry: as good as none
            found = None
        if found is None and _cache_only:
            raise NotCached(getattr(sig, "args", sig))
        return found


def launcher_jit(py_func):
    """The launcher's compilation: Numba's parfor (``parallel=True``), ``nogil``, cached in
    hornet's cache folder."""
    dispatcher = numba.njit(parallel=True, nogil=True)(py_func)
    dispatcher._cache = _LauncherCache(py_func)
    return dispatcher


def _load(split, write: bool):
    """The launcher dispatcher of ``split`` from its generated module (written first where
    ``write`` and its text differs), or None where there is none, or (not ``write``) where
    its text is not the kernel's current one: a launcher written for an earlier signature of
    the kernel would call it with the arguments it had then."""
    path, name = _names(split)
    text = launcher_source(split)
    try:
        with open(path, encoding="utf-8") as f:
            same = f.read() == text
    except OSError:
        same = False
    if not write and not same:
        return None
    if write:
        if not same:        # a rewrite changes the file's stamp: its cache entries go stale
            os.makedirs(os.path.dirname(path), exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, path)
    module = sys.modules.get(name)
    if module is None or write:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
    return module.launch


def _find(split):
    """``split``'s launcher, or False where this process cannot use one (see :func:`run`)."""
    if _LauncherCache._impl_class is None or not _launchable(split):
        return False
    try:
        launcher = _load(split, write=False)
    except Exception:
        return False
    if launcher is None or not jit.compiled_or_cached(launcher):
        return False
    return launcher


def run(split, args: tuple, parts: int):
    """The part results of ``split(*args)`` in ``parts`` parts run by its cached launcher, or
    None where the call is to run on hornet's threads (no launcher for its argument types in
    the cache, a forked child, another thread in a launcher, a busy machine, :data:`policy`
    "never")."""
    if policy == "never":
        return None
    launcher = split._launcher
    if launcher is None:                        # the kernel's first split call here
        launcher = split._launcher = _find(split)
        if launcher is False:
            _want(split, args)
    if launcher is False or os.getpid() != _pid or _machine_busy() or \
            not _in_launcher.acquire(blocking=False):
        return None
    global calls
    try:
        found = launcher(*args, parts)
        calls += 1
    except NotCached as e:
        split._launcher = False
        _want(split, args, e.arg_types[:-1])
        return None
    finally:
        _in_launcher.release()
    return found


def _machine_busy() -> bool:
    """Whether other processes keep the machine's cores from Numba's threads (see
    :data:`BUSY_LOAD_MARGIN`)."""
    seen = _load_seen
    now = time.monotonic()
    if now - seen[0] < 1.0:
        return seen[3]
    cpu = time.process_time()
    if seen[0] >= 0:        # the load average's own decay: a 60-second exponential
        decay = math.exp(-(now - seen[0]) / 60.0)
        seen[2] = seen[2] * decay + (cpu - seen[1]) / (now - seen[0]) * (1 - decay)
    seen[0], seen[1] = now, cpu
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    try:
        others = os.getloadavg()[0] - seen[2]
    except (AttributeError, OSError):
        others = 0.0
    seen[3] = others > cores - numba.get_num_threads() + BUSY_LOAD_MARGIN
    return seen[3]


def _want(split, args, arg_types=None) -> None:
    """Note a split call that found no launcher (at most one per kernel and process)."""
    global _exit_hook
    if policy != "background" or not _launchable(split):
        return
    try:
        if arg_types is None:
            arg_types = [numba.typeof(a) for a in args]
        key = (split.__module__, split.__qualname__, [str(t) for t in arg_types])
    except Exception:
        return
    wanted[str(key)] = key
    if not _exit_hook:
        _exit_hook = True
        atexit.register(_compile_in_background)


# ---- compiling ----------------------------------------------------------------------------------

def _compile_in_background() -> None:
    """Start a detached process compiling the :data:`wanted` launchers (at exit)."""
    if policy != "background" or not wanted or os.getpid() != _pid:
        return
    try:
        os.makedirs(_folder(), exist_ok=True)
        fd, path = tempfile.mkstemp(dir=_folder(), prefix="wanted-", suffix=".json")
        with os.fdopen(fd, "w") as f:     # the kernels' modules import as they did here
            json.dump({"path": sys.path, "launchers": list(wanted.values())}, f)
        here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        code = (f"import os, sys; os.nice(19); sys.path.insert(0, {here!r}); "
                f"from hornet.core.launchers import compile_main; compile_main({path!r})")
        subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    except (OSError, ValueError):
        pass


def _claim(path: str) -> bool:
    """Claim the compile of the launcher in ``path`` (False: another process compiles it)."""
    claim = path + ".claim"
    try:
        if time.time() - os.path.getmtime(claim) > _CLAIM_STALE_S:
            os.unlink(claim)
    except OSError:
        pass
    try:
        os.close(os.open(claim, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        return True
    except OSError:
        return False


def compile_launcher(module: str, qualname: str, arg_types: tuple) -> bool:
    """Compile (into the cache) the launcher of split kernel ``module.qualname`` for the
    kernel's argument types ``arg_types`` (Numba types, ``part, parts`` left out). Returns
    whether this process compiled it (not when another one claimed it)."""
    global _cache_only
    from .precompile import parse_type
    split = getattr(importlib.import_module(module), qualname)
    path, _ = _names(split)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if not _claim(path):
        return False
    _cache_only = False
    try:
        launcher = _load(split, write=True)
        launcher.compile(tuple(parse_type(t) if isinstance(t, str) else t
                               for t in arg_types) + (types.int64,))
    finally:
        _cache_only = True
        try:
            os.unlink(path + ".claim")
        except OSError:
            pass
    return True


def compile_main(list_path: str) -> None:
    """The background process: compile the launchers listed in the JSON file ``list_path``
    (the entries of :data:`wanted` and the calling process's ``sys.path``; the file is
    removed), each unless another process has claimed it."""
    global policy
    policy = "cached"                      # this process wants nothing compiled after it
    jit.announce_compiles = False
    try:
        with open(list_path) as f:
            listed = json.load(f)
    finally:
        try:
            os.unlink(list_path)
        except OSError:
            pass
    sys.path[1:1] = [p for p in listed["path"] if p not in sys.path]
    for module, qualname, arg_types in listed["launchers"]:
        try:
            compile_launcher(module, qualname, tuple(arg_types))
        except Exception:                    # this kernel keeps running on hornet's threads
            pass
