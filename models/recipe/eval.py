"""Evaluate a checkpoint on the held-out split with free masked-diffusion decoding.

Usage: eval.py --ckpt final.pt --tokenizer tokenizer.json --data DIR [--limit 200] [--out eval.json]
Every assistant turn of a held-out conversation is decoded from the gold history (prompt rendered as in
docs/model-format.md, canvas = --gen-len masks). Decoding: greedy tokens, confidence = p(token), blocks of
--block positions, threshold parallel decoding (commit every masked position of the active block whose
confidence >= --threshold, else the most confident one), EOS stop (<|im_end|> or <|endoftext|> committed with
everything before it committed).
Metrics: valid_json (gold-call turns whose answer parses as a tool call), tool_choice, args_exact (name and
arguments equal as JSON values), stop_decision (call vs. answer matches gold, over all turns),
forward_passes_per_call, forward_passes_per_turn.
"""
import argparse
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chat_format  # noqa: E402
from bpe import Tokenizer  # noqa: E402
from export_gguf import load_model  # noqa: E402

EOT_ID, IM_END_ID, MASK_ID = 0, 2, 3


@torch.no_grad()
def decode_batch(model, prompts, gen_len, block, threshold):
    """Answers (token lists, up to the stop) and forward passes, for a batch of prompt id lists."""
    B = len(prompts)
    lens = torch.tensor([len(p) + gen_len for p in prompts])
    L = int(lens.max())
    canvas = torch.full((B, L), EOT_ID, dtype=torch.long)
    for b, p in enumerate(prompts):
        canvas[b, :len(p)] = torch.tensor(p)
        canvas[b, len(p):len(p) + gen_len] = MASK_ID
    start = torch.tensor([len(p) for p in prompts])
    done = torch.zeros(B, dtype=torch.bool)
    passes = torch.zeros(B, dtype=torch.long)
    while not bool(done.all()):
        act = (~done).nonzero().flatten()
        hidden = model.hidden(canvas[act], lens[act])
        passes[act] += 1
        for j, b in enumerate(act.tolist()):
            s = int(start[b])
            step_one(canvas[b], model.out(hidden[j, s:s + gen_len]).float(), s, gen_len, block, threshold)
            if answer_finished(canvas[b], int(start[b]), gen_len):
                done[b] = True
    answers = []
    for b in range(B):
        ans = canvas[b, int(start[b]):int(start[b]) + gen_len].tolist()
        answers.append(ans)
    return answers, passes.tolist()


def step_one(row, logits, start, gen_len, block, threshold):
    """Commit tokens in the active block of one canvas row (in place); logits: (gen_len, vocab) of the answer."""
    ans = row[start:start + gen_len]
    masked = (ans == MASK_ID).nonzero().flatten()
    if len(masked) == 0:
        return
    b0 = int(masked[0]) // block * block
    cand = masked[masked < b0 + block]
    probs = logits[cand].softmax(-1)
    conf, tok = probs.max(-1)
    take = conf >= threshold
    if not bool(take.any()):
        take = conf == conf.max()
        take &= take.cumsum(0) == 1
    row[start + cand[take]] = tok[take]


def answer_finished(row, start, gen_len):
    ans = row[start:start + gen_len]
    is_mask = ans == MASK_ID
    if not bool(is_mask.any()):
        return True
    first_mask = int(is_mask.nonzero()[0])
    stops = ((ans == EOT_ID) | (ans == IM_END_ID)).nonzero().flatten()
    if len(stops) and int(stops[0]) < first_mask:
        ans[is_mask] = EOT_ID  # remaining masks become EOS without forward passes
        return True
    return False


def answer_text(tok, ids):
    cut = [i for i, t in enumerate(ids) if t in (EOT_ID, IM_END_ID)]
    return tok.decode(ids[:cut[0]] if cut else ids)


def turns_of(path, limit):
    """(conversation index, prompt text, gold assistant message) for each assistant turn."""
    out = []
    with open(path) as f:
        for ci, line in enumerate(f):
            if ci >= limit:
                break
            conv = json.loads(line)
            for i, m in enumerate(conv["messages"]):
                if m["role"] == "assistant":
                    out.append((ci, chat_format.render_prompt(conv, i), m))
    return out


def score(records):
    calls = [r for r in records if "tool_call" in r["gold"]]
    n = max(1, len(calls))
    valid = sum(r["pred_call"] is not None for r in calls)
    choice = sum(r["pred_call"] is not None and r["pred_call"].get("name") == r["gold"]["tool_call"]["name"]
                 for r in calls)
    exact = sum(r["pred_call"] is not None and r["pred_call"].get("name") == r["gold"]["tool_call"]["name"]
                and r["pred_call"].get("arguments") == r["gold"]["tool_call"]["arguments"] for r in calls)
    stop = sum(r["is_call"] == ("tool_call" in r["gold"]) for r in records)
    return {
        "turns": len(records), "call_turns": len(calls),
        "valid_json": valid / n, "tool_choice": choice / n, "args_exact": exact / n,
        "stop_decision": stop / max(1, len(records)),
        "forward_passes_per_call": sum(r["passes"] for r in calls) / n,
        "forward_passes_per_turn": sum(r["passes"] for r in records) / max(1, len(records)),
    }


def evaluate(model, tok, turns, gen_len, block, threshold, batch, log_every=0):
    records = []
    order = sorted(range(len(turns)), key=lambda i: len(turns[i][1]))
    for s in range(0, len(order), batch):
        chunk = [turns[i] for i in order[s:s + batch]]
        answers, passes = decode_batch(model, [tok.encode(t[1]) for t in chunk], gen_len, block, threshold)
        for (ci, _, gold), ans, np_ in zip(chunk, answers, passes):
            text = answer_text(tok, ans)
            is_call = text.strip().startswith(chat_format.TOOL_CALL)
            try:
                call = chat_format.parse_tool_call(text)
            except ValueError:
                call = None
            records.append({"conv": ci, "gold": gold, "pred": text, "is_call": is_call, "pred_call": call,
                            "passes": np_})
        if log_every and (s // batch) % log_every == 0:
            print("%d/%d %s" % (len(records), len(turns), json.dumps(score(records))), flush=True)
    return records


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--tokenizer", required=True)
    ap.add_argument("--data", required=True, help="directory with heldout.jsonl")
    ap.add_argument("--split", default="heldout")
    ap.add_argument("--limit", type=int, default=200, help="conversations")
    ap.add_argument("--gen-len", type=int, default=96)
    ap.add_argument("--block", type=int, default=32)
    ap.add_argument("--threshold", type=float, default=0.9)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", help="write metrics and per-turn records as JSON")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    model, tok = load_model(a.ckpt), Tokenizer.load(a.tokenizer)
    turns = turns_of(os.path.join(a.data, a.split + ".jsonl"), a.limit)
    t0 = time.time()
    records = evaluate(model, tok, turns, a.gen_len, a.block, a.threshold, a.batch, log_every=5)
    metrics = score(records)
    metrics.update({"split": a.split, "conversations": a.limit, "gen_len": a.gen_len, "block": a.block,
                    "threshold": a.threshold, "seconds": round(time.time() - t0, 1)})
    print(json.dumps(metrics, indent=1))
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"metrics": metrics, "records": records}, f, ensure_ascii=False, indent=0)


if __name__ == "__main__":
    main()
