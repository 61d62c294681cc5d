"""The noise level study (:mod:`benchmarks.studies.noise_level`) with FastSRB's laws as the
set ``fastsrb``: problem 0's support points of each law (``--points`` does not change
them), their noise-free targets; the other sets as the study reads them.

Command line (the study's options)::

    python -m benchmarks.fastsrb.noise_level --sets fastsrb,validation-wc --levels 0.001 0.01 0.1 \\
        --log-span 10 --out benchmarks/results/noise-level/log-span-10.md
"""

from __future__ import annotations

from benchmarks.studies import noise_level

from .laws import load_laws
from .sampling import make_problem


def draws(name: str, n_points: int):
    """``(law, X, y)`` of each FastSRB law for ``fastsrb``, else the study's draws."""
    if name != "fastsrb":
        yield from noise_level.draws(name, n_points)
        return
    for law in load_laws().values():
        problem = make_problem(law, 0, 0.0)
        yield law.name, problem.X_support, problem.y_support_clean


if __name__ == "__main__":
    noise_level.main(draw=draws)
