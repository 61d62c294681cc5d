"""FastSRB: 120 Feynman laws with the SRSD sampling ranges, units and accepted forms.

Provenance: ``benchmarks/datasets/fastsrb.yaml`` is ``src/expressions.yaml`` of the public
repository ``viktmar/FastSRB`` at commit ``37e8758`` ("added link to the arxiv paper to
the readme"), copied unchanged, under the MIT licence (``benchmarks/datasets/FASTSRB_LICENSE``,
Copyright (c) 2025 Viktor Martinek). Paper: Martinek et al., "Fast Symbolic Regression
Benchmarking", arXiv 2508.14481. Nothing here reads any other copy at run time.

The protocol is that of the ``srbf`` package (``psaegert/srbf``), which scores the
benchmark's leaderboard: per problem 512 support and 512 validation points
(:mod:`.sampling`), target noise on the support points only, numeric recovery
(FVU <= float32 epsilon on the clean validation points) as the headline and symbolic
recovery against the ``accept`` forms (:mod:`.scoring`). Modules: :mod:`.laws` (the
loader), :mod:`.sampling`, :mod:`.scoring`, :mod:`.methods` (``ours``, ``ours-units``,
``operon``), :mod:`.runner` (resumable, each fit in a child process with a kill timeout)
and :mod:`.report`; :mod:`.units_mismatch` lists the laws that get the units warning. Command line::

    python -m benchmarks.fastsrb --methods ours ours-units operon --max-time 1 --problems 3 \\
        --noise 0 --n-jobs 2 --out benchmarks/results/fastsrb/fastsrb-1s.csv
    python -m benchmarks.fastsrb report benchmarks/results/fastsrb/fastsrb-1s.csv
"""

from ..metrics import fvu
from .laws import Law, Variable, get_law, load_laws, unit_string
from .sampling import Problem, draw_points, draw_variable, make_problem
from .scoring import numeric_recovery, symbolic_recovery

__all__ = [
    "Law",
    "Problem",
    "Variable",
    "draw_points",
    "draw_variable",
    "fvu",
    "get_law",
    "load_laws",
    "make_problem",
    "numeric_recovery",
    "symbolic_recovery",
    "unit_string",
]
