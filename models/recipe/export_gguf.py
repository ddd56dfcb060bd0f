"""Export a training checkpoint to GGUF in llama.cpp's `llada` conventions, and check the file.

Usage: export_gguf.py --ckpt final.pt --tokenizer tokenizer.json --out models/default.gguf [--type F16|Q8_0]
The check reads the file back, compares keys and shapes, and runs a NumPy forward pass with ggml's NORM
(adjacent-pair) RoPE on the file's weights against the PyTorch model (rotate-half RoPE on unpermuted weights).
"""
import argparse
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "scripts"))
from gguf_writer import GGUFWriter, llada_permute  # noqa: E402
from gguf_reader import GGUFReader  # noqa: E402

import chat_format  # noqa: E402
from bpe import Tokenizer  # noqa: E402
from model import LLaDA, Config  # noqa: E402

ARCH = "llada"
FILE_TYPE = {"F32": 0, "F16": 1, "Q8_0": 7}


def load_model(ckpt_path):
    ck = torch.load(ckpt_path, map_location="cpu")
    model = LLaDA(Config(**ck["config"]))
    model.load_state_dict(ck["model"])
    return model.eval()


def tensors_of(model):
    """(gguf name, numpy array in (out, in) order) in file order; q/k rows permuted for NORM rope."""
    c = model.c
    sd = {k: v.detach().float().numpy() for k, v in model.state_dict().items()}
    out = [("token_embd.weight", sd["embed.weight"])]
    for i in range(c.layers):
        p = "blocks.%d." % i
        out += [
            ("blk.%d.attn_norm.weight" % i, sd[p + "attn_norm.weight"]),
            ("blk.%d.attn_q.weight" % i, llada_permute(sd[p + "q.weight"], c.heads)),
            ("blk.%d.attn_k.weight" % i, llada_permute(sd[p + "k.weight"], c.heads)),
            ("blk.%d.attn_v.weight" % i, sd[p + "v.weight"]),
            ("blk.%d.attn_output.weight" % i, sd[p + "o.weight"]),
            ("blk.%d.ffn_norm.weight" % i, sd[p + "ffn_norm.weight"]),
            ("blk.%d.ffn_gate.weight" % i, sd[p + "gate.weight"]),
            ("blk.%d.ffn_up.weight" % i, sd[p + "up.weight"]),
            ("blk.%d.ffn_down.weight" % i, sd[p + "down.weight"]),
        ]
    out += [("output_norm.weight", sd["norm.weight"]), ("output.weight", sd["out.weight"])]
    return out


def trained_member_order(ckpt_path):
    """The --member-order a train.py checkpoint was trained with ("schema" when it does not say)."""
    ck = torch.load(ckpt_path, map_location="cpu")
    return (ck.get("state", {}).get("args") or {}).get("member_order", "schema")


def add_hparams(w, c, ftype, context_length, string_slot=0, member_order="schema", schema_style=None):
    head_dim = c.dim // c.heads
    w.add_string("general.name", "dloop-default")
    w.add_u32("general.file_type", FILE_TYPE[ftype])
    w.add_u32(ARCH + ".context_length", context_length)
    w.add_u32(ARCH + ".embedding_length", c.dim)
    w.add_u32(ARCH + ".block_count", c.layers)
    w.add_u32(ARCH + ".feed_forward_length", c.ffn)
    w.add_u32(ARCH + ".attention.head_count", c.heads)
    w.add_u32(ARCH + ".attention.head_count_kv", c.heads)
    w.add_u32(ARCH + ".rope.dimension_count", head_dim)
    w.add_f32(ARCH + ".rope.freq_base", c.rope_theta)
    w.add_f32(ARCH + ".attention.layer_norm_rms_epsilon", c.eps)
    if string_slot:
        # The string slot width the model was trained with (train.py --string-width); the engine's
        # tool calls use it unless a request sets string_slot_tokens.
        w.add_u32("dloop.tool_call.string_slot_tokens", string_slot)
    if member_order != "schema":
        # The order the model's tool calls list their arguments in (train.py --member-order); the engine's
        # schema-guided decoder lays calls out the same way (docs/tool-calls.md "Member order").
        w.add_string("dloop.tool_call.member_order", member_order)
    if schema_style:
        w.add_string("dloop.tool_call.schema_style", schema_style)
    w.add_bool(ARCH + ".attention.causal", False)
    w.add_u32(ARCH + ".vocab_size", c.vocab)
    w.add_bool("diffusion.shift_logits", False)


def add_tokenizer(w, tok):
    n_special = len(chat_format.SPECIAL_TOKENS)
    w.add_string("tokenizer.ggml.model", "gpt2")
    w.add_string("tokenizer.ggml.pre", "qwen2")
    w.add_array("tokenizer.ggml.tokens", tok.tokens, "string")
    w.add_array("tokenizer.ggml.token_type", [3 if i < n_special else 1 for i in range(len(tok.tokens))], "i32")
    w.add_array("tokenizer.ggml.merges", ["%s %s" % m for m in tok.merges], "string")
    ids = {s: i for i, s in enumerate(chat_format.SPECIAL_TOKENS)}
    w.add_u32("tokenizer.ggml.bos_token_id", ids[chat_format.EOT])
    w.add_u32("tokenizer.ggml.eos_token_id", ids[chat_format.EOT])
    w.add_u32("tokenizer.ggml.eot_token_id", ids[chat_format.IM_END])
    w.add_u32("tokenizer.ggml.padding_token_id", ids[chat_format.EOT])
    w.add_u32("tokenizer.ggml.mask_token_id", ids[chat_format.MASK])
    w.add_bool("tokenizer.ggml.add_bos_token", False)
    w.add_bool("tokenizer.ggml.add_eos_token", False)
    w.add_string("tokenizer.chat_template", chat_format.CHAT_TEMPLATE)


def export(model, tok, path, ftype="F16", context_length=1024, string_slot=0, member_order="schema", schema_style=None):
    assert model.c.vocab == len(tok.tokens)
    w = GGUFWriter(path, ARCH)
    add_hparams(w, model.c, ftype, context_length, string_slot, member_order, schema_style)
    add_tokenizer(w, tok)
    for name, arr in tensors_of(model):
        w.add_tensor(name, arr, "F32" if arr.ndim == 1 else ftype)
    w.write()


# ---------------------------------------------------------------------------------------------- check
def rmsnorm(x, w, eps):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w


def rope_norm(x, theta):
    """x: (L, H, D); ggml NORM rope: pairs (2i, 2i+1)."""
    L, H, D = x.shape
    inv = theta ** (-np.arange(0, D, 2) / D)
    ang = np.arange(L)[:, None] * inv[None, :]
    cos, sin = np.cos(ang)[:, None, :], np.sin(ang)[:, None, :]
    a, b = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = a * cos - b * sin
    out[..., 1::2] = a * sin + b * cos
    return out


def numpy_forward(r, ids):
    """Logits (L, vocab) in float64 from a GGUF file's weights, the way the engine computes them."""
    g = lambda n: r.tensor(n).astype(np.float64)  # noqa: E731
    kv = r.kv
    H = kv[ARCH + ".attention.head_count"]
    eps, theta = kv[ARCH + ".attention.layer_norm_rms_epsilon"], kv[ARCH + ".rope.freq_base"]
    x = g("token_embd.weight")[ids]
    L, D = x.shape
    for i in range(kv[ARCH + ".block_count"]):
        p = "blk.%d." % i
        h = rmsnorm(x, g(p + "attn_norm.weight"), eps)
        q = rope_norm((h @ g(p + "attn_q.weight").T).reshape(L, H, -1), theta)
        k = rope_norm((h @ g(p + "attn_k.weight").T).reshape(L, H, -1), theta)
        v = (h @ g(p + "attn_v.weight").T).reshape(L, H, -1)
        s = np.einsum("qhd,khd->hqk", q, k) / np.sqrt(q.shape[-1])
        s = np.exp(s - s.max(-1, keepdims=True))
        s /= s.sum(-1, keepdims=True)
        a = np.einsum("hqk,khd->qhd", s, v).reshape(L, D)
        x = x + a @ g(p + "attn_output.weight").T
        h = rmsnorm(x, g(p + "ffn_norm.weight"), eps)
        gate, up = h @ g(p + "ffn_gate.weight").T, h @ g(p + "ffn_up.weight").T
        x = x + (gate / (1 + np.exp(-gate)) * up) @ g(p + "ffn_down.weight").T
    return rmsnorm(x, g("output_norm.weight"), eps) @ g("output.weight").T


def check(model, tok, path, ftype):
    r = GGUFReader(path)
    c = model.c
    assert r.kv["general.architecture"] == ARCH
    assert r.kv["tokenizer.ggml.tokens"] == tok.tokens
    assert r.kv["tokenizer.ggml.mask_token_id"] == chat_format.SPECIAL_TOKENS.index(chat_format.MASK)
    expect = {name: tuple(reversed(arr.shape)) for name, arr in tensors_of(model)}
    got = {n: tuple(t.ne) for n, t in r.tensors.items()}
    assert got == expect, (got, expect)
    assert r.tensors["token_embd.weight"].ne == (c.dim, c.vocab)
    ids = tok.encode(chat_format.render_prompt({"system": "", "tools": [], "messages": [
        {"role": "user", "content": "Hello there, what can you do?"}]}, 1)) + [3] * 16
    ref = numpy_forward(r, np.array(ids))
    with torch.no_grad():
        out = model(torch.tensor([ids]))[0].double().numpy()
    err = np.abs(ref - out).max() / max(1e-9, np.abs(out).max())
    print("check: %d tensors, %d keys, max rel logit diff (%s vs torch f32) %.2e" % (
        len(r.tensors), len(r.kv), ftype, err))
    assert err < (1e-5 if ftype == "F32" else 5e-2), err
    return err


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--tokenizer", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--type", default="F16", choices=sorted(FILE_TYPE))
    ap.add_argument("--context-length", type=int, default=1024)
    ap.add_argument("--string-slot", type=int, default=0,
                    help="write dloop.tool_call.string_slot_tokens: the train.py --string-width the model was "
                         "trained with (default 0: none, the engine then uses 24)")
    ap.add_argument("--member-order", choices=["schema", "mention"],
                    help="write dloop.tool_call.member_order (when not schema): the train.py --member-order the "
                         "model was trained with (default: what the checkpoint records, else schema)")
    ap.add_argument("--schema-style", choices=["compact"],
                    help="write dloop.tool_call.schema_style (model v2: compact tool lines; default: none, full)")
    a = ap.parse_args()
    model, tok = load_model(a.ckpt), Tokenizer.load(a.tokenizer)
    order = a.member_order or trained_member_order(a.ckpt)
    export(model, tok, a.out, a.type, a.context_length, a.string_slot, order, a.schema_style)
    if order != "schema":
        print("member order:", order)
    print("wrote %s (%.1f MB)" % (a.out, os.path.getsize(a.out) / 1e6))
    check(model, tok, a.out, a.type)


if __name__ == "__main__":
    main()
