"""The benchmark runner.

    python3 -m bench                  list the benchmarks (and the tools) with a line each
    python3 -m bench NAME [OPTIONS]   run one; it rewrites bench/results/NAME.md
    python3 -m bench NAME --help      its options

A benchmark is any module ``bench/NAME.py`` (names starting with "_" and ``common`` excepted)
with a module docstring, whose first line describes it, and a function
``main(argv: list[str] | None = None)``. A module that sets ``NEEDS_GPU = True`` is skipped
with a message (exit status 0) where no GPU is present. Modules are found by listing the
folder, so a new file is a new benchmark; the listing reads the files without importing them.
"""
from __future__ import annotations

import ast
import importlib
import inspect
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
NOT_BENCHMARKS = {"__init__", "__main__", "common"}


@dataclass(frozen=True)
class Entry:
    """One benchmark or tool, as its file describes it."""
    name: str
    module: str
    description: str
    needs_gpu: bool


def _describe(path: Path, module: str) -> Entry | None:
    """The entry of a module file, or None when it is not a benchmark (no docstring or no
    ``main``)."""
    try:
        tree = ast.parse(path.read_text(), filename=str(path))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return None
    doc = ast.get_docstring(tree)
    has_main = any(isinstance(node, ast.FunctionDef) and node.name == "main"
                   for node in tree.body)
    if not doc or not has_main:
        return None
    needs_gpu = False
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name) and node.targets[0].id == "NEEDS_GPU"
                and isinstance(node.value, ast.Constant)):
            needs_gpu = bool(node.value.value)
    return Entry(path.stem, module, doc.strip().splitlines()[0], needs_gpu)


def discover(folder: Path = HERE, package: str = "bench") -> dict[str, Entry]:
    """Every benchmark module of ``folder`` by name, sorted."""
    found = {}
    for path in sorted(folder.glob("*.py")):
        if path.stem in NOT_BENCHMARKS or path.stem.startswith("_"):
            continue
        entry = _describe(path, f"{package}.{path.stem}")
        if entry is not None:
            found[entry.name] = entry
    return found


def tools() -> dict[str, Entry]:
    """The modules of bench/tools."""
    return discover(HERE / "tools", "bench.tools")


def listing() -> str:
    """The text ``python3 -m bench`` prints."""
    lines = ["Benchmarks (python3 -m bench NAME [--help]; each rewrites bench/results/NAME.md):"]
    entries = discover()
    width = max(len(n) for n in entries) + 2
    for e in entries.values():
        lines.append(f"  {e.name:<{width}}{'[GPU] ' if e.needs_gpu else ''}{e.description}")
    extra = tools()
    if extra:
        lines += ["", "Tools (python3 -m bench.tools.NAME [--help]; they write no table):"]
        width = max(len(n) for n in extra) + 2
        for e in extra.values():
            lines.append(f"  {e.name:<{width}}{'[GPU] ' if e.needs_gpu else ''}{e.description}")
    return "\n".join(lines)


def run(name: str, argv: list[str]) -> int:
    """Run benchmark ``name`` with ``argv``; its exit status."""
    from bench import common

    entries = discover()
    if name not in entries:
        print(f"unknown benchmark {name!r}\n\n{listing()}", file=sys.stderr)
        return 2
    entry = entries[name]
    if entry.needs_gpu and not any(a in ("-h", "--help") for a in argv):
        common.require_gpu(name)
    common.set_command(shlex.join(["python3", "-m", "bench", name, *argv]))
    # a module written as a script (``from common import ...``) finds the same helpers
    sys.modules.setdefault("common", common)
    module = importlib.import_module(entry.module)
    try:
        if inspect.signature(module.main).parameters:
            result = module.main(argv)
        else:                                  # main() that parses sys.argv itself
            sys.argv = [str(HERE / f"{name}.py"), *argv]
            result = module.main()
    except SystemExit as stop:
        code = stop.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    return result if isinstance(result, int) else 0


def main(argv: list[str] | None = None) -> int:
    """``python3 -m bench [NAME [OPTIONS]]``."""
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-l", "--list"):
        print(listing())
        return 0
    if argv[0] in ("-h", "--help"):
        print(__doc__.strip() + "\n\n" + listing())
        return 0
    return run(argv[0], argv[1:])


if __name__ == "__main__":
    sys.exit(main())
