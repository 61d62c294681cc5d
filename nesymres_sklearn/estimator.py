"""The scikit-learn estimator :class:`NeSymReSRegressor`."""

from __future__ import annotations

import logging
import os
import sys
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
from .inputs import check_columns, check_target, warn_few_points, warn_outside_domain, warn_repeated_columns
from .operon.settings import OperonSettings
from .search.budget import Budget
from .search.features import linear_skeleton, on_features, relevant_features
from .search.fitting import fit_constants, mse
from .search.folding import folded
from .search.power_factor import PowerFactor, power_factor
from .search.power_law import power_law
from .search.problem import Problem
from .search.readable import exact_constants, tidy_numbers
from .search.reduction import Reduction, reduction
from .search.scaling import Scaling
from .search.settings import DECODINGS, SearchRequest, SearchSettings
from .search.table import CandidateRows, CandidateTable
from .shared_setting import SharedSetting

logger = logging.getLogger(__name__)

MIN_POINTS = 3
PACKAGE_LOGGER = logging.getLogger(__name__.rsplit(".", 1)[0])

_package_logging = SharedSetting()


@contextmanager
def _progress(verbose: int):
    """Progress messages of the package on stderr for the duration of a fit when
    ``verbose`` is positive, without a logging set-up (one configured by the user is
    used instead); none at ``verbose=0``. Fits in threads of one process share the
    setting (:class:`.SharedSetting`)."""

    def apply():
        level, handler = PACKAGE_LOGGER.level, None
        PACKAGE_LOGGER.setLevel(logging.INFO if verbose else logging.WARNING)
        if verbose and not PACKAGE_LOGGER.hasHandlers():
            handler = logging.StreamHandler(sys.stderr)
            handler.setFormatter(logging.Formatter("[NeSymReS] %(message)s"))
            PACKAGE_LOGGER.addHandler(handler)

        def restore():
            PACKAGE_LOGGER.setLevel(level)
            if handler is not None:
                PACKAGE_LOGGER.removeHandler(handler)

        return restore

    with _package_logging.held(apply):
        yield


def _operon_stage(required: bool):
    """The Operon stage (:func:`.operon.stage.refine_candidates`); without pyoperon, an
    error that says how to install it when ``required``, else ``None``."""
    try:
        from .operon.stage import refine_candidates
    except ModuleNotFoundError as error:
        if error.name is None or not error.name.startswith("pyoperon"):
            raise
        if not required:
            return None
        raise ImportError(
            'refine="operon" needs pyoperon, which is not installed: pip install "nesymres-sklearn[operon]" '
            "(or pip install pyoperon)."
        ) from None
    return refine_candidates


def _holds_operon(budget: Budget, settings: OperonSettings, n_points: int) -> bool:
    """Whether Operon's share of the ``budget`` holds its first generation on
    ``n_points`` (:func:`.operon.refine.minimum_seconds`); with a smaller budget the
    network has all of it."""
    if budget.max_time is None:
        return True
    from .operon.refine import minimum_seconds

    window = budget.refinement_end.at - budget.network_end.at
    if window >= minimum_seconds(settings, n_points):
        return True
    logger.info(
        "Operon's share of max_time (%.3fs) is too short for its first generation: the network has all.", window
    )
    return False


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
        Seconds for the whole ``fit`` (not counting the model's first load); from 0.1 s
        up it returns within about ``1.1 * max_time + 0.05`` s. The first round's
        candidates are fitted in beam order until the network's deadline (below 1 s
        the beam narrows with the budget); while time remains, more skeletons are
        sampled and fitted (within the first half of the budget when Operon runs),
        then Operon searches for the rest (``refine``), when that rest holds its first
        generation; the search stops early once a fit is exact. ``None``: the first
        round only, every candidate fitted, and a fixed number of Operon generations
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
    search_settings : SearchSettings, default=None
        The search's tuning knobs (``nesymres_sklearn.search.settings.SearchSettings``:
        samples per round, the outer scaling, the network's share of ``max_time``
        with Operon, the reserve for the selection, ...); ``None``: their defaults.
    operon_settings : OperonSettings, default=None
        Operon's settings (``nesymres_sklearn.operon.settings.OperonSettings``:
        population, generations without ``max_time``, ...); ``None``: their defaults.

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
        ``attached``, ``baseline``, ``polynomial``, ``scaled``, ``linear``, ``power``,
        ``decomposed``, ``operon`` or ``constant``; a pruned row keeps the origin of the
        row it was pruned from). Rows that use a variable the data do not support
        (:mod:`.search.variable_support`) are left out.
    best_index_ : int
        Row of ``equations_`` holding ``expression_``.
    timings_ : dict
        Seconds spent in ``encoding``, ``decoding``, ``constant_fitting``,
        ``decomposition`` (its parts' searches included), ``reduction`` (finding the
        combinations of features the network works on), ``refinement`` and
        ``selection`` during the last ``fit``.
    features_seen_by_network_ : ndarray of int
        Columns of ``X`` that the network worked on: all of them, the rest after a
        power-law factor of the others was divided out of ``y``, those in the
        combinations it worked on, or the most relevant ones.
    network_inputs_ : list of str
        What each of the network's variables stood for: a feature's name, or a
        combination of features such as ``x1*x2/x3`` or ``x2 - x1``.
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
        "search_settings": [SearchSettings, None],
        "operon_settings": [OperonSettings, None],
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
        search_settings=None,
        operon_settings=None,
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

        X, y, weights = self._validated(X, y, sample_weight)
        operon = None if self.refine is None else _operon_stage(required=self.refine == "operon")
        moment = time.perf_counter()
        network = neural_search.load_network(self.model, self.revision, self.device)
        loading = time.perf_counter() - moment  # the first fit of a process loads it; not part of max_time
        settings = self.search_settings or SearchSettings()
        rng = check_random_state(self.random_state)
        X, y, weights = self._subsample(X, y, weights, rng)
        operon_settings = self.operon_settings or OperonSettings()
        budget = settings.budget(self.max_time, refined=operon is not None)
        if operon is not None and not _holds_operon(budget, operon_settings, len(y)):
            operon, budget = None, settings.budget(self.max_time, refined=False)
        self._start_fitted_attributes()
        self.timings_["loading"] = loading
        if np.ptp(y) == 0:
            return self._fit_constant(float(y[0]))
        self._scaling = Scaling.for_data(X, y)
        problem = Problem(self._scaling.scale_X(X), self._scaling.scale_y(y), weights)
        request = SearchRequest(
            self.decoding, self.beam_size, self.n_restarts, self.n_jobs, int(rng.randint(2**31)), settings
        )
        decomposed = self._decomposition_stage(neural_search, network, problem, request, budget)
        rows = self._network_stage(neural_search, network, problem, request, budget, refined=operon is not None)
        rows.extend(decomposed)
        if operon is not None:
            moment = time.perf_counter()
            found, self.refinement_ = operon(rows, problem, operon_settings, request.seed, budget)
            rows.extend(found)
            if self.refinement_ is not None:  # skipped when a row of the network fits exactly
                self.timings_["refinement"] = time.perf_counter() - moment
        self._select(rows, problem, request.seed)
        warn_few_points(len(problem.y), len(self._fitted[self.best_index_][1]))
        logger.info(
            "Selected %s (%d candidates, %d rounds) in %.3fs",
            self.expression_,
            len(rows),
            self.n_rounds_,
            budget.elapsed(),
        )
        return self

    def _validated(self, X, y, sample_weight) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """The parameters checked; ``X``, ``y`` as float64 and the sample weights
        normalised to mean 1, without the points of weight 0."""
        self._validate_params()
        check_target(y)
        check_columns(X)
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True, ensure_min_samples=MIN_POINTS)
        warn_repeated_columns(X, getattr(self, "feature_names_in_", [f"x{i}" for i in range(X.shape[1])]))
        y = y.astype(np.float64)  # integers count as numbers
        if sample_weight is None:
            return X, y, None
        weights = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
        kept = weights > 0
        if kept.sum() < MIN_POINTS:
            raise ValueError(
                f"Only {int(kept.sum())} points have a positive sample_weight; at least {MIN_POINTS} are needed."
            )
        return X[kept], y[kept], weights[kept] / weights[kept].mean()

    def _subsample(self, X, y, weights, rng) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """At most ``max_points`` of the points, drawn with ``rng``."""
        if len(X) <= self.max_points:
            return X, y, weights
        keep = rng.choice(len(X), size=self.max_points, replace=False)
        return X[keep], y[keep], None if weights is None else weights[keep] / weights[keep].mean()

    def _start_fitted_attributes(self) -> None:
        names = getattr(self, "feature_names_in_", [f"x{i}" for i in range(self.n_features_in_)])
        self._symbols = feature_symbols(names)
        self.timings_ = dict.fromkeys(
            (
                "loading",
                "encoding",
                "decoding",
                "constant_fitting",
                "decomposition",
                "reduction",
                "refinement",
                "selection",
            ),
            0.0,
        )
        self.n_rounds_ = 0
        self.features_seen_by_network_ = np.arange(self.n_features_in_)
        self.network_inputs_ = [str(symbol) for symbol in self._symbols]
        self.refinement_ = None

    def _fit_constant(self, value: float) -> NeSymReSRegressor:
        warnings.warn(f"y is constant ({value!r}); the fitted equation is that constant.", UserWarning, stacklevel=4)
        self._scaling = Scaling.identity(self.n_features_in_)
        rows = CandidateRows()
        rows.add(Skeleton(("c",)), np.array([value]), 0.0, 0.0, "constant")
        self._set_table(rows.table(self.complexity_penalty, 1.0, 1.0, self._expression))
        return self

    def _network_stage(
        self, neural_search, network, problem: Problem, request: SearchRequest, budget: Budget, refined: bool
    ) -> CandidateRows:
        """The network's candidates, fitted, over all features (with the linear and
        the power-law candidates when the network sees only some of them). When a
        power-law factor of the other features splits off (:mod:`.search.power_factor`),
        the network works on the rest and its skeletons come back times that factor.
        Otherwise, when ``y`` depends on at most the network's variables' worth of
        combinations of the features (:mod:`.search.reduction`), the network works on
        those and its skeletons come back with them substituted."""
        n_variables = network.config.n_variables
        split = power_factor(problem.X, problem.y, n_variables, problem.weights)
        combined = None
        if split is None and request.settings.reduce and problem.X.shape[1] > n_variables:
            moment = time.perf_counter()
            # the reduction has half of the network's time; decoding and fitting keep the rest
            end = None if budget.network_end is None else budget.network_end.halfway()
            combined = reduction(problem.X, problem.y, n_variables, request.seed, end)
            self.timings_["reduction"] = time.perf_counter() - moment
        features = self._features_for_network(problem.X, problem.y, n_variables, request.seed, refined, split, combined)
        target = problem.y if split is None else split.target(problem.X, problem.y)
        inputs = problem.X[:, features] if combined is None else combined.features(problem.X)
        seen = Problem(inputs, target, problem.weights)
        logger.info("Searching %d points with %s (scaling %s)", len(problem.y), self.model, self._scaling)
        moment = time.perf_counter()
        found = neural_search.propose_and_fit(network, seen, request, budget)
        self.timings_["decoding"], self.timings_["constant_fitting"] = found.decoding_seconds, found.fitting_seconds
        self.timings_["encoding"] = max(
            0.0, time.perf_counter() - moment - found.decoding_seconds - found.fitting_seconds
        )
        self.n_rounds_ = found.rounds
        rows = CandidateRows()
        for index, (candidate, fit) in enumerate(zip(found.candidates, found.fits)):
            skeleton, constants, loss = on_features(candidate.skeleton, features), fit.constants, fit.mse
            if combined is not None:  # the same function of the same target: the loss stands
                skeleton, constants = combined.substituted(candidate.skeleton, constants)
            if split is not None:
                skeleton, constants = split.times(skeleton, constants)
                loss = mse(skeleton.program, problem.X, problem.y, constants, problem.weights)
            rows.add(skeleton, constants, loss, candidate.log_prob, candidate.origin, index < found.first_round)
        if len(features) < self.n_features_in_ or combined is not None:
            linear = linear_skeleton(self.n_features_in_)
            fit = fit_constants(
                linear.program, problem.X, problem.y, 1, np.random.default_rng(request.seed), None, problem.weights
            )
            rows.add(linear, fit.constants, fit.mse, float("-inf"), "linear")
            power = power_law(problem.X, problem.y, problem.weights)
            if power is not None:
                rows.add(*power, float("-inf"), "power")
        return rows

    def _decomposition_stage(
        self, neural_search, network, problem: Problem, request: SearchRequest, budget: Budget
    ) -> CandidateRows:
        """With more features than the network's variables (and
        ``search_settings.decompose``), equations assembled from separable parts that
        the network solves (:mod:`.search.decomposition`; origin ``"decomposed"``).
        Each part's search is its first round only (fixed work); none starts after
        ``budget.network_end``."""
        rows = CandidateRows()
        n_variables = network.config.n_variables
        if not request.settings.decompose or self.n_features_in_ <= n_variables:
            return rows
        # Imported when the stage runs (it is off by default): the estimator stays light to import.
        from .search.decomposition import decomposed_candidates

        moment = time.perf_counter()

        def solve(part: Problem):
            found = neural_search.propose_and_fit(network, part, request, Budget.start(None, refined=False))
            return [(c.skeleton, fit.constants, fit.mse) for c, fit in zip(found.candidates, found.fits)]

        for skeleton, constants, loss in decomposed_candidates(
            problem, n_variables, request.seed, solve, budget.network_end
        ):
            rows.add(skeleton, constants, loss, float("-inf"), "decomposed")
        self.timings_["decomposition"] = time.perf_counter() - moment
        return rows

    def _select(self, rows: CandidateRows, problem: Problem, seed: int) -> None:
        """``equations_``, ``best_index_`` and ``expression_``: the best row pruned, rows
        with variables the data do not support set aside (shuffled with ``seed``), the
        selected constants re-spelled exactly where the fit allows. Fixed work, never
        cut by the clock: the same rows give the same equation."""
        moment = time.perf_counter()
        rows.add_pruned(problem, self.complexity_penalty, seed)
        self._set_table(rows.table(self.complexity_penalty, problem.scale, self._loss_scale(), self._expression))
        self._make_readable(problem)
        self.timings_["selection"] = time.perf_counter() - moment

    def _features_for_network(
        self,
        X: np.ndarray,
        y: np.ndarray,
        n_variables: int,
        seed: int,
        refined: bool,
        split: PowerFactor | None = None,
        combined: Reduction | None = None,
    ) -> np.ndarray:
        """All columns when the network takes them, else the rest of a power-law
        ``split``, the columns of the ``combined`` features, or the most relevant ones
        (with a warning that says which, and whether Operon, ``refined``, searches over
        all of them)."""
        if split is not None:
            features = split.rest
        elif combined is not None:
            features = combined.columns
        else:
            features = relevant_features(X, y, n_variables, seed)
        if len(features) < X.shape[1] or combined is not None:
            names = ", ".join(str(self._symbols[j]) for j in features)
            rest = (
                "Operon searches over all of them"
                if refined
                else "install pyoperon and pass refine='operon' to search over all of them"
            )
            if combined is not None:
                written = ", ".join(combined.describe(self._symbols))
                chosen = f"{written}, the combinations of the features that y depends on in the data"
            elif split is None:
                chosen = f"the {n_variables} most relevant to y ({names}; mutual information and rank correlation)"
            else:
                factor = ", ".join(str(self._symbols[j]) for j in split.exponents)
                chosen = f"{names}, with y divided by a power law of {factor} that the data show"
            warnings.warn(
                f"X has {X.shape[1]} features but the model {self.model!r} takes {n_variables} variables: the network "
                f"works on {chosen}, and a linear and a power-law candidate use all; {rest}.",
                UserWarning,
                stacklevel=4,
            )
        self.features_seen_by_network_ = features
        self.network_inputs_ = (
            [str(self._symbols[j]) for j in features] if combined is None else combined.describe(self._symbols)
        )
        return features

    def predict(self, X, index=None):
        """Evaluate the fitted equation on ``X`` (shape ``(n_samples, n_features_in_)``).

        ``index`` picks another row of ``equations_`` (default: ``best_index_``;
        negative as in Python, ``-1`` the last). A ``RuntimeWarning`` names the points
        outside the equation's domain, where the prediction is NaN or infinite.
        """
        check_is_fitted(self, "expression_")
        check_columns(X)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        skeleton, constants, _ = self._fitted[self._row(index)]
        return warn_outside_domain(self._scaling.unscale_y(evaluate(skeleton, constants, self._scaling.scale_X(X))))

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
        n_rows = len(self.equations_)
        if not (isinstance(index, Integral) and -n_rows <= index < n_rows):
            raise IndexError(
                f"index must be a row of equations_ (0 to {n_rows - 1}, or -{n_rows} to -1 from the end), "
                f"got {index!r}."
            )
        return int(index) % n_rows

    def _expression(self, skeleton: Skeleton, constants: np.ndarray, exact: list | None = None) -> sympy.Expr:
        """The row's equation over the features: as written, or with ``exact``
        constants, the units folded into them and SymPy's automatic evaluation (the
        selected row: a canonical expression, equal to itself after pickling)."""
        if exact is None:
            return self._scaling.unscale_expression(skeleton.expression(constants, self._symbols), self._symbols)
        expression = tidy_numbers(skeleton.expression(exact, self._symbols, evaluate=True))
        unscaled = self._scaling.unscale_expression(expression, self._symbols, evaluate=True)
        return folded(unscaled)

    def _make_readable(self, problem: Problem) -> None:
        """Re-spell the selected equation's constants exactly where the fit allows."""
        row = self.best_index_
        skeleton, constants, _ = self._fitted[row]
        exact = exact_constants(skeleton, constants, problem.X, problem.y, problem.weights)
        values = np.array([float(c) for c in exact])
        self._fitted[row] = (skeleton, values, exact)
        with np.errstate(over="ignore"):
            self.equations_.loc[row, "loss"] = (
                mse(skeleton.program, problem.X, problem.y, values, problem.weights) * self._loss_scale()
            )
        self.expression_ = self._expression(*self._fitted[row])
        self.equations_.loc[row, "expression"] = self.expression_

    def _loss_scale(self) -> np.float64:
        """Losses in the search's units times this are in the units of ``y`` (inf for
        ``y`` near the largest float64)."""
        with np.errstate(over="ignore"):
            return np.float64(self._scaling.y_scale) ** 2

    def _set_table(self, table: CandidateTable) -> None:
        """``equations_``, ``best_index_``, ``expression_`` and the fitted rows behind them."""
        self.equations_, self._fitted, self.best_index_ = table.equations, table.fitted, table.best_index
        self.expression_ = self.equations_.loc[self.best_index_, "expression"]
