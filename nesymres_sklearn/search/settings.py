"""What the search is asked to do (no torch needed: the estimator validates these
without loading the network)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

from .budget import Budget, monotonic_clock

#: How the network proposes skeletons: its beam search, or samples.
DECODINGS = ("beam", "sample")
#: Who runs the starts of the constant fitting (:attr:`SearchSettings.constant_optimizer`).
CONSTANT_OPTIMIZERS = ("operon", "minpack")
#: When the network also reads ``1/y`` (:attr:`SearchSettings.reciprocal`): always, with units only, never.
RECIPROCAL_LOOKS = (True, "units", False)


@dataclass(frozen=True)
class SearchSettings:
    """The search's tuning knobs (the estimator's ``search_settings``). The defaults
    were chosen on the validation sets (``benchmarks/studies/search_settings.py``).

    Attributes
    ----------
    first_beam : int, default=8
        The network's first decoding is this narrow beam (or this many samples), whose
        candidates are fitted before the full ``beam_size`` is decoded and its new
        candidates fitted: a short budget has the network's likeliest candidates first
        (with and without ``max_time``: one plan, see :mod:`.budget`). A ``first_beam``
        of at least ``beam_size`` decodes once.
    n_scaled : int, default=8
        The best fitted candidates of each decoding tried with an outer ``c + c*f``
        (:mod:`.linear_scaling`); 0 turns that off.
    lm_x_scale : float or str, default="jac"
        MINPACK's scaling of the constants in the constant fitting (SciPy's
        ``x_scale``): ``"jac"`` by the Jacobian's column norms, 1.0 none.
    constant_optimizer : {"operon", "minpack"}, default="operon"
        Who runs each start of the candidates' constant fitting: Operon's
        Levenberg-Marquardt in C++ (float32, near-exact fits polished by MINPACK in
        float64; :mod:`nesymres_sklearn.operon.fitting`), or MINPACK alone. Without
        pyoperon, or with sample weights, MINPACK runs either way.
    network_share : float, default=0.5
        With a refinement (Operon) and a ``max_time`` too short for the whole plan, the
        network's stages (decodings, fits, second looks) take at least this share of
        the budget; Operon has the rest, and no more than its whole work needs.
    reserve_share, reserve_seconds : float, default=0.2, 0.3
        Kept at the end of ``max_time`` for the selection and the readable constants:
        this share of it, at most this many seconds.
    identities : bool, default=True
        Before the route and the network, look for a law that is a rational function of
        the features or the square root of one, exact to rounding, by the null vector
        of a linear system (:mod:`.identities`; milliseconds, any number of features).
        It joins the candidates; Operon is then skipped, as after any exact candidate.
        Without units, with more features than the network's variables and at most
        quadratic in each feature (``identity_ending_degree``), it also ends the
        search there: the route and the network are skipped. Else the network still
        runs: on a narrow range a smooth law can be a rational function to rounding
        (``1/(exp(x/(2*pi)) - 1)`` on [0.02, 0.97]), and the selection prefers the
        network's simpler form.
    decompose : bool, default=False
        With more features than the network's variables, split ``y`` into additively
        or multiplicatively separable parts of at most that many features, let the
        network solve each and add the assembled equations to the candidates
        (:mod:`.decomposition`).
    residual : bool, default=True
        When the network reads only the features most relevant to ``y`` (no power-law
        split or combinations account for the others), it also reads the features most relevant to what its best
        fit leaves unexplained, and its fits of that residual are added to
        the best fit (:mod:`.residual`).
    reciprocal : {"units", True, False}, default="units"
        With ``y`` of one sign, the network also reads ``1/y`` after its first
        decodings, and ``c/g`` of its fits ``g`` join the
        candidates (:mod:`.reciprocal`): ``"units"`` in a fit with units only (where
        ``y`` over a monomial is a function of dimensionless groups), ``True`` always,
        ``False`` never. Without units it lost 2-3 points of A1 at 1 and 3 s on
        ``validation-wc`` (``benchmarks/results/search-settings/reciprocal-validation.md``);
        with units, together with ``inverted_groups``, +2.4 [0.0, 5.9] at 1 s and -1.2
        [-3.5, 0.0] at 3 s on the laws of ``benchmarks/studies/units_looks.py``
        (``benchmarks/results/units/looks-*.md``), and more of them within R² 0.99.
    inverted_groups : bool, default=True
        With units, when the network reads dimensionless groups, it also reads their
        reciprocals after its first decodings
        (``c/v`` for ``v/c``), and its fits join the candidates with the groups the
        other way up (:mod:`.inverted`).
    exhaustive : bool, default=True
        When the network reads one variable (one feature, or one dimensionless group
        with units), every expression of it of up to five nodes is also fitted as ``a * x**k * g(c*x) + b`` after the
        network's looks, unless one of them is exact (:mod:`.exhaustive`).
    reduce : bool, default=True
        With more features than the network's variables and no power-law factor
        split off, look for at most that many combinations of the features that ``y``
        depends on (groups of powers such as ``x1*x2/x3``, differences such as
        ``x2 - x1``) and let the network work on them (:mod:`.reduction`).
    identity_ending_degree : int, default=2
        An identity ends the search (the network is not asked) only when its ``P`` and
        ``Q`` are at most of this degree in each feature: a rational function that
        matches a transcendental law to rounding needs a higher degree unless its
        variable spans a few percent (on ``validation-many``, ``log(x3)`` on [6.6, 9.4]
        took degree 4; Padé's (2, 2) of ``exp`` is exact to rounding on a range of 0.02).
    continuation_steps : int, default=None
        The continuation's turns after the plan (:mod:`.scheduler`): ``None`` until
        ``max_time`` ends (none without it: the plan alone); a number caps them, and
        without ``max_time`` runs that many (fixed work, reproducible with ``random_state``).
    continuation_rows : int, default=32
        The continuation's best rows (and its Pareto front's, as many) that reach the
        selection, whose work grows with the rows.
    max_beam : int, default=4096
        The most skeletons one decoding proposes: a larger ``beam_size`` is bounded to
        it, with a warning. Without ``max_time`` every beam is decoded and fitted: 4,096
        took 17 s and 0.8 GB on the 2-core development machine (bundled model, 150
        points, ``refine=None``), 5,000 took 21 s and 1 GB, and 100,000 ran past 240 s
        and 10 GB.
    beam_memory : float, default=1e9
        Bytes the decoding's state may take: the beam is also bounded to the beams
        whose attention cache (``ModelConfig.cache_bytes_per_beam``, at the model's full
        length) fits in them, with a warning (5,425 beams of the bundled model, 184 kB
        each; 813 at the paper's sizes, ModelConfig's defaults).
    offset_ratio : float or None, default=1000
        When ``y``'s mean exceeds this many standard deviations, its offset is taken
        out before the search and put back into the law (:mod:`.scaling`): the
        variation of ``1e9 + x0*sin(x1)`` lies below the network's half precision and
        Operon's float32. Above every ratio of the validation sets' targets (at most
        288, ``validation-wc`` and ``-nc``, 500 points, seed 0, but the one whose ``y``
        is constant to float64's rounding), so their fits are unchanged; ``None``
        never takes an offset out. Measured by ``benchmarks/studies/offsets.py``.
    units_min_r2 : float, default=0.99
        With units (``X_units``, ``y_units``), the dimensionally inconsistent
        candidates are set aside while the best consistent one explains at least this
        share of ``y``'s variance; else all stay (:mod:`nesymres_sklearn.units.stage`).
        Chosen on the validation set of ``benchmarks/studies/units_threshold.py``.
    noise_quantile : float, default=0.25
        The quantile of the local fits' scaled squared residuals that estimates the
        noise (``noise_std_``, :mod:`.noise`): lower ones are less inflated where the
        law curves more than a local polynomial. Within a factor of 1.5 of the truth on
        69% of validation-wc/nc/fc at noise 0.01 and 85% at 0.1, against 64% and 82% for
        the median (``benchmarks/studies/noise_level.py``; 500 points, seed 0).
    noise_neighbourhoods : tuple of float, default=(1.5, 2.0, 3.0)
        The local fits of the noise estimate read this many times as many neighbours as
        their polynomial has coefficients (at least 4 more), each size tried.
    noise_max_terms : int, default=20
        The local fits of the noise estimate go up to degree 3 while their polynomial has
        at most this many coefficients (degree 3 in 3 features, 2 in 5): a fit of 56
        coefficients (degree 3 in 5 features) took 1.8 s on 500 points.
    noise_points : int, default=1000
        The noise estimate predicts at most this many points (drawn with a fixed seed),
        each from its neighbours among all the points: on 10,000 points of 20 features
        it took 0.2 s, more than ``max_time=0.1`` (issue 65's busy-machine grid). The
        quartile of 1,000 Gaussian ratios puts a relative standard error of about 6% on
        the estimate, and the smallest of such noisier quartiles runs a few percent
        lower (0.89-0.98 of the truth against 0.94-1.00 from all 4,000 points of a
        3-feature law, ``tests/test_noise.py``); not tuned further.
    held_out_folds : int, default=5
        When no candidate is exact, the selection refits the rows of the Pareto front on
        all of this many folds of the points but one (one Gauss-Newton step) and reads
        their errors on the one left out (:mod:`.selection.held_out`); below 2, the score
        alone selects.
    held_out_standard_errors : float, default=0.5
        The simplest row whose held-out error exceeds the lowest by at most this many
        standard errors of their paired differences is selected (1: the
        one-standard-error rule). Chosen on diabetes and Friedman 1 and 3, each rule
        replayed on the same tables (``benchmarks/studies/held_out_rule.py``): at 1 s,
        0 to 0.5 gave median test R² 0.439 / 0.894 / 0.889 and 1 gave 0.406 on diabetes
        in one run, 0.406 against 0.443 in another; at 10 s all four tie within 0.004.
        0.5 keeps the simpler row more often (a spurious column lost in 20 of 20 test
        fits, 19 of 20 with 0).
    held_out_noise_errors : float, default=3.0
        Before that rule, the simplest row whose held-out mean squared error lies within
        this many standard errors (``sqrt(2/n)`` of it) above the estimated noise
        variance (``noise_std_``) is selected: it explains the points down to the noise.
        Three, as the estimate runs about 10% low on laws that the points resolve
        (``benchmarks/studies/noise_level.py``); not tuned further.
    held_out_evaluations : int, default=40
        The shuffled copies of columns that the held-out choice's test of the chosen
        row's variables refits at most (:func:`.selection.held_out.unsupported_on_held_out`;
        one Jacobian each, about 1.5 ms on 500 points of a 20-token row): fixed work that
        reads no clock, as the held-out errors' own; 40 tests 8 variables; 0 turns the
        test off. Its cost on black-box data, where weak columns fail it: diabetes' test
        R² at 1 s 0.377-0.405 with it, 0.416-0.438 without (Friedman 1 and 3 within
        0.01; ``benchmarks/studies/black_box.py``, on a loaded machine). Testing against
        the copies' mean instead kept diabetes at 0.418 but let added columns through
        on three of eight FastSRB laws that printed one before.
    """

    first_beam: int = 8
    n_scaled: int = 8
    lm_x_scale: float | str = "jac"
    constant_optimizer: str = "operon"
    network_share: float = 0.5
    reserve_share: float = 0.2
    reserve_seconds: float = 0.3
    identities: bool = True
    decompose: bool = False
    residual: bool = True
    reciprocal: bool | str = "units"
    inverted_groups: bool = True
    exhaustive: bool = True
    reduce: bool = True
    identity_ending_degree: int = 2
    continuation_steps: int | None = None
    continuation_rows: int = 32
    max_beam: int = 4096
    beam_memory: float = 1e9
    offset_ratio: float | None = 1000.0
    units_min_r2: float = 0.99
    noise_quantile: float = 0.25
    noise_neighbourhoods: tuple[float, ...] = (1.5, 2.0, 3.0)
    noise_max_terms: int = 20
    noise_points: int = 1000
    held_out_folds: int = 5
    held_out_standard_errors: float = 0.5
    held_out_noise_errors: float = 3.0
    held_out_evaluations: int = 40

    def __post_init__(self):
        steps = self.continuation_steps
        if steps is not None and (not isinstance(steps, int) or isinstance(steps, bool) or steps < 0):
            raise ValueError(
                f"SearchSettings.continuation_steps must be None or a non-negative integer, "
                f"got {self.continuation_steps!r}."
            )
        for name, minimum in (
            ("first_beam", 1),
            ("n_scaled", 0),
            ("continuation_rows", 1),
            ("max_beam", 1),
            ("identity_ending_degree", 0),
            ("noise_max_terms", 1),
            ("noise_points", 1),
            ("held_out_folds", 0),
            ("held_out_evaluations", 0),
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or value < minimum:
                raise ValueError(f"SearchSettings.{name} must be an integer of at least {minimum}, got {value!r}.")
        for name in ("held_out_standard_errors", "held_out_noise_errors"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"SearchSettings.{name} must be non-negative, got {getattr(self, name)!r}.")
        if not 0 < self.noise_quantile < 1:
            raise ValueError(f"SearchSettings.noise_quantile must lie in (0, 1), got {self.noise_quantile!r}.")
        if not self.noise_neighbourhoods or min(self.noise_neighbourhoods) < 1:
            raise ValueError(
                "SearchSettings.noise_neighbourhoods must hold at least one factor, each at least 1, "
                f"got {self.noise_neighbourhoods!r}."
            )
        for name in ("network_share", "reserve_share"):
            if not 0 <= getattr(self, name) <= 1:
                raise ValueError(f"SearchSettings.{name} must lie in [0, 1], got {getattr(self, name)!r}.")
        if self.constant_optimizer not in CONSTANT_OPTIMIZERS:
            raise ValueError(
                f"SearchSettings.constant_optimizer must be one of {CONSTANT_OPTIMIZERS}, "
                f"got {self.constant_optimizer!r}."
            )
        if self.reciprocal not in RECIPROCAL_LOOKS:
            raise ValueError(f"SearchSettings.reciprocal must be one of {RECIPROCAL_LOOKS}, got {self.reciprocal!r}.")
        if not self.beam_memory > 0:
            raise ValueError(f"SearchSettings.beam_memory must be positive (bytes), got {self.beam_memory!r}.")
        if self.offset_ratio is not None and not self.offset_ratio > 0:
            raise ValueError(f"SearchSettings.offset_ratio must be positive or None, got {self.offset_ratio!r}.")
        if self.reserve_seconds < 0:
            raise ValueError(f"SearchSettings.reserve_seconds must be non-negative, got {self.reserve_seconds!r}.")

    def bounded_beam(self, size: int, bytes_per_beam: float) -> int:
        """``size`` (the estimator's ``beam_size``), bounded by ``max_beam`` and by the
        beams of ``bytes_per_beam`` that ``beam_memory`` holds, with a warning that says
        which bound and how to raise it."""
        by_memory = max(1, int(self.beam_memory // bytes_per_beam))
        bound = min(self.max_beam, by_memory)
        if size <= bound:
            return size
        reason = (
            f"the {self.max_beam} that a fit decodes and fits in about 20 s (SearchSettings.max_beam)"
            if bound == self.max_beam
            else f"the {by_memory} whose decoding state fits in {self.beam_memory:.3g} bytes "
            f"(SearchSettings.beam_memory; {bytes_per_beam:.3g} bytes each)"
        )
        warnings.warn(
            f"beam_size={size} is more than {reason}: the fit decodes {bound}. Pass "
            "search_settings=SearchSettings(max_beam=..., beam_memory=...) to allow more, with the time and memory "
            "they take.",
            UserWarning,
            stacklevel=5,
        )
        return bound

    def budget(
        self, max_time: float | None, refinement_seconds: float = 0.0, clock: Callable[[], float] = monotonic_clock
    ) -> Budget:
        """A :class:`Budget` that starts now, split by these settings (``refinement_seconds``:
        the estimated whole work of the refinement that follows the network, 0 for none)."""
        return Budget(
            clock(),
            max_time,
            refinement_seconds,
            clock=clock,
            network_share=self.network_share,
            reserve_share=self.reserve_share,
            reserve_seconds=self.reserve_seconds,
        )


@dataclass(frozen=True)
class SearchRequest:
    """One fit's search: ``decoding`` (``"beam"``, the model's beam search, or
    ``"sample"``) and ``size`` (beams, or samples) of the full decoding, the starts of
    the constant fitting, the processes fitting in parallel, the seed, the knobs, the
    selection's ``complexity_penalty`` (for candidates chosen term by term) and whether
    the network's inputs are dimensionless groups (``reads_groups``: a fit with units)."""

    decoding: str = "beam"
    size: int = 32
    n_restarts: int = 4
    n_jobs: int | None = None
    seed: int = 0
    settings: SearchSettings = field(default_factory=SearchSettings)
    complexity_penalty: float = 0.01
    reads_groups: bool = False
