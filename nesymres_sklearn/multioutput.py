"""Several targets: ``y`` of shape ``(n_samples, k)`` gives one equation per column.

Each column is fitted by its own clone of the estimator (whose ``n_jobs`` is then
``None``), the columns in parallel with the estimator's ``n_jobs`` (joblib). The
estimator keeps the clones in ``estimators_`` and shows their fitted attributes as
lists over the targets (:data:`.attributes.PER_TARGET`); ``predict`` stacks their predictions into
``(n_samples, k)``. Units: ``X_units`` hold for every target, ``y_units`` is one unit
for all or one per column. A ``y`` of shape ``(n_samples, 1)`` is one target, with
scikit-learn's ``DataConversionWarning``.
"""

from __future__ import annotations

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import clone

from .attributes import PER_TARGET


def n_targets(y) -> int:
    """Columns of ``y``: 1 for a vector, a single column, or a ``y`` that the
    validation will reject (ragged lists)."""
    try:
        shape = np.asarray(y).shape
    except ValueError:
        return 1
    return shape[1] if len(shape) == 2 else 1


def fit_targets(estimator, X, y, sample_weight, X_units=None, y_units=None, constants=None):
    """``estimator`` fitted to each column of ``y``: ``estimators_``, the lists of
    :data:`PER_TARGET`, and the features seen. Each column is a fresh clone, so
    ``warm_start`` does not carry a search over, and no single target's search stays."""
    estimator.__dict__.pop("_warm", None)
    columns = np.asarray(y)
    k = columns.shape[1]
    per_target = [y_units] * k if y_units is None or isinstance(y_units, str) else list(y_units)
    if len(per_target) != k:
        raise ValueError(
            f"y has {k} columns but y_units holds {len(per_target)} units: pass one unit for every target, "
            "or one per column of y."
        )
    single = clone(estimator).set_params(n_jobs=None)
    fitted = Parallel(n_jobs=estimator.n_jobs)(
        delayed(clone(single).fit)(X, columns[:, j], sample_weight, X_units, per_target[j], constants) for j in range(k)
    )
    estimator.estimators_ = fitted
    show_targets(estimator)
    estimator.n_features_in_ = fitted[0].n_features_in_
    if hasattr(fitted[0], "feature_names_in_"):
        estimator.feature_names_in_ = fitted[0].feature_names_in_
    return estimator


def pickled_state(state: dict) -> dict:
    """An estimator's ``state`` as pickled with several targets: each target pickles its own table."""
    return {name: value for name, value in state.items() if name not in PER_TARGET}


def show_targets(estimator) -> None:
    """The lists of :data:`PER_TARGET` from ``estimator.estimators_``."""
    for name in PER_TARGET:
        setattr(estimator, name, [getattr(column, name) for column in estimator.estimators_])


def predict_targets(estimators: list, X, index, return_std: bool):
    """Each target's prediction (and standard deviation) as the columns of ``(n_samples, k)``."""
    if index is not None:
        raise ValueError(
            "index picks a row of one target's equations_; with several targets use estimators_[j].predict(X, index=i)."
        )
    results = [column.predict(X, return_std=return_std) for column in estimators]
    if not return_std:
        return np.column_stack(results)
    return np.column_stack([mean for mean, _ in results]), np.column_stack([std for _, std in results])
