"""Laws linear in all but a few features: the partially linear model's subsets, its
line's slopes, the candidates assembled from a fit of the rest, and the continuation's
source that reads them."""

import numpy as np
import pytest

from nesymres_sklearn.expression.skeleton import Skeleton
from nesymres_sklearn.expression.tokens import variable_index
from nesymres_sklearn.search.budget import Deadline
from nesymres_sklearn.search.fitted import CandidateRows, Fitted, mse
from nesymres_sklearn.search.problem import Problem
from nesymres_sklearn.search.settings import SearchRequest, SearchSettings
from nesymres_sklearn.search.variables.partial_line import PartialLine, ranked_subsets


@pytest.fixture
def linear_but_two():
    """``x0 + 9*x2 - 1.4*x3 + sqrt(x4 + cos(x1) + 2.6)``: linear in three of five features."""
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.uniform(lo, hi, 128) for lo, hi in [(-2, 9), (1.3, 6.6), (-5, 6), (-7, 6), (-1, 9)]])
    y = X[:, 0] + 9 * X[:, 2] - 1.4 * X[:, 3] + np.sqrt(X[:, 4] + np.cos(X[:, 1]) + 2.6)
    return Problem(X, y)


def test_the_subset_that_holds_what_is_not_linear_ranks_first_and_its_line_has_the_law_s_slopes(linear_but_two):
    problem = linear_but_two
    subsets = ranked_subsets(problem, np.arange(5), 3, 5, 0.5, seed=0)
    assert subsets[0] == (1, 4)
    assert all(1 <= len(subset) <= 3 for subset in subsets)
    assert len(set(subsets)) == len(subsets)
    partial = PartialLine.of(problem, subsets[0])
    assert partial.rest.tolist() == [0, 2, 3]
    assert partial.slopes == pytest.approx([1.0, 9.0, -1.4], abs=0.02)
    part = partial.part(problem)
    assert part.X.shape == (128, 2)
    # what is left is the law's part over the subset, plus a constant
    left = part.y - np.sqrt(problem.X[:, 4] + np.cos(problem.X[:, 1]) + 2.6)
    assert np.std(left) < 0.02 * np.std(part.y)


def test_a_subset_no_better_than_the_line_is_not_kept():
    """On a law linear in every feature no partially linear model beats the line on held-out
    points by more than its extra columns' noise: with noise on ``y``, none is kept."""
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, (200, 4))
    y = X @ np.array([1.0, -2.0, 0.5, 3.0]) + rng.normal(0, 0.5, 200)
    assert ranked_subsets(Problem(X, y), np.arange(4), 3, 5, 0.5, seed=0) == []


def test_a_ranking_that_the_deadline_cuts_is_none(linear_but_two):
    assert ranked_subsets(linear_but_two, np.arange(5), 3, 5, 0.5, seed=0, deadline=Deadline(0.0, lambda: 1.0)) is None


def test_the_candidate_starts_from_the_fit_of_the_rest_plus_the_line_and_is_refitted_on_y(linear_but_two, monkeypatch):
    """The assembled start (the part's fit, the line's slopes in its features' order, the
    mean of what is left) is the law already; the refit keeps it exact."""
    from nesymres_sklearn.search.variables import partial_line
    from nesymres_sklearn.search.variables.assembly import assemble

    problem = linear_but_two
    partial = PartialLine.of(problem, (1, 4))
    # g = sqrt(x_2 + cos(x_1) + c) over the subset's columns, its constant from the part
    g = Skeleton(("mul", "c", "sqrt", "add", "add", "x_2", "cos", "x_1", "c"))
    part, start = partial.part(problem), np.array([1.0, 2.6])
    fits = [Fitted(g, start, mse(g.program, part.X, part.y, start))]
    starts, refitted = [], partial_line.refitted

    def spied(kind, parts, whole, deadline, runner):
        starts.append((kind, parts))
        return refitted(kind, parts, whole, deadline, runner)

    monkeypatch.setattr(partial_line, "refitted", spied)
    (candidate,) = partial.candidates(fits, problem, penalty=0.01)
    ((kind, parts),) = starts
    skeleton = assemble(kind, [skeleton for skeleton, _ in parts])
    inner = np.concatenate([constants for _, constants in parts])
    left = problem.y - skeleton.program(problem.X, np.append(inner, 0.0))
    assert np.std(left) < 0.02 * np.std(problem.y)  # the start is the law, less a constant
    named = {variable_index(token) for token in candidate.skeleton.tokens} - {None}
    assert named == {0, 1, 2, 3, 4}
    assert problem.is_exact(candidate.loss)
    assert candidate.loss == pytest.approx(mse(candidate.skeleton.program, problem.X, problem.y, candidate.constants))


def test_at_most_three_features_are_read_whatever_the_network_s_variables(linear_but_two):
    subsets = ranked_subsets(linear_but_two, np.arange(5), 8, 5, 0.5, seed=0)
    assert subsets[0] == (1, 4) and max(len(subset) for subset in subsets) == 3


def test_the_partial_line_look_reads_each_ranked_subset_once(tiny_model, linear_but_two):
    """The first turn ranks (the subset of what is not linear first) and decodes on it;
    each later turn on the next; rows over all features with their losses on ``y``; no
    turn once the subsets are read, nor where the time left does not hold a decoding."""
    from nesymres_sklearn import neural_search

    problem = linear_but_two
    network = neural_search.load_network(str(tiny_model), None, "cpu")
    request = SearchRequest(size=4, seed=5)
    look = neural_search.PartialLineLook(network, problem, request, None)
    assert look.holds(None, 0) and look.subsets is None
    rows = look.propose(CandidateRows(), 0, None)
    assert look.subsets[0] == (1, 4) and len(look.subsets) > 1 and look.read == 1
    assert len(rows) > 0 and set(rows.origins) == {"partial line"}
    for skeleton, constants, loss in zip(rows.skeletons, rows.constants, rows.losses):
        named = {variable_index(token) for token in skeleton.tokens} - {None}
        assert named >= {0, 2, 3}  # the line's features
        assert loss == pytest.approx(mse(skeleton.program, problem.X, problem.y, constants))
    assert look.decoding_seconds > 0
    for turn in range(1, len(look.subsets)):
        assert look.holds(None, turn)
        look.propose(CandidateRows(), turn, None)
        assert look.read == turn + 1
    assert not look.holds(None, len(look.subsets))
    assert len(look.propose(CandidateRows(), len(look.subsets), None)) == 0
    paced = neural_search.PartialLineLook(network, problem, request, None, decoding_seconds=2.0)
    assert paced.holds(Deadline(2.5, lambda: 0.0), 0) and not paced.holds(Deadline(1.5, lambda: 0.0), 0)


def test_a_cut_ranking_is_not_kept_and_a_subset_is_read_once_a_decoding_of_it_ran(tiny_model, linear_but_two):
    from nesymres_sklearn import neural_search

    network = neural_search.load_network(str(tiny_model), None, "cpu")
    look = neural_search.PartialLineLook(network, linear_but_two, SearchRequest(size=4, seed=5), None)
    passed = Deadline(0.0, lambda: 1.0)
    assert len(look.propose(CandidateRows(), 0, passed)) == 0
    assert look.subsets is None and look.read == 0  # ranked again on the next turn
    look.propose(CandidateRows(), 1, None)
    assert look.subsets[0] == (1, 4) and look.read == 1
    # a decoding that the time left does not hold: the subset stays to be read
    tight = Deadline(1.0, lambda: 0.999999)
    look.propose(CandidateRows(), 2, tight)
    assert look.read == 1


def test_the_continuation_reads_partial_lines_only_with_more_features_than_variables(tiny_model):
    from tests.test_continuation import regressor, turns

    rng = np.random.default_rng(4)
    settings = SearchSettings(continuation_steps=8)
    X = rng.uniform(1, 5, (64, 5))
    y = X[:, 0] - 2 * X[:, 3] + np.exp(-X[:, 1] / X[:, 2]) * np.sin(1.3 * X[:, 4])
    wide = regressor(tiny_model, search_settings=settings).fit(X, y)
    assert "partial line" in {source.name for source in wide._warm.sources}
    assert any(unit.startswith("continue: partial line") for unit in turns(wide))
    narrow = regressor(tiny_model, search_settings=settings).fit(X[:, 2:], y)
    assert "partial line" not in {source.name for source in narrow._warm.sources}
