"""How fast model.py with train.py's loss learns to copy: the answer is a span of 6 random tokens (padded to 8)
from a prompt of 0..--context random tokens. --mode end puts the span at the end of the prompt (its place is fixed
relative to the answer); --mode marker puts it at a random place after a marker token (found only by content);
--mode key puts it after a random key token and starts the answer with that key (copy what follows the key, the
skill the schema-guided decoder needs for argument values); --mode kv puts 1..4 key-span pairs (spans of 1..6
tokens, each closed by a separator token) among the random tokens and asks for a random subset of the keys in a
random order, each key given and followed by a masked slot of 7 positions (the span, the separator, then padding),
as the decoder asks for the values of a call whose keys it has written (find the right pair among several). Prints the loss and the masked cross-entropy (mean of
the last 100 steps) every 100 steps. --save writes the model as a checkpoint that train.py --init starts from (a
copying warm-up); give it the real model's shape (--dim 256 --layers 6 --heads 4 --ffn 704 --vocab 2560).

Usage: copy_toy.py [--mode end|marker|key|kv] [--context 300] [--steps 600] [--lr 1e-3] [--rope-theta 10000]
       [--layers 2] [--start-context 30] [--dim 128 --heads 4 --ffn 256 --vocab 300]
       [--mimetic 0.7 0.7 0.7 -0.7] [--save WARM.pt] [--init WARM.pt] [--device cpu|cuda] [--seed 0]
"""
import argparse
import random

import torch

import train
from model import LLaDA, Config, mimetic_init

SPAN, RESP, MARKER = 6, 8, 5
KV_PAIRS, KV_SLOT, KV_SEP, KV_PAD = 4, 7, 6, 7  # kv mode: pairs at most, slot width, separator and padding ids
KV_RESP = KV_PAIRS * (1 + KV_SLOT)


def draw(rng, vocab, avoid):
    """A random token id of 10..vocab-1 not in avoid."""
    while True:
        t = rng.randrange(10, vocab)
        if t not in avoid:
            return t


def kv_example(rng, context, vocab):
    """(prompt, answer, slot positions in the answer): the kv mode's example."""
    n_pairs = rng.randint(1, KV_PAIRS)
    keys = rng.sample(range(10, vocab), n_pairs)
    spans = [[draw(rng, vocab, keys) for _ in range(rng.randint(1, KV_SLOT - 1))] for _ in keys]
    noise = [t for t in (rng.randrange(10, vocab) for _ in range(rng.randint(0, context))) if t not in keys]
    cuts = sorted(rng.randint(0, len(noise)) for _ in keys)
    order = list(range(n_pairs))
    rng.shuffle(order)
    prompt, last = [1], 0
    for cut, k in zip(cuts, order):
        prompt += noise[last:cut] + [keys[k]] + spans[k] + [KV_SEP]
        last = cut
    prompt += noise[last:] + [2]
    asked = rng.sample(range(n_pairs), rng.randint(1, n_pairs))
    answer, slots = [], []
    for k in asked:
        answer.append(keys[k])
        slots.extend(range(len(answer), len(answer) + KV_SLOT))
        answer += spans[k] + [KV_SEP] + [KV_PAD] * (KV_SLOT - 1 - len(spans[k]))
    return prompt, answer + [0] * (KV_RESP - len(answer)), slots


def example(rng, mode, context, vocab):
    span = [rng.randrange(10, vocab) for _ in range(SPAN)]
    n = rng.randint(0, context)
    noise = [rng.randrange(10, vocab) for _ in range(n)]
    if mode == "end":
        prompt = [1] + noise + span + [2]
    elif mode == "marker":
        at = rng.randint(0, n)
        prompt = [1] + noise[:at] + [MARKER] + span + noise[at:] + [2]
    else:
        key = rng.randrange(10, vocab)
        noise = [t for t in noise if t != key]
        at = rng.randint(0, len(noise))
        prompt = [1] + noise[:at] + [key] + span + noise[at:] + [2]
        return prompt, [key] + span + [0] * (RESP - SPAN - 1)
    return prompt, span + [0] * (RESP - SPAN)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=["end", "marker", "key", "kv"], default="end")
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
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--ffn", type=int, default=256)
    ap.add_argument("--vocab", type=int, default=300)
    ap.add_argument("--mimetic", type=float, nargs=4, metavar=("QK_A", "QK_B", "VO_A", "VO_B"),
                    help="mimetic initialisation of the attention blocks (model.mimetic_init)")
    ap.add_argument("--device", default="cpu", help="torch device to train on (cpu, cuda); --save writes CPU tensors")
    ap.add_argument("--seed", type=int, default=0,
                    help="seed of the random examples and masks (default 0; a further stage from --init should take "
                         "another one, or it sees the examples of the stage before again)")
    ap.add_argument("--save", help="write the trained model here as a train.py --init checkpoint")
    ap.add_argument("--init", help="start from this --save checkpoint (a second warm-up stage at a longer context); "
                                   "its shape replaces --dim/--layers/--heads/--ffn/--vocab")
    a = ap.parse_args()
    torch.manual_seed(a.seed)
    torch.set_num_threads(a.threads)
    if a.init:
        ck = torch.load(a.init, map_location="cpu")
        model = LLaDA(Config(**ck["config"]))
        model.load_state_dict(ck["model"])
        a.vocab = model.c.vocab
    else:
        model = LLaDA(Config(vocab=a.vocab, dim=a.dim, layers=a.layers, heads=a.heads, ffn=a.ffn, tie=True,
                             rope_theta=a.rope_theta))
    if a.mimetic and not a.init:
        mimetic_init(model, tuple(a.mimetic[:2]), tuple(a.mimetic[2:]))
    model = model.to(a.device)
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, betas=(0.9, 0.95), weight_decay=0.01)
    rng = random.Random(a.seed)
    recent = []
    for step in range(a.steps + 1):
        context = a.context
        if a.start_context:
            context = int(a.start_context + (a.context - a.start_context) * min(1.0, step / (a.steps / 2)))
        only, resp = None, RESP
        if a.mode == "kv":
            full = [kv_example(rng, context, a.vocab) for _ in range(a.batch)]
            batch = [(p, r) for p, r, _ in full]
            resp = KV_RESP
        else:
            batch = [example(rng, a.mode, context, a.vocab) for _ in range(a.batch)]
        tokens, plen, tlen = train.collate(batch, list(range(a.batch)))
        if a.mode == "kv":  # only the value slots are masked: the keys are given, as the decoder writes them
            only = torch.zeros(tokens.shape, dtype=torch.bool)
            for b, (p, _, slots) in enumerate(full):
                only[b, [len(p) + j for j in slots]] = True
        gen = torch.Generator().manual_seed(step + 1000003 * a.seed)
        with torch.autocast(torch.device(a.device).type, dtype=torch.bfloat16, enabled=a.bf16):
            loss, ce, _ = train.diffusion_loss(model, tokens, plen, tlen, resp, gen, weighting=a.loss, only=only)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        recent = recent[-99:] + [(loss.item(), ce.item())]
        if step % 100 == 0:
            print("step %d context %d loss %.3f masked CE %.3f" % (
                step, context, sum(r[0] for r in recent) / len(recent), sum(r[1] for r in recent) / len(recent)),
                flush=True)
        if a.save and (step % 500 == 0 or step == a.steps):
            torch.save({"model": train.cpu_state(model), "config": model.c.to_dict(), "state": {"step": step}}, a.save)


if __name__ == "__main__":
    main()
