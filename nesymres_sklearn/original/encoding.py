"""The authors' number encoding, registered as ``"original"``.

Their float32 computation, reproduced operation by operation with torch: the sign bit
is set below -0.001 (exactly -0.001 gives 0 after the mapping), the exponent is
``floor(log2|v|) + 15`` modulo 32 (it wraps for ``|v| >= 2**17`` and
``0 < |v| < 2**-15``), the mantissa is the top 10 bits, truncated, and zero is all
-1. Inputs are cast to float32 first.
"""

from __future__ import annotations

import numpy as np
import torch

from ..network.encoding import ENCODINGS, NumberEncoding

NAME = "original"
# Magnitudes the original encoding represents without wrapping its exponent.
ORIGINAL_RANGE = (2.0**-15, 2.0**17)
_EXPONENT_BIAS = 15
_MANTISSA_BITS = 10


def original_bits(values) -> np.ndarray:
    """The authors' 16 values per number before the +/-1 mapping: shape
    ``values.shape + (16,)``, float32 in {0, 1} (the sign value is 0.5 at exactly
    -0.001, and every value after the sign is NaN for +/-inf and NaN)."""
    v = torch.from_numpy(np.ascontiguousarray(values, dtype=np.float32))
    sign = (1 - torch.sign(v + 0.001)) / 2
    magnitude = v.abs()
    exponent = torch.floor(torch.log2(magnitude))
    exponent = torch.where(torch.isneginf(exponent), -float(_EXPONENT_BIAS), exponent)
    powers = 2.0 ** torch.arange(4, -1, -1, dtype=torch.float32)
    exponent_bits = torch.remainder(torch.floor((exponent + _EXPONENT_BIAS)[..., None] / powers), 2)
    fraction = torch.remainder(magnitude / 2.0**exponent, 1)
    digits = 2.0 ** torch.arange(_MANTISSA_BITS, dtype=torch.float32)
    mantissa_bits = torch.floor(2 * torch.remainder(fraction[..., None] * digits, 1))
    return torch.cat([sign[..., None], exponent_bits, mantissa_bits], dim=-1).numpy()


def encode_original(values) -> np.ndarray:
    """Shape ``values.shape + (16,)``, float32 in {-1, +1} (and 0 for the sign at
    exactly -0.001)."""
    return original_bits(values) * 2.0 - 1.0


def original_range_warning(magnitudes: np.ndarray) -> str | None:
    low, high = ORIGINAL_RANGE
    magnitudes = magnitudes.astype(np.float32)  # the encoding's precision
    wrapped = (magnitudes >= high) | ((magnitudes > 0) & (magnitudes < low))
    if not wrapped.any():
        return None
    return (
        f"{int(wrapped.sum())} values have magnitudes of 2**17 = {high:g} or more, or below "
        f"2**-15 = {low:.3g} (but not 0), where the original number encoding wraps its exponent "
        "and the network sees a different number; rescale X and y (for example to [-10, 10], "
        "the pretraining range) for better skeletons."
    )


ENCODINGS[NAME] = NumberEncoding(encode_original, original_range_warning)
