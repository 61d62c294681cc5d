"""Number encoding: each float as 16 values in {-1, +1}, and the registry of encodings.

``ModelConfig.encoding`` names an entry of :data:`ENCODINGS`. This module defines
``"ieee-half"`` (our models): the bits of the IEEE-754 half-precision value (sign, 5
exponent, 10 mantissa bits, most significant first). The value is rounded to the
nearest half (NumPy's conversion from the input precision, round-to-nearest-even).
Unlike the original implementation:

* finite values beyond the half range saturate at +/-65504 (the exponent never wraps);
* small values become subnormals or a signed zero, so small negatives keep their sign;
* +/-inf have the IEEE infinity code and every NaN the canonical quiet NaN ``0x7E00``.

:mod:`nesymres_sklearn.original` registers the authors' encoding as ``"original"``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

N_BITS = 16
HALF_MAX = float(np.finfo(np.float16).max)  # 65504
NAN_CODE = np.uint16(0x7E00)
_SHIFTS = np.arange(N_BITS - 1, -1, -1, dtype=np.uint16)


def half_bits(values) -> np.ndarray:
    """The 16-bit half-precision codes of ``values`` (same shape, ``uint16``)."""
    values = np.asarray(values, dtype=np.float64)
    saturated = np.where(np.isfinite(values), np.clip(values, -HALF_MAX, HALF_MAX), values)
    codes = saturated.astype(np.float16).view(np.uint16)
    return np.where(np.isnan(values), NAN_CODE, codes)


@dataclass(frozen=True)
class NumberEncoding:
    """A number encoding: ``encode(values)`` returns shape ``values.shape + (16,)``;
    ``range_warning(magnitudes)`` says what the user should do about values the
    encoding cannot represent faithfully, or returns ``None``."""

    encode: Callable[[np.ndarray], np.ndarray]
    range_warning: Callable[[np.ndarray], str | None]


def encode_ieee_half(values) -> np.ndarray:
    """Multi-hot half-precision bits: shape ``values.shape + (16,)``, float32 in {-1, +1}."""
    bits = (half_bits(values)[..., None] >> _SHIFTS) & 1
    return bits.astype(np.float32) * 2.0 - 1.0


def ieee_half_range_warning(magnitudes: np.ndarray) -> str | None:
    largest = magnitudes.max(initial=0.0)
    if largest <= HALF_MAX:
        return None
    return (
        f"Values up to {largest:.3g} exceed the half-precision range (+/-{HALF_MAX:g}) of the "
        "number encoding and are saturated for the network; rescale X and y (for example to "
        "[-10, 10], the pretraining range) for better skeletons."
    )


ENCODINGS: dict[str, NumberEncoding] = {"ieee-half": NumberEncoding(encode_ieee_half, ieee_half_range_warning)}


def get_encoding(name: str) -> NumberEncoding:
    try:
        return ENCODINGS[name]
    except KeyError:
        raise ValueError(
            f"Unknown number encoding {name!r}; registered: {sorted(ENCODINGS)} (import "
            "nesymres_sklearn.original for the authors' 'original')."
        ) from None


def encode_floats(values, encoding: str = "ieee-half") -> np.ndarray:
    """The encoding ``encoding`` of ``values``: shape ``values.shape + (16,)``."""
    return get_encoding(encoding).encode(values)


def decode_floats(encoded) -> np.ndarray:
    """Inverse of the ``"ieee-half"`` :func:`encode_floats` (up to half-precision rounding)."""
    bits = (np.asarray(encoded) > 0).astype(np.uint16)
    codes = (bits << _SHIFTS).sum(axis=-1, dtype=np.uint16)
    return codes.view(np.float16).astype(np.float64)


def encode_points(X: np.ndarray, y: np.ndarray, n_variables: int, encoding: str = "ieee-half") -> np.ndarray:
    """Encoder input for one set of points, or a batch of sets.

    ``X`` has shape ``(..., n, d)`` with ``d <= n_variables`` and ``y`` shape
    ``(..., n)``; absent variables are set to 0 as in pretraining. Returns shape
    ``(..., n, 16 * (n_variables + 1))`` with the columns of ``x_1..x_n`` and then ``y``.
    """
    columns = point_columns(X, y, n_variables)
    return encode_floats(columns, encoding).reshape(*X.shape[:-1], N_BITS * (n_variables + 1))


def point_columns(X: np.ndarray, y: np.ndarray, n_variables: int) -> np.ndarray:
    """The values :func:`encode_points` encodes: shape ``(..., n, n_variables + 1)``,
    float64, the columns of ``x_1..x_n`` (absent variables 0) and then ``y``."""
    d = X.shape[-1]
    if d > n_variables:
        raise ValueError(f"X has {d} columns but the model takes at most {n_variables}.")
    columns = np.zeros((*X.shape[:-1], n_variables + 1), dtype=np.float64)
    columns[..., :d] = X
    columns[..., -1] = y
    return columns
