import numpy as np
import pytest
import sympy

from benchmarks.methods import METHODS, get_method
from benchmarks.methods.base import Adapter, missing_packages_reason, rename_features
from benchmarks.methods.gplearn import program_to_sympy


@pytest.fixture
def product():
    rng = np.random.default_rng(0)
    X = rng.uniform(1, 5, size=(64, 2))
    return X, X[:, 0] * X[:, 1]


def _check_fitted(adapter, X):
    prediction = adapter.predict(X)
    assert prediction.shape == (X.shape[0],)
    expression = adapter.expression()
    if adapter.symbolic:
        symbols = {s.name for s in sympy.sympify(expression).free_symbols}
        assert symbols <= {"x_1", "x_2"}
    else:
        assert expression is None


def test_registry():
    assert set(METHODS) == {
        *("nesymres", "nesymres-anytime", "nesymres-operon", "nesymres-operon-decomposed", "nesymres-auto"),
        "nesymres-operon-units",
        *("gplearn", "gpr", "operon", "operon-timed", "dsr", "pysr"),
    }
    for name, cls in METHODS.items():
        assert cls.name == name and cls.parameter
    with pytest.raises(ValueError, match="Unknown method"):
        get_method("eureqa")


def test_nesymres_adapter(product):
    from benchmarks.methods.nesymres import NeSymReSAdapter

    X, y = product
    adapter = NeSymReSAdapter(1, time_budget=10, random_state=0, n_restarts=1).fit(X, y)
    assert adapter.model_.beam_size == 1 and adapter.model_.device == "cpu"
    assert adapter.model_.max_time is None  # fixed work: the swept knob is the beam size
    assert adapter.model_.refine is None  # the network alone
    _check_fitted(adapter, X)


def test_units_adapter_passes_the_equations_units_and_needs_them(product):
    from benchmarks.methods.nesymres import NeSymReSUnitsAdapter

    X, y = product
    adapter = NeSymReSUnitsAdapter(0.5, random_state=0, beam_size=2).fit(X, y, units=(["m", "s"], "m*s"))
    assert adapter.model_.X_units_ == ["m", "s"] and adapter.model_.y_units_ == "m*s"
    assert adapter.model_.refine == "operon" and adapter.model_.max_time == 0.5
    _check_fitted(adapter, X)
    with pytest.raises(ValueError, match="needs a dataset with units"):
        NeSymReSUnitsAdapter(0.5, random_state=0).fit(X, y)


def test_nesymres_auto_adapter_is_fixed_work_with_refine_auto(product):
    from benchmarks.methods.nesymres import NeSymReSAutoAdapter

    X, y = product
    adapter = NeSymReSAutoAdapter(2, time_budget=10, random_state=0).fit(X, y)
    params = adapter.model_.get_params()
    assert params["beam_size"] == 2 and params["refine"] == "auto" and params["max_time"] is None
    assert params["n_restarts"] == 4 and params["random_state"] == 0 and params["device"] == "cpu"
    _check_fitted(adapter, X)


def test_nesymres_anytime_adapter_sweeps_the_time_budget(product):
    from benchmarks.methods.nesymres import NeSymReSAnytimeAdapter

    X, y = product
    adapter = NeSymReSAnytimeAdapter(0.5, time_budget=10, random_state=0, n_restarts=1).fit(X, y)
    assert adapter.model_.max_time == 0.5 and adapter.model_.beam_size == 32
    assert adapter.model_.refine is None
    _check_fitted(adapter, X)


def test_gplearn_adapter_respects_generations_and_budget(product):
    from benchmarks.methods.gplearn import GplearnAdapter

    X, y = product
    adapter = GplearnAdapter(50, time_budget=30, random_state=0, generations=3).fit(X, y)
    assert adapter.model_.population_size == 50 and adapter.model_.tournament_size == 20
    assert 1 <= adapter.generations_ <= 3
    _check_fitted(adapter, X)
    # A zero budget stops after the first generation.
    assert GplearnAdapter(50, time_budget=0.0, generations=5).fit(X, y).generations_ == 1


def test_gaussian_process_adapter(product):
    from benchmarks.methods.gaussian_process import GaussianProcessAdapter

    X, y = product
    adapter = GaussianProcessAdapter(2, random_state=0).fit(X, y)
    assert adapter.model_.n_restarts_optimizer == 2
    assert np.allclose(adapter.predict(X), y, rtol=1e-3)
    _check_fitted(adapter, X)


def test_operon_adapter(product):
    from benchmarks.methods.operon import OperonAdapter

    X, y = product
    adapter = OperonAdapter(5000, time_budget=5, random_state=0).fit(X, y)
    _check_fitted(adapter, X)


def test_uninstallable_adapters_report_why():
    # PySR (Julia) does not install on this machine; where it does, check_installed is
    # None and the adapter runs. DSR is our PyTorch re-implementation (tests/test_dsr.py).
    reason = METHODS["pysr"].check_installed()
    if reason is not None:
        assert "cannot be imported" in reason or "julia" in reason
    assert METHODS["dsr"].check_installed() is None


def test_missing_packages_reason():
    assert missing_packages_reason(["numpy"]) is None
    reason = missing_packages_reason(["numpy", "no_such_module_xyz"], "some hint")
    assert "'no_such_module_xyz'" in reason and "some hint" in reason


def test_rename_features():
    x0, x1, X1 = sympy.symbols("x0 x1 X1")
    assert str(rename_features(x0 + 2 * x1, offset=0)) == "x_1 + 2*x_2"
    assert str(rename_features(X1 * sympy.sin(sympy.Symbol("x2")), offset=1)) == "x_1*sin(x_2)"


def test_program_to_sympy():
    expr = program_to_sympy("add(mul(X0, X1), div(sin(X1), 0.5))", 2)
    assert (
        sympy.simplify(
            expr
            - (
                sympy.Symbol("x_1", real=True) * sympy.Symbol("x_2", real=True)
                + 2 * sympy.sin(sympy.Symbol("x_2", real=True))
            )
        )
        == 0
    )


def test_base_adapter_defaults():
    class Dummy(Adapter):
        name, parameter = "dummy", "knob"

    assert Dummy.check_installed() is None
    assert Dummy.expected_cost(3, 128) == 384.0
    with pytest.raises(NotImplementedError, match="Dummy must implement _fit"):
        Dummy(3).fit(np.ones((2, 1)), np.ones(2))


def test_rows_name_the_setting():
    from benchmarks.datasets import Equation
    from benchmarks.tasks import Task

    row = Task(Equation("t", "e", "x_1", ((0.0, 1.0),)), "gpr", 8).base_row()
    assert row["method"] == "gpr" and row["setting"] == "n_restarts_optimizer=8"


def test_the_nesymres_adapters_preload_every_module_that_a_fit_imports():
    """The estimator imports the fit's pipeline inside ``fit`` (issue 53's start-up); the
    benchmark's workers import it before they fork, so a fit times the fit."""
    import ast
    from pathlib import Path

    from benchmarks.methods.nesymres import FIT_MODULES

    source = Path(__file__).resolve().parent.parent / "nesymres_sklearn" / "estimator.py"
    [estimator] = [node for node in ast.parse(source.read_text()).body if isinstance(node, ast.ClassDef)]
    modules = {
        f"nesymres_sklearn.{node.module}" if node.module else f"nesymres_sklearn.{alias.name}"  # from . import x
        for method in estimator.body
        if isinstance(method, ast.FunctionDef)
        for node in ast.walk(method)
        if isinstance(node, ast.ImportFrom) and node.level == 1
        for alias in node.names
    }
    assert modules == {"nesymres_sklearn.pipeline"}
    assert modules <= set(FIT_MODULES), sorted(modules - set(FIT_MODULES))


def test_a_warm_process_has_found_its_thread_pools_and_scanned_sklearns_plugins(monkeypatch):
    """The one-time costs of a first fit before ``max_time`` starts are paid before the
    workers fork: the thread-pool controller is built once, and scikit-learn's validation
    has run once (its dataframe plugins read)."""
    from sklearn.utils import validation

    from benchmarks.methods.nesymres import warm_process
    from nesymres_sklearn import shared_setting

    shared_setting._controller.cache_clear()
    validated = []
    monkeypatch.setattr(validation, "validate_data", lambda *args, **kwargs: validated.append(args[1].shape))
    warm_process()
    assert shared_setting._controller.cache_info().currsize == 1
    assert validated == [(2, 1)]
