#!/bin/bash
# Model v9: its GPU window and the 16-core anytime runs, in one device call (issues 67, 63).
# Run from the repository root with the wheels of pyoperon, pint and their needs in .whl/
# (docs/pretraining.md, "Model v9's window"); results land in $OUT.
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD
{ date -u; nvidia-smi -L; nproc; python3 -c "import torch, numpy, scipy, sklearn, sympy, pandas, pyoperon; print('torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.is_available(), 'numpy', numpy.__version__, 'sklearn', sklearn.__version__, 'sympy', sympy.__version__)"; } > $OUT/env.txt 2>&1
taskset -c 0,1 python3 -m pretraining.window --out /tmp/v9 --work /tmp/v9-work --minutes "${MINUTES:-7}" \
    --bank-pack pretraining/banks/bank-8v-500k-*.npz --data device --init-weights nesymres_sklearn/weights \
    --config pretraining/configs/window-v9.yaml --seed 9 > $OUT/window.log 2>&1 &
TRAIN=$!
LAWS="II.38.3 I.12.1 I.18.12 I.30.5 II.4.23 II.15.5 I.10.7 I.13.12 I.29.4 I.38.12 I.48.2 II.34.2a III.8.54 III.17.37 I.6.2a I.29.16 I.39.22 I.34.14 II.11.27 II.35.18 III.10.19 B4 B10 B15"
for spec in "2-13 12" "14,15 2"; do
    set -- $spec
    CUDA_VISIBLE_DEVICES= taskset -c $1 timeout "${BENCH_SECONDS:-400}" python3 -m benchmarks.fastsrb --methods ours \
        --max-time 10 --problems 1 --laws $LAWS --threads-per-fit $2 --n-jobs 1 --backend threading -q \
        --out $OUT/anytime-cores$2.csv > $OUT/anytime-cores$2.log 2>&1 &
done
wait
tar czf $OUT/v9.tgz -C /tmp v9
nvidia-smi --query-gpu=name,memory.used --format=csv >> $OUT/env.txt 2>&1
