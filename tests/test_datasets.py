"""Every real graph in shared/data: loads, builds, round-trips to CSR exactly, passes check()."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import hornet
from conftest import dataset_files, needs_data

FILES = dataset_files()


def _oracle(src, dst, n, directed):
    if not directed:
        keep = src != dst
        src, dst = np.r_[src[keep], dst[keep]], np.r_[dst[keep], src[keep]]
    A = sp.csr_matrix((np.ones(src.size, dtype=np.int8), (src, dst)), shape=(n, n))
    A.sum_duplicates()
    A.sort_indices()
    return A


@needs_data
@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
@pytest.mark.parametrize("directed", [True, False], ids=["directed", "undirected"])
def test_dataset_round_trips_to_csr(path, directed):
    ef = hornet.io.read_graph_file(path)
    n = ef.num_vertices
    g = hornet.Graph.from_edges(ef.src, ef.dst, num_vertices=n, directed=directed, device="cpu")
    g.check()
    A = _oracle(ef.src, ef.dst, n, directed)
    indptr, indices = g.to_csr()
    assert g.num_vertices == n
    assert np.array_equal(indptr, A.indptr)
    assert np.array_equal(indices, A.indices)
    assert g.num_edges == (A.nnz if directed else A.nnz // 2)
    stats = g.memory_stats()
    assert stats["stored_entries"] == A.nnz
    assert stats["edge_bytes"] <= stats["reserved_bytes"]


@needs_data
def test_every_dataset_is_covered():
    names = {p.name for p in FILES}
    assert len(names) == 20, sorted(names)   # 15 files + delaunay_n10..n14
