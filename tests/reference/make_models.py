"""Write the small random-weight test models to tests/data/models/.

    /usr/bin/python3 tests/reference/make_models.py [OUT_DIR]

Every file is deterministic: weights come from splitmix64 (see SPEC.md) seeded per tensor, the byte-level
BPE tokenizer is trained on the fixed text below, and the GGUF writer emits no timestamps. Re-running
produces byte-identical files.

Also the home of the test tokenizer (bytes_to_unicode, pretokenize, train_merges, encode), which
make_golden.py imports to write tokenizer goldens.
"""

import os
import re
import sys
import zlib
from collections import Counter

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "scripts"))
from gguf_writer import GGUFWriter, llada_permute  # noqa: E402

OUT_DIR = os.path.join(REPO, "tests", "data", "models")
BASE_SEED = 0x646C6F6F70  # "dloop"
N_MERGES = 50
SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|mask|>"]
TOKEN_TYPE_NORMAL, TOKEN_TYPE_CONTROL = 1, 3
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
TRAIN_TEXT = """\
The agent reads the request, thinks about the tools it has, and then writes an answer.
When the weather is needed, it calls the weather tool with the name of the city.
The tool returns the temperature and the wind, and the agent tells the user what it found.
Then the user asks another question, and the loop starts again from the top.
A diffusion model writes the whole answer at once: it starts from masks and fills them in,
step by step, with the tokens it is most sure about. The engine that runs it has to be fast,
and the tests that check it have to be exact. In this test the model is small and its weights
are random, so the text it writes is not meant to make sense; only the numbers matter.
"""

# Qwen2 pre-tokenizer regex restricted to ASCII (\p{L} -> [A-Za-z], \p{N} -> [0-9]). The training text and
# the tokenizer goldens are ASCII, where this is exactly the qwen2 split.
_PRETOKENIZE = re.compile(
    r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\nA-Za-z0-9]?[A-Za-z]+|[0-9]"
    r"| ?[^\sA-Za-z0-9]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+", re.ASCII)


# ---------------------------------------------------------------------------------------------
# Tokenizer
# ---------------------------------------------------------------------------------------------

def bytes_to_unicode():
    """GPT-2 byte -> printable unicode character map (printable bytes map to themselves)."""
    printable = set(range(0x21, 0x7F)) | set(range(0xA1, 0xAD)) | set(range(0xAE, 0x100))
    table, extra = {}, 0
    for b in range(256):
        if b in printable:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return table


BYTE_CHARS = bytes_to_unicode()


def pretokenize(text):
    """Split ASCII text into pre-tokens with the qwen2 pattern."""
    if not text.isascii():
        raise ValueError("the test pre-tokenizer only handles ASCII text")
    return _PRETOKENIZE.findall(text)


def to_symbols(piece):
    """A pre-token as a list of byte characters (GPT-2 alphabet)."""
    return [BYTE_CHARS[b] for b in piece.encode("utf-8")]


def _merge_word(word, pair):
    out, i = [], 0
    while i < len(word):
        if i + 1 < len(word) and (word[i], word[i + 1]) == pair:
            out.append(word[i] + word[i + 1])
            i += 2
        else:
            out.append(word[i])
            i += 1
    return tuple(out)


def train_merges(text, n_merges):
    """Greedy BPE training: the most frequent adjacent pair wins, ties by the smaller pair."""
    words = Counter(tuple(to_symbols(p)) for p in pretokenize(text))
    merges = []
    for _ in range(n_merges):
        pairs = Counter()
        for word, count in words.items():
            for a, b in zip(word, word[1:]):
                pairs[(a, b)] += count
        if not pairs:
            break
        best = min(pairs.items(), key=lambda kv: (-kv[1], kv[0]))[0]
        merges.append(best)
        words = Counter({_merge_word(w, best): c for w, c in words.items()})
    return merges


def build_vocab():
    """Tokens (byte tokens in byte order, merge results, specials), token types, merges."""
    merges = train_merges(TRAIN_TEXT, N_MERGES)
    tokens = [BYTE_CHARS[b] for b in range(256)]
    for a, b in merges:
        if a + b not in tokens:
            tokens.append(a + b)
    types = [TOKEN_TYPE_NORMAL] * len(tokens)
    tokens += SPECIAL_TOKENS
    types += [TOKEN_TYPE_CONTROL] * len(SPECIAL_TOKENS)
    return tokens, types, [f"{a} {b}" for a, b in merges]


def bpe_piece(symbols, ranks):
    """Apply merges to one pre-token: repeatedly merge the lowest-rank pair (leftmost on ties)."""
    word = list(symbols)
    while len(word) > 1:
        cands = [(ranks.get((a, b)), i) for i, (a, b) in enumerate(zip(word, word[1:]))]
        cands = [c for c in cands if c[0] is not None]
        if not cands:
            break
        _, i = min(cands)
        word[i:i + 2] = [word[i] + word[i + 1]]
    return word


def encode(text, tokens, merges, parse_special=True):
    """Byte-level BPE encode (qwen2 pre-tokenizer, ASCII only); special tokens are matched first."""
    ids = {t: i for i, t in enumerate(tokens)}
    ranks = {tuple(m.split(" ")): r for r, m in enumerate(merges)}
    specials = [t for t in tokens if t in SPECIAL_TOKENS] if parse_special else []
    parts = re.split("(" + "|".join(map(re.escape, specials)) + ")", text) if specials else [text]
    out = []
    for part in parts:
        if part in specials:
            out.append(ids[part])
            continue
        for piece in pretokenize(part):
            out += [ids[s] for s in bpe_piece(to_symbols(piece), ranks)]
    return out


# ---------------------------------------------------------------------------------------------
# Weights
# ---------------------------------------------------------------------------------------------

def splitmix64_uniform(seed, n):
    """n float64 uniforms in [0, 1): outputs 1..n of splitmix64 seeded with seed (SPEC.md)."""
    with np.errstate(over="ignore"):
        idx = np.arange(1, n + 1, dtype=np.uint64)
        z = np.uint64(seed) + idx * np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return (z >> np.uint64(11)).astype(np.float64) * 2.0 ** -53


def rand_tensor(seed, name, shape, std, mean=0.0):
    """Uniform random tensor with the given mean and standard deviation, seeded by (seed, name)."""
    s = (seed * 1000003 + zlib.crc32(name.encode())) % 2 ** 64
    u = splitmix64_uniform(s, int(np.prod(shape)))
    return (mean + (2.0 * u - 1.0) * std * np.sqrt(3.0)).reshape(shape).astype(np.float32)


# Larger q/k and v/o gains give peaked, position-dependent attention, so that the answer positions of a
# random model predict different tokens instead of all copying the mask embedding.
QK_GAIN, VO_GAIN = 3.0, 2.0


def make_weights(cfg, n_vocab, seed):
    """HF-order (out, in) weights for one model config; llada q/k are permuted for NORM RoPE."""
    e, hd, ff = cfg["n_embd"], cfg["n_embd"] // cfg["n_head"], cfg["n_ff"]
    q_out, kv_out = cfg["n_head"] * hd, cfg["n_head_kv"] * hd
    w = {"token_embd.weight": rand_tensor(seed, "token_embd", (n_vocab, e), 1.0)}
    for i in range(cfg["n_layer"]):
        p = f"blk.{i}."
        shapes = {"attn_q": (q_out, e), "attn_k": (kv_out, e), "attn_v": (kv_out, e),
                  "attn_output": (e, q_out), "ffn_gate": (ff, e), "ffn_up": (ff, e), "ffn_down": (e, ff)}
        for name, shape in shapes.items():
            gain = QK_GAIN if name in ("attn_q", "attn_k") else VO_GAIN if name in ("attn_v", "attn_output") else 1.0
            w[p + name + ".weight"] = rand_tensor(seed, p + name, shape, gain / np.sqrt(shape[1]))
        for norm in ("attn_norm", "ffn_norm"):
            w[p + norm + ".weight"] = rand_tensor(seed, p + norm, (e,), 0.1, 1.0)
        if cfg["arch"] == "dream":
            for name, out in (("attn_q", q_out), ("attn_k", kv_out), ("attn_v", kv_out)):
                w[p + name + ".bias"] = rand_tensor(seed, p + name + ".bias", (out,), 0.5)
        else:
            w[p + "attn_q.weight"] = llada_permute(w[p + "attn_q.weight"], cfg["n_head"])
            w[p + "attn_k.weight"] = llada_permute(w[p + "attn_k.weight"], cfg["n_head_kv"])
    w["output_norm.weight"] = rand_tensor(seed, "output_norm", (e,), 0.1, 1.0)
    if not cfg.get("tied"):
        w["output.weight"] = rand_tensor(seed, "output", (n_vocab, e), 2.5 / np.sqrt(e))
    return w


# ---------------------------------------------------------------------------------------------
# Model files
# ---------------------------------------------------------------------------------------------

FILE_TYPE = {"F32": 0, "F16": 1, "Q4_0": 2, "Q8_0": 7, "Q4_K": 15, "Q6_K": 18, "BF16": 32}

LLADA = dict(arch="llada", n_layer=2, n_embd=64, n_head=4, n_head_kv=4, n_ff=160,
             rope_base=500000.0, eps=1e-5, ctx=256, seed=1)
LLADA_256 = dict(LLADA, n_embd=256, n_ff=256, seed=2)
DREAM = dict(arch="dream", n_layer=2, n_embd=64, n_head=4, n_head_kv=2, n_ff=96,
             rope_base=1000000.0, eps=1e-6, ctx=256, seed=3)

# file name -> (config, weight type of 2-D tensors, extra options)
MODELS = {
    "llada-f32.gguf": (LLADA, "F32", {}),
    "llada-f16.gguf": (LLADA, "F16", {}),
    "llada-bf16.gguf": (LLADA, "BF16", {}),
    "llada-q8_0.gguf": (LLADA, "Q8_0", {}),
    "llada-q4_0.gguf": (LLADA, "Q4_0", {}),
    "llada-tied-f32.gguf": (dict(LLADA, tied=True), "F32", {}),
    "llada256-q4_k.gguf": (LLADA_256, "Q4_K", {}),
    "llada256-q6_k.gguf": (LLADA_256, "Q6_K", {}),
    "dream-f32.gguf": (DREAM, "F32", {}),
    "dream-q8_0.gguf": (DREAM, "Q8_0", {"alignment": 64}),
}


def add_hparams(w, cfg, n_vocab, wtype, name):
    a = cfg["arch"]
    w.add_string("general.name", name)
    w.add_u32("general.file_type", FILE_TYPE[wtype])
    w.add_u32(f"{a}.context_length", cfg["ctx"])
    w.add_u32(f"{a}.embedding_length", cfg["n_embd"])
    w.add_u32(f"{a}.block_count", cfg["n_layer"])
    w.add_u32(f"{a}.feed_forward_length", cfg["n_ff"])
    w.add_u32(f"{a}.attention.head_count", cfg["n_head"])
    w.add_u32(f"{a}.attention.head_count_kv", cfg["n_head_kv"])
    w.add_u32(f"{a}.rope.dimension_count", cfg["n_embd"] // cfg["n_head"])
    w.add_f32(f"{a}.rope.freq_base", cfg["rope_base"])
    w.add_f32(f"{a}.attention.layer_norm_rms_epsilon", cfg["eps"])
    w.add_bool(f"{a}.attention.causal", False)
    if a == "llada":
        w.add_u32(f"{a}.vocab_size", n_vocab)
        w.add_bool("diffusion.shift_logits", False)


def add_tokenizer(w, tokens, types, merges):
    ids = {t: i for i, t in enumerate(tokens)}
    w.add_string("tokenizer.ggml.model", "gpt2")
    w.add_string("tokenizer.ggml.pre", "qwen2")
    w.add_array("tokenizer.ggml.tokens", tokens, "string")
    w.add_array("tokenizer.ggml.token_type", types, "i32")
    w.add_array("tokenizer.ggml.merges", merges, "string")
    w.add_u32("tokenizer.ggml.bos_token_id", ids["<|endoftext|>"])
    w.add_u32("tokenizer.ggml.eos_token_id", ids["<|endoftext|>"])
    w.add_u32("tokenizer.ggml.eot_token_id", ids["<|im_end|>"])
    w.add_u32("tokenizer.ggml.padding_token_id", ids["<|endoftext|>"])
    w.add_u32("tokenizer.ggml.mask_token_id", ids["<|mask|>"])
    w.add_bool("tokenizer.ggml.add_bos_token", False)
    w.add_string("tokenizer.chat_template", CHAT_TEMPLATE)


def write_model(path, cfg, wtype, opts, vocab):
    tokens, types, merges = vocab
    w = GGUFWriter(path, cfg["arch"])
    if "alignment" in opts:
        w.add_u32("general.alignment", opts["alignment"])
    add_hparams(w, cfg, len(tokens), wtype, os.path.basename(path)[:-5])
    add_tokenizer(w, tokens, types, merges)
    for name, arr in make_weights(cfg, len(tokens), cfg["seed"]).items():
        w.add_tensor(name, arr, wtype if arr.ndim == 2 else "F32")
    w.write()


def main(out_dir=OUT_DIR):
    os.makedirs(out_dir, exist_ok=True)
    vocab = build_vocab()
    for fname, (cfg, wtype, opts) in MODELS.items():
        path = os.path.join(out_dir, fname)
        write_model(path, cfg, wtype, opts, vocab)
        print(f"wrote {path} ({os.path.getsize(path)} bytes)")


if __name__ == "__main__":
    main(*sys.argv[1:2])
