"""How fast model.py with train.py's loss learns to copy: the answer is a span of 6 random tokens (padded to 8)
from a prompt of 0..--context random tokens. --mode end puts the span at the end of the prompt (its place is fixed
relative to the answer); --mode marker puts it at a random place after a marker token (found only by content).
Prints the loss and the masked cross-entropy every 100 steps.

Usage: copy_toy.py [--mode end|marker] [--context 300] [--steps 600] [--lr 1e-3] [--rope-theta 10000] [--layers 2]
       [--start-context 30]
"""
import argparse
import random

import torch

import train
from model import LLaDA, Config

VOCAB, SPAN, RESP, MARKER = 300, 6, 8, 5


def example(rng, mode, context):
    span = [rng.randrange(10, VOCAB) for _ in range(SPAN)]
    n = rng.randint(0, context)
    noise = [rng.randrange(10, VOCAB) for _ in range(n)]
    if mode == "end":
        prompt = [1] + noise + span + [2]
    else:
        at = rng.randint(0, n)
        prompt = [1] + noise[:at] + [MARKER] + span + noise[at:] + [2]
    return prompt, span + [0] * (RESP - SPAN)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=["end", "marker"], default="end")
    ap.add_argument("--context", type=int, default=300)
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--start-context", type=int, default=0,
                    help="curriculum: the context grows from this to --context over the first half of the steps")
    ap.add_argument("--rope-theta", type=float, default=10000.0)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--loss", choices=["inv_t", "mean"], default="inv_t")
    ap.add_argument("--no-bf16", dest="bf16", action="store_false")
    a = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(a.threads)
    model = LLaDA(Config(vocab=VOCAB, dim=128, layers=a.layers, heads=4, ffn=256, tie=True,
                          rope_theta=a.rope_theta))
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, betas=(0.9, 0.95), weight_decay=0.01)
    rng = random.Random(0)
    for step in range(a.steps + 1):
        context = a.context
        if a.start_context:
            context = int(a.start_context + (a.context - a.start_context) * min(1.0, step / (a.steps / 2)))
        batch = [example(rng, a.mode, context) for _ in range(a.batch)]
        tokens, plen, tlen = train.collate(batch, list(range(a.batch)))
        gen = torch.Generator().manual_seed(step)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.bf16):
            loss, ce, _ = train.diffusion_loss(model, tokens, plen, tlen, RESP, gen, weighting=a.loss)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 100 == 0:
            print("step %d loss %.3f masked CE %.3f" % (step, loss.item(), ce.item()), flush=True)


if __name__ == "__main__":
    main()
