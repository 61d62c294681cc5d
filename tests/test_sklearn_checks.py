"""scikit-learn's estimator checks: the network alone (``refine=None``) with a tiny
random model that has 12 variables, and the default estimator (the bundled model, 3
variables, seeding Operon: data with more features goes through the relevance ranking,
the linear candidate and Operon's search over all of them)."""

from functools import partial
from pathlib import Path

import pytest
from models import CHECKS_VARIABLES, tiny_model_folder
from sklearn.utils.estimator_checks import parametrize_with_checks

from nesymres_sklearn import NeSymReSRegressor

EXPECTED_FAILURES = {
    "check_regressors_train": (
        "needs R^2 > 0.5 on a 10-feature linear problem; the test model is untrained, so its "
        "skeletons are random (the trained bundled model is evaluated in benchmarks/)"
    ),
    "check_sample_weight_equivalence_on_dense_data": (
        "weights act on the constant fitting and the selection, while the network reads the points as a set: "
        "a row repeated k times changes what the network sees, a weight of k does not (weight 0 does equal "
        "removing the row, tested in test_estimator_robustness.py). Not strict: it passes by coincidence when both "
        "fits select the same equation (an untrained model's random skeletons often lose to the same baseline), "
        "which depends on the machine's floating-point results"
    ),
}


def estimator():
    return NeSymReSRegressor(model=str(tiny_model_folder(CHECKS_VARIABLES)), beam_size=4, n_restarts=1, refine=None)


def check_id(obj) -> str:
    """A test id that is the same in every process: the model's folder name, not its
    temporary path (pytest-xdist's workers must collect the same ids)."""
    if isinstance(obj, NeSymReSRegressor):
        model = obj.model if obj.model is None else Path(obj.model).name
        return f"NeSymReSRegressor(model={model})"
    if isinstance(obj, partial):
        keywords = ",".join(f"{key}={value}" for key, value in obj.keywords.items())
        return f"{obj.func.__name__}({keywords})" if keywords else obj.func.__name__
    return obj.__name__


#: Checks of the tiny model that only run in the full suite (``slow``): the sample-weight
#: check takes about 15 s (its fits on 30 features rank them and decompose y) and is an
#: expected failure, which the quick loop would run for no assertion (weight 0 equal to
#: removing the row is tested in test_estimator_robustness.py).
SLOW_CHECKS = {"check_sample_weight_equivalence_on_dense_data"}


def with_stable_ids(checks, slow=frozenset()):
    """``parametrize_with_checks``'s parametrization with :func:`check_id` as its ids, and
    the checks named in ``slow`` marked ``slow``."""
    names, values = checks.mark.args
    params = [value if hasattr(value, "marks") else pytest.param(*value) for value in values]
    params = [
        pytest.param(*param.values, marks=[*param.marks, pytest.mark.slow])
        if check_id(param.values[1]) in slow
        else param
        for param in params
    ]
    return pytest.mark.parametrize(names, params, ids=check_id)


@with_stable_ids(
    parametrize_with_checks([estimator()], expected_failed_checks=lambda est: EXPECTED_FAILURES), slow=SLOW_CHECKS
)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


#: The default estimator, a trained model: only the weights' documented difference remains.
DEFAULT_EXPECTED_FAILURES = {
    name: reason
    for name, reason in EXPECTED_FAILURES.items()
    if name == "check_sample_weight_equivalence_on_dense_data"
}


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:X has .* features but the model")
@with_stable_ids(
    parametrize_with_checks([NeSymReSRegressor()], expected_failed_checks=lambda est: DEFAULT_EXPECTED_FAILURES)
)
def test_the_default_estimator_passes_the_checks(estimator, check):
    check(estimator)
