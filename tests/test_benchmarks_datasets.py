import math

import numpy as np
import pytest
import sympy

from benchmarks.datasets import (
    DATA_DIR,
    DATASETS,
    Equation,
    extend_support,
    load_dataset,
)


@pytest.fixture(scope="module")
def aifeynman():
    return {e.name: e for e in load_dataset("aifeynman")}


@pytest.fixture(scope="module")
def nguyen():
    return {e.name: e for e in load_dataset("nguyen")}


@pytest.fixture(scope="module")
def aifeynman_many():
    return {e.metadata["feynman_id"]: e for e in load_dataset("aifeynman-many")}


def test_aifeynman_has_the_52_equations_of_the_paper(aifeynman):
    assert len(aifeynman) == 52
    assert list(aifeynman)[0] == "AIF-01" and list(aifeynman)[-1] == "AIF-52"
    assert all(1 <= e.n_variables <= 3 for e in aifeynman.values())
    assert sum(e.n_variables == 1 for e in aifeynman.values()) == 1


@pytest.mark.parametrize(
    "name, supports",
    [
        ("AIF-01", ((1, 3),)),
        ("AIF-04", ((1, 5), (1, 2), (3, 10))),
        ("AIF-12", ((1, 5), (1, 5), (0, 5))),
        ("AIF-14", ((0, 1), (1, 5))),
        ("AIF-16", ((1, 10), (1, 10))),
        ("AIF-18", ((1, 2), (2, 5), (1, 5))),
        ("AIF-24", ((2, 5), (1, 5), (1, 5))),
        ("AIF-33", ((0, 1), (0, 1))),
        ("AIF-38", ((4, 6), (1, 2), (2, 4))),
        ("AIF-47", ((1, 2), (1, 2), (1, 4))),
    ],
)
def test_aifeynman_supports(aifeynman, name, supports):
    assert aifeynman[name].supports == tuple((float(a), float(b)) for a, b in supports)


def test_aifeynman_expressions_evaluate(aifeynman):
    gaussian = aifeynman["AIF-01"].evaluate(np.array([[1.0]]))
    assert gaussian[0] == pytest.approx(math.exp(-0.5) / math.sqrt(2 * math.pi))
    assert aifeynman["AIF-46"].evaluate(np.array([[1.0, 2.0, 4.0]]))[0] == pytest.approx(2 * math.pi)
    assert aifeynman["AIF-14"].evaluate(np.array([[0.5, math.pi / 2]]))[0] == pytest.approx(math.asin(0.5))
    # Every equation has a finite value everywhere in its support.
    for equation in aifeynman.values():
        _, y = equation.sample_test("iid", 2000)
        assert np.isfinite(y).all(), equation.name


def test_nguyen_has_12_equations_with_standard_supports(nguyen):
    assert list(nguyen) == [f"Nguyen-{i}" for i in range(1, 13)]
    for i in range(1, 7):
        assert nguyen[f"Nguyen-{i}"].supports == ((-1.0, 1.0),)
    assert nguyen["Nguyen-7"].supports == ((0.0, 2.0),)
    assert nguyen["Nguyen-8"].supports == ((0.0, 4.0),)
    for i in range(9, 13):
        assert nguyen[f"Nguyen-{i}"].supports == ((0.0, 1.0), (0.0, 1.0))
    assert nguyen["Nguyen-1"].metadata["n_points_original"] == 20
    assert nguyen["Nguyen-11"].evaluate(np.array([[0.25, 0.5]]))[0] == pytest.approx(0.5)
    x = np.array([[0.5]])
    assert nguyen["Nguyen-4"].evaluate(x)[0] == pytest.approx(sum(0.5**k for k in range(1, 7)))


def test_extend_support_by_width_on_both_sides():
    assert extend_support(1.0, 5.0) == (-3.0, 9.0)
    assert extend_support(0.0, 1.0) == (-1.0, 2.0)
    equation = Equation("t", "t", "x_1 + x_2", ((1.0, 3.0), (-1.0, 1.0)))
    assert equation.ood_supports == ((-1.0, 5.0), (-3.0, 3.0))


def test_sampling_is_seeded_and_inside_the_supports(aifeynman):
    equation = aifeynman["AIF-04"]
    X, y = equation.sample_train(128, seed=3)
    assert X.shape == (128, 3) and y.shape == (128,)
    assert np.array_equal(X, equation.sample_train(128, seed=3)[0])
    assert not np.array_equal(X, equation.sample_train(128, seed=4)[0])
    assert np.isfinite(y).all()
    for kind, supports in (("iid", equation.supports), ("ood", equation.ood_supports)):
        X_test, y_test = equation.sample_test(kind, seed=3)
        assert X_test.shape == (10_000, 3)
        low, high = np.array(supports).T
        assert (X_test >= low).all() and (X_test <= high).all()
    # ood covers the extension: x_2 of AIF-04 reaches beyond (1, 2), where the square
    # root is undefined, and those NaNs are kept.
    X_ood, y_ood = equation.sample_test("ood")
    assert X_ood[:, 1].min() < 0.1 and X_ood[:, 1].max() > 2.9
    assert np.isnan(y_ood).any()
    # Test points do not depend on the training sample and differ between iid and ood.
    assert np.array_equal(equation.sample_test("iid", seed=3)[0], equation.sample_test("iid", seed=3)[0])
    assert not np.array_equal(equation.sample_test("iid")[0], equation.sample_test("ood")[0])


def test_training_points_redraw_undefined_values():
    equation = Equation("t", "sqrt", "sqrt(x_1)", ((-1.0, 1.0),))
    X, y = equation.sample_train(100)
    assert np.isfinite(y).all() and (X >= 0).all()


def test_training_points_fail_when_nowhere_defined():
    equation = Equation("t", "never", "sqrt(-x_1)", ((1.0, 2.0),))
    with pytest.raises(ValueError, match="finite"):
        equation.sample_train(10, max_rounds=3)


def test_equations_pickle(aifeynman):
    import pickle

    equation = aifeynman["AIF-17"]
    equation.evaluate(np.ones((1, 3)))
    clone = pickle.loads(pickle.dumps(equation))
    assert clone == equation
    assert clone.evaluate(np.ones((1, 3))) == pytest.approx(equation.evaluate(np.ones((1, 3))))


def test_unknown_dataset_and_missing_supports(tmp_path):
    with pytest.raises(ValueError, match="Unknown dataset"):
        load_dataset("nope")
    path = tmp_path / "bad.csv"
    path.write_text("name,expression,x_1_lo,x_1_hi\nbad,x_1 + x_2,0,1\n")
    with pytest.raises(ValueError, match="without a support"):
        load_dataset("bad", path)


@pytest.mark.slow
@pytest.mark.parametrize(
    "name, size",
    [
        ("soose-wc", 200),
        ("soose-nc", 200),
        ("soose-fc", 200),
        ("validation-wc", 100),
        ("validation-fc", 100),
        ("validation-many", 100),
        ("validation-wide", 64),
    ],
)
def test_soose_files(name, size):
    equations = load_dataset(name)
    assert len(equations) == size
    assert len({e.metadata["skeleton"] for e in equations}) == size
    for equation in equations[:20]:
        X, y = equation.sample_train(128)
        assert np.isfinite(y).all()


@pytest.mark.slow
@pytest.mark.parametrize("prefix", ["soose", "validation"])
def test_soose_versions_share_skeletons_and_supports(prefix):
    wc, nc, fc = (load_dataset(f"{prefix}-{v}") for v in ("wc", "nc", "fc"))
    for a, b, c in zip(wc, nc, fc):
        assert a.supports == b.supports == c.supports
        assert a.metadata["skeleton"] == b.metadata["skeleton"] == c.metadata["skeleton"]


def test_registry_lists_every_file():
    assert set(DATASETS) == {"aifeynman", "nguyen", "aifeynman-many", "validation-many", "validation-wide"} | {
        f"{prefix}-{v}" for prefix in ("soose", "validation") for v in ("wc", "nc", "fc")
    }
    assert sorted(DATASETS.values()) == sorted(p.name for p in DATA_DIR.glob("*.csv"))


def test_validation_sets_share_no_skeleton_with_the_reported_sets():
    reported = {e.metadata["skeleton"] for e in load_dataset("soose-wc")}
    validation = {e.metadata["skeleton"] for e in load_dataset("validation-wc")}
    assert not reported & validation


def test_validation_many_has_4_to_5_variables_each_used():
    equations = load_dataset("validation-many")
    counts = {n: sum(e.n_variables == n for e in equations) for n in range(1, 7)}
    assert counts == {1: 0, 2: 0, 3: 0, 4: 75, 5: 25, 6: 0}
    assert all(f"x_{e.n_variables}" in e.expression for e in equations)  # the last column is used


def test_validation_wide_has_4_to_7_variables_each_used():
    equations = load_dataset("validation-wide")
    counts = {n: sum(e.n_variables == n for e in equations) for n in range(1, 9)}
    assert counts == {1: 0, 2: 0, 3: 0, 4: 20, 5: 20, 6: 20, 7: 4, 8: 0}
    assert all(f"x_{e.n_variables}" in e.expression for e in equations)  # the last column is used


def test_aifeynman_many_has_the_48_equations_with_4_to_9_variables(aifeynman_many):
    equations = list(aifeynman_many.values())
    assert len(equations) == 48
    assert [e.name for e in equations] == [f"AIFM-{i:02d}" for i in range(1, 49)]
    counts = {n: sum(e.n_variables == n for e in equations) for n in range(4, 10)}
    assert counts == {4: 27, 5: 13, 6: 6, 7: 0, 8: 1, 9: 1}
    # With the 52 of `aifeynman` (at most 3 variables): the whole database of 100.
    assert len(equations) + len(load_dataset("aifeynman")) == 100
    for equation in equations:
        assert len(equation.metadata["variables"].split()) == equation.n_variables
        used = {s.name for s in equation.sympy_expr.free_symbols}
        assert used == {f"x_{k}" for k in range(1, equation.n_variables + 1)}, equation.name


def test_aifeynman_many_expressions_are_the_published_formulas(aifeynman_many):
    # `expression` is the table's `formula` with v_k renamed x_k (and ln written log).
    for equation in aifeynman_many.values():
        names = equation.metadata["variables"].split()
        symbols = {name: sympy.Symbol(f"x_{k}", real=True) for k, name in enumerate(names, 1)}
        published = sympy.sympify(equation.metadata["formula"], locals={**symbols, "ln": sympy.log})
        assert sympy.simplify(published - equation.sympy_expr) == 0, equation.name


@pytest.mark.parametrize(
    "feynman_id, variables, supports",
    [
        # Spot checks against FeynmanEquations.csv (Udrescu & Tegmark 2020).
        ("I.9.18", "m1 m2 G x1 x2 y1 y2 z1 z2", ((1, 2),) * 3 + ((3, 4), (1, 2)) * 3),
        ("I.15.3x", "x u c t", ((5, 10), (1, 2), (3, 20), (1, 2))),
        ("I.32.17", "epsilon c Ef r omega omega_0", ((1, 2),) * 5 + ((3, 5),)),
        ("II.11.3", "q Ef m omega_0 omega", ((1, 3), (1, 3), (1, 3), (3, 5), (1, 2))),
        ("II.11.27", "n alpha epsilon Ef", ((0, 1), (0, 1), (1, 2), (1, 2))),
        ("II.36.38", "mom H kb T alpha epsilon c M", ((1, 3),) * 8),
        ("III.14.14", "I_0 q Volt kb T", ((1, 5), (1, 2), (1, 2), (1, 2), (1, 2))),
    ],
)
def test_aifeynman_many_supports(aifeynman_many, feynman_id, variables, supports):
    equation = aifeynman_many[feynman_id]
    assert equation.metadata["variables"] == variables
    assert equation.supports == tuple((float(a), float(b)) for a, b in supports)


def test_aifeynman_many_expressions_evaluate(aifeynman_many):
    def value(feynman_id, *x):
        return aifeynman_many[feynman_id].evaluate(np.array([x], dtype=float))[0]

    # I.8.14: sqrt((x2-x1)**2+(y2-y1)**2)
    assert value("I.8.14", 1, 4, 1, 5) == pytest.approx(5.0)
    # I.9.18: G*m1*m2/((x2-x1)**2+(y2-y1)**2+(z2-z1)**2)
    assert value("I.9.18", 1, 2, 1.5, 3, 1, 4, 2, 3, 2) == pytest.approx(3 / 9)
    # I.44.4: n*kb*T*ln(V2/V1)
    assert value("I.44.4", 1, 2, 3, 1, math.e) == pytest.approx(6.0)
    # II.35.21: n_rho*mom*tanh(mom*B/(kb*T))
    assert value("II.35.21", 2, 1, 1, 1, 2) == pytest.approx(2 * math.tanh(0.5))
    # III.19.51: -m*q**4/(2*(4*pi*epsilon)**2*(h/(2*pi))**2)*(1/n**2)
    assert value("III.19.51", 1, 1, 2 * math.pi, 1, 1 / (4 * math.pi)) == pytest.approx(-0.5)


def test_aifeynman_many_is_finite_on_its_supports(aifeynman_many):
    for equation in aifeynman_many.values():
        _, y = equation.sample_test("iid", 2000)
        assert np.isfinite(y).mean() > 0.99, equation.name
        X_train, y = equation.sample_train(128)
        assert X_train.shape == (128, equation.n_variables) and np.isfinite(y).all()
        low, high = np.array(equation.supports).T
        assert (X_train >= low).all() and (X_train <= high).all()


def test_aifeynman_many_ood_extends_every_support(aifeynman_many):
    equation = aifeynman_many["I.44.4"]  # n*kb*T*ln(V2/V1), every support (1, 5)
    assert equation.ood_supports == ((-3.0, 9.0),) * 5
    X, y = equation.sample_test("ood")
    assert X.shape == (10_000, 5) and (X >= -3).all() and (X <= 9).all()
    # ln of a negative ratio is undefined: those NaNs are kept, as for `aifeynman`.
    assert np.isnan(y).any() and np.isfinite(y).mean() > 0.5


def test_expressions_and_supports_beyond_three_variables(tmp_path):
    path = tmp_path / "five.csv"
    path.write_text("name,expression,x_1_lo,x_1_hi,x_2_lo,x_2_hi,x_3_lo,x_3_hi,x_4_lo,x_4_hi,x_5_lo,x_5_hi\n")
    with path.open("a") as f:
        f.write("five,x_1 + x_2*x_5 - x_4,0,1,0,1,0,1,0,1,2,3\n")
        f.write("bad,x_1 + x_5,0,1,0,1,0,1,0,1,,\n")
    with pytest.raises(ValueError, match="without a support"):
        load_dataset("five", path)
    path.write_text("\n".join(path.read_text().splitlines()[:2]) + "\n")
    (equation,) = load_dataset("five", path)
    assert equation.n_variables == 5 and equation.supports[4] == (2.0, 3.0)
    assert equation.evaluate(np.array([[1.0, 2.0, 0.0, 4.0, 3.0]]))[0] == pytest.approx(3.0)


def test_target_noise_is_seeded_and_scaled_to_the_rms_of_the_clean_targets(aifeynman):
    equation = aifeynman["AIF-05"]
    X, clean = equation.sample_train(20_000, seed=1)
    X_noisy, noisy = equation.sample_train(20_000, seed=1, noise=0.1)
    assert np.array_equal(X, X_noisy)
    rms = np.sqrt(np.mean(clean**2))
    assert np.std(noisy - clean) == pytest.approx(0.1 * rms, rel=0.03)
    assert np.mean(noisy - clean) == pytest.approx(0.0, abs=0.003 * rms)
    # Same equation, seed and level: the same noise; another seed, level or equation: other draws.
    assert np.array_equal(equation.sample_train(20_000, seed=1, noise=0.1)[1], noisy)
    unit = (noisy - clean) / (0.1 * rms)
    for other_seed, level in ((2, 0.1), (1, 0.01)):
        y = equation.sample_train(20_000, seed=other_seed)[1]
        other = (equation.sample_train(20_000, seed=other_seed, noise=level)[1] - y) / (level * np.sqrt(np.mean(y**2)))
        assert abs(np.corrcoef(unit, other)[0, 1]) < 0.05
    assert np.array_equal(equation.sample_train(20_000, seed=1, noise=0.0)[1], clean)
    assert not np.array_equal(aifeynman["AIF-06"].target_noise(clean, 1, 0.1), noisy - clean)


@pytest.mark.slow
def test_every_aifeynman_equation_has_units_in_which_it_is_dimensionally_consistent():
    from nesymres_sklearn.expression.prefix import variable_symbols
    from nesymres_sklearn.units.consistency import sympy_dimension
    from nesymres_sklearn.units.stage import Units

    equations = load_dataset("aifeynman") + load_dataset("aifeynman-many")
    assert len(equations) == 100
    for equation in equations:
        X_units, y_units = equation.units
        units = Units.parse(X_units, y_units, equation.n_variables)
        found = sympy_dimension(equation.sympy_expr, variable_symbols(equation.n_variables), units.features)
        assert np.allclose(found, units.target), equation.name


def test_units_of_some_aifeynman_equations_as_published():
    aifeynman = {e.name: e for e in load_dataset("aifeynman")}
    assert aifeynman["AIF-08"].metadata["feynman_id"] == "I.14.3"  # U = m*g*z
    assert aifeynman["AIF-08"].units == (["kg", "m/s^2", "m"], "m^2*kg/s^2")
    assert aifeynman["AIF-01"].units == (["1"], "1")
    assert load_dataset("nguyen")[0].units is None


def test_noisy_draws_are_the_noisy_training_points_and_the_finite_test_points():
    from benchmarks.datasets import load_dataset, noisy_draws

    draws = list(noisy_draws(["validation-nc"], [0.0, 0.1], 60, 80, max_equations=2))
    assert [(d.equation.name, d.level) for d in draws] == [
        (e.name, level) for e in load_dataset("validation-nc")[:2] for level in (0.0, 0.1)
    ]
    for draw in draws:
        X, y = draw.equation.sample_train(60, 0, draw.level)
        X_test, y_test = draw.equation.sample_test("iid", 80)
        finite = np.isfinite(y_test)
        assert np.array_equal(draw.X, X) and np.array_equal(draw.y, y)
        assert np.array_equal(draw.clean, draw.equation.sample_train(60, 0)[1])
        assert np.array_equal(draw.X_test, X_test[finite]) and np.array_equal(draw.y_test, y_test[finite])
    assert not np.array_equal(draws[1].y, draws[1].clean)  # the noise is on the targets
