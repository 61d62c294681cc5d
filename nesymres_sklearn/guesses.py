"""Starting guesses: equations the user suspects, over the feature names, as candidates.

A guess is a string, read by SymPy's ``parse_expr`` with the feature names as its
names, or a SymPy expression whose symbols are named after features. Its
floating-point numbers (and numbers without a token of their own, such as ``pi`` or
``100``) become constants, started from their values; the integers of the vocabulary
(``x0**2``) stay. A guess joins the candidates with origin ``"guess"``, fitted like any
candidate (from its own numbers, then from the usual starts), competes in the
selection and, fitted before Operon runs, seeds Operon as fixed work. A guess without
constants is also tried with constants attached by the paper's rule
(``sin(x) -> c*sin(c*x + c)``).
"""

from __future__ import annotations

import keyword
import tokenize
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import sympy
from sympy.parsing.sympy_parser import parse_expr

from .expression.prefix import skeletonize_with_numbers
from .expression.skeleton import Skeleton
from .search.fitted import CandidateRows, Fitted, mse
from .search.fitting.constants import ConstantFit, fit_constants, least_squares_run
from .search.problem import Problem
from .search.scaling import Scaling
from .search.settings import SearchRequest

_PARSE_ERRORS = (SyntaxError, TypeError, ValueError, NameError, AttributeError, tokenize.TokenError, sympy.SympifyError)


@dataclass(frozen=True)
class Guesses:
    """The guesses as SymPy expressions over ``x_1, x_2, ...`` (the features in the
    order of ``X``'s columns), in the data's units."""

    expressions: tuple[sympy.Expr, ...] = ()

    @classmethod
    def parse(cls, guesses: Sequence | None, names: Sequence, symbols: Sequence[sympy.Symbol]) -> Guesses:
        """The ``guesses`` read over the features ``names`` (written as ``symbols``); a
        ``ValueError`` names a guess that does not parse, names no feature it uses, or
        uses a function the operator table lacks."""
        return cls(tuple(_parsed(guess, [str(name) for name in names], symbols) for guess in guesses or ()))

    def rows(self, problem: Problem, scaling: Scaling, request: SearchRequest) -> CandidateRows:
        """Each guess fitted to ``problem`` (in the search's units, which ``scaling``
        maps from the data's), as rows of origin ``"guess"``."""
        rows = CandidateRows()
        rng = np.random.default_rng(request.seed)
        for expression in self.expressions:
            tokens, numbers = skeletonize_with_numbers(_in_search_units(expression, scaling))
            skeleton = Skeleton(tuple(tokens))
            candidates = [(skeleton, np.array(numbers))]
            if skeleton.n_constants == 0:
                candidates.append((skeleton.with_constants_attached(), np.empty(0)))
            for candidate, start in candidates:
                fit = _fitted(candidate, start, problem, request, rng)
                rows.add(Fitted(candidate, fit.constants, fit.mse), origin="guess")
        return rows


def _parsed(guess, names: list[str], symbols: Sequence[sympy.Symbol]) -> sympy.Expr:
    """``guess`` over ``x_1, x_2, ...``, checked."""
    by_name = {**{symbol.name: symbol for symbol in symbols}, **dict(zip(names, symbols))}
    features = ", ".join(names)
    if isinstance(guess, str):
        local = {
            name: symbol for name, symbol in by_name.items() if name.isidentifier() and not keyword.iskeyword(name)
        }
        try:
            expression = parse_expr(guess, local_dict=local)
        except _PARSE_ERRORS as error:
            raise ValueError(
                f"The guess {guess!r} does not parse ({type(error).__name__}: {error}). Write it in Python's syntax "
                f"over the feature names ({features}), e.g. '2.5*{names[0]}'."
            ) from None
    elif isinstance(guess, sympy.Basic):
        expression = guess
    else:
        raise ValueError(f"guesses must hold strings or SymPy expressions, got {guess!r} ({type(guess).__name__}).")
    if not isinstance(expression, sympy.Expr):
        raise ValueError(f"The guess {guess!r} is not an expression of the features (it reads as {expression!r}).")
    unknown = sorted(symbol.name for symbol in expression.free_symbols if symbol.name not in by_name)
    if unknown:
        raise ValueError(
            f"The guess {guess!r} names {', '.join(unknown)}, which {'is' if len(unknown) == 1 else 'are'} not a "
            f"feature; the features are {features}."
        )
    positions = {symbol.name: j for j, symbol in enumerate(symbols)}
    variables = {s: sympy.Symbol(f"x_{positions[by_name[s.name].name] + 1}") for s in expression.free_symbols}
    over_variables = expression.xreplace(variables)
    try:
        skeletonize_with_numbers(over_variables)
    except ValueError as error:
        raise ValueError(
            f"The guess {guess!r} cannot be written with the operator table: {error} Use + - * / ** and the "
            "functions sin, cos, tan, exp, log, sqrt, abs, asin, acos, atan, sinh, cosh, tanh, coth."
        ) from None
    return over_variables


def _in_search_units(expression: sympy.Expr, scaling: Scaling) -> sympy.Expr:
    """``expression`` (``y = f(x)``) as ``(y - b) / s_y = (f(s_x * x') - b) / s_y`` over
    the scaled features ``x' = x / s_x``; the powers of ten and the offset ``b`` join its
    numbers as floats."""
    if scaling.is_identity:
        return expression
    substitutions = {
        sympy.Symbol(f"x_{j + 1}"): sympy.Float(scale) * sympy.Symbol(f"x_{j + 1}")
        for j, scale in enumerate(scaling.x_scales)
        if scale != 1.0
    }
    scaled = expression.xreplace(substitutions)
    if scaling.y_offset != 0.0:
        scaled = scaled - sympy.Float(scaling.y_offset)
    return scaled if scaling.y_scale == 1.0 else scaled / sympy.Float(scaling.y_scale)


def _fitted(skeleton: Skeleton, start: np.ndarray, problem: Problem, request: SearchRequest, rng) -> ConstantFit:
    """The constants of ``skeleton`` fitted from ``start`` (the guess's numbers), then
    from the starts of any candidate (:func:`.fit_constants`, the ``request``'s); the best kept."""
    X, y, weights = problem.X, problem.y, problem.weights
    previous = None
    if len(start):
        found = least_squares_run(skeleton.program, X, y, start, weights=weights)
        constants = found if found is not None and np.all(np.isfinite(found)) else start
        previous = ConstantFit(constants, mse(skeleton.program, X, y, constants, weights), 0)
    n_restarts, start_range = request.n_restarts, request.settings.start_range
    return fit_constants(
        skeleton.program, X, y, n_restarts, rng, None, weights, previous=previous, start_range=start_range
    )
