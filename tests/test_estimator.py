import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
import sympy
from models import QUICK_OPERON
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from nesymres_sklearn import NeSymReSRegressor
from nesymres_sklearn.network.weights import _cache
from nesymres_sklearn.search.selection.scores import COLUMNS
from nesymres_sklearn.search.settings import SearchSettings


@pytest.fixture
def regressor(tiny_model):
    return NeSymReSRegressor(model=str(tiny_model), beam_size=4, random_state=0, operon_settings=QUICK_OPERON)


def test_fit_exposes_expression_table_and_timings(regressor, xy):
    X, y = xy
    assert regressor.fit(X, y) is regressor
    assert isinstance(regressor.expression_, sympy.Expr)
    assert regressor.expression_.free_symbols <= set(sympy.symbols("x0 x1", real=True))
    table = regressor.equations_
    assert list(table.columns) == COLUMNS
    assert table["score_lower_is_better"].is_monotonic_increasing
    assert table.loc[regressor.best_index_, "expression"] == regressor.expression_
    assert "baseline" in set(table["origin"])
    assert set(regressor.timings_) == {
        *("loading", "identities", "encoding", "decoding", "constant_fitting", "exhaustive", "residual"),
        *("reciprocal", "inverted"),
        "decomposition",
        "reduction",
        "refinement",
        "continuation",
        "selection",
    }
    plan = regressor.plan_
    assert list(plan.columns) == ["unit", "seconds", "status"]
    assert list(plan["unit"].iloc[:2]) == ["identities", "route"] and plan["unit"].iloc[-1] == "selection"
    assert plan["unit"].str.startswith("decode").any() and plan["unit"].str.startswith("fit").any()
    assert "cut" not in set(plan["status"])  # no time budget: fixed work, run to the end
    assert regressor.n_features_in_ == 2
    assert regressor.sympy() is regressor.expression_
    assert regressor.latex() == sympy.latex(regressor.expression_)


def test_predict_evaluates_the_expression(regressor, xy):
    X, y = xy
    regressor.fit(X, y)
    expected = sympy.lambdify(sympy.symbols("x0 x1", real=True), regressor.expression_)(X[:, 0], X[:, 1])
    np.testing.assert_allclose(regressor.predict(X), np.broadcast_to(expected, (len(X),)))
    loss = regressor.equations_.loc[regressor.best_index_, "loss"]
    assert np.mean((regressor.predict(X) - y) ** 2) == pytest.approx(loss, rel=1e-6)


def test_predict_on_many_rows_in_chunks(regressor, xy):
    X, y = xy
    regressor.fit(X, y)
    big = np.random.default_rng(0).uniform(1, 5, size=(200_000, 2))
    prediction = regressor.predict(big)
    assert prediction.shape == (200_000,)
    np.testing.assert_allclose(prediction[-64:], regressor.predict(big[-64:]))


def test_selected_equation_is_the_best_scored_candidate(regressor, xy):
    X, y = xy
    regressor.fit(X, y)
    scores = regressor.equations_["score_lower_is_better"].to_numpy()
    assert scores[regressor.best_index_] == np.nanmin(scores[np.isfinite(scores)])


def assert_same_search(a, b):
    """Same candidates, ranking and selection. Constants along directions where the
    loss is flat (``c0*(c1*x + c2)``) may differ in the last bits: NumPy's vectorised
    transcendental functions round differently depending on memory alignment."""
    columns = ["skeleton", "complexity", "pareto", "log_prob", "origin"]
    pd.testing.assert_frame_equal(a.equations_[columns], b.equations_[columns])
    np.testing.assert_allclose(a.equations_["loss"], b.equations_["loss"], rtol=1e-6)
    assert a.best_index_ == b.best_index_


def test_random_state_makes_fits_reproducible(tiny_model, xy):
    X, y = xy
    X_big, y_big = np.vstack([X] * 10), np.concatenate([y] * 10)
    fits = [
        NeSymReSRegressor(
            model=str(tiny_model), beam_size=4, max_points=50, random_state=7, operon_settings=QUICK_OPERON
        ).fit(X_big, y_big)
        for _ in range(2)
    ]
    assert_same_search(*fits)


def test_parallel_constant_fitting_gives_the_same_result(tiny_model, xy):
    X, y = xy
    make = dict(model=str(tiny_model), beam_size=4, refine=None, random_state=3)
    serial = NeSymReSRegressor(**make).fit(X, y)
    parallel = NeSymReSRegressor(**make, n_jobs=2).fit(X, y)
    assert_same_search(serial, parallel)


def test_pandas_feature_names_appear_in_the_expression(tiny_model):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"mass": rng.uniform(1, 5, 60), "velocity": rng.uniform(1, 5, 60)})
    y = 0.5 * frame["mass"] * frame["velocity"] ** 2
    regressor = NeSymReSRegressor(model=str(tiny_model), beam_size=8, random_state=0, operon_settings=QUICK_OPERON)
    regressor.fit(frame, y)
    assert list(regressor.feature_names_in_) == ["mass", "velocity"]
    names = {s.name for s in regressor.equations_["expression"].map(lambda e: e.free_symbols).explode().dropna()}
    assert names and names <= {"mass", "velocity"}
    assert regressor.predict(frame).shape == (60,)


def test_pipeline_and_grid_search_over_beam_size(tiny_model, xy):
    X, y = xy
    pipeline = make_pipeline(
        FunctionTransformer(), NeSymReSRegressor(model=str(tiny_model), refine=None, random_state=0)
    )
    search = GridSearchCV(pipeline, {"nesymresregressor__beam_size": [1, 2, 4]}, cv=2)
    search.fit(X, y)
    assert search.best_params_["nesymresregressor__beam_size"] in (1, 2, 4)
    assert len(search.cv_results_["mean_test_score"]) == 3
    assert search.predict(X).shape == (len(X),)


def test_clone_and_grid_search_do_not_reload_weights(regressor, xy):
    X, y = xy
    regressor.set_params(refine=None).fit(X, y)
    cached = dict(_cache)
    clone(regressor).fit(X, y)
    GridSearchCV(clone(regressor), {"beam_size": [1, 2]}, cv=2).fit(X, y)
    assert dict(_cache) == cached
    assert all(a is b for a, b in zip(cached.values(), _cache.values()))


def test_pickled_estimator_carries_no_weights_and_predicts(regressor, xy):
    X, y = xy
    regressor.fit(X, y)
    blob = pickle.dumps(regressor)
    assert len(blob) < 200_000
    assert b"torch" not in blob
    restored = pickle.loads(blob)
    np.testing.assert_array_equal(restored.predict(X), regressor.predict(X))
    assert sympy.srepr(restored.expression_) == sympy.srepr(regressor.expression_)
    pd.testing.assert_frame_equal(
        restored.equations_.map(sympy.srepr, na_action="ignore")[["expression", "skeleton"]],
        regressor.equations_.map(sympy.srepr, na_action="ignore")[["expression", "skeleton"]],
    )
    pd.testing.assert_frame_equal(
        restored.equations_.drop(columns=["expression", "skeleton"]),
        regressor.equations_.drop(columns=["expression", "skeleton"]),
    )


def test_refit_forgets_the_previous_fit(regressor, xy):
    X, y = xy
    regressor.fit(X, y)
    regressor.fit(X[:, :1], y)
    assert regressor.n_features_in_ == 1
    assert regressor.expression_.free_symbols <= {sympy.Symbol("x0", real=True)}


def test_constant_target_gives_a_constant_with_a_warning(regressor):
    X = np.random.default_rng(0).uniform(size=(20, 2))
    with pytest.warns(UserWarning, match="y is constant"):
        regressor.fit(X, np.full(20, 4.5))
    assert regressor.expression_ == sympy.Float(4.5)
    np.testing.assert_array_equal(regressor.predict(X), np.full(20, 4.5))


@pytest.fixture(scope="module")
def unscaled_fit(tiny_model):
    """Points of y = x0 sin(x1) and their fit, which each scaling of y is compared with.
    Operon's default work: with QUICK_OPERON, at 1e6 the selected Operon equation's
    predictions agree to 3e-8 only, not 1e-9."""
    X = np.random.default_rng(0).uniform(1, 5, size=(64, 2))
    y = X[:, 0] * np.sin(X[:, 1])
    return X, y, NeSymReSRegressor(model=str(tiny_model), beam_size=4, random_state=0).fit(X, y)


@pytest.mark.slow
@pytest.mark.parametrize("factor", [1e-8, 1e-3, 1e6, 1e200])
def test_units_of_y_do_not_change_the_skeletons(unscaled_fit, factor):
    X, y, reference = unscaled_fit
    regressor = clone(reference)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # brought into range: nothing saturates
        scaled = regressor.fit(X, factor * y)
    assert list(scaled.equations_["skeleton"]) == list(reference.equations_["skeleton"])
    np.testing.assert_allclose(scaled.predict(X), factor * reference.predict(X), rtol=1e-9)
    np.testing.assert_allclose(scaled.equations_["log_fvu"], reference.equations_["log_fvu"], rtol=1e-9, atol=1e-9)
    assert scaled.best_index_ == reference.best_index_


@pytest.mark.parametrize("factor", [1e-4, 1e3])
def test_units_of_x_do_not_change_the_skeletons(regressor, xy, factor):
    X, y = xy
    reference = clone(regressor).fit(X, y)
    scaled = regressor.fit(factor * X, y)
    assert list(scaled.equations_["skeleton"]) == list(reference.equations_["skeleton"])
    np.testing.assert_allclose(scaled.predict(factor * X), reference.predict(X), rtol=1e-9)
    # The equation is mapped back exactly: it evaluates like predict on the raw features.
    symbols = sympy.symbols("x0 x1", real=True)
    expected = sympy.lambdify(symbols, scaled.expression_)(*(factor * X).T)
    np.testing.assert_allclose(scaled.predict(factor * X), np.broadcast_to(expected, (len(X),)), rtol=1e-9)


@pytest.mark.slow
def test_unit_and_noise_examples_with_the_bundled_model():
    rng = np.random.default_rng(0)
    X = rng.uniform(1, 5, size=(128, 2))
    y = X[:, 0] * np.sin(X[:, 1])
    x0, x1 = sympy.symbols("x0 x1", real=True)
    for factor in (1e-8, 1e-3, 1e6):
        regressor = NeSymReSRegressor(random_state=0).fit(X, factor * y)
        assert sympy.simplify(regressor.expression_ / factor - x0 * sympy.sin(x1)) == 0
    noisy = y + rng.normal(0, 0.1, size=len(y))
    assert NeSymReSRegressor(random_state=0).fit(X, noisy).expression_ == x0 * sympy.sin(x1)


def test_any_row_can_be_predicted_printed_and_the_front_is_marked(regressor, xy):
    X, y = xy
    regressor.fit(X, y)
    table = regressor.equations_
    last = len(table) - 1
    symbols = sympy.symbols("x0 x1", real=True)
    expected = sympy.lambdify(symbols, table.loc[last, "expression"])(*X.T)
    np.testing.assert_allclose(regressor.predict(X, index=last), np.broadcast_to(expected, (len(X),)), rtol=1e-9)
    assert regressor.sympy(last) is table.loc[last, "expression"]
    assert regressor.latex(last) == sympy.latex(table.loc[last, "expression"])
    with pytest.raises(IndexError, match="row of equations_"):
        regressor.predict(X, index=len(table))
    front = table[table["pareto"]]
    assert len(front) >= 1
    for _, row in table.iterrows():  # nothing off the front is both simpler and better
        beaten = (table["complexity"] <= row["complexity"]) & (table["loss"] < row["loss"])
        assert row["pareto"] == (
            not beaten.any() and not ((table["complexity"] < row["complexity"]) & (table["loss"] <= row["loss"])).any()
        )


@pytest.mark.parametrize(
    "X, y, error, message",
    [
        (np.array([[1.0, np.nan]] * 10), np.ones(10), ValueError, "Input X contains NaN"),
        (np.array([[1.0, np.inf]] * 10), np.ones(10), ValueError, "Input X contains infinity"),
        (np.ones((10, 2)), np.r_[np.ones(9), np.nan], ValueError, "Input y contains NaN"),
        (np.ones((10, 2)), np.ones(9), ValueError, "inconsistent numbers of samples"),
        (np.ones((10, 2)), np.ones((10, 2, 2)), ValueError, "Found array with dim 3"),  # (10, 2): two targets
        (np.ones(10), np.ones(10), ValueError, "Expected 2D array"),
        (np.array([["a", "b"]] * 10), np.ones(10), ValueError, "could not convert string to float"),
        (np.ones((2, 2)), np.ones(2), ValueError, "while a minimum of 3 is required"),
    ],
)
def test_bad_input_is_rejected_with_a_clear_message(regressor, X, y, error, message):
    with pytest.raises(error, match=message):
        regressor.fit(X, y)


def test_predict_checks(regressor, xy):
    X, y = xy
    with pytest.raises(NotFittedError):
        regressor.predict(X)
    regressor.fit(X, y)
    with pytest.raises(ValueError, match="X has 3 features, but NeSymReSRegressor is expecting 2"):
        regressor.predict(np.ones((5, 3)))
    with pytest.raises(ValueError, match="contains NaN"):
        regressor.predict(np.full((5, 2), np.nan))


@pytest.mark.parametrize(
    "params, message",
    [
        ({"beam_size": 0}, "'beam_size' parameter"),
        ({"n_restarts": 0}, "'n_restarts' parameter"),
        ({"max_time": -1.0}, "'max_time' parameter"),
        ({"complexity_penalty": -1.0}, "'complexity_penalty' parameter"),
        ({"device": "not-a-device"}, "not a valid torch device"),
        ({"n_jobs": 0}, r"'n_jobs' parameter .* must be an int in the range \[1, inf\), an int in the range"),
    ],
)
def test_invalid_parameters(tiny_model, xy, params, message):
    X, y = xy
    with pytest.raises(ValueError, match=message):
        NeSymReSRegressor(model=str(tiny_model), **params).fit(X, y)


def test_default_model_is_the_bundled_one(xy):
    X, y = xy
    regressor = NeSymReSRegressor(beam_size=2, random_state=0).fit(X, y)
    assert regressor.get_params()["model"] == "bundled"
    assert regressor.predict(X).shape == (len(X),)


def test_fit_restores_the_torch_thread_setting(regressor, xy):
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        regressor.fit(*xy)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(previous)


def test_a_spent_budget_fits_only_the_baseline_and_returns(tiny_model, xy):
    """No candidate's fit starts after the deadline, except the cheap ones that keep some
    equation finite (the constant baseline, the exact polynomial): the network, whose
    route and first decoding no deadline cuts, does not start."""
    X, y = xy
    spent = NeSymReSRegressor(model=str(tiny_model), beam_size=16, max_time=1e-9, refine=None, random_state=0).fit(
        X, y + np.sin(X[:, 0])
    )
    assert set(spent.equations_["origin"]) <= {"baseline", "polynomial"}
    assert np.isfinite(spent.predict(X)).all()
    assert spent.plan_.set_index("unit").loc["network", "status"] == "skipped: no time"


@pytest.mark.slow
@pytest.mark.parametrize("n_features", [1, 3, 6])
def test_a_budget_that_holds_the_plan_gives_the_fixed_work_fit(tiny_model, manual_clock, n_features):
    """Issue 54: one plan. A budget only cuts the fixed work's steps; one that holds
    them all (decodings take 10 s of the injected clock, Operon's chunks 1 s) gives the
    same ``equations_``, step for step (without the continuation, which would use the rest)."""
    from nesymres_sklearn.operon.settings import OperonSettings
    from nesymres_sklearn.search.settings import SearchSettings

    X = np.random.default_rng(n_features).uniform(1, 5, (64, n_features))
    y = np.sin(X[:, 0]) * X[:, -1] + X[:, 0] ** 2
    fits = [
        NeSymReSRegressor(
            model=str(tiny_model),
            beam_size=12,
            max_time=max_time,
            random_state=0,
            search_settings=SearchSettings(first_beam=4, reciprocal=True, continuation_steps=0),
            operon_settings=OperonSettings(population_size=50, generations=4, max_length=20),
        ).fit(X, y)
        for max_time in (None, 1e6)
    ]
    pd.testing.assert_frame_equal(fits[0].equations_, fits[1].equations_)
    assert str(fits[0].expression_) == str(fits[1].expression_)
    steps = [[step for step in zip(fit.plan_["unit"], fit.plan_["status"]) if step[0] != "calibration"] for fit in fits]
    assert steps[0] == steps[1]
    assert all("calibration" in set(fit.plan_["unit"]) for fit in fits)  # the fit's own Operon pace
    assert [unit for unit, _ in steps[0][:6]] == ["identities", "route", "decode 4", "fit 4", "decode 12", "fit 12"]
    assert fits[0].refinement_ is None or fits[0].refinement_["generations"] == 4


@pytest.mark.slow
def test_a_larger_budget_never_selects_a_worse_equation(tiny_model, xy, manual_clock):
    """Operon's seeds and chunks do not depend on the clock: a larger budget continues
    the smaller one's run. (Without the identities to the noise: in the smaller budget's
    continuation they write the law exact to rounding, in two tokens fewer than the
    larger budget's Operon, whose exact row ends the search first.)"""
    from nesymres_sklearn.operon.settings import OperonSettings

    X, y = xy
    fits = [
        NeSymReSRegressor(
            model=str(tiny_model),
            beam_size=4,
            max_time=budget,
            refine="operon",
            random_state=0,
            # small models: pruning Operon's longest ones took most of this test's time
            operon_settings=OperonSettings(population_size=50, max_chunk_generations=2, max_length=20),
            search_settings=SearchSettings(noisy_identity_unknowns=()),
        ).fit(X, y + 0.01 * X[:, 0] ** 3)
        for budget in (13.0, 16.0, 48.0)
    ]
    assert len({fit.refinement_["seeds"] for fit in fits}) == 1
    generations = [fit.refinement_["generations"] for fit in fits]
    assert generations[0] < generations[1] <= generations[2]
    scores = [fit.equations_["score_lower_is_better"].min() for fit in fits]
    assert scores[0] >= scores[1] >= scores[2]


def test_the_deadline_only_cuts_the_fixed_sequence_of_fits_short(tiny_model, xy, monkeypatch, manual_clock):
    """Every constant fit of a candidate takes 1 s of the injected clock: a larger budget
    fits a longer prefix of the same candidates, so it has the smaller one's rows and
    never selects a worse-scoring equation."""
    from nesymres_sklearn.search.fitting import candidates
    from nesymres_sklearn.search.selection import final

    fit_constants = candidates.fit_constants

    def slow_fit(*args, **kwargs):
        manual_clock.advance(1.0)
        return fit_constants(*args, **kwargs)

    monkeypatch.setattr(candidates, "fit_constants", slow_fit)
    # every fitted row in the table: a larger budget's better row may make a smaller one's a restatement
    monkeypatch.setattr(final, "without_restatements", lambda rows, *args: rows)
    X, y = xy
    plan_only = SearchSettings(continuation_steps=0)  # the plan's sequence alone: no continuation after it
    fits = [
        NeSymReSRegressor(
            model=str(tiny_model),
            beam_size=8,
            max_time=budget,
            refine=None,
            n_restarts=2,
            random_state=0,
            search_settings=plan_only,
        ).fit(X, y + 0.01 * X[:, 0] ** 3)
        for budget in (14.0, 20.0, 40.0, None)
    ]
    first_round = [
        set(fit.equations_.loc[fit.equations_["origin"].isin(["beam", "attached"]), "skeleton"].map(str))
        for fit in fits
    ]
    assert 0 < len(first_round[0]) < len(first_round[1]) <= len(first_round[2]) <= len(first_round[3])
    assert first_round[0] <= first_round[1] <= first_round[2] <= first_round[3]
    scores = [fit.equations_["score_lower_is_better"].min() for fit in fits]
    assert scores[0] >= scores[1] >= scores[2] >= scores[3]
    assert [fit.plan_.set_index("unit").loc["fit 8", "status"] for fit in fits] == ["cut", "cut", "done", "done"]


@pytest.mark.parametrize("refine, share", [("operon", 0.5), (None, 1.0)])
def test_the_networks_fits_stop_at_its_share_of_the_budget(tiny_model, xy, monkeypatch, manual_clock, refine, share):
    """With Operon after it, the network's constant fitting in every step (scaled
    candidates included) stops where the time left holds Operon's whole work, but not
    before its share of the budget; alone it has all of it."""
    from nesymres_sklearn import neural_search
    from nesymres_sklearn.operon.settings import OperonSettings, whole_seconds
    from nesymres_sklearn.search import anytime
    from nesymres_sklearn.search.budget import Calibration
    from nesymres_sklearn.search.settings import SearchSettings

    budgets, deadlines = [], []
    fit_candidates, scaled_candidates, search = anytime.fit_candidates, anytime.scaled_candidates, neural_search.search

    def recording_fit(candidates, problem, request, deadline, first_index=0, runner=None):
        deadlines.append(deadline)
        return fit_candidates(candidates, problem, request, deadline, first_index, runner)

    def recording_scaled(candidates, fits, problem, seen, settings=None, deadline=None, runner=None):
        deadlines.append(deadline)
        return scaled_candidates(candidates, fits, problem, seen, settings, deadline, runner)

    def recording_search(model, points, problem, request, budget, runner=None, seen=None):
        budgets.append(budget)
        return search(model, points, problem, request, budget, runner, seen)

    monkeypatch.setattr(anytime, "fit_candidates", recording_fit)
    monkeypatch.setattr(anytime, "scaled_candidates", recording_scaled)
    monkeypatch.setattr(neural_search, "search", recording_search)
    X, y = xy
    small = OperonSettings(population_size=50)  # Operon's work does not matter here: each chunk takes 1 s of the clock
    NeSymReSRegressor(
        model=str(tiny_model),
        beam_size=4,
        max_time=30.0,
        refine=refine,
        random_state=0,
        operon_settings=small,
        search_settings=SearchSettings(continuation_steps=0),  # the plan's budget alone
    ).fit(X, y)
    (budget,) = budgets
    assert budget.refinement_seconds == (whole_seconds(small, len(y), Calibration()) if refine else 0.0)
    network = max(share * (30.0 - 0.3), 30.0 - 0.3 - budget.refinement_seconds)  # 0.3 s: the reserve
    assert budget.network_end.at - budget.started == pytest.approx(network)
    assert len(deadlines) >= 2 and all(deadline == budget.network_end for deadline in deadlines)


def _six_feature_law(n_points: int):
    """Issue 37's law ``x0*x1 + sin(x2) - x3 + x4*x5`` on U(1, 5): more features than the
    tiny model's three variables."""
    X = np.random.default_rng(0).uniform(1, 5, size=(n_points, 6))
    return X, X[:, 0] * X[:, 1] + np.sin(X[:, 2]) - X[:, 3] + X[:, 4] * X[:, 5]


@pytest.mark.slow
@pytest.mark.parametrize("decompose", [False, True])
def test_decomposition_stage_adds_assembled_candidates_when_asked(tiny_model, decompose):
    from nesymres_sklearn.search.settings import SearchSettings

    X, y = _six_feature_law(200)
    settings = SearchSettings(decompose=decompose, reduce=False)  # no search for combinations: 2 s, none found here
    regressor = NeSymReSRegressor(
        model=str(tiny_model), beam_size=2, refine=None, random_state=0, search_settings=settings
    )
    with pytest.warns(UserWarning, match="most relevant"):
        regressor.fit(X, y)
    decomposed = regressor.equations_[regressor.equations_["origin"] == "decomposed"]
    assert len(decomposed) >= decompose
    assert (regressor.timings_["decomposition"] > 0) == decompose
    assert np.isfinite(decomposed["log_fvu"]).all()  # the random tiny model's parts: fitted, if poor


def test_decomposition_stage_is_skipped_when_the_network_sees_every_feature(regressor, xy):
    from nesymres_sklearn.search.settings import SearchSettings

    regressor.set_params(search_settings=SearchSettings(decompose=True), refine=None).fit(*xy)
    assert "decomposed" not in set(regressor.equations_["origin"])
    assert regressor.timings_["decomposition"] == 0.0


def test_a_late_selection_keeps_the_budget_and_fixed_work_selects_in_full(monkeypatch, manual_clock):
    """Without ``max_time`` the selection is fixed work that no clock cuts: pruning
    refits the bundled model's ``x0*sin(c*sqrt(c*x1 + c))`` (beam of 4) as
    ``x0*sin(x1)``. With ``max_time``, a selection that starts after the fit's end
    stops its refits (the budget is a promise) and writes the law as fitted."""
    from nesymres_sklearn.search.selection import final

    X = np.random.default_rng(0).uniform(1, 5, (200, 3))
    y = X[:, 0] * np.sin(X[:, 1])
    # without the identities, which write x0*sin(x1) at once, and the held-out test of the
    # columns (fixed work: it would leave out the late row's x2, which the law does not read)
    settings = SearchSettings(identities=False, held_out_evaluations=0)
    params = {"beam_size": 4, "refine": None, "random_state": 0, "search_settings": settings}
    fixed_work = NeSymReSRegressor(**params).fit(X, y)
    on_time = NeSymReSRegressor(**params, max_time=15.0).fit(X, y)
    assert str(fixed_work.expression_) == str(on_time.expression_) == "x0*sin(x1)"
    add_pruned = final.add_pruned

    def late(*args, **kwargs):
        manual_clock.advance(1e6)
        return add_pruned(*args, **kwargs)

    monkeypatch.setattr(final, "add_pruned", late)
    late_fit = NeSymReSRegressor(**params, max_time=15.0).fit(X, y)
    assert str(late_fit.expression_) != "x0*sin(x1)"  # not pruned: the refits were out of time
    assert late_fit.score(X, y) > 0.99  # the best fitted row, as fitted
    monkeypatch.setattr(final, "add_pruned", add_pruned)
    assert str(NeSymReSRegressor(**params).fit(X, y).expression_) == "x0*sin(x1)"


@pytest.mark.slow
@pytest.mark.parametrize("max_time, residual, searched", [(None, True, True), (60.0, True, True), (None, False, False)])
def test_the_residual_is_searched_with_and_without_a_budget(tiny_model, monkeypatch, max_time, residual, searched):
    """With more features than the network reads, its best first-round fit and the
    columns it read go to the residual search, whose candidates join the table (one
    plan: with and without a budget); ``residual=False`` skips it."""
    from nesymres_sklearn.expression.skeleton import Skeleton
    from nesymres_sklearn.search import looks
    from nesymres_sklearn.search.settings import SearchSettings

    calls = []

    def recording(problem, first, read, n_variables, seed, solve, deadline=None, runner=None, penalty=None):
        calls.append((first, read, n_variables))
        X, y = problem.X, problem.y
        skeleton = Skeleton(("add", "mul", "c", "x_1", "add", "mul", "c", "x_6", "c"))
        constants = np.linalg.lstsq(np.column_stack([X[:, 0], X[:, 5], np.ones(len(y))]), y, rcond=None)[0]
        return [(skeleton, constants, float(np.mean((skeleton.program(X, constants) - y) ** 2)))]

    monkeypatch.setattr(looks, "residual_candidates", recording)
    X, y = _six_feature_law(100)
    settings = SearchSettings(residual=residual, reduce=False)
    regressor = NeSymReSRegressor(
        model=str(tiny_model), beam_size=2, refine=None, max_time=max_time, random_state=0, search_settings=settings
    )
    with pytest.warns(UserWarning, match="most relevant"):
        regressor.fit(X, y)
    assert len(calls) == searched
    assert ("residual" in set(regressor.equations_["origin"])) == searched
    if searched:
        (first, read, n_variables) = calls[0]
        np.testing.assert_array_equal(read, regressor.features_seen_by_network_)
        assert n_variables == 3
        assert np.isfinite(first[2])  # the best of the first round, written over all features
        variables = {token for token in first[0].tokens if token.startswith("x_")}
        assert variables <= {f"x_{j + 1}" for j in regressor.features_seen_by_network_}


@pytest.mark.slow
@pytest.mark.parametrize("max_time, taken", [(80.0, True), (15.0, False)])
def test_a_look_starts_after_the_decodings_while_the_time_left_holds_one(
    tiny_model, monkeypatch, manual_clock, max_time, taken
):
    """The residual look starts right after the network's decoding (10 s of the clock),
    and only while the time left before the network's end holds another decoding."""
    from nesymres_sklearn.search import looks
    from nesymres_sklearn.search.settings import SearchSettings

    started, moments = manual_clock.perf_counter(), []

    def recording(problem, first, read, n_variables, seed, solve, deadline=None, runner=None, penalty=None):
        moments.append(manual_clock.perf_counter() - started)
        return []

    monkeypatch.setattr(looks, "residual_candidates", recording)
    X, y = _six_feature_law(100)
    regressor = NeSymReSRegressor(
        model=str(tiny_model),
        beam_size=2,
        refine=None,
        max_time=max_time,
        random_state=0,
        search_settings=SearchSettings(reduce=False),
    )
    with pytest.warns(UserWarning, match="most relevant"):
        regressor.fit(X, y)
    assert moments == ([pytest.approx(10.0)] if taken else [])
    status = regressor.plan_.set_index("unit").loc["residual", "status"]
    assert status == ("done" if taken else "skipped: no time")


@pytest.mark.slow
@pytest.mark.parametrize(
    "max_time, reciprocal, law, searched",
    [
        (None, True, "ratio", True),
        (60.0, True, "ratio", True),  # a budget that holds the plan: no test of the clock
        (None, False, "ratio", False),
        (None, True, "sum", False),  # x0 + x1: the first round's exact polynomial
    ],
)
def test_one_over_y_is_searched_with_and_without_a_budget(
    tiny_model, xy, monkeypatch, max_time, reciprocal, law, searched
):
    """What the network reads goes upside down to the reciprocal search, whose
    candidates join the table; ``reciprocal=False`` or exact first fits skip it."""
    from nesymres_sklearn.expression.skeleton import Skeleton
    from nesymres_sklearn.search import looks
    from nesymres_sklearn.search.settings import SearchSettings

    calls = []

    def recording(problem, solve, deadline=None, runner=None, penalty=None):
        calls.append(problem)
        skeleton = Skeleton(("div", "c", "x_1"))
        constants = np.array([np.mean(problem.y * problem.X[:, 0])])
        return [(skeleton, constants, float(np.mean((skeleton.program(problem.X, constants) - problem.y) ** 2)))]

    monkeypatch.setattr(looks, "reciprocal_candidates", recording)
    X, _ = xy
    y = X[:, 0] / X[:, 1] if law == "ratio" else X[:, 0] + X[:, 1]
    settings = SearchSettings(reciprocal=reciprocal, identities=False)  # x0/x1 is an identity: no network
    regressor = NeSymReSRegressor(
        model=str(tiny_model), beam_size=2, refine=None, max_time=max_time, random_state=0, search_settings=settings
    )
    regressor.fit(X, y)
    assert len(calls) == searched
    assert ("reciprocal" in set(regressor.equations_["origin"])) == searched
    if searched:
        np.testing.assert_allclose(calls[0].y * regressor._writer.scaling.y_scale, y)  # what the network reads


@pytest.mark.slow
def test_the_residual_is_not_searched_when_a_power_law_factor_accounts_for_the_other_features(tiny_model, monkeypatch):
    from nesymres_sklearn.search import looks

    calls = []
    monkeypatch.setattr(looks, "residual_candidates", lambda *args, **kwargs: calls.append(args) or [])
    X = np.random.default_rng(0).uniform(1, 5, (128, 6))
    y = X[:, 0] * X[:, 1] / X[:, 2] ** 2 * (np.sin(X[:, 3]) + 2)  # as in tests/test_power_factor.py
    regressor = NeSymReSRegressor(model=str(tiny_model), beam_size=2, refine=None, random_state=0)
    with pytest.warns(UserWarning, match="power law"):
        regressor.fit(X, y)
    assert calls == []
