"""Loaders for the edge-list formats in ``shared/data`` (and a small SNAP-style writer).

Public contract::

    src, dst, extra = hornet.io.read_edges(path)

Supported formats (detected from the content, or forced with ``format=``):

``"snap"``
    SNAP edge lists: ``#`` comment lines, then ``src dst`` per line, separated by tabs and/or
    spaces, LF or CRLF line endings, with or without a final newline. A third column is the event
    time of SNAP temporal streams (``extra["time"]``); further columns are ``col3``, ``col4``...
``"csv"``
    Comma-separated edges, e.g. the SNAP signed networks ``src,dst,rating,time``
    (``extra["rating"]`` int64, ``extra["time"]`` float64). With three columns the third is
    ``weight``. A first line made only of names (``src,dst,w``) is taken as a header.
``"konect"``
    KONECT ``out.*`` files: ``%`` comment lines (the first says ``sym``/``asym``/``bip`` and the
    weight kind, the second gives the edge count then the vertex counts), then
    ``src dst [weight [time]]``. Ids are kept one-based, as in the file.
``"mtx"``
    Matrix Market ``coordinate`` matrices (``pattern``, ``integer`` or ``real``; ``general``,
    ``symmetric`` or ``skew-symmetric``). One-based indices become zero-based, as
    ``scipy.io.mmread`` reads them. Symmetric matrices are returned as stored (one triangle),
    NOT mirrored: :attr:`EdgeFile.symmetric` says that each entry stands for its mirror too.
    Values of ``integer``/``real`` matrices are in ``extra["weight"]``.

Stream files of the project's format (Arrow IPC file ``.arrow``, IPC stream ``.arrows``,
Parquet ``.parquet``; recognised by their magic bytes) are read by :func:`read_edges` too
(:mod:`hornet.arrow_edges`): their ``src``/``dst`` columns and every other column as ``extra``.

Compression: gzip is recognised by its magic bytes (whatever the file name); other files are
read as plain text.

Speed: the text is never split into Python line objects. A few vectorised NumPy passes over the
bytes normalise the separators and drop comment and blank lines, and ``pyarrow.csv`` converts the
numbers (multi-threaded). Large files are processed in blocks of ``block_bytes`` so that
temporaries stay bounded.

Errors: malformed content raises :class:`EdgeFileError` (a ``ValueError``) whose message names
the file and, where possible, the one-based line number in the (decompressed) file. A missing
file raises ``FileNotFoundError``.
"""
from __future__ import annotations

import gzip
import io
import os
import re
import zlib
from dataclasses import dataclass, field
from typing import IO, Any, Iterator, Sequence, Union

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from .arrow_edges import container_of, read_edge_table

__all__ = [
    "EdgeFileError",
    "EdgeFile",
    "EdgeBlock",
    "FORMATS",
    "detect_format",
    "read_graph_file",
    "read_edges",
    "iter_edge_blocks",
    "write_edges_text",
]

PathLike = Union[str, "os.PathLike[str]"]

#: Canonical format names accepted by ``format=`` (aliases: ``mm``/``matrixmarket`` -> ``mtx``,
#: ``edgelist``/``tsv``/``txt`` -> ``snap``).
FORMATS = ("snap", "csv", "konect", "mtx")
_ALIASES = {
    "snap": "snap", "edgelist": "snap", "tsv": "snap", "txt": "snap", "text": "snap",
    "csv": "csv",
    "konect": "konect",
    "mtx": "mtx", "mm": "mtx", "matrixmarket": "mtx", "matrix-market": "mtx",
}

_GZIP_MAGIC = b"\x1f\x8b"
_DEFAULT_BLOCK = 64 << 20  # bytes of decompressed text per parsing block

_NL = 10
_SPACE = 32
_COMMA = 44
_HASH = 35
_PERCENT = 37

# \t \r \v \f -> ' ' (everything that is whitespace but not a line break)
_WS_TRANSLATE = bytes.maketrans(b"\t\r\x0b\x0c", b"    ")


def _allowed_table(sep: int) -> np.ndarray:
    t = np.zeros(256, dtype=bool)
    for ch in b"0123456789-+.eE":
        t[ch] = True
    t[sep] = True
    t[_NL] = True
    return t


_ALLOWED = {_SPACE: _allowed_table(_SPACE), _COMMA: _allowed_table(_COMMA)}


class EdgeFileError(ValueError):
    """Malformed edge-list content (bad token, wrong column count, negative id, corrupt gzip,
    empty file, inconsistent Matrix Market header...). The message names the file and, where
    possible, the one-based line number."""


@dataclass
class EdgeFile:
    """The content of one edge-list file.

    Attributes:
        src, dst: int64 arrays of shape ``(m,)``, one entry per edge line, in file order; ids as in
            the file (zero-based for Matrix Market).
        extra: further columns, name -> array of shape ``(m,)``: ``time`` (int64, or float64 when
            the file has fractional times; always float64 for CSV), ``weight`` (int64 or float64),
            ``rating`` (int64)...
        num_vertices: size of the id space: from the header where it gives one (Matrix Market:
            ``max(rows, cols)``; KONECT: vertex count + 1, since ids are one-based), never less
            than ``max id + 1``; ``max id + 1`` otherwise (0 for no edges).
        format: ``"snap"``, ``"csv"``, ``"konect"`` or ``"mtx"``.
        directed: ``True``/``False`` where the file says so (Matrix Market general/symmetric,
            KONECT asym/sym, a SNAP "Directed graph"/"Undirected graph" header), else ``None``.
            Note: SNAP's "undirected" collaboration graphs call themselves directed and list
            both directions, which is a correct directed reading of them.
        symmetric: ``True`` when each stored entry (u, v) also stands for (v, u) and the file stores
            only one of them (Matrix Market symmetric, KONECT sym, SNAP "Undirected graph").
            Callers that want both directions must mirror the entries themselves.
        meta: header details (``header_edges``, ``header_nodes``, ``rows``, ``cols``, ``nnz``,
            ``field``, ``symmetry``, ``one_based``, ``comments``...).
        path: the file read.
    """

    src: np.ndarray
    dst: np.ndarray
    extra: dict[str, np.ndarray]
    num_vertices: int
    format: str
    directed: bool | None = None
    symmetric: bool = False
    meta: dict[str, Any] = field(default_factory=dict)
    path: str = ""

    @property
    def num_edges(self) -> int:
        """Number of edge lines (entries) read, duplicates and self-loops included."""
        return int(self.src.shape[0])

    def __len__(self) -> int:
        return self.num_edges

    def as_tuple(self) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        """``(src, dst, extra)``, as :func:`read_edges` returns it."""
        return self.src, self.dst, self.extra


@dataclass
class EdgeBlock:
    """One block of consecutive edges from :func:`iter_edge_blocks`.

    ``src``/``dst``: int64 ``(k,)``; ``extra``: name -> ``(k,)`` array; ``first_line``: the
    one-based file line of the block's first edge (0 for an empty block)."""

    src: np.ndarray
    dst: np.ndarray
    extra: dict[str, np.ndarray]
    first_line: int


# --------------------------------------------------------------------------------------------
# byte sources


class _Source:
    """Reads decompressed text from a plain or gzip file in blocks that end on a line break."""

    def __init__(self, path: PathLike, block_bytes: int):
        self.name = os.fspath(path)
        self.block_bytes = max(int(block_bytes), 1 << 12)
        self._raw: IO[bytes] = open(self.name, "rb")  # FileNotFoundError propagates
        try:
            head = self._raw.read(2)
            self._raw.seek(0)
            if head == b"":
                raise EdgeFileError(f"{self.name}: empty file")
            self.compressed = head == _GZIP_MAGIC
            self._f: IO[bytes] = (gzip.GzipFile(fileobj=self._raw, mode="rb")
                                  if self.compressed else self._raw)
        except BaseException:
            self._raw.close()
            raise
        self._carry = b""
        self.eof = False
        self.lines_before = 0  # line breaks in the blocks already handed out

    def close(self) -> None:
        try:
            if self._f is not self._raw:
                self._f.close()
        finally:
            self._raw.close()

    def _read(self, n: int) -> bytes:
        try:
            return self._f.read(n)
        except (EOFError, zlib.error, gzip.BadGzipFile) as e:
            raise EdgeFileError(f"{self.name}: corrupt or truncated gzip data ({e})") from None
        except OSError as e:  # other decompression failures surface as OSError
            if self.compressed:
                raise EdgeFileError(f"{self.name}: corrupt gzip data ({e})") from None
            raise

    def next_block(self) -> bytes | None:
        """The next chunk of whole lines (always ending with b'\\n'), or None at the end."""
        if self.eof:
            return None
        chunk = self._read(self.block_bytes)
        buf = self._carry + chunk if self._carry else chunk
        if not chunk:  # end of data
            self.eof = True
            self._carry = b""
            if not buf:
                return None
            if not buf.endswith(b"\n"):
                buf += b"\n"
            return buf
        cut = buf.rfind(b"\n")
        while cut < 0:  # a line longer than a block: keep reading
            more = self._read(self.block_bytes)
            if not more:
                self.eof = True
                self._carry = b""
                return buf + b"\n"
            buf += more
            cut = buf.rfind(b"\n")
        self._carry = buf[cut + 1:]
        return buf[:cut + 1]


# --------------------------------------------------------------------------------------------
# header inspection (only the leading comment lines are looked at, line by line)


def _iter_head_lines(buf: bytes, start: int = 0, limit: int = 1 << 16) -> Iterator[tuple[int, int, bytes]]:
    """Yield (line_index, end_offset, stripped_line) for the first ``limit`` lines from start."""
    pos = start
    n = len(buf)
    k = 0
    while pos < n and k < limit:
        e = buf.find(b"\n", pos)
        if e < 0:
            e = n
        yield k, e + 1, buf[pos:e].strip()
        pos = e + 1
        k += 1


def _first_content_line(buf: bytes) -> bytes:
    for _, _, line in _iter_head_lines(buf):
        if line:
            return line
    return b""


def detect_format(first_block: bytes) -> str:
    """Guess the format from the first non-empty line of (decompressed) text.

    ``%%MatrixMarket`` -> ``"mtx"``; another ``%`` line -> ``"konect"``; else, if the first
    line that is neither empty nor a ``#`` comment contains a comma -> ``"csv"``; else ``"snap"``.
    """
    first = _first_content_line(first_block)
    if first[:14].lower() == b"%%matrixmarket":
        return "mtx"
    if first.startswith(b"%"):
        return "konect"
    for _, _, line in _iter_head_lines(first_block):
        if not line or line.startswith(b"#"):
            continue
        return "csv" if b"," in line else "snap"
    return "snap"


_SNAP_NODES = re.compile(rb"nodes\s*:\s*(\d+)", re.I)
_SNAP_EDGES = re.compile(rb"edges\s*:\s*(\d+)", re.I)
_NAME_RE = re.compile(rb"^[A-Za-z_][A-Za-z0-9_]*$")


def _leading_comments(buf: bytes, chars: bytes) -> tuple[list[bytes], int, int]:
    """Leading comment/blank lines: (comment texts, byte offset after them, lines skipped)."""
    comments: list[bytes] = []
    off = 0
    nlines = 0
    for k, end, line in _iter_head_lines(buf):
        if line and line[:1] not in [bytes([c]) for c in chars]:
            break
        if line:
            comments.append(line)
        off = end
        nlines = k + 1
    return comments, off, nlines


# --------------------------------------------------------------------------------------------
# the vectorised tokenizer


@dataclass
class _Cleaned:
    data: np.ndarray          # uint8: kept lines, single separators, each line ends with \n
    kept: np.ndarray | None   # bool per physical line (None: every line kept)
    nlines: int               # physical lines in the block
    line_offset: int          # line number of the block's first line, minus one


def _clean(text: bytes, sep: int, line_offset: int, comment_chars: bytes = b"#%") -> _Cleaned:
    """Normalise separators and drop comment / blank lines, all in vectorised passes.

    ``text`` must end with b'\\n'. Line breaks are never removed by the normalisation, so line k
    of the normalised buffer is physical line k of the block.
    """
    b = np.frombuffer(text.translate(_WS_TRANSLATE), dtype=np.uint8)
    sp = b == _SPACE
    if sp.any():
        # 1) collapse runs of blanks to one
        run = np.empty_like(sp)
        run[0] = False
        np.logical_and(sp[1:], sp[:-1], out=run[1:])
        if run.any():
            b = b[~run]
            sp = b == _SPACE
        # 2) drop blanks at line starts/ends (and around commas for CSV)
        bound = b == _NL
        if sep == _COMMA:
            bound |= b == _COMMA
        prev_b = np.empty_like(bound)
        prev_b[0] = True
        prev_b[1:] = bound[:-1]
        next_b = np.empty_like(bound)
        next_b[-1] = True
        next_b[:-1] = bound[1:]
        drop = sp & (prev_b | next_b)
        if drop.any():
            b = b[~drop]
    nl = np.flatnonzero(b == _NL)
    nlines = int(nl.shape[0])
    starts = np.empty(nlines, dtype=np.int64)
    if nlines:
        starts[0] = 0
        starts[1:] = nl[:-1] + 1
    lengths = nl - starts
    first = b[starts]  # the line break itself for an empty line
    drop_line = lengths == 0
    for ch in comment_chars:
        drop_line |= first == ch
    if drop_line.any():
        kept = ~drop_line
        b = b[np.repeat(kept, lengths + 1)]
        return _Cleaned(b, kept, nlines, line_offset)
    return _Cleaned(b, None, nlines, line_offset)


def _data_line_numbers(c: _Cleaned) -> np.ndarray:
    """One-based file line number of every data line of a cleaned block."""
    if c.kept is None:
        return np.arange(1, c.nlines + 1, dtype=np.int64) + c.line_offset
    return np.flatnonzero(c.kept).astype(np.int64) + 1 + c.line_offset


def _line_of_pos(c: _Cleaned, pos: int) -> int:
    """File line number of byte ``pos`` of ``c.data``."""
    row = int(np.count_nonzero(c.data[:pos] == _NL))
    return int(_data_line_numbers(c)[row])


def _token_at(data: np.ndarray, pos: int, sep: int) -> str:
    lo = pos
    while lo > 0 and data[lo - 1] not in (sep, _NL) and pos - lo < 60:
        lo -= 1
    hi = pos
    while hi < data.shape[0] and data[hi] not in (sep, _NL) and hi - pos < 60:
        hi += 1
    return bytes(data[lo:hi]).decode("latin-1")


def _line_text(data: np.ndarray, row_start: int) -> str:
    end = row_start
    n = data.shape[0]
    while end < n and data[end] != _NL and end - row_start < 200:
        end += 1
    return bytes(data[row_start:end]).decode("latin-1")


def _column_counts(c: _Cleaned, sep: int) -> np.ndarray:
    """Number of fields on every data line (vectorised)."""
    d = c.data
    nl = np.flatnonzero(d == _NL)
    seps = np.flatnonzero(d == sep)
    row = np.searchsorted(nl, seps)
    return np.bincount(row, minlength=nl.shape[0]) + 1


class _Parser:
    """Parses cleaned blocks into columns with pyarrow.csv, locating any error by line."""

    def __init__(self, name: str, sep: int, names: Sequence[str],
                 types: dict[str, pa.DataType], int_fallback: Sequence[str] = ()):
        self.name = name
        self.sep = sep
        self.names = list(names)
        self.types = dict(types)
        self.int_fallback = set(int_fallback)  # int64 columns allowed to become float64

    @property
    def ncols(self) -> int:
        return len(self.names)

    def _fail(self, c: _Cleaned, msg: str, pos: int | None = None, row: int | None = None) -> None:
        if row is not None:
            line = int(_data_line_numbers(c)[row])
            raise EdgeFileError(f"{self.name}: line {line}: {msg}")
        if pos is not None:
            raise EdgeFileError(f"{self.name}: line {_line_of_pos(c, pos)}: {msg}")
        raise EdgeFileError(f"{self.name}: {msg}")

    def check_chars(self, c: _Cleaned) -> None:
        d = c.data
        if d.shape[0] == 0:
            return
        bad = ~_ALLOWED[self.sep][d]
        if bad.any():
            pos = int(np.argmax(bad))
            ch = chr(d[pos])
            tok = _token_at(d, pos, self.sep)
            if ch == " ":
                self._fail(c, "unexpected blank inside a comma-separated field", pos)
            self._fail(c, f"non-numeric token {tok!r}", pos)

    def check_columns(self, c: _Cleaned) -> None:
        counts = _column_counts(c, self.sep)
        badrows = np.flatnonzero(counts != self.ncols)
        if badrows.shape[0]:
            r = int(badrows[0])
            nl = np.flatnonzero(c.data == _NL)
            start = 0 if r == 0 else int(nl[r - 1]) + 1
            self._fail(c, f"expected {self.ncols} columns, found {int(counts[r])} "
                          f"({_line_text(c.data, start)!r})", row=r)
        if self.sep == _COMMA:  # empty fields: ",," or a comma at a line start/end
            d = c.data
            s = np.flatnonzero(d == _COMMA)
            if s.shape[0]:
                nxt = d[s + 1]
                prev = np.where(s > 0, d[np.maximum(s - 1, 0)], _NL)
                empty = (nxt == _COMMA) | (nxt == _NL) | (prev == _NL)
                if empty.any():
                    self._fail(c, "empty field", int(s[np.argmax(empty)]))

    def _locate_value(self, c: _Cleaned, col: int, value: str) -> int | None:
        """Byte position of the first field ``col`` equal to ``value`` (error path only)."""
        s = re.escape(chr(self.sep)).encode()
        pat = rb"(?m)^(?:[^\n" + s + rb"]*" + s + rb"){" + str(col).encode() + rb"}(" + \
            re.escape(value.encode("latin-1")) + rb")(?=[\n" + s + rb"])"
        m = re.search(pat, c.data.tobytes())
        return None if m is None else m.start(1)

    def parse(self, c: _Cleaned) -> dict[str, np.ndarray]:
        d = c.data
        if d.shape[0] == 0:
            return {n: np.empty(0, dtype=self.types[n].to_pandas_dtype()) for n in self.names}
        self.check_chars(c)
        while True:
            try:
                table = pacsv.read_csv(
                    pa.BufferReader(pa.py_buffer(d)),
                    read_options=pacsv.ReadOptions(column_names=self.names,
                                                   block_size=4 << 20, use_threads=True),
                    parse_options=pacsv.ParseOptions(delimiter=chr(self.sep), quote_char=False,
                                                     double_quote=False, escape_char=False,
                                                     newlines_in_values=False,
                                                     ignore_empty_lines=True),
                    convert_options=pacsv.ConvertOptions(column_types=self.types, null_values=[],
                                                         strings_can_be_null=False,
                                                         quoted_strings_can_be_null=False,
                                                         check_utf8=False),
                )
                break
            except pa.ArrowInvalid as e:
                msg = str(e)
                m = re.search(r"column #(\d+): CSV conversion error to (\w+): invalid value '(.*)'",
                              msg, re.S)
                if m:
                    col, typ, value = int(m.group(1)), m.group(2), m.group(3)
                    cname = self.names[col] if col < self.ncols else f"#{col}"
                    if cname in self.int_fallback and typ == "int64":
                        self.types[cname] = pa.float64()
                        self.int_fallback.discard(cname)
                        continue
                    pos = self._locate_value(c, col, value)
                    what = "id" if cname in ("src", "dst") else f"{cname!r} value"
                    self._fail(c, f"invalid {what} {value!r} in column {col + 1}", pos)
                # column count mismatch or other parse error: find the line ourselves
                self.check_columns(c)
                self._fail(c, f"cannot parse ({msg.splitlines()[0] if msg else 'unknown error'})")
        out = {}
        for n in self.names:
            col = table.column(n)
            if col.null_count:
                self._fail(c, f"missing values in column {n!r}")
            out[n] = col.to_numpy()
        return out


# --------------------------------------------------------------------------------------------
# per-format header handling


@dataclass
class _Plan:
    fmt: str
    sep: int
    parser: _Parser
    data_offset: int          # byte offset of the data in the first block
    data_line_offset: int     # lines before data_offset
    directed: bool | None = None
    symmetric: bool = False
    meta: dict[str, Any] = field(default_factory=dict)
    comment_chars: bytes = b"#%"


def _int_type() -> pa.DataType:
    return pa.int64()


def _first_data_fields(buf: bytes, start: int, sep: int, comment_chars: bytes) -> list[bytes] | None:
    for _, _, line in _iter_head_lines(buf, start):
        if not line or line[:1] in [bytes([ch]) for ch in comment_chars]:
            continue
        if sep == _COMMA:
            return [f.strip() for f in line.split(b",")]
        return line.split()
    return None


def _plan_snap(name: str, buf: bytes) -> _Plan:
    comments, _, _ = _leading_comments(buf, b"#%")
    meta: dict[str, Any] = {"comments": [c.decode("utf-8", "replace") for c in comments[:50]]}
    directed: bool | None = None
    symmetric = False
    for c in comments:
        low = c.lower()
        if meta.get("header_nodes") is None:
            mn = _SNAP_NODES.search(c)
            if mn:
                meta["header_nodes"] = int(mn.group(1))
        if meta.get("header_edges") is None:
            me = _SNAP_EDGES.search(c)
            if me:
                meta["header_edges"] = int(me.group(1))
        if directed is None:
            if b"undirected graph" in low:
                directed, symmetric = False, True
            elif b"directed graph" in low:
                directed = True
    fields = _first_data_fields(buf, 0, _SPACE, b"#%")
    ncols = len(fields) if fields else 2
    if ncols < 2:
        raise EdgeFileError(f"{name}: expected at least 2 columns (src dst), found {ncols}")
    names = ["src", "dst"]
    types = {"src": _int_type(), "dst": _int_type()}
    if ncols >= 3:
        names.append("time")
        types["time"] = pa.int64()
    for k in range(3, ncols):
        names.append(f"col{k}")
        types[f"col{k}"] = pa.int64()
    fallback = names[2:]
    return _Plan("snap", _SPACE, _Parser(name, _SPACE, names, types, fallback), 0, 0,
                 directed, symmetric, meta)


def _plan_csv(name: str, buf: bytes) -> _Plan:
    comments, off, nskip = _leading_comments(buf, b"#%")
    meta: dict[str, Any] = {"comments": [c.decode("utf-8", "replace") for c in comments[:50]]}
    fields = _first_data_fields(buf, off, _COMMA, b"#%")
    header_names: list[str] | None = None
    if fields and all(_NAME_RE.match(f) for f in fields):
        # a header row of column names: skip it
        header_names = [f.decode() for f in fields]
        for k, end, line in _iter_head_lines(buf, off):
            if line:
                off = end
                nskip += k + 1
                break
        fields = _first_data_fields(buf, off, _COMMA, b"#%")
        if fields is not None and len(fields) != len(header_names):
            raise EdgeFileError(f"{name}: header names {len(header_names)} columns, "
                                f"data has {len(fields)}")
        meta["header_names"] = header_names
    ncols = len(header_names) if header_names else (len(fields) if fields else 2)
    if ncols < 2:
        raise EdgeFileError(f"{name}: expected at least 2 comma-separated columns, found {ncols}")
    if ncols == 4:
        extra_names = ["rating", "time"]
    elif ncols == 3:
        extra_names = ["weight"]
    else:
        extra_names = [f"col{k}" for k in range(2, ncols)]
    if header_names:  # keep the file's names for the extra columns
        extra_names = [n if n not in ("src", "dst") else f"col{k + 2}"
                       for k, n in enumerate(header_names[2:])]
        if len(set(extra_names)) != len(extra_names):
            raise EdgeFileError(f"{name}: repeated column names in the header")
    names = ["src", "dst"] + extra_names
    types = {"src": _int_type(), "dst": _int_type()}
    for n in extra_names:
        types[n] = pa.float64() if n == "time" else pa.int64()
    fallback = [n for n in extra_names if types[n] == pa.int64()]
    return _Plan("csv", _COMMA, _Parser(name, _COMMA, names, types, fallback), off, nskip,
                 None, False, meta)


def _plan_konect(name: str, buf: bytes) -> _Plan:
    comments, _, _ = _leading_comments(buf, b"%#")
    meta: dict[str, Any] = {"comments": [c.decode("utf-8", "replace") for c in comments[:50]],
                            "one_based": True}
    directed: bool | None = None
    symmetric = False
    if comments:
        words = comments[0].lstrip(b"%").split()
        if words:
            kind = words[0].decode("latin-1").lower()
            meta["konect_kind"] = kind
            if kind == "sym":
                directed, symmetric = False, True
            elif kind in ("asym", "bip"):
                directed = True
            if len(words) > 1:
                meta["konect_weights"] = words[1].decode("latin-1").lower()
    if len(comments) > 1:
        nums = comments[1].lstrip(b"%").split()
        try:
            vals = [int(x) for x in nums]
        except ValueError:
            vals = []
        if vals:
            meta["header_edges"] = vals[0]
        if len(vals) >= 3:
            meta["rows"], meta["cols"] = vals[1], vals[2]
        elif len(vals) == 2:
            meta["rows"] = meta["cols"] = vals[1]
    fields = _first_data_fields(buf, 0, _SPACE, b"%#")
    ncols = len(fields) if fields else 2
    if ncols < 2:
        raise EdgeFileError(f"{name}: expected at least 2 columns (src dst), found {ncols}")
    names = ["src", "dst"] + ["weight", "time"][: max(0, ncols - 2)]
    names += [f"col{k}" for k in range(4, ncols)]
    types = {n: pa.int64() for n in names}
    return _Plan("konect", _SPACE, _Parser(name, _SPACE, names, types, names[2:]), 0, 0,
                 directed, symmetric, meta, comment_chars=b"%#")


def _plan_mtx(name: str, buf: bytes) -> _Plan:
    lines = _iter_head_lines(buf)
    header = None
    for k, end, line in lines:
        if line:
            header = (k, end, line)
            break
    if header is None or header[2][:14].lower() != b"%%matrixmarket":
        raise EdgeFileError(f"{name}: line 1: missing '%%MatrixMarket' header")
    words = header[2].decode("latin-1").lower().split()
    if len(words) != 5:
        raise EdgeFileError(f"{name}: line {header[0] + 1}: malformed Matrix Market header "
                            f"{header[2].decode('latin-1')!r}")
    _, obj, fmt, fld, sym = words
    if obj != "matrix" or fmt != "coordinate":
        raise EdgeFileError(f"{name}: line {header[0] + 1}: only 'matrix coordinate' Matrix Market "
                            f"files hold edges (got {obj!r} {fmt!r})")
    if fld not in ("pattern", "integer", "real"):
        raise EdgeFileError(f"{name}: line {header[0] + 1}: unsupported Matrix Market field {fld!r}")
    if sym not in ("general", "symmetric", "skew-symmetric"):
        raise EdgeFileError(f"{name}: line {header[0] + 1}: unsupported Matrix Market symmetry "
                            f"{sym!r}")
    comments: list[bytes] = []
    size = None
    for k, end, line in lines:
        if not line:
            continue
        if line.startswith(b"%"):
            comments.append(line)
            continue
        size = (k, end, line)
        break
    if size is None:
        raise EdgeFileError(f"{name}: Matrix Market size line (rows cols nnz) is missing")
    parts = size[2].split()
    try:
        rows, cols, nnz = (int(x) for x in parts)
    except ValueError:
        raise EdgeFileError(f"{name}: line {size[0] + 1}: malformed Matrix Market size line "
                            f"{size[2].decode('latin-1')!r} (want 'rows cols nnz')") from None
    if rows < 0 or cols < 0 or nnz < 0:
        raise EdgeFileError(f"{name}: line {size[0] + 1}: negative size in Matrix Market size line")
    meta = {"rows": rows, "cols": cols, "nnz": nnz, "field": fld, "symmetry": sym,
            "comments": [c.decode("utf-8", "replace") for c in comments[:50]],
            "size_line": size[0] + 1}
    names = ["src", "dst"]
    types = {"src": pa.int64(), "dst": pa.int64()}
    if fld != "pattern":
        names.append("weight")
        types["weight"] = pa.int64() if fld == "integer" else pa.float64()
    symmetric = sym != "general"
    return _Plan("mtx", _SPACE, _Parser(name, _SPACE, names, types), size[1], size[0] + 1,
                 directed=not symmetric, symmetric=symmetric, meta=meta, comment_chars=b"%")


_PLANNERS = {"snap": _plan_snap, "csv": _plan_csv, "konect": _plan_konect, "mtx": _plan_mtx}


def _canonical_format(format: str | None) -> str | None:
    if format is None:
        return None
    key = str(format).lower()
    if key not in _ALIASES:
        raise ValueError(f"unknown edge-file format {format!r}; use one of {FORMATS}")
    return _ALIASES[key]


# --------------------------------------------------------------------------------------------
# reading


class _BlockReader:
    """Opens a file, inspects its header and yields parsed blocks of edges."""

    def __init__(self, path: PathLike, format: str | None, block_bytes: int):
        self.src = _Source(path, block_bytes)
        self.name = self.src.name
        try:
            first = self.src.next_block()
            if first is not None and first.startswith(b"\xef\xbb\xbf"):
                first = first[3:]
            if first is None or not first.strip():
                raise EdgeFileError(f"{self.name}: empty file (no content)")
            # make sure the first block reaches past the leading comments (the header parsers
            # and the format detection look at the first data line)
            while not self.src.eof and _leading_comments(first, b"#%")[1] >= len(first):
                more = self.src.next_block()
                if more is None:
                    break
                first += more
            fmt = _canonical_format(format) or detect_format(first)
            self.plan = _PLANNERS[fmt](self.name, first)
            self.first = first
        except BaseException:
            self.src.close()
            raise

    def blocks(self) -> Iterator[tuple[dict[str, np.ndarray], int, _Cleaned]]:
        plan = self.plan
        try:
            text: bytes | None = self.first
            line_base = 0
            first = True
            while text is not None:
                block_lines = text.count(b"\n")
                if first:
                    body = text[plan.data_offset:]
                    off = line_base + plan.data_line_offset
                    first = False
                else:
                    body, off = text, line_base
                if body:
                    c = _clean(body, plan.sep, off, plan.comment_chars)
                    cols = plan.parser.parse(c)
                    yield cols, off, c
                line_base += block_lines
                text = self.src.next_block()
        finally:
            self.src.close()


def _check_ids(name: str, plan: _Plan, cols: dict[str, np.ndarray], c: _Cleaned) -> None:
    for key in ("src", "dst"):
        a = cols[key]
        if a.shape[0] == 0:
            continue
        if plan.fmt == "mtx":
            limit = plan.meta["rows"] if key == "src" else plan.meta["cols"]
            bad = (a < 1) | (a > limit)
            if bad.any():
                r = int(np.argmax(bad))
                line = int(_data_line_numbers(c)[r])
                what = "row" if key == "src" else "column"
                raise EdgeFileError(f"{name}: line {line}: {what} index {int(a[r])} outside "
                                    f"1..{limit} given by the size line")
        else:
            neg = a < 0
            if neg.any():
                r = int(np.argmax(neg))
                line = int(_data_line_numbers(c)[r])
                raise EdgeFileError(f"{name}: line {line}: negative vertex id {int(a[r])}")


def _finish_block(reader: _BlockReader, cols: dict[str, np.ndarray], c: _Cleaned) -> EdgeBlock:
    plan = reader.plan
    _check_ids(reader.name, plan, cols, c)
    src = cols.pop("src").astype(np.int64, copy=False)
    dst = cols.pop("dst").astype(np.int64, copy=False)
    if plan.fmt == "mtx":
        src = src - 1
        dst = dst - 1
    first_line = int(_data_line_numbers(c)[0]) if src.shape[0] else 0
    return EdgeBlock(src, dst, cols, first_line)


def iter_edge_blocks(path: PathLike, format: str | None = None, *,
                     block_bytes: int = _DEFAULT_BLOCK) -> Iterator[EdgeBlock]:
    """Read an edge file block by block (bounded memory), in file order.

    Args:
        path: file to read (gzip or plain).
        format: force a format (see :data:`FORMATS`); detected from the content when None.
        block_bytes: decompressed bytes per block (blocks end on a line break).

    Yields:
        :class:`EdgeBlock` objects: ``src``/``dst`` int64 ``(k,)`` and the ``extra`` columns.
        An int64 column may turn float64 in a later block if fractional values appear there.
        The Matrix Market entry count is checked against the size line at the end.
    """
    reader = _BlockReader(path, format, block_bytes)
    total = 0
    for cols, _, c in reader.blocks():
        blk = _finish_block(reader, cols, c)
        total += blk.src.shape[0]
        yield blk
    _check_count(reader, total)


def _check_count(reader: _BlockReader, total: int) -> None:
    plan = reader.plan
    if plan.fmt == "mtx" and total != plan.meta["nnz"]:
        raise EdgeFileError(f"{reader.name}: Matrix Market size line (line {plan.meta['size_line']}) "
                            f"says nnz={plan.meta['nnz']}, but the file has {total} entries")


def read_graph_file(path: PathLike, format: str | None = None, *,
                    block_bytes: int = _DEFAULT_BLOCK) -> EdgeFile:
    """Read a whole edge file (any format in ``shared/data``) into an :class:`EdgeFile`.

    Args:
        path: a SNAP / SNAP temporal / CSV / KONECT / Matrix Market file, gzip-compressed or not.
        format: ``"snap"``, ``"csv"``, ``"konect"`` or ``"mtx"`` (or an alias) to override
            detection from the content.
        block_bytes: decompressed bytes parsed at a time (memory bound for huge files).

    Returns:
        EdgeFile with ``src``, ``dst`` (int64, shape ``(m,)``), ``extra`` columns of shape
        ``(m,)``, ``num_vertices`` and the format's hints (``directed``, ``symmetric``, ``meta``).

    Raises:
        FileNotFoundError: the file does not exist.
        EdgeFileError: the content is malformed (message names the file and line).
    """
    reader = _BlockReader(path, format, block_bytes)
    plan = reader.plan
    blocks = [_finish_block(reader, cols, c) for cols, _, c in reader.blocks()]
    if len(blocks) == 1:
        src, dst, extra = blocks[0].src, blocks[0].dst, blocks[0].extra
    elif not blocks:
        src = np.empty(0, dtype=np.int64)
        dst = np.empty(0, dtype=np.int64)
        extra = {n: np.empty(0, dtype=plan.parser.types[n].to_pandas_dtype())
                 for n in plan.parser.names[2:]}
    else:
        src = np.concatenate([b.src for b in blocks])
        dst = np.concatenate([b.dst for b in blocks])
        extra = {n: np.concatenate([b.extra[n] for b in blocks]) for n in blocks[0].extra}
    del blocks
    _check_count(reader, int(src.shape[0]))
    m = int(src.shape[0])
    maxid = int(max(src.max(), dst.max())) if m else -1
    nv = maxid + 1
    meta = dict(plan.meta)
    if plan.fmt == "mtx":
        nv = max(nv, meta["rows"], meta["cols"])
    elif plan.fmt == "konect" and "rows" in meta:
        nv = max(nv, max(meta["rows"], meta["cols"]) + 1)
    return EdgeFile(src=src, dst=dst, extra=extra, num_vertices=int(nv), format=plan.fmt,
                    directed=plan.directed, symmetric=plan.symmetric, meta=meta,
                    path=reader.name)


def read_edges(path: PathLike, format: str | None = None
               ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """``src, dst, extra`` of an edge file: a text format (the thin wrapper over
    :func:`read_graph_file`) or a stream file of the project's format (Arrow IPC file
    ``.arrow``, IPC stream ``.arrows``, Parquet ``.parquet``; recognised by content).

    ``src``/``dst``: int64 arrays of shape ``(m,)`` with the ids as in the file (Matrix Market:
    zero-based, entries as stored, symmetric matrices NOT mirrored); ``extra``: dict of further
    columns (``time``, ``weight``, ``rating``; a stream's ``op``, ``batch``...), each of shape
    ``(m,)``. A stream file's rows are its events, as recorded (deletes included).
    """
    p = os.fspath(path)
    if not os.path.isdir(p):
        with open(p, "rb") as f:            # FileNotFoundError propagates
            container = container_of(f.read(8))
        if container is not None:
            if format is not None:
                raise EdgeFileError(f"{p}: a text format was given ({format!r}) but the file "
                                    f"is an Arrow/Parquet stream ({container})")
            try:
                return read_edge_table(p, container)
            except ValueError as e:
                raise EdgeFileError(str(e)) from None
    return read_graph_file(path, format).as_tuple()


# --------------------------------------------------------------------------------------------
# writing


def write_edges_text(path: PathLike, src: Any, dst: Any, *, extra: dict[str, Any] | None = None,
                     header: str | Sequence[str] | None = None, compress: bool | None = None,
                     sep: str = "\t") -> None:
    """Write edges as a SNAP-style text edge list (``src<TAB>dst[<TAB>extra...]`` per line).

    Args:
        path: output file; gzip-compressed when ``compress`` is True, or when it is None and the
            name ends with ``.gz``.
        src, dst: integer arrays of shape ``(m,)`` (NumPy, or anything with ``__array__``/``get``).
        extra: further columns of shape ``(m,)``, written after dst in the order given.
        header: comment lines written first, each prefixed with ``# ``.
        sep: field separator (tab by default; ``","`` writes CSV).
    """
    def host(a: Any) -> np.ndarray:
        if hasattr(a, "get") and not isinstance(a, np.ndarray):
            a = a.get()
        return np.asarray(a)

    s = host(src).astype(np.int64, copy=False).ravel()
    d = host(dst).astype(np.int64, copy=False).ravel()
    if s.shape != d.shape:
        raise ValueError(f"src and dst differ in length ({s.shape[0]} vs {d.shape[0]})")
    cols = {"src": s, "dst": d}
    for k, v in (extra or {}).items():
        v = host(v).ravel()
        if v.shape != s.shape:
            raise ValueError(f"extra column {k!r} has length {v.shape[0]}, expected {s.shape[0]}")
        cols[str(k)] = v
    table = pa.table(cols)
    buf = io.BytesIO()
    if header is not None:
        lines = [header] if isinstance(header, str) else list(header)
        for h in lines:
            for part in str(h).splitlines() or [""]:
                buf.write(b"# " + part.encode() + b"\n")
    if table.num_rows:
        sink = pa.BufferOutputStream()
        pacsv.write_csv(table, sink, write_options=pacsv.WriteOptions(
            include_header=False, delimiter=sep, quoting_style="none"))
        buf.write(sink.getvalue().to_pybytes())
    payload = buf.getvalue()
    p = os.fspath(path)
    if compress is None:
        compress = p.endswith(".gz")
    with open(p, "wb") as f:
        f.write(gzip.compress(payload, compresslevel=6, mtime=0) if compress else payload)
