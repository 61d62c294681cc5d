"""The network's second looks: after its first decodings, it reads the problem again
another way (the residual of its best fit, ``1/y``, the groups the other way up) and
the exhaustive search tries every small expression of one variable.

A :class:`Look` is a name (the origin of its rows and its key in ``timings_``), when it
applies and the candidates it adds; :data:`SECOND_LOOKS` takes them in order, until
one is exact to rounding (the looks after it would only add slower candidates), each
only while the time left before the network's end holds it (:func:`take_looks`). The
network's part of a look (``LookContext.solve``) is its plan on another problem; the
looks themselves need no torch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..budget import Budget, Deadline
from ..fitted import CandidateRows, Fitted
from ..fitting.constants import StartRunner
from ..problem import Problem
from ..settings import SearchRequest
from ..variables.assembly import kept_fits
from ..variables.routing import Route
from .exhaustive import exhaustive_candidates, simplicity
from .inverted import inverted_candidates
from .reciprocal import reciprocal_candidates
from .residual import residual_candidates


@dataclass(frozen=True)
class LookContext:
    """What a look reads: the ``problem`` over all features (in the search's units),
    the ``route`` the network reads it by, the ``request``, the network's ``first``
    fits over what it reads, ``solve`` (the network's decodings and fits of another
    problem), its ``n_variables``, the ``deadline`` of the network's stages and
    ``runner_for`` (a problem's compiled constant fitting, or ``None``)."""

    problem: Problem
    route: Route
    request: SearchRequest
    first: list[Fitted]
    solve: Callable[[Problem], list[Fitted]]
    n_variables: int
    deadline: Deadline | None
    runner_for: Callable[[Problem], StartRunner | None]

    def best_first(self) -> Fitted | None:
        """The first fits' best (``None`` without fits)."""
        return min(self.first, key=lambda fit: fit.loss) if self.first else None

    def first_inexact(self) -> bool:
        """Whether the first fits' best is not exact on what the network reads."""
        best = self.best_first()
        return best is not None and not self.route.problem.is_exact(best.loss)


@dataclass(frozen=True)
class Look:
    """A second look: its ``name``, whether it ``applies`` to a route and request,
    its ``candidates`` (over what the network reads, or over all features when
    ``over_all_features``) and whether it ``decodes`` (a decoding cannot be cut: the
    look starts only while the time left holds the first one's)."""

    name: str
    applies: Callable[[Route, SearchRequest], bool]
    candidates: Callable[[LookContext], list[Fitted]]
    over_all_features: bool = False
    decodes: bool = True

    def rows(self, context: LookContext) -> CandidateRows:
        """Its candidates as rows over all features (origin: its name)."""
        rows = CandidateRows()
        for fitted in self.candidates(context):
            if not self.over_all_features:
                fitted = context.route.back(fitted, context.problem)
            rows.add(fitted, origin=self.name)
        return rows


def _residual(context: LookContext) -> list[Fitted]:
    """The network's fits of what its best fit leaves unexplained, added to that fit
    (:mod:`.residual`)."""
    best = context.best_first()
    if best is None:
        return []
    route, problem = context.route, context.problem
    fitted = route.back(best, problem)
    runner = context.runner_for(problem)
    seed, penalty = context.request.seed, context.request.settings.parts_complexity_penalty
    return residual_candidates(
        problem, fitted, route.columns, context.n_variables, seed, context.solve, context.deadline, runner, penalty
    )


def _reciprocal_applies(route: Route, request: SearchRequest) -> bool:
    wanted = request.settings.reciprocal
    return wanted is True or (wanted == "units" and request.reads_groups)


def _reciprocal(context: LookContext) -> list[Fitted]:
    """``c/g`` of the network's fits ``g`` of ``1/y`` (:mod:`.reciprocal`); none after exact first fits."""
    if not context.first_inexact():
        return []
    read = context.route.problem
    penalty = context.request.settings.parts_complexity_penalty
    return reciprocal_candidates(read, context.solve, context.deadline, context.runner_for(read), penalty)


def _inverted(context: LookContext) -> list[Fitted]:
    """The network's kept fits of ``y`` over the reciprocals of what it reads, and with
    the reciprocal look its ``c/g`` of ``1/y`` there too (:mod:`.inverted`); none after
    exact first fits."""
    if not context.first_inexact():
        return []
    reciprocal = _reciprocal_applies(context.route, context.request)
    penalty = context.request.settings.parts_complexity_penalty

    def solve_inverted(part: Problem) -> list[Fitted]:
        found = kept_fits(context.solve(part), part, penalty)
        if reciprocal:
            found += reciprocal_candidates(part, context.solve, context.deadline, context.runner_for(part), penalty)
        return found

    return inverted_candidates(context.route.problem, solve_inverted)


def _exhaustive(context: LookContext) -> list[Fitted]:
    """Every small expression of the one variable the network reads, and of its
    reciprocal (a group has no preferred way up), scaled and fitted (:mod:`.exhaustive`):
    the simpler exact one (:func:`.exhaustive.simplicity`) when either way up has one,
    else the fits of both; none after first fits exact to rounding."""
    read = context.route.problem
    if any(read.is_exact_to_rounding(fitted.loss) for fitted in context.first):
        return []
    keys: list[tuple] = []

    def solve(part: Problem) -> list[Fitted]:
        found = exhaustive_candidates(part, context.deadline)
        keys.extend(simplicity(skeleton) for skeleton, _, _ in found)
        return found

    found = solve(read) + inverted_candidates(read, solve)
    exact = [index for index, fitted in enumerate(found) if read.is_exact_to_rounding(fitted.loss)]
    if exact:  # the simpler way up (each gives one exact fit at most)
        found = [found[min(exact, key=lambda index: keys[index])]]
    return found


#: The second looks, in the order they are taken.
SECOND_LOOKS = (
    Look(
        "residual",
        lambda route, request: request.settings.residual and route.reads_the_most_relevant,
        _residual,
        over_all_features=True,
    ),
    Look("reciprocal", _reciprocal_applies, _reciprocal),
    Look("inverted", lambda route, request: request.reads_groups and request.settings.inverted_groups, _inverted),
    Look(
        "exhaustive",
        lambda route, request: request.settings.exhaustive and route.problem.X.shape[1] == 1,
        _exhaustive,
        decodes=False,
    ),
)

#: Their names: the origins of their rows and their keys in ``timings_``.
LOOK_NAMES = tuple(look.name for look in SECOND_LOOKS)


def take_looks(context: LookContext, budget: Budget, decoding_seconds: float) -> tuple[CandidateRows, dict]:
    """The rows of the :data:`SECOND_LOOKS` that apply, in order, until one is exact to
    rounding; a look that decodes starts only while the time left before
    ``context.deadline`` holds ``decoding_seconds`` (the first decodings', on the
    budget's clock). Each is recorded in the budget's plan; also the seconds of each."""
    rows = CandidateRows()
    seconds = {look.name: 0.0 for look in SECOND_LOOKS}
    exact = False
    for look in SECOND_LOOKS:
        if not look.applies(context.route, context.request):
            continue
        if exact:
            budget.record(look.name, 0.0, "skipped: an earlier look is exact")
            continue
        end = context.deadline
        if end is not None and (not end.holds(decoding_seconds) if look.decodes else end.passed()):
            budget.record(look.name, 0.0, "skipped: no time")
            continue
        started = budget.clock()
        found = look.rows(context)
        seconds[look.name] = budget.clock() - started
        budget.record(look.name, seconds[look.name], budget.status(end))
        rows.extend(found)
        exact = any(context.problem.is_exact_to_rounding(loss) for loss in found.losses)
    return rows, seconds
