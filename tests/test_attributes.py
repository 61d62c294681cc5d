"""The names a fit writes (``attributes.py``): the fitted attributes and the keys of
``timings_``, as the estimator sets and documents them."""

import re

import pytest

from nesymres_sklearn import NeSymReSRegressor
from nesymres_sklearn.attributes import PER_TARGET, timed_stages
from nesymres_sklearn.search.looks import LOOK_NAMES

# Set by scikit-learn's validation, not by a stage of the fit.
SKLEARN_ATTRIBUTES = {"n_features_in_", "feature_names_in_"}


def documented_attributes() -> dict[str, str]:
    """Each attribute of the estimator's *Attributes* section, with its description."""
    section = NeSymReSRegressor.__doc__.split("Attributes\n    ----------\n")[1].split("\n    Examples")[0]
    found: dict[str, str] = {}
    names: list[str] = []
    for line in section.splitlines():
        if re.match(r"    \w", line):
            names = line.split(" : ")[0].strip().split(", ")
            found.update(dict.fromkeys(names, ""))
        else:
            for name in names:
                found[name] += line.strip() + " "
    return found


def test_every_fitted_attribute_is_documented_and_every_documented_one_is_set():
    assert set(documented_attributes()) == set(PER_TARGET) | SKLEARN_ATTRIBUTES


def test_the_documentation_of_timings_names_every_stage():
    described = documented_attributes()["timings_"]
    assert {key for key in timed_stages(LOOK_NAMES) if f"``{key}``" not in described} == set()


@pytest.fixture
def fitted(tiny_model, xy):
    return NeSymReSRegressor(model=str(tiny_model), beam_size=4, random_state=0, refine=None).fit(*xy)


def test_a_fit_sets_every_attribute_and_times_every_stage(fitted):
    public = {name for name in vars(fitted) if name.endswith("_") and not name.startswith("_")}
    assert public == set(PER_TARGET) | {"n_features_in_"}
    assert tuple(fitted.timings_) == timed_stages(LOOK_NAMES)
