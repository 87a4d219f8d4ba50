"""Graphs shared by the algorithm tests: Hypothesis pair lists with planted cliques, and the
scipy matrix and real-graph readers used as oracles' inputs."""
from __future__ import annotations

from itertools import combinations

import numpy as np
import scipy.sparse as sp
from hypothesis import strategies as st

import hornet
from conftest import DATA_DIR


@st.composite
def graphs(draw, max_n=24, directed=None, pairs_per_vertex=3, clique_size=9, cliques=4):
    """(n, pairs, directed): random pairs (self-loops and repeats included) plus planted,
    overlapping cliques, so triangles and deep trusses occur."""
    n = draw(st.integers(1, max_n))
    node = st.integers(0, n - 1)
    pairs = draw(st.lists(st.tuples(node, node), max_size=pairs_per_vertex * n))
    if n >= 3:
        for clique in draw(st.lists(st.sets(node, min_size=3, max_size=min(n, clique_size)),
                                    max_size=cliques)):
            pairs += list(combinations(sorted(clique), 2))
    d = draw(st.booleans()) if directed is None else directed
    return n, pairs, d


def scipy_matrix(n, pairs, directed):
    """CSR of the pairs (both directions when undirected; repeats summed)."""
    pairs = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    s, t = pairs[:, 0], pairs[:, 1]
    if not directed:
        s, t = np.concatenate([s, t]), np.concatenate([t, s])
    return sp.coo_array((np.ones(s.shape[0]), (s, t)), shape=(n, n)).tocsr()


def read_pairs(name):
    """(src, dst) int64 of a graph in shared/data, ids as in the file."""
    src, dst, _ = hornet.io.read_edges(DATA_DIR / name)
    return src, dst
