"""Compiling the CPU kernels.

- :func:`njit`: ``numba.njit`` with hornet's on-disk cache. Compiled kernels are kept in a
  folder the user can write (:func:`cache_dir`: ``$HORNET_CACHE_DIR``, else
  ``$XDG_CACHE_HOME/hornet`` or ``~/.cache/hornet``), so that an install into a read-only
  site-packages still compiles once, not once per process; ``NUMBA_CACHE_DIR`` still wins
  when set, and where no folder is writable the kernels are compiled in every process. The
  first compile of a process prints one line on stderr (:data:`COMPILE_NOTICE`). A cached
  kernel is reused only while its own file and the files of the helpers it calls
  (:func:`kernel_sources`) are unchanged.
- :func:`split_kernel`: hornet's parallel CPU kernels. One serial compilation (``nogil``) of
  a loop whose iterations are independent, run on one thread for small inputs and in parts
  on several threads for large ones (:mod:`hornet.core.threads`: a few threads of hornet's
  own, started on first use, as many as ``numba.get_num_threads()``). One compile serves
  both: a ``prange`` loop (Numba's parfor) would cost several times the serial compile of
  the same body, and a second compilation besides. Kernels with several phases are split
  kernels called one after another (each phase needs the whole previous one). Where a
  previous process has left a kernel's parfor *launcher* in the cache (compiled in the
  background after it: :mod:`hornet.core.launchers`), its split calls run their parts on
  Numba's threads through it instead, which costs less per call than a hand-off to
  hornet's threads.
- :func:`inline_when_parallel`: an inlining choice for per-row helpers (``njit(inline=...)``):
  inlined into split kernels, where large batches run, and called from other kernels, so
  that those compile each helper once.
- :class:`OptionalPath`: an optional fast path (one that only speeds up what another path
  also does, such as the CPU small-batch path) is taken once its kernels are compiled or
  cached, or once a process has made enough calls to win its compile back
  (:data:`optional_path_policy` changes this): a short run compiles one path, not two.
- :data:`kernels`: every dispatcher :func:`njit` made, by module and qualified name, so that
  a list of kernels (:mod:`hornet.core.precompile`) can name them; :data:`compile_claims`
  (None unless a helper process compiles beside this one) lets two processes share out the
  compiles of a cold start.
- :func:`compile_timer`: the seconds spent compiling kernels (Numba, and the CUDA modules of
  :mod:`hornet.memory.gpu_copy`) while it is active, so that throughput figures can leave
  one-time compilation out.
- :func:`ix`: an index that Numba need not wrap. Numba indexes like NumPy: a signed index
  ``i`` reads ``a[i + len(a)]`` when negative, a compare and a select on every access that
  also keep LLVM from vectorizing a loop. Hot loops index with ``a[ix(i)]`` where ``i >= 0``
  is known (Cython's ``wraparound=False``, one access at a time). A negative ``i`` there
  reads out of bounds: use it only on indices the kernel has just bounded.
"""
from __future__ import annotations

import contextlib
import os
import sys
import time
import types
from typing import Iterator

import numba
import numba.core.errors
import numpy as np
from numba.extending import intrinsic
from numba import types as nbtypes
from numba.core import caching
from numba.core import event as numba_event

from . import threads

PARALLEL_MIN = 1 << 13   # a split kernel's default threshold: items of work run on one thread
# items of work below which a split kernel (SplitKernel) runs on one thread whatever its
# threshold, unless parallel_policy is "always"
SPLIT_MIN = 1 << 10
# "tiered" (the default): split kernels run in one part per max(threshold, SPLIT_MIN) items
# of work, at most one per thread; "always": in a part per thread from their own threshold;
# "never": on one thread
parallel_policy = "tiered"

#: Calls that ran in parts (:class:`SplitKernel`) in this process; the test suite checks with it that its ``parallel_kernels`` tests reach
#: the parallel code.
parallel_calls = 0
#: The fewest parts a split call runs in (more where Numba has more threads): the test suite
#: sets 2 in its ``parallel_kernels`` tests, so that small inputs, which run on one thread
#: (:func:`hornet.core.chunking.threads_for`), are split too.
split_min_parts = 1
# optional fast paths (:class:`OptionalPath`): "tiered" (the default): taken once compiled or
# cached, or after their promotion count of calls; "always": taken from the first call
# (compiling them then); "never": not taken
optional_path_policy = "tiered"

#: Every dispatcher made by :func:`njit` (split kernels' compilations included), by
#: ``(module, qualified name)`` of its Python function.
kernels: dict = {}

#: ``(module, qualified name)`` of the split kernels and of the ``njit(parallel=True)``
#: compilations: the callers :func:`inline_when_parallel` inlines into.
parallel_kernels: set = set()

#: None, or the claims of kernels between this process and a helper compiling beside it
#: (:class:`hornet.core.precompile.Claims`): before compiling a kernel missing from the cache
#: a process calls ``compile_claims.claim(key)``, which returns True after waiting for the
#: other process to compile it (then it is looked up in the cache again); it saves a
#: compiled kernel inside ``compile_claims.index_lock(index file)`` and then calls
#: ``compile_claims.done(key)``.
compile_claims = None

COMPILE_NOTICE = "hornet: compiling kernels, first run only (cached in {where})"

# Set to False to silence the compile notice (e.g. in a program with its own progress output).
announce_compiles = True
_announced = False


def cache_dir() -> str:
    """The folder holding hornet's compiled kernels: ``$HORNET_CACHE_DIR`` when set, else
    ``hornet`` in ``$XDG_CACHE_HOME`` (default ``~/.cache``). Read from the environment at
    each call, never written to it."""
    explicit = os.environ.get("HORNET_CACHE_DIR")
    if explicit:
        return os.path.abspath(os.path.expanduser(explicit))
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(os.path.abspath(base), "hornet")


def kernel_sources(module_name: str) -> list:
    """The source files a cached kernel of module ``module_name`` depends on: its own, and
    those of the modules of its package whose kernels it can call (a kernel, or a module
    that is not a package, in its globals), followed through those modules the same way.
    Numba's cache checks a kernel's own file only, while a helper from another file is
    compiled (often inlined) into it: :func:`_source_stamp` covers them all, so that a
    change to the helper's file recompiles its callers. Constants imported from another
    module are not followed."""
    package = module_name.split(".")[0] + "."
    found, todo = {}, [module_name]
    while todo:
        name = todo.pop()
        if name in found:
            continue
        path, calls = _kernel_imports(name, package)
        if path:
            found[name] = path
            todo.extend(calls)
    return sorted(found.values())


_KERNEL_IMPORTS: dict = {}      # (module name, number of globals) -> (its file, modules)


def _kernel_imports(name: str, package: str) -> tuple:
    """(file, names of the modules of ``package`` whose kernels or functions it holds) of
    module ``name``; (None, ()) for an unknown module or a package."""
    module = sys.modules.get(name)
    path = getattr(module, "__file__", None)
    if module is None or not path or hasattr(module, "__path__"):
        return None, ()
    names = vars(module)
    key = (name, len(names))
    if key not in _KERNEL_IMPORTS:
        calls = set()
        for value in list(names.values()):
            if isinstance(value, types.ModuleType):
                other = value.__name__
            else:
                other = getattr(getattr(value, "py_func", None), "__module__", None)
            if other and other.startswith(package) and other != name:
                calls.add(other)
        _KERNEL_IMPORTS[key] = (path, tuple(sorted(calls)))
    return _KERNEL_IMPORTS[key]


def _source_stamp(py_file: str, module_name: str):
    """Numba's stamp of ``py_file`` (a hash of its text) with those of the other files of
    :func:`kernel_sources`."""
    stamps = []
    for path in [py_file] + [f for f in kernel_sources(module_name) if f != py_file]:
        try:
            st = os.stat(path)
        except OSError:
            continue
        stamps.append(caching._hash_source_file(path, st.st_mtime, st.st_size))
    return tuple(stamps)


# hornet's locator and cache classes build on Numba's caching module (internal API); where
# it differs, the kernels fall back to Numba's own cache (cache=True)
try:
    class _DependencyStamp:
        """A locator mixin whose source stamp covers a kernel's helpers in other files."""

        def __init__(self, py_func, py_file):
            super().__init__(py_func, py_file)
            self._module_name = py_func.__module__

        def get_source_stamp(self):
            if getattr(sys, "frozen", False):
                return super().get_source_stamp()
            return _source_stamp(self._py_file, self._module_name)

    class _UserCacheLocator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
        """Numba cache locator for hornet's kernels: ``cache_dir()/numba/<source folder>-<hash
        of its path>``, so that two installs (or checkouts) of hornet never share entries."""

        def __init__(self, py_func, py_file):
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            self._cache_path = os.path.join(cache_dir(), "numba",
                                            self.get_suitable_cache_subpath(py_file))

        def get_cache_path(self):
            return self._cache_path

    class _CacheImpl(caching.CompileResultCacheImpl):
        # numba's NUMBA_CACHE_DIR first, then hornet's user folder, then numba's own fallbacks
        # (next to the source, numba's user-wide folder); the first writable one is used
        _locator_classes = [
            type(base.__name__, (_DependencyStamp, base), {})
            for base in (caching.UserProvidedCacheLocator, _UserCacheLocator,
                         caching.InTreeCacheLocator, caching.UserWideCacheLocator)]

    class _FunctionCache(caching.FunctionCache):
        """Numba's function cache with hornet's locators; announces the first compile."""
        _impl_class = _CacheImpl

        def __init__(self, py_func):
            super().__init__(py_func)
            self._kernel_name = f"{py_func.__module__}.{py_func.__qualname__}"

        def load_overload(self, sig, target_context):
            found = super().load_overload(sig, target_context)
            if found is None and self._enabled:
                claims = compile_claims
                if claims is not None and claims.claim(self._claim_key(sig)):
                    found = super().load_overload(sig, target_context)
                if found is None:
                    _announce(self._cache_path)
            return found

        def save_overload(self, sig, data):
            claims = compile_claims
            if claims is None:
                return super().save_overload(sig, data)
            try:
                # two processes adding overloads of one kernel to its index file take turns
                with claims.index_lock(getattr(self._cache_file, "_index_path", "")):
                    super().save_overload(sig, data)
            finally:
                claims.done(self._claim_key(sig))

        def _claim_key(self, sig) -> str:
            return claim_key(self._kernel_name, getattr(sig, "args", sig))
except AttributeError:  # pragma: no cover - another Numba
    _FunctionCache = None


def claim_key(kernel: str, arg_types) -> str:
    """The name two processes share for one compile: the kernel's ``module.qualname`` and its
    argument types (Numba types or their ``str``)."""
    return f"{kernel}({', '.join(str(t) for t in arg_types)})"


def announce_compile(where: str) -> None:
    """Print :data:`COMPILE_NOTICE` (kernels cached in ``where``) on stderr, once per process
    (for the Numba kernels and the CUDA modules together); nothing when
    :data:`announce_compiles` is False."""
    _announce(where)


def _announce(where: str) -> None:
    global _announced
    if _announced or not announce_compiles:
        return
    _announced = True
    root = cache_dir()
    if where.startswith(root + os.sep):
        where = root
    try:
        print(COMPILE_NOTICE.format(where=where), file=sys.stderr, flush=True)
    except (OSError, ValueError, AttributeError):   # no usable stderr
        pass


def _with_cache(dispatcher):
    """``dispatcher`` with hornet's on-disk cache (none where no folder can be written)."""
    try:
        if _FunctionCache is None:
            dispatcher.enable_caching()
        else:
            dispatcher._cache = _FunctionCache(dispatcher.py_func)
    except (RuntimeError, OSError):   # no writable folder: compile in every process
        pass
    return dispatcher


def njit(py_func=None, **options):
    """``numba.njit`` (same options; ``cache`` defaults to True, ``no_cfunc_wrapper`` to True)
    caching in :func:`cache_dir`.
    Use as ``@njit`` or ``njit(**options)(function)``. hornet's own parallel kernels are
    split kernels (:func:`split_kernel`); ``parallel=True`` gives Numba's parfor
    compilation as ``numba.njit`` does."""
    cache = options.pop("cache", True)
    # no C-callable wrapper (Numba makes one per compile for first-class function values,
    # which hornet's kernels never are): a share of every compile a cold start saves
    options.setdefault("no_cfunc_wrapper", True)

    def wrap(f):
        dispatcher = _plain_argument_calls(numba.njit(**options)(f))
        kernels[(f.__module__, f.__qualname__)] = dispatcher
        if options.get("parallel"):
            parallel_kernels.add((f.__module__, f.__qualname__))
        return _with_cache(dispatcher) if cache else dispatcher

    return wrap if py_func is None else wrap(py_func)


def inline_when_parallel(expr, caller_ir, callee_ir) -> bool:
    """Numba inlining cost model, ``njit(inline=inline_when_parallel)``: the helper is inlined
    (in Numba's IR) where a split kernel calls it, and stays a called function elsewhere.

    For per-row helpers of the list kernels. Inlined into a parallel loop, their array
    arguments need no reference counting per call, which large batches gain from; each
    inlined copy is typed and optimized again, though, which costs compile time. Other
    kernels call one compiled copy instead, so that a cold start compiles each helper once. ``expr`` is the
    call, ``caller_ir`` / ``callee_ir`` the two functions' Numba IR; nested helpers are
    decided for the outermost caller they end up in."""
    fid = caller_ir.func_id
    return (fid.modname, fid.func_qualname) in parallel_kernels


def _plain_argument_calls(dispatcher):
    """``dispatcher``, compiled for plain argument types when another kernel calls it.

    A kernel calling ``f(x, 0)`` gives Numba the literal type ``Literal[int](0)``, and Numba
    compiles ``f`` once for it and once more for the ``int64`` of another call site (LLVM
    still sees the constant where it inlines the call). Here a call from a kernel compiles
    for the arguments' plain types (literals as their plain types), and for the literals only
    where that does not type (a function that needs a compile-time constant)."""
    generic = dispatcher.get_call_template

    def get_call_template(args, kws):
        plain = tuple(nbtypes.unliteral(a) for a in args)
        plain_kws = {k: nbtypes.unliteral(v) for k, v in kws.items()}
        if plain != tuple(args) or plain_kws != kws:
            try:
                return generic(plain, plain_kws)
            except numba.core.errors.TypingError:
                pass
        return generic(args, kws)

    dispatcher.get_call_template = get_call_template
    return dispatcher


def _work(args) -> int:
    """The size of a call's work: the length of its first array argument (or the first
    argument itself when it is a number)."""
    for a in args:
        shape = getattr(a, "shape", None)
        if shape is not None:
            return int(shape[0]) if len(shape) else 1
        if isinstance(a, (int, np.integer)):
            return int(a)
    return 0


def compiled_or_cached(dispatcher) -> bool:
    """Whether a Numba dispatcher made by :func:`njit` has compiled code in this process, or
    an entry (any signature) in its on-disk cache. Looks at one file's existence."""
    if dispatcher.overloads:
        return True
    cache_file = getattr(getattr(dispatcher, "_cache", None), "_cache_file", None)
    index = getattr(cache_file, "_index_path", None)
    return index is not None and os.path.exists(index)


class OptionalPath:
    """Gate of an optional fast path whose kernels cost seconds to compile (a path that only
    speeds up what another, compiled anyway, also does; e.g. the CPU small-batch path).

    :meth:`take` says whether an eligible call takes the path: yes once its kernels are
    compiled in this process or cached on disk (a previous run compiled them), or once the
    process has made ``promote_calls`` eligible calls (the path then pays for its compile);
    before that, the other path runs. :data:`optional_path_policy` changes this.
    """

    def __init__(self, kernels: tuple, promote_calls: int):
        self.kernels = kernels            # dispatchers whose compiled code opens the path
        self.promote_calls = promote_calls
        self.calls = 0                    # eligible calls sent to the other path so far
        self._open = False
        self._cache_checked = False

    def take(self) -> bool:
        """Whether this eligible call takes the optional path (counts it otherwise)."""
        if self._open or optional_path_policy == "always":
            return True
        if optional_path_policy == "never":
            return False
        if any(k.overloads for k in self.kernels):
            self._open = True
        elif not self._cache_checked:
            self._cache_checked = True
            self._open = any(compiled_or_cached(k) for k in self.kernels)
        if not self._open:
            self.calls += 1
            self._open = self.calls > self.promote_calls
        return self._open



@intrinsic
def ix(typingctx, i):
    """``i`` (>= 0) as an index without NumPy's negative wraparound (see the module notes):
    ``np.uint64(i)``. An intrinsic, not an inlined function: a kernel indexes with it at
    hundreds of sites, and each inlined call site would run Numba's front end over the callee
    again at compile time; the intrinsic emits the one integer cast directly."""
    if not isinstance(i, nbtypes.Integer):
        return None
    arg = nbtypes.unliteral(i)

    def codegen(context, builder, signature, args):
        return context.cast(builder, args[0], arg, nbtypes.uint64)

    return nbtypes.uint64(arg), codegen


class SplitKernel:
    """Callable running one serial, ``nogil`` compilation of a kernel on one thread or, for
    calls whose work (:func:`_work`) is at least ``threshold``, in parts on several threads
    (:func:`hornet.core.threads.run_parts`): one compile serves small and large inputs.

    The kernel's last two arguments are ``part, parts`` (given by this callable, not by its
    callers): it runs share ``part`` of ``parts`` of its outer loop, whose iterations must be
    independent (see :func:`part_range`). ``combine`` makes the call's result from the
    parts' results (a list in part order); default: part 0's result. The helpers it calls
    with :func:`inline_when_parallel` are inlined into it.
    :data:`parallel_policy` ``"never"`` keeps every call on one thread; a split call counts
    in :data:`parallel_calls`. Called from Python only (a jitted caller calls ``.kernel``
    with ``part, parts``). Under the default :data:`parallel_policy` a call runs in as many
    parts as it has threads, but no more than its work holds ``max(threshold, SPLIT_MIN)``
    items (one part below that): handing a part to another thread costs about as much as
    that much work. Under ``"always"`` a call of at least ``threshold`` items runs in a part
    per thread. A call in parts runs them through the
    kernel's parfor launcher where the cache holds it (:func:`hornet.core.launchers.run`),
    on hornet's threads otherwise."""

    def __init__(self, py_func, threshold: int = PARALLEL_MIN, combine=None,
                 cache: bool = True, nrt: bool = False, **options):
        options["nogil"] = True
        # without Numba's runtime (``nrt=False``) a kernel keeps no reference counts on the
        # arrays it hands to its helpers: they cost an atomic increment and decrement per
        # call in an inner loop; a kernel that makes arrays needs the runtime (``nrt=True``)
        options["_nrt"] = nrt
        parallel_kernels.add((py_func.__module__, py_func.__qualname__))
        self.kernel = njit(py_func, cache=cache, **options)
        self.py_func = py_func
        self.threshold = threshold
        self.combine = combine
        self._launcher = None       # its parfor launcher, False without (hornet.core.launchers)
        self.__doc__ = py_func.__doc__
        self.__name__ = py_func.__name__
        self.__qualname__ = py_func.__qualname__
        self.__module__ = py_func.__module__

    def __call__(self, *args):
        global parallel_calls
        work = _work(args) if parallel_policy != "never" else 0
        if parallel_policy == "always":
            parts = split_parts() if work >= self.threshold else 1
        else:
            # each part gets at least a threshold's work: handing a part to another thread
            # costs about as much, so many threads on a small call lose to one
            parts = min(split_parts(), work // max(self.threshold, SPLIT_MIN))
        if parts > 1:
            parallel_calls += 1
            results = self._run_parts(args, parts)
            return results[0] if self.combine is None else self.combine(results)
        result = self.kernel(*args, 0, 1)
        return result if self.combine is None else self.combine([result])

    def split(self, *args):
        """The call in parts whatever its work (unless :data:`parallel_policy` is
        ``"never"``): for callers that size the work themselves."""
        global parallel_calls
        parts = split_parts() if parallel_policy != "never" else 1
        parallel_calls += parts > 1
        results = self._run_parts(args, parts) if parts > 1 else [self.kernel(*args, 0, 1)]
        return results[0] if self.combine is None else self.combine(results)

    def _run_parts(self, args: tuple, parts: int) -> list:
        """The results of the ``parts`` parts of a call: run by the kernel's parfor launcher
        where this process has it cached (:mod:`hornet.core.launchers`), else on hornet's
        threads."""
        results = launched_parts(self, args, parts) if launched_parts is not None else None
        return threads.run_parts(self.kernel, args, parts) if results is None else results


def split_parts() -> int:
    """How many parts a split call made now runs in at most (one per Numba thread of the
    calling thread, at least :data:`split_min_parts`): the rows of per-part scratch arrays
    that a split kernel indexes by ``part``."""
    return max(threads.parts_for(), split_min_parts)


@njit(inline="always")
def part_range(n, part, parts):
    """(first, end) of share ``part`` of ``parts`` of ``range(n)``: a split kernel's outer
    loop is ``for i in range(*part_range(n, part, parts))``."""
    return n * part // parts, n * (part + 1) // parts


def split_kernel(py_func=None, *, threshold: int = PARALLEL_MIN, combine=None,
                 nrt: bool = False):
    """Decorator: ``@split_kernel`` on a kernel whose last two arguments are ``part, parts``
    (see :class:`SplitKernel`); ``nrt=True`` for a kernel that makes arrays."""
    if py_func is None:
        return lambda f: SplitKernel(f, threshold, combine, nrt=nrt)
    return SplitKernel(py_func, threshold, combine, nrt=nrt)


class CompileTimer:
    """Seconds spent compiling kernels while a :func:`compile_timer` context is active."""

    def __init__(self):
        self._numba = numba_event.TimingListener()
        self.other_seconds = 0.0

    @property
    def seconds(self) -> float:
        """Compile seconds so far (outermost Numba compiles, plus CUDA module builds)."""
        numba_s = self._numba.duration if self._numba.done else 0.0
        return numba_s + self.other_seconds


_timers: list[CompileTimer] = []


@contextlib.contextmanager
def compile_timer() -> Iterator[CompileTimer]:
    """Context measuring the time spent compiling kernels inside it (wall seconds, in
    ``.seconds``, readable during and after the context). Nested compiles count once."""
    timer = CompileTimer()
    _timers.append(timer)
    try:
        with numba_event.install_listener("numba:compile", timer._numba):
            yield timer
    finally:
        _timers.remove(timer)


def record_compile(seconds: float) -> None:
    """Add ``seconds`` of compiling done outside Numba (a CUDA module build) to every active
    :func:`compile_timer`."""
    for timer in _timers:
        timer.other_seconds += seconds


@contextlib.contextmanager
def timed_compile() -> Iterator[None]:
    """Context timing a compile done outside Numba into the active compile timers."""
    t = time.perf_counter()
    try:
        yield
    finally:
        record_compile(time.perf_counter() - t)


#: the parts of a split call through the kernel's parfor launcher, or None where it has none:
#: :func:`hornet.core.launchers.run`, set by the package hornet.core when imported; a
#: function, not the module, in this module's globals: the cache stamps of kernels, which
#: follow the modules in their helpers' globals (kernel_sources), leave launchers.py out
launched_parts = None
