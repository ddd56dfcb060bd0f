"""Which question does the model answer better: the value under a key, or the key of a value?

For every held-out call with two or more string/number arguments whose values occur in the user's messages, each
assignment of those gold values to their keys (same JSON type only) is written out as the call and scored three
ways by the model: the log-probability of the key tokens with the keys masked and the values given ("k", the
reverse question: what the engine's key check asks), of the value tokens with the values masked and the keys given
("v", the infilling decoder's question), and of both with both masked ("kv"). Reported: how often the gold
assignment scores best under each. The figures of docs/tool-calls.md "Key check" come from

    /usr/bin/python3 models/recipe/key_probe.py --gguf models/default.gguf --ckpt $WORK/final.pt \\
        --tokenizer $WORK/tokenizer.json

(--ckpt: any checkpoint of the model's shape, for its config; the weights are the GGUF file's). With
--duplicates it asks the duplicate check's question instead (docs/tool-calls.md "Duplicate check"): for each ordered
pair of same-type keys (a, b) of those calls, the gold call against the call with a's value replaced by b's, scored
with the keys masked ("k") and with the values masked ("v"); reported: how often the gold call scores higher.
"""
import argparse
import itertools
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chat_format  # noqa: E402
from bpe import Tokenizer  # noqa: E402
from dump_logits import load_gguf_weights  # noqa: E402
from export_gguf import load_model, GGUFReader  # noqa: E402

MASK_ID, EOT_ID = 3, 0


def canvas(tok, prompt, call, resp_len):
    """prompt + the call's tokens padded with end-of-text to resp_len, and a tag per position: ("k", key) on a
    key's tokens, ("v", key) on its value's, else None."""
    ids, tags = [], []

    def add(text, tag=None):
        t = tok.encode(text)
        ids.extend(t)
        tags.extend([tag] * len(t))

    add(chat_format.TOOL_CALL + '{"name": ' + chat_format.dumps(call["name"]) + ', "arguments": {')
    for i, (k, v) in enumerate(call["arguments"].items()):
        add(", " if i else "")
        add('"')
        add(k, ("k", k))
        add('": ')
        if isinstance(v, str):
            add('"')
            add(chat_format.dumps(v)[1:-1], ("v", k))
            add('"')
        else:
            add(chat_format.dumps(v), ("v", k))
    add("}}" + chat_format.TOOL_CALL_END + chat_format.IM_END)
    pad = max(0, resp_len - len(ids))
    return prompt + ids + [EOT_ID] * pad, [None] * len(prompt) + tags + [None] * pad


def score(model, ids, tags, which):
    pos = [i for i, t in enumerate(tags) if t and t[0] in which]
    x = torch.tensor([ids])
    x[0, pos] = MASK_ID
    with torch.no_grad():
        lp = torch.log_softmax(model(x)[0].float(), -1)
    return sum(lp[p, ids[p]].item() for p in pos)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gguf", required=True)
    ap.add_argument("--ckpt", required=True, help="a checkpoint of the same shape (its config is used)")
    ap.add_argument("--tokenizer", required=True)
    ap.add_argument("--data", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                   "../../tests/data/toolcall/heldout.jsonl"))
    ap.add_argument("--resp-len", type=int, default=96)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--duplicates", action="store_true", help="gold call against a value repeated under two keys")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    model, tok = load_model(a.ckpt), Tokenizer.load(a.tokenizer)
    load_gguf_weights(model, GGUFReader(a.gguf))
    right = {"k": 0, "v": 0, "kv": 0}
    calls = 0
    for line in open(a.data):
        turn = json.loads(line)
        gold = turn["gold"].get("tool_call")
        if not gold:
            continue
        user = " ".join(m["content"] for m in turn["messages"] if m["role"] == "user")
        args = gold["arguments"]
        keys = [k for k, v in args.items()
                if isinstance(v, (str, int, float)) and not isinstance(v, bool) and str(v) in user]
        if len(keys) < 2:
            continue
        prompt = tok.encode(chat_format.heldout_prompt(turn))
        if a.duplicates:
            gold_scores = {}
            for a_key, b_key in itertools.permutations(keys, 2):
                if type(args[a_key]) is not type(args[b_key]):
                    continue
                bad = dict(args)
                bad[a_key] = args[b_key]
                calls += 1
                for which in ("k", "v"):
                    if which not in gold_scores:
                        ids, tags = canvas(tok, prompt, gold, a.resp_len)
                        gold_scores[which] = score(model, ids, tags, which)
                    ids, tags = canvas(tok, prompt, {"name": gold["name"], "arguments": bad}, a.resp_len)
                    right[which] += gold_scores[which] > score(model, ids, tags, which)
            continue
        assignments = []
        for perm in itertools.permutations(keys):
            if any(type(args[k]) is not type(args[p]) for k, p in zip(keys, perm)):
                continue
            moved = dict(args)
            for k, p in zip(keys, perm):
                moved[k] = args[p]
            assignments.append((perm == tuple(keys), {"name": gold["name"], "arguments": moved}))
        if len(assignments) < 2:
            continue
        calls += 1
        for which in right:
            scores = []
            for is_gold, call in assignments:
                ids, tags = canvas(tok, prompt, call, a.resp_len)
                scores.append((score(model, ids, tags, which), is_gold))
            right[which] += max(scores, key=lambda s: s[0])[1]
    if a.duplicates:
        print("pairs (gold call, one value repeated under another key):", calls)
        for which, name in (("k", "keys masked, values given"), ("v", "values masked, keys given")):
            print("  %-28s gold call scores higher in %5.1f%%" % (name, 100.0 * right[which] / max(calls, 1)))
        return
    print("calls with 2+ values from the request:", calls)
    for which, name in (("k", "keys masked, values given"), ("v", "values masked, keys given"),
                        ("kv", "both masked")):
        print("  %-28s gold assignment best in %5.1f%%" % (name, 100.0 * right[which] / max(calls, 1)))


if __name__ == "__main__":
    main()
