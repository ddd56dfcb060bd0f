"""Small GGUF v3 reader: header, KVs, tensor infos and tensor data (dequantized to float32).

    from gguf_reader import GGUFReader
    r = GGUFReader("model.gguf")
    r.kv["general.architecture"]          # python value (arrays become lists)
    r.tensors["token_embd.weight"]        # TensorInfo(name, ne, ggml_type, offset, nbytes)
    r.tensor("token_embd.weight")         # np.float32 array in numpy order (reversed ne)

Run as a script to dump a file:  /usr/bin/python3 scripts/gguf_reader.py model.gguf
"""

import os
import struct
import sys
from collections import namedtuple

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gguf_writer import (  # noqa: E402
    DEFAULT_ALIGNMENT, GGML_TYPE_NAMES, GGUF_MAGIC, SCALAR_FMT, VALUE_TYPE_NAMES,
    GGUFError, dequantize, tensor_nbytes,
)

TensorInfo = namedtuple("TensorInfo", "name ne ggml_type offset nbytes")


class _Cursor:
    """Bounds-checked little-endian reader over a bytes object."""

    def __init__(self, data):
        self.data, self.pos = data, 0

    def take(self, n):
        if self.pos + n > len(self.data):
            raise GGUFError(f"truncated file: need {n} bytes at offset {self.pos}, file has {len(self.data)}")
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def unpack(self, fmt):
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def string(self):
        return self.take(self.unpack("<Q")).decode("utf-8")


def _read_value(cur, vtype_id):
    vtype = VALUE_TYPE_NAMES.get(vtype_id)
    if vtype is None:
        raise GGUFError(f"unknown KV value type {vtype_id} at offset {cur.pos}")
    if vtype == "string":
        return vtype, cur.string()
    if vtype == "array":
        elem_id, count = cur.unpack("<I"), cur.unpack("<Q")
        elem = VALUE_TYPE_NAMES.get(elem_id)
        if elem is None or elem == "array":
            raise GGUFError(f"unsupported array element type {elem_id}")
        if elem == "string":
            return "array[string]", [cur.string() for _ in range(count)]
        fmt = SCALAR_FMT[elem]
        size = struct.calcsize(fmt)
        raw = cur.take(size * count)
        return f"array[{elem}]", list(struct.unpack(f"<{count}{fmt[1]}", raw))
    return vtype, cur.unpack(SCALAR_FMT[vtype])


class GGUFReader:
    """Parses a whole GGUF v3 file into memory."""

    def __init__(self, path):
        self.path = path
        with open(path, "rb") as f:
            self.data = f.read()
        cur = _Cursor(self.data)
        if cur.take(4) != GGUF_MAGIC:
            raise GGUFError(f"{path}: not a GGUF file (bad magic)")
        self.version = cur.unpack("<I")
        if self.version != 3:
            raise GGUFError(f"{path}: unsupported GGUF version {self.version}")
        n_tensors, n_kv = cur.unpack("<q"), cur.unpack("<q")
        self.kv, self.kv_types = {}, {}
        for _ in range(n_kv):
            key = cur.string()
            if not key or key in self.kv:
                raise GGUFError(f"{path}: empty or duplicate key {key!r}")
            self.kv_types[key], self.kv[key] = _read_value(cur, cur.unpack("<I"))
        self.tensors = {}
        for _ in range(n_tensors):
            self._read_tensor_info(cur)
        self.alignment = self.kv.get("general.alignment", DEFAULT_ALIGNMENT)
        self.data_offset = cur.pos + (-cur.pos) % self.alignment
        self._check_offsets()

    def _read_tensor_info(self, cur):
        name = cur.string()
        n_dims = cur.unpack("<I")
        if n_dims > 4:
            raise GGUFError(f"tensor {name}: n_dims {n_dims} > 4")
        ne = tuple(cur.unpack("<q") for _ in range(n_dims))
        type_id, offset = cur.unpack("<I"), cur.unpack("<Q")
        if type_id not in GGML_TYPE_NAMES:
            raise GGUFError(f"tensor {name}: unsupported ggml type id {type_id}")
        ggml_type = GGML_TYPE_NAMES[type_id]
        if name in self.tensors:
            raise GGUFError(f"duplicate tensor name {name!r}")
        n = int(np.prod(ne)) if ne else 1
        self.tensors[name] = TensorInfo(name, ne, ggml_type, offset, tensor_nbytes(ggml_type, n))

    def _check_offsets(self):
        expected = 0
        for t in self.tensors.values():
            if t.offset != expected:
                raise GGUFError(f"tensor {t.name} has offset {t.offset}, expected {expected}")
            expected = t.offset + t.nbytes + (-t.nbytes) % self.alignment
            if self.data_offset + t.offset + t.nbytes > len(self.data):
                raise GGUFError(f"tensor {t.name} data runs past the end of the file")

    def raw(self, name):
        """The raw bytes of a tensor."""
        t = self.tensors[name]
        start = self.data_offset + t.offset
        return self.data[start:start + t.nbytes]

    def tensor(self, name):
        """A tensor dequantized to float32, in numpy order (shape = reversed ne)."""
        if name not in self.tensors:
            raise KeyError(f"{self.path}: no tensor named {name!r}")
        t = self.tensors[name]
        n = int(np.prod(t.ne))
        return dequantize(self.raw(name), t.ggml_type, n).reshape(tuple(reversed(t.ne)))


def _short(value, limit=8):
    if isinstance(value, list) and len(value) > limit:
        return f"[{', '.join(map(repr, value[:limit]))}, ... ({len(value)} items)]"
    if isinstance(value, str) and len(value) > 120:
        return repr(value[:120]) + f"... ({len(value)} chars)"
    return repr(value)


def dump(path, out=sys.stdout):
    """Print a file's metadata and tensor table."""
    r = GGUFReader(path)
    print(f"{path}: GGUF v{r.version}, {len(r.kv)} KVs, {len(r.tensors)} tensors, "
          f"alignment {r.alignment}, data at {r.data_offset}", file=out)
    for key, value in r.kv.items():
        print(f"  {key:45s} {r.kv_types[key]:14s} {_short(value)}", file=out)
    print(f"  {'tensor':32s} {'type':6s} {'ne':24s} {'offset':>10s} {'bytes':>10s}", file=out)
    for t in r.tensors.values():
        print(f"  {t.name:32s} {t.ggml_type:6s} {str(list(t.ne)):24s} {t.offset:10d} {t.nbytes:10d}", file=out)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: gguf_reader.py FILE.gguf [...]")
    for p in sys.argv[1:]:
        dump(p)
