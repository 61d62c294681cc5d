"""Selection for prediction when no row is exact: the plain models that always compete
(:mod:`nesymres_sklearn.search.variables.plain`) and the held-out folds that choose among
the Pareto front (:mod:`nesymres_sklearn.search.selection.held_out`)."""

import numpy as np
import pytest
import sympy

from nesymres_sklearn import NeSymReSRegressor
from nesymres_sklearn.expression.skeleton import Skeleton
from nesymres_sklearn.search.budget import Deadline
from nesymres_sklearn.search.fitted import CandidateRows, Fitted, mse
from nesymres_sklearn.search.fitting.constants import Evaluations, least_squares_run
from nesymres_sklearn.search.fitting.polynomial import monomials
from nesymres_sklearn.search.problem import Problem
from nesymres_sklearn.search.scaling import Scaling
from nesymres_sklearn.search.selection import held_out
from nesymres_sklearn.search.selection.final import select
from nesymres_sklearn.search.selection.held_out import held_out_choice, information_gate, unsupported_on_held_out
from nesymres_sklearn.search.selection.table import tabulate
from nesymres_sklearn.search.settings import SearchSettings
from nesymres_sklearn.search.variables.features import least_squares_line
from nesymres_sklearn.search.variables.plain import (
    _monomials,
    backward_linear_candidate,
    plain_rows,
    quadratic_candidate,
)
from nesymres_sklearn.writing.writer import Writer, write_selected

SYMBOLS = tuple(sympy.symbols("x0 x1 x2", real=True))


def fitted(tokens: str, problem: Problem) -> Fitted:
    skeleton = Skeleton(tuple(tokens.split()))
    constants = least_squares_run(skeleton.program, problem.X, problem.y, np.ones(skeleton.n_constants))
    return Fitted(skeleton, constants, mse(skeleton.program, problem.X, problem.y, constants))


def table_of(rows: list[str], problem: Problem, complexity_penalty: float = 0.01):
    candidates = CandidateRows()
    for tokens in rows:
        candidates.add(fitted(tokens, problem), origin="beam")
    return tabulate(candidates, complexity_penalty, problem.scale, 1.0, Writer(Scaling.identity(3), SYMBOLS))


def noisy_problem(law, n=200, noise=0.3, seed=0) -> Problem:
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, (n, 3))
    return Problem(X, law(X) + rng.normal(0.0, noise, n))


GOOD = "add add mul c x_1 mul c sin x_2 c"  # c*x1 + c*sin(x2) + c
# the same with a polynomial of degree 5 in the column x_3, which y does not depend on
POLYNOMIAL_OF_X3 = "add mul c x_3 add mul c pow x_3 2 add mul c pow x_3 3 add mul c pow x_3 4 mul c pow x_3 5"
SPURIOUS = f"add {GOOD} {POLYNOMIAL_OF_X3}"


def test_a_row_with_a_column_that_adds_nothing_loses_on_held_out_points():
    lost = {0.0: 0, 0.5: 0}
    for seed in range(20):
        problem = noisy_problem(lambda X: 2 * X[:, 0] + np.sin(X[:, 1]), seed=seed)
        table = table_of([GOOD, SPURIOUS], problem, complexity_penalty=0.0)  # the score alone prefers the spurious row
        assert "x_3" in table.fitted[table.best_index][0].tokens
        for rule in lost:
            chosen = held_out_choice(table, problem, SearchSettings(held_out_standard_errors=rule), seed)
            lost[rule] += "x_3" not in table.fitted[chosen][0].tokens
    # the lowest held-out error (measured: 19 of 20), and the default's half a standard error (20)
    assert lost[0.0] >= 18
    assert lost[0.5] == 20


def test_a_longer_row_that_generalises_wins_over_the_score():
    problem = noisy_problem(lambda X: X[:, 0] + 0.5 * X[:, 0] ** 2, noise=0.1)
    line, square = "add mul c x_1 c", "add add mul c x_1 mul c pow x_1 2 c"
    table = table_of([line, square], problem, complexity_penalty=1.0)  # a penalty that favours the line
    assert len(table.fitted[table.best_index][0]) == len(line.split())
    chosen = held_out_choice(table, problem, SearchSettings(), 0)
    assert table.fitted[chosen][0].tokens == tuple(square.split())


def test_fewer_than_two_folds_leave_the_score_s_choice():
    problem = noisy_problem(lambda X: 2 * X[:, 0] + np.sin(X[:, 1]))
    table = table_of([GOOD, SPURIOUS], problem, complexity_penalty=0.0)
    assert held_out_choice(table, problem, SearchSettings(held_out_folds=0), 0) == table.best_index


def test_an_exact_row_is_selected_as_before():
    rng = np.random.default_rng(0)
    X = rng.uniform(1, 3, (100, 3))
    problem = Problem(X, 2 * X[:, 0] + np.sin(X[:, 1]))
    chosen = []
    for settings in (None, SearchSettings()):
        rows = CandidateRows()
        for tokens in (GOOD, SPURIOUS, "add mul c x_1 c"):
            rows.add(fitted(tokens, problem), origin="beam")
        writer = Writer(Scaling.identity(3), SYMBOLS)
        table = write_selected(select(rows, problem, 0.01, writer, 0, settings=settings), problem, writer)
        chosen.append(table.equations.loc[table.best_index, "expression"])
    assert chosen[0] == chosen[1]
    assert chosen[0].free_symbols == {SYMBOLS[0], SYMBOLS[1]}


def test_the_quadratic_candidate_finds_a_centered_square_and_an_interaction():
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (200, 4))
    problem = Problem(X, 20 * (X[:, 2] - 0.5) ** 2 + 10 * X[:, 0] * X[:, 1] + 5 * X[:, 3])
    found = quadratic_candidate(problem, 0.01)
    assert problem.is_exact(found.loss)
    assert {"x_1", "x_2", "x_3", "x_4"} <= set(found.skeleton.tokens)
    assert mse(found.skeleton.program, X, problem.y, found.constants) == pytest.approx(found.loss, abs=1e-20)


def test_the_quadratic_basis_is_the_product_of_powers_bit_for_bit():
    # the plain rows are fixed work: their basis is np.prod(X ** e) to the last bit,
    # infinities and signs of zero included, for one column and for many
    rng = np.random.default_rng(3)
    for n_features in (1, 2, 5, 20):
        X = rng.normal(size=(300, n_features)) * np.exp(rng.uniform(-30, 30, n_features))
        X[0], X[1, 0] = np.inf, -0.0
        terms = monomials(n_features, 2)
        with np.errstate(all="ignore"):
            expected = np.column_stack([np.prod(X ** np.array(e), axis=1) for e in terms])
            assert _monomials(X, terms).tobytes() == expected.tobytes()


def test_the_quadratic_row_is_fitted_only_where_the_time_left_holds_it():
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, (200, 3))
    problem = Problem(X, X[:, 0] ** 2 + X[:, 1] + rng.normal(0, 0.1, 200))
    # 200 points times 9 monomials at 0.1 us each: 0.18 ms, twice that at pace 2
    origins = {
        (left, pace): set(
            plain_rows(CandidateRows(), problem, 0.01, SearchSettings(), 0, Deadline(left, lambda: 0.0), pace).origins
        )
        for left, pace in ((1.0, 1.0), (2.5e-4, 1.0), (2.5e-4, 2.0))
    }
    assert origins[(1.0, 1.0)] == origins[(2.5e-4, 1.0)] == {"linear", "backward", "polynomial"}
    assert origins[(2.5e-4, 2.0)] == {"linear", "backward"}


def test_plain_rows_compete_only_when_no_row_is_exact():
    problem = noisy_problem(lambda X: X[:, 0] * X[:, 1])
    noisy = CandidateRows()
    noisy.add(fitted("mul c x_1", problem), origin="beam")
    plain = plain_rows(noisy, problem, 0.01, SearchSettings(), 0)
    assert plain.origins == ["linear", "backward", "polynomial"]
    exact_problem = Problem(problem.X, problem.X[:, 0] * problem.X[:, 1])
    exact = CandidateRows()
    exact.add(fitted("mul c mul x_1 x_2", exact_problem), origin="beam")
    assert len(plain_rows(exact, exact_problem, 0.01, SearchSettings(), 0)) == 0
    # a fit whose time is spent adds none
    assert len(plain_rows(noisy, problem, 0.01, SearchSettings(), 0, Deadline(1.0, clock=lambda: 2.0))) == 0
    assert len(plain_rows(noisy, problem, 0.01, SearchSettings(), 0, Deadline(3.0, clock=lambda: 2.0))) == 3


@pytest.mark.parametrize(
    "settings, message",
    [
        (dict(held_out_folds=-1), "held_out_folds must be an integer"),
        (dict(held_out_folds=2.5), "held_out_folds must be an integer"),
        (dict(held_out_standard_errors=-1.0), "held_out_standard_errors must be non-negative"),
        (dict(held_out_noise_errors=-1.0), "held_out_noise_errors must be non-negative"),
        (dict(held_out_noise_scale=-1.0), "held_out_noise_scale must be non-negative"),
    ],
)
def test_bad_held_out_settings_are_named(settings, message):
    with pytest.raises(ValueError, match=message):
        SearchSettings(**settings)


LAWS = [
    lambda X: X[:, 0] * X[:, 1] / (X[:, 0] + X[:, 1]),  # an identity
    lambda X: X[:, 0] ** 2 + 3 * X[:, 1],  # an exact polynomial
    lambda X: X[:, 0] ** 1.5 / X[:, 1],  # a power law
]


@pytest.mark.parametrize("law", LAWS)
def test_clean_laws_give_the_same_equation_with_and_without_held_out_folds(tiny_model, law):
    X = np.random.default_rng(1).uniform(1, 4, (150, 2))
    equations = []
    for folds in (0, 5):
        reg = NeSymReSRegressor(
            model=str(tiny_model), beam_size=2, random_state=0, refine=None,
            search_settings=SearchSettings(held_out_folds=folds),
        ).fit(X, law(X))  # fmt: skip
        equations.append(reg.expression_)
        assert reg.score(X, law(X)) > 1 - 1e-9
    assert equations[0] == equations[1]


@pytest.mark.parametrize("origin, competes", [("linear", True), ("polynomial", True), ("beam", False)])
def test_plain_models_compete_off_the_front(origin, competes):
    problem = noisy_problem(lambda X: 2 * X[:, 0] + np.sin(X[:, 1]))
    table = table_of([GOOD, SPURIOUS], problem, complexity_penalty=0.0)
    good = next(i for i, (skeleton, *_) in enumerate(table.fitted) if "x_3" not in skeleton.tokens)
    table.equations.loc[good, ["pareto", "origin"]] = [False, origin]  # hidden from the front
    chosen = held_out_choice(table, problem, SearchSettings(), 0)
    assert (chosen == good) == competes


def test_among_equally_long_rows_within_the_margin_the_one_with_fewer_constants_wins():
    problem = noisy_problem(lambda X: 3 - X[:, 0], noise=0.01)
    fewer, more = "add c mul -1 x_1", "add mul c x_1 c"  # both five tokens
    table = table_of([more, fewer], problem)
    chosen = held_out_choice(table, problem, SearchSettings(), 0)
    assert table.fitted[chosen][0].tokens == tuple(fewer.split())


def test_the_simplest_row_consistent_with_the_noise_wins():
    """With the noise level, a row whose held-out error is already the noise's is chosen
    over a longer one that fits the noise, even under the lowest-error rule (and without
    the information criterion's gate)."""
    kept = {np.nan: 0, 0.05: 0}
    settings = SearchSettings(held_out_standard_errors=0.0, information_criterion=None)
    for seed, problem, table in _line_and_its_polynomial():
        for noise in kept:
            chosen = held_out_choice(table, problem, settings, seed, noise)
            kept[noise] += len(table.fitted[chosen][0]) == 5
    assert kept[0.05] == 20
    assert kept[np.nan] < 20  # without the noise level the longer row wins some (measured: 3 of 20)


def _line_and_its_polynomial(n=128):
    """20 noisy lines of ``n`` points (noise 0.05), each with a table of the line and a
    polynomial of degree 5 in the same column (five more constants that fit the noise)."""
    longer = "add add mul c x_1 c " + POLYNOMIAL_OF_X3.replace("x_3", "x_1")
    for seed in range(20):
        rng = np.random.default_rng(seed)
        X = rng.uniform(-2, 2, (n, 3))
        problem = Problem(X, 6.2 - X[:, 0] + rng.normal(0.0, 0.05, n))
        yield seed, problem, table_of(["add mul c x_1 c", longer], problem, complexity_penalty=0.0)


def test_the_noise_rule_reads_an_estimate_that_runs_low_scaled_up():
    """An estimate at 0.88 of the truth (the validation laws' median) leaves the line's
    held-out error above the band on 512 points; read times ``held_out_noise_scale`` it
    is within it."""
    kept = {}
    for scale in (1.0, SearchSettings().held_out_noise_scale):
        settings = SearchSettings(held_out_standard_errors=0.0, information_criterion=None, held_out_noise_scale=scale)
        kept[scale] = sum(
            len(table.fitted[held_out_choice(table, problem, settings, seed, 0.88 * 0.05)][0]) == 5
            for seed, problem, table in _line_and_its_polynomial(512)
        )
    assert kept == {1.0: 16, 1.13: 20}


@pytest.mark.parametrize("origin, tokens", [("linear", 9), ("beam", 5)])
def test_a_plain_line_is_not_a_law_for_the_noise_rule(origin, tokens):
    """With a noise level that reads every row as consistent (a high estimate: the band is
    then the lowest held-out error's), the simplest row wins, unless it is a plain model:
    a line without ``x_2``'s small term then loses to the law on the paired errors."""
    for seed in range(10):
        problem = noisy_problem(lambda X: X[:, 0] + 0.1 * X[:, 1], noise=0.3, seed=seed)
        candidates = CandidateRows()
        candidates.add(fitted("add mul c x_1 c", problem), origin=origin)
        candidates.add(fitted("add add mul c x_1 mul c x_2 c", problem), origin="beam")
        table = tabulate(candidates, 0.0, problem.scale, 1.0, Writer(Scaling.identity(3), SYMBOLS))
        chosen = held_out_choice(table, problem, SearchSettings(), seed, 1.0)
        assert len(table.fitted[chosen][0]) == tokens


@pytest.mark.parametrize("criterion", ["bic", "aic"])
def test_the_information_criterion_gates_a_longer_row_that_fits_the_noise(criterion):
    """Without a noise level, the gate alone keeps the line: the polynomial's closer fit
    does not pay for its five constants."""
    settings = SearchSettings(held_out_standard_errors=0.0, information_criterion=criterion)
    kept = 0
    for seed, problem, table in _line_and_its_polynomial():
        kept += len(table.fitted[held_out_choice(table, problem, settings, seed)][0]) == 5
    assert kept >= 19 if criterion == "aic" else kept == 20


def test_the_gate_keeps_a_longer_row_whose_fit_pays_for_its_constants():
    problem = noisy_problem(lambda X: X[:, 0] + 0.5 * X[:, 0] ** 2, noise=0.1)
    line, square = "add mul c x_1 c", "add add mul c x_1 mul c pow x_1 2 c"
    table = table_of([line, square], problem, complexity_penalty=1.0)
    rows = list(range(len(table.fitted)))
    assert information_gate(table, problem, rows, np.log(len(problem.y)), 0.0) == [
        i for i in sorted(rows, key=lambda i: len(table.fitted[i][0]))
    ]
    # a penalty per token large enough makes the square pay more than it gains
    kept = information_gate(table, problem, rows, np.log(len(problem.y)), 1e4)
    assert [table.fitted[i][0].tokens for i in kept] == [tuple(line.split())]


def test_an_overestimated_noise_level_does_not_hide_a_term_the_held_out_points_need():
    """A law that varies faster than the points resolve reads as noise: the bound is then
    the lowest held-out error, and a line that leaves the term out is not consistent."""
    problem = noisy_problem(lambda X: X[:, 0] + 0.3 * np.sin(3 * X[:, 1]), noise=0.02)
    line, law = "add mul c x_1 c", "add add mul c x_1 mul c sin mul c x_2 c"
    table = table_of([line, law], problem)
    for noise in (0.02, 1.0):  # the truth, and fifty times it
        chosen = held_out_choice(table, problem, SearchSettings(), 0, noise)
        assert table.fitted[chosen][0].tokens == tuple(law.split())


def table_with(rows: list[tuple[str, np.ndarray]], problem: Problem):
    """The table of rows with the constants given, not fitted (a wild row as a search may leave one)."""
    candidates = CandidateRows()
    candidates.add(fitted("c", problem), origin="baseline")
    for tokens, constants in rows:
        skeleton = Skeleton(tuple(tokens.split()))
        loss = mse(skeleton.program, problem.X, problem.y, constants)
        candidates.add(Fitted(skeleton, constants, loss), origin="beam")
    return tabulate(candidates, 0.0, problem.scale, 1.0, Writer(Scaling.identity(3), SYMBOLS))


def test_a_row_worse_than_the_mean_on_held_out_points_is_never_chosen():
    """A row whose errors overflow their spread (so the margin it is judged by is
    infinite) loses to a row that beats the mean. It competes as the front's length with
    fewer constants, as such a row did on a law of 3 variables with 2 columns added."""
    problem = noisy_problem(lambda X: 2 * X[:, 0] + np.sin(X[:, 1]))
    wild = "add c exp mul 115 add x_1 sin sin x_2"  # as long as GOOD; up to 1e140: squared errors finite
    table = table_with([(wild, np.array([0.0])), (GOOD, fitted(GOOD, problem).constants)], problem)
    chosen = held_out_choice(table, problem, SearchSettings(), 0)
    assert table.fitted[chosen][0].tokens == tuple(GOOD.split())


def test_a_column_that_beats_no_shuffled_copy_of_itself_on_held_out_points_is_unsupported():
    problem = noisy_problem(lambda X: 2 * X[:, 0] + 1, noise=0.5)
    folds = np.random.default_rng(0).permutation(200) % 5
    spurious = fitted("add add mul c x_1 c mul c x_3", problem)
    assert unsupported_on_held_out(spurious.skeleton, spurious.constants, problem, folds, SearchSettings(), 0) == [
        "x_3"
    ]
    line = fitted("add mul c x_1 c", problem)
    assert unsupported_on_held_out(line.skeleton, line.constants, problem, folds, SearchSettings(), 0) == []


def test_a_column_without_whose_order_the_row_is_not_finite_is_supported():
    """``sqrt(x1 - x2)`` with ``x1`` just above ``x2``: shuffled, either column makes the
    root's argument negative somewhere, so no shuffled copy is finite; the row needs both."""
    rng = np.random.default_rng(1)
    X = rng.uniform(1, 2, (200, 3))
    X[:, 1] = X[:, 2] + rng.uniform(0.01, 0.1, 200)
    problem = Problem(X, np.sqrt((X[:, 1] - X[:, 2]) / X[:, 0]) + rng.normal(0.0, 1e-4, 200))
    folds = np.random.default_rng(0).permutation(200) % 5
    law = fitted("mul c sqrt div add x_2 mul c x_3 x_1", problem)
    assert unsupported_on_held_out(law.skeleton, law.constants, problem, folds, SearchSettings(), 0) == []


def test_rows_with_an_unsupported_column_are_left_out_of_the_choice():
    """The row with the unused x3 fits best on held-out points too, but x3 beats none of
    its shuffled copies: the row without it is chosen."""
    problem = noisy_problem(lambda X: 2 * X[:, 0] + 1, noise=0.5)
    spurious, short = "add add mul c x_1 c mul c x_3", "mul c x_1"
    table = table_of([spurious, short], problem)
    chosen = held_out_choice(table, problem, SearchSettings(), 0)
    assert table.fitted[chosen][0].tokens == tuple(short.split())
    # with no refit left to test the columns, they count as supported
    spent = Evaluations(0)
    chosen = held_out_choice(table, problem, SearchSettings(), 0, evaluations=spent)
    assert "x_3" in table.fitted[chosen][0].tokens


def test_a_row_whose_every_variable_fails_leaves_alone(monkeypatch):
    """Heavy-tailed points (a few values hold the variance) let no column of a row beat
    its shuffled copies: that rules out the row, not each of its columns in every other
    row, so a shorter row over one of them is chosen, not the constant."""
    problem = noisy_problem(lambda X: 2 * X[:, 0] + np.sin(X[:, 1]))
    line = "add mul c x_1 c"
    table = table_with([(GOOD, fitted(GOOD, problem).constants), (line, fitted(line, problem).constants)], problem)

    def unsupported(skeleton, *args, **kwargs):
        return ["x_1", "x_2"] if skeleton.tokens == tuple(GOOD.split()) else []

    monkeypatch.setattr(held_out, "unsupported_on_held_out", unsupported)
    chosen = held_out_choice(table, problem, SearchSettings(), 0)
    assert table.fitted[chosen][0].tokens == tuple(line.split())


def test_a_deadline_that_passes_before_the_rows_are_read_leaves_the_score_s_choice():
    problem = noisy_problem(lambda X: X[:, 0] + 0.5 * X[:, 0] ** 2, noise=0.1)
    line, square = "add mul c x_1 c", "add add mul c x_1 mul c pow x_1 2 c"
    table = table_of([line, square], problem, complexity_penalty=1.0)  # the score prefers the line
    ahead, passed = Deadline(10.0, lambda: 0.0), Deadline(0.0, lambda: 1.0)
    assert held_out_choice(table, problem, SearchSettings(), 0, deadline=ahead) != table.best_index
    assert held_out_choice(table, problem, SearchSettings(), 0, deadline=passed) == table.best_index


def correlated_problem(seed=0, n=300) -> Problem:
    """``y`` over two correlated measurements that matter together (``x_1``, ``x_2``), a
    third that matters alone (``x_3``), and two columns of noise (``x_4``, ``x_5``)."""
    rng = np.random.default_rng(seed)
    base = rng.normal(size=n)
    X = np.column_stack([base + 0.3 * rng.normal(size=n), base + 0.3 * rng.normal(size=n), rng.normal(size=(n, 3))])
    return Problem(X, X[:, 0] - 0.8 * X[:, 1] + 0.5 * X[:, 2] + rng.normal(0.0, 0.5, n))


def features_of(fit: Fitted) -> set[str]:
    return {token for token in fit.skeleton.tokens if token.startswith("x_")}


@pytest.mark.parametrize("seed", range(4))
def test_the_backward_line_keeps_the_features_that_matter_and_drops_noise(seed):
    problem = correlated_problem(seed)
    line = backward_linear_candidate(problem, SearchSettings(), seed)
    assert features_of(line) == {"x_1", "x_2", "x_3"}
    coefficients, loss = least_squares_line(problem, [0, 1, 2])
    assert np.allclose(line.constants, coefficients) and line.loss == pytest.approx(loss)


def test_the_backward_line_keeps_every_feature_without_refits_or_time():
    problem = correlated_problem()
    every = {f"x_{j}" for j in range(1, 6)}
    assert features_of(backward_linear_candidate(problem, SearchSettings(plain_support_evaluations=0), 0)) == every
    passed = Deadline(1.0, clock=lambda: 2.0)
    assert features_of(backward_linear_candidate(problem, SearchSettings(), 0, passed)) == every
    # 300 points of 6 values each take 1e-7 s per value: 0.18 ms, which 1 ms holds at pace 1 but not at pace 10
    ahead = Deadline(1e-3, clock=lambda: 0.0)
    assert features_of(backward_linear_candidate(problem, SearchSettings(), 0, ahead, 1.0)) != every
    assert features_of(backward_linear_candidate(problem, SearchSettings(), 0, ahead, 10.0)) == every


def plain_table(problem: Problem, rows: list[tuple[str, str]]):
    candidates = CandidateRows()
    for tokens, origin in rows:
        candidates.add(fitted(tokens, problem), origin=origin)
    return tabulate(candidates, 0.01, problem.scale, 1.0, Writer(Scaling.identity(5), SYMBOLS))


def test_a_variable_that_fails_in_one_row_stays_in_the_plain_models(monkeypatch):
    """The chosen row fails the test on ``x_2``; the line that needs it is still chosen."""
    problem = correlated_problem()
    weak, line = "add mul c x_3 mul c x_2", "add mul c x_1 add mul c x_2 add mul c x_3 c"
    table = plain_table(problem, [(weak, "beam"), (line, "linear"), ("c", "baseline")])

    def unsupported(skeleton, *args, **kwargs):
        return ["x_2"] if skeleton.tokens == tuple(weak.split()) else []

    def weak_first(errors, complexity, table, *args):  # the weak row leads while it competes
        rows = [i for i in errors if table.fitted[i][0].tokens == tuple(weak.split())]
        return rows[0] if rows else choice(errors, complexity, table, *args)

    choice = held_out._choice
    monkeypatch.setattr(held_out, "_choice", weak_first)
    monkeypatch.setattr(held_out, "unsupported_on_held_out", unsupported)
    chosen = held_out_choice(table, problem, SearchSettings(information_criterion=None), 0)
    assert table.fitted[chosen][0].tokens == tuple(line.split())
    # a row of the search that uses it is left out with it
    table = plain_table(problem, [(weak, "beam"), (line, "beam"), ("mul c x_3", "beam")])
    chosen = held_out_choice(table, problem, SearchSettings(information_criterion=None), 0)
    assert table.fitted[chosen][0].tokens == ("mul", "c", "x_3")


def test_the_backward_line_is_left_out_only_where_none_of_its_features_passes(monkeypatch):
    problem = correlated_problem()
    line = "add mul c x_1 add mul c x_2 add mul c x_3 c"
    failing = []
    monkeypatch.setattr(held_out, "unsupported_on_held_out", lambda skeleton, *args, **kwargs: list(failing))
    for origin, fails, chosen_tokens in (
        ("backward", ["x_2"], tuple(line.split())),
        ("backward", ["x_1", "x_2", "x_3"], ("c",)),
        ("linear", ["x_2"], ("c",)),
    ):
        failing[:] = fails
        table = plain_table(problem, [(line, origin), ("c", "baseline")])
        assert table.fitted[held_out_choice(table, problem, SearchSettings(), 0)][0].tokens == chosen_tokens


def _line_of_three_features_and_a_shorter_row(seed: int, n: int = 300, weak: float = 0.25):
    """A line of the three columns plus noise 1, the last two ``weak``, with a table of a
    searched row of the first column alone and the plain line of all three (origin
    ``"backward"``): at 0.25 the shorter row leaves out a sixth of the noise variance, so
    both are consistent with the noise (within the band above it), and the line does
    better on held-out points."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, (n, 3))
    problem = Problem(X, 3.0 * X[:, 0] + weak * X[:, 1] - weak * X[:, 2] + rng.normal(0.0, 1.0, n))
    candidates = CandidateRows()
    candidates.add(fitted("add mul c x_1 c", problem), origin="beam")
    candidates.add(fitted("add add add mul c x_1 mul c x_2 mul c x_3 c", problem), origin="backward")
    return problem, tabulate(candidates, 0.0, problem.scale, 1.0, Writer(Scaling.identity(3), SYMBOLS))


@pytest.mark.parametrize("plain_first, line_wins", [(True, True), (False, False)])
def test_a_plain_line_as_good_as_the_simplest_row_under_the_noise_wins(plain_first, line_wins):
    """Data whose only law is a line plus noise: both rows are consistent with the noise;
    the simplest such row would win, but a searched row's structure was chosen on all
    the points (its held-out error runs low), so the plain line wins where it does at
    least as well (within the margin)."""
    settings = SearchSettings(held_out_plain_first=plain_first)
    for seed in range(10):
        problem, table = _line_of_three_features_and_a_shorter_row(seed)
        chosen = held_out_choice(table, problem, settings, seed, 1.0)
        assert (table.equations["origin"].iloc[chosen] == "backward") is line_wins


def test_the_folds_judge_the_plain_models_that_the_information_gate_sets_aside(monkeypatch):
    """The plain models' structure was not chosen on the training error that the gate
    reads: they stay among the rows the folds compare (unless ``held_out_plain_first``
    is off)."""

    def shorter_only(table, problem, rows, *_):  # the gate sets the line aside
        return [i for i in rows if len(table.fitted[i][0]) == 5]

    monkeypatch.setattr(held_out, "information_gate", shorter_only)
    for plain_first in (True, False):
        problem, table = _line_of_three_features_and_a_shorter_row(0)
        chosen = held_out_choice(table, problem, SearchSettings(held_out_plain_first=plain_first), 0, 1.0)
        assert (table.equations["origin"].iloc[chosen] == "backward") is plain_first


def test_without_a_noise_estimate_a_plain_line_within_the_margin_wins_over_a_shorter_searched_row(monkeypatch):
    """No noise level (NaN): the simplest row within the margin of the lowest held-out
    error would be the shorter searched row, whose structure was chosen on all the points;
    the line that errs no more than the margin beyond it wins (the line is the law here).
    The gate passes every row, so that ``held_out_plain_first`` changes only this rule."""
    monkeypatch.setattr(held_out, "information_gate", lambda table, problem, rows, *_: list(rows))
    wins = {}
    for plain_first in (True, False):
        settings = SearchSettings(held_out_plain_first=plain_first)
        chosen = []
        for seed in range(20):
            problem, table = _line_of_three_features_and_a_shorter_row(seed, weak=0.1)
            chosen.append(table.equations["origin"].iloc[held_out_choice(table, problem, settings, seed, np.nan)])
        wins[plain_first] = chosen.count("backward")
    # measured: 20 of 20 with the rule, 10 without
    assert wins[True] >= 18
    assert wins[False] <= 12


def test_a_line_of_noise_columns_does_not_win_over_the_constant_within_the_margin():
    """The rule weighs a line against a searched row with variables: a constant's structure
    read nothing of the points, so where it is the simplest row within the margin it stays."""
    chosen = []
    for seed in range(20):
        rng = np.random.default_rng(seed)
        X = rng.uniform(-2, 2, (300, 3))
        problem = Problem(X, 1.0 + rng.normal(0.0, 1.0, 300))
        candidates = CandidateRows()
        candidates.add(fitted("c", problem), origin="constant")
        candidates.add(fitted("add add add mul c x_1 mul c x_2 mul c x_3 c", problem), origin="backward")
        table = tabulate(candidates, 0.0, problem.scale, 1.0, Writer(Scaling.identity(3), SYMBOLS))
        chosen.append(table.equations["origin"].iloc[held_out_choice(table, problem, SearchSettings(), seed, np.nan)])
    assert chosen.count("constant") == 20


@pytest.mark.parametrize("origin, as_fitted", [("backward", True), ("linear", False)])
def test_a_predictor_s_constants_stay_as_fitted_under_noise(origin, as_fitted):
    """The backward line's features were kept by the held-out folds: under noise its
    constants are not snapped within their error bars (which would set some to 0 on the
    training error and choose its features again); another line's are."""
    rng = np.random.default_rng(0)
    X = rng.uniform(1, 3, (400, 3))
    problem = Problem(X, 2.0 * X[:, 0] + 0.5 * X[:, 1] + rng.normal(0.0, 0.3, 400))
    candidates = CandidateRows()
    candidates.add(fitted("add add add mul c x_1 mul c x_2 mul c x_3 c", problem), origin=origin)
    writer = Writer(Scaling.identity(3), SYMBOLS)
    table = tabulate(candidates, 0.0, problem.scale, 1.0, writer)
    fitted_constants = np.array(table.fitted[table.best_index][1], dtype=float)
    written = write_selected(table, problem, writer, noise=0.5)
    constants = np.array(written.fitted[written.best_index][1], dtype=float)
    assert np.array_equal(constants, fitted_constants) is as_fitted
