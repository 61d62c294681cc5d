"""The scikit-learn estimator :class:`NeSymReSRegressor`: its parameters, their
validation and its fitted attributes; the fit itself is :mod:`.pipeline`'s."""

from __future__ import annotations

import time
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from .callables import ExportMixin
from .inputs import check_columns, r2_score_scaled, validated, warn_outside_domain
from .multioutput import fit_targets, n_targets, pickled_state, predict_targets, show_targets
from .parameters import check_parameters
from .writing.display import ReadableMixin

# No torch, SymPy, pandas, pint nor pyoperon on import: the first fit loads them (tests/test_architecture.py).


class NeSymReSRegressor(ReadableMixin, ExportMixin, RegressorMixin, BaseEstimator):
    """Neural symbolic regression: a pretrained Transformer proposes equation
    skeletons, Levenberg-Marquardt fits their constants, the best equation is kept.

    Parameters
    ----------
    model : str or path-like, default="bundled"
        ``"bundled"`` (offline), a folder with ``config.json`` and ``model.safetensors``, a
        Hub id (``"user/nesymres-small"``), or an authors' ``.ckpt`` (``docs/original-checkpoints.md``).
    revision : str, default=None
        Branch, tag or commit of a Hub repository (Hub models only).
    beam_size : int, default=32
        Beams kept by beam search (the paper's 32), or samples drawn (at most
        ``search_settings.max_beam``, with a warning); ``first_beam`` is fitted first.
    decoding : {"beam", "sample"}, default="beam"
        How the network proposes skeletons.
    n_restarts : int, default=4
        Starts of the constant fitting per skeleton; the first sets every constant to 1.
    max_points : int, default=500
        Larger training sets are subsampled to this many points (seeded).
    complexity_penalty : float, default=0.01
        Added per prefix token to log(FVU) in the selection; with no exact candidate,
        held-out folds choose among the Pareto front (``search_settings.held_out_folds``).
    max_time : float, default=None
        Seconds for the whole ``fit`` (the model's first load aside), held within about
        ``1.1 * max_time + 0.05`` s. ``None``: the plan of work (``plan_``) runs to its end
        (fixed work); with it, the plan is cut where it must be, then the search continues
        until the budget ends or a candidate is exact (``docs/cluster.md``).
    refine : {"auto", "operon", None}, default="auto"
        ``"operon"``: the best candidates seed Operon's genetic programming over every
        feature (skipped after an exact candidate); ``"auto"``: so when pyoperon is
        installed; ``None``: the network alone (also, with a warning, when ``operators``
        leave Operon no function).
    device : str, default="auto"
        Torch device: ``"auto"`` (CUDA if available), ``"cpu"``, ``"cuda:1"``, ...
    random_state : int, RandomState instance or None, default=None
        Seeds the subsampling, the samples and the starts of the constant fitting.
    n_jobs : int, default=None
        Threads fitting constants, and Operon's islands at once (threads, or a dask
        cluster's workers under ``joblib.parallel_config(backend="dask")``: ``docs/cluster.md``);
        joblib's convention (``None``: 1, ``-1``: every core).
    verbose : int, default=0
        When positive, progress on stderr (or logger ``nesymres_sklearn`` at INFO), at
        most a line a second in the continuation.
    search_settings : SearchSettings, default=None
        The search's knobs (:class:`.search.settings.SearchSettings`); ``None``: defaults.
    operon_settings : OperonSettings, default=None
        Operon's knobs (:class:`.operon.settings.OperonSettings`); ``None``: defaults.
    guesses : list of str or sympy.Expr, default=None
        Equations you suspect (``"2.5*x0*sin(x1)"``), fitted and compared like any candidate.
    operators : list of str, default=None
        The operators candidates may use (``"sin"``, ``"pow"``, ... or PySR's and
        Operon's aliases ``"+"``, ``"-"``, ``"/"``, ``"^"``, ``"log"``); ``None``: all
        (:mod:`.restrictions`; ``[]`` is an error); integer powers are products under
        ``["add", "mul"]`` (``docs/usage.md``).
    max_complexity : int, default=None
        Candidates with more prefix tokens (``equations_``'s ``complexity``) are set aside.
    early_stop_condition : float or callable, default=None
        Ends the continuation early: a loss (MSE in the units of ``y``) that a
        candidate reaches, or a callable ``f(loss, complexity) -> bool`` (as PySR's).
    warm_start : bool, default=False
        A second ``fit`` on the same data and units continues the previous search
        (for ``max_time`` more) instead of starting over; not kept by pickling.

    With more features than the model has variables, the network reads a power-law
    split, combinations or the most relevant features (a warning says which).

    Attributes
    ----------
    expression_ : sympy.Expr
        The selected equation, over symbols named after the features.
    equations_ : pandas.DataFrame
        Every candidate, best first: ``expression``, ``skeleton``, ``loss`` (training
        MSE), ``log_fvu``, ``complexity`` (prefix tokens), ``score_lower_is_better``,
        ``pareto``, ``log_prob`` (decoding score per token) and ``origin`` (the stage
        that proposed it: ``beam``, ``sample``, ``operon``, ``identity``, ...; ``docs/usage.md``).
    best_index_ : int
        Row of ``equations_`` holding ``expression_``.
    constants_std_ : ndarray
        Standard errors of the selected row's ``c_0, c_1, ...`` by the delta method (:mod:`.uncertainty`).
    noise_std_ : float
        The noise's standard deviation in ``y``'s units (:mod:`.search.noise`, at the mean
        weight; an exact row's RMS error; NaN when ``max_time`` ran out first).
    timings_ : dict
        Seconds of the last ``fit`` in ``loading`` (imports and the model, once per
        process; not in ``max_time``), ``identities``, ``encoding``, ``decoding``,
        ``constant_fitting``, the looks ``residual``, ``reciprocal``, ``inverted``,
        ``exhaustive``, ``decomposition``, ``reduction``, ``refinement`` (Operon),
        ``continuation`` and ``selection``.
    features_seen_by_network_ : ndarray of int
        Columns of ``X`` that the network read.
    network_inputs_ : list of str
        What the network's variables stood for (``x1``, ``x1*x2/x3``, ...).
    refinement_ : dict or None
        The plan's Operon: ``seeds``, ``generations``, ``evaluations``, ``best_contains_a_seed``.
    plan_ : DataFrame
        The steps of the last ``fit`` as they ran (``unit``, ``seconds``, ``status``: ``"done"``,
        ``"cut"``, ``"skipped: <why>"``), the continuation's turns too (``docs/usage.md``).
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Feature names, when ``X`` had string column names.
    X_units_, y_units_, pi_groups_ : list of str, str and list of str, or None
        The units given to ``fit`` and the features' dimensionless groups (:mod:`.units`).
    physical_constants_ : dict
        The law's dimensional constants: symbol -> ``{"value": SI value (None: fitted),
        "source": pint's name or the units given}``.

    Examples
    --------
    >>> import numpy as np
    >>> from nesymres_sklearn import NeSymReSRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(1, 5, size=(128, 2))
    >>> y = X[:, 0] * np.sin(X[:, 1])
    >>> NeSymReSRegressor(beam_size=8, random_state=0).fit(X, y).predict(X).shape
    (128,)
    """

    def __init__(
        self,
        model="bundled",
        revision=None,
        beam_size=32,
        decoding="beam",
        n_restarts=4,
        max_points=500,
        complexity_penalty=0.01,
        max_time=None,
        refine="auto",
        device="auto",
        random_state=None,
        n_jobs=None,
        verbose=0,
        search_settings=None,
        operon_settings=None,
        guesses=None,
        operators=None,
        max_complexity=None,
        early_stop_condition=None,
        warm_start=False,
    ):
        self.model = model
        self.revision = revision
        self.beam_size = beam_size
        self.decoding = decoding
        self.n_restarts = n_restarts
        self.max_points = max_points
        self.complexity_penalty = complexity_penalty
        self.max_time = max_time
        self.refine = refine
        self.device = device
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.search_settings = search_settings
        self.operon_settings = operon_settings
        self.guesses = guesses
        self.operators = operators
        self.max_complexity = max_complexity
        self.early_stop_condition = early_stop_condition
        self.warm_start = warm_start

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        tags.target_tags.multi_output = True  # one equation per column of y (.multioutput)
        return tags

    def fit(self, X, y, sample_weight=None, X_units=None, y_units=None, constants=None):
        """Find an equation ``y = f(X)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Any number of features; beyond the model's variables (3 for the bundled
            model) the network works on the most relevant ones.
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
            Several targets: one equation per column, fitted in parallel (:mod:`.multioutput`).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the squared errors; points of weight 0 are left out.
        X_units, y_units : list or dict of str, and str, default=None
            Units of ``X``'s columns (a list, or a dict by name) and of ``y`` as pint reads
            them (``"kg/m^3"``): the network reads dimensionless groups (``docs/usage.md``).
        constants : dict of str to str, default=None
            The law's dimensional constants: symbol -> a constant pint knows
            (``{"c": "speed_of_light"}``) or the units of one to fit (``{"k": "J/K"}``);
            without, the fewest known constants that close the units join (:mod:`.units.constants`).

        Returns
        -------
        self : NeSymReSRegressor
            A fit that raises leaves the estimator as it was before the call.
        """
        moment = time.perf_counter()
        from . import pipeline  # torch, SymPy, pandas and the search: to fit, not to import the estimator

        importing = time.perf_counter() - moment  # the first fit of a process imports them: in "loading"
        previous = self.__dict__.copy()
        try:
            check_parameters(self)
            if n_targets(y) > 1:
                return fit_targets(self, X, y, sample_weight, X_units, y_units, constants)
            X, y, weights = validated(self, X, y, sample_weight)
            names = getattr(self, "feature_names_in_", [f"x{i}" for i in range(self.n_features_in_)])
            units = (X_units, y_units, constants)
            outcome = pipeline.run_fit(
                self.get_params(), X, y, weights, names, units, self.__dict__.get("_warm"), importing
            )
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(previous)
            raise
        self.__dict__.pop("estimators_", None)  # a previous fit's targets
        outcome.attributes.set_on(self)
        self._uncertainty, self._fitted, self._writer = outcome.uncertainty, outcome.fitted, outcome.writer
        self._warm = outcome.state
        return self

    def predict(self, X, index=None, return_std=False):
        """The fitted equation (or row ``index`` of ``equations_``) at ``X``; a
        ``RuntimeWarning`` names points outside its domain. ``return_std=True`` (the
        selected row): also a fresh point's standard deviation (:mod:`.uncertainty`)."""
        check_is_fitted(self, "expression_")
        if hasattr(self, "estimators_"):
            return predict_targets(self.estimators_, X, index, return_std)
        check_columns(X)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        prediction = warn_outside_domain(self._writer.predict(*self._fitted[self._row(index)][:2], X))
        return (prediction, self._uncertainty.prediction_std(X, self._row(index))) if return_std else prediction

    def score(self, X, y, sample_weight=None) -> float:
        """R² of ``predict(X)``, as ``r2_score``, without overflow (:func:`.inputs.r2_score_scaled`)."""
        return r2_score_scaled(y, self.predict(X), sample_weight)

    def sympy(self, index=None):
        """The fitted equation (or row ``index`` of ``equations_``) in SymPy (a list with several targets)."""
        check_is_fitted(self, "expression_")
        if hasattr(self, "estimators_"):
            return [column.sympy(index) for column in self.estimators_]
        return self.equations_.loc[self._row(index), "expression"]

    def latex(self, index=None) -> str:
        """The fitted equation (or row ``index`` of ``equations_``) in LaTeX (a list with several targets)."""
        if hasattr(self, "estimators_"):
            return [column.latex(index) for column in self.estimators_]
        return self._writer.latex(self.sympy(index))

    def __getstate__(self):
        state = dict(super().__getstate__())  # a copy: the estimator keeps its table
        state.pop("_warm", None)  # the search's sources hold the network: warm_start is for this process
        if "estimators_" in state:  # each target pickles its own table
            return pickled_state(state)
        if "equations_" in state:  # SymPy re-evaluates unpickled trees: rebuild them as written
            state["equations_"] = state["equations_"].drop(columns=["expression", "skeleton"])
            state.pop("expression_", None)
        return state

    def __setstate__(self, state):
        super().__setstate__(state)
        if "estimators_" in state:
            show_targets(self)
        elif "equations_" in state:
            expressions = [self._writer(*fitted) for fitted in self._fitted]
            self.equations_.insert(0, "expression", expressions)
            self.equations_.insert(1, "skeleton", [skeleton.sympy for skeleton, _, _ in self._fitted])
            self.expression_ = self.equations_.loc[self.best_index_, "expression"]

    def _row(self, index) -> int:
        if index is None:
            return self.best_index_
        n_rows = len(self.equations_)
        if not (isinstance(index, Integral) and -n_rows <= index < n_rows):
            raise IndexError(
                f"index must be a row of equations_ (0 to {n_rows - 1}, or -{n_rows} to -1 from the end), "
                f"got {index!r}."
            )
        return int(index) % n_rows
