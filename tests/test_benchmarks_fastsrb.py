"""FastSRB in ``benchmarks.fastsrb``: the loader, sampling, scoring, the runner and its report."""

import time

import numpy as np
import pandas as pd
import pytest

from benchmarks.fastsrb import sampling
from benchmarks.fastsrb.laws import LAWS_PATH, Law, Variable, get_law, load_laws, unit_string
from benchmarks.fastsrb.methods import (
    IRRELEVANT_COLUMNS,
    IRRELEVANT_RANGE,
    Fitted,
    Method,
    uses_columns_beyond,
    with_irrelevant_columns,
    with_law_variables,
)
from benchmarks.fastsrb.report import report_markdown, summary
from benchmarks.fastsrb.runner import COLUMNS, plan_fits, read_results, run
from benchmarks.fastsrb.sampling import draw_points, draw_variable, make_problem
from benchmarks.fastsrb.scoring import numeric_recovery, symbolic_recovery
from benchmarks.metrics import FVU_THRESHOLD, fvu

DIMENSIONLESS = (0, 0, 0, 0, 0)


def variable(distribution="uni", sign="pos", low=1.0, high=10.0):
    return Variable("v1", "x", low, high, distribution, sign, DIMENSIONLESS)


def synthetic_law(prepared, *variables):
    return Law(name=f"synthetic {prepared}", prepared=prepared, variables=variables, target_units=DIMENSIONLESS)


# --------------------------------------------------------------------------- loader


def test_the_file_is_in_the_repository_and_holds_120_laws():
    assert LAWS_PATH.parent.name == "datasets" and "shared" not in LAWS_PATH.parts
    assert (LAWS_PATH.parent / "FASTSRB_LICENSE").read_text().startswith("MIT License")
    laws = load_laws()
    assert len(laws) == 120
    assert {"II.38.3", "I.6.2a", "B20"} <= set(laws)
    assert {law.n_variables for law in laws.values()} == set(range(1, 9))


def test_every_law_has_ranges_sample_types_and_a_parsed_expression():
    for law in load_laws().values():
        assert law.variables and [v.name for v in law.variables] == [f"v{k}" for k in range(1, law.n_variables + 1)]
        for var in law.variables:
            assert np.isfinite([var.low, var.high]).all() and var.low < var.high, (law.name, var)
            assert var.distribution in ("log", "uni", "int") and var.sign in ("pos", "neg", "pos_neg")
            if var.distribution == "log":
                assert var.low > 0
        assert law.expression.free_symbols <= set(law.symbols.values()), law.name
        assert law.accepted_expressions, law.name


def test_string_bounds_and_extra_items_of_the_yaml_are_read_as_numbers():
    law = get_law("II.38.3")  # its v1 range is [1.0e-1, '1.0e1'] in the YAML
    assert (law.variables[0].low, law.variables[0].high) == (0.1, 10.0)
    assert get_law("III.21.20").variables[0].high == 1e-27  # [1e-29, 1e-27, 'uses_positive=False']
    assert str(law.expression) == "v1*v2*v3/v4"


def test_prepared_syntax_and_physical_constants():
    law = get_law("III.7.38")  # 2 * v1 * v2 / (6.626e-34 / (2 * 3.1415926535897))
    assert law.physical_constants == ("planck_constant",)
    X = np.array([[2.0, 3.0]])
    assert law.evaluate(X)[0] == pytest.approx(12 / (6.626e-34 / (2 * 3.1415926535897)), rel=1e-12)
    assert get_law("II.38.3").physical_constants == ()
    assert set(get_law("I.41.16").physical_constants) == {"planck_constant", "speed_of_light", "boltzmann_constant"}
    assert get_law("III.21.20").evaluate(np.array([[1.0, 2.0, 3.0, 4.0]]))[0] == pytest.approx(-1.5)  # neg(v1)


def test_unit_strings():
    assert unit_string([1, -2, 1, 0, 0]) == "meter*second**-2*kilogram"
    assert unit_string([2, 0, 0, 0, -1]) == "meter**2*volt**-1"
    assert unit_string([0, 0, 0, 1, 0]) == "kelvin"
    assert unit_string(DIMENSIONLESS) == ""
    law = get_law("II.38.3")
    assert law.X_units == ["meter**-1*second**-2*kilogram", "meter**2", "meter", "meter"]
    assert law.y_units == "meter*second**-2*kilogram"


def _base_exponents(dimensionality) -> list:
    """pint's dimensions as exponents of [m, s, kg, K, V] (volt = kg m^2 s^-3 A^-1)."""
    length, time_, mass, temperature, current = (
        dimensionality.get(name, 0) for name in ("[length]", "[time]", "[mass]", "[temperature]", "[current]")
    )
    volt = -current
    return [length - 2 * volt, time_ + 3 * volt, mass - volt, temperature, volt]


def test_pint_reads_every_unit_string_as_the_yaml_exponents():
    from nesymres_sklearn.units.parsing import unit_registry

    registry = unit_registry()
    for law in load_laws().values():
        exponents = [var.units for var in law.variables] + [law.target_units]
        for text, expected in zip([*law.X_units, law.y_units], exponents):
            dimensionality = registry.Quantity(1.0, text).dimensionality
            assert _base_exponents(dimensionality) == list(expected), (law.name, text)


# --------------------------------------------------------------------------- sampling


def test_log_draws_lie_in_range_and_spread_over_the_decades():
    values = draw_variable(variable("log", "pos", 1e-3, 1e1), 4000, np.random.default_rng(0))
    assert values.min() >= 1e-3 and values.max() <= 1e1
    decades = np.log10(values)
    assert np.mean(decades) == pytest.approx(-1.0, abs=0.1)
    for low in (-3, -2, -1, 0):  # a quarter in each decade
        assert np.mean((decades >= low) & (decades < low + 1)) == pytest.approx(0.25, abs=0.04)


def test_uniform_integer_and_sign_draws():
    rng = np.random.default_rng(1)
    uniform = draw_variable(variable("uni", "pos", 2.0, 4.0), 2000, rng)
    assert uniform.min() >= 2.0 and uniform.max() <= 4.0 and np.mean(uniform) == pytest.approx(3.0, abs=0.1)
    integers = draw_variable(variable("int", "pos", 1.0, 100.0), 2000, rng)
    assert np.array_equal(integers, np.round(integers)) and integers.min() >= 1 and integers.max() <= 100
    assert len(np.unique(integers)) > 50
    negative = draw_variable(variable("log", "neg", 0.1, 10.0), 500, rng)
    assert (negative < 0).all() and np.abs(negative).min() >= 0.1
    mixed = draw_variable(variable("log", "pos_neg", 0.1, 10.0), 500, rng)
    assert (mixed > 0).any() and (mixed < 0).any() and np.abs(mixed).min() >= 0.1


def test_integer_variables_of_the_laws_are_drawn_as_integers():
    law = get_law("III.19.51")  # n: int, pos, [1, 100]
    problem = make_problem(law, 0)
    n = problem.X_support[:, 2]
    assert np.array_equal(n, np.round(n)) and n.min() >= 1
    signs = np.sign(problem.X_support[:, 1])  # q: log, pos_neg
    assert (signs > 0).any() and (signs < 0).any()


def test_points_where_the_law_is_not_finite_are_drawn_again():
    law = synthetic_law("sqrt(1 - v1)", variable("uni", "pos", 0.0, 2.0))
    X, y = draw_points(law, 300, np.random.default_rng(0))
    assert X.shape == (300, 1) and np.isfinite(y).all()
    assert X.max() <= 1.0 and X.min() >= 0.0
    np.testing.assert_allclose(y, np.sqrt(1 - X[:, 0]))


def test_a_law_never_finite_raises(monkeypatch):
    monkeypatch.setattr(sampling, "MAX_REDRAWS", 5)
    law = synthetic_law("log(-v1)", variable("uni", "pos", 1.0, 2.0))
    with pytest.raises(RuntimeError, match="not finite"):
        draw_points(law, 10, np.random.default_rng(0))


def test_problems_are_deterministic_and_differ_by_index():
    law = get_law("II.38.3")
    first, again, other = make_problem(law, 0), make_problem(law, 0), make_problem(law, 1)
    assert first.X_support.shape == (512, 4) and first.X_validation.shape == (512, 4)
    np.testing.assert_array_equal(first.X_support, again.X_support)
    np.testing.assert_array_equal(first.y_validation, again.y_validation)
    assert not np.allclose(first.X_support, other.X_support)
    assert not np.allclose(first.X_support, first.X_validation)
    # Seeded by the law's CRC-32, not Python's hash(): the same numbers in every process
    # (to the last bits of 10**u, which NumPy releases round differently).
    np.testing.assert_allclose(
        first.X_support[0],
        [0.3500319492678335, 0.006134341221079268, 0.008057801936120004, 0.3796504279374033],
        rtol=1e-14,
    )
    np.testing.assert_allclose(
        first.X_validation[0],
        [0.2713689052063948, 0.0001695416426870599, 0.07526700193087701, 0.088422623457444],
        rtol=1e-14,
    )


def test_noise_goes_to_the_support_targets_with_the_level_times_their_std():
    law = get_law("I.12.4")
    clean = make_problem(law, 0)
    np.testing.assert_array_equal(clean.y_support, clean.y_support_clean)
    noisy = {level: make_problem(law, 0, noise=level) for level in (0.01, 0.1)}
    for level, problem in noisy.items():
        np.testing.assert_array_equal(problem.X_support, clean.X_support)
        np.testing.assert_array_equal(problem.y_validation, clean.y_validation)
        noise = problem.y_support - clean.y_support
        assert np.std(noise) == pytest.approx(level * np.std(clean.y_support), rel=0.1)
    # One stream of draws, scaled by the level.
    np.testing.assert_allclose(
        (noisy[0.1].y_support - clean.y_support) / 0.1, (noisy[0.01].y_support - clean.y_support) / 0.01, rtol=1e-6
    )


# --------------------------------------------------------------------------- scoring


def test_numeric_recovery():
    y = make_problem(get_law("II.38.3"), 0).y_validation
    assert fvu(y, y) == 0.0 and numeric_recovery(y, y)
    assert numeric_recovery(y, y * (1 + 1e-9))
    assert not numeric_recovery(y, y * (1 + 1e-3)) and fvu(y, y * (1 + 1e-3)) > FVU_THRESHOLD
    with_nan = y.copy()
    with_nan[3] = np.nan
    assert not numeric_recovery(y, with_nan) and fvu(y, with_nan) == np.inf
    assert not numeric_recovery(y, None) and not numeric_recovery(y, y[:-1])


def test_fvu_does_not_underflow_or_overflow_on_extreme_scales():
    rng = np.random.default_rng(0)
    base = rng.uniform(1, 2, 512)
    for scale in (1e-160, 1e-30, 1e36, 1e150):
        y = base * scale
        assert fvu(y, y) == 0.0
        assert fvu(y, y * (1 + 1e-10)) < FVU_THRESHOLD
        assert fvu(y, y * (1 + 1e-2)) > FVU_THRESHOLD
    assert fvu(np.ones(5), np.ones(5)) == 0.0 and fvu(np.ones(5), np.full(5, 1.1)) == np.inf


def test_symbolic_recovery_of_the_law_and_its_accepted_forms():
    law = get_law("II.38.3")
    assert symbolic_recovery("v1*v2*v3/v4", law)
    assert symbolic_recovery("v1*v2*(v3/v4)", law)  # an accept form
    assert symbolic_recovery("1.0000001*v1*v2*v3/v4", law)  # a fitted constant, rounded
    assert not symbolic_recovery("v1*v2*v3/v4**2", law)
    assert not symbolic_recovery("1.001*v1*v2*v3/v4", law)
    assert not symbolic_recovery(None, law)
    assert not symbolic_recovery("v1*v2*(v3/", law)
    assert not symbolic_recovery("v1*v2*v3/v4", law, fvu_value=1.0)  # the FVU gate
    constant = get_law("III.7.38")  # 2*v1*v2/(6.626e-34/(2*pi)), accept 1.89652439093854e34*v1*v2
    assert symbolic_recovery("1.8965244e34*v1*v2", constant)
    assert symbolic_recovery("v1*v2/5.272804e-35", constant)  # the constant folded the other way
    assert not symbolic_recovery("1.9e34*v1*v2", constant)


def test_feature_names_become_the_law_variables():
    assert with_law_variables("x0*sin(x1) + exp(x10)", offset=0) == "v1*sin(v2) + exp(v11)"
    assert with_law_variables("x_1/x_2", offset=1) == "v1/v2"


# --------------------------------------------------------------------------- runner and report


def fit_oracle(X, y, law, max_time, seed, n_jobs=1):
    """The law itself, whatever the data."""
    return Fitted(law.evaluate, law.prepared)


def fit_broken(X, y, law, max_time, seed, n_jobs=1):
    raise ValueError("No product of powers of the features has the units of y")


def fit_sleeping(X, y, law, max_time, seed, n_jobs=1):
    time.sleep(60)


def fit_counting_cores(X, y, law, max_time, seed, n_jobs=1):
    """The law, its expression the number of cores the runner gave the fit."""
    return Fitted(law.evaluate, f"{n_jobs}")


FAKE_METHODS = {
    "oracle": Method("oracle", fit_oracle),
    "broken": Method("broken", fit_broken),
    "sleeping": Method("sleeping", fit_sleeping),
    "cores": Method("cores", fit_counting_cores),
}


def test_fits_are_planned_law_by_law_with_the_methods_interleaved():
    fits = plan_fits(["A", "B"], ["m1", "m2"], [1, 10], 2, [0])
    assert [(f.law, f.problem, f.max_time, f.method) for f in fits[:4]] == [
        ("A", 0, 1.0, "m1"),
        ("A", 0, 1.0, "m2"),
        ("A", 0, 10.0, "m1"),
        ("A", 0, 10.0, "m2"),
    ]
    assert len(fits) == 16 and fits[8].law == "B"


def test_the_runner_writes_a_row_per_fit_and_resumes(tmp_path):
    out = tmp_path / "fastsrb.csv"
    written = []
    options = dict(law_names=["II.38.3", "I.29.4"], methods=["oracle", "broken"], registry=FAKE_METHODS)
    results = run(out, problems=2, on_row=written.append, **options)
    assert list(pd.read_csv(out).columns) == COLUMNS
    assert len(results) == len(written) == 8
    oracle = results[results["method"] == "oracle"]
    assert (oracle["status"] == "ok").all() and oracle["numeric_recovery"].all() and oracle["symbolic_recovery"].all()
    assert (oracle["fvu"] == 0).all()
    broken = results[results["method"] == "broken"]
    assert (broken["status"] == "error").all() and not broken["numeric_recovery"].any()
    assert broken["error"].str.contains("ValueError: No product of powers").all()
    assert set(results["n_variables"]) == {4, 1}

    written.clear()
    assert len(run(out, problems=2, on_row=written.append, **options)) == 8 and written == []
    results = run(out, problems=3, on_row=written.append, **options)
    assert len(results) == 12 and len(written) == 4 and {row["problem"] for row in written} == {2}
    assert len(read_results(out, out)) == 12  # a fit found twice is kept once


def test_each_fit_gets_the_threads_per_fit_as_its_cores(tmp_path):
    results = run(tmp_path / "cores.csv", law_names=["I.29.4"], methods=["cores"], registry=FAKE_METHODS, n_threads=3)
    assert list(results["expression"].astype(str)) == ["3"]


def test_a_fit_past_its_time_limit_is_killed_and_a_miss(tmp_path):
    out = tmp_path / "fastsrb.csv"
    results = run(out, law_names=["I.29.4"], methods=["sleeping"], registry=FAKE_METHODS, time_limit=0.5)
    (row,) = results.itertuples()
    assert row.status == "timeout" and not row.numeric_recovery and "time limit" in row.error


def _frame(rows):
    keys = ["law", "n_variables", "problem", "method", "max_time", "noise", "status", "fit_time"]
    frame = pd.DataFrame([dict(zip(keys, row)) for row in rows])
    recovered = (frame["status"] == "ok") & (frame["fit_time"] < 5)
    fvu = np.where(recovered, 0.0, 0.5)
    return frame.assign(numeric_recovery=recovered.astype(int), symbolic_recovery=0, fvu=fvu, expression="v1")


def test_report_summarises_per_method_and_pairs_the_methods():
    rows = []
    for law, n in (("A", 2), ("B", 5), ("C", 3)):
        rows.append((law, n, 0, "ours", 1.0, 0.0, "ok", 0.5))
        rows.append((law, n, 0, "operon", 1.0, 0.0, "ok" if law == "A" else "error", 1.2))
    frame = _frame(rows)
    table = summary(frame).set_index("method")
    assert table.loc["ours", "numeric_all"] == 100.0 and table.loc["operon", "numeric_all"] == pytest.approx(100 / 3)
    assert table.loc["operon", "numeric_1_3"] == 50.0 and table.loc["operon", "numeric_4_8"] == 0.0
    assert table.loc["operon", "errors"] == 2 and table.loc["operon", "over_budget"] == 3  # 1.2 > 1.15
    assert table.loc["ours", "over_budget"] == 0 and table.loc["ours", "median_fit_s"] == 0.5
    text = report_markdown(frame, n_resamples=200)
    assert "| ours | 1 | 0 | 3 | 100.0 | 100.0 | 100.0 |" in text
    assert "## ours - operon, noise 0" in text and "+66.7" in text


def test_report_counts_wild_misses_and_laws_reading_an_added_column():
    rows = [(law, n, 0, "ours+irrelevant", 1.0, 0.0, "ok", 0.5) for law, n in (("A", 2), ("B", 2), ("C", 3), ("D", 1))]
    frame = _frame(rows).assign(
        fvu=[0.0, 3.0, 0.2, np.inf], expression=["v1*v2", "v1 + v3", "v3*v12", None], numeric_recovery=[1, 0, 0, 0]
    )
    (row,) = summary(frame).itertuples()
    assert row.wild == 2  # B (worse than the mean) and D (no prediction)
    assert row.wild_constants == 0
    assert row.beyond == 2  # B reads v3 of a 2-variable law, C v12 of a 3-variable law
    assert uses_columns_beyond("sin(v10) + v1", 2) and not uses_columns_beyond("v1*v2", 2)
    constant = frame.assign(expression=["v1*v2", "-8169.5", "v3*v12", None])
    (row,) = summary(constant).itertuples()
    assert row.wild == 2 and row.wild_constants == 1  # B prints a constant


def test_irrelevant_columns_are_appended_at_fit_and_new_at_prediction():
    seen = []

    def fit_spy(X, y, law, max_time, seed, n_jobs=1):
        seen.append(X)
        return Fitted(lambda X_new: seen.append(X_new) or X_new[:, 0], "v1")

    method = with_irrelevant_columns(Method("spy", fit_spy), "spy+irrelevant")
    X = np.arange(8.0).reshape(4, 2)
    fitted = method.fit(X, X[:, 0], None, 1.0, 3)
    assert np.array_equal(fitted.predict(X), X[:, 0]) and fitted.expression == "v1"
    fitted_X, predicted_X = seen
    assert fitted_X.shape == predicted_X.shape == (4, 2 + IRRELEVANT_COLUMNS)
    assert np.array_equal(fitted_X[:, :2], X) and np.array_equal(predicted_X[:, :2], X)
    added = fitted_X[:, 2:]
    assert added.min() >= IRRELEVANT_RANGE[0] and added.max() <= IRRELEVANT_RANGE[1]
    assert not np.allclose(added, predicted_X[:, 2:])  # fresh values: the law must not read them
    method.fit(X, X[:, 0], None, 1.0, 3)
    assert np.array_equal(seen[2], fitted_X)  # seeded by the fit's seed


def test_noise_ceiling_frees_the_numbers_that_are_not_simple_and_recovers_a_law_without_noise():
    import sympy

    from benchmarks.fastsrb.laws import load_laws
    from benchmarks.fastsrb.noise_ceiling import fitted_fvu_recovery, free_numbers

    v1, v2 = sympy.symbols("v1 v2")
    law = v1 * v2**2 / 4 + sympy.Float(6.626e-34) * v1 + sympy.Float(1.5e34)
    assert free_numbers(law, "skeleton") == [sympy.Float(6.626e-34), sympy.Rational(1, 4), sympy.Float(1.5e34)]
    assert free_numbers(law, "snapped") == [sympy.Float(6.626e-34), sympy.Float(1.5e34)]  # 1/4 is written exactly
    laws = load_laws()
    one = next(law for law in laws.values() if free_numbers(law.expression, "skeleton"))
    assert fitted_fvu_recovery(one, 0.0, "skeleton") == (True, len(free_numbers(one.expression, "skeleton")))
    # at a tenth of y's spread, a law's free constants miss srbf's threshold
    assert not fitted_fvu_recovery(one, 0.1, "skeleton")[0]


@pytest.mark.parametrize("level", [0.0, 0.001, 0.1])
def test_the_true_noise_is_read_back_from_the_support_targets(level):
    from benchmarks.fastsrb.true_noise import true_noise

    law = get_law("I.12.4")
    problem = make_problem(law, 1, level)
    expected = level * np.std(problem.y_support_clean)
    assert true_noise(law, 1, problem.y_support) == pytest.approx(expected, rel=1e-9, abs=1e-300)


def test_the_true_noise_level_replaces_the_estimate_for_its_fit_alone(monkeypatch):
    from benchmarks.fastsrb import true_noise as module
    from nesymres_sklearn import pipeline
    from nesymres_sklearn.search.problem import Problem

    law = get_law("I.12.4")
    problem = make_problem(law, 1, 0.01)
    estimate, seen = pipeline.noise_std, []

    def fit(X, y, *args):  # reads the level the fit would read, in the search's units (y doubled)
        seen.append(pipeline.noise_std(Problem(X, 2 * y)))
        raise RuntimeError("a failed fit")

    monkeypatch.setattr(module, "fit_ours", fit)
    with pytest.raises(RuntimeError):
        module.fit_with_true_noise(problem.X_support, problem.y_support, law, 1.0, 1)
    assert seen == [pytest.approx(2 * module.true_noise(law, 1, problem.y_support))]
    assert pipeline.noise_std is estimate  # the next fit estimates again, also after a failure


def test_noise_level_study_reads_fastsrb_laws_on_their_support_points():
    from benchmarks.datasets import load_dataset
    from benchmarks.fastsrb.noise_level import draws

    first = next(draws("fastsrb", n_points=100))  # the support points, whatever --points says
    law = next(iter(load_laws().values()))
    problem = sampling.make_problem(law, 0, 0.0)
    assert first[0] == law.name
    np.testing.assert_array_equal(first[1], problem.X_support)
    np.testing.assert_array_equal(first[2], problem.y_support_clean)
    assert len(list(draws("fastsrb", n_points=100))) == len(load_laws())
    # the other sets as the study reads them
    name, X, _ = next(draws("validation-wc", n_points=50))
    assert name == load_dataset("validation-wc")[0].name and X.shape[0] == 50
