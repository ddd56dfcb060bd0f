"""Golden logits of the bundled model for the engine-vs-PyTorch check.

Usage: dump_logits.py --gguf models/default.gguf --ckpt final.pt --tokenizer tokenizer.json --out tests/data/bundled
The PyTorch model is loaded from the checkpoint and its weights are replaced by the GGUF file's (dequantized,
q/k rows un-permuted), so its logits are what the engine must compute from the file. For each of 3 fixed
token sequences it writes NAME.f32: little-endian float32 logits of the last `rows` positions, row-major
(rows x n_vocab), and index.json with the token ids, row range and shape. The NumPy float64 forward of
export_gguf.py (ggml NORM rope on the file's weights) is checked against them first.
"""
import argparse
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chat_format  # noqa: E402
from bpe import Tokenizer  # noqa: E402
from export_gguf import load_model, numpy_forward, tensors_of, GGUFReader  # noqa: E402

MASK_ID = 3


def unpermute(w, n_head):
    """Inverse of gguf_writer.llada_permute on the rows of (out, in)."""
    out = w.shape[0]
    hd = out // n_head
    return w.reshape(n_head, hd // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def load_gguf_weights(model, r):
    """Copy the file's weights into the model (names through export_gguf.tensors_of's order)."""
    torch_names = ["embed.weight"]
    for i in range(model.c.layers):
        p = "blocks.%d." % i
        torch_names += [p + n + ".weight" for n in ("attn_norm", "q", "k", "v", "o", "ffn_norm", "gate", "up",
                                                    "down")]
    torch_names += ["norm.weight", "out.weight"]
    sd = model.state_dict()
    for tname, (gname, _) in zip(torch_names, tensors_of(model)):
        w = r.tensor(gname)
        if gname.endswith(("attn_q.weight", "attn_k.weight")):
            w = unpermute(w, model.c.heads)
        sd[tname] = torch.from_numpy(np.ascontiguousarray(w, dtype=np.float32))
    model.load_state_dict(sd)


def sequences(tok, data_path):
    conv = json.loads(open(data_path).readline())
    first = next(i for i, m in enumerate(conv["messages"]) if m["role"] == "assistant")
    prompt = tok.encode(chat_format.render_prompt(conv, first))
    answer = tok.encode(chat_format.assistant_content(conv["messages"][first]) + chat_format.IM_END)
    canvas = prompt + [MASK_ID] * 96
    partial = prompt + [a if i % 3 == 0 else MASK_ID for i, a in enumerate(answer)]
    partial += [MASK_ID] * (96 - len(answer))
    short = tok.encode(chat_format.render_prompt({"system": "", "tools": [], "messages": [
        {"role": "user", "content": "Hi!"}]}, 1)) + [MASK_ID] * 16
    return {"canvas_masked": canvas, "canvas_partial": partial, "short_chat": short}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gguf", required=True)
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--tokenizer", required=True)
    ap.add_argument("--data", required=True, help="heldout.jsonl (first conversation is used)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--rows", type=int, default=48, help="logit rows kept per sequence (the last ones)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    model, tok, r = load_model(a.ckpt), Tokenizer.load(a.tokenizer), GGUFReader(a.gguf)
    load_gguf_weights(model, r)
    index = {"gguf": os.path.basename(a.gguf), "dtype": "float32 little-endian, row-major (rows, n_vocab)",
             "n_vocab": model.c.vocab, "sequences": {}}
    for name, ids in sequences(tok, a.data).items():
        with torch.no_grad():
            logits = model(torch.tensor([ids]))[0].double().numpy()
        ref = numpy_forward(r, np.array(ids))
        err = float(np.abs(ref - logits).max() / np.abs(ref).max())
        assert err < 1e-4, (name, err)
        lo = max(0, len(ids) - a.rows)
        logits[lo:].astype("<f4").tofile(os.path.join(a.out, name + ".f32"))
        index["sequences"][name] = {"ids": ids, "rows": [lo, len(ids)], "shape": [len(ids) - lo, model.c.vocab],
                                    "file": name + ".f32", "max_rel_err_torch_vs_numpy64": err}
        print("%s: %d tokens, rows %d..%d, torch vs numpy rel err %.2e" % (name, len(ids), lo, len(ids), err))
    with open(os.path.join(a.out, "index.json"), "w") as f:
        json.dump(index, f, indent=1)


if __name__ == "__main__":
    main()
