#!/bin/bash
# Model v9's next GPU window (issue 67), one device call: v8 widened (or the last window's
# candidate, INIT) trained on the 8-variable width-first bank merged with the paper's
# 3-variable bank, each half of the draws, batch 4,096 made on the GPU, every core free.
# Run from the repository root with the wheels of pyoperon, pint and their needs in .whl/
# (docs/pretraining.md, "Model v9's window"); results land in $OUT. Arguments go to pretraining.window.
set -e
export PYTHONUNBUFFERED=1 WORK=${WORK:-/tmp/v9-window} POWER=${POWER:-0.75}
rm -rf "$WORK"  # a rerun on a warm machine starts over
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || echo 'the wheels were not installed' >&2
export PYTHONPATH=/tmp/site:$PWD
{ date -u; nvidia-smi -L; nproc; python3 -c "import torch, numpy, scipy, sklearn, sympy, pandas, pyoperon; print('torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.is_available(), 'numpy', numpy.__version__, 'sklearn', sklearn.__version__, 'sympy', sympy.__version__)"; } > $OUT/env.txt 2>&1 || true
START=$(date +%s)
python3 -m pretraining.bank_pack unpack pretraining/banks/bank-8v-500k-*.npz --out $WORK/bank-8v > /dev/null
python3 -m pretraining.bank_pack unpack pretraining/banks/bank-1m-*.npz --out $WORK/bank-3v > /dev/null
python3 -m pretraining.bank_merge $WORK/bank-mix $WORK/bank-8v $WORK/bank-3v --shares "${SHARE_8V:-0.5}" "${SHARE_3V:-0.5}" --frequency-power $POWER > $OUT/merge.log 2>&1
MINUTES=$(python3 -c "print(${MINUTES:-8.4} - ($(date +%s) - $START) / 60)")
python3 -m pretraining.window --out $WORK/v9 --work $WORK/run --minutes "$MINUTES" --bank $WORK/bank-mix \
    --data device --init-weights "${INIT:-nesymres_sklearn/weights}" --config pretraining/configs/window-v9.yaml \
    --frequency-power $POWER --seed 9 "$@" > $OUT/window.log 2>&1
tar czf $OUT/v9.tgz -C $WORK v9
nvidia-smi --query-gpu=name,memory.used --format=csv >> $OUT/env.txt 2>&1 || true
