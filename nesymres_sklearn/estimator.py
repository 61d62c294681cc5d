"""The scikit-learn estimator :class:`NeSymReSRegressor`."""

from __future__ import annotations

import logging
import os
import time
import warnings
from contextlib import contextmanager
from numbers import Integral, Real

import numpy as np
import sympy
import torch
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from . import original  # noqa: F401  (registers the authors' encoding, search and checkpoints)
from .expression.export import evaluate, feature_symbols, to_latex
from .expression.skeleton import Skeleton
from .network.encoding import encode_points, get_encoding
from .network.weights import BUNDLED, ModelSource, load_model, resolve_device
from .search.anytime import DECODINGS, SearchSettings, search
from .search.fitting import mse
from .search.readable import exact_constants, tidy_numbers
from .search.scaling import Scaling
from .search.selection import best_index, candidate_table

logger = logging.getLogger(__name__)

MIN_POINTS = 3


@contextmanager
def _single_thread_on_cpu(device: torch.device):
    """Decode with one intra-op thread on CPU, restoring the setting afterwards.

    Beam search runs many tiny operations; extra threads only add synchronisation
    (on the 2-core development machine a beam-32 search took 0.2 s with one thread
    and up to 14 s with two while another process was busy).
    """
    if device.type != "cpu":
        yield
        return
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


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
        time remains after the first round, more skeletons are sampled and fitted;
        the search stops early once a fit is exact. ``None``: the first round only
        (fixed work).
    device : str, default="auto"
        Torch device for the network: ``"auto"`` (CUDA if available), ``"cpu"``,
        ``"cuda"``, ``"cuda:1"``, ...
    random_state : int, RandomState instance or None, default=None
        Seeds the subsampling, the samples and the starts of the constant fitting.
    n_jobs : int, default=None
        Processes fitting constants in parallel (joblib convention; ``None`` means 1).
    verbose : int, default=0
        Log progress at INFO level when positive.

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
        original's score, divided by the length) and ``origin``.
    best_index_ : int
        Row of ``equations_`` holding ``expression_``.
    timings_ : dict
        Seconds spent in ``encoding``, ``decoding``, ``constant_fitting`` and
        ``selection`` during the last ``fit``.
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
        "device": [str],
        "random_state": ["random_state"],
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        model=BUNDLED,
        revision=None,
        beam_size=32,
        decoding="beam",
        n_restarts=4,
        max_points=500,
        complexity_penalty=0.01,
        max_time=None,
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
        self.device = device
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags

    def fit(self, X, y):
        """Find an equation ``y = f(X)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            At most as many features as the model has variables (3 for the bundled
            model).
        y : array-like of shape (n_samples,)

        Returns
        -------
        self : NeSymReSRegressor
        """
        self._validate_params()
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True, ensure_min_samples=MIN_POINTS)
        device = resolve_device(self.device)
        network = load_model(ModelSource.parse(self.model, self.revision), device=device)
        started = time.time()
        n_variables = network.config.n_variables
        if self.n_features_in_ > n_variables:
            raise ValueError(
                f"X has {self.n_features_in_} features, but the model {self.model!r} takes at most "
                f"{n_variables} variables. Keep at most {n_variables} features (for example with "
                "sklearn.feature_selection.SelectKBest in a Pipeline) or use a model trained with more variables."
            )
        rng = check_random_state(self.random_state)
        names = getattr(self, "feature_names_in_", [f"x{i}" for i in range(self.n_features_in_)])
        self._symbols = feature_symbols(names)
        if len(X) > self.max_points:
            keep = rng.choice(len(X), size=self.max_points, replace=False)
            X, y = X[keep], y[keep]
        self.timings_ = dict.fromkeys(("encoding", "decoding", "constant_fitting", "selection"), 0.0)
        self.n_rounds_ = 0
        if np.ptp(y) == 0:
            warnings.warn(f"y is constant ({y[0]!r}); the fitted equation is that constant.", UserWarning, stacklevel=2)
            self._scaling = Scaling.identity(self.n_features_in_)
            self._set_table([Skeleton(("c",))], [np.array([float(y[0])])], [0.0], [0.0], ["constant"], float(y[0]))
            return self

        self._scaling = Scaling.for_data(X, y)
        X_scaled, y_scaled = self._scaling.scale_X(X), self._scaling.scale_y(y)
        encoding = get_encoding(network.config.encoding)
        message = encoding.range_warning(np.abs(np.concatenate([X_scaled.ravel(), y_scaled])))
        if message is not None:
            warnings.warn(message, UserWarning, stacklevel=2)

        moment = time.perf_counter()
        points = torch.from_numpy(encode_points(X_scaled, y_scaled, n_variables, network.config.encoding))
        self.timings_["encoding"] = time.perf_counter() - moment

        settings = SearchSettings(self.decoding, self.beam_size, self.n_restarts, self.max_time, self.n_jobs)
        with _single_thread_on_cpu(device):
            found = search(network, points.to(device), X_scaled, y_scaled, settings, int(rng.randint(2**31)), started)
        self.timings_["decoding"], self.timings_["constant_fitting"] = found.decoding_seconds, found.fitting_seconds
        self.n_rounds_ = found.rounds

        moment = time.perf_counter()
        self._set_table(
            [candidate.skeleton for candidate in found.candidates],
            [fit.constants for fit in found.fits],
            [fit.mse for fit in found.fits],
            [candidate.log_prob for candidate in found.candidates],
            [candidate.origin for candidate in found.candidates],
            float(np.var(y_scaled)),
        )
        self._make_readable(X_scaled, y_scaled)
        self.timings_["selection"] = time.perf_counter() - moment
        if self.verbose:
            logger.info(
                "Selected %s (%d candidates, %d rounds) in %.3fs",
                self.expression_,
                len(found.candidates),
                found.rounds,
                time.time() - started,
            )
        return self

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

    def _make_readable(self, X_scaled: np.ndarray, y_scaled: np.ndarray) -> None:
        """Re-spell the selected equation's constants exactly where the fit allows."""
        row = self.best_index_
        skeleton, constants, _ = self._fitted[row]
        exact = exact_constants(skeleton, constants, X_scaled, y_scaled)
        values = np.array([float(c) for c in exact])
        self._fitted[row] = (skeleton, values, exact)
        with np.errstate(over="ignore"):
            self.equations_.loc[row, "loss"] = (
                mse(skeleton.program, X_scaled, y_scaled, values) * np.float64(self._scaling.y_scale) ** 2
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
        self.best_index_ = best_index(self.equations_)
        self.expression_ = self.equations_.loc[self.best_index_, "expression"]
