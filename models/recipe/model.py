"""A small LLaDA-architecture model in PyTorch: bidirectional attention, RMSNorm, SwiGLU, RoPE.

RoPE here is the rotate-half (NEOX) pairing of HF LLaDA; export_gguf.py permutes the q/k rows for ggml's
NORM (adjacent-pair) rope, as llama.cpp's LLaDA converter does.
"""
from dataclasses import dataclass, asdict

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class Config:
    vocab: int = 4096
    dim: int = 320
    layers: int = 6
    heads: int = 5
    ffn: int = 864
    rope_theta: float = 10000.0
    eps: float = 1e-5
    max_len: int = 1024
    tie: bool = False  # output projection shares the embedding matrix (exported as two equal tensors)

    def to_dict(self):
        return asdict(self)


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope_tables(head_dim, length, theta, device=None):
    inv = theta ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    ang = torch.arange(length, dtype=torch.float64)[:, None] * inv[None, :]
    return ang.cos().float().to(device), ang.sin().float().to(device)


def apply_rope(x, cos, sin):
    """x: (B, H, L, D); rotate-half pairs (i, i + D/2)."""
    half = x.shape[-1] // 2
    a, b = x[..., :half], x[..., half:]
    return torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)


def attention(q, k, v, key_bias):
    """Bidirectional softmax attention; key_bias (B, 1, 1, L) is -inf for padding keys, or None."""
    B, H, L, D = q.shape
    qf, kt = q.reshape(B * H, L, D), k.reshape(B * H, L, D).transpose(1, 2)
    if key_bias is None:
        scores = torch.baddbmm(qf.new_empty(B * H, L, L), qf, kt, beta=0.0, alpha=D ** -0.5)
    else:
        bias = key_bias.expand(B, H, L, L).reshape(B * H, L, L)
        scores = torch.baddbmm(bias, qf, kt, alpha=D ** -0.5)
    return (scores.softmax(-1) @ v.reshape(B * H, L, D)).view(B, H, L, D)


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.heads = c.heads
        self.attn_norm = RMSNorm(c.dim, c.eps)
        self.q = nn.Linear(c.dim, c.dim, bias=False)
        self.k = nn.Linear(c.dim, c.dim, bias=False)
        self.v = nn.Linear(c.dim, c.dim, bias=False)
        self.o = nn.Linear(c.dim, c.dim, bias=False)
        self.ffn_norm = RMSNorm(c.dim, c.eps)
        self.gate = nn.Linear(c.dim, c.ffn, bias=False)
        self.up = nn.Linear(c.dim, c.ffn, bias=False)
        self.down = nn.Linear(c.ffn, c.dim, bias=False)

    def forward(self, x, cos, sin, key_bias):
        B, L, D = x.shape
        h = self.attn_norm(x)
        q, k, v = (m(h).view(B, L, self.heads, -1).transpose(1, 2) for m in (self.q, self.k, self.v))
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        a = attention(q, k, v, key_bias)
        x = x + self.o(a.transpose(1, 2).reshape(B, L, D))
        h = self.ffn_norm(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class LLaDA(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.embed = nn.Embedding(c.vocab, c.dim)
        self.blocks = nn.ModuleList(Block(c) for _ in range(c.layers))
        self.norm = RMSNorm(c.dim, c.eps)
        self.out = nn.Linear(c.dim, c.vocab, bias=False)
        cos, sin = rope_tables(c.dim // c.heads, c.max_len, c.rope_theta)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)
        self.apply(self._init)
        for b in self.blocks:
            nn.init.normal_(b.o.weight, std=0.02 / (2 * c.layers) ** 0.5)
            nn.init.normal_(b.down.weight, std=0.02 / (2 * c.layers) ** 0.5)
        if c.tie:
            self.out.weight = self.embed.weight

    @staticmethod
    def _init(m):
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, std=0.02)

    def hidden(self, ids, lengths=None):
        """Final normed hidden states (B, L, dim); keys at positions >= lengths[b] are ignored."""
        B, L = ids.shape
        key_bias = None
        if lengths is not None and int(lengths.min()) < L:
            valid = torch.arange(L, device=ids.device)[None, :] < lengths[:, None]
            key_bias = torch.zeros(B, 1, 1, L, device=ids.device)
            key_bias = key_bias.masked_fill(~valid[:, None, None, :], float("-inf"))
        x = self.embed(ids)
        cos, sin = self.cos[:L], self.sin[:L]
        for b in self.blocks:
            x = b(x, cos, sin, key_bias)
        return self.norm(x)

    def forward(self, ids, lengths=None):
        """Logits (B, L, vocab)."""
        return self.out(self.hidden(ids, lengths))


def mimetic_init(model, qk=(0.7, 0.7), vo=(0.7, 0.7), seed=0):
    """Initialise each attention block so that W_Q^T W_K = a Z + b I and W_O W_V = a' Z' + b' I (Z random with
    variance 1/dim): from the start, tokens attend to tokens like themselves, and a head passes what it attends to
    through (b' > 0) or subtracts it (b' < 0: the paper's choice, and the better one in copy_toy.py). After
    Trockman and Kolter, "Mimetic initialization of self-attention layers", 2023. qk and vo are (a, b)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for b in model.blocks:
            d = b.q.weight.shape[1]
            for (a, s), (first, second) in ((qk, (b.q, b.k)), (vo, (b.o, b.v))):
                m = a * torch.randn(d, d, generator=g) / d ** 0.5 + s * torch.eye(d)
                u, sv, vt = torch.linalg.svd(m)
                r = sv.sqrt()
                if first is b.q:  # score = x^T W_Q^T W_K x'
                    first.weight.copy_(r[:, None] * u.T)
                    second.weight.copy_(r[:, None] * vt)
                else:  # output = W_O W_V x
                    first.weight.copy_(u * r[None, :])
                    second.weight.copy_(r[:, None] * vt)
