import numpy as np
import pytest

from nesymres_sklearn.search.budget import Deadline
from nesymres_sklearn.search.problem import Problem
from nesymres_sklearn.search.settings import SearchSettings
from nesymres_sklearn.search.variables.routing import route

MIN_REDUCTION_SECONDS = SearchSettings().reduction_min_seconds

X = np.random.default_rng(0).uniform(1, 5, (200, 6))
Y = np.exp(-X[:, 0] * X[:, 1] / (X[:, 2] * X[:, 3]))  # one combination of four features


def stopped_clock():
    return 100.0


@pytest.mark.parametrize("seconds_to_network_end, reduced", [(2 * MIN_REDUCTION_SECONDS, True), (0.7, False)])
def test_the_reduction_is_tried_only_with_the_seconds_it_needs(seconds_to_network_end, reduced):
    """It has half of the time until the network's end: with less than
    ``SearchSettings.reduction_min_seconds`` it would run out of time, so the network reads the most
    relevant features at once (a stopped clock: the outcome depends on the budget alone)."""
    network_end = Deadline(stopped_clock() + seconds_to_network_end, stopped_clock)
    seen = route(Problem(X, Y), 3, 0, SearchSettings(), network_end=network_end)
    assert (seen.combined is not None) == reduced
    if not reduced:
        assert seen.reduction_seconds == 0.0
        assert len(seen.columns) == 3 and seen.problem.X.shape == (200, 3)


def test_without_a_deadline_the_reduction_is_tried():
    assert route(Problem(X, Y), 3, 0, SearchSettings(), network_end=None).combined is not None


def test_the_reduction_waits_for_the_seconds_the_settings_ask():
    """The same budget as the reduced case above, but settings that ask for more."""
    network_end = Deadline(stopped_clock() + 2 * MIN_REDUCTION_SECONDS, stopped_clock)
    settings = SearchSettings(reduction_min_seconds=MIN_REDUCTION_SECONDS + 0.1)
    assert route(Problem(X, Y), 3, 0, settings, network_end=network_end).combined is None


def test_without_reduce_the_network_reads_the_most_relevant_features():
    seen = route(Problem(X, Y), 3, 0, SearchSettings(reduce=False), network_end=None)
    assert seen.combined is None and len(seen.columns) == 3
