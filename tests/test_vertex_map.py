"""VertexMap: dense ids for 64-bit and string vertex ids, checked against a dict model."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings, strategies as st

from hornet.vertex_map import VertexMap

INT_IDS = st.integers(-2**63, 2**63 - 1) | st.integers(0, 20)
# NumPy drops trailing NULs; UTF-8 has no lone surrogates
STR_IDS = st.text(st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)),
                  max_size=6)


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


UINT_IDS = st.integers(0, 2**64 - 1) | st.integers(2**63 - 2, 2**63 + 2) | st.integers(0, 20)
ANY_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=6) | \
    st.sampled_from(["", "a\x00", "\x00", "é", "a"])
FORMS = ["list", "numpy", "arrow", "large", "chunked", "sliced"]


def _batch(ids: list, kind: str, form: str):
    """``ids`` in one of the input forms a map takes."""
    if kind == "uint":
        a = np.array(ids, dtype=np.uint64)
        return {"list": ids, "numpy": a}.get(form, pa.array(a, type=pa.uint64()))
    if form == "list":
        return list(ids)
    if form == "numpy":                      # object array: NumPy unicode drops trailing NULs
        return np.array(ids, dtype=object) if ids else np.array([], dtype=str)
    if form == "chunked":
        half = len(ids) // 2
        return pa.chunked_array([pa.array(ids[:half], pa.string()),
                                 pa.array(ids[half:], pa.string())])
    if form == "sliced":                     # an Arrow array that starts at an offset
        return pa.array(["pad", "x"] + list(ids) + ["tail"], pa.string())[2:2 + len(ids)]
    return pa.array(ids, pa.large_string() if form == "large" else pa.string())


@pytest.mark.parametrize("kind", ["uint", "str"])
@given(data=st.data())
@settings(max_examples=60)
def test_unsigned_and_string_ids_match_a_dict_model(kind, data):
    """Dense ids, original ids (in their own type: uint64 / str, NULs kept through Arrow),
    lookups and refused batches, against a dict, whatever form each batch comes in."""
    ids = UINT_IDS if kind == "uint" else ANY_TEXT
    batches = data.draw(st.lists(st.lists(ids, max_size=30), max_size=10), label="batches")
    m = VertexMap("uint" if kind == "uint" else None)    # a list of small ints says "int"
    want, originals = _model_run(batches)
    for b, expected in zip(batches, want):
        form = data.draw(st.sampled_from(FORMS), label="form")
        if data.draw(st.booleans(), label="lookup first"):
            known = m.lookup(_batch(b, kind, form)).tolist()
            assert known == [expected[i] if expected[i] < len(m) else -1
                             for i in range(len(b))]
        count = len(m)
        if any(e >= count for e in expected):
            with pytest.raises(KeyError, match="not in the map"):
                m.to_dense(_batch(b, kind, form), add=False)
            assert len(m) == count                           # unchanged
        got = m.to_dense(_batch(b, kind, form))
        assert got.tolist() == expected
        if b:
            assert m.to_arrow(got).to_pylist() == list(b)
            back = m.to_original(got)
            assert back.dtype == (np.uint64 if kind == "uint" else back.dtype)
            assert back.tolist() == (list(b) if kind == "uint" else
                                     [x.rstrip("\x00") for x in b])
    assert len(m) == len(originals)
    assert m.to_arrow().to_pylist() == originals
    assert (m.kind or kind) == kind
    if originals:
        again = VertexMap.from_originals(m.to_arrow())
        assert again.to_arrow().to_pylist() == originals
        copy = m.copy()
        copy.to_dense(_batch([originals[0]], kind, "list"))
        assert len(copy) == len(m)
        cut = data.draw(st.integers(0, len(originals)), label="truncate to")
        m.truncate(cut)
        assert m.lookup(_batch(originals, kind, "arrow")).tolist() == \
            [i if i < cut else -1 for i in range(len(originals))]
        fresh = [x for x in originals[cut:]][::-1]           # forgotten ids come back anew
        assert m.to_dense(_batch(fresh, kind, "list")).tolist() == \
            list(range(cut, len(originals)))
        assert copy.to_arrow().to_pylist() == originals      # the copy is its own


def test_signedness_of_integer_ids():
    m = VertexMap()
    m.to_dense(np.array([-1, 5]))
    assert m.kind == "int"
    assert m.to_dense(np.array([5, 7], dtype=np.uint64)).tolist() == [1, 2]   # fits int64
    with pytest.raises(ValueError, match="does not fit this map's signed 64-bit ids"):
        m.to_dense(np.array([3, 2**63], dtype=np.uint64))
    assert len(m) == 3 and m.lookup(np.array([3])).tolist() == [-1]
    u = VertexMap()
    assert u.to_dense([2**64 - 1, 0, 2**63]).tolist() == [0, 1, 2]             # Python ints
    assert u.kind == "uint" and u.originals().dtype == np.uint64
    assert u.to_dense(np.array([0, 9], dtype=np.int64)).tolist() == [1, 3]
    with pytest.raises(ValueError, match="negative; this map holds unsigned"):
        u.to_dense(np.array([-1, 4]))
    assert len(u) == 4
    assert u.to_original(np.array([0, -1]), missing=7).tolist() == [2**64 - 1, 7]
    with pytest.raises(TypeError, match=">= 0 for unsigned ids"):
        u.to_original(np.array([-1]), missing=-1)
    assert u.to_arrow(np.array([-1, 2])).to_pylist() == [None, 2**63]
    assert VertexMap("uint").to_dense(pa.array([1, 2], pa.uint8())).tolist() == [0, 1]
    with pytest.raises(ValueError, match="kind must be"):
        VertexMap("float")
    with pytest.raises(ValueError, match="must not be null"):
        VertexMap().to_dense(pa.array(["a", None]))
    with pytest.raises(TypeError, match="integers or strings"):
        VertexMap().to_dense(pa.array([1.5]))
    s = VertexMap()
    with pytest.raises(ValueError, match="valid Unicode"):
        s.to_dense(["a", "\ud800"])
    assert len(s) == 0
    s.to_dense([])                                           # an empty batch fixes no kind
    assert s.kind is None and s.to_dense(["a"]).tolist() == [0] and s.kind == "str"


def test_string_table_grows_and_keeps_ids():
    """Many batches of strings of mixed lengths: the hash table grows (rebuilt from the
    stored hashes) and keeps every id; truncation leaves deleted slots that probes skip."""
    rng = np.random.default_rng(7)
    m, seen = VertexMap(), {}
    for step in range(40):
        words = [("w" * int(rng.integers(0, 40))) + str(int(x))
                 for x in rng.integers(0, 5000, 300)]
        if step % 7 == 3:
            before = len(m)
            m.to_dense(pa.array([f"gone {step} {i}" for i in range(50)]))
            m.truncate(before)
        got = m.to_dense(words)
        for w, d in zip(words, got.tolist()):
            assert seen.setdefault(w, len(seen)) == d
    assert len(m) == len(seen)
    assert m.lookup(list(seen)).tolist() == list(range(len(seen)))
    assert m.lookup([f"gone 3 {i}" for i in range(50)]).tolist() == [-1] * 50
