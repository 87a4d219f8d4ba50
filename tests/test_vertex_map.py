"""VertexMap: dense ids for 64-bit and string vertex ids, checked against a dict model."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from hornet.vertex_map import VertexMap

INT_IDS = st.integers(-2**63, 2**63 - 1) | st.integers(0, 20)
STR_IDS = st.text(st.characters(blacklist_characters="\x00"), max_size=6)  # NumPy drops trailing NULs


def _model_run(batches):
    """Dense ids a plain dict assigns (first appearance order), batch by batch."""
    seen, out = {}, []
    for b in batches:
        for x in b:
            seen.setdefault(x, len(seen))
        out.append([seen[x] for x in b])
    return out, list(seen)


@pytest.mark.parametrize("ids", [INT_IDS, STR_IDS], ids=["int64", "str"])
@given(data=st.data())
@settings(max_examples=60)
def test_matches_a_dict_model(ids, data):
    batches = data.draw(st.lists(st.lists(ids, max_size=40), max_size=12))
    m = VertexMap()
    want, originals = _model_run(batches)
    for b, expected in zip(batches, want):
        arr = np.array(b, dtype=np.int64) if ids is INT_IDS else np.array(b, dtype=str)
        if ids is STR_IDS and not b:
            arr = np.array([], dtype=str)
        got = m.to_dense(arr)
        assert got.tolist() == expected
        assert m.to_original(got).tolist() == list(b)
    assert len(m) == len(originals)
    assert m.originals().tolist() == originals
    if originals:
        again = VertexMap.from_originals(m.originals())
        assert again.to_dense(m.originals()).tolist() == list(range(len(originals)))


def test_large_batches_merge_runs():
    rng = np.random.default_rng(1)
    m = VertexMap()
    seen = {}
    for _ in range(30):
        b = rng.integers(-2**62, 2**62, 500) if rng.random() < 0.5 else \
            rng.integers(0, 3000, 500)
        got = m.to_dense(b)
        for x, d in zip(b.tolist(), got.tolist()):
            assert seen.setdefault(x, d) == d
    assert len(m) == len(seen)


def test_errors():
    m = VertexMap()
    m.to_dense(np.array([5, 6]))
    with pytest.raises(TypeError, match="holds int ids"):
        m.to_dense(["a"])
    with pytest.raises(KeyError, match="not in the map"):
        m.to_dense(np.array([7]), add=False)
    assert len(m) == 2
    with pytest.raises(KeyError, match=r"\[0, 2\)"):
        m.to_original(np.array([2]))
    with pytest.raises(TypeError, match="integers or strings"):
        VertexMap().to_dense(np.array([1.5]))
    with pytest.raises(TypeError, match="all integers or all strings"):
        VertexMap().to_dense(np.array(["a", 1], dtype=object))
    assert VertexMap().to_dense([]).tolist() == []
