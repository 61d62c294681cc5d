"""The network's look at the reciprocals of its inputs: groups read the other way up.

A dimensionless group has no preferred orientation: ``v/c`` and ``c/v`` are equally
groups, and the units stage (:mod:`nesymres_sklearn.units.groups`) writes each with one
feature to the power 1, whichever that feature is. The law is often far simpler in one
of them: ``1/sqrt(1 - (v/c)**2)`` against ``1/sqrt(1 - 1/p**2)``, ``exp(q*V/(k*T))``
against ``exp(1/p)``. So when every input keeps one sign, the network also reads their
reciprocals (each divided by the power of ten that brings it into the features' band,
see :mod:`.scaling`), and each of its fits comes back over the inputs with ``x_j``
replaced by ``c/x_j``: the same function on the same points, so its loss stands and
nothing is refitted.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ...expression.skeleton import Skeleton
from ...expression.tokens import CONSTANT, variable_token
from ..fitted import Fitted
from ..problem import Problem
from ..scaling import FEATURE_BAND, power_of_ten
from ..variables.power_law import keeps_one_sign


def inverted_candidates(problem: Problem, solve: Callable[[Problem], list[Fitted]]) -> list[Fitted]:
    """The fits of ``solve`` (a ``Problem`` -> fitted skeletons over its columns) on the
    reciprocals of ``problem``'s inputs, over those inputs (see the module docstring);
    none when an input takes the value 0 or changes sign."""
    if not all(keeps_one_sign(column) for column in problem.X.T):
        return []
    with np.errstate(all="ignore"):
        reciprocals = 1.0 / problem.X
    scales = np.array([power_of_ten(column, FEATURE_BAND) for column in reciprocals.T])
    upside_down = Problem(reciprocals / scales, problem.y, problem.weights)
    return [
        Fitted(*_over_inputs(skeleton, constants, scales), loss) for skeleton, constants, loss in solve(upside_down)
    ]


def _over_inputs(skeleton: Skeleton, constants: np.ndarray, scales: np.ndarray) -> tuple[Skeleton, np.ndarray]:
    """``skeleton`` over the scaled reciprocals as a skeleton over the inputs: each
    ``x_j`` becomes ``c/x_j`` with ``c = 1/scales[j]`` (``1/x_j`` when that is 1), the
    constants in token order."""

    def reciprocal(j: int) -> tuple[list[str], list[float]]:
        if scales[j] == 1:
            return ["div", "1", variable_token(j)], []
        return ["div", CONSTANT, variable_token(j)], [1.0 / float(scales[j])]

    return skeleton.substituted(constants, reciprocal)
