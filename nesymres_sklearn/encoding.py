"""Number encoding: each float as the 16 bits of its IEEE-754 half-precision value.

Bits are ordered sign, 5 exponent bits, 10 mantissa bits (most significant first) and
mapped to -1/+1. The value is rounded to the nearest half (NumPy's conversion from the
input precision, round-to-nearest-even). Unlike the original implementation:

* finite values beyond the half range saturate at +/-65504 (the exponent never wraps);
* small values become subnormals or a signed zero, so small negatives keep their sign;
* +/-inf have the IEEE infinity code and every NaN the canonical quiet NaN ``0x7E00``.
"""

from __future__ import annotations

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


def encode_floats(values) -> np.ndarray:
    """Multi-hot encoding: shape ``values.shape + (16,)``, float32 in {-1, +1}."""
    bits = (half_bits(values)[..., None] >> _SHIFTS) & 1
    return bits.astype(np.float32) * 2.0 - 1.0


def decode_floats(encoded) -> np.ndarray:
    """Inverse of :func:`encode_floats` (up to half-precision rounding)."""
    bits = (np.asarray(encoded) > 0).astype(np.uint16)
    codes = (bits << _SHIFTS).sum(axis=-1, dtype=np.uint16)
    return codes.view(np.float16).astype(np.float64)


def encode_points(X: np.ndarray, y: np.ndarray, n_variables: int) -> np.ndarray:
    """Encoder input for one set of points, or a batch of sets.

    ``X`` has shape ``(..., n, d)`` with ``d <= n_variables`` and ``y`` shape
    ``(..., n)``; absent variables are set to 0 as in pretraining. Returns shape
    ``(..., n, 16 * (n_variables + 1))`` with the columns of ``x_1..x_n`` and then ``y``.
    """
    d = X.shape[-1]
    if d > n_variables:
        raise ValueError(f"X has {d} columns but the model takes at most {n_variables}.")
    columns = np.zeros((*X.shape[:-1], n_variables + 1), dtype=np.float64)
    columns[..., :d] = X
    columns[..., -1] = y
    return encode_floats(columns).reshape(*X.shape[:-1], N_BITS * (n_variables + 1))
