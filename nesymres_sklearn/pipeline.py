"""One fit of one target, from validated data to the fitted attributes: the estimator
hands its parameters and data to :func:`run_fit` and stores what comes back.

The order (``docs/architecture.md``): load the network (and Operon, pint), subsample,
split the budget, parse the units; then the plan (:func:`plan`: the identities, the
route and the network with its looks, the guesses and plain rows, the noise level and
the law under noise, Operon's generations), the continuation of the candidate sources until the budget ends
(:mod:`.search.scheduler`), and the selection. This module imports torch, SymPy, pandas
and the search: the estimator loads it on its first fit.
"""

from __future__ import annotations

import logging
import time
import warnings
from copy import deepcopy
from dataclasses import asdict, dataclass, replace

import numpy as np
import pandas as pd
from joblib import effective_n_jobs
from sklearn.utils import check_random_state

from . import neural_search
from .attributes import FittedAttributes, timed_stages
from .expression.skeleton import Skeleton
from .expression.tokens import variable_index
from .guesses import Guesses
from .inputs import subsample, warn_explains_little, warn_few_points
from .neural_search import NetworkSampler, PartialLineLook, ResidualLook, SubsetLook
from .operon.plan import holds_operon, operon_islands, operon_stage, without_operon
from .operon.settings import OperonSettings, whole_seconds
from .progress import progress
from .restrictions import Restrictions
from .search.budget import Budget, Calibration
from .search.fitted import CandidateRows, Fitted
from .search.identities import identity_rows
from .search.identities_under_noise import (
    AngleLawUnderNoise,
    IdentityUnderNoise,
    PursuitUnderNoise,
    identities_to_the_noise,
    noisy_identity_rows,
    noisy_identity_sizes,
)
from .search.looks import LOOK_NAMES
from .search.noise import noise_std
from .search.problem import Problem
from .search.scaling import Scaling
from .search.scheduler import ContinuationState, Scheduler, Shares, Source, StopCondition, data_fingerprint
from .search.selection.final import select
from .search.selection.table import CandidateTable, tabulate
from .search.settings import SearchRequest, SearchSettings
from .search.variables.features import least_squares_line, linear_skeleton
from .search.variables.plain import plain_rows
from .search.variables.routing import route
from .search.views import Chain, Identity, View, back_rows
from .shared_setting import one_blas_thread
from .uncertainty import SelectedUncertainty, selected_uncertainty
from .units.parsing import unit_registry
from .units.stage import Dimensionless, Units, fitted_attributes
from .writing.export import feature_symbols
from .writing.writer import Writer, write_selected

logger = logging.getLogger(__name__)
#: The parameters that a ``warm_start`` fit may change and still continue the search.
CONTINUING = frozenset({"max_time", "verbose", "warm_start", "early_stop_condition"})


@dataclass
class FitOutcome:
    """What one fit returns to the estimator: its public ``attributes``, and the state
    ``predict`` and a ``warm_start`` fit read (``uncertainty``, the ``fitted`` rows, the
    ``writer``, the search's ``state``: ``None`` for a constant ``y``)."""

    attributes: FittedAttributes
    uncertainty: SelectedUncertainty
    fitted: list
    writer: Writer
    state: ContinuationState | None


@dataclass(frozen=True)
class Plan:
    """What the plan hands the continuation: its ``rows``, the ``columns`` the network
    read and what its variables stood for (``inputs``), the network's sources of the
    continuation (its ``sampler`` first; none when it did not run) and what Operon ran
    (``refinement``)."""

    rows: CandidateRows
    columns: np.ndarray
    inputs: list[str]
    network_sources: list[Source]
    refinement: dict | None
    noise: float


#: The plan's step of the law under noise (:func:`law_under_noise`), as ``plan_`` names it.
LAW_UNDER_NOISE = "identity under noise"


def run_fit(params: dict, X, y, weights, names, units_given: tuple, previous, importing: float) -> FitOutcome:
    """One fit of ``y`` on validated ``X`` (feature ``names``) with the estimator's
    ``params`` (``get_params()``), ``units_given`` (``X_units``, ``y_units``,
    ``constants``) and the ``previous`` fit's search state (continued when
    ``warm_start`` and the data are the same); ``importing``: seconds the first fit spent
    importing this module, counted in ``timings_["loading"]``. Progress messages on
    stderr with ``verbose`` (:func:`.progress.progress`); every step on one BLAS thread
    (:func:`.shared_setting.one_blas_thread`)."""
    with progress(params["verbose"]), one_blas_thread():
        return _run_fit(params, X, y, weights, names, units_given, previous, importing)


def _run_fit(params: dict, X, y, weights, names, units_given: tuple, previous, importing: float) -> FitOutcome:
    symbols = feature_symbols(names)
    guesses = Guesses.parse(params["guesses"], names, symbols)
    restrictions = Restrictions.parse(params["operators"], params["max_complexity"])
    moment = time.perf_counter()
    refine = params["refine"]
    operon = None if refine is None else operon_stage(required=refine == "operon")  # imports pyoperon
    if operon is not None and (message := without_operon(restrictions.operators)) is not None:
        warnings.warn(message, UserWarning, stacklevel=4)
        operon = None
    X_units, y_units, constants = units_given
    if X_units is not None or y_units is not None:
        unit_registry()  # pint's definitions, read once per process: loading, as the network
    network = neural_search.load_network(params["model"], params["revision"], params["device"])
    timings = dict.fromkeys(timed_stages(LOOK_NAMES), 0.0)
    timings["loading"] = importing + time.perf_counter() - moment  # the first fit loads it; not in max_time
    settings = params["search_settings"] or SearchSettings()
    rng = check_random_state(params["random_state"])
    shaping = {name: value for name, value in params.items() if name not in CONTINUING}
    fingerprint = data_fingerprint(X, y, weights, *units_given, repr(sorted(shaping.items())))
    warm = previous if params["warm_start"] and previous is not None and previous.fingerprint == fingerprint else None
    X, y, weights = subsample(X, y, weights, params["max_points"], rng) if warm is None else warm.points
    operon_settings = params["operon_settings"] or OperonSettings()
    max_time = params["max_time"]
    calibration = Calibration() if warm is None else warm.calibration  # this fit's own, or its search's
    budget = settings.budget(max_time, 0.0 if operon is None else whole_seconds(operon_settings, len(y), calibration))
    searches = operon is not None  # Operon's islands may run in the continuation
    if operon is not None and not holds_operon(budget, operon_settings, len(y), calibration):
        operon, budget = None, replace(budget, refinement_seconds=0.0)
    # within max_time
    units = Units.parse(X_units, y_units, len(names), constants, names, X, y, settings)
    if np.ptp(y) == 0:
        return constant_fit(Problem(X, y, weights), symbols, timings, units, budget, params["complexity_penalty"])
    scaling = Scaling.for_data(X, y, settings.offset_ratio) if restrictions.rescales else Scaling.identity(len(names))
    problem = scaling.forward(Problem(X, y, weights))
    request = SearchRequest(
        params["decoding"],
        settings.bounded_beam(params["beam_size"], network.config.cache_bytes_per_beam),
        params["n_restarts"],
        params["n_jobs"],
        int(rng.randint(2**31)),
        settings,
        params["complexity_penalty"],
        reads_groups=units is not None and units.groups.n_groups > 0,
    )
    if warm is None:
        logger.info("Searching %d points with %s (scaling %s)", len(y), params["model"], scaling)
        stages = Stages(
            network,
            params["model"],
            problem,
            scaling,
            request,
            budget,
            units,
            symbols,
            guesses,
            restrictions,
            operon,
            operon_settings,
            calibration,
            timings,
        )
        done = plan(stages)
        sources = list(done.network_sources)
        if sources:  # the network ran: its look at the residuals too, at the sampler's (the first's) pace
            sources.append(ResidualLook(network, problem, request, sources[0].decoding_seconds))
        if searches:  # pyoperon is installed and the operators allow its search
            n_islands = effective_n_jobs(params["n_jobs"])
            islands = operon_islands(
                problem, operon_settings, request.seed, restrictions.operators, n_islands, calibration
            )
            sources.insert(0, islands)
        if _noisy(done.noise, problem, settings):
            # their turns start where the time left holds the plan's law under noise again
            seconds = max((step.seconds for step in budget.plan if step.unit == LAW_UNDER_NOISE), default=0.0)
            if "angle" in settings.noisy_identity_forms:
                sources.insert(0, AngleLawUnderNoise(problem, settings.noise_ratio * done.noise, settings, seconds))
            searched = any(step.unit == LAW_UNDER_NOISE and step.status == "done" for step in budget.plan)
            if settings.noisy_identity_unknowns and not searched:  # the identities to the noise, where cut short
                sources.insert(0, IdentityUnderNoise(problem, done.noise, settings, seconds, request.seed))
            if settings.noisy_identity_pursuit:  # the matching pursuit's law, first
                sources.insert(0, PursuitUnderNoise(problem, done.noise, settings, seconds))
        warm = ContinuationState(
            fingerprint,
            (X, y, weights),
            done.rows,
            sources,
            Shares(),
            done.columns,
            done.inputs,
            done.refinement,
            calibration,
            done.noise,
        )
    else:
        logger.info("Continuing the previous fit's search (warm_start) from %d candidates", len(warm.rows))
        budget.record("warm start", 0.0, f"continued from {len(warm.rows)} rows")
    rows = warm.rows.copy()  # the selection adds its pruned rows
    noise = warm.noise
    shares = deepcopy(warm.shares)  # a fit that raises leaves the previous search's shares and sources
    sources = warm.copied_sources()
    writer = Writer(scaling, symbols, () if units is None else units.named(), restrictions.operators)
    moment = time.perf_counter()
    scheduler = Scheduler(
        sources,
        problem,
        params["complexity_penalty"],
        budget,
        StopCondition(params["early_stop_condition"], writer.loss_scale),
        settings.continuation_steps,
        settings.continuation_rows,
        kept=restrictions.kept,
        report=logger.info if params["verbose"] else None,
        shares=shares,
    )
    added = scheduler.run(rows)
    rows.extend(added)
    noise = float(np.fmin(noise, residual_noise(added, len(problem.y))))  # the plan's rows bound it already
    timings["continuation"] = time.perf_counter() - moment
    pace = warm.calibration.operon_seconds_per_evaluation_point
    budget.record("calibration", 0.0, f"Operon: {pace:.3g} s per model and point")
    continued = replace(warm, rows=rows.copy(), sources=sources, shares=shares, noise=noise)
    moment = time.perf_counter()
    keep = None if units is None else units.keep(problem, settings.units_min_r2, writer)
    started = budget.clock()
    penalty = params["complexity_penalty"]
    table = select(rows, problem, penalty, writer, request.seed, keep, budget.end, settings, noise, budget.pace())
    reach = settings.noise_ratio * noise if np.isfinite(noise) else 0.0
    table = write_selected(table, problem, writer, budget.end, reach, settings, budget.pace())
    budget.record("selection", budget.clock() - started, budget.status(budget.end))
    if units is not None:  # a warning when the law's units are not y's
        units = units.checked(table.equations.loc[table.best_index, "expression"], writer.symbols)
    warn_few_points(len(y), len(table.fitted[table.best_index][1]))
    log_fvu = table.equations.loc[table.best_index, "log_fvu"]
    warn_explains_little(X, y, log_fvu, restrictions.operators, max_time)
    timings["selection"] = time.perf_counter() - moment
    outcome = fitted(
        table, writer, problem, timings, budget.plan, warm.columns, warm.inputs, warm.refinement, units, noise
    )
    outcome.state = continued
    logger.info("Selected %s (%d candidates) in %.3fs", outcome.attributes.expression_, len(rows), budget.elapsed())
    return outcome


def noise_level(rows: CandidateRows, problem: Problem, settings: SearchSettings, budget: Budget) -> float:
    """The noise level in the search's units, from the plan's ``rows`` before Operon's
    generations: with an exact row, the root of its (weighted) mean squared error (the
    points hold a law to rounding); else estimated (:func:`.search.noise.noise_std`)
    until halfway to the fit's end (the law under noise, the held-out choice and the
    snapped constants read it), and at most the residual of the candidates
    (:func:`residual_noise`)."""
    exact = [loss for loss in rows.losses if problem.is_exact(loss)]
    if exact:
        return float(np.sqrt(min(exact)))
    estimate = noise_std(problem, settings, None if budget.end is None else budget.end.halfway(), budget.pace())
    return float(np.fmin(estimate, residual_noise(rows, len(problem.y))))


def residual_noise(rows: CandidateRows, n: int) -> float:
    """The smallest root mean squared error of the rows, each corrected for its fitted
    constants (``mse * n / (n - k)``, unbiased for a row that holds the law): a row's
    residual holds the noise plus its own misfit, so it bounds the noise from above where
    the local fits of :func:`.search.noise.noise_std` read a law's curvature as noise; NaN
    without a row that reads a feature (a constant's residual is ``y``'s spread) and has
    fewer than ``n / 2`` constants."""
    variances = [
        loss * n / (n - len(constants))
        for skeleton, constants, loss in zip(rows.skeletons, rows.constants, rows.losses)
        if np.isfinite(loss) and len(constants) < n / 2 and any(variable_index(t) is not None for t in skeleton.tokens)
    ]
    return float(np.sqrt(min(variances))) if variances else float("nan")


@dataclass(frozen=True)
class Stages:
    """What the plan's stages read: the ``network`` (the estimator's ``model``), the ``problem`` in the search's units
    (``scaling``), the ``request``, the ``budget``, the ``units`` (or ``None``), the
    features' ``symbols``, the user's ``guesses`` and ``restrictions``, the ``operon``
    stage (or ``None``) with its ``operon_settings``, the fit's ``calibration`` and the
    ``timings`` they fill in."""

    network: object
    model: str
    problem: Problem
    scaling: Scaling
    request: SearchRequest
    budget: Budget
    units: Units | None
    symbols: tuple
    guesses: Guesses
    restrictions: Restrictions
    operon: object
    operon_settings: OperonSettings
    calibration: Calibration
    timings: dict


def plan(stages: Stages) -> Plan:
    """The plan of work before the continuation: the identities, the network with its
    route and looks, the guesses and plain rows, Operon's generations."""
    problem, budget, units, restrictions = stages.problem, stages.budget, stages.units, stages.restrictions
    groups = Identity() if units is None else units.dimensionless(problem)  # the groups' view, if any
    identities, ending = CandidateRows(), False
    if stages.request.settings.identities:
        moment, started = time.perf_counter(), budget.clock()
        settings = stages.request.settings
        identities, ending = identity_rows(problem, settings, budget.network_end, stages.request.seed)
        if isinstance(groups, Dimensionless) and not len(identities):  # the groups' identity (angles by sine, cosine)
            identities = groups.identity_rows(problem, budget.network_end, stages.scaling.x_scales, settings)
        stages.timings["identities"] = time.perf_counter() - moment
        budget.record("identities", budget.clock() - started, budget.status(budget.network_end))
    n_variables = stages.network.config.n_variables
    network_sources = []
    if ending and units is None and problem.X.shape[1] > n_variables and len(restrictions.kept(identities)):
        # exact to rounding where the network reads a part: the law (with all in view,
        # the network may still write a simpler one, which the selection then prefers)
        logger.info("An exact identity: the route and the network are skipped")
        budget.record("network", 0.0, "skipped: an exact identity")
        rows, columns, inputs = identities, np.arange(0), []
    elif budget.network_end is not None and not budget.network_end.holds(
        stages.request.settings.network_min_seconds * budget.pace()
    ):
        budget.record("network", 0.0, "skipped: no time")  # the route and a first decoding would overrun
        rows, columns, inputs = identities, np.arange(0), []
        rows.add(Fitted(linear_skeleton([]), *least_squares_line(problem, [])), origin="baseline")  # a model still
    else:
        rows, columns, inputs, network_sources = network_search(stages, groups)
        rows.extend(identities)
    rows.extend(stages.guesses.rows(problem, stages.scaling, stages.request))
    rows.extend(restrictions.plain_rows(problem))
    rows.extend(
        plain_rows(
            rows,
            problem,
            stages.request.complexity_penalty,
            stages.request.settings,
            stages.request.seed,
            budget.end,
            budget.pace(),
        )
    )  # none exact: linear, quadratic
    rows = restrictions.kept(rows)
    settings = stages.request.settings
    noise = noise_level(rows, problem, settings, budget)
    if _noisy(noise, problem, settings):
        rows.extend(restrictions.kept(law_under_noise(problem, noise, settings, budget, stages.request.seed)))
    refinement = None
    if stages.operon is not None:
        moment = time.perf_counter()
        operon_rows, refinement = stages.operon(
            rows,
            problem,
            stages.operon_settings,
            stages.request.seed,
            budget,
            restrictions.operators,
            stages.calibration,
        )
        rows.extend(restrictions.kept(operon_rows))
        if refinement is not None:  # skipped when a row of the network fits exactly
            stages.timings["refinement"] = time.perf_counter() - moment
    return Plan(
        rows, columns, inputs, network_sources, refinement, float(np.fmin(noise, residual_noise(rows, len(problem.y))))
    )


def _noisy(noise: float, problem: Problem, settings: SearchSettings) -> bool:
    """Whether the noise level exceeds :attr:`.SearchSettings.noisy_identity_level` of
    ``y``'s spread, and is at most :attr:`.SearchSettings.noisy_identity_max_level` of it."""
    level, spread = settings.noisy_identity_level, np.sqrt(problem.scale)
    return (
        settings.identities
        and level is not None
        and level * spread < noise <= settings.noisy_identity_max_level * spread
    )


def law_under_noise(
    problem: Problem, noise: float, settings: SearchSettings, budget: Budget, seed: int = 0
) -> CandidateRows:
    """The law under noise before Operon's generations, which it seeds, where the time
    before the refinement's end holds it (``SearchSettings.noisy_identity_seconds`` at
    the fit's pace): the identities that hold to the noise
    (:func:`.identities_under_noise.identities_to_the_noise`, systems of
    ``settings.noisy_identity_unknowns`` unknowns, then as many as the points allow,
    seeded by ``seed``; until halfway to that end), else the law of the lowest
    information criterion that fits to the noise
    (:func:`.identities_under_noise.noisy_identity_rows`)."""
    deadline = budget.refinement_end
    if deadline is not None and not deadline.holds(settings.noisy_identity_seconds * budget.pace()):
        budget.record(LAW_UNDER_NOISE, 0.0, "skipped: no time")
        return CandidateRows()
    started = budget.clock()
    half = None if deadline is None else deadline.halfway()  # the law of the criterion and Operon keep the rest
    found = CandidateRows()
    if settings.noisy_identity_unknowns:  # () : not at all
        found = identities_to_the_noise(problem, noise, settings, half, seed, noisy_identity_sizes(settings))
    if not len(found):
        found = noisy_identity_rows(problem, noise, settings, deadline)
    budget.record(LAW_UNDER_NOISE, budget.clock() - started, budget.status(half))  # "cut": identities cut short
    return found


def network_search(stages: Stages, groups: View):
    """The decomposition's, the network's and the units' rows over the features, the
    columns the network read, what its variables stood for, and its sources for the
    continuation: its sampler and, where it read only the most relevant features (no
    units), the other subsets of ``settings.subset_features``, and with more features
    than it has variables (no units), the partial line look. The network reads the
    problem through one chain of views (:class:`.search.views.Chain`): the ``groups``
    (with units) and the route."""
    network, problem, request, budget, units = (
        stages.network,
        stages.problem,
        stages.request,
        stages.budget,
        stages.units,
    )
    decomposed, decomposition = neural_search.decomposed_rows(network, problem, request, budget)
    if len(decomposed):
        budget.record("decomposition", decomposition, budget.status(budget.network_end))
    n_variables = network.config.n_variables
    views = Chain.of(problem).then(groups)
    searched = views.problem
    started = budget.clock()
    seen = route(searched, n_variables, request.seed, request.settings, budget.network_end)
    budget.record("route", budget.clock() - started)
    views = views.then(seen)
    message = seen.warning(groups.symbols(stages.symbols), stages.model, n_variables, refined=stages.operon is not None)
    if message is not None:
        warnings.warn(message, UserWarning, stacklevel=6)
    found = neural_search.network_rows(network, searched, seen, request, budget)
    rows = back_rows(groups, found.rows, problem) if units is None else units.rows(found.rows, problem, groups)
    rows.extend(decomposed)
    columns = views.back_columns(np.arange(seen.problem.X.shape[1]))
    stages.timings.update(found.timings | {"decomposition": decomposition, "reduction": seen.reduction_seconds})

    def back(fits: list[Fitted]) -> CandidateRows:
        sampled = CandidateRows()
        for fit in fits:
            sampled.add(views.back(fit, problem), origin="sample")
        return sampled

    decoding = max((step.seconds for step in budget.plan if step.unit.startswith("decode")), default=0.0)
    sources = [NetworkSampler(network, seen.problem, request, back, decoding)]
    if units is None and seen.reads_the_most_relevant and request.settings.subset_features > n_variables:
        sources.append(SubsetLook(network, problem, request, seen.columns, seen.relevance_scores, decoding))
    if units is None and problem.X.shape[1] > n_variables:
        sources.append(PartialLineLook(network, problem, request, seen.relevance_scores, decoding))
    return rows, columns, [str(symbol) for symbol in views.symbols(stages.symbols)], sources


def constant_fit(problem: Problem, symbols, timings: dict, units: Units | None, budget: Budget, penalty: float):
    """A constant ``y``: that constant, with a warning."""
    value = float(problem.y[0])
    warnings.warn(f"y is constant ({value!r}); the fitted equation is that constant.", UserWarning, stacklevel=5)
    writer = Writer(Scaling.identity(problem.X.shape[1]), symbols)
    rows = CandidateRows()
    rows.add(Fitted(Skeleton(("c",)), np.array([value]), 0.0), log_prob=0.0, origin="constant")
    table = tabulate(rows, penalty, 1.0, 1.0, writer)
    columns, inputs = np.arange(problem.X.shape[1]), list(map(str, symbols))
    budget.record("constant", budget.elapsed())
    return fitted(table, writer, problem, timings, budget.plan, columns, inputs, None, units, 0.0)


def fitted(table: CandidateTable, writer: Writer, problem, timings, steps, columns, inputs, refinement, units, noise):
    """Every fitted attribute (:class:`.FittedAttributes`) and the state of ``predict``,
    from what the stages returned (``noise``: the noise level in the search's units)."""
    uncertainty = selected_uncertainty(table, problem, writer.scaling)
    X_units, y_units, pi_groups, physical_constants = fitted_attributes(units, writer.symbols)
    attributes = FittedAttributes(
        expression_=table.equations.loc[table.best_index, "expression"],
        equations_=table.equations,
        best_index_=table.best_index,
        constants_std_=uncertainty.covariance.std,
        noise_std_=noise * abs(writer.scaling.y_scale),
        timings_=timings,
        plan_=pd.DataFrame([asdict(step) for step in steps], columns=["unit", "seconds", "status"]),
        features_seen_by_network_=columns,
        network_inputs_=inputs,
        refinement_=refinement,
        X_units_=X_units,
        y_units_=y_units,
        pi_groups_=pi_groups,
        physical_constants_=physical_constants,
    )
    return FitOutcome(attributes, uncertainty, table.fitted, writer, None)
