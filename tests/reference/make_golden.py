"""Write the committed goldens in tests/data/golden/ from the models in tests/data/models/.

    /usr/bin/python3 tests/reference/make_golden.py            # write the goldens
    /usr/bin/python3 tests/reference/make_golden.py --check    # replay them with float32 compute

Outputs (described in tests/data/golden/README.md):
  <model>.logits.f32, <model>.long.logits.f32   raw float32 logits, row-major [n_tokens][n_vocab]
  logits.json                                   the inputs and shapes of those files
  decode_cases.json                             decoding cases with expected tokens and forward-pass counts
  tokenizer_cases.json                          text -> token ids of the test tokenizer

Cases that use randomness search seeds upwards from a fixed start until the outcome is robust (every decision
at least MIN_LOGIT_MARGIN / MIN_CONF_MARGIN away from flipping) and meets the case's extra condition, so the
output is deterministic and re-running produces byte-identical files.
"""

import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_models  # noqa: E402
from dllm_ref import DecodeOptions, Model, generate  # noqa: E402

MODELS_DIR = os.path.join(make_models.REPO, "tests", "data", "models")
GOLDEN_DIR = os.path.join(make_models.REPO, "tests", "data", "golden")
MIN_LOGIT_MARGIN = 1e-3
MIN_CONF_MARGIN = 1e-4
MAX_SEED_TRIES = 400
LOGITS_RTOL = 1e-4     # max |engine - golden| / max(1, max |golden|) for an f32 engine

VOCAB = make_models.build_vocab()
TOKENS, _, MERGES = VOCAB
ID = {t: i for i, t in enumerate(TOKENS)}
MASK, EOS, EOT = ID["<|mask|>"], ID["<|endoftext|>"], ID["<|im_end|>"]


def chat_prompt(user):
    """ChatML generation prompt for one user message, tokenized."""
    text = f"<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n"
    return make_models.encode(text, TOKENS, MERGES)


PROMPTS = [chat_prompt(u) for u in (
    "What is the weather in Paris?",
    "Call the tool and tell me the wind.",
    "Write one short answer.",
    "The loop starts again from the top.",
)]


# ---------------------------------------------------------------------------------------------
# Logits goldens
# ---------------------------------------------------------------------------------------------

def logits_inputs():
    """The fixed token sequences: 24 tokens (prompt, masks, specials) and a 72-token canvas."""
    short = chat_prompt("What is it?")[:16] + [MASK, MASK, EOS, MASK, ID["a"], MASK, MASK, EOT]
    assert len(short) == 24
    long = PROMPTS[0] + [MASK] * 32 + PROMPTS[2][:72 - len(PROMPTS[0]) - 32]
    assert len(long) == 72
    return {"": short, ".long": long}


def write_logits_goldens():
    entries = []
    for fname in make_models.MODELS:
        model = Model(os.path.join(MODELS_DIR, fname))
        stem = fname[:-len(".gguf")]
        for suffix, tokens in logits_inputs().items():
            logits = model.forward(tokens).astype("<f4")
            out = f"{stem}{suffix}.logits.f32"
            logits.tofile(os.path.join(GOLDEN_DIR, out))
            srt = np.sort(logits, axis=1)
            entries.append({
                "model": fname, "tokens": tokens, "n_tokens": len(tokens), "n_vocab": model.n_vocab,
                "logits_file": out, "shift_logits": model.shift_logits,
                "argmax": [int(i) for i in np.argmax(logits, axis=1)],
                "min_top2_gap": float(np.min(srt[:, -1] - srt[:, -2])),
                "max_abs": float(np.max(np.abs(logits))),
            })
    write_json("logits.json", {"format": 1, "layout": "float32 little-endian, row-major [n_tokens][n_vocab], "
                               "row p = output at position p, no logit shift", "cases": entries})


# ---------------------------------------------------------------------------------------------
# Decode cases
# ---------------------------------------------------------------------------------------------

def case(name, model, desc, prompt=0, seeded=False, need=None, **opts):
    """A case spec: options for DecodeOptions, whether to search seeds, and an extra acceptance test."""
    return dict(name=name, model=model, desc=desc, prompt=prompt, seeded=seeded, need=need, opts=opts)


def stops_early(r, opts):
    """The answer stopped on EOS after at least 3 tokens, saving at least 2 steps."""
    return r.stopped_by_eos and 3 <= len(r.output) < opts.gen_length - 2 and r.steps <= opts.steps - 2


def commits_several(r, opts):
    """Threshold decoding committed more than one token in some step."""
    return r.steps < opts.gen_length


def has_stop_token(r, opts):
    """An EOS/EOT appears inside the answer (for the no-stop case)."""
    return len(r.output) < opts.gen_length - 1


CASES = [
    # LLaDA block schedule
    case("llada_greedy_one_block", "llada-f32.gguf", "greedy, one block, one token per step",
         gen_length=16, steps=16, block_length=16),
    case("llada_greedy_blocks", "llada-f32.gguf", "greedy, 3 semi-autoregressive blocks, 2 tokens per step",
         gen_length=24, steps=12, block_length=8),
    case("llada_greedy_uneven", "llada-f32.gguf", "greedy, 2 blocks of 8 in 3 steps each (3, 3, 2)",
         gen_length=16, steps=6, block_length=8),
    case("llada_random_remask", "llada-f32.gguf", "greedy tokens, random remasking",
         seeded=True, gen_length=16, steps=8, block_length=8, algorithm="random"),
    case("llada_temperature", "llada-f32.gguf", "Gumbel noise T = 0.8, low_confidence",
         seeded=True, gen_length=16, steps=8, block_length=8, temperature=0.8),
    case("llada_temperature_random", "llada-f32.gguf", "Gumbel noise T = 1.0 with random remasking",
         seeded=True, gen_length=16, steps=16, block_length=4, temperature=1.0, algorithm="random"),
    case("llada_top_k", "llada-f32.gguf", "T = 1.0 with top_k 3",
         seeded=True, gen_length=16, steps=8, block_length=16, temperature=1.0, top_k=3),
    case("llada_cfg", "llada-f32.gguf", "greedy with classifier-free guidance 1.5",
         gen_length=16, steps=8, block_length=8, cfg_scale=1.5),
    case("llada_cfg_temperature", "llada-f32.gguf", "CFG 0.5 with T = 0.5",
         seeded=True, gen_length=16, steps=8, block_length=8, cfg_scale=0.5, temperature=0.5),
    case("llada_threshold", "llada-f32.gguf", "threshold decoding 0.3 in blocks of 8",
         need=commits_several, gen_length=16, steps=16, block_length=8, threshold=0.3),
    case("llada_topk_margin_blocks", "llada-f32.gguf", "block schedule with topk_margin confidence",
         gen_length=16, steps=8, block_length=8, algorithm="topk_margin"),
    case("llada_entropy_blocks", "llada-f32.gguf", "block schedule with entropy confidence",
         gen_length=16, steps=8, block_length=8, algorithm="entropy"),
    case("llada_eos_stop", "llada-f32.gguf", "T = 1.0; stops on EOS before the last block",
         seeded=True, need=stops_early, gen_length=16, steps=16, block_length=4, temperature=1.0),
    case("llada_eos_no_stop", "llada-f32.gguf", "as llada_eos_stop but eos_stop = false: all steps run",
         seeded=True, need=has_stop_token, gen_length=16, steps=16, block_length=4, temperature=1.0,
         eos_stop=False),
    # LLaDA weight types
    *[case(f"llada_greedy_{t}", f"{m}.gguf", f"greedy on {t} weights", gen_length=16, steps=8, block_length=8)
      for t, m in (("f16", "llada-f16"), ("bf16", "llada-bf16"), ("q8_0", "llada-q8_0"), ("q4_0", "llada-q4_0"),
                   ("tied", "llada-tied-f32"), ("q4_k", "llada256-q4_k"), ("q6_k", "llada256-q6_k"))],
    # Dream eps schedule
    case("dream_origin_greedy", "dream-f32.gguf", "origin, greedy tokens, random positions",
         seeded=True, schedule="eps", gen_length=16, steps=8, algorithm="origin"),
    case("dream_origin_temperature", "dream-f32.gguf", "origin with T = 0.5, top_p 0.9",
         seeded=True, schedule="eps", gen_length=16, steps=16, algorithm="origin", temperature=0.5, top_p=0.9),
    case("dream_maskgit_plus", "dream-f32.gguf", "maskgit_plus greedy",
         schedule="eps", gen_length=16, steps=8, algorithm="maskgit_plus"),
    case("dream_topk_margin", "dream-f32.gguf", "topk_margin greedy",
         schedule="eps", gen_length=16, steps=8, algorithm="topk_margin"),
    case("dream_entropy", "dream-f32.gguf", "entropy greedy, 16 steps",
         schedule="eps", gen_length=16, steps=16, algorithm="entropy"),
    case("dream_entropy_demo", "dream-f32.gguf", "README demo settings: entropy, T = 0.2, top_p 0.95",
         seeded=True, schedule="eps", gen_length=24, steps=12, algorithm="entropy", temperature=0.2, top_p=0.95),
    case("dream_maskgit_alg_temp", "dream-f32.gguf", "maskgit_plus with alg_temp 0.5 (sampled positions)",
         seeded=True, schedule="eps", gen_length=16, steps=8, algorithm="maskgit_plus", alg_temp=0.5),
    case("dream_entropy_top_k", "dream-f32.gguf", "entropy with T = 1.0, top_k 5, eps 0.01",
         seeded=True, schedule="eps", gen_length=16, steps=8, algorithm="entropy", temperature=1.0, top_k=5,
         eps=0.01),
    case("dream_cfg", "dream-f32.gguf", "maskgit_plus greedy with CFG 1.0",
         schedule="eps", gen_length=16, steps=8, algorithm="maskgit_plus", cfg_scale=1.0),
    case("dream_eos_stop", "dream-f32.gguf", "entropy with T = 1.0; stops on EOS/EOT before the last step",
         seeded=True, need=stops_early, schedule="eps", gen_length=16, steps=16, algorithm="entropy",
         temperature=1.0),
    case("dream_threshold_blocks", "dream-f32.gguf", "dream model with the block schedule and threshold 0.2",
         need=commits_several, gen_length=16, steps=16, block_length=8, threshold=0.2),
    case("dream_q8_0_entropy", "dream-q8_0.gguf", "entropy greedy on Q8_0 weights (alignment 64 file)",
         schedule="eps", gen_length=16, steps=8, algorithm="entropy"),
]


def robust(r):
    return r.margins.logit >= MIN_LOGIT_MARGIN and r.margins.confidence >= MIN_CONF_MARGIN


def solve_case(spec, models):
    """Find the first prompt (and seed, for seeded cases) whose decode is robust and meets spec['need']."""
    model = models.setdefault(spec["model"], Model(os.path.join(MODELS_DIR, spec["model"])))
    seeds = range(1, MAX_SEED_TRIES + 1) if spec["seeded"] else [0]
    for prompt_idx in range(len(PROMPTS)):
        for seed in seeds:
            opts = DecodeOptions(seed=seed, **spec["opts"])
            r = generate(model, PROMPTS[prompt_idx], opts)
            if robust(r) and (spec["need"] is None or spec["need"](r, opts)):
                return PROMPTS[prompt_idx], opts, r
    raise RuntimeError(f"case {spec['name']}: no robust prompt/seed found")


def finite_or_none(x):
    return None if x == float("inf") else x


def case_json(spec, prompt, o, r):
    return {
        "name": spec["name"], "description": spec["desc"], "model": spec["model"],
        "schedule": o.schedule, "prompt": prompt, "gen_length": o.gen_length, "steps": o.steps,
        "block_length": o.block_length if o.schedule == "block" else o.gen_length,
        "algorithm": o.algorithm, "temperature": o.temperature, "top_k": o.top_k, "top_p": o.top_p,
        "threshold": o.threshold, "seed": o.seed, "cfg_scale": o.cfg_scale, "eps": o.eps,
        "alg_temp": o.alg_temp, "eos_stop": o.eos_stop,
        "expected_answer": r.answer, "expected_output": r.output, "expected_steps": r.steps,
        "expected_forward_passes": r.forward_passes, "stopped_by_eos": r.stopped_by_eos,
        "min_logit_margin": finite_or_none(r.margins.logit),
        "min_confidence_margin": finite_or_none(r.margins.confidence),
    }


def write_decode_cases():
    models, out = {}, []
    for spec in CASES:
        prompt, opts, r = solve_case(spec, models)
        out.append(case_json(spec, prompt, opts, r))
        print(f"  {spec['name']:28s} seed {opts.seed:3d} steps {r.steps:2d} passes {r.forward_passes:2d} "
              f"eos {int(r.stopped_by_eos)} output {r.output}")
    write_json("decode_cases.json", {"format": 1, "min_logit_margin": MIN_LOGIT_MARGIN,
                                     "min_confidence_margin": MIN_CONF_MARGIN, "cases": out})


# ---------------------------------------------------------------------------------------------
# Tokenizer cases
# ---------------------------------------------------------------------------------------------

TOKENIZER_TEXTS = [
    "Hello world",
    "The agent calls the weather tool.",
    "  two  spaces, tabs\tand\nnew lines\n\n",
    "It's 2024: we'll see 12345 numbers!",
    "<|im_start|>user\nWhat is the weather in Paris?<|im_end|>\n<|im_start|>assistant\n",
    "answer<|im_end|><|endoftext|><|mask|><|mask|>",
    "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}",
    "",
]


def write_tokenizer_cases():
    cases = [{"text": t, "parse_special": True, "ids": make_models.encode(t, TOKENS, MERGES)}
             for t in TOKENIZER_TEXTS]
    cases.append({"text": TOKENIZER_TEXTS[5], "parse_special": False,
                  "ids": make_models.encode(TOKENIZER_TEXTS[5], TOKENS, MERGES, parse_special=False)})
    write_json("tokenizer_cases.json", {"format": 1, "model": "llada-f32.gguf", "add_special": False,
                                        "cases": cases})


def to_json(obj, depth=0):
    """JSON with one key per line and lists of scalars on one line."""
    pad, inner = " " * depth, " " * (depth + 1)
    if isinstance(obj, dict):
        items = [f"{inner}{json.dumps(k)}: {to_json(v, depth + 1)}" for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(obj, list) and any(isinstance(v, (dict, list)) for v in obj):
        return "[\n" + ",\n".join(inner + to_json(v, depth + 1) for v in obj) + "\n" + pad + "]"
    return json.dumps(obj, ensure_ascii=False, allow_nan=False)


def write_json(name, obj):
    with open(os.path.join(GOLDEN_DIR, name), "w", encoding="utf-8") as f:
        f.write(to_json(obj) + "\n")


# ---------------------------------------------------------------------------------------------
# --check: replay the committed goldens with float32 compute (what an f32 engine does)
# ---------------------------------------------------------------------------------------------

class F32Model(Model):
    """The reference run with float32 weights and activations, logits rounded to f32."""

    def __init__(self, path):
        super().__init__(path)
        self.w = {k: v.astype(np.float32) for k, v in self.w.items()}
        self.eps = np.float32(self.eps)

    def forward(self, tokens):
        return super().forward(tokens).astype(np.float32).astype(np.float64)


def options_from_case(c):
    """DecodeOptions for one decode_cases.json entry."""
    keys = ("gen_length", "steps", "schedule", "block_length", "algorithm", "temperature", "top_k", "top_p",
            "threshold", "seed", "cfg_scale", "eps", "alg_temp", "eos_stop")
    return DecodeOptions(**{k: c[k] for k in keys})


def check():
    """Compare f32 compute with the committed goldens: logits within LOGITS_RTOL, decode cases exact."""
    failures, models = 0, {}
    load = lambda name: models.setdefault(name, F32Model(os.path.join(MODELS_DIR, name)))  # noqa: E731
    for c in json.load(open(os.path.join(GOLDEN_DIR, "logits.json")))["cases"]:
        ref = np.fromfile(os.path.join(GOLDEN_DIR, c["logits_file"]), dtype="<f4")
        got = load(c["model"]).forward(c["tokens"]).reshape(-1)
        err = float(np.max(np.abs(got - ref)) / max(1.0, float(np.max(np.abs(ref)))))
        failures += err > LOGITS_RTOL
        print(f"  {c['logits_file']:32s} rel err {err:.2e}")
    for c in json.load(open(os.path.join(GOLDEN_DIR, "decode_cases.json")))["cases"]:
        r = generate(load(c["model"]), c["prompt"], options_from_case(c))
        ok = (r.answer, r.output, r.steps, r.forward_passes, r.stopped_by_eos) == (
            c["expected_answer"], c["expected_output"], c["expected_steps"], c["expected_forward_passes"],
            c["stopped_by_eos"])
        failures += not ok
        print(f"  {c['name']:32s} {'ok' if ok else 'MISMATCH'}")
    print("check passed" if failures == 0 else f"check FAILED: {failures} mismatches")
    return failures == 0


def main():
    if sys.argv[1:] == ["--check"]:
        sys.exit(0 if check() else 1)
    os.makedirs(GOLDEN_DIR, exist_ok=True)
    write_logits_goldens()
    write_tokenizer_cases()
    write_decode_cases()
    print(f"goldens written to {GOLDEN_DIR}")


if __name__ == "__main__":
    main()
