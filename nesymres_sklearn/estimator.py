"""The scikit-learn estimator :class:`NeSymReSRegressor`."""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
import warnings
from contextlib import contextmanager
from numbers import Integral, Real

import numpy as np
import sympy
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from .expression.export import evaluate, feature_symbols, to_latex
from .expression.skeleton import Skeleton
from .search.features import linear_skeleton, on_features, relevant_features
from .search.fitting import EXACT_FIT, fit_constants, mse, variance
from .search.pruning import prune_best
from .search.readable import exact_constants, tidy_numbers
from .search.scaling import Scaling
from .search.selection import best_index, candidate_table
from .search.settings import DECODINGS, SearchSettings, search_deadline

logger = logging.getLogger(__name__)

MIN_POINTS = 3
# With Operon and a time budget, the network's rounds (beam, then sampled rounds, fits
# included) take this share of the budget; Operon, seeded with their candidates, has the rest.
NETWORK_SHARE_WITH_OPERON = 0.5
PACKAGE_LOGGER = logging.getLogger(__name__.rsplit(".", 1)[0])


_progress_lock = threading.Lock()
_progress_state = {"users": 0, "level": logging.NOTSET, "handler": None}


def _forget_progress_after_fork() -> None:
    """A forked child has none of the parent's other threads, so none of their fits."""
    global _progress_lock
    _progress_lock = threading.Lock()
    _progress_state.update(users=0, handler=None)


os.register_at_fork(after_in_child=_forget_progress_after_fork)


@contextmanager
def _progress(verbose: int):
    """Progress messages of the package on stderr for the duration of a fit when
    ``verbose`` is positive, without a logging set-up (one configured by the user is
    used instead); none at ``verbose=0``. Fits in threads of one process share the
    setting: the first one in sets it, the last one out restores it."""
    with _progress_lock:
        if _progress_state["users"] == 0:
            _progress_state["level"] = PACKAGE_LOGGER.level
            PACKAGE_LOGGER.setLevel(logging.INFO if verbose else logging.WARNING)
            if verbose and not PACKAGE_LOGGER.hasHandlers():
                handler = logging.StreamHandler(sys.stderr)
                handler.setFormatter(logging.Formatter("[NeSymReS] %(message)s"))
                PACKAGE_LOGGER.addHandler(handler)
                _progress_state["handler"] = handler
        _progress_state["users"] += 1
    try:
        yield
    finally:
        with _progress_lock:
            _progress_state["users"] -= 1
            if _progress_state["users"] == 0:
                PACKAGE_LOGGER.setLevel(_progress_state["level"])
                if _progress_state["handler"] is not None:
                    PACKAGE_LOGGER.removeHandler(_progress_state["handler"])
                    _progress_state["handler"] = None


def _check_target(y) -> None:
    """A clear error for targets that are not numbers (before NumPy raises its own)."""
    values = np.asarray(y)
    if values.dtype.kind in "USV" or (values.dtype.kind == "O" and values.size and not _all_numbers(values)):
        example = next(v for v in values.ravel() if not _is_number(v))
        example = example.item() if isinstance(example, np.generic) else example
        raise ValueError(
            f"y must hold numbers (this is a regressor), but it holds {values.dtype} values such as {example!r}. "
            "Convert it to floats, e.g. pandas.to_numeric(y), or encode categories before fitting."
        )


def _check_boolean_target(y) -> None:
    """A clear error for a boolean ``y``: a classification target, not a quantity to regress."""
    if np.asarray(y).dtype.kind == "b":
        raise ValueError(
            "y is boolean, a classification target, but NeSymReSRegressor is a regressor: it finds an equation "
            "for a numeric y. Use a classifier (e.g. sklearn.linear_model.LogisticRegression), or pass "
            "y.astype(float) to fit the 0/1 values as numbers."
        )


def _check_unique_columns(X) -> None:
    """scikit-learn's kind of error for repeated column names (before narwhals raises its own)."""
    columns = getattr(X, "columns", None)
    if columns is None or not hasattr(columns, "duplicated"):
        return
    repeated = list(dict.fromkeys(columns[columns.duplicated()]))
    if repeated:
        raise ValueError(
            f"Feature names must be unique, but X has repeated column names: {', '.join(map(repr, repeated))}. "
            "Rename the columns, e.g. X.columns = [...]."
        )


class _Rows:
    """Candidates as they are gathered: the columns that :meth:`NeSymReSRegressor._set_table` takes."""

    def __init__(self):
        self.skeletons, self.constants, self.losses, self.log_probs, self.origins = [], [], [], [], []

    def add(self, skeleton: Skeleton, constants, loss: float, log_prob: float, origin: str) -> None:
        for column, value in zip(self.columns(), (skeleton, constants, loss, log_prob, origin)):
            column.append(value)

    def columns(self) -> tuple[list, ...]:
        return self.skeletons, self.constants, self.losses, self.log_probs, self.origins

    def best_first(self) -> list[tuple[Skeleton, np.ndarray]]:
        """Skeletons and constants of the finite fits, lowest loss first."""
        order = np.argsort(self.losses, kind="stable")
        return [(self.skeletons[i], self.constants[i]) for i in order if np.isfinite(self.losses[i])]

    def add_pruned(self, X, y, weights, complexity_penalty: float, deadline: float | None) -> None:
        """The best row with the parts that do not pay for their tokens dropped
        (:func:`~.search.pruning.prune_best`), as a row of the same origin."""
        pruned = prune_best(self.skeletons, self.constants, self.losses, X, y, complexity_penalty, weights, deadline)
        if pruned is not None:
            row, skeleton, constants, loss = pruned
            self.add(skeleton, constants, loss, self.log_probs[row], self.origins[row])


def _operon_refinement(required: bool):
    """The Operon refinement module; without pyoperon, an error that says how to install
    it when ``required``, else ``None``."""
    try:
        from .operon import refine
    except ModuleNotFoundError as error:
        if error.name is None or not error.name.startswith("pyoperon"):
            raise
        if not required:
            return None
        raise ImportError(
            'refine="operon" needs pyoperon, which is not installed: pip install "nesymres-sklearn[operon]" '
            "(or pip install pyoperon)."
        ) from None
    return refine


def _is_number(value) -> bool:
    return isinstance(value, Real | np.number) and not isinstance(value, np.complexfloating)


def _all_numbers(values: np.ndarray) -> bool:
    return all(_is_number(v) or v is None for v in values.ravel())


class NeSymReSRegressor(RegressorMixin, BaseEstimator):
    """Neural symbolic regression: a pretrained Transformer proposes equation
    skeletons, Levenberg-Marquardt fits their constants, the best equation is kept.

    Parameters
    ----------
    model : str or path-like, default="bundled"
        Weights to use: ``"bundled"`` (shipped with the package, works offline), a
        local folder with ``config.json`` and ``model.safetensors``, a Hugging Face
        Hub repository id such as ``"user/nesymres-small"``, or one of the authors'
        original checkpoints: a local ``.ckpt`` file or a Hub file such as
        ``"TommasoBendinelli/NeuralSymbolicRegressionThatScales/100M.ckpt"``
        (converted once and cached; see ``docs/original-checkpoints.md``).
    revision : str, default=None
        Branch, tag or commit of a Hub repository (Hub models only).
    beam_size : int, default=32
        Skeletons of the first round: beams kept by beam search (the paper's default
        is 32), or samples drawn.
    decoding : {"beam", "sample"}, default="beam"
        How the first round proposes skeletons: the model's beam search, or sampling
        from the network. Later rounds (see ``max_time``) always sample.
    n_restarts : int, default=4
        Starts of the constant fitting per skeleton; the first sets every constant to 1.
    max_points : int, default=500
        Larger training sets are subsampled (seeded by ``random_state``) to this many
        points for both the network and the constant fitting.
    complexity_penalty : float, default=0.01
        Added per prefix token of the skeleton to the log of the fraction of variance
        unexplained when selecting the equation.
    max_time : float, default=None
        Seconds for the whole ``fit`` (not counting the model's first load). While
        time remains after the first round, more skeletons are sampled and fitted
        (within the first half of the budget when Operon runs), then Operon searches
        for the rest (``refine``); the search stops early once a fit is exact.
        ``None``: the first round only, and a fixed number of Operon generations
        (fixed work).
    refine : {"auto", "operon", None}, default="auto"
        ``"operon"``: the network's best fitted candidates seed the population of
        Operon's genetic programming (``pyoperon``), which searches over every
        feature; its best equations join the candidates. Skipped when a candidate of
        the network already fits exactly. ``"auto"``: ``"operon"`` when pyoperon is
        installed (a dependency on Linux x86-64, the ``operon`` extra elsewhere), else
        the network alone; ``refinement_`` says whether Operon ran. ``None``: the
        network alone.
    device : str, default="auto"
        Torch device for the network: ``"auto"`` (CUDA if available), ``"cpu"``,
        ``"cuda"``, ``"cuda:1"``, ...
    random_state : int, RandomState instance or None, default=None
        Seeds the subsampling, the samples and the starts of the constant fitting.
    n_jobs : int, default=None
        Processes fitting constants in parallel (joblib convention; ``None`` means 1).
    verbose : int, default=0
        When positive, progress (each decoding round, Operon, the selected equation)
        on stderr, or through the user's logging set-up when there is one (logger
        ``nesymres_sklearn``, INFO).

    With more features than the model has variables, the network works on the most
    relevant ones (mutual information and rank correlation with ``y``; a warning names
    them), and a linear candidate over all features joins the candidates.

    Attributes
    ----------
    expression_ : sympy.Expr
        The selected equation, over symbols named after the features.
    equations_ : pandas.DataFrame
        Every candidate, best first, with columns ``expression``, ``skeleton``,
        ``loss`` (MSE on the training points), ``log_fvu`` (log of the fraction of
        variance unexplained), ``complexity`` (prefix tokens),
        ``score_lower_is_better`` (``log_fvu`` plus the complexity penalty),
        ``pareto`` (no candidate is both simpler and more accurate), ``log_prob``
        (decoding score: summed log-probability, or for the authors' checkpoints the
        original's score, divided by the length) and ``origin`` (``beam``, ``sample``,
        ``attached``, ``baseline``, ``polynomial``, ``scaled``, ``linear``, ``operon`` or
        ``constant``; a pruned row keeps the origin of the row it was pruned from).
    best_index_ : int
        Row of ``equations_`` holding ``expression_``.
    timings_ : dict
        Seconds spent in ``encoding``, ``decoding``, ``constant_fitting``,
        ``refinement`` and ``selection`` during the last ``fit``.
    features_seen_by_network_ : ndarray of int
        Columns of ``X`` that the network worked on.
    refinement_ : dict or None
        When Operon ran (``refine="operon"``, or ``"auto"`` with pyoperon): the number
        of ``seeds`` that entered Operon's population, its ``generations`` and
        ``evaluations``, and whether its best model contains a seed's structure
        (``best_contains_a_seed``).
    n_rounds_ : int
        Decoding rounds of the last ``fit`` (1 without ``max_time``).
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Feature names, when ``X`` had string column names.

    Examples
    --------
    >>> import numpy as np
    >>> from nesymres_sklearn import NeSymReSRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(1, 5, size=(128, 2))
    >>> y = X[:, 0] * np.sin(X[:, 1])
    >>> reg = NeSymReSRegressor(beam_size=8, random_state=0).fit(X, y)
    >>> reg.predict(X).shape
    (128,)
    """

    _parameter_constraints = {
        "model": [str, os.PathLike],
        "revision": [str, None],
        "beam_size": [Interval(Integral, 1, None, closed="left")],
        "decoding": [StrOptions(set(DECODINGS))],
        "n_restarts": [Interval(Integral, 1, None, closed="left")],
        "max_points": [Interval(Integral, MIN_POINTS, None, closed="left")],
        "complexity_penalty": [Interval(Real, 0, None, closed="left")],
        "max_time": [Interval(Real, 0, None, closed="neither"), None],
        "refine": [StrOptions({"auto", "operon"}), None],
        "device": [str],
        "random_state": ["random_state"],
        "n_jobs": [Interval(Integral, 1, None, closed="left"), Interval(Integral, None, -1, closed="right"), None],
        "verbose": ["verbose"],
    }

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

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags

    def fit(self, X, y, sample_weight=None):
        """Find an equation ``y = f(X)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Any number of features; beyond the model's variables (3 for the bundled
            model) the network works on the most relevant ones.
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the squared errors in the constant fitting and
            the selection; points of weight 0 are left out entirely.

        Returns
        -------
        self : NeSymReSRegressor
            A fit that raises leaves the estimator as it was before the call.
        """
        previous = self.__dict__.copy()
        try:
            with _progress(self.verbose):
                return self._fit(X, y, sample_weight)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(previous)
            raise

    def _fit(self, X, y, sample_weight):
        from . import neural_search  # torch: needed to fit, not to unpickle or predict

        self._validate_params()
        _check_target(y)
        _check_boolean_target(y)
        _check_unique_columns(X)
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True, ensure_min_samples=MIN_POINTS)
        y = y.astype(np.float64)  # booleans and integers count as numbers
        weights = None
        if sample_weight is not None:
            weights = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
            kept = weights > 0
            if kept.sum() < MIN_POINTS:
                raise ValueError(
                    f"Only {int(kept.sum())} points have a positive sample_weight; at least {MIN_POINTS} are needed."
                )
            X, y, weights = X[kept], y[kept], weights[kept] / weights[kept].mean()
        operon = None if self.refine is None else _operon_refinement(required=self.refine == "operon")
        network = neural_search.load_network(self.model, self.revision, self.device)
        started = time.time()
        rng = check_random_state(self.random_state)
        names = getattr(self, "feature_names_in_", [f"x{i}" for i in range(self.n_features_in_)])
        self._symbols = feature_symbols(names)
        if len(X) > self.max_points:
            keep = rng.choice(len(X), size=self.max_points, replace=False)
            X, y = X[keep], y[keep]
            weights = None if weights is None else weights[keep] / weights[keep].mean()
        self.timings_ = dict.fromkeys(("encoding", "decoding", "constant_fitting", "refinement", "selection"), 0.0)
        self.n_rounds_ = 0
        self.features_seen_by_network_ = np.arange(self.n_features_in_)
        self.refinement_ = None
        if np.ptp(y) == 0:
            warnings.warn(f"y is constant ({y[0]!r}); the fitted equation is that constant.", UserWarning, stacklevel=3)
            self._scaling = Scaling.identity(self.n_features_in_)
            self._set_table([Skeleton(("c",))], [np.array([float(y[0])])], [0.0], [0.0], ["constant"], float(y[0]))
            return self

        self._scaling = Scaling.for_data(X, y)
        X_scaled, y_scaled = self._scaling.scale_X(X), self._scaling.scale_y(y)
        seed = int(rng.randint(2**31))
        features = self._features_for_network(X_scaled, y_scaled, network.config.n_variables, seed, operon is not None)
        logger.info("Searching %d points with %s (scaling %s)", len(y), self.model, self._scaling)
        settings = SearchSettings(
            self.decoding,
            self.beam_size,
            self.n_restarts,
            self.max_time,
            self.n_jobs,
            network_share=1.0 if operon is None else NETWORK_SHARE_WITH_OPERON,
        )
        moment = time.perf_counter()
        found = neural_search.propose_and_fit(
            network, X_scaled[:, features], y_scaled, settings, seed, started, weights
        )
        self.timings_["decoding"], self.timings_["constant_fitting"] = found.decoding_seconds, found.fitting_seconds
        self.timings_["encoding"] = max(
            0.0, time.perf_counter() - moment - found.decoding_seconds - found.fitting_seconds
        )
        self.n_rounds_ = found.rounds
        rows = _Rows()
        for candidate, fit in zip(found.candidates, found.fits):
            rows.add(
                on_features(candidate.skeleton, features), fit.constants, fit.mse, candidate.log_prob, candidate.origin
            )
        if len(features) < self.n_features_in_:
            linear = linear_skeleton(self.n_features_in_)
            fit = fit_constants(linear.program, X_scaled, y_scaled, 1, np.random.default_rng(seed), None, weights)
            rows.add(linear, fit.constants, fit.mse, float("-inf"), "linear")
        exact = min(rows.losses) <= EXACT_FIT * (variance(y_scaled, weights) or 1.0)
        if operon is not None and exact:
            logger.info("Operon skipped: a candidate of the network fits exactly.")
        elif operon is not None:
            moment = time.perf_counter()
            deadline = search_deadline(started, self.max_time)
            refined = operon.refine(
                X_scaled, y_scaled, rows.best_first(), operon.OperonSettings(), seed, deadline, weights
            )
            for skeleton, values in zip(refined.skeletons, refined.constants):
                rows.add(
                    skeleton,
                    values,
                    mse(skeleton.program, X_scaled, y_scaled, values, weights),
                    float("-inf"),
                    "operon",
                )
            self.timings_["refinement"] = time.perf_counter() - moment
            self.refinement_ = {
                "seeds": refined.n_seeds,
                "generations": refined.generations,
                "evaluations": refined.evaluations,
                "best_contains_a_seed": refined.from_seed,
            }
            logger.info(
                "Operon: %d seeds, %d generations, %d evaluations in %.2fs",
                refined.n_seeds,
                refined.generations,
                refined.evaluations,
                self.timings_["refinement"],
            )

        moment = time.perf_counter()
        deadline = None if self.max_time is None else started + self.max_time
        rows.add_pruned(X_scaled, y_scaled, weights, self.complexity_penalty, deadline)
        self._set_table(*rows.columns(), variance(y_scaled, weights))
        self._make_readable(X_scaled, y_scaled, weights, deadline)
        self.timings_["selection"] = time.perf_counter() - moment
        logger.info(
            "Selected %s (%d candidates, %d rounds) in %.3fs",
            self.expression_,
            len(rows.skeletons),
            found.rounds,
            time.time() - started,
        )
        return self

    def _features_for_network(
        self, X: np.ndarray, y: np.ndarray, n_variables: int, seed: int, refined: bool
    ) -> np.ndarray:
        """All columns when the network takes them, else the most relevant ones (with a
        warning that says whether Operon, ``refined``, searches over all of them)."""
        features = relevant_features(X, y, n_variables, seed)
        if len(features) < X.shape[1]:
            names = ", ".join(str(self._symbols[j]) for j in features)
            rest = (
                "Operon searches over all of them"
                if refined
                else "install pyoperon and pass refine='operon' to search over all of them"
            )
            warnings.warn(
                f"X has {X.shape[1]} features but the model {self.model!r} takes {n_variables} variables: the network "
                f"works on the {n_variables} most relevant to y ({names}; mutual information and rank correlation), "
                f"and a linear candidate uses all; {rest}.",
                UserWarning,
                stacklevel=4,
            )
        self.features_seen_by_network_ = features
        return features

    def predict(self, X, index=None):
        """Evaluate the fitted equation on ``X`` (shape ``(n_samples, n_features_in_)``).

        ``index`` picks another row of ``equations_`` (default: ``best_index_``).
        """
        check_is_fitted(self, "expression_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        skeleton, constants, _ = self._fitted[self._row(index)]
        return self._scaling.unscale_y(evaluate(skeleton, constants, self._scaling.scale_X(X)))

    def sympy(self, index=None) -> sympy.Expr:
        """The fitted equation (or row ``index`` of ``equations_``) as a SymPy expression."""
        check_is_fitted(self, "expression_")
        return self.equations_.loc[self._row(index), "expression"]

    def latex(self, index=None) -> str:
        """The fitted equation (or row ``index`` of ``equations_``) in LaTeX."""
        return to_latex(self.sympy(index))

    def __getstate__(self):
        state = dict(super().__getstate__())  # a copy: the estimator keeps its table
        if "equations_" in state:  # SymPy re-evaluates unpickled trees: rebuild them as written
            state["equations_"] = state["equations_"].drop(columns=["expression", "skeleton"])
        return state

    def __setstate__(self, state):
        super().__setstate__(state)
        if "equations_" in state:
            expressions = [self._expression(*fitted) for fitted in self._fitted]
            self.equations_.insert(0, "expression", expressions)
            self.equations_.insert(1, "skeleton", [skeleton.sympy for skeleton, _, _ in self._fitted])

    def _row(self, index) -> int:
        if index is None:
            return self.best_index_
        if not (isinstance(index, Integral) and 0 <= index < len(self.equations_)):
            raise IndexError(f"index must be a row of equations_ (0 to {len(self.equations_) - 1}), got {index!r}.")
        return int(index)

    def _expression(self, skeleton: Skeleton, constants: np.ndarray, exact: list | None = None) -> sympy.Expr:
        """The row's equation over the features: as written, or with ``exact``
        constants and SymPy's automatic evaluation (the selected row)."""
        if exact is None:
            expression = skeleton.expression(constants, self._symbols)
        else:
            expression = tidy_numbers(skeleton.expression(exact, self._symbols, evaluate=True))
        return self._scaling.unscale_expression(expression, self._symbols)

    def _make_readable(
        self, X_scaled: np.ndarray, y_scaled: np.ndarray, weights: np.ndarray | None, deadline: float | None
    ) -> None:
        """Re-spell the selected equation's constants exactly where the fit allows
        (until ``deadline``)."""
        row = self.best_index_
        skeleton, constants, _ = self._fitted[row]
        exact = exact_constants(skeleton, constants, X_scaled, y_scaled, weights, deadline)
        values = np.array([float(c) for c in exact])
        self._fitted[row] = (skeleton, values, exact)
        with np.errstate(over="ignore"):
            self.equations_.loc[row, "loss"] = (
                mse(skeleton.program, X_scaled, y_scaled, values, weights) * np.float64(self._scaling.y_scale) ** 2
            )
        self.expression_ = self._expression(*self._fitted[row])
        self.equations_.loc[row, "expression"] = self.expression_

    def _set_table(self, skeletons, constants, losses, log_probs, origins, variance: float) -> None:
        """``equations_``, ``best_index_``, ``expression_`` and the fitted rows behind them.

        ``losses`` and ``variance`` are in the scaled units of the search; the table's
        ``loss`` is in the units of ``y``.
        """
        rows = [
            {
                "expression": self._expression(skeleton, values),
                "skeleton": skeleton.sympy,
                "loss": loss,
                "complexity": len(skeleton),
                "log_prob": log_prob,
                "origin": origin,
            }
            for skeleton, values, loss, log_prob, origin in zip(skeletons, constants, losses, log_probs, origins)
        ]
        self.equations_, order = candidate_table(rows, self.complexity_penalty, variance)
        with np.errstate(over="ignore"):
            self.equations_["loss"] *= np.float64(self._scaling.y_scale) ** 2
        self._fitted = [(skeletons[i], np.asarray(constants[i], dtype=np.float64), None) for i in order]
        try:
            self.best_index_ = best_index(self.equations_)
        except ValueError:
            raise ValueError(
                "No candidate equation is finite on the training data: every one overflows or is undefined at "
                "some points. Look for extreme values in X and y (e.g. magnitudes near 1e308, or features spanning "
                "hundreds of orders of magnitude), and transform or rescale them (e.g. take logs) before fitting."
            ) from None
        self.expression_ = self.equations_.loc[self.best_index_, "expression"]
