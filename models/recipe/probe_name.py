"""Does the model read the tool name from the context? For call turns with more than one tool offered, the gold
answer is given except the first token of the tool name (the verb); prints how often the argmax is right and, for
a few turns, the top five next to the request. Then, with the answer masked after `<tool_call>{"name": "`, the mean
log-likelihood of the gold name with the turn's own tools and with another turn's tools in the prompt.

Usage: probe_name.py --ckpt WORK/final.pt --tokenizer WORK/tokenizer.json --data WORK/data/train.jsonl [--n 40]
"""
import argparse
import json
import random

import torch

import chat_format as cf
from bpe import Tokenizer
from model import LLaDA, Config

MASK_ID, EOT_ID, RESP_LEN = 3, 0, 96


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--tokenizer", required=True)
    ap.add_argument("--data", required=True, help="a .jsonl of conversations (train.jsonl or heldout.jsonl)")
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--show", type=int, default=8)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    ck = torch.load(a.ckpt)
    model = LLaDA(Config(**ck["config"]))
    model.load_state_dict(ck["model"])
    model.eval()
    tok = Tokenizer.load(a.tokenizer)
    cases = []
    with open(a.data) as f:
        for line in f:
            c = json.loads(line)
            cases += [(c, i) for i, m in enumerate(c["messages"])
                      if m["role"] == "assistant" and "tool_call" in m and len(c["tools"]) > 1]
            if len(cases) >= 10 * a.n:
                break
    random.Random(0).shuffle(cases)
    pre = tok.encode(cf.TOOL_CALL + '{"name": "')
    right = 0
    for k, (c, i) in enumerate(cases[:a.n]):
        call = c["messages"][i]["tool_call"]
        prompt = tok.encode(cf.render_prompt(c, i))
        ans = tok.encode(cf.render_tool_call(call) + cf.IM_END)
        canvas = prompt + ans + [EOT_ID] * (RESP_LEN - len(ans))
        at = len(prompt) + len(pre)
        want = canvas[at]
        canvas[at] = MASK_ID
        with torch.no_grad():
            logits = model(torch.tensor([canvas]))[0, at]
        right += int(logits.argmax()) == want
        if k < a.show:
            user = [m["content"] for m in c["messages"][:i] if m["role"] == "user"][-1]
            print("%s: want %r, top %s\n    request: %s" % (call["name"], tok.decode([want]),
                                                        [tok.decode([t]) for t in logits.topk(5).indices.tolist()],
                                                        user[:110]))
    print("first name token right (rest of the answer given): %d/%d" % (right, min(a.n, len(cases))))

    def name_nll(conv, i, name):
        """-log p of the name's tokens with the call prefix given and the rest of the answer masked."""
        prompt = tok.encode(cf.render_prompt(conv, i))
        ids = tok.encode(cf.TOOL_CALL + '{"name": "' + name)[len(pre):]
        canvas = prompt + pre + [MASK_ID] * (RESP_LEN - len(pre))
        at = len(prompt) + len(pre)
        with torch.no_grad():
            lp = model(torch.tensor([canvas]))[0, at:at + len(ids)].float().log_softmax(-1)
        return -float(lp[torch.arange(len(ids)), torch.tensor(ids)].sum())

    own = other = 0.0
    n = min(a.n, len(cases))
    for k, (c, i) in enumerate(cases[:n]):
        swapped = dict(c, tools=cases[(k + 1) % n][0]["tools"])
        name = c["messages"][i]["tool_call"]["name"]
        own += name_nll(c, i, name)
        other += name_nll(swapped, i, name)
    print("name NLL (nats, answer masked after the call prefix): %.2f with the turn's tools, %.2f with another "
          "turn's tools (equal: the tools are not read)" % (own / n, other / n))


if __name__ == "__main__":
    main()
