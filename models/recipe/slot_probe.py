"""Re-decide the values of decoded calls by scoring conversation spans in the decoder's slot layout.

For each call turn of a `dloop eval --verbose` row whose decoded call has the gold tool, each top-level string or
number member is re-decided: the call is laid out as the schema-guided decoder's canvas (train.py's slotted layout:
each string value then single-space tokens to 24 positions, each number to 12), the member's slot is masked, and
the spans of the conversation (1-6 words, punctuation stripped; numbers for number slots) plus the decoded value
are scored by one pass of mean-field log-probability over the whole slot (content, closing quote, padding). The
top k are then rescored by the masked-diffusion bound restricted to the slot (S mask ratios, the same draws for
every candidate). Every candidate fills the same positions, so a short value cannot win by having fewer tokens.
Reported: arguments exact of the decoded calls, of the mean-field choice and of the bound choice.

    build/dloop eval --limit 120 --effort low --no-free --verbose > eval.txt
    /usr/bin/python3 models/recipe/slot_probe.py --tokenizer $WORK/tokenizer.json --verbose-file eval.txt
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
from export_gguf import GGUFReader  # noqa: E402
from model import LLaDA, Config  # noqa: E402
from train import slotted_call_ids  # noqa: E402

MASK_ID, EOT_ID = 3, 0
HERE = os.path.dirname(os.path.abspath(__file__))
STRIP = "\"'.,;:!?()[]{}"


def candidates(turn, kind):
    """Spans of the conversation's user and tool messages that could be the value of a slot of this kind."""
    out = []
    for m in turn["messages"]:
        if m["role"] not in ("user", "tool"):
            continue
        text = m["content"]
        if kind == "number":
            for s in re.findall(r"-?\d+(?:\.\d+)?", text):
                out.append(float(s) if "." in s else int(s))
            continue
        words = text.split()
        for i in range(len(words)):
            for n in range(1, 7):
                if i + n > len(words):
                    break
                s = " ".join(words[i:i + n]).strip(STRIP)
                if s:
                    out.append(s)
    seen, uniq = set(), []
    for c in out:
        key = json.dumps(c)
        if key not in seen:
            seen.add(key)
            uniq.append(c)
    return uniq


def slot_layout(tok, call, member):
    """(ids, positions of `member`'s slot) of the call in the slotted layout, EOT-padded to 96 at least. The
    layout is tokenised run by run, so the slots before `member` are the same with or without the members after it."""
    keys = list(call["arguments"])
    upto = keys[:keys.index(member)]
    before, through = [], []
    for part, slots in ((upto, before), (upto + [member], through)):
        slotted_call_ids(tok, {"name": call["name"], "arguments": {k: call["arguments"][k] for k in part}},
                         slots=slots)
    ids = slotted_call_ids(tok, call)
    n = max(96, len(ids))
    return ids + [EOT_ID] * (n - len(ids)), through[len(before):]


def score_members(model, tok, prompt, call, member, kind, turn, k, ts, gen, batch=16):
    """(mean-field choice, bound choice) for one member."""
    ids, pos = slot_layout(tok, call, member)
    width = len(pos)
    space = tok.encode(" ")[0]
    x = torch.tensor([prompt + ids])
    off = len(prompt)
    x[0, [off + p for p in pos]] = MASK_ID
    with torch.no_grad():
        lp = torch.log_softmax(model(x)[0].float(), -1)
    cands = candidates(turn, kind)
    decoded = call["arguments"][member]
    if json.dumps(decoded) not in {json.dumps(c) for c in cands}:
        cands.append(decoded)
    scored = []
    for c in cands:
        body = tok.encode(chat_format.dumps(c)[1:] if kind == "string" else chat_format.dumps(c))
        if len(body) > width:
            continue
        body = body + [space] * (width - len(body))
        s = sum(lp[off + p, t].item() for p, t in zip(pos, body))
        scored.append((s, c, body))
    if not scored:
        return decoded, decoded
    scored.sort(key=lambda r: -r[0])
    mf = scored[0][1]
    top = scored[:k]
    # The decoded value is always rescored: the bound decides between it and the best other spans.
    top += [r for r in scored[k:] if json.dumps(r[1]) == json.dumps(decoded)]
    draws = [torch.rand(width, generator=gen).tolist() for _ in ts]
    seqs, meta = [], []
    for ci, (_, c, body) in enumerate(top):
        full = list(prompt + ids)
        for p, t in zip(pos, body):
            full[off + p] = t
        for u, t in zip(draws, ts):
            masked = [j for j in range(width) if u[j] < t]
            if not masked:
                continue
            seq = list(full)
            for j in masked:
                seq[off + pos[j]] = MASK_ID
            seqs.append(seq)
            meta.append((ci, t, [(off + pos[j], full[off + pos[j]]) for j in masked]))
    totals = [0.0] * len(top)
    for b in range(0, len(seqs), batch):
        with torch.no_grad():
            lps = torch.log_softmax(model(torch.tensor(seqs[b:b + batch])).float(), -1)
        for r, (ci, t, cells) in enumerate(meta[b:b + batch]):
            totals[ci] += sum(lps[r, p, v].item() for p, v in cells) / t
    best = max(range(len(top)), key=lambda i: totals[i])
    return mf, top[best][1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gguf", default=os.path.join(HERE, "../default.gguf"))
    ap.add_argument("--tokenizer", required=True)
    ap.add_argument("--data", default=os.path.join(HERE, "../../tests/data/toolcall/heldout.jsonl"))
    ap.add_argument("--verbose-file", required=True, help="the output of dloop eval --verbose")
    ap.add_argument("--row", default="schema-guided-low", help="the eval row whose calls are re-decided")
    ap.add_argument("--limit", type=int, default=120)
    ap.add_argument("--k", type=int, default=4, help="candidates rescored by the bound")
    ap.add_argument("--samples", type=int, default=8, help="mask ratios of the bound")
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    r = GGUFReader(a.gguf)
    hp = {k.split(".", 1)[1]: v for k, v in r.kv.items() if k.startswith("llada.")}
    c = Config(vocab=hp["vocab_size"], dim=hp["embedding_length"], layers=hp["block_count"],
               heads=hp["attention.head_count"], ffn=hp["feed_forward_length"], rope_theta=hp["rope.freq_base"],
               tie=True)
    model = LLaDA(c).eval()
    load_gguf_weights(model, r)
    tok = Tokenizer.load(a.tokenizer)
    turns = open(a.data).read().splitlines()[:a.limit]
    text = open(a.verbose_file).read()
    # A wrong call turn: the decoder wrote another call ("got NAME {...}") or an answer ("got answer: ...").
    pattern = re.escape(a.row) + r" line (\d+): want \{.*\n\s+got\s+(?:([a-z0-9_]+) (\{.*)|answer:.*)"
    wrong = {int(m.group(1)): {"name": m.group(2), "arguments": json.loads(m.group(3)) if m.group(2) else {}}
             for m in re.finditer(pattern, text)}
    gen = torch.Generator().manual_seed(0)
    ts = [(i + 0.5) / a.samples for i in range(a.samples)]
    exact = {"decoded": 0, "mean-field": 0, "bound": 0}
    calls = fixed = broken = 0
    for line, raw in enumerate(turns, 1):
        turn = json.loads(raw)
        gold = turn["gold"].get("tool_call")
        if gold is None:
            continue
        calls += 1
        got = wrong.get(line, gold)
        if got.get("name") != gold["name"]:
            continue
        props = next(t for t in turn["tools"] if t["name"] == gold["name"])["parameters"].get("properties", {})
        prompt = tok.encode(chat_format.heldout_prompt(turn))
        mf_call = {"name": got["name"], "arguments": dict(got["arguments"])}
        bd_call = {"name": got["name"], "arguments": dict(got["arguments"])}
        for member, v in got["arguments"].items():
            ty = props.get(member, {}).get("type")
            kind = "string" if ty == "string" and "enum" not in props.get(member, {}) and isinstance(v, str) else \
                "number" if ty in ("integer", "number") and isinstance(v, (int, float)) else None
            if kind is None:
                continue
            mf, bd = score_members(model, tok, prompt, got, member, kind, turn, a.k, ts, gen)
            mf_call["arguments"][member] = mf
            bd_call["arguments"][member] = bd
        for name, cl in (("decoded", got), ("mean-field", mf_call), ("bound", bd_call)):
            exact[name] += cl["arguments"] == gold["arguments"]
        was, now = got["arguments"] == gold["arguments"], bd_call["arguments"] == gold["arguments"]
        fixed += now and not was
        broken += was and not now
        if bd_call["arguments"] != got["arguments"] or mf_call["arguments"] != got["arguments"] or line in wrong:
            print("line %d: gold %s\n  decoded %s\n  mean-field %s\n  bound %s" % (
                line, json.dumps(gold["arguments"]), json.dumps(got["arguments"]),
                json.dumps(mf_call["arguments"]), json.dumps(bd_call["arguments"])), flush=True)
    for name, n in exact.items():
        print("%s: arguments exact %d / %d (%.1f%%)" % (name, n, calls, 100.0 * n / max(calls, 1)))
    print("the bound's choice against the decoded calls: %d fixed, %d broken" % (fixed, broken))


if __name__ == "__main__":
    main()
