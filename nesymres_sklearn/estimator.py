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
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted, validate_data

from . import original  # noqa: F401  (registers the authors' encoding, search and checkpoints)
from .expression.export import evaluate, feature_symbols, to_latex
from .expression.skeleton import Skeleton
from .network.encoding import encode_points, get_encoding
from .network.weights import BUNDLED, ModelSource, load_model, resolve_device
from .search.candidates import fit_candidates, skeleton_candidates
from .search.decoding import decode
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
    skeletons, BFGS fits their constants, the best equation is kept.

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
        Number of skeletons kept by beam search (the paper's default is 32).
    n_restarts : int, default=4
        BFGS starts per skeleton; the first sets every constant to 1.
    max_points : int, default=500
        Larger training sets are subsampled (seeded by ``random_state``) to this many
        points for both the network and the constant fitting.
    complexity_penalty : float, default=1e-14
        Added to the mean squared error per prefix token of the skeleton when
        selecting the equation (the paper's value).
    max_time : float, default=60.0
        Time budget in seconds for fitting constants. Once it is spent, running
        optimisations stop at their current iterate and the remaining candidates get
        a single BFGS iteration from the all-ones start. ``None`` means no limit.
    device : str, default="auto"
        Torch device for the network: ``"auto"`` (CUDA if available), ``"cpu"``,
        ``"cuda"``, ``"cuda:1"``, ...
    random_state : int, RandomState instance or None, default=None
        Seeds the subsampling and the BFGS starts.
    n_jobs : int, default=None
        Processes fitting constants in parallel (joblib convention; ``None`` means 1).
    verbose : int, default=0
        Log progress at INFO level when positive.

    Attributes
    ----------
    expression_ : sympy.Expr
        The selected equation, over symbols named after the features.
    equations_ : pandas.DataFrame
        Every candidate with columns ``expression``, ``skeleton``, ``loss`` (MSE on
        the training points), ``complexity`` (prefix tokens), ``score`` (loss plus
        penalty, lower is better), ``log_prob`` (beam score: summed log-probability,
        or for the authors' checkpoints the original's score, divided by the length)
        and ``origin``; sorted by score.
    best_index_ : int
        Row of ``equations_`` holding ``expression_``.
    timings_ : dict
        Seconds spent in ``encoding``, ``beam_search``, ``constant_fitting`` and
        ``selection`` during the last ``fit``.
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
        n_restarts=4,
        max_points=500,
        complexity_penalty=1e-14,
        max_time=60.0,
        device="auto",
        random_state=None,
        n_jobs=None,
        verbose=0,
    ):
        self.model = model
        self.revision = revision
        self.beam_size = beam_size
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
        self.timings_ = dict.fromkeys(("encoding", "beam_search", "constant_fitting", "selection"), 0.0)
        if np.ptp(y) == 0:
            warnings.warn(f"y is constant ({y[0]!r}); the fitted equation is that constant.", UserWarning, stacklevel=2)
            self._set_constant_equation(float(y[0]))
            return self
        encoding = get_encoding(network.config.encoding)
        message = encoding.range_warning(np.abs(np.concatenate([X.ravel(), y])))
        if message is not None:
            warnings.warn(message, UserWarning, stacklevel=2)

        started = time.perf_counter()
        points = torch.from_numpy(encode_points(X, y, n_variables, network.config.encoding)).to(device)
        self.timings_["encoding"] = time.perf_counter() - started

        started = time.perf_counter()
        with _single_thread_on_cpu(device):
            hypotheses = decode(network, points, self.beam_size, self.n_features_in_)
        self.timings_["beam_search"] = time.perf_counter() - started

        started = time.perf_counter()
        candidates = skeleton_candidates(hypotheses)
        fits = fit_candidates(candidates, X, y, self.n_restarts, int(rng.randint(2**31)), self.max_time, self.n_jobs)
        self.timings_["constant_fitting"] = time.perf_counter() - started

        started = time.perf_counter()
        rows = [
            {
                "expression": candidate.skeleton.expression(fit.constants, self._symbols),
                "skeleton": candidate.skeleton.sympy,
                "loss": fit.mse,
                "complexity": candidate.complexity,
                "log_prob": candidate.log_prob,
                "origin": candidate.origin,
            }
            for candidate, fit in zip(candidates, fits)
        ]
        self.equations_, order = candidate_table(rows, self.complexity_penalty)
        self.best_index_ = best_index(self.equations_)
        self.expression_ = self.equations_.loc[self.best_index_, "expression"]
        chosen = order[self.best_index_]
        self._skeleton = candidates[chosen].skeleton
        self._constants = np.asarray(fits[chosen].constants, dtype=np.float64)
        self.timings_["selection"] = time.perf_counter() - started
        if self.verbose:
            logger.info(
                "Selected %s (%d candidates) in %.3fs", self.expression_, len(rows), sum(self.timings_.values())
            )
        return self

    def predict(self, X):
        """Evaluate the fitted equation on ``X`` (shape ``(n_samples, n_features_in_)``)."""
        check_is_fitted(self, "expression_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return evaluate(self._skeleton, self._constants, X)

    def sympy(self) -> sympy.Expr:
        """The fitted equation as a SymPy expression."""
        check_is_fitted(self, "expression_")
        return self.expression_

    def latex(self) -> str:
        """The fitted equation in LaTeX."""
        check_is_fitted(self, "expression_")
        return to_latex(self.expression_)

    def _set_constant_equation(self, value: float) -> None:
        skeleton = Skeleton(("c",))
        self._skeleton, self._constants = skeleton, np.array([value])
        self.expression_ = skeleton.expression(self._constants, self._symbols)
        self.equations_, _ = candidate_table(
            [
                {
                    "expression": self.expression_,
                    "skeleton": skeleton.sympy,
                    "loss": 0.0,
                    "complexity": 1,
                    "log_prob": 0.0,
                    "origin": "constant",
                }
            ],
            self.complexity_penalty,
        )
        self.best_index_ = 0
