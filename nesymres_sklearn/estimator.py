"""The scikit-learn estimator :class:`NeSymReSRegressor`."""

from __future__ import annotations

import logging
import os
import time
import warnings
from dataclasses import asdict, replace
from numbers import Integral, Real
from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from .attributes import PER_TARGET, FittedAttributes, timed_stages
from .callables import ExportMixin
from .display import ReadableMixin
from .inputs import (
    MIN_POINTS,
    check_columns,
    r2_score_scaled,
    subsample,
    validated,
    warn_explains_little,
    warn_few_points,
    warn_outside_domain,
)
from .multioutput import fit_targets, n_targets, predict_targets, show_targets
from .operon.settings import OperonSettings
from .progress import progress
from .search.settings import DECODINGS, SearchRequest, SearchSettings

# Importing the estimator loads neither torch, SymPy, pandas, pint nor pyoperon: the first
# fit imports them with the search (counted in timings_["loading"]), unpickling with the
# fitted state (tests/test_architecture.py).
if TYPE_CHECKING:
    import sympy

    from .expression.skeleton import Skeleton
    from .search.budget import Budget
    from .search.problem import Problem
    from .search.selection.final import Writer
    from .search.selection.table import CandidateRows, CandidateTable
    from .units.stage import Dimensionless, Units

logger = logging.getLogger(__name__)


class NeSymReSRegressor(ReadableMixin, ExportMixin, RegressorMixin, BaseEstimator):
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
        Skeletons of the full decoding: beams kept by beam search (the paper's
        default is 32), or samples drawn; a narrower beam (``search_settings.first_beam``)
        is decoded and fitted first.
    decoding : {"beam", "sample"}, default="beam"
        How the network proposes skeletons: the model's beam search, or sampling
        from the network.
    n_restarts : int, default=4
        Starts of the constant fitting per skeleton; the first sets every constant to 1.
    max_points : int, default=500
        Larger training sets are subsampled (seeded by ``random_state``) to this many
        points for both the network and the constant fitting.
    complexity_penalty : float, default=0.01
        Added per prefix token of the skeleton to the log of the fraction of variance
        unexplained when selecting the equation. When no candidate is exact, held-out
        folds then choose among the rows of the Pareto front, and linear and quadratic
        candidates over all the features compete (``search_settings.held_out_folds``).
    max_time : float, default=None
        Seconds for the whole ``fit`` (not counting the model's first load); from 0.1 s
        up it returns within about ``1.1 * max_time + 0.05`` s. A fit runs one plan of
        work (``plan_``): a narrow beam and its fits, the full beam and its fits, the
        second looks, Operon's generations (``refine``), the selection. ``None`` runs
        it to the end (fixed work); ``max_time`` cuts the same plan short: the
        network's steps until its share (at least ``network_share`` of the budget,
        more when Operon's whole work needs less), then Operon's chunks of
        generations, then the selection. A budget that holds the whole plan gives the
        fixed-work fit; the fit stops early once a candidate is exact.
    refine : {"auto", "operon", None}, default="auto"
        ``"operon"``: the network's best fitted candidates seed the population of
        Operon's genetic programming (``pyoperon``), which searches over every
        feature; its best equations join the candidates. Skipped when a candidate of
        the network already fits exactly. ``"auto"``: ``"operon"`` when pyoperon is
        installed (a dependency on Linux x86-64, the ``operon`` extra elsewhere), else
        the network alone; ``refinement_`` says whether Operon ran. ``None``: the
        network alone. When ``operators`` leave Operon no function of its search, a
        warning, and the network alone (with ``"auto"`` and ``"operon"`` alike).
    device : str, default="auto"
        Torch device for the network: ``"auto"`` (CUDA if available), ``"cpu"``,
        ``"cuda"``, ``"cuda:1"``, ...
    random_state : int, RandomState instance or None, default=None
        Seeds the subsampling, the samples and the starts of the constant fitting.
    n_jobs : int, default=None
        Processes fitting constants in parallel (joblib convention; ``None`` means 1).
    verbose : int, default=0
        When positive, progress (each decoding, Operon, the selected equation)
        on stderr, or through the user's logging set-up when there is one (logger
        ``nesymres_sklearn``, INFO).
    search_settings : SearchSettings, default=None
        The search's tuning knobs (``nesymres_sklearn.search.settings.SearchSettings``:
        the first beam, the outer scaling, the network's share of ``max_time``
        with Operon, the reserve for the selection, ...); ``None``: their defaults.
    operon_settings : OperonSettings, default=None
        Operon's settings (``nesymres_sklearn.operon.settings.OperonSettings``:
        population, generations, ...); ``None``: their defaults.
    guesses : list of str or sympy.Expr, default=None
        Equations you suspect, over the feature names (``"2.5*x0*sin(x1)"``): fitted like
        any candidate, they compete in the selection and seed Operon (:mod:`.guesses`).
    operators : list of str, default=None
        The operators candidates may use, by the operator table's names (``"sin"``,
        ``"pow"``, ``"ln"``, ...) or the aliases of PySR and Operon: ``"+"``, ``"*"``,
        ``"log"``, ``"-"`` and ``"sub"`` (``add`` and ``mul``: ``x0 - x1`` is
        ``x0 + (-1)*x1``), ``"/"`` (``div`` and ``pow``: the network writes ``x0/x1`` as
        ``x0*x1**-1``), ``"^"`` and ``"square"`` (``pow``, any power). Others are set
        aside, and Operon searches with those of these it has (``add``, ``mul``, ``div``,
        ``sin``, ``cos``, ``exp``, ``ln``, ``sqrt``); with none of them (``["tan"]``), a
        warning, and the network works alone (:mod:`.restrictions`). ``None``: all that
        the network knows.
    max_complexity : int, default=None
        Candidates with more prefix tokens (``equations_``'s ``complexity``) are set aside.

    With more features than the model has variables, the network works on the most
    relevant ones (mutual information and rank correlation with ``y``, of each feature and
    of products of pairs; a warning names them), and a linear candidate over all features
    joins the candidates.

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
        ``residual``, ``reciprocal``, ``inverted``, ``exhaustive``, ``decomposed``,
        ``guess``, ``operon``, ``units`` or ``constant``; a pruned row keeps the origin
        of the row it was pruned from). Rows that use a variable the data do not support
        (:mod:`.search.selection.variable_support`) are left out.
    best_index_ : int
        Row of ``equations_`` holding ``expression_``.
    constants_std_ : ndarray
        Standard errors of the selected row's ``c_0, c_1, ...`` by the delta method (:mod:`.uncertainty`).
    noise_std_ : float
        The standard deviation of the noise of ``y``, estimated from the data alone by local
        polynomial fits of each point's neighbours (:mod:`.search.noise`), in the units of ``y``:
        0 for a constant ``y``, NaN with fewer points than the features plus 6. With
        ``sample_weight``, the weights count as inverse variances: a point of weight ``w``
        has the standard deviation ``noise_std_ * sqrt(m / w)``, ``m`` the mean of the positive weights.
    timings_ : dict
        Seconds of the last ``fit`` in ``loading`` (the imports of torch, SymPy and the
        search, and the model, once per process; not counted in ``max_time``),
        ``identities`` (the search for an exact rational law, :mod:`.search.identities`),
        ``encoding``, ``decoding``, ``constant_fitting``,
        ``residual``, ``reciprocal``, ``inverted`` and ``exhaustive`` (the network's
        second looks, at what its best fit leaves unexplained, at ``1/y``, at its
        dimensionless groups the other way up, and the exhaustive search of laws of one
        variable), ``decomposition`` (its parts' searches included), ``reduction``
        (finding the combinations of features the network works on), ``refinement`` and
        ``selection``.
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
    plan_ : DataFrame
        The plan of work of the last ``fit`` as it ran, one row per step in order
        (``unit``, ``seconds``, ``status``: ``"done"``, ``"cut"`` by ``max_time``, or
        ``"skipped: <why>"``): the route, the network's decodings and fits (a narrow
        beam, then the full one), its second looks, Operon's generations, the
        selection. Without ``max_time`` every step runs to its end; a ``max_time`` only
        cuts the same steps (``docs/usage.md``).
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Feature names, when ``X`` had string column names.
    X_units_, y_units_, pi_groups_ : list of str, str and list of str, or None
        The units given to ``fit`` and the features' dimensionless groups (:mod:`.units`).
    physical_constants_ : dict
        The law's dimensional constants (declared in ``fit``'s ``constants`` or found to
        close the units): symbol -> ``{"value": value in SI base units (None for one
        fitted), "source": pint's name or the units given}``; ``{}`` without.

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
        "guesses": [list, None],
        "operators": [list, tuple, None],
        "max_complexity": [Interval(Integral, 1, None, closed="left"), None],
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
        guesses=None,
        operators=None,
        max_complexity=None,
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
            Non-negative weights of the squared errors in the constant fitting and
            the selection; points of weight 0 are left out entirely.
        X_units, y_units : list of str and str, default=None
            Units of the columns of ``X`` (by position) and of ``y`` as pint reads them
            (``"kg/m^3"``, ``""``): the network reads dimensionless groups (``docs/usage.md``).
            With several targets, ``y_units`` is one unit for all or a list, one per column.
        constants : dict of str to str, default=None
            Dimensional constants of the law, with units: symbol -> a physical constant
            that pint knows (``{"c": "speed_of_light"}``; the law is written with ``c``
            where its numbers are ``c``'s) or the units of a constant to fit
            (``{"k": "J/K"}``). Without them, when the features alone cannot close the
            units, the fewest known constants that do (``c``, ``hbar``, ``k_B``,
            ``epsilon_0``, ``G``, ``q_e``, ``m_e``, ``g``) join; ``physical_constants_``
            lists them (:mod:`.units.constants`).

        Returns
        -------
        self : NeSymReSRegressor
            A fit that raises leaves the estimator as it was before the call.
        """
        previous = self.__dict__.copy()
        try:
            with progress(self.verbose):
                return self._fit(X, y, sample_weight, X_units, y_units, constants)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(previous)
            raise

    def _fit(self, X, y, sample_weight, X_units, y_units, constants):
        moment = time.perf_counter()
        # torch, SymPy, pandas and the search: needed to fit, not to import the estimator
        from . import neural_search
        from .expression.export import feature_symbols
        from .guesses import Guesses
        from .operon.plan import holds_operon, operon_stage, refinement_seconds, without_operon
        from .restrictions import Restrictions
        from .search.identities import identity_rows
        from .search.looks import LOOK_NAMES
        from .search.noise import noise_std
        from .search.problem import Problem
        from .search.scaling import Scaling
        from .search.selection.final import Writer, select
        from .search.selection.table import CandidateRows
        from .search.variables.plain import plain_rows
        from .units.parsing import unit_registry
        from .units.stage import Units

        importing = time.perf_counter() - moment  # the first fit of a process imports them: in "loading"

        if n_targets(y) > 1:
            return fit_targets(self, X, y, sample_weight, X_units, y_units, constants)
        X, y, weights = validated(self, X, y, sample_weight)
        names = getattr(self, "feature_names_in_", [f"x{i}" for i in range(self.n_features_in_)])
        symbols = feature_symbols(names)
        guesses = Guesses.parse(self.guesses, names, symbols)
        restrictions = Restrictions.parse(self.operators, self.max_complexity)
        moment = time.perf_counter()
        operon = None if self.refine is None else operon_stage(required=self.refine == "operon")  # imports pyoperon
        if operon is not None and (message := without_operon(restrictions.operators)) is not None:
            warnings.warn(message, UserWarning, stacklevel=3)
            operon = None
        if X_units is not None or y_units is not None:
            unit_registry()  # pint's definitions, read once per process: loading, as the network
        network = neural_search.load_network(self.model, self.revision, self.device)
        timings = dict.fromkeys(timed_stages(LOOK_NAMES), 0.0)
        timings["loading"] = importing + time.perf_counter() - moment  # the first fit loads it; not in max_time
        settings = self.search_settings or SearchSettings()
        rng = check_random_state(self.random_state)
        X, y, weights = subsample(X, y, weights, self.max_points, rng)
        operon_settings = self.operon_settings or OperonSettings()
        budget = settings.budget(self.max_time, 0.0 if operon is None else refinement_seconds(operon_settings, len(y)))
        if operon is not None and not holds_operon(budget, operon_settings, len(y)):
            operon, budget = None, replace(budget, refinement_seconds=0.0)
        units = Units.parse(X_units, y_units, self.n_features_in_, constants, names, X, y)  # within max_time
        if np.ptp(y) == 0:
            return self._fit_constant(Problem(X, y, weights), symbols, timings, units, budget)
        scaling = Scaling.for_data(X, y) if restrictions.rescales else Scaling.identity(self.n_features_in_)
        problem = Problem(scaling.scale_X(X), scaling.scale_y(y), weights)
        noise = noise_std(problem, settings)  # in the search's units (search/noise.py)
        request = SearchRequest(
            self.decoding,
            self.beam_size,
            self.n_restarts,
            self.n_jobs,
            int(rng.randint(2**31)),
            settings,
            self.complexity_penalty,
            reads_groups=units is not None and units.groups.n_groups > 0,
        )
        logger.info("Searching %d points with %s (scaling %s)", len(y), self.model, scaling)
        reduced = None if units is None else units.dimensionless(problem)  # the groups' problem, if any
        identities, ending = CandidateRows(), False
        if settings.identities:
            moment, started = time.perf_counter(), budget.clock()
            identities, ending = identity_rows(problem, budget.network_end)
            if reduced is not None and not len(identities):  # the groups' identity (its angles by sine and cosine)
                identities = reduced.identity_rows(problem, budget.network_end, scaling.x_scales)
            timings["identities"] = time.perf_counter() - moment
            budget.record("identities", budget.clock() - started, budget.status(budget.network_end))
        n_variables = network.config.n_variables
        if ending and units is None and problem.X.shape[1] > n_variables and len(restrictions.kept(identities)):
            # exact to rounding where the network reads a part: the law (with all in view,
            # the network may still write a simpler one, which the selection then prefers)
            logger.info("An exact identity: the route and the network are skipped")
            budget.record("network", 0.0, "skipped: an exact identity")
            rows, columns, inputs = identities, np.arange(0), []
        else:
            rows, columns, inputs, searched = self._network_search(
                network, problem, request, budget, units, reduced, symbols, refined=operon is not None
            )
            rows.extend(identities)
            timings |= searched
        rows.extend(guesses.rows(problem, scaling, request))
        rows.extend(restrictions.plain_rows(problem))
        rows.extend(plain_rows(rows, problem, self.complexity_penalty, budget.end))  # none exact: linear, quadratic
        rows = restrictions.kept(rows)
        refinement = None
        if operon is not None:
            moment = time.perf_counter()
            operon_rows, refinement = operon(
                rows, problem, operon_settings, request.seed, budget, restrictions.operators
            )
            rows.extend(restrictions.kept(operon_rows))
            if refinement is not None:  # skipped when a row of the network fits exactly
                timings["refinement"] = time.perf_counter() - moment
        moment = time.perf_counter()
        writer = Writer(scaling, symbols, () if units is None else units.named())
        keep = None if units is None else units.keep(problem, settings.units_min_r2, writer)
        started = budget.clock()
        table = select(rows, problem, self.complexity_penalty, writer, request.seed, keep, budget.end, settings, noise)
        budget.record("selection", budget.clock() - started, budget.status(budget.end))
        warn_few_points(len(y), len(table.fitted[table.best_index][1]))
        log_fvu = table.equations.loc[table.best_index, "log_fvu"]
        warn_explains_little(X, y, log_fvu, restrictions.operators, self.max_time)
        timings["selection"] = time.perf_counter() - moment
        self._set_fitted(table, writer, problem, timings, budget.plan, columns, inputs, refinement, units, noise)
        logger.info("Selected %s (%d candidates) in %.3fs", self.expression_, len(rows), budget.elapsed())
        return self

    def _network_search(
        self,
        network,
        problem: Problem,
        request: SearchRequest,
        budget: Budget,
        units: Units | None,
        reduced: Dimensionless | None,
        symbols,
        refined,
    ) -> tuple[CandidateRows, np.ndarray, list[str], dict]:
        """The decomposition's, the network's (with its route) and the units' rows over
        the features of ``problem`` (``reduced``: its groups' problem, with units), the
        columns the network read, what its variables stood for, and the seconds of these
        stages (``refined``: whether Operon follows)."""
        from . import neural_search  # loaded by _fit, as the rest
        from .search.variables.routing import route

        decomposed, decomposition = neural_search.decomposed_rows(network, problem, request, budget)
        if len(decomposed):
            budget.record("decomposition", decomposition, budget.status(budget.network_end))
        n_variables = network.config.n_variables
        searched, seen_symbols = (problem, symbols) if reduced is None else (reduced.problem, reduced.symbols(symbols))
        started = budget.clock()
        seen = route(searched, n_variables, request.seed, request.settings.reduce, budget.network_end)
        budget.record("route", budget.clock() - started)
        message = seen.warning(seen_symbols, self.model, n_variables, refined=refined)
        if message is not None:
            warnings.warn(message, UserWarning, stacklevel=4)
        found = neural_search.network_rows(network, searched, seen, request, budget)
        rows = found.rows if units is None else units.rows(found.rows, problem, reduced)
        rows.extend(decomposed)
        columns = seen.columns if reduced is None else reduced.columns(seen.columns)
        timings = found.timings | {"decomposition": decomposition, "reduction": seen.reduction_seconds}
        return rows, columns, seen.inputs(seen_symbols), timings

    def _fit_constant(
        self, problem: Problem, symbols, timings: dict, units: Units | None, budget: Budget
    ) -> NeSymReSRegressor:
        from .expression.skeleton import Skeleton  # loaded by _fit, as the rest
        from .search.fitted import Fitted
        from .search.scaling import Scaling
        from .search.selection.final import Writer
        from .search.selection.table import CandidateRows

        value = float(problem.y[0])
        warnings.warn(f"y is constant ({value!r}); the fitted equation is that constant.", UserWarning, stacklevel=4)
        writer = Writer(Scaling.identity(self.n_features_in_), symbols)
        rows = CandidateRows()
        rows.add(Fitted(Skeleton(("c",)), np.array([value]), 0.0), log_prob=0.0, origin="constant")
        table = rows.table(self.complexity_penalty, 1.0, 1.0, writer)
        columns, inputs = np.arange(self.n_features_in_), list(map(str, symbols))
        budget.record("constant", budget.elapsed())
        self._set_fitted(table, writer, problem, timings, budget.plan, columns, inputs, None, units)
        return self

    def _set_fitted(
        self,
        table: CandidateTable,
        writer: Writer,
        problem,
        timings,
        plan,
        columns,
        inputs,
        refinement,
        units,
        noise: float = 0.0,
    ):
        """Every fitted attribute (:class:`.FittedAttributes`) and the private state of
        ``predict``, from what the stages returned."""
        import pandas as pd  # loaded by _fit, as the rest

        from .uncertainty import selected_uncertainty
        from .units.stage import fitted_attributes

        self.__dict__.pop("estimators_", None)  # a previous fit's targets
        self._uncertainty = selected_uncertainty(table, problem, writer.scaling)
        self._fitted, self._writer = table.fitted, writer
        X_units, y_units, pi_groups, physical_constants = fitted_attributes(units, writer.symbols)
        FittedAttributes(
            expression_=table.equations.loc[table.best_index, "expression"],
            equations_=table.equations,
            best_index_=table.best_index,
            constants_std_=self._uncertainty.covariance.std,
            noise_std_=noise * abs(writer.scaling.y_scale),
            timings_=timings,
            plan_=pd.DataFrame([asdict(step) for step in plan], columns=["unit", "seconds", "status"]),
            features_seen_by_network_=columns,
            network_inputs_=inputs,
            refinement_=refinement,
            X_units_=X_units,
            y_units_=y_units,
            pi_groups_=pi_groups,
            physical_constants_=physical_constants,
        ).set_on(self)

    def predict(self, X, index=None, return_std=False):
        """Evaluate the fitted equation on ``X`` (shape ``(n_samples, n_features_in_)``).

        ``index`` picks another row of ``equations_`` (default: ``best_index_``;
        negative as in Python, ``-1`` the last). A ``RuntimeWarning`` names the points
        outside the equation's domain, where the prediction is NaN or infinite.
        ``return_std=True`` (the selected row only): also a fresh point's standard deviation (:mod:`.uncertainty`).
        """
        check_is_fitted(self, "expression_")
        if hasattr(self, "estimators_"):
            return predict_targets(self.estimators_, X, index, return_std)
        check_columns(X)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        from .expression.export import evaluate  # loaded by the fit or the unpickling

        skeleton, constants, _ = self._fitted[self._row(index)]
        scaling = self._writer.scaling
        prediction = scaling.unscale_y(evaluate(skeleton, constants, scaling.scale_X(X)))
        prediction = warn_outside_domain(prediction)
        return (prediction, self._uncertainty.prediction_std(X, self._row(index))) if return_std else prediction

    def score(self, X, y, sample_weight=None) -> float:
        """R² of ``predict(X)`` against ``y``, as scikit-learn's ``r2_score`` (averaged
        over the targets), in float64 without overflow: ``y`` and the prediction are
        divided by a power of two near ``y``'s largest magnitude before squaring, so a
        ``y`` near 1e300 scores as it would near 1 (:func:`.inputs.r2_score_scaled`)."""
        return r2_score_scaled(y, self.predict(X), sample_weight)

    def sympy(self, index=None) -> sympy.Expr:
        """The fitted equation (or row ``index`` of ``equations_``) in SymPy (a list with several targets)."""
        check_is_fitted(self, "expression_")
        if hasattr(self, "estimators_"):
            return [column.sympy(index) for column in self.estimators_]
        return self.equations_.loc[self._row(index), "expression"]

    def latex(self, index=None) -> str:
        """The fitted equation (or row ``index`` of ``equations_``) in LaTeX (a list with several targets)."""
        from .expression.export import to_latex  # loaded by the fit or the unpickling

        expression = self.sympy(index)
        return [to_latex(e) for e in expression] if isinstance(expression, list) else to_latex(expression)

    def __getstate__(self):
        state = dict(super().__getstate__())  # a copy: the estimator keeps its table
        if "estimators_" in state:  # each target pickles its own table
            return {name: value for name, value in state.items() if name not in PER_TARGET}
        if "equations_" in state:  # SymPy re-evaluates unpickled trees: rebuild them as written
            state["equations_"] = state["equations_"].drop(columns=["expression", "skeleton"])
            state.pop("expression_", None)
        return state

    def __setstate__(self, state):
        super().__setstate__(state)
        if "estimators_" in state:
            show_targets(self)
        elif "equations_" in state:
            expressions = [self._expression(*fitted) for fitted in self._fitted]
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

    def _expression(self, skeleton: Skeleton, constants: np.ndarray, exact: list | None = None) -> sympy.Expr:
        return self._writer(skeleton, constants, exact)
