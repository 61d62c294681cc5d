import numpy as np
import pytest
import sympy

from benchmarks.datasets import load_dataset
from benchmarks.datasets.build_soose import constant_values, instantiate, soose_rows, write_datasets
from nesymres_sklearn.expression.placeholders import attach_constants


def _fake_bank(skeletons):
    return [attach_constants(tokens) for tokens in skeletons]


SKELETONS = [
    ["mul", "x_1", "sin", "x_2"],
    ["add", "x_1", "exp", "x_1"],
    ["sqrt", "x_1"],  # needs a support with x_1 >= 0 on at least half the points
    ["ln", "mul", "x_1", "x_1"],
]


def test_constant_versions():
    tokens, kinds = attach_constants(["mul", "x_1", "sin", "x_2"])
    assert len(kinds) == 5
    rng = np.random.default_rng(0)
    nc = constant_values(kinds, "nc", rng)
    assert list(nc) == [1.0, 0.0, 1.0, 1.0, 0.0]  # neutral: the bare skeleton
    fc = constant_values(kinds, "fc", rng)
    assert ((fc >= 1) & (fc <= 5)).all() and np.array_equal(fc, fc.round(3))
    for seed in range(20):
        wc = constant_values(kinds, "wc", np.random.default_rng(seed))
        assert (wc != nc).sum() <= 3
    # A pre-existing constant is neutral (1) without constants, sampled with them.
    _, existing_kinds = attach_constants(["add", "c", "x_1"])
    assert existing_kinds == ["existing", "mul", "add"]
    assert constant_values(existing_kinds, "nc", rng)[0] == 1.0
    assert 1 <= constant_values(existing_kinds, "fc", rng)[0] <= 5
    x1, x2 = sympy.symbols("x_1 x_2", real=True)
    assert instantiate(tokens, nc) == x1 * sympy.sin(x2)
    assert len(instantiate(tokens, fc).atoms(sympy.Float)) == 5


def test_soose_rows_and_files(tmp_path):
    rows = soose_rows(_fake_bank(SKELETONS), n_equations=4, seed=0)
    assert [len(v) for v in rows.values()] == [4, 4, 4]
    paths = write_datasets(rows, "a test bank", tmp_path)
    loaded = {p.stem: load_dataset(p.stem, p) for p in paths}
    wc, nc, fc = loaded["soose_wc"], loaded["soose_nc"], loaded["soose_fc"]
    assert [e.name for e in nc] == [f"SOOSE-NC-{i:03d}" for i in range(1, 5)]
    assert nc[0].sympy_expr == sympy.Symbol("x_1", real=True) * sympy.sin(sympy.Symbol("x_2", real=True))
    for a, b, c in zip(wc, nc, fc):
        assert a.supports == b.supports == c.supports
        assert all(lo >= -10 and lo + 1 <= hi <= 10 for lo, hi in a.supports)
        for equation in (a, b, c):
            assert np.isfinite(equation.sample_train(64)[1]).all()
    assert "# SOOSE-FC: 4 strictly out-of-sample equations" in (tmp_path / "soose_fc.csv").read_text()


def test_soose_rows_needs_enough_skeletons():
    with pytest.raises(ValueError, match="usable"):
        soose_rows(_fake_bank(SKELETONS[:1]), n_equations=2, seed=0)


def test_soose_rows_with_more_variables_keep_the_wide_skeletons_only(tmp_path):
    wide = [["add", "mul", "x_1", "x_4", "sin", "x_2"], ["mul", "x_5", "add", "x_1", "x_3"]]
    rows = soose_rows(_fake_bank(SKELETONS + wide), n_equations=2, seed=0, min_variables=4)
    [path] = write_datasets(rows, "a test bank", tmp_path, "wide", single="wc")
    assert path.name == "wide.csv"
    equations = load_dataset("wide", path)
    assert [e.n_variables for e in equations] == [4, 5]
    assert all(np.isfinite(e.sample_train(32)[1]).all() for e in equations)
    assert "over x_1..x_5" in path.read_text()


def test_soose_rows_per_variables_caps_each_number_of_columns():
    four = [["add", "mul", "x_1", "x_4", "sin", "x_2"], ["mul", "x_4", "add", "x_1", "x_3"], ["add", "x_4", "x_2"]]
    five = [["mul", "x_5", "add", "x_1", "x_3"]]
    rows = soose_rows(_fake_bank(SKELETONS + four + five), n_equations=10, seed=0, min_variables=4, per_variables=2)
    # The first two 4-column skeletons, the only 5-column one, and no error for being short of 10.
    assert [row["bank_index"] for row in rows["wc"]] == [4, 5, 7]
    assert [row["name"] for row in rows["wc"]] == ["SOOSE-WC-001", "SOOSE-WC-002", "SOOSE-WC-003"]
