"""Build the shipped cubins of hornet's CUDA modules (``hornet/core/cubins_sm90.zip``).

    python3 -m bench.tools.build_cubins [--out PATH] [--workers 8]

On a GPU machine (a Hopper card for the shipped archive): compiles every module of the GPU
replay's list (``streams/data/replay_modules_gpu.json``) exactly as ``load_module`` has CuPy
compile it (``cupy.RawModule``, NVRTC, this device's architecture), catching the binary CuPy
would put in its kernel cache, and CuPy's own kernels the replay compiles
(``streams/data/replay_cupy_kernels_gpu.json``, when it is for this CuPy version); writes
one zip archive: ``index.json`` (the toolchain; per module its key, lowered names and file;
per CuPy kernel its record's digest and file) and one LZMA-compressed cubin each
(:mod:`hornet.core.cubins` reads it). Rerun after changing a listed module or header, or
the list; the loader ignores cubins whose key no longer matches, so a stale archive costs
compiles, never wrong code.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import threading
import time
import zipfile
from pathlib import Path

from bench.common import ROOT
from hornet.core import cupy_records

MODULE_LIST = ROOT / "streams" / "data" / "replay_modules_gpu.json"
ARCHIVE = ROOT / "hornet" / "core" / "cubins_sm90.zip"
CUPY_LIST = ROOT / "streams" / "data" / "replay_cupy_kernels_gpu.json"


class _Catch:
    """A CuPy kernel cache backend that finds nothing and keeps what CuPy saves: each
    payload by its cache name, and the last one each thread saved (CuPy saves in the thread
    that compiles)."""

    def __init__(self):
        self.named: dict = {}
        self.mine = threading.local()

    def load(self, name):
        return None

    def save(self, name, payload, source):
        self.named[name] = payload
        self.mine.payload = payload


def _text(name) -> str:
    return name.decode() if isinstance(name, bytes) else str(name)


def replay_modules() -> list:
    """The GPU replay's modules, ``(absolute path, template instances)``, each once."""
    import hornet
    package = os.path.dirname(os.path.abspath(hornet.__file__))
    todo = []
    for rel, names, *_ in json.loads(MODULE_LIST.read_text())["modules"]:
        module = (os.path.join(package, rel), tuple(names))
        if module not in todo:
            todo.append(module)
    return todo


def _compile_in_threads(items: list, build, workers: int) -> None:
    """Run ``build(item, catch)`` for every item in ``workers`` threads on the current
    device, with CuPy's kernel cache replaced by a :class:`_Catch` (restored afterwards)."""
    import cupy
    from cupy.cuda import compiler

    catch, before = _Catch(), compiler._kernel_cache_backend
    compiler._set_kernel_cache_backend(catch)
    queue = list(reversed(items))
    lock = threading.Lock()
    device = cupy.cuda.Device().id

    def work():
        with cupy.cuda.Device(device):
            while True:
                with lock:
                    if not queue:
                        return
                    item = queue.pop()
                build(item, catch)

    threads = [threading.Thread(target=work) for _ in range(min(workers, len(items)))]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        compiler._set_kernel_cache_backend(before)


def compile_modules(modules: list, workers: int = 8) -> dict:
    """``{(path, names): (cubin bytes, lowered names, build seconds)}`` of the modules
    ``(path, template instances)``, compiled on the current device as ``load_module`` has
    CuPy compile them (the shipped cubins left aside)."""
    os.environ["HORNET_CUBINS"] = "0"
    import cupy
    from cupy.cuda import compiler
    from hornet.core import cuda

    done, errors = {}, []

    def build(module, catch):
        path, names = module
        code, options = cuda.module_source(path)
        t = time.perf_counter()
        catch.mine.payload = None
        try:
            built = cupy.RawModule(code=code, options=options,
                                   name_expressions=list(names) or None).module
        except Exception as e:  # noqa: BLE001 - reported, then the tool fails
            errors.append(f"{path} {list(names)}: {e}")
            return
        seconds = time.perf_counter() - t
        mapping = dict(built.mapping or {})
        payload = catch.mine.payload
        if payload is None:
            errors.append(f"{path}: CuPy saved no binary")
            return
        if names:
            decoded = compiler._decode_cache_payload(payload, len(names))
            if decoded is None or dict(zip(sorted(names), decoded[0])) != mapping:
                errors.append(f"{path}: CuPy's cache entry is not as expected")
                return
            payload = decoded[1]
        if not payload.startswith(b"\x7fELF"):
            errors.append(f"{path}: not a cubin")
            return
        done[(path, names)] = (payload, mapping, seconds)

    _compile_in_threads(modules, build, workers)
    if errors:
        raise SystemExit("bench.tools.build_cubins: " + "\n".join(errors))
    return done


def compile_cupy_kernels(records: list, workers: int = 8) -> dict:
    """``{record digest: (cubin bytes, build seconds)}`` of recorded CuPy compiles
    (:func:`hornet.core.cupy_records.cupy_compile_record`), compiled on the current device as
    CuPy compiles them; checks that :func:`hornet.core.cubins.cupy_cache_name` gives the
    name CuPy's cache stores each under (the seeding of another install relies on it), and
    returns none if a record fails."""
    from cupy.cuda import compiler
    from hornet.core import cubins

    install = cupy_records.cupy_install()
    done, errors = {}, []

    def build(record, catch):
        source, options, extra, backend, jitify = cupy_records.cupy_compile_arguments(
            record, install)
        t = time.perf_counter()
        try:
            name = cubins.cupy_cache_name(source, options, extra, backend, jitify)
            compiler._compile_module_with_cache(
                source, options, extra_source=extra, backend=backend, jitify=jitify)
        except Exception as e:  # noqa: BLE001 - reported, then the tool fails
            errors.append(f"{record['source'][:60]!r}: {e}")
            return
        seconds = time.perf_counter() - t
        cubin = catch.named.get(name)
        if cubin is None or not cubin.startswith(b"\x7fELF"):
            errors.append(f"{record['source'][:60]!r}: CuPy cached it under another "
                          "name than hornet.core.cubins.cupy_cache_name gives")
            return
        done[cubins.record_digest(record)] = (cubin, seconds)

    _compile_in_threads(records, build, workers)
    if errors:          # none shipped: hornet's modules do not depend on them
        print("bench.tools.build_cubins: no CuPy kernels in the archive:\n  "
              + "\n  ".join(errors[:5]), file=sys.stderr)
        return {}
    return done


def write_archive(out: Path, built: dict, cupy_built: dict | None = None) -> dict:
    """Write the archive ``out`` of compiled modules (:func:`compile_modules`) and CuPy
    kernels (:func:`compile_cupy_kernels`), built on this device; returns its index."""
    import cupy
    from hornet.core import cubins, cuda
    here = cubins.toolchain()
    device = cupy.cuda.Device().id
    index = {"format": cubins.FORMAT, "arch": here["arch"], "nvrtc": here["nvrtc"],
             "cupy": cupy.__version__, "driver": cupy.cuda.runtime.driverGetVersion(),
             "device": _text(cupy.cuda.runtime.getDeviceProperties(device)["name"]),
             "modules": {}}
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    stamp = (2020, 1, 1, 0, 0, 0)           # the same bytes for the same cubins
    with zipfile.ZipFile(tmp, "w") as z:
        for (path, names), (cubin, mapping, _) in built.items():
            code, options = cuda.module_source(path)
            key = cubins.key(path, code, options, names)
            digest = hashlib.sha256(cubin).hexdigest()[:16]
            name = f"{key}-{digest}.cubin"
            index["modules"][key] = {
                "path": os.path.relpath(path, cubins.ROOT).replace(os.sep, "/"),
                "names": {n: mapping[n] for n in names}, "file": name, "sha256": digest,
                "bytes": len(cubin)}
            z.writestr(zipfile.ZipInfo(name, date_time=stamp), cubin,
                       compress_type=zipfile.ZIP_LZMA)
        if cupy_built:
            index["cupy_kernels"] = {}
            for digest, (cubin, _) in sorted(cupy_built.items()):
                sha = hashlib.sha256(cubin).hexdigest()[:16]
                name = f"cupy/{digest}-{sha}.cubin"
                index["cupy_kernels"][digest] = {"file": name, "sha256": sha,
                                                 "bytes": len(cubin)}
                z.writestr(zipfile.ZipInfo(name, date_time=stamp), cubin,
                           compress_type=zipfile.ZIP_LZMA)
        z.writestr(zipfile.ZipInfo("index.json", date_time=stamp),
                   json.dumps(index, indent=1, sort_keys=True) + "\n",
                   compress_type=zipfile.ZIP_DEFLATED)
    os.replace(tmp, out)
    return index


def stale(archive: Path) -> list:
    """The replay's modules (package paths) whose current source has no entry in the
    archive (needs no GPU)."""
    from hornet.core import cubins, cuda
    with zipfile.ZipFile(archive) as z:
        keys = json.loads(z.read("index.json"))["modules"]
    missing = []
    for path, names in replay_modules():
        code, options = cuda.module_source(path)
        if cubins.key(path, code, options, names) not in keys:
            missing.append(os.path.relpath(path, cubins.ROOT)
                           + (f" ({len(names)} instances)" if names else ""))
    return missing


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m bench.tools.build_cubins",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=ARCHIVE)
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--check", action="store_true",
                    help="only say whether the archive holds every listed module's current "
                         "source (no GPU needed)")
    a = ap.parse_args(argv)
    if a.check:
        missing = stale(a.out)
        print(f"{a.out}: " + ("current" if not missing else "out of date: "
                               + ", ".join(missing)))
        return 1 if missing else 0
    modules = replay_modules()
    t = time.perf_counter()
    built = compile_modules(modules, a.workers)
    wall = time.perf_counter() - t
    import cupy
    listed = json.loads(CUPY_LIST.read_text())
    cupy_built = {}
    if listed["cupy"] == cupy.__version__:      # the records hold for this version only
        cupy_built = compile_cupy_kernels(listed["kernels"], a.workers)
    else:
        print(f"{CUPY_LIST} is for CuPy {listed['cupy']}: no CuPy kernels in the archive")
    index = write_archive(a.out, built, cupy_built)
    size = sum(len(c[0]) for c in built.values())
    print(f"{a.out}: {len(built)} modules, cubins {size / 1e6:.2f} MB, "
          f"{len(cupy_built)} CuPy kernels, "
          f"{sum(len(c[0]) for c in cupy_built.values()) / 1e6:.2f} MB; archive "
          f"{a.out.stat().st_size / 1e6:.2f} MB; {index['device']} sm_{index['arch']}, "
          f"NVRTC {'.'.join(map(str, index['nvrtc']))}, CuPy {index['cupy']}, driver "
          f"{index['driver']}; modules built in {wall:.1f} s wall, "
          f"{sum(c[2] for c in built.values()):.1f} s summed over {a.workers} threads; "
          f"CuPy kernels {sum(c[1] for c in cupy_built.values()):.1f} s summed")
    for (path, names), (cubin, _, seconds) in sorted(built.items(), key=lambda kv: -kv[1][2]):
        print(f"  {seconds:6.2f} s {len(cubin) / 1e3:8.1f} kB  "
              f"{os.path.relpath(path, ROOT)} ({len(names)} instances)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
