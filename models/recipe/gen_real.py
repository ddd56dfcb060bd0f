"""Realistic tool-use conversations for model v2 (issue 41), deterministic from a seed.

Usage: gen_real.py --out DIR [--seed 1] [--train 60000] [--heldout 600] [--stats] [--tokenizer TOK.json]
                   [--show N]
Writes DIR/train.jsonl and DIR/heldout.jsonl in the format of chat_format.py (the one gen_data.py writes and
train.py reads: {"system", "tools": [{"name", "description", "parameters"}], "messages"}; an assistant message
carries "tool_call" or, for parallel calls, "tool_calls"), plus two keys training ignores: "kind" and "domain".
The tools come from catalog.py, the values from pools_real.py. The heldout split uses only conversations whose
target tools are in catalog.HELD_OUT_DOMAINS / HELD_OUT_TOOLS; train never shows those tools at all.
--stats prints counts by kind and domain, and prompt-length percentiles (in tokens with --tokenizer, else an
estimate of UTF-8 bytes / 3.2, said so). --show N prints N rendered conversations.
"""
import argparse
import datetime as _dt
import json
import random
import re
import sys
import zlib

import catalog
import chat_format
import pools_real as P

MAX_PROMPT_TOKENS = 4096 - 160  # room for the answer in a 4,096 context


from values_real import *  # noqa: F401,F403 (the value kinds, pools and schemas)

# ---------------------------------------------------------------------------------------------- catalog parsing
_KIND = re.compile(r"^(\w+)(?:\((.*)\))?$")


def split_kind(s):
    """'name*:kind(args):description~phrases' -> (name, kind text, rest); the kind may hold ':' inside parens."""
    name, rest = s.split(":", 1)
    depth = 0
    for i, c in enumerate(rest):
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == ":" and depth == 0:
            return name.strip(), rest[:i], rest[i + 1:]
    return name.strip(), rest, ""


def parse_kind(text):
    m = _KIND.match(text.strip())
    if not m:
        raise ValueError("bad kind %r" % text)
    return m.group(1), m.group(2)


def parse_params(spec):
    out = []
    for part in re.split(r";\s+(?=[A-Za-z_][\w]*\*?:)", spec.strip()):
        if not part.strip():
            continue
        name, kind, rest = split_kind(part)
        desc, _, phrases = rest.partition("~")
        req = name.endswith("*")
        name = name.rstrip("*")
        k, arg = parse_kind(kind)
        if k not in KINDS:
            raise ValueError("unknown kind %r of %s" % (k, name))
        p = {"name": name, "req": req, "kind": k, "arg": arg, "desc": desc.strip(),
             "phrases": [x for x in phrases.split("/") if x] if phrases else []}
        if k == "enum":
            p["enum"] = []
            for opt in arg.split("|"):
                v, _, says = opt.partition("=")
                p["enum"].append((v, says.split("/") if says else [v]))
        out.append(p)
    return out


def _stable(s):
    return zlib.crc32(s.encode()) % 1000 / 1000.0


def kind_schema(k, arg, desc, tool_name, pname):
    if k == "enum":
        s = {"type": "string", "enum": [v for v, _ in arg]}
    elif k == "arr":
        ik, iarg = parse_kind(arg)
        s = {"type": "array", "items": kind_schema(ik, iarg if ik != "enum" else
                                                   [(o.partition("=")[0], None) for o in iarg.split("|")],
                                                   "", tool_name, pname)}
    elif k in ITEM_SCHEMAS:
        s = {"type": "array", "items": ITEM_SCHEMAS[k]}
    elif k in OBJECT_SCHEMAS:
        s = dict({"type": "object"}, **OBJECT_SCHEMAS[k])
    else:
        s = {"type": KINDS[k][0]}
        h = _stable(tool_name + "/" + pname)
        if k == "int" and h < 0.6:
            lo, hi = [int(x) for x in arg.split(",")]
            s["minimum"], s["maximum"] = lo, hi
        if k == "date" and h < 0.5:
            s["format"] = "date"
        if k in ("email",) and h < 0.4:
            s["format"] = "email"
        if k == "url" and h < 0.4:
            s["format"] = "uri"
    if desc:
        s["description"] = desc
    return s


def build_tool(t):
    params = parse_params(t["params"])
    props = {}
    for p in params:
        arg = p["enum"] if p["kind"] == "enum" else p["arg"]
        props[p["name"]] = kind_schema(p["kind"], arg, p["desc"], t["name"], p["name"])
    schema = {"type": "object", "properties": props}
    req = [p["name"] for p in params if p["req"]]
    if req:
        schema["required"] = req
    if _stable(t["name"]) < 0.3:
        schema["additionalProperties"] = False
    return dict(t, parsed=params, schema={"name": t["name"], "description": t["description"], "parameters": schema})


TOOLS = [build_tool(t) for t in catalog.TOOLS]
BY_NAME = {t["name"]: t for t in TOOLS}
assert len(BY_NAME) == len(TOOLS), "duplicate tool names"
HELD = {t["name"] for t in TOOLS if t["domain"] in catalog.HELD_OUT_DOMAINS or t["name"] in catalog.HELD_OUT_TOOLS}
DOMAINS = sorted({t["domain"] for t in TOOLS})


def value_for(g, p):
    k = p["kind"]
    if k == "enum":
        v, says = g.rng.choice(p["enum"])
        return v, g.rng.choice(says)
    if k == "bool":
        ts = [x[2:] for x in p["phrases"] if x.startswith("T:")]
        fs = [x[2:] for x in p["phrases"] if x.startswith("F:")]
        if fs and (not ts or g.rng.random() < 0.35):
            return False, g.rng.choice(fs)
        return True, g.rng.choice(ts) if ts else "with %s" % p["name"].replace("_", " ")
    if k == "arr":
        ik, iarg = parse_kind(p["arg"])
        n = g.rng.choice([1, 1, 2, 2, 3])
        vals, saids = [], []
        for _ in range(n * 3):
            if len(vals) == n:
                break
            sub = {"name": p["name"], "kind": ik, "arg": iarg, "phrases": []}
            if ik == "enum":
                sub["enum"] = [(o.partition("=")[0], o.partition("=")[2].split("/") if "=" in o else [o])
                               for o in iarg.split("|")]
            v, s = value_for(g, sub)
            if v not in vals:
                vals.append(v)
                saids.append(s)
        return vals, join_list(g.rng, saids)
    return KINDS[k][1](g, p["arg"], p["name"])


# ---------------------------------------------------------------------------------------------- requests
_PH = re.compile(r"\{(\w+)\}")
_BR = re.compile(r"\[([^\[\]]*)\]")
QUESTION_START = re.compile(r"^(what|what's|whats|how|is|are|do|does|did|when|where|who|which|any|can|will|should|"
                            r"am|was|were|have|has)\b", re.I)
V0, V1 = "\x01", "\x02"  # marks of a copied value in request text (no typo or case change inside)


def fill_request(g, tool, template, fixed=None, extras=True):
    """(request text with marked values, arguments in schema order). extras: optional parameters the template does
    not name may be set and said by their phrases (appended); without, only what the template names is set."""
    params = {p["name"]: p for p in tool["parsed"]}
    fixed = fixed or {}
    in_brackets = set()
    for b in _BR.findall(template):
        in_brackets |= set(_PH.findall(b))
    outside = set(_PH.findall(_BR.sub("", template)))
    chosen = {}
    for name, p in params.items():
        if name in fixed:
            chosen[name] = fixed[name]
        elif p["req"] or name in outside:
            chosen[name] = value_for(g, p)
        elif g.rng.random() < (0.5 if name in in_brackets else 0.3 if extras else 0):
            chosen[name] = value_for(g, p)

    def phrase_of(name):
        p = params[name]
        v, s = chosen[name]
        if p["kind"] == "bool":
            return s
        if p["phrases"]:
            return g.rng.choice(p["phrases"]).replace("{v}", V0 + s + V1)
        return V0 + s + V1

    def keep_bracket(m):
        inner = m.group(1)
        names = _PH.findall(inner)
        if not all(n in chosen for n in names):
            return ""
        if len(names) == 1 and re.fullmatch(r"[\s,;(]*\{\w+\}[\s,;)]*", inner):
            return inner.replace("{%s}" % names[0], phrase_of(names[0]))
        return _PH.sub(lambda mm: said_of(mm.group(1)), inner)

    def said_of(name):
        if name not in chosen:
            return ""
        p = params[name]
        if p["kind"] == "bool":
            return chosen[name][1]
        return V0 + chosen[name][1] + V1

    text = _BR.sub(keep_bracket, template)
    mentioned = set(_PH.findall(text)) | {n for n in _PH.findall(template) if n in chosen and
                                          ("{%s}" % n) not in _BR.sub("", template) and False}
    mentioned = set(_PH.findall(text))
    for b in _BR.findall(template):
        if all(n in chosen for n in _PH.findall(b)):
            mentioned |= set(_PH.findall(b))
    text = _PH.sub(lambda m: said_of(m.group(1)), text)
    extra = []
    for name in list(chosen):
        if name in mentioned or name in fixed:
            continue
        p = params[name]
        if p["phrases"] or p["kind"] == "bool":
            if p["kind"] == "bool" and not p["phrases"]:
                del chosen[name]
                continue
            extra.append(phrase_of(name))
        else:
            del chosen[name]
    if extra:
        g.rng.shuffle(extra)
        text += g.rng.choice([" ", ", "]) + join_list(g.rng, extra) if len(extra) > 1 else \
            g.rng.choice([" ", ", "]) + extra[0]
    args = {p["name"]: chosen[p["name"]][0] for p in tool["parsed"] if p["name"] in chosen}
    return text, args


COMMAND_WRAP = ["{x}", "{x}", "{x}", "please {x}", "{x} please", "can you {x}?", "could you {x}?",
                "could you please {x}", "I need you to {x}", "{x}, thanks", "{x} pls", "would you {x}?",
                "hey, {x}", "go ahead and {x}", "I'd like you to {x}", "{x}.", "quick one: {x}"]
QUESTION_WRAP = ["{x}?", "{x}?", "{x}", "hey, {x}?", "quick question: {x}?", "{x}? thanks", "hi! {x}?",
                 "{x}, please?", "so {x}?"]
CONTEXTS = ["I'm heading out in a bit.", "I'm on my phone, so keep it short.", "This is for a meeting later.",
            "My manager asked me about this.", "Just double-checking something.", "Working on the weekly report.",
            "Before I forget:", "For the team:", "I'm planning my week."]


def typo(rng, word):
    if len(word) < 4 or not word.isalpha():
        return word
    i = rng.randint(1, len(word) - 2)
    r = rng.random()
    if r < 0.4:
        return word[:i] + word[i + 1] + word[i] + word[i + 2:]
    if r < 0.7:
        return word[:i] + word[i + 1:]
    return word[:i] + word[i] + word[i:]


def dress(rng, text):
    """Paraphrase wrapper, case, context and typos on the template words; values (marked) stay as they are."""
    q = bool(QUESTION_START.match(text.replace(V0, "")))
    text = text.rstrip("?")
    text = rng.choice(QUESTION_WRAP if q else COMMAND_WRAP).replace("{x}", text)
    parts = re.split("(%s[^%s]*%s)" % (V0, V1, V1), text)
    r = rng.random()
    low = r < 0.2
    for i in range(0, len(parts), 2):
        seg = parts[i]
        if low:
            seg = seg.lower()
        if rng.random() < 0.06:
            words = seg.split(" ")
            j = rng.randrange(len(words))
            words[j] = typo(rng, words[j])
            seg = " ".join(words)
        parts[i] = seg
    text = "".join(parts)
    if not low and rng.random() < 0.6:
        k = 1 if text.startswith(V0) else 0
        text = text[:k] + text[k:k + 1].upper() + text[k + 1:]
    if rng.random() < 0.1:
        c = rng.choice(CONTEXTS)
        text = c + " " + text if rng.random() < 0.6 else text.rstrip(".") + ". " + c
    return text.replace(V0, "").replace(V1, "")


def request(g, tool, fixed=None, template=None):
    t = template or g.rng.choice(tool["asks"])
    text, args = fill_request(g, tool, t, fixed)
    return text, args


# ---------------------------------------------------------------------------------------------- answers
_SAY = re.compile(r"\{([\w.]+)(?:\|([^|}]*)\|([^}]*))?\}")


def walk(obj, path):
    for part in path.split("."):
        if isinstance(obj, list):
            obj = obj[int(part)]
        elif isinstance(obj, dict):
            obj = obj[part]
        else:
            raise KeyError(part)
    return obj


def show(v):
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, list):
        return ", ".join(show(x) for x in v)
    if isinstance(v, dict):
        return ", ".join("%s %s" % (k, show(x)) for k, x in v.items())
    return str(v)


GENERIC_DONE = ["Done.", "All set.", "Done!", "That's done.", "OK, it's done."]


def say(g, tool, args, result):
    tpl = tool.get("say")
    if not tpl:
        if isinstance(result, dict) and result.get("status"):
            return g.rng.choice(GENERIC_DONE) + " Status: %s." % result["status"]
        return g.rng.choice(GENERIC_DONE)

    def sub(m):
        path, empty, full = m.group(1), m.group(2), m.group(3)
        for src in (result, args):
            try:
                v = walk(src, path)
                break
            except (KeyError, IndexError, ValueError, TypeError):
                continue
        else:
            raise KeyError(path)
        if empty is not None:
            return full if v else empty
        return show(v)
    try:
        return _SAY.sub(sub, tpl)
    except KeyError:
        return g.rng.choice(GENERIC_DONE)


def result_of(g, tool, args):
    if tool.get("res"):
        return tool["res"](g, args)
    return g.rng.choice([{"status": "ok"}, {"success": True}, {"ok": True}])


def dumps(o):
    return json.dumps(o, ensure_ascii=False)


# ---------------------------------------------------------------------------------------------- conversations
SYSTEMS = ["You are a helpful assistant.", "You are a helpful assistant with access to tools.",
           "You are an assistant. Use the tools when they help; otherwise answer directly.",
           "You are a concise assistant. Call a tool when the user asks for something it can do.", "",
           "You help the user with everyday tasks using the available tools."]


def system_for(g, force_date=False):
    s = g.rng.choice(SYSTEMS)
    if force_date or g.rng.random() < 0.5:
        s = (s + " " if s else "") + g.day.system_line(g.rng)
    return s


class Gen:
    def __init__(self, split, seed):
        self.split = split
        self.rng = random.Random(seed)
        if split == "train":
            self.targets = [t for t in TOOLS if t["name"] not in HELD]
            self.pool = self.targets
        else:
            self.targets = [t for t in TOOLS if t["name"] in HELD]
            self.pool = TOOLS
        self.by_domain = {}
        for t in self.pool:
            self.by_domain.setdefault(t["domain"], []).append(t)
        tnames = {t["name"] for t in self.targets}
        self.chains = [c for c in CHAINS if c[0] in BY_NAME and c[1] in BY_NAME and
                       (c[0] in tnames and c[1] in tnames if split == "train" else (c[0] in HELD or c[1] in HELD))
                       and all(x in {t["name"] for t in self.pool} for x in c[:2])]

    def values(self):
        y = self.rng.choice([2025, 2026, 2026, 2027])
        today = _dt.date(y, 1, 1) + _dt.timedelta(days=self.rng.randint(0, 364))
        return Values(self.rng, P.Day(today))

    def toolset(self, needed):
        rng = self.rng
        r = rng.random()
        n = rng.randint(0, 2) if r < 0.3 else rng.randint(2, 7) if r < 0.75 else rng.randint(9, 13)
        names = [t["name"] for t in needed]
        same = [t for d in sorted({t["domain"] for t in needed}) for t in self.by_domain.get(d, []) if t["name"] not in names]
        rng.shuffle(same)
        out = list(needed)
        for t in same[:max(0, min(len(same), int(n * rng.uniform(0.3, 0.8))))]:
            out.append(t)
        while len(out) < len(needed) + n:
            t = rng.choice(self.pool)
            if t not in out:
                out.append(t)
        rng.shuffle(out)
        return out

    def pick_target(self):
        return self.rng.choice(self.targets)

    # kinds ------------------------------------------------------------------------------------------------
    def single(self, g):
        t = self.pick_target()
        text, args = request(g, t)
        res = result_of(g, t, args)
        msgs = [{"role": "user", "content": dress(g.rng, text)}, {"role": "assistant", "tool_call": call(t, args)},
                {"role": "tool", "content": dumps(res)}, {"role": "assistant", "content": say(g, t, args, res)}]
        if g.rng.random() < 0.12:
            u, a = g.rng.choice(THANKS)
            msgs += [{"role": "user", "content": u}, {"role": "assistant", "content": a}]
        return "single", [t], msgs

    def followup(self, g):
        t = self.pick_target()
        strs = [p for p in t["parsed"] if p["req"] and p["kind"] not in ("bool", "arr", "enum") and
                KINDS[p["kind"]][0] == "string" and p["kind"] not in ("id", "hex", "sql", "body", "text")]
        if not strs:
            return self.single(g)
        text, args = request(g, t)
        res = result_of(g, t, args)
        msgs = [{"role": "user", "content": dress(g.rng, text)}, {"role": "assistant", "tool_call": call(t, args)},
                {"role": "tool", "content": dumps(res)}, {"role": "assistant", "content": say(g, t, args, res)}]
        p = g.rng.choice(strs)
        for _ in range(5):
            v, s = value_for(g, p)
            if v != args[p["name"]]:
                break
        args2 = dict(args)
        args2[p["name"]] = v
        u = g.rng.choice(["what about %s?", "and %s?", "same for %s", "now %s", "and for %s?", "how about %s",
                          "ok, and %s?", "do the same for %s please"]) % s
        res2 = result_of(g, t, args2)
        msgs += [{"role": "user", "content": u}, {"role": "assistant", "tool_call": call(t, args2)},
                 {"role": "tool", "content": dumps(res2)}, {"role": "assistant", "content": say(g, t, args2, res2)}]
        return "followup", [t], msgs

    def parallel(self, g):
        t1 = self.pick_target()
        if g.rng.random() < 0.5:
            t2 = t1
        else:
            t2 = self.pick_target()
        text1, a1 = request(g, t1)
        for _ in range(4):
            text2, a2 = request(g, t2)
            if a2 != a1:
                break
        if a2 == a1:
            return self.single(g)
        joiner = g.rng.choice([" and ", ", and also ", ". Also ", "; also ", " and then ", ", plus "])
        text = dress(g.rng, text1.rstrip("?") + joiner + text2)
        r1, r2 = result_of(g, t1, a1), result_of(g, t2, a2)
        msgs = [{"role": "user", "content": text},
                {"role": "assistant", "tool_calls": [call(t1, a1), call(t2, a2)]},
                {"role": "tool", "content": dumps(r1)}, {"role": "tool", "content": dumps(r2)},
                {"role": "assistant", "content": say(g, t1, a1, r1) + " " + say(g, t2, a2, r2)}]
        return "parallel", [t1, t2] if t1 is not t2 else [t1], msgs

    def chain(self, g):
        if not self.chains:
            return self.single(g)
        a_name, b_name, templates, link, b_says = self.rng.choice(self.chains)
        ta, tb = BY_NAME[a_name], BY_NAME[b_name]
        tpl = g.rng.choice(templates)
        # The template names A's parameters as {x} and B's as {b.x}; B's linked parameter comes from A's result.
        a_part = re.sub(r"\{b\.(\w+)\}", lambda m: "<<%s>>" % m.group(1), tpl)
        text, a_args = fill_request(g, ta, a_part, extras=False)
        b_fixed, b_mention = {}, []
        for name in re.findall(r"<<(\w+)>>", text):
            p = next(p for p in tb["parsed"] if p["name"] == name)
            v, s = value_for(g, p)
            b_fixed[name] = (v, s)
            text = text.replace("<<%s>>" % name, s if p["kind"] == "bool" else s, 1)
        ra = result_of(g, ta, a_args)
        b_args = {}
        for bp, src in link.items():
            try:
                b_args[bp] = walk(ra, src) if not src.startswith("=") else a_args[src[1:]]
            except (KeyError, IndexError):
                return self.single(g)
        for name, (v, s) in b_fixed.items():
            b_args[name] = v
        b_args = {p["name"]: b_args[p["name"]] for p in tb["parsed"] if p["name"] in b_args}
        rb = result_of(g, tb, b_args)
        final = say(g, tb, b_args, rb) if not b_says else say(g, dict(tb, say=b_says), b_args, rb)
        msgs = [{"role": "user", "content": dress(g.rng, text)},
                {"role": "assistant", "tool_call": call(ta, a_args)}, {"role": "tool", "content": dumps(ra)},
                {"role": "assistant", "tool_call": call(tb, b_args)}, {"role": "tool", "content": dumps(rb)},
                {"role": "assistant", "content": final}]
        return "chain", [ta, tb], msgs

    def error(self, g):
        t = self.pick_target()
        text, args = request(g, t)
        msgs = [{"role": "user", "content": dress(g.rng, text)}, {"role": "assistant", "tool_call": call(t, args)}]
        if g.rng.random() < 0.5:
            err = g.rng.choice(TRANSIENT)
            res = result_of(g, t, args)
            msgs += [{"role": "tool", "content": dumps({"error": err})},
                     {"role": "assistant", "tool_call": call(t, args)}, {"role": "tool", "content": dumps(res)},
                     {"role": "assistant", "content": say(g, t, args, res)}]
            return "error_retry", [t], msgs
        err = g.rng.choice(PERMANENT)
        msgs += [{"role": "tool", "content": dumps({"error": err})},
                 {"role": "assistant", "content": g.rng.choice(FAIL_SAY) % err.rstrip(".")}]
        return "error_report", [t], msgs

    def no_call(self, g):
        r = g.rng.random()
        if r < 0.3:
            u, a = g.rng.choice(P.GREETINGS)
            kind = "chat_greeting"
        elif r < 0.45:
            u = g.rng.choice(["tell me a joke", "Tell me a joke!", "know any good jokes?", "make me laugh",
                              "got a joke for me?", "say something funny"])
            a, kind = g.rng.choice(P.JOKES), "chat_joke"
        elif r < 0.7:
            u, a = g.rng.choice(P.GENERAL_QA)
            kind = "chat_qa"
        else:
            t = self.pick_target()
            text, _ = request(g, t)
            u = dress(g.rng, text)
            a = g.rng.choice(CANT)
            tools = [x for x in self.toolset([]) if x["domain"] != t["domain"]] or \
                [x for x in self.pool if x["domain"] != t["domain"]][:3]
            return "chat_unanswerable", tools, [{"role": "user", "content": u}, {"role": "assistant", "content": a}]
        return kind, None, [{"role": "user", "content": u}, {"role": "assistant", "content": a}]

    def conversation(self):
        g = self.values()
        r = self.rng.random()
        if r < 0.06:
            return structured(self, g)
        if r < 0.09:
            return workflow(self, g)
        if r < 0.40:
            kind, needed, msgs = self.single(g)
        elif r < 0.50:
            kind, needed, msgs = self.followup(g)
        elif r < 0.64:
            kind, needed, msgs = self.parallel(g)
        elif r < 0.78:
            kind, needed, msgs = self.chain(g)
        elif r < 0.86:
            kind, needed, msgs = self.error(g)
        else:
            kind, needed, msgs = self.no_call(g)
        tools = needed if kind == "chat_unanswerable" else self.toolset(needed or [])
        conv = {"system": system_for(g, g.cur.get("uses_date", False) or any(
                    "date" in m.get("content", "") for m in msgs[:1])),
                "tools": [t["schema"] for t in tools], "messages": msgs, "kind": kind,
                "domain": (needed[0]["domain"] if needed and kind != "chat_unanswerable" else "chat")}
        if g.cur.get("uses_date") and g.day.today.isoformat() not in conv["system"] and \
                "%d" % g.day.today.year not in conv["system"]:
            conv["system"] = (conv["system"] + " " + g.day.system_line(g.rng)).strip()
        return conv


def call(tool, args):
    return {"name": tool["name"], "arguments": args}


THANKS = [("thanks!", "You're welcome!"), ("thank you", "You're welcome. Anything else?"),
          ("great, thanks", "Glad to help!"), ("perfect", "Great! Let me know if you need anything else."),
          ("cool", "Happy to help.")]
TRANSIENT = ["Service temporarily unavailable, please retry.", "Request timed out.", "rate limit exceeded, retry in 1s",
             "502 Bad Gateway", "connection reset by peer"]
PERMANENT = ["Not found.", "Permission denied.", "The resource does not exist.", "Invalid credentials.",
             "Quota exceeded for this account.", "404: no such item"]
FAIL_SAY = ["Sorry, that didn't work: %s.", "I couldn't do that. The tool said: %s.",
            "That failed (%s). Do you want me to try something else?", "Unfortunately it returned an error: %s."]
CANT = ["Sorry, I can't do that with the tools I have here.",
        "I don't have a tool for that, so I can't help with it right now.",
        "That's not something I can do with the available tools.",
        "I can't help with that here: none of my tools covers it."]


# ---------------------------------------------------------------------------------------------- structured output
URGENT_WORDS = ("down", "immediately", "urgent", "asap", "can't", "cannot", "locked", "twice", "crash", "lost", "hacked")
PLANS = ["free", "pro", "business", "enterprise", "starter", "unknown"]
INTENTS = ["weather", "email", "calendar", "music", "shopping", "travel", "smart_home", "finance", "notes",
           "messaging", "support", "navigation"]
INTENT_UTTER = {
    "weather": ["will it rain tomorrow", "how cold is it in {city}", "do I need an umbrella today"],
    "email": ["send a mail to {person}", "check my inbox", "reply to the last email from {person}"],
    "calendar": ["what's on my schedule tomorrow", "book a meeting with {person} on Friday", "cancel my 3pm"],
    "music": ["play some {genre}", "skip this song", "put on {artist}"],
    "shopping": ["order more {product}", "where is my package", "add {product} to my cart"],
    "travel": ["find flights to {city}", "book a hotel in {city} for two nights", "when does my flight leave"],
    "smart_home": ["turn off the {room} lights", "set the thermostat to 21", "lock the front door"],
    "finance": ["what's my balance", "how much did I spend on food this month", "send 50 dollars to {person}"],
    "notes": ["note that {note}", "show my notes from yesterday", "add milk to my shopping list"],
    "messaging": ["text {person} that I'm late", "post in #{channel} that the build is fixed", "message {person}"],
    "support": ["my order arrived broken", "I want a refund", "the app keeps crashing"],
    "navigation": ["how do I get to {city}", "directions to the airport", "how long is the drive to {city}"],
}


def fill_pool(g, s):
    return (s.replace("{city}", g.city()).replace("{person}", g.first()).replace("{genre}", g.pick(P.GENRES))
            .replace("{artist}", g.pick(P.ARTISTS)).replace("{product}", g.product()).replace("{room}", g.pick(P.ROOMS))
            .replace("{note}", g.note()).replace("{channel}", g.pick(P.CHANNELS)))


def structured(gen, g):
    rng = g.rng
    r = rng.random()
    system, user = "", ""
    if r < 0.3:
        cat = rng.choice(list(P.TICKET_TEXTS))
        text = rng.choice(P.TICKET_TEXTS[cat])
        cats = ["billing", "bug", "other"] if cat != "account" or rng.random() < 0.5 else ["billing", "bug", "account", "other"]
        label = cat if cat in cats else "other"
        urgent = any(w in text.lower() for w in URGENT_WORDS)
        system = rng.choice(["You sort support tickets into %s." % join_list(rng, cats).replace(" & ", " or ").replace(" and ", " or "),
                             "Classify the support ticket: category (%s) and whether it is urgent." % ", ".join(cats),
                             "You triage customer tickets."])
        user = rng.choice(["Customer plan: %s. Ticket: %s" % (rng.choice(PLANS), text), "Ticket: %s" % text, text])
        obj, kind = {"category": label, "urgent": urgent}, "struct_ticket"
    elif r < 0.5:
        s = rng.choice(list(P.REVIEW_TEXTS))
        text = rng.choice(P.REVIEW_TEXTS[s])
        system = rng.choice(["Classify the sentiment of the review as positive, negative or neutral.",
                             "You label customer reviews by sentiment.", "Sentiment analysis."])
        user = rng.choice(["Review: %s" % text, text, "Text: \"%s\"" % text])
        obj, kind = {"sentiment": s}, "struct_sentiment"
        if rng.random() < 0.3:
            obj["score"] = {"positive": rng.choice([0.8, 0.9, 0.95]), "negative": rng.choice([0.05, 0.1, 0.2]),
                            "neutral": 0.5}[s]
    elif r < 0.7:
        intent = rng.choice(INTENTS)
        opts = rng.sample([i for i in INTENTS if i != intent], rng.randint(2, 6)) + [intent]
        rng.shuffle(opts)
        text = fill_pool(g, rng.choice(INTENT_UTTER[intent]))
        system = rng.choice(["Classify the user's request into one of: %s." % ", ".join(opts),
                             "You route requests. Intents: %s." % ", ".join(opts)])
        user = text
        obj, kind = {"intent": intent}, "struct_intent"
    elif r < 0.88:
        person, city = g.person(), g.city()
        iso, says = g.day.pick(rng)
        d = rng.choice(says)
        text = rng.choice(["Set up a meeting with %s in %s %s." % (person, city, d),
                           "%s is flying to %s %s." % (person, city, d),
                           "Remind me to call %s %s when I'm in %s." % (person, d, city),
                           "Dinner with %s %s, somewhere in %s." % (person, d, city)])
        system = rng.choice(["Extract the person, the city and the date (YYYY-MM-DD) from the message.",
                             "You extract entities from text."]) + " " + g.day.system_line(rng)
        user = text
        obj, kind = {"person": person, "city": city, "date": iso}, "struct_entities"
    else:
        name = g.person()
        email, phone = P.email_of(rng, name), g.phone()
        co = g.company()
        text = rng.choice(["Best regards,\n%s\n%s\n%s | %s" % (name, co, email, phone),
                           "Hi, this is %s from %s. Reach me at %s or %s." % (name, co, email, phone),
                           "-- \n%s, %s\nphone: %s\nmail: %s" % (name, co, phone, email)])
        system = "Extract the contact details from the email signature."
        user = text
        obj, kind = {"name": name, "company": co, "email": email, "phone": phone}, "struct_contact"
    msgs = [{"role": "user", "content": user}, {"role": "assistant", "content": json.dumps(obj)}]
    return {"system": system, "tools": [], "messages": msgs, "kind": kind, "domain": "structured"}


def workflow(gen, g):
    """Agent steps shaped like examples/*.yaml (unit_convert, docs_qa, organize_files)."""
    rng = g.rng
    r = rng.random()
    if r < 0.45 and "calculator" in BY_NAME:
        t = BY_NAME["calculator"]
        conv = rng.choice([("mi", "km", 1.609344, "1 mi = 1.609344 km"), ("km", "mi", 0.621371, "1 km = 0.621371 mi"),
                           ("lb", "kg", 0.453592, "1 lb = 0.453592 kg"), ("in", "cm", 2.54, "1 in = 2.54 cm"),
                           ("ft", "m", 0.3048, "1 ft = 0.3048 m"), ("kg", "lb", 2.20462, "1 kg = 2.20462 lb")])
        v = rng.choice([rng.randint(1, 100), rng.randint(1, 20) * 5, round(rng.uniform(1, 50), 1)])
        expr = "%s * %s" % (v, conv[2])
        res = {"result": round(v * conv[2], 6)}
        msgs = [{"role": "user", "content": "Convert %s %s to %s (%s)." % (v, conv[0], conv[1], conv[3])},
                {"role": "assistant", "tool_call": call(t, {"expression": expr})},
                {"role": "tool", "content": dumps(res)},
                {"role": "assistant", "content": rng.choice(["%s %s is %s %s.", "%s %s = %s %s."]) % (
                    v, conv[0], ("%.3f" % res["result"]).rstrip("0").rstrip("."), conv[1])}]
        tools = [t]
        system = "You convert units. Use the calculator tool, then answer with the number."
    elif r < 0.75:
        path = P.path(rng, False)
        line = rng.randint(1, 120)
        passage = rng.choice(PASSAGES)
        q = rng.choice(["What does the warranty cover?", "How do I reset the router?", "How long do refunds take?",
                        "What is the API rate limit?"])
        msgs = [{"role": "user", "content": "Question: %s\nPassage %s:%d: %s" % (q, path, line, passage)},
                {"role": "assistant", "content": "%s (%s:%d)" % (passage, path, line)}]
        tools, system = [], "Answer the question from the passage and cite it as path:line."
    else:
        files = ["sorted/" + f for f in rng.sample(P.FILES, rng.randint(2, 5))]
        first = next((f for f in files if "README" in f), None) or \
            next((f for f in files if f.endswith((".md", ".txt"))), files[0])
        msgs = [{"role": "user", "content": "Which file in sorted/ should I read first? Files: %s" % json.dumps(files)},
                {"role": "assistant", "content": rng.choice(["Start with %s.", "Read %s first.", "%s is the best start."]) % first}]
        tools, system = [BY_NAME["file_list"]] if "file_list" in BY_NAME else [], ""
    return {"system": system, "tools": [t["schema"] for t in tools], "messages": msgs, "kind": "workflow",
            "domain": "workflow"}


from chains import CHAINS  # noqa: E402  (the chain table, after the tools it names)


# ---------------------------------------------------------------------------------------------- main
def est_tokens(text, tok):
    if tok:
        return len(tok.encode(text))
    return int(len(text.encode("utf-8")) / 3.2)


def generate(split, n, seed, tok=None):
    gen = Gen(split, seed * 7 + (0 if split == "train" else 1000003))
    out = []
    while len(out) < n:
        c = gen.conversation()
        while est_tokens(chat_format.render_prompt(c, len(c["messages"]) - 1), tok) > MAX_PROMPT_TOKENS and \
                len(c["tools"]) > 1:
            needed = {m["tool_call"]["name"] for m in c["messages"] if "tool_call" in m} | \
                {x["name"] for m in c["messages"] for x in m.get("tool_calls", [])}
            drop = [t for t in c["tools"] if t["name"] not in needed]
            if not drop:
                break
            c["tools"].remove(drop[-1])
        out.append(c)
    return out


def percentiles(xs, ps=(50, 90, 99, 100)):
    xs = sorted(xs)
    return {p: xs[min(len(xs) - 1, int(len(xs) * p / 100))] for p in ps} if xs else {}


def stats(name, convs, tok):
    from collections import Counter
    kinds = Counter(c["kind"] for c in convs)
    doms = Counter(c["domain"] for c in convs)
    ntools = Counter(min(len(c["tools"]), 14) // 5 * 5 for c in convs)
    lens = [est_tokens(chat_format.render_prompt(c, len(c["messages"]) - 1), tok) for c in convs]
    calls = sum(1 for c in convs for m in c["messages"] if "tool_call" in m or "tool_calls" in m)
    print("== %s: %d conversations, %d assistant call turns" % (name, len(convs), calls))
    print("kinds:", ", ".join("%s %d" % kv for kv in sorted(kinds.items(), key=lambda kv: -kv[1])))
    print("domains:", ", ".join("%s %d" % kv for kv in sorted(doms.items(), key=lambda kv: -kv[1])))
    print("tools per prompt (bucket of 5):", dict(sorted(ntools.items())))
    unit = "tokens" if tok else "tokens (estimate: UTF-8 bytes / 3.2; pass --tokenizer for exact counts)"
    print("last-prompt length %s: %s" % (unit, percentiles(lens)))


def render_show(c):
    return chat_format.render_conversation(c)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--train", type=int, default=60000)
    ap.add_argument("--heldout", type=int, default=600)
    ap.add_argument("--stats", action="store_true")
    ap.add_argument("--tokenizer", help="bpe.py tokenizer JSON for exact token counts (and the 4,096 limit)")
    ap.add_argument("--show", type=int, default=0, help="print this many rendered train conversations")
    ap.add_argument("--style", default="compact", choices=chat_format.TOOL_STYLES,
                    help="tool rendering used to measure prompt lengths (default compact, the v2 style)")
    a = ap.parse_args()
    chat_format.set_tool_style(a.style)
    tok = None
    if a.tokenizer:
        from bpe import Tokenizer
        tok = Tokenizer.load(a.tokenizer)
    held = sorted(HELD)
    print("catalog: %d tools, %d domains; held out: %d tools (%d domains whole: %s)" % (
        len(TOOLS), len(DOMAINS), len(held), len(catalog.HELD_OUT_DOMAINS), ", ".join(catalog.HELD_OUT_DOMAINS)),
        file=sys.stderr)
    for split, n in (("train", a.train), ("heldout", a.heldout)):
        if n <= 0:
            continue
        convs = generate(split, n, a.seed, tok)
        if a.out:
            import os
            os.makedirs(a.out, exist_ok=True)
            with open("%s/%s.jsonl" % (a.out, split), "w") as f:
                for c in convs:
                    f.write(json.dumps(c, ensure_ascii=False) + "\n")
        if a.stats:
            stats(split, convs, tok)
        if split == "train":
            for c in convs[:a.show]:
                print("-" * 100)
                print("[%s / %s]" % (c["kind"], c["domain"]))
                print(render_show(c))


if __name__ == "__main__":
    main()
