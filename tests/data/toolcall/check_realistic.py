#!/usr/bin/env python3
"""Validate tests/data/toolcall/realistic.jsonl (stdlib only).

Checks: every line is a JSON object with id/tags/messages/tools/gold; ids are unique; tools are
well-formed OpenAI function tools whose parameters are a JSON Schema object (properties, required
a subset of properties); message roles are valid and tool messages answer an earlier assistant
tool_call id; gold calls name a tool of the case and their arguments validate against its schema
(types, enums, min/max, required present, no unknown keys where additionalProperties is false).
Prints counts by tag and by tool set; exits 1 on any error.

Usage: python3 tests/data/toolcall/check_realistic.py [FILE]
"""
import json
import os
import sys
from collections import Counter

KINDS = ("single", "parallel", "multi_turn", "no_call")
ROLES = ("system", "user", "assistant", "tool")
JSON_TYPES = ("object", "array", "string", "integer", "number", "boolean", "null")


def type_ok(value, t):
    if t == "object":
        return isinstance(value, dict)
    if t == "array":
        return isinstance(value, list)
    if t == "string":
        return isinstance(value, str)
    if t == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if t == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if t == "boolean":
        return isinstance(value, bool)
    if t == "null":
        return value is None
    return False


def check_schema(schema, where, errs):
    """Checks that a (sub)schema is well-formed."""
    if not isinstance(schema, dict):
        errs.append(f"{where}: schema is not an object")
        return
    t = schema.get("type")
    types = t if isinstance(t, list) else [t] if t is not None else []
    for x in types:
        if x not in JSON_TYPES:
            errs.append(f"{where}: unknown type {x!r}")
    if "enum" in schema and (not isinstance(schema["enum"], list) or not schema["enum"]):
        errs.append(f"{where}: enum must be a non-empty list")
    if "object" in types:
        props = schema.get("properties", {})
        if not isinstance(props, dict):
            errs.append(f"{where}: properties is not an object")
            props = {}
        req = schema.get("required", [])
        if not isinstance(req, list) or not all(isinstance(r, str) for r in req):
            errs.append(f"{where}: required must be a list of strings")
        else:
            for r in req:
                if r not in props:
                    errs.append(f"{where}: required {r!r} not in properties")
        for k, sub in props.items():
            check_schema(sub, f"{where}.{k}", errs)
    if "array" in types and "items" in schema:
        check_schema(schema["items"], f"{where}[]", errs)


def validate(value, schema, where, errs):
    """Validates a value against the JSON Schema subset the tools use."""
    t = schema.get("type")
    types = t if isinstance(t, list) else [t] if t is not None else []
    if types and not any(type_ok(value, x) for x in types):
        errs.append(f"{where}: {value!r} is not of type {t}")
        return
    if "enum" in schema and value not in schema["enum"]:
        errs.append(f"{where}: {value!r} not in enum {schema['enum']}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            errs.append(f"{where}: {value} < minimum {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            errs.append(f"{where}: {value} > maximum {schema['maximum']}")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for r in schema.get("required", []):
            if r not in value:
                errs.append(f"{where}: missing required {r!r}")
        for k, v in value.items():
            if k in props:
                validate(v, props[k], f"{where}.{k}", errs)
            elif schema.get("additionalProperties", True) is False:
                errs.append(f"{where}: unknown key {k!r}")
    if isinstance(value, list) and "items" in schema:
        for i, v in enumerate(value):
            validate(v, schema["items"], f"{where}[{i}]", errs)


def check_case(case, where, errs):
    for key in ("id", "tags", "messages", "tools", "gold"):
        if key not in case:
            errs.append(f"{where}: missing {key!r}")
            return None
    tags = case["tags"]
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        errs.append(f"{where}: tags must be a list of strings")
        return None
    kinds = [k for k in KINDS if k in tags]
    if len(kinds) != 1:
        errs.append(f"{where}: needs exactly one of {KINDS} in tags, has {kinds}")

    # tools
    tools = {}
    if not isinstance(case["tools"], list) or not case["tools"]:
        errs.append(f"{where}: tools must be a non-empty list")
        return None
    for i, tool in enumerate(case["tools"]):
        tw = f"{where}: tools[{i}]"
        if not isinstance(tool, dict) or tool.get("type") != "function" or not isinstance(tool.get("function"), dict):
            errs.append(f"{tw}: not {{type: function, function: {{...}}}}")
            continue
        f = tool["function"]
        name = f.get("name")
        if not isinstance(name, str) or not name:
            errs.append(f"{tw}: missing name")
            continue
        if name in tools:
            errs.append(f"{tw}: duplicate tool name {name!r}")
        if not isinstance(f.get("description"), str):
            errs.append(f"{tw}: {name} has no description")
        params = f.get("parameters")
        if not isinstance(params, dict) or params.get("type") != "object" or not isinstance(params.get("properties"), dict):
            errs.append(f"{tw}: {name} parameters must be a JSON Schema with type object and properties")
            continue
        check_schema(params, f"{tw}:{name}", errs)
        tools[name] = params

    # messages
    msgs = case["messages"]
    if not isinstance(msgs, list) or not msgs:
        errs.append(f"{where}: messages must be a non-empty list")
        return None
    open_ids = set()
    seen_ids = set()
    for i, m in enumerate(msgs):
        mw = f"{where}: messages[{i}]"
        role = m.get("role") if isinstance(m, dict) else None
        if role not in ROLES:
            errs.append(f"{mw}: bad role {role!r}")
            continue
        if role == "system" and i != 0:
            errs.append(f"{mw}: system message not first")
        if role in ("system", "user") and not (isinstance(m.get("content"), str) and m["content"]):
            errs.append(f"{mw}: {role} needs non-empty string content")
        if role == "assistant":
            tcs = m.get("tool_calls")
            if tcs is None:
                if not isinstance(m.get("content"), str):
                    errs.append(f"{mw}: assistant without tool_calls needs string content")
            else:
                if not isinstance(tcs, list) or not tcs:
                    errs.append(f"{mw}: tool_calls must be a non-empty list")
                    continue
                for tc in tcs:
                    fn = tc.get("function", {}) if isinstance(tc, dict) else {}
                    cid = tc.get("id") if isinstance(tc, dict) else None
                    if tc.get("type") != "function" or not isinstance(cid, str):
                        errs.append(f"{mw}: tool call needs id and type function")
                        continue
                    if cid in seen_ids:
                        errs.append(f"{mw}: duplicate tool call id {cid!r}")
                    seen_ids.add(cid)
                    open_ids.add(cid)
                    if fn.get("name") not in tools:
                        errs.append(f"{mw}: history calls unknown tool {fn.get('name')!r}")
                        continue
                    try:
                        args = json.loads(fn.get("arguments", ""))
                    except (TypeError, ValueError):
                        errs.append(f"{mw}: arguments of {fn.get('name')} are not a JSON string")
                        continue
                    validate(args, tools[fn["name"]], f"{mw}:{fn['name']}", errs)
        if role == "tool":
            cid = m.get("tool_call_id")
            if cid not in open_ids:
                errs.append(f"{mw}: tool_call_id {cid!r} answers no pending call")
            open_ids.discard(cid)
            if not isinstance(m.get("content"), str):
                errs.append(f"{mw}: tool content must be a string")
    if open_ids:
        errs.append(f"{where}: tool calls without results: {sorted(open_ids)}")
    last = msgs[-1].get("role") if isinstance(msgs[-1], dict) else None
    if last not in ("user", "tool"):
        errs.append(f"{where}: last message must be user or tool, is {last!r}")
    if "multi_turn" in tags and not any(isinstance(m, dict) and m.get("role") in ("assistant", "tool") for m in msgs):
        errs.append(f"{where}: multi_turn case has no earlier assistant turn")

    # gold
    gold = case["gold"]
    if not isinstance(gold, dict):
        errs.append(f"{where}: gold must be an object")
        return None
    if "tool_calls" in gold:
        if "content" in gold:
            errs.append(f"{where}: gold has both tool_calls and content")
        gcs = gold["tool_calls"]
        if not isinstance(gcs, list) or not gcs:
            errs.append(f"{where}: gold tool_calls must be a non-empty list")
            return None
        for j, gc in enumerate(gcs):
            gw = f"{where}: gold[{j}]"
            if not isinstance(gc, dict) or set(gc) != {"name", "arguments"}:
                errs.append(f"{gw}: must be {{name, arguments}}")
                continue
            if gc["name"] not in tools:
                errs.append(f"{gw}: tool {gc['name']!r} not in the case's tools")
                continue
            validate(gc["arguments"], tools[gc["name"]], f"{gw}:{gc['name']}", errs)
        if "no_call" in tags:
            errs.append(f"{where}: no_call case has gold tool_calls")
        if "parallel" in tags and len(gcs) < 2:
            errs.append(f"{where}: parallel case needs 2+ gold calls")
        if "parallel" not in tags and len(gcs) > 1:
            errs.append(f"{where}: several gold calls but not tagged parallel")
        if "ordered" in tags and len(gcs) < 2:
            errs.append(f"{where}: ordered case needs 2+ gold calls")
        return [gc.get("name") for gc in gcs if isinstance(gc, dict)]
    if gold.get("content") is not True:
        errs.append(f"{where}: gold needs tool_calls or content: true")
    extra = set(gold) - {"content", "content_contains"}
    if extra:
        errs.append(f"{where}: unknown gold keys {sorted(extra)}")
    cc = gold.get("content_contains", [])
    if not isinstance(cc, list) or not all(isinstance(x, str) and x for x in cc):
        errs.append(f"{where}: content_contains must be a list of non-empty strings")
    if kinds and kinds[0] in ("single", "parallel"):
        errs.append(f"{where}: {kinds[0]} case with content gold")
    return []


def tool_set_key(case):
    return ",".join(sorted(t["function"]["name"] for t in case["tools"]))


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "realistic.jsonl")
    errs = []
    ids = set()
    tags = Counter()
    sets = Counter()
    set_names = {}
    n = 0
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                errs.append(f"line {lineno}: empty line")
                continue
            try:
                case = json.loads(line)
            except ValueError as e:
                errs.append(f"line {lineno}: not JSON: {e}")
                continue
            if not isinstance(case, dict):
                errs.append(f"line {lineno}: not an object")
                continue
            n += 1
            cid = case.get("id")
            where = f"line {lineno} ({cid})"
            if not isinstance(cid, str) or not cid:
                errs.append(f"{where}: bad id")
            elif cid in ids:
                errs.append(f"{where}: duplicate id")
            ids.add(cid)
            if check_case(case, where, errs) is None:
                continue
            tags.update(case["tags"])
            key = tool_set_key(case)
            sets[key] += 1
            set_names.setdefault(key, case["tags"][0])
    print(f"{path}: {n} cases")
    print("by tag:")
    for t, c in sorted(tags.items(), key=lambda x: (-x[1], x[0])):
        print(f"  {t:14} {c}")
    print(f"by tool set ({len(sets)} sets):")
    for key, c in sorted(sets.items(), key=lambda x: (-x[1], x[0])):
        print(f"  {set_names[key]:12} {c:3}  ({len(key.split(','))} tools)")
    for e in errs:
        print("ERROR", e, file=sys.stderr)
    if errs:
        print(f"{len(errs)} errors", file=sys.stderr)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
