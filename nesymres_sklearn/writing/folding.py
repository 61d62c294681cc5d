"""The selected equation over the raw features, with the units folded into its constants.

Undoing the units (:meth:`.scaling.Scaling.unscale_expression`) puts powers of ten
inside the equation: ``1000*sqrt(x0**2/1000000 + x1**2/1000000)``, ``1000/(1000*x0 -
3000)``, or ``x1*log(1000*x0) - 6.90775527898214*x1``, where a fitted constant has
absorbed ``log(1000)``. :func:`folded` writes the shortest of three equal forms: the
equation as it is, with the common factors of its sums pulled out
(:func:`sympy.factor_terms`: ``sqrt(x0**2 + x1**2)``, ``1/(x0 - 3)``), and, when it
holds floats, with each ``log(k*A)`` of a positive number ``k`` split into ``log(A) +
log(k)`` and the terms that then cancel to rounding (below ``NEGLIGIBLE`` of the
largest of them) dropped (``x1*log(x0)``); like terms that the factoring collects and that
cancel to rounding are dropped too. Every step is an identity, so the three forms
are the same function (to rounding); the work depends on the expression alone, not on the data or
the clock.

Before all three, each ``exp(A)`` whose exponent is shorter expanded is written so, its
number part taken out as a factor (:func:`_exponents_expanded`: ``exp(x - (x + 1)**2/2)``
is ``exp(-1/2)*exp(-x**2/2)``), an identity.

A fourth form writes the roots of a product as one root (:func:`roots_combined`):
``sqrt(x0)*sqrt(x1/x2)`` as ``sqrt(x0*x1/x2)``, as a physicist writes a law that the
units stage or the network put together from a monomial and a group. Wherever the
first is real (every base of a fractional power at least 0) the two are equal; the
second is also real where pairs of bases are both negative, so it extends the law, and
SymPy cannot show them equal over the reals.

A fifth form moves a monomial into a root in the numerator beside it
(:func:`monomials_into_roots`) where that is an identity: positive numbers
(``pi*sqrt(1 - x**2)`` as ``sqrt(pi**2 - pi**2*x**2)`` when shorter) and even powers of
the features (``x0**2*sqrt(A)`` as ``sqrt(x0**4*A)``). An odd power moves only where
the feature is positive (``x0*sqrt(A)`` is ``sqrt(x0**2*A)`` for ``x0 > 0`` alone), which
would change the law outside the data, so it stays outside. A root in the
denominator keeps its group, as the Lorentz factor ``1/sqrt(1 - v**2/c**2)`` is written.

Where the equation holds more than one sine or cosine, two more forms write sums of
their products as the sine or cosine of a sum (SymPy's ``TR10i``) and their products as
sums (``TR8``): the identities of the units' groups read angles by their cosine and
sine, so ``a*sin(t1)*sin(t2) + a*cos(t1)*cos(t2)`` is ``a*cos(t1 - t2)`` and
``2*sin(t)*cos(t)`` is ``sin(2*t)``, identities both; a third adds harmonics of one
angle with float coefficients (:func:`harmonics_added`: ``0.955*cos(x) - 0.297*sin(x)``
is ``cos(x + 0.3016)``).
"""

from __future__ import annotations

import itertools
import math

import sympy
from sympy.simplify.fu import TR8, TR10i

from ..expression.operators import function_tokens
from .readable import fold_float_factors, tidy_numbers

# Terms whose sum is this small next to the largest of them cancel: only rounding is left.
NEGLIGIBLE = 1e-12
# The splits of one product's monomial between the outside and the inside of its root
# that are tried, at most.
MAX_SPLITS = 64
# Logs split at most (the expansion of products of split logs grows as their product:
# four logs of one development law took 0.1 s, past the fit's end); more are left as they are.
MAX_SPLIT_LOGS = 2


def folded(expression: sympy.Expr, operators: frozenset[str] | None = None) -> sympy.Expr:
    """``expression`` (over the raw features, SymPy's evaluation applied) in its
    shortest equal form (see the module docstring) among those whose functions are
    ``operators`` (``None``: any; the harmonics of ``sin`` alone are not added into a
    ``cos``), its floats that are simple numbers written exactly
    (:func:`.readable.tidy_numbers`); the form as it is when none is."""
    expression = tidy_numbers(fold_float_factors(_exponents_expanded(expression)))
    forms = [expression, _residues_dropped(sympy.factor_terms(expression), expression)]
    split = _logs_split(expression)
    if split is not None:
        forms.append(sympy.factor_terms(tidy_numbers(split)))
    forms.append(roots_combined(expression))
    forms.append(monomials_into_roots(expression))
    if len(expression.atoms(sympy.sin, sympy.cos)) > 1:
        forms += [TR10i(expression), TR8(expression), tidy_numbers(harmonics_added(expression))]
    if operators is not None:
        forms = [form for form in forms if function_tokens(form) <= operators] or [expression]
    return min(forms, key=_size)  # the first of the shortest: the equation as it is on ties


def harmonics_added(expression: sympy.Expr) -> sympy.Expr:
    """``expression`` with each pair of terms ``a*cos(u) + b*sin(u)`` of one sum, ``a``
    and ``b`` numbers, written ``r*cos(u - p)`` (``r = hypot(a, b)``, ``p = atan2(b, a)``),
    an identity, from the leaves up: an angle's identity writes ``cos(x + 2.84)`` so."""

    def added(total: sympy.Expr) -> sympy.Expr:
        if not total.is_Add:
            return total
        cosines, sines = {}, {}
        for term in total.args:
            number, rest = term.as_coeff_Mul()
            if isinstance(rest, (sympy.cos, sympy.sin)) and number.is_Float:
                (cosines if isinstance(rest, sympy.cos) else sines)[rest.args[0]] = (number, term)
        terms = list(total.args)
        for angle in cosines.keys() & sines.keys():
            (a, cosine), (b, sine) = cosines[angle], sines[angle]
            terms.remove(cosine)
            terms.remove(sine)
            phase = sympy.Float(math.atan2(float(b), float(a)))
            terms.append(sympy.Float(math.hypot(float(a), float(b))) * sympy.cos(angle - phase))
        return sympy.Add(*terms)

    return sympy.bottom_up(expression, added)


def monomials_into_roots(expression: sympy.Expr) -> sympy.Expr:
    """``expression`` with each product of one root ``B**p`` (``p`` a positive
    non-integer rational) and integer powers of symbols or positive numbers written in
    its shortest form ``M1 * (M2**(1/p) * B)**p`` over the splits ``M = M1*M2`` of that
    monomial (at most :data:`MAX_SPLITS`) that are identities over the reals (a symbol
    moves as an even power whose power inside is even), the base expanded, from the
    leaves up."""

    def movable(factor: sympy.Expr) -> bool:
        base, exponent = factor.as_base_exp()
        return exponent.is_Integer and (base.is_Symbol or (base.is_number and base.is_positive))

    def moves(base: sympy.Expr, exponent: int, p: sympy.Rational) -> list[int]:
        """The powers ``k`` of ``base`` (between 0 and ``exponent``) that may move inside."""
        span = range(0, exponent + 1) if exponent > 0 else range(exponent, 1)
        if base.is_number:
            return list(span)
        return [k for k in span if k % 2 == 0 and (k / p).is_Integer and (k / p) % 2 == 0]

    def moved(product: sympy.Expr) -> sympy.Expr:
        if not product.is_Mul:
            return product
        roots = [f for f in product.args if f.is_Pow and f.exp.is_Rational and not f.exp.is_Integer and f.exp > 0]
        monomial = [f.as_base_exp() for f in product.args if movable(f)]
        if len(roots) != 1 or not monomial:
            return product
        root, rest = roots[0], [f for f in product.args if f is not roots[0] and not movable(f)]
        choices = [moves(base, int(e), root.exp) for base, e in monomial]
        best = product
        for split in itertools.islice(itertools.product(*choices), MAX_SPLITS):
            inside = sympy.Mul(*(base**k for (base, _), k in zip(monomial, split)))
            if inside == 1:
                continue
            outside = sympy.Mul(*(base ** (e - k) for (base, e), k in zip(monomial, split)))
            form = sympy.Mul(*rest) * outside * sympy.expand(inside ** (1 / root.exp) * root.base) ** root.exp
            if _size(form) < _size(best):
                best = form
        return best

    return sympy.bottom_up(expression, moved)


def roots_combined(expression: sympy.Expr) -> sympy.Expr:
    """``expression`` with the factors of each product that are powers to a non-integer
    rational ``p`` or ``-p`` written as one power ``p`` of their bases' quotient
    (``sqrt(a)*sqrt(b)/sqrt(c)`` is ``sqrt(a*b/c)``), from the leaves up."""

    def combined(product: sympy.Expr) -> sympy.Expr:
        if not product.is_Mul:
            return product
        by_exponent: dict[sympy.Rational, list[sympy.Pow]] = {}
        rest = []
        for factor in product.args:
            if factor.is_Pow and factor.exp.is_Rational and not factor.exp.is_Integer:
                by_exponent.setdefault(abs(factor.exp), []).append(factor)
            else:
                rest.append(factor)
        for exponent, powers in by_exponent.items():
            if len(powers) == 1:
                rest += powers
            else:
                rest.append(sympy.Mul(*(p.base if p.exp > 0 else 1 / p.base for p in powers)) ** exponent)
        return sympy.Mul(*rest)

    return sympy.bottom_up(expression, combined)


def _exponents_expanded(expression: sympy.Expr) -> sympy.Expr:
    """``expression`` with each ``exp(A)`` whose exponent, expanded and its number part
    ``k`` taken out as the factor ``exp(k)``, is shorter, written so:
    ``0.6577*exp(x - (x + 1)**2/2)`` is ``0.6577*exp(-1/2)*exp(-x**2/2)``, whose
    numbers then fold into the Gaussian's ``1/sqrt(2*pi)``; like terms that the
    expansion collects to rounding are dropped (:func:`_residues_dropped`)."""

    def split(power: sympy.exp) -> sympy.Expr:
        expanded = _residues_dropped(sympy.expand(power.args[0]), power.args[0])
        number, rest = expanded.as_independent(*expanded.free_symbols, as_Add=True)
        if _size(rest) >= _size(power.args[0]):
            return power
        return sympy.exp(number) * sympy.exp(rest)

    return expression.replace(lambda e: isinstance(e, sympy.exp) and bool(e.free_symbols), split)


def _residues_dropped(form: sympy.Expr, expression: sympy.Expr) -> sympy.Expr:
    """``form``, a rewrite of ``expression``, without the terms of its sums whose float
    coefficient is a new number below ``NEGLIGIBLE`` of ``expression``'s largest: like
    terms that the rewrite collected and that cancel to rounding
    (``-0.6478*x0**2 + 0.2524*2.567*x0**2`` as ``1.1e-16*x0**2``)."""
    original = {abs(float(number)) for number in expression.atoms(sympy.Float)}
    if not original:
        return form
    floor = NEGLIGIBLE * max(original)

    def residue(term: sympy.Expr) -> bool:
        coefficient = abs(float(term.as_coeff_Mul()[0])) if term.as_coeff_Mul()[0].is_Float else 0.0
        return 0 < coefficient <= floor and coefficient not in original

    def dropped(total: sympy.Add) -> sympy.Expr:
        kept = [term for term in total.args if not residue(term)]
        return total if len(kept) == len(total.args) else sympy.Add(*kept)

    cleaned = form.replace(lambda e: e.is_Add, dropped)
    return form if cleaned == form else tidy_numbers(cleaned)


def _size(expression: sympy.Expr) -> int:
    return sum(1 for _ in sympy.preorder_traversal(expression))


def _logs_split(expression: sympy.Expr) -> sympy.Expr | None:
    """``expression`` with every ``log(k*A)`` (``k`` a positive number other than 1)
    written ``log(A) + log(k)``, products expanded and the terms that cancel dropped;
    ``None`` when it has no such log, more than ``MAX_SPLIT_LOGS`` or no float to cancel
    against."""
    logs = [
        term
        for term in expression.atoms(sympy.log)
        if term.args[0].is_Mul and term.args[0].as_coeff_Mul()[0].is_positive and term.args[0].as_coeff_Mul()[0] != 1
    ]
    if not logs or len(logs) > MAX_SPLIT_LOGS or not expression.has(sympy.Float):
        return None
    values: dict[sympy.Dummy, sympy.Float] = {}
    replacements = {}
    for term in logs:
        factor, rest = term.args[0].as_coeff_Mul()
        number = sympy.Dummy()  # log(k) stays apart from the floats until the sums are judged
        values[number] = sympy.Float(math.log(float(factor)))
        replacements[term] = number + sympy.log(rest)
    split = sympy.expand_mul(expression.xreplace(replacements))
    split = split.replace(lambda e: e.is_Add, lambda e: _cancelled(e, values))
    return split.xreplace(values)


def _cancelled(total: sympy.Add, values: dict[sympy.Dummy, sympy.Float]) -> sympy.Expr:
    """The sum ``total`` with its terms grouped by their part that holds variables;
    a group of several terms whose numbers (``values`` for the split logs) add up to
    less than ``NEGLIGIBLE`` of the largest of them is dropped, the others are summed."""
    variables = total.free_symbols - set(values)
    groups: dict[sympy.Expr, list[sympy.Expr]] = {}
    for term in total.args:
        number, rest = term.as_independent(*variables, as_Add=False)
        groups.setdefault(rest, []).append(number)
    kept = []
    for rest, numbers in groups.items():
        if len(numbers) > 1:
            magnitudes = [abs(float(number.xreplace(values))) for number in numbers]
            if abs(float(sympy.Add(*numbers).xreplace(values))) <= NEGLIGIBLE * max(magnitudes):
                continue
        kept.append(sympy.Add(*numbers) * rest)
    return sympy.Add(*kept)
