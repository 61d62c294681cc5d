"""The fit's continuation after its plan (issue 63): Operon's islands and the network's
samples take turns until ``max_time`` ends, on an injected clock; the user's stopping
condition, fixed work, ``warm_start``, progress lines, and the islands on a dask cluster."""

import logging
import os
import pickle
import threading

import numpy as np
import pytest
import sympy

from nesymres_sklearn import NeSymReSRegressor
from nesymres_sklearn.operon.settings import OperonSettings
from nesymres_sklearn.search.settings import SearchSettings

QUICK_OPERON = OperonSettings(population_size=50, generations=2, max_chunk_generations=2, max_length=20)


@pytest.fixture
def inexact():
    """Data that no candidate of the tiny model fits exactly."""
    X = np.random.default_rng(3).uniform(1, 5, (64, 2))
    return X, np.exp(-X[:, 0] / X[:, 1]) * np.sin(1.3 * X[:, 1]) + 0.3 * np.sqrt(X[:, 0])


def regressor(tiny_model, **params):
    return NeSymReSRegressor(model=str(tiny_model), beam_size=4, random_state=0, operon_settings=QUICK_OPERON, **params)


def turns(fit) -> list[str]:
    return [unit for unit in fit.plan_["unit"] if unit.startswith("continue: ")]


@pytest.mark.slow
def test_the_search_continues_until_the_budget_ends_and_a_larger_one_never_selects_worse(
    tiny_model, inexact, manual_clock
):
    fits = [regressor(tiny_model, max_time=max_time).fit(*inexact) for max_time in (60.0, 90.0, 150.0)]
    plans = [turns(fit) for fit in fits]
    assert 0 < len(plans[0]) < len(plans[1]) < len(plans[2])
    # the angle form of the law under noise too: these points read as noisy (the law
    # varies fast); the identities to the noise ran in full in the plan
    assert {unit.split()[1] for unit in plans[2]} == {"angle", "operon", "network", "residual"}
    assert fits[2].plan_.set_index("unit").loc["identity under noise", "status"] == "done"
    for small, large in zip(plans, plans[1:]):
        # the same first turns; near its end a smaller budget gives the turn to a source that the time left holds
        assert large[:3] == small[:3]
    scores = [fit.equations_.loc[fit.best_index_, "score_lower_is_better"] for fit in fits]
    assert scores[0] >= scores[1] >= scores[2]
    for fit in fits:
        last = fit.plan_.iloc[-3]  # the step before the calibration and the selection
        assert (last["unit"], last["status"]) == ("continue", "stopped: the time left holds no turn")
        assert fit.timings_["continuation"] > 0
    assert set(fits[2].equations_["origin"]) >= {"operon", "beam"}


def test_every_source_takes_a_turn_and_adds_rows(tiny_model, inexact):
    """Fixed work of five turns: the pursuit (where asked for) and the angle form of the
    law under noise (these points read as noisy), Operon's islands, the network's samples
    and its look at the best row's residual each take one (ties go to the first), and
    their rows join. The identities to the noise ran in full in the plan: no turn."""
    plain = regressor(tiny_model).fit(*inexact)
    settings = SearchSettings(continuation_steps=5, noisy_identity_pursuit=True)
    fit = regressor(tiny_model, search_settings=settings).fit(*inexact)
    assert turns(fit) == [
        "continue: pursuit 0",
        "continue: angle 0",
        "continue: operon 0",
        "continue: network 0",
        "continue: residual 0",
    ]
    assert not {"sample", "residual"} & set(plain.equations_["origin"])  # the plan's own rows have neither
    assert {"sample", "residual"} & set(fit.equations_["origin"])


def test_without_max_time_the_plan_alone_runs_bit_for_bit(tiny_model, inexact):
    plain = regressor(tiny_model).fit(*inexact)
    assert turns(plain) == [] and "continue" not in set(plain.plan_["unit"])
    fixed = [
        regressor(tiny_model, search_settings=SearchSettings(continuation_steps=3)).fit(*inexact) for _ in range(2)
    ]
    assert turns(fixed[0]) == turns(fixed[1]) and len(turns(fixed[0])) == 3
    assert (
        fixed[0]
        .equations_.drop(columns=["expression", "skeleton"])
        .equals(fixed[1].equations_.drop(columns=["expression", "skeleton"]))
    )
    assert (
        fixed[0].equations_.loc[fixed[0].best_index_, "score_lower_is_better"]
        <= (plain.equations_.loc[plain.best_index_, "score_lower_is_better"])
    )


@pytest.mark.parametrize(
    "condition", [1e300, lambda loss, complexity: complexity >= 1]
)  # a loss every row reaches, a callable that always holds
def test_the_users_condition_ends_the_search(tiny_model, inexact, manual_clock, condition):
    fit = regressor(tiny_model, max_time=100.0, early_stop_condition=condition).fit(*inexact)
    assert turns(fit) == []
    assert ("continue", "stopped: early_stop_condition") in set(zip(fit.plan_["unit"], fit.plan_["status"]))


def test_a_condition_that_is_not_met_does_not_stop_it(tiny_model, inexact, manual_clock):
    fit = regressor(tiny_model, max_time=60.0, early_stop_condition=1e-30).fit(*inexact)
    assert len(turns(fit)) > 0


def test_an_invalid_condition_is_refused(tiny_model, inexact):
    with pytest.raises(ValueError, match="early_stop_condition"):
        regressor(tiny_model, early_stop_condition="soon").fit(*inexact)


def test_warm_start_continues_the_search_on_the_same_data(tiny_model, inexact, manual_clock):
    fit = regressor(tiny_model, max_time=40.0, warm_start=True).fit(*inexact)
    first_turns, first_score = turns(fit), fit.equations_.loc[fit.best_index_, "score_lower_is_better"]
    fit.fit(*inexact)
    assert fit.plan_["unit"].iloc[0] == "warm start"
    assert not {"identities", "decode 4"} & set(fit.plan_["unit"])  # the plan did not run again
    second_turns = turns(fit)
    assert len(second_turns) > 0
    for unit in second_turns:  # each source's turns go on from where they were
        name, turn = unit.split()[1:]
        assert int(turn) >= sum(1 for first in first_turns if first.split()[1] == name)
    assert fit.equations_.loc[fit.best_index_, "score_lower_is_better"] <= first_score
    X, y = inexact
    fit.fit(X, y + 1.0)  # other data: a new search
    assert fit.plan_["unit"].iloc[0] == "identities"
    cold = regressor(tiny_model, max_time=40.0).fit(*inexact)
    cold.fit(*inexact)  # warm_start=False: a new search each time
    assert cold.plan_["unit"].iloc[0] == "identities"


def test_a_warm_fit_that_raises_leaves_the_search_as_it_was(tiny_model, inexact, manual_clock, monkeypatch):
    """The sources' turns and the skeletons the network's sampler drew stay as the last
    fit that returned left them: the next warm fit continues as if the failed one had
    not run."""
    from nesymres_sklearn import pipeline

    fits = [regressor(tiny_model, max_time=40.0, warm_start=True).fit(*inexact) for _ in range(2)]
    state = fits[0]._warm
    sampler = next(source for source in state.sources if source.name == "network")
    drawn, counted = set(sampler.seen), dict(state.shares.turns)
    assert drawn and counted

    def failing(*args, **kwargs):
        raise RuntimeError("the selection failed")

    with monkeypatch.context() as patched:
        patched.setattr(pipeline, "select", failing)
        with pytest.raises(RuntimeError, match="the selection failed"):
            fits[0].fit(*inexact)
    assert fits[0]._warm is state and sampler.seen == drawn and state.shares.turns == counted
    for fit in fits:
        fit.fit(*inexact)
    assert turns(fits[0]) == turns(fits[1])
    written = [fit.equations_["expression"].astype(str).tolist() for fit in fits]
    assert written[0] == written[1]


def test_the_identities_to_the_noise_that_the_plan_cut_short_take_a_turn_on_a_warm_start(
    tiny_model, inexact, manual_clock, monkeypatch
):
    from nesymres_sklearn import pipeline

    search = pipeline.identities_to_the_noise

    def past_the_end(*args):  # the plan's search reaches the refinement's end
        manual_clock.advance(30.0)
        return search(*args)

    monkeypatch.setattr(pipeline, "identities_to_the_noise", past_the_end)
    fit = regressor(tiny_model, max_time=40.0, warm_start=True).fit(*inexact)
    assert fit.plan_.set_index("unit").loc["identity under noise", "status"] == "cut"
    monkeypatch.setattr(pipeline, "identities_to_the_noise", search)
    fit.fit(*inexact)
    assert "continue: identity 0" in turns(fit)


def test_warm_start_state_is_not_pickled(tiny_model, inexact):
    fit = regressor(tiny_model, warm_start=True).fit(*inexact)
    assert hasattr(fit, "_warm")
    restored = pickle.loads(pickle.dumps(fit))
    assert not hasattr(restored, "_warm")
    np.testing.assert_array_equal(restored.predict(inexact[0]), fit.predict(inexact[0]))


def test_verbose_prints_progress_lines(tiny_model, inexact, manual_clock, caplog):
    with caplog.at_level(logging.INFO, logger="nesymres_sklearn"):
        regressor(tiny_model, max_time=60.0, verbose=1).fit(*inexact)
    lines = [record.getMessage() for record in caplog.records if "best loss" in record.getMessage()]
    assert lines and all("at complexity" in line and "sources " in line for line in lines)


@pytest.mark.slow
def test_operons_islands_run_on_a_dask_cluster(tiny_model, inexact):
    """Inside joblib's dask backend, each turn's islands are tasks on the cluster's two
    worker processes; their candidates come back to the fit."""
    distributed = pytest.importorskip("distributed")
    from joblib import parallel_config

    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    # without the identities to the noise, whose rational row (13 constants, a hundredth of
    # Operon's error on these points) would leave no Operon row in the table
    settings = SearchSettings(continuation_steps=4, noisy_identity_unknowns=())
    with cluster, distributed.Client(cluster) as client:
        with parallel_config(backend="dask"), distributed.get_task_stream(client) as stream:
            fit = regressor(tiny_model, n_jobs=-1, search_settings=settings).fit(*inexact)
        workers = {task["worker"] for task in stream.data}
    assert len(turns(fit)) == 4
    assert len(workers) == 2  # both workers ran islands
    assert "operon" in set(fit.equations_["origin"])


def test_two_fits_in_one_process_split_the_same_budget_alike(tiny_model, monkeypatch):
    """Issue 66: the Operon pace lives in each fit's own Calibration; a first fit that
    measured a slow pace does not change how the second splits its budget."""
    from nesymres_sklearn.search import settings as settings_module

    splits, budget = [], settings_module.SearchSettings.budget

    def recording(self, max_time, refinement_seconds=0.0, clock=None):
        splits.append(refinement_seconds)
        return (
            budget(self, max_time, refinement_seconds)
            if clock is None
            else budget(self, max_time, refinement_seconds, clock)
        )

    monkeypatch.setattr(settings_module.SearchSettings, "budget", recording)
    X = np.random.default_rng(0).uniform(1, 5, (150, 2))
    for _ in range(2):
        regressor(tiny_model, max_time=0.5).fit(X, np.exp(-X[:, 0] / X[:, 1]) * np.sin(X[:, 1]))
    assert len(splits) == 2 and splits[0] == splits[1] > 0


def test_warm_start_starts_over_when_a_parameter_that_shapes_the_search_changed(tiny_model, inexact, manual_clock):
    fit = regressor(tiny_model, max_time=40.0, warm_start=True).fit(*inexact)
    fit.set_params(max_time=30.0, verbose=0).fit(*inexact)  # the budget may change
    assert fit.plan_["unit"].iloc[0] == "warm start"
    fit.set_params(operators=["add", "mul"], max_complexity=5).fit(*inexact)  # the search's shape may not
    assert fit.plan_["unit"].iloc[0] == "identities"
    assert (fit.equations_["complexity"] <= 5).all()


def test_the_continuation_adds_only_allowed_rows(tiny_model, inexact):
    fit = regressor(
        tiny_model, operators=["add", "mul", "div"], search_settings=SearchSettings(continuation_steps=3)
    ).fit(*inexact)
    assert len(turns(fit)) == 3
    functions = {
        type(node).__name__ for skeleton in fit.equations_["skeleton"] for node in skeleton.atoms(sympy.Function)
    }
    assert functions == set()


def test_islands_in_threads_give_each_island_its_seed(inexact):
    """``n_jobs`` islands at once (threads): each its own seed, the same in every run."""
    from nesymres_sklearn.operon.islands import OperonIslands
    from nesymres_sklearn.operon.trees import OPERON_SYMBOLS
    from nesymres_sklearn.search.fitted import CandidateRows
    from nesymres_sklearn.search.problem import Problem

    X, y = inexact
    islands = OperonIslands(Problem(X, y), QUICK_OPERON, 7, OPERON_SYMBOLS, n_workers=2)
    runs = [islands.propose(CandidateRows(), 0, None) for _ in range(2)]
    assert len(runs[0]) >= 2 and set(runs[0].origins) == {"operon"}
    assert [str(s) for s in runs[0].skeletons] == [str(s) for s in runs[1].skeletons]
    assert islands.island_seed(0, 0) != islands.island_seed(0, 1) != islands.island_seed(1, 0)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["loky", "multiprocessing"])
def test_islands_stay_in_threads_inside_a_process_pool_backend(inexact, monkeypatch, backend):
    """A benchmark's or a grid search's ``parallel_config`` of local processes does not send
    the islands to a pool that each turn would start (seconds, past the fit's end): they
    run in this process's threads."""
    from joblib import parallel_config

    from nesymres_sklearn.operon import islands as islands_module
    from nesymres_sklearn.operon.trees import OPERON_SYMBOLS
    from nesymres_sklearn.search.fitted import CandidateRows
    from nesymres_sklearn.search.problem import Problem

    ran, original = [], islands_module.island

    def recording(*args):
        ran.append((os.getpid(), threading.get_ident()))
        return original(*args)

    monkeypatch.setattr(islands_module, "island", recording)
    X, y = inexact
    islands = islands_module.OperonIslands(Problem(X, y), QUICK_OPERON, 7, OPERON_SYMBOLS, n_workers=2)
    with parallel_config(backend=backend):
        found = islands.propose(CandidateRows(), 0, None)
        assert islands_module.island_backend() == "threading"
    assert len(ran) == 2 and {pid for pid, _ in ran} == {os.getpid()}
    assert threading.get_ident() not in {thread for _, thread in ran}
    assert set(found.origins) == {"operon"}
    with parallel_config(backend="sequential"):  # another backend (a cluster's: dask, ray) is the user's choice
        assert islands_module.island_backend() is None


def test_a_residual_look_at_an_exact_row_decodes_nothing_and_adds_nothing(tiny_model):
    """Its turn after an exact row: no residual to read, no decoding, no rows (a turn
    without a decoding once raised from the pace's update)."""
    from nesymres_sklearn import neural_search
    from nesymres_sklearn.expression.skeleton import Skeleton
    from nesymres_sklearn.search.fitted import CandidateRows, Fitted
    from nesymres_sklearn.search.problem import Problem
    from nesymres_sklearn.search.settings import SearchRequest

    X = np.random.default_rng(0).uniform(1, 5, (40, 2))
    problem = Problem(X, X[:, 0].copy())
    rows = CandidateRows()
    rows.add(Fitted(Skeleton(("x_1",)), np.array([]), 0.0), origin="beam")
    network = neural_search.load_network(str(tiny_model), None, "cpu")
    look = neural_search.ResidualLook(network, problem, SearchRequest(size=4), decoding_seconds=0.25)
    assert len(look.propose(rows, 0, None)) == 0 and look.decoding_seconds == 0.25


def test_the_residual_look_adds_a_skeletons_residual_line_once(tiny_model):
    """``exp(x0) + 2*x1 - x2`` from the exponential alone: the first look at it adds the
    law (its residual's line, refitted with it); a later turn at the same skeleton does
    not add that line again."""
    from nesymres_sklearn import neural_search
    from nesymres_sklearn.expression.skeleton import Skeleton
    from nesymres_sklearn.search.fitted import CandidateRows, Fitted, mse
    from nesymres_sklearn.search.problem import Problem
    from nesymres_sklearn.search.settings import SearchRequest

    X = np.random.default_rng(2).uniform(0, 2, (64, 4))
    problem = Problem(X, np.exp(X[:, 0]) + 2 * X[:, 1] - X[:, 2])
    exponential = Skeleton(("mul", "c", "exp", "x_1"))
    rows = CandidateRows()
    start = np.array([1.1])
    rows.add(Fitted(exponential, start, mse(exponential.program, X, problem.y, start)), origin="beam")
    network = neural_search.load_network(str(tiny_model), None, "cpu")
    look = neural_search.ResidualLook(network, problem, SearchRequest(size=4))
    first, again = look.propose(rows, 0, None), look.propose(rows, 1, None)
    assert any(problem.is_exact(loss) for loss in first.losses)
    assert not any(problem.is_exact(loss) for loss in again.losses)
    assert look.lined == {exponential.key}


def test_the_subset_look_reads_each_other_subset_once_and_writes_its_rows_over_it(tiny_model):
    """Turn ``k`` decodes on the ``k``-th other subset of the most relevant features (never
    the one the route read); its rows name only those features, with their losses on the
    whole problem; no turn once the subsets are read, nor where the time left does not
    hold a decoding at the pace of the last."""
    from dataclasses import replace

    from nesymres_sklearn import neural_search
    from nesymres_sklearn.expression.tokens import variable_index
    from nesymres_sklearn.search.budget import Deadline
    from nesymres_sklearn.search.fitted import CandidateRows, mse
    from nesymres_sklearn.search.problem import Problem
    from nesymres_sklearn.search.settings import SearchRequest
    from nesymres_sklearn.search.variables.features import other_subsets, relevance

    X = np.random.default_rng(1).uniform(1, 5, (40, 4))
    problem = Problem(X, X[:, 3] * np.sin(X[:, 2]) + X[:, 1])
    network = neural_search.load_network(str(tiny_model), None, "cpu")
    request = SearchRequest(size=4, seed=5)
    read, scores = np.array([1, 2, 3]), relevance(X, problem.y, 5)[0]
    look = neural_search.SubsetLook(network, problem, request, read, scores)
    expected = other_subsets(scores, 3, read, request.settings.subset_features)
    assert len(expected) == 3 and not any(set(subset) == {1, 2, 3} for subset in expected)
    assert [ranked.tolist() for ranked in look.subsets] == [other.tolist() for other in expected]
    for turn, subset in enumerate(expected):
        assert look.holds(None, turn)
        rows = look.propose(CandidateRows(), turn, None)
        assert len(rows) > 0 and set(rows.origins) == {"subsets"}
        for skeleton, constants, loss in zip(rows.skeletons, rows.constants, rows.losses):
            named = {variable_index(token) for token in skeleton.tokens} - {None}
            assert named <= set(subset.tolist())
            assert loss == pytest.approx(mse(skeleton.program, X, problem.y, constants))
        assert look.decoding_seconds > 0
    assert not look.holds(None, len(expected))
    paced = neural_search.SubsetLook(network, problem, request, read, scores, decoding_seconds=2.0)
    assert paced.holds(Deadline(2.5, lambda: 0.0), 0) and not paced.holds(Deadline(1.5, lambda: 0.0), 0)
    # the most relevant three are the ones read: no other subset, no turn
    top = other_subsets(scores, 3, np.array([], dtype=int), 3)[0]
    narrow = replace(request, settings=SearchSettings(subset_features=3))
    only = neural_search.SubsetLook(network, problem, narrow, top, scores)
    assert only.subsets == [] and not only.holds(None, 0)


def test_the_route_hands_the_subsets_its_relevance(tiny_model, monkeypatch):
    """The relevance that chose the network's features ranks the other subsets: it is
    computed once a fit."""
    from nesymres_sklearn.search.variables import features, routing

    calls = []

    def counted(X, y, seed):
        calls.append((X, y, seed))
        return features.relevance(X, y, seed)

    monkeypatch.setattr(routing, "relevance", counted)
    rng = np.random.default_rng(4)
    X = rng.uniform(1, 5, (64, 5))
    y = np.exp(-X[:, 0] / X[:, 1]) * np.sin(1.3 * X[:, 2]) + 0.3 * np.sqrt(X[:, 3]) * X[:, 4]
    settings = SearchSettings(continuation_steps=6, subset_features=5)
    fit = regressor(tiny_model, search_settings=settings).fit(X, y)
    assert sum(unit.startswith("continue: subsets") for unit in turns(fit)) >= 1
    assert len(calls) == 1
    source = next(source for source in fit._warm.sources if source.name == "subsets")
    expected = features.other_subsets(features.relevance(*calls[0])[0], 3, source.read, 5)
    assert [subset.tolist() for subset in source.subsets] == [subset.tolist() for subset in expected]


def test_with_more_features_than_variables_the_network_reads_other_subsets(tiny_model):
    """Fixed work: the route reads the three most relevant of five features; the
    subsets' source takes turns, unless ``subset_features`` is at most the network's
    variables (off)."""
    rng = np.random.default_rng(4)
    X = rng.uniform(1, 5, (64, 5))
    y = np.exp(-X[:, 0] / X[:, 1]) * np.sin(1.3 * X[:, 2]) + 0.3 * np.sqrt(X[:, 3]) * X[:, 4]
    fits = {
        most: regressor(tiny_model, search_settings=SearchSettings(continuation_steps=10, subset_features=most)).fit(
            X, y
        )
        for most in (5, 3)
    }
    assert sum(unit.startswith("continue: subsets") for unit in turns(fits[5])) >= 2
    assert not any(unit.startswith("continue: subsets") for unit in turns(fits[3]))
