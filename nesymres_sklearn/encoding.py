"""Number encoding: each float as 16 values in {-1, +1} (sign, 5 exponent, 10 mantissa
bits, most significant first).

Two encodings, named by ``ModelConfig.encoding``:

``"ieee-half"`` (our models)
    The bits of the IEEE-754 half-precision value. The value is rounded to the nearest
    half (NumPy's conversion from the input precision, round-to-nearest-even). Unlike
    the original implementation:

    * finite values beyond the half range saturate at +/-65504 (the exponent never wraps);
    * small values become subnormals or a signed zero, so small negatives keep their sign;
    * +/-inf have the IEEE infinity code and every NaN the canonical quiet NaN ``0x7E00``.

``"original"`` (models converted from the authors' checkpoints)
    The authors' float32 computation, reproduced operation by operation with torch: the
    sign bit is set below -0.001 (exactly -0.001 gives 0 after the mapping), the
    exponent is ``floor(log2|v|) + 15`` modulo 32 (it wraps for ``|v| >= 2**17`` and
    ``0 < |v| < 2**-15``), the mantissa is the top 10 bits, truncated, and zero is
    all -1. Inputs are cast to float32 first.
"""

from __future__ import annotations

import numpy as np
import torch

N_BITS = 16
ENCODINGS = ("ieee-half", "original")
HALF_MAX = float(np.finfo(np.float16).max)  # 65504
NAN_CODE = np.uint16(0x7E00)
# Magnitudes the original encoding represents without wrapping its exponent.
ORIGINAL_RANGE = (2.0**-15, 2.0**17)
_SHIFTS = np.arange(N_BITS - 1, -1, -1, dtype=np.uint16)
_ORIGINAL_EXPONENT_BIAS = 15
_ORIGINAL_MANTISSA_BITS = 10


def half_bits(values) -> np.ndarray:
    """The 16-bit half-precision codes of ``values`` (same shape, ``uint16``)."""
    values = np.asarray(values, dtype=np.float64)
    saturated = np.where(np.isfinite(values), np.clip(values, -HALF_MAX, HALF_MAX), values)
    codes = saturated.astype(np.float16).view(np.uint16)
    return np.where(np.isnan(values), NAN_CODE, codes)


def original_bits(values) -> np.ndarray:
    """The authors' 16 values per number before the +/-1 mapping: shape
    ``values.shape + (16,)``, float32 in {0, 1} (the sign value is 0.5 at exactly
    -0.001, and every value after the sign is NaN for +/-inf and NaN)."""
    v = torch.from_numpy(np.ascontiguousarray(values, dtype=np.float32))
    sign = (1 - torch.sign(v + 0.001)) / 2
    magnitude = v.abs()
    exponent = torch.floor(torch.log2(magnitude))
    exponent = torch.where(torch.isneginf(exponent), -float(_ORIGINAL_EXPONENT_BIAS), exponent)
    powers = 2.0 ** torch.arange(4, -1, -1, dtype=torch.float32)
    exponent_bits = torch.remainder(torch.floor((exponent + _ORIGINAL_EXPONENT_BIAS)[..., None] / powers), 2)
    fraction = torch.remainder(magnitude / 2.0**exponent, 1)
    digits = 2.0 ** torch.arange(_ORIGINAL_MANTISSA_BITS, dtype=torch.float32)
    mantissa_bits = torch.floor(2 * torch.remainder(fraction[..., None] * digits, 1))
    return torch.cat([sign[..., None], exponent_bits, mantissa_bits], dim=-1).numpy()


def encode_floats(values, encoding: str = "ieee-half") -> np.ndarray:
    """Multi-hot encoding: shape ``values.shape + (16,)``, float32 in {-1, +1} (and 0
    for the original encoding's sign at exactly -0.001)."""
    if encoding == "original":
        return original_bits(values) * 2.0 - 1.0
    if encoding != "ieee-half":
        raise ValueError(f"Unknown encoding {encoding!r}; expected one of {ENCODINGS}.")
    bits = (half_bits(values)[..., None] >> _SHIFTS) & 1
    return bits.astype(np.float32) * 2.0 - 1.0


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
    d = X.shape[-1]
    if d > n_variables:
        raise ValueError(f"X has {d} columns but the model takes at most {n_variables}.")
    columns = np.zeros((*X.shape[:-1], n_variables + 1), dtype=np.float64)
    columns[..., :d] = X
    columns[..., -1] = y
    return encode_floats(columns, encoding).reshape(*X.shape[:-1], N_BITS * (n_variables + 1))
