"""NeSymReS itself, through :class:`nesymres_sklearn.NeSymReSRegressor` (beam-size sweep)."""

from __future__ import annotations

import numpy as np

from .base import Adapter, rename_features

# What a fit imports (NeSymReSRegressor._fit and the methods it calls, in the span of
# timings_["loading"]): imported before the workers fork, so that their fits time the fit.
FIT_MODULES = (
    "nesymres_sklearn.estimator",
    "nesymres_sklearn.neural_search",
    "nesymres_sklearn.writing.export",
    "nesymres_sklearn.writing.writer",
    "nesymres_sklearn.expression.skeleton",
    "nesymres_sklearn.guesses",
    "nesymres_sklearn.operon.islands",
    "nesymres_sklearn.operon.plan",
    "nesymres_sklearn.parameters",
    "nesymres_sklearn.pipeline",
    "nesymres_sklearn.restrictions",
    "nesymres_sklearn.search.fitted",
    "nesymres_sklearn.search.identities",
    "nesymres_sklearn.search.identities_under_noise",
    "nesymres_sklearn.search.looks",
    "nesymres_sklearn.search.problem",
    "nesymres_sklearn.search.scaling",
    "nesymres_sklearn.search.scheduler",
    "nesymres_sklearn.search.selection.final",
    "nesymres_sklearn.search.selection.table",
    "nesymres_sklearn.search.settings",
    "nesymres_sklearn.search.variables.routing",
    "nesymres_sklearn.uncertainty",
    "nesymres_sklearn.units.parsing",
    "nesymres_sklearn.units.stage",
)


def warm_process() -> None:
    """The process's one-time costs that a user's first fit pays before ``max_time``
    starts, as it pays the loading: the BLAS thread pools found (threadpoolctl, about 40
    ms; :func:`nesymres_sklearn.shared_setting.one_blas_thread`) and scikit-learn's
    dataframe plugins scanned on the first validation of ``X`` (about 30 ms). A forked
    fit then times the fit alone."""
    from sklearn.base import BaseEstimator
    from sklearn.utils.validation import validate_data

    from nesymres_sklearn.shared_setting import one_blas_thread

    with one_blas_thread():
        pass
    validate_data(BaseEstimator(), np.ones((2, 1)))


class NeSymReSAdapter(Adapter):
    """The network alone (``refine=None``). Options: ``model`` (default ``"bundled"``),
    ``n_restarts`` (4), ``device`` (``"cpu"``: the paper times every method on one
    CPU), ``max_time`` (default ``None``: the fixed work of one beam search; a number
    makes the fit anytime), ``refine``."""

    name = "nesymres"
    parameter = "beam_size"
    preload_modules = FIT_MODULES
    requires = ("nesymres_sklearn", "torch")
    install_hint = "pip install nesymres-sklearn"

    @classmethod
    def preload(cls) -> None:
        """Import the modules and load the bundled weights once per worker, as one
        process of a user loads them once (``timings_["loading"]``, outside
        ``max_time``): a forked fit then times the fit, not the loading, as Operon's
        fits, whose library is imported, do. The worker keeps one torch thread, so no
        thread pool starts before the fork."""
        super().preload()
        import torch

        from nesymres_sklearn import neural_search

        torch.set_num_threads(1)
        neural_search.load_network("bundled", None, "cpu")
        warm_process()

    def _fit(self, X, y):
        from nesymres_sklearn import NeSymReSRegressor

        options = {"model": "bundled", "n_restarts": 4, "device": "cpu", "refine": None, **self.options}
        self.model_ = NeSymReSRegressor(
            beam_size=int(self.value), random_state=self.random_state, n_jobs=1, **options
        ).fit(X, y)

    def predict(self, X):
        return np.asarray(self.model_.predict(X), dtype=np.float64)

    def expression(self):
        return str(rename_features(self.model_.expression_, offset=0))


class NeSymReSAnytimeAdapter(NeSymReSAdapter):
    """The network alone with a time budget: the swept knob is ``max_time`` (seconds
    for the whole fit, which cuts the plan of work short), at beam size 32 (option
    ``beam_size``). For accuracy-vs-time curves against Operon's and gplearn's budgets."""

    name = "nesymres-anytime"
    parameter = "max_time"

    def _fit(self, X, y):
        from nesymres_sklearn import NeSymReSRegressor

        options = {
            "model": "bundled",
            "n_restarts": 4,
            "device": "cpu",
            "beam_size": 32,
            "refine": None,
            **self.options,
        }
        self.model_ = NeSymReSRegressor(
            max_time=float(self.value), random_state=self.random_state, n_jobs=1, **options
        ).fit(X, y)


class NeSymReSOperonAdapter(NeSymReSAdapter):
    """The hybrid (``refine="operon"``): the network's beam-32 candidates seed Operon,
    which searches for the rest of ``max_time``, the swept knob. Compare with
    ``operon-timed`` at the same budgets: the same Operon settings without seeds."""

    name = "nesymres-operon"
    parameter = "max_time"
    preload_modules = (*FIT_MODULES, "nesymres_sklearn.operon.refine")
    requires = ("nesymres_sklearn", "torch", "pyoperon")
    install_hint = 'pip install "nesymres-sklearn[operon]"'

    def _fit(self, X, y):
        from nesymres_sklearn import NeSymReSRegressor

        options = {"model": "bundled", "n_restarts": 4, "device": "cpu", "beam_size": 32, **self.options}
        self.model_ = NeSymReSRegressor(
            refine="operon", max_time=float(self.value), random_state=self.random_state, n_jobs=1, **options
        ).fit(X, y)


class NeSymReSUnitsAdapter(NeSymReSOperonAdapter):
    """The hybrid given the equation's physical units (``X_units``, ``y_units``): the
    network reads dimensionless groups and inconsistent candidates are set aside.
    Compare with ``nesymres-operon`` at the same ``max_time``. An equation without
    units is an error (the method needs them)."""

    name = "nesymres-operon-units"

    @classmethod
    def preload(cls) -> None:
        """Also pint's unit definitions, loaded once per worker as the network is."""
        super().preload()
        from nesymres_sklearn.units.parsing import unit_registry

        unit_registry()

    def _fit(self, X, y):
        from nesymres_sklearn import NeSymReSRegressor

        if self.units is None:
            raise ValueError("nesymres-operon-units needs a dataset with units (columns X_units, y_units)")
        X_units, y_units = self.units
        options = {"model": "bundled", "n_restarts": 4, "device": "cpu", "beam_size": 32, **self.options}
        self.model_ = NeSymReSRegressor(
            refine="operon", max_time=float(self.value), random_state=self.random_state, n_jobs=1, **options
        ).fit(X, y, X_units=X_units, y_units=y_units)


class NeSymReSDecomposedAdapter(NeSymReSOperonAdapter):
    """The hybrid with the decomposition into separable parts switched on
    (``SearchSettings(decompose=True)``); compare with ``nesymres-operon`` at the same
    ``max_time``."""

    name = "nesymres-operon-decomposed"

    def _fit(self, X, y):
        from nesymres_sklearn.search.settings import SearchSettings

        self.options = {"search_settings": SearchSettings(decompose=True), **self.options}
        super()._fit(X, y)


class NeSymReSAutoAdapter(NeSymReSAdapter):
    """The estimator's settings but ``refine="auto"`` (the network seeding 20
    generations of Operon when pyoperon is installed, fixed work), the swept knob
    ``beam_size``."""

    name = "nesymres-auto"
    preload_modules = (*FIT_MODULES, "nesymres_sklearn.operon.refine")

    def _fit(self, X, y):
        from nesymres_sklearn import NeSymReSRegressor

        options = {"model": "bundled", "device": "cpu", "refine": "auto", **self.options}
        self.model_ = NeSymReSRegressor(beam_size=int(self.value), random_state=self.random_state, **options).fit(X, y)
