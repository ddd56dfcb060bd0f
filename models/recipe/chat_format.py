"""The chat format of the bundled model (docs/model-format.md), shared by data, training and eval.

A conversation is {"system": str, "tools": [tool schema], "messages": [msg]} where a message is
{"role": "user"|"assistant"|"tool", "content": str} and an assistant message may carry
"tool_call": {"name": ..., "arguments": {...}} instead of text.
"""
import json

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


def render_tools(tools):
    lines = ["# Tools", "<tools>"] + [dumps(t) for t in tools] + ["</tools>", TOOLS_FOOTER]
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
