"""Writes tests/data/toolcall/heldout.jsonl: the assistant turns of the bundled model's held-out split.

Usage: python3 tests/toolcall/make_heldout.py [--conversations 120] [--split train|dev|unseen --out FILE]
The held-out conversations come from models/recipe/gen_data.py (deterministic: split "heldout", seed 1, the same
600 conversations make_model.sh generates); the first N are kept. `--split train` writes the first N conversations
of the training split instead (`gen_data.py --synth 0.6`, as make_model.sh trains on), to compare a model's figures
on conversations of its training data with the held-out ones (`dloop eval --data FILE`). `--split dev` writes
held-out conversations after the first 120 (the committed file's): the same unseen tools, names and values, but
not the conversations the figures are reported on, to choose a decoder setting on without tuning to the test.
`--split unseen` writes the held-out conversations after the development split's 240 (361-600): conversations
no decoder rule was shaped on, to check that a decoder's figures hold on conversations it was not tuned to.
Each output line is one assistant turn:
{"messages": [{"role", "content"}...], "tools": [tool objects], "gold": {"tool_call": {...}} | {"content": text}}
with the system message first (when the conversation has system text) and earlier assistant tool calls rendered as
the prompt shows them (docs/model-format.md, including their whitespace padding).
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "models", "recipe"))
import chat_format  # noqa: E402
import gen_data  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--conversations", type=int, default=120)
    ap.add_argument("--out", default=os.path.join(HERE, "..", "data", "toolcall", "heldout.jsonl"))
    ap.add_argument("--split", choices=["heldout", "train", "dev", "unseen"], default="heldout")
    ap.add_argument("--synth", type=float, default=0.6, help="--split train: gen_data.py's --synth (default 0.6)")
    a = ap.parse_args()
    if a.split == "train":
        convs = gen_data.generate("train", a.conversations, 1, a.synth)
    elif a.split == "dev":
        convs = gen_data.generate("heldout", 600, 1)[120:120 + a.conversations]
    elif a.split == "unseen":
        convs = gen_data.generate("heldout", 600, 1)[360:360 + a.conversations]
    else:
        convs = gen_data.generate("heldout", 600, 1)[:a.conversations]
    with open(a.out, "w") as f:
        for ci, conv in enumerate(convs):
            history = [{"role": "system", "content": conv["system"]}] if conv["system"] else []
            for m in conv["messages"]:
                if m["role"] == "assistant":
                    gold = {"tool_call": m["tool_call"]} if "tool_call" in m else {"content": m["content"]}
                    f.write(json.dumps({"conversation": ci, "messages": history, "tools": conv["tools"],
                                        "gold": gold}, ensure_ascii=False) + "\n")
                    history = history + [{"role": "assistant", "content": chat_format.assistant_content(m)}]
                else:
                    history = history + [{"role": m["role"], "content": m["content"]}]


if __name__ == "__main__":
    main()
