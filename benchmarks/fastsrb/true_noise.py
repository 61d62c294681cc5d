"""FastSRB with the fit's noise estimate replaced by the true noise level: how much a
better estimate (``noise_std_``, :mod:`nesymres_sklearn.search.noise`) could give.

Method ``ours-true-noise``: ``ours`` with :func:`nesymres_sklearn.pipeline.noise_std`
returning the standard deviation of the noise that the problem's support targets carry
(``level * std(y_clean)``, :func:`true_noise`), in the search's units. The level is read
back from the targets: the noise stream draws the same standard normals at every level.

Command line (the FastSRB runner's options)::

    python -m benchmarks.fastsrb.true_noise run --methods ours-true-noise --max-time 10 \\
        --problems 1 --noise 0.01 --n-jobs 2 --out benchmarks/results/fastsrb/fastsrb-true-noise-10s-noise-001.csv
"""

from __future__ import annotations

import sys

import numpy as np

from .laws import Law
from .methods import METHODS, Fitted, Method, _preload_ours, fit_ours
from .sampling import make_problem


def true_noise(law: Law, problem: int, y: np.ndarray) -> float:
    """The standard deviation of the noise of problem ``problem``'s support targets ``y``
    of ``law`` (0 at noise 0)."""
    at_one = make_problem(law, problem, 1.0, n_support=len(y))
    clean, unit = at_one.y_support_clean, at_one.y_support - at_one.y_support_clean  # the noise at level 1
    level = float(np.dot(y - clean, unit) / np.dot(unit, unit))
    return level * float(np.std(clean))


def fit_with_true_noise(X, y, law: Law, max_time: float, seed: int, n_jobs: int = 1) -> Fitted:
    """``ours`` told the true noise level (in the search's units: scaled as ``y`` is)."""
    from nesymres_sklearn import pipeline

    truth = true_noise(law, seed, y)
    spread = float(np.std(y))
    estimate = pipeline.noise_std
    pipeline.noise_std = lambda problem, *args, **kwargs: truth * float(np.std(problem.y)) / spread
    try:
        return fit_ours(X, y, law, max_time, seed, n_jobs)
    finally:  # the worker's next fit, of any method, estimates again
        pipeline.noise_std = estimate


METHODS["ours-true-noise"] = Method("ours-true-noise", fit_with_true_noise, _preload_ours)

if __name__ == "__main__":
    from .__main__ import main

    sys.exit(main())
