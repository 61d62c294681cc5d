"""What the network reads when ``X`` has more features than it has variables, and how
its candidates come back over all of them.

In order of preference:

1. a power-law factor of some features splits off (:mod:`.power_factor`): the network
   works on the rest of them, with ``y`` divided by the factor, and its skeletons come
   back times the factor;
2. ``y`` depends on at most the network's variables' worth of combinations of the
   features (:mod:`.reduction`, with ``SearchSettings.reduce``): the network works on those, and its
   skeletons come back with them substituted;
3. else the most relevant features (:mod:`.features`).

Whenever the network does not see every feature as it is, a linear and a power-law
candidate over all features join its candidates, and :meth:`Route.warning` says what
it works on. A :class:`Route` is a view (:class:`..views.View`): its problem forward,
the network's laws, predictions, columns and variables back.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..budget import Deadline
from ..fitted import CandidateRows, Fitted, mse
from ..problem import Problem
from ..settings import SearchSettings
from .features import linear_candidate, most_relevant, on_features, relevance
from .power_factor import PowerFactor, power_factor
from .power_law import power_law
from .reduction import Reduction, reduction


@dataclass(frozen=True)
class Route:
    """The network's ``problem`` (its inputs, target and weights), the ``columns`` of
    ``X`` that it reads, the power-law ``split`` or the ``combined`` features it works
    on (at most one of them), the seconds the reduction took, and where it reads the
    most relevant features, every feature's ``relevance_scores`` (:func:`.features.relevance`)."""

    problem: Problem
    columns: np.ndarray
    n_features: int
    split: PowerFactor | None = None
    combined: Reduction | None = None
    reduction_seconds: float = 0.0
    relevance_scores: np.ndarray | None = None

    @property
    def sees_all(self) -> bool:
        """Whether the network reads every feature as it is."""
        return len(self.columns) == self.n_features and self.combined is None

    @property
    def reads_the_most_relevant(self) -> bool:
        """Whether the network reads only the features most relevant to ``y``: neither
        all of them, nor a split or combinations that account for every feature."""
        return not self.sees_all and self.split is None and self.combined is None

    def forward(self, whole: Problem) -> Problem:
        """What the network reads of ``whole`` (the problem the route was made for)."""
        return self.problem

    def symbols(self, symbols) -> list:
        """What each of the network's variables stands for, written with ``symbols``."""
        if self.combined is not None:
            return self.combined.describe(symbols)
        return [symbols[j] for j in self.columns]

    def back_columns(self, columns: np.ndarray) -> np.ndarray:
        """The features that the network's variables ``columns`` read."""
        if self.combined is not None:
            return np.flatnonzero(np.any(self.combined.coefficients[columns] != 0, axis=0))
        return self.columns[columns]

    def back_values(self, values: np.ndarray, whole: Problem) -> np.ndarray:
        """The network's predictions as predictions of ``whole.y`` (times the split's factor)."""
        if self.split is None:
            return values
        return self.split.scale * self.split.monomial(whole.X) * values

    def back(self, fitted: Fitted, whole: Problem) -> Fitted:
        """A candidate the network ``fitted`` over all the features of the ``whole`` problem."""
        skeleton, constants, loss = fitted
        if self.combined is not None:  # the same function of the same target: the loss stands
            return Fitted(*self.combined.substituted(skeleton, constants), loss)
        skeleton = on_features(skeleton, self.columns)
        if self.split is None:
            return Fitted(skeleton, constants, loss)
        skeleton, constants = self.split.times(skeleton, constants)
        return Fitted(skeleton, constants, mse(skeleton.program, whole.X, whole.y, constants, whole.weights))

    def all_feature_rows(self, whole: Problem, complexity_penalty: float) -> CandidateRows:
        """The linear and the power-law candidates over all features (origins ``"linear"``
        and ``"power"``), when the network does not see them all; the linear one holds
        the features that pay for their tokens at ``complexity_penalty``. When it sees
        them all, the power law only where it is exact: the network seldom writes high
        powers (``x0**5/x1**3``), and a closed-form line in logs finds them."""
        rows = CandidateRows()
        power = power_law(whole.X, whole.y, whole.weights)
        if self.sees_all:
            if power is not None and whole.is_exact(power.loss):
                rows.add(power, origin="power")
            return rows
        rows.add(linear_candidate(whole, complexity_penalty), origin="linear")
        if power is not None:
            rows.add(power, origin="power")
        return rows

    def warning(self, symbols, model: str, n_variables: int, refined: bool) -> str | None:
        """What the network works on when it does not see every feature (``refined``:
        whether Operon searches over all of them); ``None`` when it sees them all."""
        if self.sees_all:
            return None
        names = ", ".join(str(symbols[j]) for j in self.columns)
        if self.combined is not None:
            written = ", ".join(self.combined.describe(symbols))
            chosen = f"{written}, the combinations of the features that y depends on in the data"
        elif self.split is None:
            ranking = "mutual information, rank correlation and products of pairs"
            chosen = f"the {n_variables} most relevant to y ({names}; {ranking})"
        else:
            factor = ", ".join(str(symbols[j]) for j in self.split.exponents)
            chosen = f"{names}, with y divided by a power law of {factor} that the data show"
        rest = (
            "Operon searches over all of them"
            if refined
            else "install pyoperon and pass refine='operon' to search over all of them"
        )
        return (
            f"X has {self.n_features} features but the model {model!r} takes {n_variables} variables: the network "
            f"works on {chosen}, and a linear and a power-law candidate use all; {rest}."
        )


def route(
    problem: Problem, n_variables: int, seed: int, settings: SearchSettings, network_end: Deadline | None
) -> Route:
    """What the network reads of ``problem`` (see the module docstring), by the
    ``settings``' knobs of the split and the reduction. The power-law split and the
    reduction have half of the time left until ``network_end`` (the reduction is tried
    only when that is at least ``settings.reduction_min_seconds``); decoding and
    fitting keep the rest."""
    n_features = problem.X.shape[1]
    end = None if network_end is None else network_end.halfway()
    split = power_factor(problem.X, problem.y, n_variables, problem.weights, end, settings)
    if split is not None:
        seen = Problem(problem.X[:, split.rest], split.target(problem.X, problem.y), problem.weights)
        return Route(seen, split.rest, n_features, split=split)
    seconds, combined = 0.0, None
    end = None if network_end is None else network_end.halfway()
    enough = end is None or end.left() >= settings.reduction_min_seconds
    if settings.reduce and n_features > n_variables and enough:
        moment = time.perf_counter()
        combined = reduction(problem.X, problem.y, n_variables, seed, end, settings)
        seconds = time.perf_counter() - moment
    if combined is not None:
        seen = Problem(combined.features(problem.X), problem.y, problem.weights)
        return Route(seen, combined.columns, n_features, combined=combined, reduction_seconds=seconds)
    if n_features <= n_variables:
        return Route(problem, np.arange(n_features), n_features, reduction_seconds=seconds)
    scores, partners = relevance(problem.X, problem.y, seed)
    columns = most_relevant(scores, partners, n_variables)
    seen = Problem(problem.X[:, columns], problem.y, problem.weights)
    return Route(seen, columns, n_features, reduction_seconds=seconds, relevance_scores=scores)
