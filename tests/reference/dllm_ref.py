"""Independent NumPy reference for dloop's diffusion engine (see tests/reference/SPEC.md).

Forward pass of the "llada" and "dream" architectures read from a GGUF file (weights dequantized as ggml
does, all compute in float64) and the decoding algorithms of SPEC.md:
  - block schedule (LLaDA): low_confidence / random remasking, threshold decoding;
  - eps schedule (Dream): origin / maskgit_plus / topk_margin / entropy, alg_temp;
  - temperature via splitmix64 float64 Gumbel noise, top_k / top_p, classifier-free guidance, EOS stop.

    model = Model("tests/data/models/llada-f32.gguf")
    logits = model.forward(token_ids)                  # (n, n_vocab) float64, unshifted rows
    result = generate(model, prompt_ids, DecodeOptions(gen_length=16, steps=16, block_length=8))

Every decision that a low-precision engine could get wrong is recorded as a margin (result.margins), so the
golden generator can keep only cases whose outcome is robust.
"""

import math
import os
import sys
from dataclasses import dataclass, field

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "scripts"))
from gguf_reader import GGUFReader  # noqa: E402

GOLDEN = 0x9E3779B97F4A7C15
MASK64 = (1 << 64) - 1


# ---------------------------------------------------------------------------------------------
# Random numbers
# ---------------------------------------------------------------------------------------------

class SplitMix64:
    """The single generator of SPEC.md: splitmix64, uniform() = (next() >> 11) * 2^-53."""

    def __init__(self, seed):
        self.state = seed & MASK64

    def next(self):
        self.state = (self.state + GOLDEN) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    def uniform(self):
        return (self.next() >> 11) * 2.0 ** -53

    def uniforms(self, n):
        """n consecutive uniform() draws as a float64 array (vectorised, same stream)."""
        with np.errstate(over="ignore"):
            z = np.uint64(self.state) + np.arange(1, n + 1, dtype=np.uint64) * np.uint64(GOLDEN)
            z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
            z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
            z = z ^ (z >> np.uint64(31))
        self.state = (self.state + n * GOLDEN) & MASK64
        return (z >> np.uint64(11)).astype(np.float64) * 2.0 ** -53


# ---------------------------------------------------------------------------------------------
# Model
# ---------------------------------------------------------------------------------------------

class Model:
    """Hyperparameters, tokenizer ids and float64 weights of a llada/dream GGUF file."""

    def __init__(self, path):
        r = GGUFReader(path)
        self.path = path
        self.arch = r.kv["general.architecture"]
        if self.arch not in ("llada", "dream"):
            raise ValueError(f"{path}: unsupported architecture {self.arch!r}")
        a = self.arch
        self.n_embd = r.kv[f"{a}.embedding_length"]
        self.n_layer = r.kv[f"{a}.block_count"]
        self.n_head = r.kv[f"{a}.attention.head_count"]
        self.n_head_kv = r.kv.get(f"{a}.attention.head_count_kv", self.n_head)
        self.head_dim = r.kv.get(f"{a}.attention.key_length", self.n_embd // self.n_head)
        self.rope_base = float(r.kv.get(f"{a}.rope.freq_base", 10000.0))
        self.eps = float(r.kv[f"{a}.attention.layer_norm_rms_epsilon"])
        self.rope_neox = a == "dream"
        self.shift_logits = bool(r.kv.get("diffusion.shift_logits", True))
        self.n_vocab = len(r.kv["tokenizer.ggml.tokens"])
        self.tokens = r.kv["tokenizer.ggml.tokens"]
        if "tokenizer.ggml.mask_token_id" not in r.kv:
            raise ValueError(f"{path}: tokenizer.ggml.mask_token_id is missing")
        self.mask_id = r.kv["tokenizer.ggml.mask_token_id"]
        self.eos_id = r.kv.get("tokenizer.ggml.eos_token_id")
        self.stop_ids = {i for i in (self.eos_id, r.kv.get("tokenizer.ggml.eot_token_id")) if i is not None}
        self.w = {name: r.tensor(name).astype(np.float64) for name in r.tensors}
        if "output.weight" not in self.w:
            self.w["output.weight"] = self.w["token_embd.weight"]

    def forward(self, tokens):
        """Logits (n_tokens, n_vocab), float64; row p is the output at position p (no shift)."""
        x = self.w["token_embd.weight"][np.asarray(tokens)]
        for i in range(self.n_layer):
            x = self._layer(x, f"blk.{i}.")
        x = rms_norm(x, self.w["output_norm.weight"], self.eps)
        return x @ self.w["output.weight"].T

    def position_logits(self, tokens):
        """Logits used for each canvas position: row p-1 (row 0 at p = 0) when shift_logits, else row p."""
        logits = self.forward(tokens)
        if self.shift_logits:
            logits = np.concatenate([logits[:1], logits[:-1]], axis=0)
        return logits

    def _linear(self, x, name):
        y = x @ self.w[name + ".weight"].T
        if name + ".bias" in self.w:
            y = y + self.w[name + ".bias"]
        return y

    def _layer(self, x, p):
        n, hd = x.shape[0], self.head_dim
        h = rms_norm(x, self.w[p + "attn_norm.weight"], self.eps)
        q = self._linear(h, p + "attn_q").reshape(n, self.n_head, hd)
        k = self._linear(h, p + "attn_k").reshape(n, self.n_head_kv, hd)
        v = self._linear(h, p + "attn_v").reshape(n, self.n_head_kv, hd)
        q = rope(q, self.rope_base, self.rope_neox)
        k = rope(k, self.rope_base, self.rope_neox)
        x = x + self._linear(attention(q, k, v).reshape(n, -1), p + "attn_output")
        y = rms_norm(x, self.w[p + "ffn_norm.weight"], self.eps)
        gate, up = self._linear(y, p + "ffn_gate"), self._linear(y, p + "ffn_up")
        return x + self._linear(silu(gate) * up, p + "ffn_down")


def rms_norm(x, w, eps):
    """x / sqrt(mean(x^2) + eps) * w over the last axis."""
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w


def silu(x):
    return x / (1.0 + np.exp(-x))


def rope(x, theta, neox):
    """Rotate (n, heads, head_dim) by position p = row index; NORM pairs (2i, 2i+1), NEOX (i, i+hd/2)."""
    n, _, hd = x.shape
    freq = theta ** (-2.0 * np.arange(hd // 2) / hd)
    ang = np.arange(n)[:, None] * freq[None, :]
    cos, sin = np.cos(ang)[:, None, :], np.sin(ang)[:, None, :]
    if neox:
        a, b = x[..., :hd // 2], x[..., hd // 2:]
    else:
        a, b = x[..., 0::2], x[..., 1::2]
    ra, rb = a * cos - b * sin, a * sin + b * cos
    out = np.empty_like(x)
    if neox:
        out[..., :hd // 2], out[..., hd // 2:] = ra, rb
    else:
        out[..., 0::2], out[..., 1::2] = ra, rb
    return out


def attention(q, k, v):
    """Bidirectional softmax attention with GQA: query head h uses kv head h // (n_head / n_head_kv)."""
    group = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
    scores = np.einsum("qhd,khd->hqk", q, k) / math.sqrt(q.shape[2])
    scores -= scores.max(axis=-1, keepdims=True)
    probs = np.exp(scores)
    probs /= probs.sum(axis=-1, keepdims=True)
    return np.einsum("hqk,khd->qhd", probs, v)


# ---------------------------------------------------------------------------------------------
# Decoding
# ---------------------------------------------------------------------------------------------

BLOCK_ALGS = ("low_confidence", "random", "topk_margin", "entropy")
EPS_ALGS = ("origin", "maskgit_plus", "topk_margin", "entropy")
ALIASES = {"maskgit_plus": "low_confidence"}


@dataclass
class DecodeOptions:
    """Decoding parameters (SPEC.md). Off values: top_k 0, top_p 1.0, threshold None, cfg_scale 0, alg_temp 0."""
    gen_length: int
    steps: int
    schedule: str = "block"          # "block" (LLaDA) or "eps" (Dream)
    block_length: int = 0            # block schedule; 0 means gen_length
    algorithm: str = "low_confidence"
    temperature: float = 0.0
    top_k: int = 0
    top_p: float = 1.0
    threshold: float = None          # block schedule only: Fast-dLLM threshold decoding
    seed: int = 0
    cfg_scale: float = 0.0
    eps: float = 1e-3                # eps schedule
    alg_temp: float = 0.0            # eps schedule, confidence algorithms
    eos_stop: bool = True


@dataclass
class Margins:
    """Smallest distances of any decision from flipping: logit units and confidence units."""
    logit: float = math.inf
    confidence: float = math.inf

    def add_logit(self, gap):
        self.logit = min(self.logit, float(gap))

    def add_conf(self, gap):
        self.confidence = min(self.confidence, float(gap))


@dataclass
class DecodeResult:
    answer: list                     # the gen_length answer tokens (after the EOS fill)
    output: list                     # answer up to, not including, the first stop token
    steps: int                       # denoising steps run
    forward_passes: int              # model evaluations (2 per step with CFG)
    stopped_by_eos: bool
    margins: Margins = field(default_factory=Margins)


def filter_logits(l, top_k, top_p):
    """Apply top_k then top_p (over softmax(l), sorted, ties to the lower id); others become -inf.

    Returns (filtered logits, Margins of the two cut-offs).
    """
    l, margins = l.copy(), Margins()
    order = np.lexsort((np.arange(l.size), -l))          # descending logit, lower id first
    if 0 < top_k < np.isfinite(l).sum():
        margins.add_logit(l[order[top_k - 1]] - l[order[top_k]])
        l[order[top_k:]] = -np.inf
    if top_p < 1.0:
        p = softmax(l)[order]
        csum = np.cumsum(p)
        reach = np.nonzero(csum >= top_p)[0]              # first index whose prefix sum reaches top_p
        cut = int(reach[0]) if reach.size else l.size - 1
        margins.add_conf(abs(csum[cut] - top_p))
        if cut > 0:
            margins.add_conf(abs(top_p - csum[cut - 1]))
        l[order[cut + 1:]] = -np.inf
    return l, margins


def softmax(l):
    """float64 softmax; -inf entries get probability 0."""
    e = np.exp(l - l.max())
    return e / e.sum()


def top_two_gap(values):
    """Difference between the largest and second largest finite value (inf if fewer than two)."""
    v = np.sort(values[np.isfinite(values)])
    return v[-1] - v[-2] if v.size >= 2 else math.inf


def choose_token(l, temperature, rng):
    """Argmax (T = 0) or float64 Gumbel-max over all V ids in order (T > 0); lowest id wins ties.

    Returns (token, gap): gap is how far (in logit units) the runner-up is from winning.
    """
    if temperature == 0:
        return int(np.argmax(l)), top_two_gap(l)
    u = rng.uniforms(l.size)
    u[u == 0.0] = 2.0 ** -53
    with np.errstate(invalid="ignore"):
        score = l / temperature - np.log(-np.log(u))
    score[~np.isfinite(l)] = -np.inf
    return int(np.argmax(score)), top_two_gap(score) * temperature


def confidence(p, x0, algorithm):
    """Confidence of a position from its probabilities p and chosen token x0 (not for 'random'/'origin')."""
    if algorithm in ("low_confidence", "origin"):
        return p[x0]
    if algorithm == "topk_margin":
        top = np.sort(p)[::-1]
        return top[0] - (top[1] if top.size > 1 else 0.0)
    if algorithm == "entropy":
        nz = p[p > 0]
        return float(np.sum(nz * np.log(nz)))
    raise ValueError(f"unknown confidence algorithm {algorithm!r}")


def step_logits(model, canvas, n_prompt, opts):
    """Per-position logits for one step (float64), with CFG when cfg_scale > 0; returns (logits, passes)."""
    cond = model.position_logits(canvas)
    if opts.cfg_scale <= 0:
        return cond, 1
    uncond_canvas = list(canvas)
    uncond_canvas[:n_prompt] = [model.mask_id] * n_prompt
    un = model.position_logits(uncond_canvas)
    return un + (opts.cfg_scale + 1.0) * (cond - un), 2


def predict(model, logits, positions, opts, rng, margins):
    """Token choice and confidence for each masked position (canvas order).

    Returns {pos: (x0, conf, margins)}: the token-choice and top-k/top-p margins, recorded by commit() for
    the positions that commit, and here for all positions when a sampled x0 feeds the confidence (p[x0] at
    T > 0). A top-k/top-p cut-off that flips at a position that does not commit only moves its confidence by
    the share of the boundary token; that second-order effect is not tracked.
    """
    out = {}
    alg = ALIASES.get(opts.algorithm, opts.algorithm)
    for pos in positions:
        l = logits[pos].copy()
        l[model.mask_id] = -np.inf                       # the mask id is never a candidate
        l, pos_margins = filter_logits(l, opts.top_k, opts.top_p)
        x0, gap = choose_token(l, opts.temperature, rng)
        pos_margins.add_logit(gap)
        if alg == "random":
            conf = rng.uniform()
        elif alg == "origin":
            conf = None
        else:
            conf = confidence(softmax(l), x0, alg)
        if alg == "low_confidence" and opts.temperature > 0:
            margins.add_logit(gap)
        out[pos] = (x0, conf, pos_margins)
    return out


def select_top(pred, k, margins):
    """The k most confident positions (ties: lowest position); records the boundary margin."""
    ranked = sorted(pred, key=lambda pos: (-pred[pos][1], pos))
    if 0 < k < len(ranked):
        margins.add_conf(pred[ranked[k - 1]][1] - pred[ranked[k]][1])
    return ranked[:k]


def select_threshold(pred, threshold, margins):
    """Every position with confidence >= threshold, or else the single most confident one."""
    for pos in pred:
        margins.add_conf(abs(pred[pos][1] - threshold))
    chosen = [pos for pos in pred if pred[pos][1] >= threshold]
    return chosen if chosen else select_top(pred, 1, margins)


def select_sampled(pred, k, alg_temp, rng, margins):
    """k draws without replacement from softmax(conf / alg_temp), inverse CDF in canvas order."""
    cands, chosen = sorted(pred), []
    for _ in range(min(k, len(cands))):
        c = np.array([pred[pos][1] for pos in cands]) / alg_temp
        w = np.exp(c - c.max())
        csum = np.cumsum(w)
        target = rng.uniform() * csum[-1]
        idx = min(int(np.searchsorted(csum, target, side="right")), len(cands) - 1)
        margins.add_conf(np.min(np.abs(csum - target)) / csum[-1])
        chosen.append(cands.pop(idx))
    return chosen


def eos_stopped(canvas, start, end, model):
    """True when some answer position holds a stop token and every answer position before it is committed."""
    for pos in range(start, end):
        if canvas[pos] == model.mask_id:
            return False
        if canvas[pos] in model.stop_ids:
            return True
    return False


def transfer_counts(m, steps):
    """LLaDA linear schedule: m // steps per step, the first m % steps steps get one more."""
    return [m // steps + (1 if j < m % steps else 0) for j in range(steps)]


def eps_time(i, steps, eps):
    """t_i = 1 - i * (1 - eps) / steps, evaluated in this order in float64."""
    return 1.0 - float(i) * (1.0 - eps) / float(steps)


class _Run:
    """State of one generate() call."""

    def __init__(self, model, prompt, opts):
        self.model, self.opts = model, opts
        self.n_prompt = len(prompt)
        self.canvas = list(prompt) + [model.mask_id] * opts.gen_length
        self.end = len(self.canvas)
        self.rng = SplitMix64(opts.seed)
        self.margins = Margins()
        self.steps = self.passes = 0
        self.stopped = False

    def masked(self, lo, hi):
        return [p for p in range(lo, hi) if self.canvas[p] == self.model.mask_id]

    def forward_predict(self, lo, hi):
        """One step's forward pass(es) and predictions for the masked positions of [lo, hi)."""
        logits, passes = step_logits(self.model, self.canvas, self.n_prompt, self.opts)
        self.steps += 1
        self.passes += passes
        return predict(self.model, logits, self.masked(lo, hi), self.opts, self.rng, self.margins)

    def commit(self, pred, positions):
        for pos in positions:
            self.canvas[pos] = pred[pos][0]
            self.margins.add_logit(pred[pos][2].logit)
            self.margins.add_conf(pred[pos][2].confidence)
        if self.opts.eos_stop and eos_stopped(self.canvas, self.n_prompt, self.end, self.model):
            self.stopped = True

    def result(self):
        model = self.model
        answer = [model.eos_id if t == model.mask_id and self.stopped else t
                  for t in self.canvas[self.n_prompt:]]
        output = []
        for t in answer:
            if t in model.stop_ids:
                break
            output.append(t)
        return DecodeResult(answer, output, self.steps, self.passes, self.stopped, self.margins)


def _validate(opts):
    if opts.schedule == "block":
        alg = ALIASES.get(opts.algorithm, opts.algorithm)
        bl = opts.block_length or opts.gen_length
        if alg not in BLOCK_ALGS:
            raise ValueError(f"block schedule: algorithm must be one of {BLOCK_ALGS}, got {opts.algorithm!r}")
        if opts.gen_length % bl:
            raise ValueError(f"gen_length {opts.gen_length} is not a multiple of block_length {bl}")
        if opts.threshold is None:
            nb = opts.gen_length // bl
            if opts.steps % nb or not 0 < opts.steps // nb <= bl:
                raise ValueError(f"steps {opts.steps} must be a multiple of the {nb} blocks "
                                 f"with 1 <= steps per block <= block_length {bl}")
        elif alg == "random":
            raise ValueError("threshold decoding needs a confidence algorithm, not 'random'")
        if opts.alg_temp:
            raise ValueError("alg_temp applies to the eps schedule only")
    elif opts.schedule == "eps":
        if opts.algorithm not in EPS_ALGS + ("low_confidence",):
            raise ValueError(f"eps schedule: algorithm must be one of {EPS_ALGS}, got {opts.algorithm!r}")
        if opts.threshold is not None:
            raise ValueError("threshold decoding applies to the block schedule only")
        if opts.steps < 1 or not 0 < opts.eps < 1:
            raise ValueError("eps schedule needs steps >= 1 and 0 < eps < 1")
    else:
        raise ValueError(f"unknown schedule {opts.schedule!r}")


def _block_schedule(run):
    opts = run.opts
    bl = opts.block_length or opts.gen_length
    for b in range(opts.gen_length // bl):
        lo, hi = run.n_prompt + b * bl, run.n_prompt + (b + 1) * bl
        if opts.threshold is not None:
            counts = None
        else:
            counts = transfer_counts(len(run.masked(lo, hi)), opts.steps // (opts.gen_length // bl))
        j = 0
        while run.masked(lo, hi) and not run.stopped and (counts is None or j < len(counts)):
            pred = run.forward_predict(lo, hi)
            if counts is None:
                chosen = select_threshold(pred, opts.threshold, run.margins)
            else:
                chosen = select_top(pred, counts[j], run.margins)
            run.commit(pred, chosen)
            j += 1
        if run.stopped:
            return


def _eps_schedule(run):
    opts = run.opts
    alg = opts.algorithm
    lo, hi = run.n_prompt, run.end
    for i in range(opts.steps):
        if not run.masked(lo, hi) or run.stopped:
            return
        last = i == opts.steps - 1
        ratio = 1.0 if last else 1.0 - eps_time(i + 1, opts.steps, opts.eps) / eps_time(i, opts.steps, opts.eps)
        n = len(run.masked(lo, hi))
        pred = run.forward_predict(lo, hi)
        if alg == "origin":
            chosen = [pos for pos in sorted(pred) if run.rng.uniform() < ratio]
        else:
            k = n if last else int(math.floor(n * ratio))
            if opts.alg_temp > 0:
                chosen = select_sampled(pred, k, opts.alg_temp, run.rng, run.margins)
            else:
                chosen = select_top(pred, k, run.margins)
        run.commit(pred, chosen)


def generate(model, prompt, opts):
    """Decode gen_length tokens after prompt with the options of SPEC.md; returns a DecodeResult."""
    _validate(opts)
    run = _Run(model, prompt, opts)
    (_block_schedule if opts.schedule == "block" else _eps_schedule)(run)
    return run.result()
