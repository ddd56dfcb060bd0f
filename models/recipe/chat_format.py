"""The chat format of the bundled model (docs/model-format.md), shared by data, training and eval.

A conversation is {"system": str, "tools": [tool schema], "messages": [msg]} where a message is
{"role": "user"|"assistant"|"tool", "content": str} and an assistant message may carry
"tool_call": {"name": ..., "arguments": {...}} instead of text, or "tool_calls": [call, ...] (parallel calls,
rendered as their <tool_call>...</tool_call> joined with "\n"; each result is its own "tool" message, in call
order).

Tool rendering has two styles (models/recipe/README.md):
- "full" (the default, the bundled v1 model): each tool line is json.dumps(tool) as given;
- "compact" (model v2): each tool line is json.dumps({"name", "description": trim(d, 160),
  "parameters": strip(p)}, separators=(",", ":")), see compact_tool. OpenAI-shaped tools
  {"type": "function", "function": {...}} render their inner function object.
Choose with set_tool_style("compact") or the environment variable DLOOP_TOOL_STYLE=compact (read at import), so
scripts that do not know of the flag (dump_logits.py, eval.py) render the style of the model they work on.
"""
import json
import os
import re

EOT = "<|endoftext|>"
IM_START = "<|im_start|>"
IM_END = "<|im_end|>"
MASK = "<|mask|>"
TOOL_CALL = "<tool_call>"
TOOL_CALL_END = "</tool_call>"
# Fixed ids 0..5, in this order, in the tokenizer.
SPECIAL_TOKENS = [EOT, IM_START, IM_END, MASK, TOOL_CALL, TOOL_CALL_END]

TOOLS_FOOTER = ('Call a tool as <tool_call>{"name": NAME, "arguments": ARGS}</tool_call>, '
                'or answer the user.')


def dumps(obj):
    return json.dumps(obj, ensure_ascii=False)


TOOL_STYLES = ("full", "compact")
_tool_style = os.environ.get("DLOOP_TOOL_STYLE", "full")
if _tool_style not in TOOL_STYLES:
    raise ValueError("DLOOP_TOOL_STYLE must be one of %s, not %r" % (TOOL_STYLES, _tool_style))


def set_tool_style(style):
    global _tool_style
    if style not in TOOL_STYLES:
        raise ValueError("tool style must be one of %s, not %r" % (TOOL_STYLES, style))
    _tool_style = style


def tool_style():
    return _tool_style


# Keys strip() removes from a parameters schema, at every depth.
STRIP_KEYS = ("$schema", "$id", "$comment", "title", "examples", "additionalProperties")
DESCRIPTION_BYTES = 160  # a tool's description
PARAM_DESCRIPTION_BYTES = 80  # every nested "description" in its parameters
_WS = re.compile(r"[ \t\n\r\f\v]+")  # ASCII whitespace only, as the C++ side (chat_template.cpp)


def trim(s, n):
    """Whitespace runs collapsed to one space, stripped; if longer than n UTF-8 bytes, cut at the last space at or
    before byte n (the space dropped), or at n bytes on a character boundary when there is no space; no ellipsis."""
    s = _WS.sub(" ", s).strip(" ")
    b = s.encode("utf-8")
    if len(b) <= n:
        return s
    cut = b.rfind(b" ", 0, n + 1)
    if cut < 0:
        cut = n
        while cut > 0 and (b[cut] & 0xC0) == 0x80:  # b[cut] is a continuation byte: back to a character start
            cut -= 1
    return b[:cut].decode("utf-8")


# Keywords whose value maps names (property names, definition names) to subschemas: the names are kept whatever
# they are (a parameter may be called "title" or "description"), the subschemas are stripped.
SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")


def strip(schema):
    """The schema with STRIP_KEYS removed at every depth and every "description" string trimmed to 80 bytes.
    Key order is kept. Under a SCHEMA_MAPS keyword the keys are names, never removed, and each value is a schema;
    the values of "enum", "const" and "default" are kept as they are; lists (anyOf, oneOf, allOf, prefixItems,
    items as a list) are walked element by element."""
    if isinstance(schema, list):
        return [strip(v) for v in schema]
    if not isinstance(schema, dict):
        return schema
    out = {}
    for k, v in schema.items():
        if k in STRIP_KEYS:
            continue
        if k == "description" and isinstance(v, str):
            out[k] = trim(v, PARAM_DESCRIPTION_BYTES)
        elif k in ("enum", "const", "default"):
            out[k] = v
        elif k in SCHEMA_MAPS and isinstance(v, dict):
            out[k] = {name: strip(sub) for name, sub in v.items()}
        else:
            out[k] = strip(v)
    return out


def tool_function(tool):
    """The function object of a tool: the inner "function" of an OpenAI-shaped tool, else the tool itself."""
    if isinstance(tool.get("function"), dict) and tool.get("type", "function") == "function":
        return tool["function"]
    return tool


def compact_tool(tool):
    f = tool_function(tool)
    obj = {"name": f.get("name", ""), "description": trim(f.get("description", "") or "", DESCRIPTION_BYTES),
           "parameters": strip(f.get("parameters", {"type": "object", "properties": {}}))}
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def render_tool_line(tool):
    return compact_tool(tool) if _tool_style == "compact" else dumps(tool)


def render_tools(tools):
    lines = ["# Tools", "<tools>"] + [render_tool_line(t) for t in tools] + ["</tools>", TOOLS_FOOTER]
    return "\n".join(lines)


def render_system(system, tools):
    """The system turn, or "" when there is neither system text nor tools."""
    parts = [p for p in (system, render_tools(tools) if tools else "") if p]
    if not parts:
        return ""
    return IM_START + "system\n" + "\n\n".join(parts) + IM_END + "\n"


def render_tool_call(call, pad=None):
    """<tool_call>{...}</tool_call>; pad maps argument name -> extra spaces after its value."""
    if not pad:
        return TOOL_CALL + dumps({"name": call["name"], "arguments": call["arguments"]}) + TOOL_CALL_END
    args = ", ".join(dumps(k) + ": " + dumps(v) + " " * pad.get(k, 0)
                     for k, v in call["arguments"].items())
    return TOOL_CALL + '{"name": ' + dumps(call["name"]) + ', "arguments": {' + args + "}}" + TOOL_CALL_END


def assistant_content(msg):
    if msg.get("tool_calls"):
        return "\n".join(render_tool_call(c) for c in msg["tool_calls"])
    if "tool_call" in msg:
        return render_tool_call(msg["tool_call"], msg.get("pad"))
    return msg["content"]


def render_message(msg):
    body = assistant_content(msg) if msg["role"] == "assistant" else msg["content"]
    return IM_START + msg["role"] + "\n" + body + IM_END + "\n"


def render_prompt(conv, upto):
    """Everything before assistant message `upto`, ending with the generation prompt."""
    text = render_system(conv.get("system", ""), conv.get("tools", []))
    text += "".join(render_message(m) for m in conv["messages"][:upto])
    return text + IM_START + "assistant\n"


def heldout_prompt(turn):
    """The prompt of a held-out turn (tests/data/toolcall/heldout.jsonl: messages with an optional leading system
    message, tools): everything before the turn's assistant message, as the engine renders it."""
    msgs = turn["messages"]
    conv = {"system": msgs[0]["content"] if msgs and msgs[0]["role"] == "system" else "",
            "tools": turn["tools"], "messages": [m for m in msgs if m["role"] != "system"]}
    return render_prompt(conv, len(conv["messages"]))


def render_conversation(conv):
    text = render_system(conv.get("system", ""), conv.get("tools", []))
    return text + "".join(render_message(m) for m in conv["messages"])


def parse_tool_call(text):
    """The call dict from an answer, or None when the answer is not a tool call; raises ValueError on bad JSON."""
    text = text.strip()
    if not text.startswith(TOOL_CALL):
        return None
    end = text.find(TOOL_CALL_END)
    body = text[len(TOOL_CALL):end if end >= 0 else len(text)]
    obj = json.loads(body)
    if not isinstance(obj, dict) or "name" not in obj or not isinstance(obj.get("arguments"), dict):
        raise ValueError("not a call object")
    return obj


# ChatML with Hermes-style tools; renders the same bytes as render_conversation / render_prompt.
# Every literal is an expression, so whitespace control never eats a newline.
CHAT_TEMPLATE = (
    "{%- set sys = messages[0].content if messages and messages[0].role == 'system' else '' -%}"
    "{%- if sys or tools -%}"
    "{{- '<|im_start|>system\\n' + sys -}}"
    "{%- if sys and tools -%}{{- '\\n\\n' -}}{%- endif -%}"
    "{%- if tools -%}"
    "{{- '# Tools\\n<tools>\\n' -}}"
    "{%- for t in tools -%}{{- t | tojson -}}{{- '\\n' -}}{%- endfor -%}"
    "{{- '</tools>\\n' + '" + TOOLS_FOOTER + "' -}}"
    "{%- endif -%}"
    "{{- '<|im_end|>\\n' -}}"
    "{%- endif -%}"
    "{%- for m in messages -%}"
    "{%- if m.role != 'system' -%}"
    "{{- '<|im_start|>' + m.role + '\\n' -}}"
    "{%- if m.role == 'assistant' and m.tool_calls -%}"
    "{%- for c in m.tool_calls -%}"
    "{%- set f = c.function if c.function is defined else c -%}"
    "{%- if not loop.first -%}{{- '\\n' -}}{%- endif -%}"
    "{{- '<tool_call>' + ({'name': f.name, 'arguments': f.arguments} | tojson) + '</tool_call>' -}}"
    "{%- endfor -%}"
    "{%- else -%}{{- m.content -}}{%- endif -%}"
    "{{- '<|im_end|>\\n' -}}"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}"
)
