import numpy as np
import pytest
import sympy

from nesymres_sklearn import NeSymReSRegressor
from nesymres_sklearn.expression.skeleton import Skeleton
from nesymres_sklearn.search.budget import Deadline
from nesymres_sklearn.search.settings import SearchSettings
from nesymres_sklearn.search.variables.reduction import Reduction, reduction

X = np.random.default_rng(0).uniform(1, 5, (200, 5))
SYMBOLS = sympy.symbols("x0:5")


def written(found: Reduction | None) -> set[str] | None:
    """The combinations, each with its first coefficient positive (``x1/x0`` and
    ``x0/x1`` hold the same information)."""
    if found is None:
        return None
    rows = found.coefficients
    signs = np.sign(rows[np.arange(len(rows)), np.argmax(rows != 0, axis=1)])
    return set(Reduction(rows * signs[:, None], found.logarithmic, found.scales, found.r2).describe(SYMBOLS))


@pytest.mark.slow
@pytest.mark.parametrize(
    "law, combinations, logarithmic",
    [
        # a group of powers inside a function: one variable for the network
        (lambda X: 1 / (np.exp(X[:, 0] * X[:, 1] / (X[:, 2] * X[:, 3]) / 6.28) - 1), {"x0*x1/(x2*x3)"}, True),
        (lambda X: np.exp(X[:, 0] * X[:, 1] / 10) + X[:, 2] / X[:, 3] + X[:, 4], {"x0*x1", "x2/x3", "x4"}, True),
        (lambda X: X[:, 0] + X[:, 1] * X[:, 2] + np.sin(X[:, 3]), {"x0", "x1*x2", "x3"}, True),
        # a difference: sums, since a column changes sign
        (lambda X: (X[:, 0] - X[:, 1]) ** 3 + np.sin(X[:, 2]) + X[:, 3], {"x0 - x1", "x2", "x3"}, False),
        (lambda X: (X[:, 0] - X[:, 1]) ** 2 + (X[:, 2] - X[:, 3]) ** 2, {"x0 - x1", "x2 - x3"}, False),
    ],
)
def test_the_combinations_y_depends_on_are_found(law, combinations, logarithmic):
    data = X if logarithmic else X - [0, 0, 0, 2.0, 0]
    found = reduction(data, law(data), 3, seed=0)
    assert found.logarithmic is logarithmic
    assert written(found) == combinations
    assert found.r2 > 0.99


@pytest.mark.slow
@pytest.mark.parametrize(
    "law",
    [
        lambda X: X[:, 0] * np.sin(X[:, 1]) + X[:, 2] * np.cos(X[:, 3]) + X[:, 4],  # five directions
        lambda X: X[:, 0] / X[:, 1] + X[:, 2] * np.sin(X[:, 3] + X[:, 4]),  # a ratio and a sum: neither system
    ],
)
def test_no_reduction_where_y_needs_more_combinations_than_the_network_takes(law):
    assert reduction(X, law(X), 3, seed=0) is None


def test_at_most_the_networks_variables_means_no_reduction():
    assert reduction(X[:, :3], X[:, 0] * X[:, 1] / X[:, 2], 3, seed=0) is None


def test_repeated_points_do_not_verify_a_wrong_combination():
    repeated = np.vstack([X[:64], X[:64]])
    y = np.exp(repeated[:, 0] * repeated[:, 1] / 10) + repeated[:, 2] / repeated[:, 3] + repeated[:, 4]
    assert written(reduction(repeated, y, 3, seed=0)) == {"x0*x1", "x2/x3", "x4"}


def test_nothing_is_verified_after_the_deadline():
    y = 1 / (np.exp(X[:, 0] * X[:, 1] / (X[:, 2] * X[:, 3])) - 1)
    assert reduction(X, y, 3, seed=0, deadline=Deadline(0.0)) is None


def test_a_group_of_powers_holds_under_one_percent_noise():
    y = np.exp(-X[:, 0] * X[:, 1] / (X[:, 2] * X[:, 3]))
    noisy = y + np.random.default_rng(1).normal(0, 0.01 * np.sqrt(np.mean(y**2)), len(y))
    assert written(reduction(X[:, :4], noisy, 3, seed=0)) == {"x0*x1/(x2*x3)"}


@pytest.mark.parametrize("logarithmic", [True, False])
def test_skeletons_over_the_combinations_come_back_over_the_features(logarithmic):
    powers = [[1.0, 1.0, -1.0, 0, 0], [0, 0, 0, 0.5, -2.0]]
    sums = [[1.0, -1.0, 0, 0, 0], [0, 0, 2.0, 1.0, -3.0]]
    combined = Reduction(np.array(powers if logarithmic else sums), logarithmic, np.array([10.0, 1.0]), 1.0)
    skeleton = Skeleton(("add", "mul", "c", "sin", "x_1", "div", "x_2", "add", "x_1", "c"))
    constants = np.array([1.5, 0.25])
    Z = combined.features(X)
    back, values = combined.substituted(skeleton, constants)
    np.testing.assert_allclose(back.program(X, values), skeleton.program(Z, constants), rtol=1e-12)
    assert values.tolist() == [1.5, 0.1, 0.1, 0.25]  # the scale's constant at each z_1, in token order


def test_the_combinations_are_written_as_a_person_writes_them():
    combined = Reduction(np.array([[1.0, 1.0, -1.0, -1.0, 0], [0, 0, 0, 0.5, -2.0]]), True, np.ones(2), 1.0)
    assert combined.describe(SYMBOLS) == ["x0*x1/(x2*x3)", "sqrt(x3)/x4**2"]
    difference = Reduction(np.array([[-1.0, 1.0, 0, 0, 0]]), False, np.ones(1), 1.0)
    assert difference.describe(SYMBOLS) == ["-x0 + x1"]
    assert list(difference.columns) == [0, 1]


def test_products_of_powers_need_positive_columns():
    data = X[:, :4] - [0, 0, 0, 3.0]  # x3 changes sign
    y = np.exp(data[:, 0] * data[:, 1] / 10) + data[:, 2] + np.sin(data[:, 3])
    found = reduction(data, y, 3, seed=0)
    assert found is None or not found.logarithmic


def test_the_network_works_on_the_combinations_and_the_law_comes_back_whole():
    y = np.exp(X[:, 0] * X[:, 1] / 10) + X[:, 2] / X[:, 3] + X[:, 4]
    with pytest.warns(UserWarning, match=r"works on x0\*x1, x2/x3, x4, the combinations"):
        fitted = NeSymReSRegressor(refine=None, random_state=0).fit(X, y)
    assert fitted.network_inputs_ == ["x0*x1", "x2/x3", "x4"]
    assert list(fitted.features_seen_by_network_) == [0, 1, 2, 3, 4]
    assert fitted.score(X, y) > 1 - 1e-10
    assert {str(s) for s in fitted.expression_.free_symbols} == {"x0", "x1", "x2", "x3", "x4"}


def test_three_features_or_fewer_are_never_combined():
    y = X[:, 0] * X[:, 1] / X[:, 2]
    settings = SearchSettings(identities=False)  # an identity: no route
    fitted = NeSymReSRegressor(refine=None, random_state=0, search_settings=settings).fit(X[:, :3], y)
    assert fitted.timings_["reduction"] == 0.0
    assert fitted.network_inputs_ == ["x0", "x1", "x2"]


def test_a_deadline_stops_the_gaussian_process_while_it_is_fitted():
    """The kernel's optimiser reads the budget's clock before every step: once the
    deadline passes, the fit stops there and nothing is returned."""
    rng = np.random.default_rng(0)
    X = rng.uniform(1, 3, size=(120, 5))
    y = X[:, 0] * X[:, 1] / X[:, 2] + X[:, 3]
    readings = []

    def clock():
        readings.append(len(readings) + 1.0)
        return readings[-1]

    assert reduction(X, y, 3, seed=0, deadline=Deadline(4.0, clock)) is None
    # read during the fit (not only before and after it), and only until the deadline:
    # the first few of the optimiser's 20 steps or so
    assert 4 <= len(readings) <= 6


@pytest.mark.slow
@pytest.mark.parametrize("knob", [{"reduction_max_left_out": 0.0}, {"reduction_min_r2": 1 - 1e-9}])
def test_the_settings_bounds_decide_which_combinations_are_verified(knob):
    """A basis that leaves out nothing of the gradients, or a surrogate that explains
    all of y to 1e-9, is more than the data give: no reduction."""
    y = np.exp(X[:, 0] * X[:, 1] / 10) + X[:, 2] / X[:, 3] + X[:, 4]
    assert written(reduction(X, y, 3, seed=0, settings=SearchSettings())) == {"x0*x1", "x2/x3", "x4"}
    assert reduction(X, y, 3, seed=0, settings=SearchSettings(**knob)) is None
