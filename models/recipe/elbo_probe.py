"""Is a wrong call the decoder's fault or the model's? For each wrong call of a `dloop eval --verbose` run, the gold
answer and the decoded one are scored by the model's own likelihood: a Monte-Carlo estimate of the masked-diffusion
lower bound (LLaDA's conditional likelihood estimate), E_t [ sum over masked answer tokens of log p / t ], with the
same mask draws for both answers (answers padded with end-of-text to the same length, 96 tokens at least). When the
gold answer scores higher, the decoder missed a call the model prefers (a search error); when the decoded one does,
the model itself prefers the wrong call. Reported: how often the gold answer scores higher.

    build/dloop eval --no-free --effort high --ground --verbose > eval.txt
    /usr/bin/python3 models/recipe/elbo_probe.py --ckpt $WORK/final.pt --tokenizer $WORK/tokenizer.json \\
        --verbose-file eval.txt --row grounded-high

(--ckpt: any checkpoint of the model's shape, for its config; the weights are the GGUF file's.)
"""
import argparse
import json
import os
import re
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chat_format  # noqa: E402
from bpe import Tokenizer  # noqa: E402
from dump_logits import load_gguf_weights  # noqa: E402
from export_gguf import load_model, GGUFReader  # noqa: E402

MASK_ID, EOT_ID = 3, 0
HERE = os.path.dirname(os.path.abspath(__file__))


def answer_ids(tok, call):
    return tok.encode(chat_format.render_tool_call(call) + chat_format.IM_END)


def bound(model, prompt, answer, draws, ts):
    """The masked-diffusion bound of answer given prompt, one forward pass per mask draw."""
    total = 0.0
    seq = prompt + answer
    for u, t in zip(draws, ts):
        pos = [len(prompt) + i for i in range(len(answer)) if u[i] < t]
        if not pos:
            continue
        x = torch.tensor([seq])
        x[0, pos] = MASK_ID
        with torch.no_grad():
            lp = torch.log_softmax(model(x)[0].float(), -1)
        total += sum(lp[p, seq[p]].item() for p in pos) / t
    return total / len(ts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gguf", default=os.path.join(HERE, "../default.gguf"))
    ap.add_argument("--ckpt", required=True, help="a checkpoint of the same shape (its config is used)")
    ap.add_argument("--tokenizer", required=True)
    ap.add_argument("--data", default=os.path.join(HERE, "../../tests/data/toolcall/heldout.jsonl"))
    ap.add_argument("--verbose-file", required=True, help="the output of dloop eval --verbose")
    ap.add_argument("--row", default="grounded-high", help="the eval row whose wrong calls are scored")
    ap.add_argument("--samples", type=int, default=16, help="mask draws per answer (t stratified over (0, 1))")
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    model, tok = load_model(a.ckpt), Tokenizer.load(a.tokenizer)
    load_gguf_weights(model, GGUFReader(a.gguf))
    turns = open(a.data).read().splitlines()
    text = open(a.verbose_file).read()
    # A wrong call: the gold is a call and the decoder wrote one (wrong answers and stop misses are left out).
    pattern = re.escape(a.row) + r" line (\d+): want (\{.*)\n\s+got\s+([a-z0-9_]+) (\{.*)"
    gen = torch.Generator().manual_seed(0)
    ts = [(k + 0.5) / a.samples for k in range(a.samples)]
    gold_higher = calls = 0
    for m in re.finditer(pattern, text):
        line = int(m.group(1))
        gold = json.loads(m.group(2))
        got = {"name": m.group(3), "arguments": json.loads(m.group(4))}
        turn = json.loads(turns[line - 1])
        prompt = tok.encode(chat_format.heldout_prompt(turn))
        ga, ba = answer_ids(tok, gold), answer_ids(tok, got)
        n = max(96, len(ga), len(ba))
        ga += [EOT_ID] * (n - len(ga))
        ba += [EOT_ID] * (n - len(ba))
        draws = [torch.rand(n, generator=gen).tolist() for _ in ts]
        sg, sb = bound(model, prompt, ga, draws, ts), bound(model, prompt, ba, draws, ts)
        calls += 1
        gold_higher += sg > sb
        print("line %d: gold %.1f, decoded %.1f%s" % (line, sg, sb, "  (gold higher)" if sg > sb else ""), flush=True)
    print("wrong calls: %d; the model's bound is higher for the gold call in %d (%.1f%%)"
          % (calls, gold_higher, 100.0 * gold_higher / max(calls, 1)))


if __name__ == "__main__":
    main()
