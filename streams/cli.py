"""The ``hornet`` console command (also ``python -m streams``).

    hornet replay [STREAM] [--batch-size N] [--window W] [--undirected]
                  [--algos tc,ktruss,bfs,spmv] [--device cpu|gpu|auto] [--report FILE]
                  [--plot FILE.png] [--verify] [--static] [--progress] [--map-ids]
                  [--from-snapshot PATH [--resume]] [--snapshot PATH [--snapshot-every N]]
    hornet convert INPUT OUTPUT.arrow [--map-ids]
    hornet info STREAM

Errors (missing or corrupt file, bad schema, bad ids, bad option values) print one line,
``hornet: error: ...``, to stderr and exit nonzero (2: bad usage, 1: bad input, 3: ``--verify``
found a mismatch, 130: interrupted). Set ``HORNET_DEBUG=1`` to get the traceback instead.

The command owns its process, so ``hornet replay`` run from the shell applies
:func:`hornet.tune_process` before its first batch, and on the CPU starts a helper process
that compiles the kernels of the default replay (``streams/data/replay_kernels.json``) not yet
in the kernel cache, beside the replay (:mod:`hornet.core.precompile`; it ends with the
replay). ``main(argv)`` called from Python, as the tests do, does neither unless
``tune=True`` (``precompile=True``).
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import warnings

__all__ = ["main", "build_parser", "CLIError"]

PROG = "hornet"
EXIT_USAGE, EXIT_INPUT, EXIT_VERIFY, EXIT_INTERRUPT = 2, 1, 3, 130


class CLIError(Exception):
    """A usage error found after parsing (exit status 2)."""


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors on one line (no usage dump) and exits 2."""

    def error(self, message):  # noqa: D401 - argparse API
        raise CLIError(message)


def _number(parse, accept, expected: str):
    """An argparse type: ``parse(text)`` (``_`` separators allowed for integers), refused
    unless ``accept(value)``, with the message "expected <expected>, got <text>"."""
    def convert(text: str):
        try:
            v = parse(text.replace("_", "") if parse is int else text)
        except ValueError:
            v = None
        if v is None or not accept(v):
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
        return v
    return convert


_positive_int = _number(int, lambda v: v >= 1, "a positive integer")
_nonneg_int = _number(int, lambda v: v >= 0, "an integer >= 0")
_positive_float = _number(float, lambda v: v > 0 and math.isfinite(v), "a positive number")


_ALGO_NAMES = ("tc", "ktruss", "bfs", "spmv")
_ALGO_ALIASES = {"triangles": "tc", "truss": "ktruss", "k-truss": "ktruss"}


def _algos(text: str) -> list:
    items = [a.strip().lower() for a in text.split(",") if a.strip()]
    if items in (["none"], []):
        return []
    if items == ["all"]:
        return list(_ALGO_NAMES)
    out = []
    for a in items:
        a = _ALGO_ALIASES.get(a, a)
        if a not in _ALGO_NAMES:
            raise argparse.ArgumentTypeError(f"unknown analytic {a!r} (choose from "
                                             f"{','.join(_ALGO_NAMES)}, 'all' or 'none')")
        if a not in out:
            out.append(a)
    return out


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, description="Dynamic graphs on a Hornet-style memory manager: "
                "replay recorded edge streams and convert edge files to the Arrow stream "
                "format.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    r = sub.add_parser("replay", help="replay an edge stream into a hornet graph",
                       description="Replay an edge stream (Arrow IPC file/stream, Parquet, or "
                       "any text edge list of shared/data) batch by batch, keep analytics "
                       "current, report results and throughput. Without STREAM, replays the "
                       "shipped SNAP CollegeMsg stream.")
    r.add_argument("stream", nargs="?", metavar="STREAM",
                   help="stream file (default: the shipped CollegeMsg stream)")
    r.add_argument("--batch-size", type=_positive_int, default=None, metavar="N",
                   help="events per batch, in file order (default 5000; ignored when the "
                   "stream has a batch column)")
    r.add_argument("--batch-time", type=_positive_float, default=None, metavar="T",
                   help="cut batches by time windows of length T (needs a time column)")
    r.add_argument("--ignore-batch-column", action="store_true",
                   help="batch by --batch-size/--batch-time even if the stream has batch ids")
    r.add_argument("--window", type=_nonneg_int, default=None, metavar="W",
                   help="sliding window of W events: after the batch ending at event e, delete "
                   "every edge whose last event is < e - W")
    r.add_argument("--undirected", action="store_true", help="replay into an undirected graph")
    r.add_argument("--algos", type=_algos, default=None, metavar="LIST",
                   help="analytics after each batch: comma-separated from tc,ktruss,bfs,spmv, "
                   "'all' or 'none' (default: all that this build has)")
    r.add_argument("--device", choices=("cpu", "gpu", "auto"), default="auto")
    r.add_argument("--report", metavar="FILE",
                   help="write one row per batch to FILE (.csv, .json or .arrow)")
    r.add_argument("--plot", metavar="FILE.png", help="plot edges, analytics and throughput "
                   "(needs matplotlib: pip install hornet-py[plot])")
    r.add_argument("--verify", action="store_true",
                   help="check the graph and every analytic against a from-scratch reference "
                   "after each batch (slow)")
    r.add_argument("--progress", action="store_true", help="show a progress bar")
    r.add_argument("--format", dest="text_format", choices=("snap", "csv", "konect", "mtx"),
                   help="text format of STREAM (default: detected)")
    r.add_argument("--bfs-source", default=None, metavar="V",
                   help="BFS source vertex (default: source of the first event); with "
                   "--map-ids an original id, read as the stream's ids are (integer or "
                   "string)")
    r.add_argument("--max-events", type=_nonneg_int, default=None, metavar="N",
                   help="replay only the first N events")
    r.add_argument("--map-ids", action="store_true",
                   help="take the stream's ids as they are (64-bit integers, strings): map "
                   "them to dense ids in order of appearance; the report names original ids")
    r.add_argument("--from-snapshot", metavar="PATH",
                   help="start from the graph in this snapshot (.arrow/.parquet, written by "
                   "--snapshot or Graph.save) instead of an empty graph; a snapshot written "
                   "by a replay also holds its position: STREAM then continues it (events "
                   "numbered from there on, the window and BFS source carried over)")
    r.add_argument("--resume", action="store_true",
                   help="with --from-snapshot: STREAM is the stream the snapshot's replay "
                   "read; skip the events it holds and continue (the same settings give the "
                   "uninterrupted replay's graph and analytics)")
    r.add_argument("--snapshot", metavar="PATH",
                   help="write the graph to this snapshot file (.arrow/.parquet) at the end")
    r.add_argument("--snapshot-every", type=_positive_int, default=None, metavar="N",
                   help="also write --snapshot after every N batches")
    r.add_argument("--static", action="store_true",
                   help="recompute every analytic from scratch after each batch (default: "
                   "keep them current with their dynamic algorithms)")

    c = sub.add_parser("convert", help="convert an edge file to the Arrow stream format",
                       description="Convert any edge file of shared/data (SNAP, SNAP temporal, "
                       "signed CSV, KONECT, Matrix Market) or a stream file to the Arrow stream "
                       "format, streaming block by block. The output container follows the "
                       "extension: .arrow (IPC file), .arrows (IPC stream), .parquet.")
    c.add_argument("input", metavar="INPUT")
    c.add_argument("output", metavar="OUTPUT")
    c.add_argument("--format", dest="text_format", choices=("snap", "csv", "konect", "mtx"),
                   help="text format of INPUT (default: detected)")
    c.add_argument("--compression", choices=("zstd", "lz4", "none"), default="zstd")
    c.add_argument("--id-type", choices=("int32", "int64"), default="int32",
                   help="integer type of src/dst (default int32, hornet's id type)")
    c.add_argument("--map-ids", action="store_true",
                   help="write dense ids (in order of appearance) as src/dst and keep the "
                   "input's ids (64-bit integers, strings) in columns src_original and "
                   "dst_original")

    i = sub.add_parser("info", help="describe a stream file",
                       description="Print a stream's container, columns, metadata and size.")
    i.add_argument("stream", nargs="?", metavar="STREAM",
                   help="stream file (default: the shipped stream)")
    i.add_argument("--format", dest="text_format", choices=("snap", "csv", "konect", "mtx"))
    return p


# ---------------------------------------------------------------------------------------------


def _check_output(path: str, what: str) -> None:
    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(d):
        raise CLIError(f"{what} {path!r}: directory {d!r} does not exist")
    if os.path.isdir(path):
        raise CLIError(f"{what} {path!r} is a directory")


def _cmd_replay(a) -> int:
    from .replay import replay
    from .result import REPORT_FORMATS, require_matplotlib
    if a.report:
        ext = os.path.splitext(a.report)[1].lower()
        if ext not in REPORT_FORMATS:
            raise CLIError(f"--report {a.report!r}: use a .csv, .json or .arrow file")
        _check_output(a.report, "--report")
    if a.plot:
        ext = os.path.splitext(a.plot)[1].lower()
        if ext not in (".png", ".svg", ".pdf"):
            raise CLIError(f"--plot {a.plot!r}: use a .png (or .svg/.pdf) file")
        _check_output(a.plot, "--plot")
        require_matplotlib()
    if a.batch_size is not None and a.batch_time is not None:
        raise CLIError("give --batch-size or --batch-time, not both")
    if a.snapshot_every is not None and not a.snapshot:
        raise CLIError("--snapshot-every needs --snapshot PATH")
    if a.resume and not a.from_snapshot:
        raise CLIError("--resume needs --from-snapshot PATH")
    for opt, path in (("--snapshot", a.snapshot), ("--from-snapshot", a.from_snapshot)):
        if path and os.path.splitext(path)[1].lower() not in (".arrow", ".parquet"):
            raise CLIError(f"{opt} {path!r}: use a .arrow or .parquet file")
    if a.snapshot:
        _check_output(a.snapshot, "--snapshot")
    bfs_source = a.bfs_source
    if bfs_source is not None and not a.map_ids:
        # under --map-ids the text goes to the replay as given: an original id, read as an
        # integer or a string like the stream's ids (streams.analytics.stream_source)
        try:
            bfs_source = int(bfs_source.replace("_", ""))
        except ValueError:
            raise CLIError(f"argument --bfs-source: expected a vertex id >= 0, got "
                           f"{a.bfs_source!r} (names need --map-ids)") from None
        if bfs_source < 0:
            raise CLIError(f"argument --bfs-source: expected a vertex id >= 0, got "
                           f"{a.bfs_source!r}")
    from .replay import DEFAULT_BATCH_SIZE
    batch_size = a.batch_size if a.batch_size is not None else (
        None if a.batch_time is not None else DEFAULT_BATCH_SIZE)
    res = replay(a.stream, batch_size=batch_size, window=a.window, directed=not a.undirected,
                 algos=a.algos, device=a.device, verify=a.verify, progress=a.progress,
                 batch_time=a.batch_time, use_batch_column=not a.ignore_batch_column,
                 bfs_source=bfs_source, dynamic=not a.static, text_format=a.text_format,
                 max_events=a.max_events, map_ids=a.map_ids, from_snapshot=a.from_snapshot,
                 snapshot=a.snapshot, snapshot_every=a.snapshot_every, resume=a.resume)
    print(res.summary_text())
    if a.report:
        res.write_report(a.report)
        print(f"  report      {a.report} ({len(res)} rows)")
    if a.plot:
        res.plot(a.plot)
        print(f"  plot        {a.plot}")
    if a.snapshot:
        print(f"  snapshot    {a.snapshot}")
    return 0


def _cmd_convert(a) -> int:
    from .convert import convert
    from .format import container_for_path
    try:
        container_for_path(a.output)
    except ValueError as e:
        raise CLIError(str(e)) from None
    _check_output(a.output, "OUTPUT")
    res = convert(a.input, a.output, text_format=a.text_format,
                  compression=None if a.compression == "none" else a.compression,
                  id_type=a.id_type, map_ids=a.map_ids)
    print(res.summary())
    return 0


def _cmd_info(a) -> int:
    from . import default_stream_path
    from .reader import open_stream
    path = a.stream or default_stream_path()
    with open_stream(path, text_format=a.text_format) as rd:
        rows = rd.num_rows
        if rows is None:
            rows = sum(rb.num_rows for rb in rd.record_batches())
        print(f"{rd.path}")
        print(f"  container  {rd.container}" + (f" ({rd.text_format})" if rd.text_format else ""))
        print(f"  events     {rows:,}")
        cols = ", ".join(f"{f.name}:{f.type}" for f in rd.schema
                         if f.name in rd.columns.names())
        print(f"  columns    {cols}")
        if rd.columns.ignored:
            print(f"  ignored    {', '.join(rd.columns.ignored)}")
        for k, v in rd.metadata.items():
            print(f"  {k + ':':<11} {v}")
    return 0


def _one_line(msg: str) -> str:
    return " ".join(str(msg).split())


def _error(msg: str, code: int) -> int:
    print(f"{PROG}: error: {_one_line(msg)}", file=sys.stderr)
    return code


def main(argv=None, *, tune: bool | None = None, precompile: bool | None = None) -> int:
    """Entry point of the ``hornet`` command; returns the exit status. ``tune``: apply
    :func:`hornet.tune_process` for a replay; ``precompile``: compile a CPU replay's kernels
    in a helper process too (:func:`_start_precompile`). Both default to True only when
    ``argv`` is None, i.e. when run as the command."""
    debug = bool(os.environ.get("HORNET_DEBUG"))
    if tune is None:
        tune = argv is None
    if precompile is None:
        precompile = argv is None
    if not sys.warnoptions and not debug:
        warnings.simplefilter("ignore")
    parser = build_parser()
    try:
        a = parser.parse_args(argv)
        if a.command is None:
            raise CLIError("choose a command: replay, convert or info (see 'hornet --help')")
        if tune and a.command == "replay":
            import hornet
            hornet.tune_process()
        if precompile and a.command == "replay":
            _start_precompile(a.device)
        return {"replay": _cmd_replay, "convert": _cmd_convert, "info": _cmd_info}[a.command](a)
    except CLIError as e:
        if debug:
            raise
        return _error(str(e), EXIT_USAGE)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPT
    except BrokenPipeError:
        return EXIT_INPUT
    except Exception as e:  # every failure becomes one line unless HORNET_DEBUG is set
        if debug:
            raise
        return _error(_describe(e), _code(e))
    finally:
        background = sys.modules.get("hornet.core.precompile")
        if precompile and background is not None:
            background.stop()
        cuda = sys.modules.get("hornet.core.cuda")
        if precompile and cuda is not None:
            cuda.finish_prebuild()      # the CUDA modules still building, for the next run


#: the kernels a CPU replay of the shipped stream compiles (``python3 -m bench.tools.kernel_list``)
REPLAY_KERNELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data",
                              "replay_kernels.json")


#: the CUDA modules a GPU replay of the shipped stream loads (``python3 -m
#: bench.tools.kernel_list --device gpu``)
REPLAY_MODULES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data",
                              "replay_modules_gpu.json")
#: CuPy's own kernels (elementwise, reductions) a GPU replay of the shipped stream compiles,
#: for one CuPy version (the same tool)
REPLAY_CUPY_KERNELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data",
                                   "replay_cupy_kernels_gpu.json")


def _start_precompile(device: str) -> None:
    """Start compiling the listed replay kernels missing from the cache beside the replay: on
    the CPU in a helper process (a first run then compiles on two cores), on the GPU the CUDA
    modules in background threads, the longest builds first, and CuPy's own kernels the
    replay uses (built in the replay's thread otherwise, one after another)."""
    import hornet
    if device == "gpu" or (device == "auto" and hornet.backend_available("gpu")):
        if not hornet.backend_available("gpu"):
            return                      # the replay itself says why it cannot run
        import json
        from hornet.core import cuda
        root = os.path.dirname(os.path.abspath(hornet.__file__))
        try:
            with open(REPLAY_MODULES, encoding="utf-8") as f:
                listed = json.load(f)["modules"]
            # the longest builds first: the slowest module bounds a first run
            listed = sorted(listed, key=lambda m: -(m[2] if len(m) > 2 else 0.0))
            modules = [(os.path.join(root, m[0]), tuple(m[1])) for m in listed
                       if os.path.exists(os.path.join(root, m[0]))]
            cuda.prebuild(modules)
            import cupy
            with open(REPLAY_CUPY_KERNELS, encoding="utf-8") as f:
                listed = json.load(f)
            if listed["cupy"] == cupy.__version__:     # CuPy writes other kernels otherwise
                # the builds of a second or more first (used late, they would hold the
                # replay longest), then in the order the replay first uses them
                kernels = sorted(listed["kernels"], key=lambda k: -int(k.get("seconds", 0)))
                cuda.prebuild_cupy_kernels(kernels)
        except Exception:   # noqa: BLE001 - a head start only: the replay builds on use
            pass
        return
    from hornet.core import precompile as background
    background.start(REPLAY_KERNELS)


def _code(e: BaseException) -> int:
    from .replay import VerificationError
    return EXIT_VERIFY if isinstance(e, VerificationError) else EXIT_INPUT


def _describe(e: BaseException) -> str:
    from .replay import VerificationError
    if isinstance(e, FileNotFoundError):
        return f"{e.filename or e}: no such file"
    if isinstance(e, IsADirectoryError):
        return f"{e.filename}: is a directory"
    if isinstance(e, PermissionError):
        return f"{e.filename or e}: permission denied"
    if isinstance(e, VerificationError):
        return f"verification failed: {e}"
    if isinstance(e, OSError) and getattr(e, "filename", None):
        return f"{e.filename}: {e.strerror or e}"
    if isinstance(e, ValueError) or isinstance(e, OSError):
        return str(e) or type(e).__name__
    try:
        from hornet.batch.validate import BatchError
        if isinstance(e, BatchError):
            return str(e)
    except Exception:
        pass
    return f"internal error: {type(e).__name__}: {e} (set HORNET_DEBUG=1 for a traceback)"


if __name__ == "__main__":
    sys.exit(main())
