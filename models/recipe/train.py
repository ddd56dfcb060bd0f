"""Masked-diffusion SFT of the bundled model (LLaDA recipe), on CPU, under a wall-time or a step budget.

Usage: train.py --data DIR --tokenizer TOK.json --work /var/lib/dloop-train [--max-minutes 80 | --steps N] [--device cuda]
Resumes from WORK/ckpt.pt when present; logs WORK/loss.csv; the LR follows the budget (time, or steps with --steps).
Each example: prompt (never masked) + response (assistant text, <|im_end|>, <|endoftext|> padding to --resp-len).
Per sequence t ~ U(0,1) (stratified over the batch), p = (1-eps) t + eps, each response token masked with
probability p; loss = sum over masked tokens of CE / p, divided by resp-len and batch size.
Options for experiments (defaults give the plain recipe): --mimetic and --init choose the initialisation, --lm-mix
mixes in the pre-training objective, --pad-weight scales the loss on the end-of-text padding
after the first one, --copy-weight the loss on answer tokens that also occur in the prompt (tool names, parameter
names, values: what has to be looked up), and --curriculum F trains the first fraction F of the time budget on
the shortest prompts only, the length limit growing linearly from the 20th percentile to the longest.
--member-order mention lists each tool call's arguments in the order the request first mentions their names
(mention_order; export_gguf.py then writes dloop.tool_call.member_order and the engine decodes in that order).
"""
import argparse
import bisect
import json
import math
import os
import random
import signal
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chat_format  # noqa: E402
from bpe import Tokenizer  # noqa: E402
from model import LLaDA, Config, mimetic_init  # noqa: E402

EOT_ID, MASK_ID = 0, 3
IM_START_ID, IM_END_ID, TOOL_CALL_ID = 1, 2, 4


def slotted_call_ids(tok, call, string_width=24, number_width=12, slots=None):
    """Token ids of `<tool_call>...</tool_call><|im_end|>` laid out as the schema-guided decoder lays out its canvas
    (docs/tool-calls.md): committed text tokenised run by run, each string value (content and closing quote) then
    single-space tokens up to string_width positions, each number up to number_width. When slots is a list, the
    positions of the value slots (what the decoder leaves masked; the rest is committed skeleton) are appended."""
    space = tok.encode(" ")
    assert len(space) == 1, "the tokenizer has no single-space token"
    ids, text = [], []

    def slot(c, width):
        if slots is not None:
            slots.extend(range(len(ids), len(ids) + max(len(c), width)))
        ids.extend(c + space * max(0, width - len(c)))

    def flush():
        if text:
            ids.extend(tok.encode("".join(text)))
            text.clear()

    def value(v):
        if isinstance(v, str):
            text.append('"')
            flush()
            slot(tok.encode(chat_format.dumps(v)[1:]), string_width)
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            flush()
            slot(tok.encode(chat_format.dumps(v)), number_width)
        elif isinstance(v, list):
            text.append("[")
            for i, x in enumerate(v):
                text.append(", " if i else "")
                value(x)
            text.append("]")
        elif isinstance(v, dict):
            text.append("{")
            for i, (k, x) in enumerate(v.items()):
                text.append((", " if i else "") + chat_format.dumps(k) + ": ")
                value(x)
            text.append("}")
        else:
            text.append(chat_format.dumps(v))

    text.append(chat_format.TOOL_CALL + '{"name": ' + chat_format.dumps(call["name"]) + ', "arguments": ')
    value(call["arguments"])
    text.append("}" + chat_format.TOOL_CALL_END + chat_format.IM_END)
    flush()
    return ids


def shuffled_call(msg, rng):
    """A copy of an assistant tool-call message with the call's arguments in a random key order (a JSON object's
    member order carries no meaning, so the call is the same call)."""
    call = msg["tool_call"]
    keys = list(call.get("arguments", {}))
    rng.shuffle(keys)
    return dict(msg, tool_call=dict(call, arguments={k: call["arguments"][k] for k in keys}))


def _normalised(text):
    """Lower-case ASCII letters, '_' and '-' as spaces: the text key names are looked up in (same length)."""
    return "".join(" " if c in "_-" else c.lower() if "A" <= c <= "Z" else c for c in text)


def _is_word_char(c):
    return c.isascii() and c.isalnum()


def first_mention(text, key):
    """Offset of the first mention of the parameter name `key` in `text` (docs/tool-calls.md "Member order": both
    normalised by _normalised, the mention bounded by non-alphanumeric ASCII characters or the ends), or -1."""
    t, k = _normalised(text), _normalised(key)
    if not k.strip(" "):
        return -1
    at = t.find(k)
    while at >= 0:
        end = at + len(k)
        if (at == 0 or not _is_word_char(t[at - 1])) and (end == len(t) or not _is_word_char(t[end])):
            return at
        at = t.find(k, at + 1)
    return -1


def mention_text(messages):
    """The text the member order reads: the contents of the last user message and of the tool results after it,
    joined by newlines (earlier turns, the system message and assistant turns are not read)."""
    last = max((j for j, m in enumerate(messages) if m["role"] == "user"), default=0)
    return "\n".join(m.get("content") or "" for m in messages[last:] if m["role"] in ("user", "tool"))


def mention_order(keys, text):
    """keys (in the schema's order) sorted by their first mention in text; keys not mentioned follow, in the
    schema's order."""
    pos = [(first_mention(text, k), i, k) for i, k in enumerate(keys)]
    return [k for p, i, k in sorted(pos, key=lambda x: (x[0] < 0, x[0], x[1]))]


def mention_ordered_call(conv, i, msg):
    """A copy of the assistant tool-call message conv["messages"][i] with the call's top-level arguments in the
    member order --member-order mention trains (mention_order over the tool's schema properties)."""
    call = msg["tool_call"]
    tool = next((t for t in conv.get("tools", []) if t["name"] == call["name"]), None)
    props = list(((tool or {}).get("parameters") or {}).get("properties", {}))
    args = call.get("arguments", {})
    props += [k for k in args if k not in props]
    order = [k for k in mention_order(props, mention_text(conv["messages"][:i])) if k in args]
    return dict(msg, tool_call=dict(call, arguments={k: args[k] for k in order}))


def build_examples(path, tok, resp_len, max_prompt, slot_frac=0.0, string_width=24, shuffle_keys=0.0,
                   member_order="schema"):
    """[(prompt ids, response ids padded to resp_len, value slot positions in the response)], dropping those that do
    not fit. A fraction slot_frac of the tool-call answers (chosen by a hash of the line and turn) is laid out as the
    decoder's canvas, when it fits; only those have value slot positions (the others an empty list). A fraction
    shuffle_keys of the tool-call answers (another hash) lists the arguments in a random order instead of the
    schema's, so a value's place in the call says nothing about which value it is: only its key does. With
    member_order "mention" every tool call lists its arguments in the order the request mentions their names
    (mention_ordered_call), as the decoder lays them out for a model exported with that order."""
    out, dropped, slotted, shuffled, reordered = [], 0, 0, 0, 0
    with open(path) as f:
        for n, line in enumerate(f):
            conv = json.loads(line)
            for i, m in enumerate(conv["messages"]):
                if m["role"] != "assistant":
                    continue
                pi = tok.encode(chat_format.render_prompt(conv, i))
                if "tool_call" in m and member_order == "mention":
                    mo = mention_ordered_call(conv, i, m)
                    reordered += list(mo["tool_call"]["arguments"]) != list(m["tool_call"].get("arguments", {}))
                    m = mo
                if "tool_call" in m and shuffle_keys > 0:
                    rng = random.Random(n * 7919 + i * 31 + 5)
                    if rng.random() < shuffle_keys:
                        m = shuffled_call(m, rng)
                        shuffled += 1
                ri = tok.encode(chat_format.assistant_content(m) + chat_format.IM_END)
                vs = []
                if "tool_call" in m and random.Random(n * 1009 + i).random() < slot_frac:
                    sv = []
                    si = slotted_call_ids(tok, m["tool_call"], string_width=string_width, slots=sv)
                    if len(si) <= resp_len:
                        ri, vs = si, sv
                        slotted += 1
                if len(pi) > max_prompt or len(ri) > resp_len:
                    dropped += 1
                    continue
                out.append((pi, ri + [EOT_ID] * (resp_len - len(ri)), vs))
    if slot_frac:
        print("slotted answers", slotted, flush=True)
    if shuffle_keys:
        print("answers with shuffled keys", shuffled, flush=True)
    if member_order == "mention":
        print("answers whose arguments the mention order reorders", reordered, flush=True)
    return out, dropped


def load_examples(args, tok):
    width = "" if args.string_width == 24 else "-w%d" % args.string_width
    width += "-k%g" % args.shuffle_keys if args.shuffle_keys else ""
    width += "-mention" if args.member_order == "mention" else ""
    cache = os.path.join(args.work, "examples-r%d-p%d-s%g%s-v.pt" % (args.resp_len, args.max_prompt, args.slot_frac,
                                                                     width))
    if os.path.exists(cache):
        return torch.load(cache)
    ex, dropped = build_examples(os.path.join(args.data, "train.jsonl"), tok, args.resp_len, args.max_prompt,
                                 args.slot_frac, args.string_width, args.shuffle_keys, args.member_order)
    print("examples", len(ex), "dropped", dropped, flush=True)
    torch.save(ex, cache)
    return ex


def batches_for_epoch(examples, epoch, seed, batch):
    """Batches of similar prompt length, in a shuffled order fixed by (seed, epoch)."""
    rng = random.Random(seed * 1000003 + epoch)
    idx = list(range(len(examples)))
    rng.shuffle(idx)
    out = []
    chunk = batch * 16
    for s in range(0, len(idx), chunk):
        part = sorted(idx[s:s + chunk], key=lambda i: len(examples[i][0]))
        out += [part[j:j + batch] for j in range(0, len(part), batch) if len(part[j:j + batch]) == batch]
    rng.shuffle(out)
    return out


def collate(examples, ids):
    """(tokens (B, L), prompt lengths (B,), total lengths (B,)); padding after the response is EOT."""
    rows = [examples[i][0] + examples[i][1] for i in ids]
    L = max(len(r) for r in rows)
    tokens = torch.full((len(rows), L), EOT_ID, dtype=torch.long)
    for b, r in enumerate(rows):
        tokens[b, :len(r)] = torch.tensor(r)
    plen = torch.tensor([len(examples[i][0]) for i in ids])
    tlen = torch.tensor([len(r) for r in rows])
    return tokens, plen, tlen


def format_ids(tok):
    """Ids of tokens never copy-weighted: no letter or digit (punctuation, spaces), special and markup tokens
    (<|im_end|>, <tool_call>), and the keys of the call ("name", "arguments")."""
    out = set()
    for i in range(len(tok.tokens)):
        text = tok.decode([i])
        if not any(ch.isalnum() for ch in text) or text.startswith("<") or text.strip() in ("name", "arguments"):
            out.add(i)
    return out


def token_weights(examples, ids, L, pad_weight, copy_weight, fmt):
    """(B, L) per-token loss factors for the response part, or None when both weights are 1."""
    if pad_weight == 1.0 and copy_weight == 1.0:
        return None
    w = torch.ones(len(ids), L)
    for b, i in enumerate(ids):
        prompt, resp = examples[i][:2]
        in_prompt = set(prompt) - fmt
        n = len(prompt)
        seen_eot = False
        for j, t in enumerate(resp):
            if t == EOT_ID:
                if seen_eot:
                    w[b, n + j] = pad_weight
                seen_eot = True
            elif t in in_prompt:
                w[b, n + j] = copy_weight
    return w


def curriculum_batch(order, lens, frac, args, step):
    """A batch from the examples whose prompt fits the curriculum's length limit at this point of the budget."""
    lo = lens[len(lens) // 5]
    limit = lo + (lens[-1] - lo) * min(1.0, frac / args.curriculum)
    pool = bisect.bisect_right(lens, limit)
    rng = random.Random(args.seed * 1000003 + 7 * step + 1)
    return [order[rng.randrange(pool)] for _ in range(args.batch)]


def value_rows(examples, ids, L, frac, gen):
    """(B, L) bool: the value slot positions of the rows chosen (with probability frac, among the examples that
    have slots) to be masked only there, or None when no row is chosen."""
    pick = torch.rand(len(ids), generator=gen) < frac
    out = torch.zeros(len(ids), L, dtype=torch.bool)
    any_row = False
    for b, i in enumerate(ids):
        ex = examples[i]
        if len(ex) > 2 and ex[2] and pick[b]:
            out[b, [len(ex[0]) + j for j in ex[2]]] = True
            any_row = True
    return out if any_row else None


def request_rows(examples, ids, L, frac, gen, user_head):
    """(B, L) bool: in the tool-call rows chosen (with probability frac), the tokens of the last user message's
    content, which those rows mask instead of the answer (the call given, the request asked for: what in a request
    states each argument), or None when no row is chosen. user_head: the ids of "<|im_start|>user\n"."""
    pick = torch.rand(len(ids), generator=gen) < frac
    out = torch.zeros(len(ids), L, dtype=torch.bool)
    any_row = False
    n = len(user_head)
    for b, i in enumerate(ids):
        prompt, answer = examples[i][0], examples[i][1]
        if not pick[b] or not answer or answer[0] != TOOL_CALL_ID:
            continue
        starts = [j for j in range(len(prompt) - n + 1) if prompt[j:j + n] == user_head]
        if not starts:
            continue
        begin = starts[-1] + n
        end = begin
        while end < len(prompt) and prompt[end] != IM_END_ID:
            end += 1
        if end > begin:
            out[b, begin:end] = True
            any_row = True
    return out if any_row else None


def diffusion_loss(model, tokens, plen, tlen, resp_len, gen, eps=1e-3, weighting="inv_t", tok_w=None,
                   whole=False, only=None):
    """LLaDA SFT loss (weighting inv_t) or the plain mean CE over masked tokens (weighting mean), and the
    plain mean CE. tok_w (B, L) scales each token's term (mean: a weighted mean). whole: LLaDA's pre-training
    objective instead, every token of the sequence (prompt too) may be masked, the sum of CE / p divided by the
    number of tokens. only (B, L) bool: in the rows where it has a True, only those positions may be masked (the
    schema-guided decoder's value slots, with the call's skeleton given, as the decoder queries the model)."""
    B, L = tokens.shape
    t = (torch.rand(1, generator=gen) + torch.arange(B) / B) % 1.0
    p = (1 - eps) * t + eps
    pos = torch.arange(L)[None, :]
    is_resp = (pos >= (0 if whole else plen[:, None])) & (pos < tlen[:, None])
    if only is not None:
        rows = only.any(dim=1, keepdim=True)
        is_resp = torch.where(rows, only, is_resp)
    masked = is_resp & (torch.rand(B, L, generator=gen) < p[:, None])
    dev = model.embed.weight.device
    tokens, masked, p, tlen = tokens.to(dev), masked.to(dev), p.to(dev), tlen.to(dev)
    tok_w = tok_w.to(dev) if tok_w is not None else None
    noisy = tokens.masked_fill(masked, MASK_ID)
    h = model.hidden(noisy, tlen)
    logits = model.out(h[masked])
    ce = F.cross_entropy(logits, tokens[masked], reduction="none")
    tw = tok_w[masked] if tok_w is not None else torch.ones_like(ce)
    if weighting == "mean":
        loss = (ce * tw).sum() / tw.sum().clamp_min(1e-6)
    else:
        w = (1.0 / p)[:, None].expand(B, L)[masked] * tw
        loss = (ce * w).sum() / (int(tlen.sum()) if whole else resp_len * B)
    return loss, ce.mean().detach(), int(masked.sum())


def lr_at(frac, step, base, warmup):
    warm = min(1.0, (step + 1) / warmup)
    return base * warm * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(frac, 1.0))))


def cpu_state(model):
    """The weights as CPU tensors, so a checkpoint trained on a GPU loads anywhere."""
    return {k: v.detach().cpu() for k, v in model.state_dict().items()}


def save(path, model, opt, state):
    tmp = path + ".tmp"
    torch.save({"model": cpu_state(model), "opt": opt.state_dict(), "config": model.c.to_dict(),
                "state": state}, tmp)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--tokenizer", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--max-minutes", type=float, default=80)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--ctx", type=int, default=0,
                    help="model context (Config.max_len; default 0: the model's 1,024); pair with --max-prompt")
    ap.add_argument("--dim", type=int, default=256)
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--ffn", type=int, default=704)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=1.5e-3)
    ap.add_argument("--warmup", type=int, default=200)
    ap.add_argument("--resp-len", type=int, default=96)
    ap.add_argument("--max-prompt", type=int, default=416)
    ap.add_argument("--ckpt-minutes", type=float, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--device", default="cpu", help="torch device to train on (cpu, cuda); checkpoints are saved for CPU")
    ap.add_argument("--no-bf16", dest="bf16", action="store_false",
                    help="matrix products in float32 (default: bfloat16 autocast, weights and optimizer in float32)")
    ap.add_argument("--tie", action="store_true", help="tie the output projection to the embedding")
    ap.add_argument("--loss", choices=["inv_t", "mean"], default="inv_t",
                    help="inv_t: LLaDA's sum of CE / t per answer token; mean: the mean CE over masked tokens")
    ap.add_argument("--max-steps", type=int, default=0, help="stop after this many steps (0: time budget only)")
    ap.add_argument("--steps", type=int, default=0,
                    help="a step budget instead of --max-minutes: the LR schedule and the curriculum follow the step "
                         "count and training stops after this many steps, so the result does not depend on the "
                         "machine's speed or load; --max-minutes is then ignored (0: the time budget)")
    ap.add_argument("--pad-weight", type=float, default=1.0,
                    help="loss factor on end-of-text padding after the first end-of-text (default 1)")
    ap.add_argument("--copy-weight", type=float, default=1.0,
                    help="loss factor on answer tokens (with a letter or digit) that also occur in the prompt")
    ap.add_argument("--slot-frac", type=float, default=0.0,
                    help="fraction of tool-call answers laid out as the schema-guided decoder's canvas (values padded "
                         "with spaces to the slot widths; default 0)")
    ap.add_argument("--string-width", type=int, default=24,
                    help="positions of a string value slot in the slotted answers (the decoder's string_slot_tokens; "
                         "export with the same --string-slot)")
    ap.add_argument("--member-order", choices=["schema", "mention"], default="schema",
                    help="the order of each tool call's arguments in the answers: the schema's (default), or by the "
                         "first mention of each parameter name in the request (export writes "
                         "dloop.tool_call.member_order and the decoder lays calls out the same way)")
    ap.add_argument("--shuffle-keys", type=float, default=0.0,
                    help="fraction of tool-call answers whose arguments are listed in a random key order instead of "
                         "the schema's (default 0)")
    ap.add_argument("--value-mask", type=float, default=0.0,
                    help="fraction of the slotted answers (--slot-frac) masked only in their value slots, the call's "
                         "skeleton given, as the schema-guided decoder queries the model (default 0)")
    ap.add_argument("--request-mask", type=float, default=0.0,
                    help="fraction of the tool-call rows that mask the last user message instead of the answer "
                         "(the call given, the request predicted; default 0)")
    ap.add_argument("--curriculum", type=float, default=0.0,
                    help="fraction of the time budget trained on short prompts first (default 0: none)")
    ap.add_argument("--lm-mix", type=float, default=0.0,
                    help="fraction of batches trained with the pre-training objective (prompt and answer masked "
                         "alike: dense practice at copying between the tools, the request and the answer); default 0")
    ap.add_argument("--lm-until", type=float, default=1.0,
                    help="fraction of the time budget after which --lm-mix stops (default 1: the whole run)")
    ap.add_argument("--mimetic", type=float, nargs=4, metavar=("QK_A", "QK_B", "VO_A", "VO_B"),
                    help="mimetic initialisation of attention (model.mimetic_init), e.g. 0.7 0.7 0.7 -0.7; "
                         "copy_toy.py measures what it does to learning to copy")
    ap.add_argument("--init", help="start from the weights of this checkpoint (train.py or copy_toy.py --save) "
                                   "instead of a random initialisation; ignored when WORK/ckpt.pt resumes a run")
    args = ap.parse_args()
    if args.value_mask > 0 and args.request_mask > 0:
        ap.error("--value-mask and --request-mask choose the masked positions of a row: use one")
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    os.makedirs(args.work, exist_ok=True)
    tok = Tokenizer.load(args.tokenizer)
    user_head = [IM_START_ID] + tok.encode("user\n")
    examples = load_examples(args, tok)
    cfg = Config(vocab=len(tok.tokens), dim=args.dim, layers=args.layers, heads=args.heads, ffn=args.ffn, tie=args.tie)
    if args.ctx:
        cfg.max_len = args.ctx
    model = LLaDA(cfg)
    if args.mimetic:
        mimetic_init(model, tuple(args.mimetic[:2]), tuple(args.mimetic[2:]), seed=args.seed)
    if args.init:
        warm = torch.load(args.init, map_location="cpu")["model"]
        own = model.state_dict()
        bad = [k for k in own if k not in warm or warm[k].shape != own[k].shape]
        if bad:
            sys.exit("train.py: --init %s does not fit this model's shape (%s); give train.py the same --dim, "
                     "--layers, --heads, --ffn, --tie and tokenizer size" % (args.init, ", ".join(bad[:4])))
        model.load_state_dict(warm)
    model = model.to(args.device)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.01)
    ckpt = os.path.join(args.work, "ckpt.pt")
    state = {"step": 0, "elapsed": 0.0, "args": vars(args)}
    if os.path.exists(ckpt):
        saved = torch.load(ckpt, map_location=args.device)
        model.load_state_dict(saved["model"])
        opt.load_state_dict(saved["opt"])
        state = saved["state"]
        print("resumed at step", state["step"], "elapsed %.1f min" % (state["elapsed"] / 60), flush=True)
    n_params = sum(p.numel() for p in model.parameters())
    print("params %.2fM vocab %d examples %d" % (n_params / 1e6, cfg.vocab, len(examples)), flush=True)
    log_path = os.path.join(args.work, "loss.csv")
    if os.path.exists(log_path):  # drop rows of steps after the checkpoint (they are redone)
        with open(log_path) as f:
            rows = f.readlines()
        keep = [r for r in rows[1:] if int(r.split(",")[0]) < state["step"]]
        with open(log_path, "w") as f:
            f.writelines(rows[:1] + keep)
    else:
        with open(log_path, "w") as f:
            f.write("step,minutes,lr,loss,masked_ce,tokens_per_s,whole\n")
    budget = args.max_minutes * 60
    start = time.time() - state["elapsed"]
    last_ckpt = time.time()
    per_epoch = len(batches_for_epoch(examples, 0, args.seed, args.batch))
    batches, batches_epoch = None, -1
    fmt = format_ids(tok)
    order = sorted(range(len(examples)), key=lambda i: len(examples[i][0]))
    lens = [len(examples[i][0]) for i in order]
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    signal.signal(signal.SIGINT, lambda *_: stop.append(True))
    while not stop:
        elapsed = time.time() - start
        step = state["step"]
        # Progress through the schedule: by steps with --steps, by wall time otherwise.
        frac = step / args.steps if args.steps else elapsed / budget
        if frac >= 1.0 or (args.max_steps and step >= args.max_steps):
            break
        if args.curriculum > 0 and frac < args.curriculum:
            ids = curriculum_batch(order, lens, frac, args, step)
        else:
            epoch, k = divmod(step, per_epoch)
            if batches_epoch != epoch:
                batches, batches_epoch = batches_for_epoch(examples, epoch, args.seed, args.batch), epoch
            ids = batches[k]
        tokens, plen, tlen = collate(examples, ids)
        tok_w = token_weights(examples, ids, tokens.shape[1], args.pad_weight, args.copy_weight, fmt)
        gen = torch.Generator().manual_seed(args.seed * 7919 + step)
        lr = lr_at(frac, step, args.lr, args.warmup)
        for g in opt.param_groups:
            g["lr"] = lr
        whole = frac < args.lm_until and random.Random(args.seed * 31 + step).random() < args.lm_mix
        only = None
        if args.value_mask > 0 and not whole:
            only = value_rows(examples, ids, tokens.shape[1], args.value_mask,
                              torch.Generator().manual_seed(args.seed * 104729 + step))
        if args.request_mask > 0 and not whole:
            only = request_rows(examples, ids, tokens.shape[1], args.request_mask,
                                torch.Generator().manual_seed(args.seed * 130363 + step), user_head)
        t0 = time.time()
        with torch.autocast(torch.device(args.device).type, dtype=torch.bfloat16, enabled=args.bf16):
            loss, ce, _ = diffusion_loss(model, tokens, plen, tlen, args.resp_len, gen, weighting=args.loss,
                                      tok_w=None if whole else tok_w, whole=whole, only=only)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        dt = time.time() - t0
        state["step"] = step + 1
        state["elapsed"] = time.time() - start
        with open(log_path, "a") as f:
            f.write("%d,%.2f,%.6f,%.4f,%.4f,%.0f,%d\n" % (step, state["elapsed"] / 60, lr, loss.item(), ce.item(),
                                                     tokens.numel() / dt, whole))
        if step % 10 == 0:
            print("step %d min %.1f lr %.2e loss %.4f ce %.4f tok/s %.0f%s" % (
                step, state["elapsed"] / 60, lr, loss.item(), ce.item(), tokens.numel() / dt,
                " (whole sequence)" if whole else ""), flush=True)
        if time.time() - last_ckpt > args.ckpt_minutes * 60:
            save(ckpt, model, opt, state)
            last_ckpt = time.time()
    save(ckpt, model, opt, state)
    if stop:
        print("stopped by a signal at step %d; run again to resume" % state["step"], flush=True)
        sys.exit(3)  # not finished: make_model.sh stops here instead of exporting
    torch.save({"model": cpu_state(model), "config": cfg.to_dict(), "state": state},
               os.path.join(args.work, "final.pt"))
    print("done: step %d, %.1f min" % (state["step"], state["elapsed"] / 60), flush=True)


if __name__ == "__main__":
    main()
