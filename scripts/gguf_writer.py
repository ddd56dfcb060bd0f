"""Small, self-contained GGUF v3 writer with simple ggml quantizers.

Usage:
    sys.path.insert(0, "<repo>/scripts")
    from gguf_writer import GGUFWriter, quantize, dequantize, llada_permute

    w = GGUFWriter("model.gguf", "llada")
    w.add_u32("llada.block_count", 2)
    w.add_array("tokenizer.ggml.tokens", ["a", "b"], "string")
    w.add_tensor("token_embd.weight", emb)          # numpy (n_vocab, n_embd) -> ne {n_embd, n_vocab}
    w.add_tensor("blk.0.attn_q.weight", wq, "Q8_0")
    w.write()

Arrays are given in PyTorch/HF order; the GGUF `ne` is the reversed numpy shape.
Supported tensor types: F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q6_K (exact ggml block layouts).
Only NumPy is required. Output is deterministic for identical inputs.
"""

import struct

import numpy as np

GGUF_MAGIC = b"GGUF"
GGUF_VERSION = 3
DEFAULT_ALIGNMENT = 32

# gguf_type value ids
VALUE_TYPES = {
    "u8": 0, "i8": 1, "u16": 2, "i16": 3, "u32": 4, "i32": 5, "f32": 6,
    "bool": 7, "string": 8, "array": 9, "u64": 10, "i64": 11, "f64": 12,
}
VALUE_TYPE_NAMES = {v: k for k, v in VALUE_TYPES.items()}
# struct format per scalar value type
SCALAR_FMT = {
    "u8": "<B", "i8": "<b", "u16": "<H", "i16": "<h", "u32": "<I", "i32": "<i",
    "u64": "<Q", "i64": "<q", "f32": "<f", "f64": "<d", "bool": "<?",
}

# ggml tensor types: name -> (id, elements per block, bytes per block)
GGML_TYPES = {
    "F32": (0, 1, 4),
    "F16": (1, 1, 2),
    "Q4_0": (2, 32, 18),
    "Q8_0": (8, 32, 34),
    "Q4_K": (12, 256, 144),
    "Q6_K": (14, 256, 210),
    "BF16": (30, 1, 2),
}
GGML_TYPE_NAMES = {v[0]: k for k, v in GGML_TYPES.items()}
GGML_MAX_NAME = 64


class GGUFError(ValueError):
    """Raised for invalid writer input or malformed data."""


# ---------------------------------------------------------------------------------------------
# Quantization
# ---------------------------------------------------------------------------------------------

def _type_info(ggml_type):
    if ggml_type not in GGML_TYPES:
        raise GGUFError(f"unsupported ggml type {ggml_type!r}; expected one of {sorted(GGML_TYPES)}")
    return GGML_TYPES[ggml_type]


def tensor_nbytes(ggml_type, n):
    """Byte size of n elements of ggml_type (n must be a multiple of the block size)."""
    _, blk, bsz = _type_info(ggml_type)
    if n % blk:
        raise GGUFError(f"{ggml_type}: element count {n} is not a multiple of the block size {blk}")
    return n // blk * bsz


def _f16(x):
    """Round float values to f16 and back to f32 (the value actually stored)."""
    return np.asarray(x, dtype=np.float32).astype(np.float16).astype(np.float32)


def _bf16_bits(x):
    """f32 -> bf16 bit patterns (uint16) with round-to-nearest-even; NaN stays NaN."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    nan = np.isnan(np.asarray(x, dtype=np.float32))
    rounded = np.where(nan, (bits >> 16) | 0x40, rounded)
    return rounded.astype(np.uint16)


def _blocks(x, blk):
    return np.asarray(x, dtype=np.float32).reshape(-1, blk)


def _safe_inv(d):
    return np.where(d != 0, 1.0 / np.where(d != 0, d, 1.0), 0.0).astype(np.float32)


def _quant_q8_0(x):
    b = _blocks(x, 32)
    d = _f16(np.abs(b).max(axis=1) / 127.0)
    q = np.clip(np.round(b * _safe_inv(d)[:, None]), -127, 127).astype(np.int8)
    out = np.zeros((b.shape[0], 34), dtype=np.uint8)
    out[:, 0:2] = d.astype(np.float16)[:, None].view(np.uint8)
    out[:, 2:34] = q.view(np.uint8)
    return out.tobytes()


def _quant_q4_0(x):
    b = _blocks(x, 32)
    # the value of largest magnitude maps to -8 (keeps its sign), as in ggml's reference quantizer
    idx = np.abs(b).argmax(axis=1)
    vmax = b[np.arange(b.shape[0]), idx]
    d = _f16(vmax / -8.0)
    q = np.clip(np.round(b * _safe_inv(d)[:, None]) + 8, 0, 15).astype(np.uint8)
    out = np.zeros((b.shape[0], 18), dtype=np.uint8)
    out[:, 0:2] = d.astype(np.float16)[:, None].view(np.uint8)
    out[:, 2:18] = q[:, :16] | (q[:, 16:] << 4)
    return out.tobytes()


def _pack_k4_scales(sc, m):
    """Pack 8 six-bit scales and mins per block into 12 bytes (inverse of get_scale_min_k4)."""
    s = np.zeros((sc.shape[0], 12), dtype=np.uint8)
    s[:, 0:4] = sc[:, 0:4] | ((sc[:, 4:8] >> 4) << 6)
    s[:, 4:8] = m[:, 0:4] | ((m[:, 4:8] >> 4) << 6)
    s[:, 8:12] = (sc[:, 4:8] & 0xF) | ((m[:, 4:8] & 0xF) << 4)
    return s


def _unpack_k4_scales(s):
    """Unpack 12 bytes per block into (sc[8], m[8]) following get_scale_min_k4."""
    s = s.astype(np.uint8)
    sc = np.empty((s.shape[0], 8), dtype=np.uint8)
    m = np.empty((s.shape[0], 8), dtype=np.uint8)
    sc[:, 0:4] = s[:, 0:4] & 63
    m[:, 0:4] = s[:, 4:8] & 63
    sc[:, 4:8] = (s[:, 8:12] & 0xF) | ((s[:, 0:4] >> 6) << 4)
    m[:, 4:8] = (s[:, 8:12] >> 4) | ((s[:, 4:8] >> 6) << 4)
    return sc, m


def _quant_q4_k(x):
    b = _blocks(x, 256)
    nb = b.shape[0]
    sub = b.reshape(nb, 8, 32)
    lo = np.minimum(sub.min(axis=2), 0.0)                      # sub-block minimum (<= 0)
    scale = (sub.max(axis=2) - lo) / 15.0                      # sub-block step
    d = _f16(scale.max(axis=1) / 63.0)
    dmin = _f16((-lo).max(axis=1) / 63.0)
    sc = np.clip(np.round(scale * _safe_inv(d)[:, None]), 0, 63).astype(np.uint8)
    m = np.clip(np.round(-lo * _safe_inv(dmin)[:, None]), 0, 63).astype(np.uint8)
    step = d[:, None] * sc                                      # effective scale per sub-block
    offs = dmin[:, None] * m
    q = np.round((sub + offs[:, :, None]) * _safe_inv(step)[:, :, None])
    q = np.clip(q, 0, 15).astype(np.uint8).reshape(nb, 4, 2, 32)
    qs = (q[:, :, 0, :] | (q[:, :, 1, :] << 4)).reshape(nb, 128)
    out = np.zeros((nb, 144), dtype=np.uint8)
    out[:, 0:2] = d.astype(np.float16)[:, None].view(np.uint8)
    out[:, 2:4] = dmin.astype(np.float16)[:, None].view(np.uint8)
    out[:, 4:16] = _pack_k4_scales(sc, m)
    out[:, 16:144] = qs
    return out.tobytes()


def _quant_q6_k(x):
    b = _blocks(x, 256)
    nb = b.shape[0]
    sub = b.reshape(nb, 16, 16)
    step = np.abs(sub).max(axis=2) / 31.0                      # sub-block step (q in -31..31)
    d = _f16(step.max(axis=1) / 127.0)
    sc = np.clip(np.round(step * _safe_inv(d)[:, None]), -128, 127).astype(np.int8)
    eff = d[:, None] * sc.astype(np.float32)
    q = np.round(sub * _safe_inv(eff)[:, :, None])
    q = (np.clip(q, -32, 31) + 32).astype(np.uint8).reshape(nb, 2, 4, 32)   # [half][quarter][l]
    q1, q2, q3, q4 = q[:, :, 0], q[:, :, 1], q[:, :, 2], q[:, :, 3]
    ql = np.concatenate([(q1 & 0xF) | ((q3 & 0xF) << 4), (q2 & 0xF) | ((q4 & 0xF) << 4)], axis=2)
    qh = (q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) | ((q4 >> 4) << 6)
    out = np.zeros((nb, 210), dtype=np.uint8)
    out[:, 0:128] = ql.reshape(nb, 128)
    out[:, 128:192] = qh.reshape(nb, 64)
    out[:, 192:208] = sc.view(np.uint8)
    out[:, 208:210] = d.astype(np.float16)[:, None].view(np.uint8)
    return out.tobytes()


def quantize(array, ggml_type):
    """Encode a float array (any shape, flattened in C order) as raw ggml bytes of ggml_type."""
    x = np.ascontiguousarray(array, dtype=np.float32).reshape(-1)
    tensor_nbytes(ggml_type, x.size)  # validates type and block multiple
    if ggml_type == "F32":
        return x.astype("<f4").tobytes()
    if ggml_type == "F16":
        return x.astype("<f2").tobytes()
    if ggml_type == "BF16":
        return _bf16_bits(x).astype("<u2").tobytes()
    return {"Q8_0": _quant_q8_0, "Q4_0": _quant_q4_0,
            "Q4_K": _quant_q4_k, "Q6_K": _quant_q6_k}[ggml_type](x)


def _f16_field(raw, start):
    return raw[:, start:start + 2].copy().view(np.float16).astype(np.float32)[:, 0]


def _deq_q8_0(raw):
    d = _f16_field(raw, 0)
    return raw[:, 2:34].view(np.int8).astype(np.float32) * d[:, None]


def _deq_q4_0(raw):
    d = _f16_field(raw, 0)
    qs = raw[:, 2:18]
    q = np.concatenate([qs & 0xF, qs >> 4], axis=1).astype(np.float32) - 8.0
    return q * d[:, None]


def _deq_q4_k(raw):
    nb = raw.shape[0]
    d, dmin = _f16_field(raw, 0), _f16_field(raw, 2)
    sc, m = _unpack_k4_scales(raw[:, 4:16])
    qs = raw[:, 16:144].reshape(nb, 4, 32)
    q = np.stack([qs & 0xF, qs >> 4], axis=2).reshape(nb, 8, 32).astype(np.float32)
    y = (d[:, None] * sc)[:, :, None] * q - (dmin[:, None] * m)[:, :, None]
    return y.reshape(nb, 256)


def _deq_q6_k(raw):
    nb = raw.shape[0]
    ql = raw[:, 0:128].reshape(nb, 2, 64)
    qh = raw[:, 128:192].reshape(nb, 2, 32).astype(np.int32)
    sc = raw[:, 192:208].view(np.int8).astype(np.float32)
    d = _f16_field(raw, 208)
    lo = ql[:, :, :32].astype(np.int32)
    hi = ql[:, :, 32:].astype(np.int32)
    q = np.stack([
        (lo & 0xF) | (((qh >> 0) & 3) << 4),
        (hi & 0xF) | (((qh >> 2) & 3) << 4),
        (lo >> 4) | (((qh >> 4) & 3) << 4),
        (hi >> 4) | (((qh >> 6) & 3) << 4),
    ], axis=2).astype(np.float32) - 32.0                         # [nb, half, quarter, 32]
    q = q.reshape(nb, 16, 16)
    return (d[:, None, None] * sc.reshape(nb, 16)[:, :, None] * q).reshape(nb, 256)


def dequantize(data, ggml_type, n):
    """Decode n elements of ggml_type from raw bytes into a float32 numpy array (as ggml does)."""
    nbytes = tensor_nbytes(ggml_type, n)
    buf = np.frombuffer(memoryview(data).cast("B"), dtype=np.uint8)
    if buf.size < nbytes:
        raise GGUFError(f"{ggml_type}: need {nbytes} bytes for {n} elements, got {buf.size}")
    buf = buf[:nbytes].copy()
    if ggml_type == "F32":
        return buf.view("<f4").astype(np.float32)
    if ggml_type == "F16":
        return buf.view("<f2").astype(np.float32)
    if ggml_type == "BF16":
        return (buf.view("<u2").astype(np.uint32) << 16).view(np.float32)
    _, blk, bsz = GGML_TYPES[ggml_type]
    raw = buf.reshape(-1, bsz)
    fn = {"Q8_0": _deq_q8_0, "Q4_0": _deq_q4_0, "Q4_K": _deq_q4_k, "Q6_K": _deq_q6_k}[ggml_type]
    return fn(raw).astype(np.float32).reshape(-1)


# ---------------------------------------------------------------------------------------------
# Converter helpers
# ---------------------------------------------------------------------------------------------

def llada_permute(w, n_head):
    """Apply the llama converter row permutation to a q/k weight (out, in) or bias (out,).

    Within each head, new_row[2*i + j] = old_row[j*(head_dim/2) + i], so that rotate-half (NEOX)
    pairs become adjacent (NORM) pairs. Pass n_head_kv for attn_k.
    """
    w = np.asarray(w)
    out = w.shape[0]
    if out % n_head or (out // n_head) % 2:
        raise GGUFError(f"llada_permute: {out} rows do not split into {n_head} heads of even size")
    hd = out // n_head
    rest = w.shape[1:]
    return w.reshape(n_head, 2, hd // 2, *rest).swapaxes(1, 2).reshape(out, *rest)


# ---------------------------------------------------------------------------------------------
# Writer
# ---------------------------------------------------------------------------------------------

def _pack_string(s):
    b = s.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


def _pack_scalar(vtype, value, key):
    if vtype == "string":
        if not isinstance(value, str):
            raise GGUFError(f"{key}: expected str, got {type(value).__name__}")
        return _pack_string(value)
    if vtype == "bool":
        return struct.pack("<?", bool(value))
    try:
        if vtype in ("f32", "f64"):
            return struct.pack(SCALAR_FMT[vtype], float(value))
        if isinstance(value, (float, np.floating)) and not float(value).is_integer():
            raise GGUFError(f"{key}: {vtype} value {value!r} is not an integer")
        return struct.pack(SCALAR_FMT[vtype], int(value))
    except struct.error as e:
        raise GGUFError(f"{key}: value {value!r} does not fit {vtype}: {e}") from None


class GGUFWriter:
    """Collects KV pairs and tensors, then writes a GGUF v3 file with write()."""

    def __init__(self, path, arch):
        self.path = path
        self.arch = arch
        self._kv = {}        # key -> encoded value bytes (type id + payload), insertion-ordered
        self._tensors = []   # (name, ne tuple, ggml type name, raw bytes)
        self._names = set()
        self.add_string("general.architecture", arch)

    # -- KV --------------------------------------------------------------------------------
    def _add(self, key, vtype, payload):
        if not isinstance(key, str) or not key:
            raise GGUFError("KV key must be a non-empty string")
        if key in self._kv:
            raise GGUFError(f"duplicate KV key {key!r}")
        self._kv[key] = struct.pack("<I", VALUE_TYPES[vtype]) + payload

    def _add_scalar(self, vtype, key, value):
        self._add(key, vtype, _pack_scalar(vtype, value, key))

    def add_u8(self, key, value): self._add_scalar("u8", key, value)
    def add_i8(self, key, value): self._add_scalar("i8", key, value)
    def add_u16(self, key, value): self._add_scalar("u16", key, value)
    def add_i16(self, key, value): self._add_scalar("i16", key, value)
    def add_u32(self, key, value): self._add_scalar("u32", key, value)
    def add_i32(self, key, value): self._add_scalar("i32", key, value)
    def add_u64(self, key, value): self._add_scalar("u64", key, value)
    def add_i64(self, key, value): self._add_scalar("i64", key, value)
    def add_f32(self, key, value): self._add_scalar("f32", key, value)
    def add_f64(self, key, value): self._add_scalar("f64", key, value)
    def add_bool(self, key, value): self._add_scalar("bool", key, value)
    def add_string(self, key, value): self._add_scalar("string", key, value)

    def add_array(self, key, values, elem_type):
        """Add an array KV; elem_type is one of u8..f64, bool, string (not nested arrays)."""
        if elem_type not in VALUE_TYPES or elem_type == "array":
            raise GGUFError(f"{key}: unsupported array element type {elem_type!r}")
        values = list(values)
        parts = [struct.pack("<IQ", VALUE_TYPES[elem_type], len(values))]
        parts += [_pack_scalar(elem_type, v, key) for v in values]
        self._add(key, "array", b"".join(parts))

    # -- tensors ---------------------------------------------------------------------------
    def add_tensor(self, name, array, ggml_type="F32"):
        """Add a tensor given in numpy/PyTorch order; ne is the reversed shape."""
        if not name or len(name.encode("utf-8")) >= GGML_MAX_NAME:
            raise GGUFError(f"tensor name {name!r} must be 1..{GGML_MAX_NAME - 1} bytes")
        if name in self._names:
            raise GGUFError(f"duplicate tensor name {name!r}")
        array = np.asarray(array)
        if not 1 <= array.ndim <= 4:
            raise GGUFError(f"{name}: tensors must have 1..4 dims, got shape {array.shape}")
        ne = tuple(int(s) for s in reversed(array.shape))
        _, blk, _ = _type_info(ggml_type)
        if ne[0] % blk:
            raise GGUFError(f"{name}: ne[0] = {ne[0]} is not a multiple of the {ggml_type} block size {blk}")
        self._tensors.append((name, ne, ggml_type, quantize(array, ggml_type)))
        self._names.add(name)

    # -- output ----------------------------------------------------------------------------
    def _alignment(self):
        raw = self._kv.get("general.alignment")
        if raw is None:
            return DEFAULT_ALIGNMENT
        vtype, value = struct.unpack("<II", raw[:8])
        if vtype != VALUE_TYPES["u32"] or value == 0 or value & (value - 1):
            raise GGUFError("general.alignment must be a u32 power of two")
        return value

    def write(self):
        """Write header, KVs, tensor infos, padding and aligned tensor data to self.path."""
        align = self._alignment()
        pad = lambda n: (-n) % align  # noqa: E731
        out = [GGUF_MAGIC, struct.pack("<Iqq", GGUF_VERSION, len(self._tensors), len(self._kv))]
        for key, payload in self._kv.items():
            out += [_pack_string(key), payload]
        offset = 0
        for name, ne, ggml_type, data in self._tensors:
            out += [_pack_string(name), struct.pack("<I", len(ne)),
                    struct.pack(f"<{len(ne)}q", *ne),
                    struct.pack("<IQ", GGML_TYPES[ggml_type][0], offset)]
            offset += len(data) + pad(len(data))
        head = b"".join(out)
        blob = [head, b"\0" * pad(len(head))]
        for _, _, _, data in self._tensors:
            blob += [data, b"\0" * pad(len(data))]
        with open(self.path, "wb") as f:
            f.write(b"".join(blob))
        return self.path


# ---------------------------------------------------------------------------------------------
# Self-test: python3 scripts/gguf_writer.py
# ---------------------------------------------------------------------------------------------

def _scalar_f16(b, i):
    return float(np.frombuffer(bytes(b[i:i + 2]), dtype="<f2")[0])


def _scalar_dequant_block(ggml_type, b):
    """Element-by-element decoder of one block, written straight from the ggml formulas."""
    y = []
    if ggml_type == "Q8_0":
        d = _scalar_f16(b, 0)
        y = [d * struct.unpack("<b", bytes([b[2 + j]]))[0] for j in range(32)]
    elif ggml_type == "Q4_0":
        d = _scalar_f16(b, 0)
        y = [0.0] * 32
        for j in range(16):
            y[j] = ((b[2 + j] & 0xF) - 8) * d
            y[j + 16] = ((b[2 + j] >> 4) - 8) * d
    elif ggml_type == "Q4_K":
        d, dmin, s, qs = _scalar_f16(b, 0), _scalar_f16(b, 2), b[4:16], b[16:144]
        for j in range(8):
            if j < 4:
                sc, m = s[j] & 63, s[j + 4] & 63
            else:
                sc = (s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4)
                m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4)
            base, shift = 32 * (j // 2), 4 * (j % 2)
            y += [d * sc * ((qs[base + l] >> shift) & 0xF) - dmin * m for l in range(32)]
    elif ggml_type == "Q6_K":
        d = _scalar_f16(b, 208)
        y = [0.0] * 256
        for half in range(2):
            ql, qh = b[64 * half:], b[128 + 32 * half:]
            sc = [struct.unpack("<b", bytes([v]))[0] for v in b[192 + 8 * half:200 + 8 * half]]
            for l in range(32):
                i = l // 16
                o = 128 * half
                y[o + l] = d * sc[i] * (((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32)
                y[o + l + 32] = d * sc[i + 2] * (((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32)
                y[o + l + 64] = d * sc[i + 4] * (((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32)
                y[o + l + 96] = d * sc[i + 6] * (((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32)
    return y


def _selftest():
    rng = np.random.default_rng(1234)
    x = rng.standard_normal(1024).astype(np.float32) * 3
    x[:256] = 0.0
    for t, tol in [("F32", 0), ("F16", 1e-3), ("BF16", 5e-3), ("Q8_0", 0.01),
                   ("Q4_0", 0.12), ("Q4_K", 0.1), ("Q6_K", 0.03)]:
        raw = quantize(x, t)
        y = dequantize(raw, t, x.size)
        rel = float(np.linalg.norm(y - x) / np.linalg.norm(x))
        assert rel <= tol, f"{t}: relative round-trip error {rel} > {tol}"
        if t in ("Q8_0", "Q4_0", "Q4_K", "Q6_K"):
            _, blk, bsz = GGML_TYPES[t]
            ref = []
            for i in range(x.size // blk):
                ref += _scalar_dequant_block(t, raw[i * bsz:(i + 1) * bsz])
            assert np.allclose(np.float32(ref), y, rtol=1e-6, atol=1e-6), f"{t}: scalar decoder disagrees"
        print(f"{t:5s} {len(raw):5d} bytes  rel err {rel:.3g}")
    print("gguf_writer self-test passed")


if __name__ == "__main__":
    _selftest()
