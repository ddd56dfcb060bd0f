#!/bin/sh
# Re-create the bundled model from scratch on CPU (not part of CI):
#   models/recipe/make_model.sh            # WORK=/var/lib/dloop-train MINUTES=110 SEED=1 THREADS=2 DEVICE=cpu
# DEVICE=cuda trains on a GPU (give TRAIN_ARGS a larger --batch there); export and goldens run on the CPU.
# Experiments: GEN_ARGS (e.g. "--drills 0.3" or "--synth 0.6"), BPE_ARGS (e.g. --split-words) and TRAIN_ARGS
# (e.g. "--tie --max-prompt 480 --slot-frac 0.5 --pad-weight 0.1 --copy-weight 3 --curriculum 0.3") go to
# gen_data.py, bpe.py and train.py as they are; the defaults make the committed model.
# Steps: generate data, train the BPE tokenizer, train (resumes from WORK/ckpt.pt), export
# models/default.gguf, evaluate on the held-out split, write the golden logits in tests/data/bundled/.
# Needs Debian's python3 with python3-torch, python3-numpy, python3-regex and libopenblas0-pthread.
set -eu
cd "$(dirname "$0")/../.."
PY=/usr/bin/python3
R=models/recipe
WORK=${WORK:-/var/lib/dloop-train}
MINUTES=${MINUTES:-110}
SEED=${SEED:-1}
TYPE=${TYPE:-F16}
mkdir -p "$WORK/data"
# OpenBLAS picks its own kernels; some environments force settings that make it slower.
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE

[ -f "$WORK/data/train.jsonl" ] || $PY $R/gen_data.py --out "$WORK/data" --seed "$SEED" --train 60000 --heldout 600 \
    ${GEN_ARGS:-}
[ -f "$WORK/tokenizer.json" ] || $PY $R/bpe.py --data "$WORK/data/train.jsonl" --out "$WORK/tokenizer.json" --vocab 4096 ${BPE_ARGS:-}
$PY $R/train.py --data "$WORK/data" --tokenizer "$WORK/tokenizer.json" --work "$WORK" --max-minutes "$MINUTES" \
    --seed "$SEED" --threads "${THREADS:-2}" --device "${DEVICE:-cpu}" ${TRAIN_ARGS:-}
$PY $R/export_gguf.py --ckpt "$WORK/final.pt" --tokenizer "$WORK/tokenizer.json" --out models/default.gguf \
    --type "$TYPE"
$PY $R/dump_logits.py --gguf models/default.gguf --ckpt "$WORK/final.pt" --tokenizer "$WORK/tokenizer.json" \
    --data "$WORK/data/heldout.jsonl" --out tests/data/bundled
DLOOP=${DLOOP:-build/dloop}
if [ -x "$DLOOP" ]; then
    "$DLOOP" eval --model models/default.gguf --effort instant,low,medium,high | tee "$WORK/eval-dloop.txt"
else
    echo "make_model.sh: $DLOOP is not built; evaluate later with: dloop eval --effort instant,low,medium,high"
fi
if [ "${EVAL_PY:-0}" = 1 ]; then
    $PY $R/eval.py --ckpt "$WORK/final.pt" --tokenizer "$WORK/tokenizer.json" --data "$WORK/data" --limit 60 \
        --out "$WORK/eval-heldout.json"
fi
