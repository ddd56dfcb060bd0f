"""Byte-level BPE (GPT-2 byte alphabet, qwen2 pre-tokenizer) trained on the corpus.

Token ids: the special tokens of chat_format.SPECIAL_TOKENS are 0..5, the 256 byte tokens follow in byte
order, then one token per merge in merge order. Merges whose result is whitespace only are never made, so
runs of spaces stay one token per space. With --split-words merges also never join a letter or digit to another
character (space, quote, underscore, punctuation): a word is then the same tokens whether it follows a space, a
quote or an underscore (`door lock` in a request and `restore_door_lock`, `Alice` and `"Alice"`), at the cost of
about 12% more tokens. The bundled model was trained without it (models/README.md).
"""
import json
import re as _re
from collections import Counter, defaultdict

import regex

from chat_format import SPECIAL_TOKENS

QWEN2_PATTERN = (r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
                 r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
PRE = regex.compile(QWEN2_PATTERN)
SPECIAL_SPLIT = _re.compile("(" + "|".join(_re.escape(s) for s in SPECIAL_TOKENS) + ")")


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), 256))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, [chr(c) for c in cs]))


BYTE_ENC = bytes_to_unicode()
BYTE_DEC = {v: k for k, v in BYTE_ENC.items()}
WS_CHARS = {BYTE_ENC[b] for b in range(256) if chr(b).isspace()}
# Letters and digits (bytes >= 0x80 are parts of non-ASCII characters, counted as letters).
WORD_CHARS = {BYTE_ENC[b] for b in range(256) if b >= 0x80 or chr(b).isalnum()}


def pre_tokenize(text):
    """Byte-unicode words of a text without special tokens."""
    return ["".join(BYTE_ENC[b] for b in w.encode("utf-8")) for w in PRE.findall(text)]


def is_whitespace_only(s):
    return all(c in WS_CHARS for c in s)


def mergeable(a, b, split_words=False):
    """Whether BPE may join tokens a and b: not whitespace only, and (split_words) not across a word boundary."""
    if is_whitespace_only(a + b):
        return False
    return not split_words or (a[-1] in WORD_CHARS) == (b[0] in WORD_CHARS)


def train_bpe(texts, vocab_size, split_words=False):
    """Merges [(a, b)] learned from texts (special tokens removed) until vocab_size tokens."""
    counts = Counter()
    for t in texts:
        for part in SPECIAL_SPLIT.split(t):
            if part and part not in SPECIAL_TOKENS:
                counts.update(pre_tokenize(part))
    words = [list(w) for w in counts]
    freqs = list(counts.values())
    pairs, where = Counter(), defaultdict(set)
    for i, w in enumerate(words):
        _add_pairs(w, freqs[i], i, pairs, where, +1, split_words)
    merges = []
    n_merges = vocab_size - len(SPECIAL_TOKENS) - 256
    while len(merges) < n_merges and pairs:
        best = max(pairs.items(), key=lambda kv: (kv[1], kv[0]))[0]
        if pairs[best] < 2:
            break
        merges.append(best)
        for i in list(where[best]):
            w = words[i]
            _add_pairs(w, freqs[i], i, pairs, where, -1, split_words)
            words[i] = _merge_word(w, best)
            _add_pairs(words[i], freqs[i], i, pairs, where, +1, split_words)
    return merges


def _add_pairs(w, f, i, pairs, where, sign, split_words):
    for p in zip(w, w[1:]):
        if not mergeable(p[0], p[1], split_words):
            continue
        pairs[p] += sign * f
        if sign > 0:
            where[p].add(i)
        elif pairs[p] <= 0:
            del pairs[p]
            where.pop(p, None)


def _merge_word(w, pair):
    out, i = [], 0
    while i < len(w):
        if i + 1 < len(w) and w[i] == pair[0] and w[i + 1] == pair[1]:
            out.append(w[i] + w[i + 1])
            i += 2
        else:
            out.append(w[i])
            i += 1
    return out


class Tokenizer:
    def __init__(self, merges):
        self.merges = [tuple(m) for m in merges]
        self.ranks = {m: r for r, m in enumerate(self.merges)}
        self.tokens = list(SPECIAL_TOKENS) + [BYTE_ENC[b] for b in range(256)]
        self.ids = {t: i for i, t in enumerate(self.tokens)}
        for a, b in self.merges:  # two merges may make the same text: one token
            if a + b not in self.ids:
                self.ids[a + b] = len(self.tokens)
                self.tokens.append(a + b)
        self.cache = {}

    @classmethod
    def load(cls, path):
        with open(path) as f:
            return cls(json.load(f)["merges"])

    def save(self, path):
        with open(path, "w") as f:
            json.dump({"merges": [list(m) for m in self.merges]}, f)

    def special_id(self, s):
        return SPECIAL_TOKENS.index(s)

    def _bpe(self, word):
        if word in self.cache:
            return self.cache[word]
        parts = list(word)
        while len(parts) > 1:
            ranked = [(self.ranks.get((a, b), 1 << 30), i) for i, (a, b) in enumerate(zip(parts, parts[1:]))]
            r, i = min(ranked)
            if r == 1 << 30:
                break
            parts[i:i + 2] = [parts[i] + parts[i + 1]]
        ids = [self.ids[p] for p in parts]
        self.cache[word] = ids
        return ids

    def encode(self, text):
        out = []
        for part in SPECIAL_SPLIT.split(text):
            if not part:
                continue
            if part in SPECIAL_TOKENS:
                out.append(SPECIAL_TOKENS.index(part))
            else:
                for w in pre_tokenize(part):
                    out.extend(self._bpe(w))
        return out

    def decode(self, ids):
        out, buf = [], []
        for i in ids:
            t = self.tokens[i]
            if i < len(SPECIAL_TOKENS):
                out.append(bytes(buf).decode("utf-8", "replace"))
                buf = []
                out.append(t)
            else:
                buf.extend(BYTE_DEC[c] for c in t)
        out.append(bytes(buf).decode("utf-8", "replace"))
        return "".join(out)


def main():
    import argparse
    import chat_format
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True, help="train.jsonl")
    ap.add_argument("--out", required=True)
    ap.add_argument("--vocab", type=int, default=4096)
    ap.add_argument("--sample", type=int, default=15000)
    ap.add_argument("--split-words", action="store_true",
                    help="never merge a letter or digit with another character (see the module docstring)")
    a = ap.parse_args()
    texts = []
    with open(a.data) as f:
        for i, line in enumerate(f):
            if i >= a.sample:
                break
            texts.append(chat_format.render_conversation(json.loads(line)))
    tok = Tokenizer(train_bpe(texts, a.vocab, a.split_words))
    tok.save(a.out)
    print("vocab", len(tok.tokens))


if __name__ == "__main__":
    main()
