"""Where a graph's reserved bytes are under churn, class by class, for one or two source trees.

    python3 -m bench.tools.churn_breakdown [--base ../base] [--device gpu] [--rounds 100]
        [--graphs out delaunay_n10 ...] [--classes]

Runs the churn of ``bench memory_churn_cpu`` (rounds of ``num_edges // 10`` random pairs
inserted, then deleted, seed 0) on every graph named, with the working tree's ``hornet`` and,
given ``--base``, with that checkout's (imported as ``hornet_base``, same process, the base
first). After the build, the first round, the round with the most bytes reserved and the last,
it splits ``Graph.memory_stats()['reserved_bytes']`` into, as shares of the CSR's bytes:

- ``edges``: the stored edges themselves; ``slack``: the rest of the blocks holding lists
  (a block of ``2**k`` slots holds a list of ``2**(k-1) < d <= 2**k``);
- ``cached``: blocks the block cache's rings hold in reserve;
- ``free``: free blocks in arrays that hold some block; ``spare``: empty arrays;
- ``trees``: the arrays' bit trees; ``vertex``: the vertex table.

``--classes`` also prints every class's arrays, blocks, lists, cached and free blocks at
the largest round.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from bench.common import DATA
from bench.memory_cpu import csr_of

PARTS = ("edges", "slack", "cached", "free", "spare", "trees", "vertex")


def breakdown(g) -> dict:
    """Bytes reserved by ``g`` per part (see the module's docstring), and per class the
    tuple (arrays, blocks, lists, cached, free blocks in arrays holding any, empty arrays,
    bytes)."""
    mm = g._mm
    mm.settle()
    slot = mm.bytes_per_slot
    stats = g.memory_stats()
    parts = dict.fromkeys(PARTS, 0)
    classes = {}
    list_slots = 0
    for k, pool in sorted(mm.pools.items()):
        cached = mm.cache.size(k) if mm.cache is not None else 0
        used = sum(a.used for a in pool)
        empty = [a for a in pool if a.free == a.num_blocks]
        free = sum(a.free for a in pool if a.free != a.num_blocks)
        trees = sum(int(a.words.nbytes) for a in pool)
        list_slots += (used - cached) << k
        parts["cached"] += (cached << k) * slot
        parts["free"] += (free << k) * slot
        parts["spare"] += sum((a.num_blocks << k) * slot for a in empty)
        parts["trees"] += trees
        classes[k] = (len(pool), sum(a.num_blocks for a in pool), used - cached, cached, free,
                      len(empty), sum(a.nbytes for a in pool))
    parts["edges"] = stats["edge_bytes"]
    parts["slack"] = list_slots * slot - stats["edge_bytes"]
    parts["vertex"] = stats["vertex_table_bytes"]
    total = sum(parts.values())
    if total != stats["reserved_bytes"]:
        raise AssertionError(f"parts add up to {total}, reserved {stats['reserved_bytes']}")
    return {"reserved": total, "csr": stats["csr_bytes"], "parts": parts, "classes": classes}


def churn(package, path: Path, device: str, rounds: int) -> dict:
    """The breakdowns after the build, the first round, the largest round and the last."""
    directed, A = csr_of(path, package.io.read_graph_file(path))
    g = package.Graph.from_csr(A.indptr, A.indices, directed=directed, device=device)
    out = {"built": breakdown(g)}
    rng = np.random.default_rng(0)
    n, k = g.num_vertices, max(1, g.num_edges // 10)
    largest, series = -1, []
    for r in range(rounds):
        c = g.insert_edges(rng.integers(0, n, k), rng.integers(0, n, k))
        g.delete_edges(c.src, c.dst)
        reserved = g.memory_stats()["reserved_bytes"]
        series.append(reserved)
        if r == 0 or reserved > largest or r == rounds - 1:
            b = breakdown(g)
            if r == 0:
                out["first"] = b
            if reserved > largest:
                largest, out["largest"] = reserved, dict(b, round=r + 1)
            if r == rounds - 1:
                out["last"] = b
    g.check()
    r = np.array(series, dtype=np.float64)
    out["deviation"] = float(np.abs(r / r[0] - 1).max())
    return out


def show(name: str, tree: str, result: dict, classes: bool) -> None:
    csr = result["built"]["csr"]
    big = result["largest"]
    ok = big["reserved"] <= 1.5 * csr and result["deviation"] <= 0.10
    print(f"{name} [{tree}] CSR {csr} B; largest at round {big['round']}; deviation "
          f"{100 * result['deviation']:.1f}%; criterion {'met' if ok else 'NOT met'}")
    print("  " + f"{'':8}" + f"{'x CSR':>7}" + "".join(f"{p:>8}" for p in PARTS))
    for when in ("built", "first", "largest", "last"):
        b = result[when]
        print("  " + f"{when:8}{b['reserved'] / csr:7.3f}" +
              "".join(f"{b['parts'][p] / csr:8.3f}" for p in PARTS))
    if classes:
        print("    class arrays blocks lists cached free empty bytes  (at the largest)")
        for k, row in big["classes"].items():
            print(f"    {k:5d} " + " ".join(f"{v:6d}" for v in row))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench.tools.churn_breakdown",
                                 description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", type=Path, help="checkout of the base tree (same process)")
    ap.add_argument("--device", choices=("cpu", "gpu"), default="cpu")
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--graphs", nargs="*", default=[])
    ap.add_argument("--classes", action="store_true", help="per-class table too")
    ap.add_argument("--base-only", action="store_true", help="only the --base tree")
    ap.add_argument("--small-entries", type=int, default=0, metavar="N",
                    help="CPU: batches of up to N entries take the small-batch path (4096: "
                         "as on the GPU)")
    ap.add_argument("--gpu-spares", action="store_true",
                    help="CPU: the GPU's SPARE_MIN_BYTES (with --small-entries 4096: the GPU's "
                         "policy on the CPU)")
    args = ap.parse_args(argv)
    paths = sorted(DATA.glob("*.gz"))
    if args.graphs:
        paths = [p for p in paths if p.name.split(".")[0] in args.graphs]
    import hornet
    import hornet.batch.small_path  # noqa: F401  (patched by --small-entries)
    trees = [("new", hornet)]
    if args.base is not None:
        from bench.tools.ab_trees import load_base
        trees.insert(0, ("base", load_base(args.base)))
        if args.base_only:
            trees = trees[:1]
    for _, package in trees:
        # as bench.common sets them for the working tree: the CPU small-batch path is taken
        # from the first batch on
        package.core.jit.parallel_policy = package.core.jit.optional_path_policy = "always"
        if args.small_entries:
            package.batch.small_path.CPU_SMALL_ENTRIES = args.small_entries
        if args.gpu_spares:
            spare = package.memory.manager.SPARE_MIN_BYTES
            spare["cpu"] = spare["gpu"]
    for path in paths:
        for name, package in trees:
            show(path.name.split(".")[0], name, churn(package, path, args.device, args.rounds),
                 args.classes)


if __name__ == "__main__":
    main()
