"""What the search is asked to do (no torch needed: the estimator validates these
without loading the network)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

from .budget import Budget, monotonic_clock, process_clock

#: How the network proposes skeletons: its beam search, or samples.
DECODINGS = ("beam", "sample")
#: Who runs the starts of the constant fitting (:attr:`SearchSettings.constant_optimizer`).
CONSTANT_OPTIMIZERS = ("operon", "minpack")
INFORMATION_CRITERIA = ("bic", "aic", None)
#: When the network also reads ``1/y`` (:attr:`SearchSettings.reciprocal`): always, with units only, never.
RECIPROCAL_LOOKS = (True, "units", False)
#: The forms of the law under noise (:attr:`SearchSettings.noisy_identity_forms`).
NOISY_FORMS = frozenset({"rational", "root", "power", "angle"})
#: ``subset_features`` at most: the subsets are ranked all at once (16 features, five at a
#: time: 4,368 of them; the partial line look's one to three at a time: 696 of them, 1.8 s
#: on 512 points here).
MAX_SUBSET_FEATURES = 16


@dataclass(frozen=True)
class SearchSettings:
    """The search's tuning knobs (the estimator's ``search_settings``). The defaults
    were chosen on the validation sets (``benchmarks/studies/search_settings.py``).
    A value of the search that changes which equation a fit returns and that someone
    chose is one of the fields listed below (Attributes), each with what chose it; the
    numeric module constants that remain are listed by kind in the repository's
    ``tests/module_constants.txt``. A bad value raises a ``ValueError`` that names the
    field and the range it takes.

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
        this share of it, at most this many seconds; on a busy machine the continuation
        keeps it times the fit's pace (:meth:`.budget.Budget.pace`).
    network_min_seconds : float, default=0.06
        With ``max_time``, the route and the network run only when the time left
        before the network's end holds this many seconds at the fit's pace
        (:meth:`.budget.Budget.pace`; else ``plan_``'s
        ``network`` is ``skipped: no time``, and the identities and plain rows stand
        alone): the route, the narrow beam's decoding and its first fits of the
        6-feature law on 100 points took 36 ms on the 2-core development machine, and
        twice that beside a busy core (``benchmarks/studies/time_contract.py``).
    first_decode_seconds : float, default=0.04
        With ``max_time``, a search's first decoding starts only when the time left
        before its deadline holds this many seconds at the fit's pace
        (:meth:`.budget.Budget.pace`; a decoding cannot be cut, and the later ones
        need what the first took per beam): twice the 16-23 ms that the narrow beam of
        the 6- and 20-feature laws took on the 2-core development machine (44-90 ms
        beside a busy core).
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
    subset_features : int, default=8
        Where the network reads only the most relevant features (more features than its
        variables, no units), the continuation also has it read other subsets of them,
        drawn from this many most relevant, largest summed relevance first
        (:class:`nesymres_sklearn.neural_search.SubsetLook`); at most the network's
        variables turns that look off; at most ``MAX_SUBSET_FEATURES`` (16). The partial
        line look (more features than the network's variables, no units) draws the one to
        three features that its model does not hold linear from as many, whatever this
        value (:class:`nesymres_sklearn.neural_search.PartialLineLook`). On
        validation-many at 10 s (100 laws of 4-5 features, seed 0) against no subsets:
        A1 ood 23.0% both (one law gained, one lost), median training R² 0.957 against
        0.939.
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
    noise_least_stretch : float or None, default=0.1
        On ``noise_stretch_features`` or more features, the noise estimate's local fits
        also read neighbourhoods in the features stretched by the law's sensitivity to
        each (the root mean square of its partial derivative in a global quadratic fit,
        relative to the largest), each stretch at least this; ``None`` reads the
        standardised features alone. On 500 points of the validation sets
        (``benchmarks/studies/noise_level.py``), the share of estimates within 1.5x of
        the truth rose on validation-many (4-5 features); 0.1 and 0.01 gave the same
        shares (measured in ``docs/measured-data.md``).
    noise_stretch_features : int, default=4
        The stretched neighbourhoods are read on at least this many features. On the
        validation sets of one to three features they added one estimate within 1.5x in
        299 (at 0.01) for 30-60% more of the estimate's time, time that the identities to
        the noise need at ``max_time=1``; on four and five features (validation-many) ten
        points at 0.01 and five at 0.1.
    noise_max_terms : int, default=20
        The local fits of the noise estimate go up to degree 3 while their polynomial has
        at most this many coefficients (degree 3 in 3 features, 2 in 5): a fit of 56
        coefficients (degree 3 in 5 features) took 1.8 s on 500 points.
    noise_points : int, default=1000
        The noise estimate predicts at most this many points (drawn with a fixed seed),
        each from its neighbours among all the points: on 10,000 points of 20 features
        it took 0.2 s, more than ``max_time=0.1`` on a machine with a busy core. The
        quartile of 1,000 Gaussian ratios puts a relative standard error of about 6% on
        the estimate, and the smallest of such noisier quartiles runs a few percent
        lower (0.89-0.98 of the truth against 0.94-1.00 from all 4,000 points of a
        3-feature law, ``tests/test_noise.py``); not tuned further.
    noise_log_span : float or None, default=10.0
        The noise estimate's neighbourhoods read each feature of one sign whose largest
        magnitude is more than this many times its smallest, and whose median lies
        nearer the middle of its range in logarithms than as it is, by its logarithm: a
        law of quantities sampled over decades curves less there, and the local fits
        read less of it as noise. On FastSRB (a development set: many of its features
        are sampled over decades) the share of estimates within 1.5x of the truth rose
        from 43 / 66% to 49 / 78% at noise 0.001 / 0.01, at the same cost; on the
        validation sets and AI-Feynman no feature is read so (their estimates
        unchanged). One decade, not tuned; ``None`` reads every feature as it is.
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
        (``benchmarks/studies/noise_level.py``); not tuned further. The plain models
        (:data:`.selection.table.PLAIN_ORIGINS`) are models of data with no law and
        compete in the rule above only: under this one, with the estimate scaled
        (``held_out_noise_scale``), a line of two of diabetes's ten features fell within
        the band and was chosen over the line of all of them (test R² 0.362 against
        0.444 in one split).
    held_out_noise_scale : float, default=1.13
        That rule reads the estimated noise level times this: on the validation laws that
        the points resolve, the estimate's median is 0.887 of the truth at noise 0.01
        and 0.866 at 0.1 (``benchmarks/results/noise-level/validation.csv``), the
        smallest of its local fits' noisy quartiles; 1.13 centres it at noise 0.01.
        ``noise_std_`` stays the estimate: scaled, fewer of those laws' estimates lie
        within 1.5x of the truth (90.5% -> 85.2% at noise 0.01).
    held_out_plain_first : bool, default=True
        The plain models' structure is not chosen on the training points (the backward
        line's features are chosen on the held-out folds), so their held-out errors are
        honest where a searched row's run low: with it, they pass the information gate
        below whatever the training error says, and where a plain line
        (:data:`.selection.table.LINE_ORIGINS`) is consistent with the noise as well, the
        best such line wins over the simplest consistent searched row unless that row's
        held-out error is lower by more than ``held_out_standard_errors`` standard
        errors (the data's law is then a line plus noise); where no searched row is
        consistent with the noise, the best line within the margin of the lowest held-out
        error wins the same way over the simplest row within it where that is a searched
        row with variables (diabetes, one split at 10 s:
        a sampled row of three features, test R² 0.426, against the line of all ten,
        0.467; nineteenth session). Lines only: a quadratic holds
        a product law's monomials plus terms that fit the noise, so it would win over the
        law it contains (the replay in ``docs/measured-data.md``). Replayed on the validation
        laws' tables (noise 0.01 and 0.1 at 1 s, 0.01 at 10 s) it chooses the same laws,
        with the rule between rows within the margin as well (nineteenth session);
        on diabetes it chooses the line of all the features in place of a searched row of
        three in some splits (``benchmarks/results/noise-selection/plain-first.md``).
    information_criterion : {"aic", "bic"} or None, default="aic"
        Before the held-out folds, a row of the front stays only when no shorter row
        beats it on this criterion on the training points (``n log(mse)`` plus 2, or
        ``log(n)``, per constant, plus ``information_per_token`` per token;
        :func:`.selection.held_out.information_gate`): a longer row whose closer fit does
        not pay for its constants (Operon's rows that fitted the noise, whose structure
        the folds cannot refit) is set aside. None: the folds alone. Chosen on
        validation-nc/-wc at noise 0.01 and the black-box sets, each rule replayed on the
        same tables (``benchmarks/studies/selection_rules.py``): at 10 s, validation-nc
        recovered 20% with either criterion against 17.5% without (close: 55% against
        52.5%), validation-wc close 42.5% against 40%; at 1 s all within a point. On
        diabetes, "aic" kept test R² 0.443 at 1 s (0.403 at 10 s) and "bic" fell to 0.377.
    information_per_token : float, default=0.0
        The criterion's charge per token of a row (in units of ``log`` likelihood);
        1.0 lowered diabetes to 0.377 and changed no law.
    snap_level : float, default=0.95
        On noisy targets (an inexact fit), the selected row's constants become plain
        numbers (times a power of ten) within their error bars while the loss stays
        consistent with the noise: a likelihood-ratio test at this level
        (:func:`nesymres_sklearn.writing.readable.exact_constants`); 0 keeps them as fitted,
        as the backward line's always are (its features were kept by the held-out folds;
        :data:`.selection.table.FOLD_CHOSEN_ORIGINS`). Chosen on
        validation-nc and -wc at noise 0.01 and 0.1, 1 s, each level replayed on the same
        rows (``benchmarks/studies/selection_rules.py``): validation-nc recovered 12% ->
        18% at 0.01 and 0% -> 4% at 0.1 with 0.95 or 0.99; 0.95 moved fewer rows out of
        "close" (FVU <= 1e-4); validation-wc (arbitrary constants) unchanged.
    network_reads_smoothed : bool, default=False
        The network's first decoding reads each target replaced by its local polynomial
        fit (:func:`.noise.smoothed`), less noisy than the measured one; the constants
        are fitted to the measured targets. Off: on validation-nc, -wc and -fc (40 laws
        each, 500 points, 1 s) it changed recovery by at most one law a set and "close"
        (FVU <= 1e-4) by -7.5 to +5 points, each interval holding 0
        (``benchmarks/results/noise-search/network-smoothed-1s.md``).
    snap_chance : float, default=0.05
        Within an error bar a constant becomes a multiple of pi or a physical constant
        (:func:`nesymres_sklearn.writing.readable.simple_numbers`) only where a number
        drawn at random would lie as close to one as simple with at most this chance
        (:func:`~nesymres_sklearn.writing.readable.chance_match`; multiples of pi and of
        ``1/pi`` with numerator and denominator up to the candidate's: 6 per decade for
        ``2*pi``, 142 for ``7*pi/11``; within the bar itself, the 30 physical constants
        and inverses and their multiples by fractions of height up to 4, 90 per decade
        for ``epsilon_0/2``, 330 for ``3*hbar/4``), and so does a fraction that is not a
        short decimal times a power of ten (``6000/11``; 65 per
        decade up to 11): a wide bar holds one of them by chance (``662.607015*x2``, Planck's
        constant, for a diabetes coefficient of 650 +- 60). ``inf`` tries them within
        every bar. 0.05, the test's level: on validation-nc, -wc, -fc and -many at noise
        0.01 and 0.1 (40 laws each, 1 s) recovery moved by one law, within the run's
        spread (``benchmarks/results/noise-search/snap-chance-1s.md``). Under noise the
        multiples of pi and of the named numbers within ``readable_max_change`` of the
        fitted value pass the same rule (``9*pi/2`` for ``10*sqrt(2)``; ``docs/measured-data.md``,
        eighteenth session).
    noise_ratio : float, default=1.5
        A row's misfit is the noise's (not that of an approximate law) where its root
        mean squared error is at most this many times the estimated noise level
        (``noise_std_``): only then are its constants snapped (on clean data an
        approximation's constants would pass the test and be written as false
        fractions), and only then is a rational law of the identities' systems under
        noise a candidate. 1.5: the estimate lies within 1.5x of the truth or above it
        on the validation sets (``benchmarks/studies/noise_level.py``), so a law's own
        row passes.
    noisy_identity_level : float or None, default=1e-4
        Where no identity is exact and the estimated noise level exceeds this fraction
        of ``y``'s standard deviation, the plan fits the law under noise
        (the identities to the noise, ``noisy_identity_unknowns``; where none holds,
        :func:`.identities_under_noise.noisy_identity_rows`: the law the information criterion
        prefers among the identities' systems, a row where its misfit is the noise's,
        ``noise_ratio``) after the network and before Operon's generations, which it
        seeds; None never. Before the network it cost the network its time; as the
        continuation's first source, Operon's generations in the plan came first. After
        the network, paired against the continuation on validation-nc/-wc/-fc/-many at
        noise 0.001, 0.01 and 0.1 (40 laws each, 1 s, with ``noisy_identity_polish``,
        ``benchmarks/studies/noise_variants.py``): 5 laws more recovered in all (no cell
        lower), "close" 2.5-7.5 points higher in 8 of 12 cells and lower in none.
    noisy_identity_max_level : float, default=0.15
        Nor where the noise level exceeds this fraction of ``y``'s standard deviation:
        there its row was rarely kept (at noise 0.1 on validation at most one law a set
        came back, with or without it), and its time is Operon's. On Friedman 3 (noise
        20% of its spread, 1 s, ``benchmarks/studies/black_box.py``) it never gave a
        row and cost Operon 0.04-0.2 s: test R2 0.888 without it, 0.859 with it (median
        of 5 splits, loaded).
    noisy_identity_max_constants : int, default=16
        The law under noise is a row only with at most this many constants: beyond, it
        is a rational approximation of a smooth law, not the law (a quotient of quintics
        for ``exp(-x0/2)*cos(x1)``). On validation-nc/-wc/-fc/-many at noise 0.001, 0.01
        and 0.1 (40 laws each, the law alone, ``benchmarks/studies/noisy_law.py``), no
        law within FVU 1e-6 of the truth had more than 12; 16 set aside 3 of the 87
        within 1e-4 and 9 of the 126 others.
    noisy_identity_seconds : float, default=0.05
        The law under noise starts only where the time before the refinement's end
        holds this many seconds at the fit's pace (its fit takes 0.05-0.5 s on 500
        points). Not tuned.
    noisy_identity_forms : tuple of str, default=("rational", "root", "power", "angle")
        The forms of the law under noise (:func:`.identities_under_noise.noisy_identity`):
        ``"rational"`` (``P/Q``), ``"root"`` (``sqrt(P/Q)``) and ``"power"`` (each times
        the power-law monomial of ``y``, and times the monomial that fits ``y`` best by
        least squares, fitted to ``y`` over it). All three: paired
        against ``("rational",)`` on validation-nc and -wc at noise 0.01 and 0.1 (30 laws
        each, 3 s) one law gained and one lost, each a constant snapped or not in the same
        skeleton (``benchmarks/results/noise-search/noisy-forms-3s.md``); the sets hold
        few roots, which physical laws under noise often need. ``"angle"``: each again
        with the columns that may be angles also read by their cosine and sine
        (:class:`.identities_under_noise.AngleLawUnderNoise`), as a source of the continuation
        (with ``max_time``). Alone (``benchmarks/studies/noisy_law.py``, four validation sets,
        noise 0.001-0.1) it fitted 203 of 480 laws to the noise against 178, in 0.36 s a
        law against 0.21 s; in the plan at 1 s that time was the network's and Operon's,
        and 5 laws fewer came back (``noise_variants.py``, variant ``no-angle``).
    noisy_power_quantile : float, default=0.5
        Under noise, the power-law monomial of the ``"power"`` form is fitted in logs on
        the points whose ``|y|`` is at least this quantile of it: where ``y`` spans
        decades, the noise (a share of its spread) swamps the logs of its small values.
        On the four validation sets at three noise levels
        (``benchmarks/studies/noisy_law.py``, variant ``power-all``: 0) every law came
        back the same: none spans decades. Not tuned: the half of the points.
    noisy_identity_unknowns : tuple of int, default=(16, 64)
        Under noise, the identities' readings
        (:func:`.identities_under_noise.identities_to_the_noise`: rational, angles, roots,
        differences, the exponential, over the power-law monomial) are searched to the
        noise with systems of at most this many unknowns,
        every reading at the first size before any at the next (a large system
        approximates, to the noise, a law that a small one in another reading writes),
        then the next sizes and the largest systems the points allow while a law of
        fewer constants may hold; in the plan, first, until halfway to the refinement's
        end (the law of the information criterion where none holds), and as a source of
        the continuation where the plan cut them short
        (:class:`.identities_under_noise.IdentityUnderNoise`); ``()``: not at all. In the plan
        since each row of their systems weighs by its point's noise (on rows of unit norm the
        noisiest points let false laws pass, and in the plan they recovered 4 laws fewer
        of 320, ``benchmarks/results/noise-search/identity-readings-{1s,fc-many-1s}.md``):
        paired on validation-wc/-nc/-fc/-many at 1 s, 40 laws each, -2 to 0 laws a set
        at noise 0.001 (every interval holding 0; two runs of the code before differed
        by as much), -1 to +2 at 0.01, -1 to +1 at noise 0
        (``benchmarks/results/identities/paired-weighted-rows.md``).
    noisy_identity_readings_constants : int, default=6
        A law of those readings is a row only with at most this many constants: more is
        a rational approximation of a smooth law (on clean data whose law no candidate
        writes, the local fits read its curvature as noise, and a quotient of ten
        constants in ``x0``, ``sin(x0)`` and ``cos(x1)`` held to that "noise"), which the
        law of the information criterion already offers. Against 16, on validation-nc/-wc
        at noise 0.001 and 0.01 (the readings in the plan, 1 s): the same laws
        recovered, close -2.5 to +2.5 points.
    noisy_identity_pursuit : bool, default=False
        Under noise, the law of few Laurent monomials that a matching pursuit builds
        (:func:`.identities_under_noise.pursued_identity`, :mod:`.pursuit`) where it holds to the
        noise and beyond half of each feature, as the continuation's first source
        (:class:`.identities_under_noise.PursuitUnderNoise`). Off: validation did not ask for it.
        In the plan (1 s, noise 0.001 and 0.01, validation-nc/-wc, 40 laws each) it recovered
        one law fewer in 3 of 4 cells; in the continuation (10 s, noise 0.01,
        validation-nc/-wc/-fc/-many, 20 laws each) one fewer on -nc and -many, one more
        close on -wc, every interval holding 0
        (``benchmarks/results/noise-search/pursuit-{1s,10s}.md``). On its own it
        writes sparse laws of high degree that the identities' systems do not reach
        (``docs/measured-data.md``).
    noisy_identity_polish : int, default=5
        Gauss-Newton steps on the law's own error after each rational fit under noise
        (:func:`.identities_under_noise._rational_fit`; 0: the reweighted null vector alone). The
        null vector minimises the equation's error, whose columns ``y*Q`` carry the
        noise; on nearly collinear monomials it fits the noise with the law's terms far
        off. On validation-nc/-wc/-fc/-many (40 laws each, noise 0.01 and 0.1, the law
        alone, ``benchmarks/studies/noisy_law.py``) the laws fitted to the noise went
        from 91 to 121 of 320 and those close (test FVU <= 1e-4) from 27 to 35, at a
        third more time.
    identity_overdetermined : int, default=2
        The identities' systems (:mod:`.identities`) read at least this many points per
        unknown, so that no null vector comes from interpolation: fewer and larger
        systems are searched at a higher value. Not tuned; set with the identities
        (commit f40102e).
    identity_power_law_r2 : float, default=0.9
        Where no identity holds, that of ``y`` over its power-law monomial is tried
        when a least-squares fit of ``log|y|`` in the features' logs explains at least
        this share of its variance (:func:`.identities.power_law_monomial`). Not tuned;
        set with that identity (commit a1d126c).
    identity_angle_span : float, default=1.0
        A column is read as an angle, by its cosine and sine
        (:func:`.identities.angle_columns`), only where it spans at least this many
        radians: on a narrower range they are nearly polynomials. Not tuned; set with
        the angles (commit 65ba0cd).
    identity_dropped_columns : int, default=2
        Where no identity holds over every column, the identities are tried again
        without the least relevant column, then without the two least, up to this many
        (:func:`.identities.identity_rows`): a column that no exact law needs costs the
        others their monomials. Each try is one more identity search (20-100 ms). Not
        tuned; 0 turns it off.
    identity_wide_turns : float, default=100
        Columns within one turn of 0 are read as angles first; where that gives no
        identity, also those within this many turns (``cos(w*t)`` over ``w*t`` on
        [-100, 100]); without units only these. Not tuned; set with the wide angles
        (commits e755898 with units, 4134992 without).
    readable_max_change : float, default=1e-3
        The selected row's constants are re-spelled as a simple number (a small
        fraction, such a multiple of pi, a multiple of a named number) only within this
        relative distance of the fitted value, and only where the fit stays as good
        (:func:`nesymres_sklearn.writing.readable.simple_numbers`). Not tuned; set with
        the readable constants (commit 05d942c).
    readable_max_plain : int, default=12
        An inexact fit's constants are re-spelled only as plain numbers: rationals (or
        such multiples of pi, ``1/pi`` or a named number) whose numerator and
        denominator are at most this (``3/2``, not ``464/11``;
        :func:`nesymres_sklearn.writing.readable.plain`). Not tuned; set with that rule
        (commit a729126).
    start_range : float, default=5.0
        The constant fitting's first start is all ones, each further start uniform in
        ``[-start_range, start_range]`` (:func:`.fitting.constants.fit_constants`). Not
        tuned; set with the first constant fitting (commit a35d836).
    scaled_min_gain : float, default=0.1
        A candidate's outer scaling ``a*f + b`` (:mod:`.linear_scaling`) is fitted as
        ``c + c*f`` only where its closed form lowers the candidate's mean squared error
        by at least this share. Not tuned: ``benchmarks/studies/linear_scaling.py``
        (commit 5f3b6ff, since removed) compared the scaling on and off on validation,
        not this share.
    selection_margin : float, default=0.02
        With ``max_time``, the selection's pruning stops this many seconds before the
        time it keeps for writing the rows, and the readable constants this many
        seconds before the fit's end (:mod:`.selection.final`). Not tuned; a margin for
        the scheduler's jitter, which no fit without ``max_time`` reads.
    pruning_score_rise : float, default=1.0
        The pruning of the best row (:mod:`.selection.pruning`) refits no part or
        variable whose replacement alone raises the row's score by more than this (a
        factor ``e`` of the unexplained variance at 1.0). Not tuned; a bound on the
        refits' work, which the shared evaluations bound too.
    support_gain_ratio : float, default=4.0
        A variable of an approximate best row is supported when its gain in the score
        exceeds this many times the largest gain of a shuffled copy of its column
        (:mod:`.selection.variable_support`). Chosen with
        ``benchmarks/studies/spurious_variables.py`` (1 to 0 fits of 100 that select an
        unused column, ``benchmarks/results/spurious-variables/after.md``).
    support_max_gain : float, default=log(1.5)
        A variable whose gain exceeds this is supported whatever its shuffled copies
        gain: it lowers the mean squared error by more than a third, and shuffles of a
        column that an approximate form uses in an odd way can gain by chance too. Not
        tuned; set with the refitted comparison (commit 9d30a3b).
    reduction_min_seconds : float, default=0.4
        With ``max_time``, the reduction to combinations of the features
        (:mod:`.variables.reduction`) starts only with this many seconds for it: one
        that found its combinations took 0.39 s (6 features) and 0.54 s (20 features,
        300 points) on the 2-core development machine (commit ab74038); with less it
        runs out of time and its work is lost.
    reduction_min_r2, reduction_max_error_ratio : float, default=0.99, 0.5
        The reduction's combinations are kept when their leave-one-out surrogate
        explains at least ``reduction_min_r2`` of ``y``'s variance and leaves at most
        ``reduction_max_error_ratio`` times the share that all the features leave (or
        are exact). Not tuned; set with the reduction (commit b8a94bb), on the laws of
        its tests.
    reduction_left_out_slack, reduction_left_out_floor, reduction_max_left_out : float, default=1.5, 0.01, 0.1
        The reduction verifies the rounded bases of the gradients' span that leave out
        at most ``reduction_left_out_slack`` times the least share of the gradients'
        length plus ``reduction_left_out_floor`` (they fit them about equally well; the
        simplest is tried first), and never more than ``reduction_max_left_out`` (no
        combination of that many explains them). Not tuned; set with the reduction
        (commit b8a94bb).
    power_factor_min_r2, power_factor_exponent_tolerance : float, default=0.99, 0.05
        A power-law factor of some features splits off (:mod:`.variables.power_factor`)
        when the log fit explains at least ``power_factor_min_r2`` of the variance of
        ``log|y|`` and every exponent lies within ``power_factor_exponent_tolerance`` of
        a multiple of one half. Not tuned; set with the split (commit 17c8994).
    power_factor_min_departure : float, default=0.05
        The columns that the network reads beside a power-law factor are those whose
        extra terms lower the log fit's error by more than this share of it (the rest
        may be in the factor). Not tuned; set with the split (commit 17c8994).
    power_factor_neighbour_unexplained : float, default=0.1
        The split found from pairs of nearest neighbours
        (:func:`.variables.power_factor.neighbour_split`, where ``y`` changes sign)
        stands when each point's nearest neighbour leaves at most this share of the
        variance of ``y`` over the factor unexplained. Not tuned.
    power_factor_small_share, power_factor_neighbour_kept : float, default=0.1, 0.8
        Where ``y`` changes sign, the split's columns are chosen without the points of
        the smallest ``power_factor_small_share`` of ``|y|`` (near the rest's zeros), and
        each round of the neighbours' fit keeps this share of the pairs, the rest (the
        pairs across a zero) set aside. Not tuned; set with the split (commit 17c8994).
    decompose_min_r2, decompose_tolerance : float, default=0.95, 0.05
        With ``decompose``, no decomposition unless its surrogate explains at least
        ``decompose_min_r2`` of ``y``'s variance on left-out points, and two features
        interact when their mixed difference exceeds ``decompose_tolerance`` times the
        spread of ``y`` (:mod:`.variables.decomposition`). Not tuned: ``decompose`` is
        off by default.
    parts_complexity_penalty : float, default=0.01
        Per token, in the score that picks a part's second candidate beside its best fit
        when equations are assembled from parts (the residual and reciprocal looks, the
        inverted groups, ``decompose``; :func:`.variables.assembly.kept_fits`). Not
        tuned: the default of the estimator's ``complexity_penalty``.
    units_joined_score_rise : float, default=1.5
        With units, a known constant that joins the features' dimensionless groups may
        leave at most this multiple of the share of ``y`` they leave unexplained
        (:mod:`nesymres_sklearn.units.stage`; its groups are more, and their neighbours
        farther apart). Not tuned; set with the rule (commit ce087ce) so that no
        electron mass joins beside a mass.
    units_min_dependence, units_dependence_sigmas : float, default=0.1, 3.0
        With units, ``y`` (or what the features' groups leave of it) depends on a column
        when their rank correlation, or that with the column's magnitude, is at least
        ``units_min_dependence`` and ``units_dependence_sigmas`` standard errors
        (:func:`nesymres_sklearn.units.constants.depends`): such a feature must take
        part in the law, and such a known constant joins the groups. Not tuned; set with
        the known constants (commit 9cd52d6), three standard errors as a test at about
        0.3%.
    units_typical_share : float, default=0.9
        The test of a joining constant reads this share of the smallest residuals of the
        groups' neighbours (:func:`nesymres_sklearn.units.constants.depends_beyond`): the
        largest lie where the law crosses zero between neighbours, and hide a
        dependence. Not tuned; set with that reading (commit 10cf63e).
    units_neighbours : int, default=5
        With units, the mean of a point's this many nearest neighbours in the groups'
        logs predicts its ``log|y/m|``, which says which known constants the data support
        and whether one joins the groups (:func:`nesymres_sklearn.units.constants.unexplained`).
        Not tuned; set with the known constants (commit 9cd52d6).
    held_out_evaluations : int, default=40
        The shuffled copies of columns that the held-out choice's test of the chosen
        row's variables refits at most (:func:`.selection.held_out.unsupported_on_held_out`;
        one Jacobian each, about 1.5 ms on 500 points of a 20-token row): fixed work that
        reads no clock, as the held-out errors' own; 40 tests 8 variables; 0 turns the
        test off. Its cost on black-box data, where weak columns fail it: diabetes' test
        R² at 1 s 0.377-0.405 with it, 0.416-0.438 without (Friedman 1 and 3 within
        0.01; ``benchmarks/studies/black_box.py``, on a loaded machine). Testing against
        the copies' mean instead kept diabetes at 0.418 but let irrelevant added
        columns back into three of eight printed laws that had shed them.
    plain_support_evaluations : int, default=300
        The held-out refits (each of 4,096 values, points times terms; a larger one
        counts in proportion) that the backward elimination of the linear plain row's
        features takes at most (:func:`.variables.plain.backward_linear_candidate`):
        fixed work that reads no clock; 0 keeps every feature. Diabetes' ten features
        take 40 (four removed), a full elimination of 24 features 300.
    """

    first_beam: int = 8
    n_scaled: int = 8
    lm_x_scale: float | str = "jac"
    start_range: float = 5.0
    constant_optimizer: str = "operon"
    network_share: float = 0.5
    reserve_share: float = 0.2
    reserve_seconds: float = 0.3
    network_min_seconds: float = 0.06
    first_decode_seconds: float = 0.04
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
    subset_features: int = 8
    max_beam: int = 4096
    beam_memory: float = 1e9
    offset_ratio: float | None = 1000.0
    units_min_r2: float = 0.99
    noise_quantile: float = 0.25
    noise_neighbourhoods: tuple[float, ...] = (1.5, 2.0, 3.0)
    noise_least_stretch: float | None = 0.1
    noise_stretch_features: int = 4
    noise_max_terms: int = 20
    noise_points: int = 1000
    noise_log_span: float | None = 10.0
    held_out_folds: int = 5
    held_out_standard_errors: float = 0.5
    held_out_noise_errors: float = 3.0
    held_out_noise_scale: float = 1.13
    held_out_plain_first: bool = True
    snap_level: float = 0.95
    snap_chance: float = 0.05
    network_reads_smoothed: bool = False
    noise_ratio: float = 1.5
    noisy_identity_level: float | None = 1e-4
    noisy_identity_max_level: float = 0.15
    noisy_identity_forms: tuple[str, ...] = ("rational", "root", "power", "angle")
    noisy_identity_seconds: float = 0.05
    noisy_identity_max_constants: int = 16
    noisy_identity_polish: int = 5
    noisy_identity_unknowns: tuple[int, ...] = (16, 64)
    noisy_identity_readings_constants: int = 6
    noisy_identity_pursuit: bool = False
    noisy_power_quantile: float = 0.5
    identity_overdetermined: int = 2
    identity_power_law_r2: float = 0.9
    identity_angle_span: float = 1.0
    identity_wide_turns: float = 100
    identity_dropped_columns: int = 2
    readable_max_change: float = 1e-3
    readable_max_plain: int = 12
    information_criterion: str | None = "aic"
    information_per_token: float = 0.0
    scaled_min_gain: float = 0.1
    selection_margin: float = 0.02
    pruning_score_rise: float = 1.0
    support_gain_ratio: float = 4.0
    support_max_gain: float = math.log(1.5)
    reduction_min_seconds: float = 0.4
    reduction_min_r2: float = 0.99
    reduction_max_error_ratio: float = 0.5
    reduction_left_out_slack: float = 1.5
    reduction_left_out_floor: float = 0.01
    reduction_max_left_out: float = 0.1
    power_factor_min_r2: float = 0.99
    power_factor_exponent_tolerance: float = 0.05
    power_factor_min_departure: float = 0.05
    power_factor_neighbour_unexplained: float = 0.1
    power_factor_small_share: float = 0.1
    power_factor_neighbour_kept: float = 0.8
    decompose_min_r2: float = 0.95
    decompose_tolerance: float = 0.05
    parts_complexity_penalty: float = 0.01
    units_joined_score_rise: float = 1.5
    units_min_dependence: float = 0.1
    units_dependence_sigmas: float = 3.0
    units_typical_share: float = 0.9
    units_neighbours: int = 5
    held_out_evaluations: int = 40
    plain_support_evaluations: int = 300

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
            ("subset_features", 0),
            ("max_beam", 1),
            ("identity_ending_degree", 0),
            ("noise_max_terms", 1),
            ("noise_stretch_features", 1),
            ("noise_points", 1),
            ("held_out_folds", 0),
            ("units_neighbours", 1),
            ("held_out_evaluations", 0),
            ("plain_support_evaluations", 0),
            ("identity_overdetermined", 1),
            ("identity_dropped_columns", 0),
            ("readable_max_plain", 1),
            ("noisy_identity_max_constants", 1),
            ("noisy_identity_readings_constants", 1),
            ("noisy_identity_polish", 0),
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or value < minimum:
                raise ValueError(f"SearchSettings.{name} must be an integer of at least {minimum}, got {value!r}.")
        if self.subset_features > MAX_SUBSET_FEATURES:
            raise ValueError(
                f"SearchSettings.subset_features must be at most {MAX_SUBSET_FEATURES}, got {self.subset_features!r}."
            )
        for name in (
            "held_out_standard_errors",
            "held_out_noise_errors",
            "held_out_noise_scale",
            "selection_margin",
            "pruning_score_rise",
            "support_gain_ratio",
            "support_max_gain",
            "reduction_min_seconds",
            "network_min_seconds",
            "first_decode_seconds",
            "reduction_max_error_ratio",
            "reduction_left_out_slack",
            "reduction_left_out_floor",
            "reduction_max_left_out",
            "power_factor_min_departure",
            "power_factor_neighbour_unexplained",
            "parts_complexity_penalty",
            "start_range",
            "decompose_tolerance",
            "units_joined_score_rise",
            "units_dependence_sigmas",
            "identity_angle_span",
            "readable_max_change",
            "snap_chance",
            "noisy_identity_seconds",
            "noisy_identity_max_level",
        ):
            if not getattr(self, name) >= 0:
                raise ValueError(f"SearchSettings.{name} must be non-negative, got {getattr(self, name)!r}.")
        for name, low, high in (
            ("noisy_power_quantile", 0, 1),
            ("scaled_min_gain", 0, 1),
            ("reduction_min_r2", 0, 1),
            ("power_factor_min_r2", 0, 1),
            ("decompose_min_r2", 0, 1),
            ("identity_power_law_r2", 0, 1),
            ("units_min_dependence", 0, 1),
            ("power_factor_small_share", 0, 1),
            ("power_factor_exponent_tolerance", 0, 0.25),
        ):
            if not low <= getattr(self, name) < high:
                raise ValueError(f"SearchSettings.{name} must lie in [{low}, {high}), got {getattr(self, name)!r}.")
        if self.information_criterion not in INFORMATION_CRITERIA:
            raise ValueError(
                f"SearchSettings.information_criterion must be one of {INFORMATION_CRITERIA}, "
                f"got {self.information_criterion!r}."
            )
        for name in ("units_typical_share", "power_factor_neighbour_kept"):
            if not 0 < getattr(self, name) <= 1:
                raise ValueError(f"SearchSettings.{name} must lie in (0, 1], got {getattr(self, name)!r}.")
        if not self.identity_wide_turns >= 1:
            raise ValueError(
                f"SearchSettings.identity_wide_turns must be at least 1 (turns), got {self.identity_wide_turns!r}."
            )
        if not self.information_per_token >= 0:
            raise ValueError(
                f"SearchSettings.information_per_token must be non-negative, got {self.information_per_token!r}."
            )
        if not (isinstance(self.noisy_identity_forms, tuple) and set(self.noisy_identity_forms) <= NOISY_FORMS):
            raise ValueError(
                f"SearchSettings.noisy_identity_forms must be a tuple of {sorted(NOISY_FORMS)}, "
                f"got {self.noisy_identity_forms!r}."
            )
        unknowns = self.noisy_identity_unknowns
        if not (isinstance(unknowns, tuple) and all(isinstance(u, int) and u >= 2 for u in unknowns)):
            raise ValueError(
                f"SearchSettings.noisy_identity_unknowns must be a tuple of integers of at least 2, got {unknowns!r}."
            )
        if self.noisy_identity_level is not None and not self.noisy_identity_level >= 0:
            raise ValueError(
                f"SearchSettings.noisy_identity_level must be None or non-negative, got {self.noisy_identity_level!r}."
            )
        if not self.noise_ratio >= 0:
            raise ValueError(f"SearchSettings.noise_ratio must be non-negative, got {self.noise_ratio!r}.")
        if not 0 <= self.snap_level < 1:
            raise ValueError(f"SearchSettings.snap_level must lie in [0, 1), got {self.snap_level!r}.")
        if not 0 < self.noise_quantile < 1:
            raise ValueError(f"SearchSettings.noise_quantile must lie in (0, 1), got {self.noise_quantile!r}.")
        if self.noise_least_stretch is not None and not 0 <= self.noise_least_stretch <= 1:
            raise ValueError(
                f"SearchSettings.noise_least_stretch must be None or lie in [0, 1], got {self.noise_least_stretch!r}."
            )
        if self.noise_log_span is not None and not self.noise_log_span >= 1:
            raise ValueError(f"SearchSettings.noise_log_span must be None or at least 1, got {self.noise_log_span!r}.")
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
        self,
        max_time: float | None,
        refinement_seconds: float = 0.0,
        clock: Callable[[], float] = monotonic_clock,
        cpu_clock: Callable[[], float] = process_clock,
    ) -> Budget:
        """A :class:`Budget` that starts now, split by these settings (``refinement_seconds``:
        the estimated whole work of the refinement that follows the network, 0 for none;
        ``cpu_clock``: the process's CPU seconds, for its pace)."""
        return Budget(
            clock(),
            max_time,
            refinement_seconds,
            clock=clock,
            network_share=self.network_share,
            reserve_share=self.reserve_share,
            reserve_seconds=self.reserve_seconds,
            cpu_clock=cpu_clock,
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
