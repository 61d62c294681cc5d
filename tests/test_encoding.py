import numpy as np
import pytest

from nesymres_sklearn.network.encoding import (
    HALF_MAX,
    N_BITS,
    decode_floats,
    encode_floats,
    encode_points,
    half_bits,
)


def bits(value):
    """Bit string sign|exponent|mantissa of the encoding of one value."""
    code = encode_floats(np.array([value]))[0]
    assert set(code.tolist()) <= {-1.0, 1.0}
    text = "".join("1" if b > 0 else "0" for b in code)
    return text[0], text[1:6], text[6:]


@pytest.mark.parametrize(
    "value, expected",
    [
        (0.0, ("0", "00000", "0000000000")),
        (-0.0, ("1", "00000", "0000000000")),
        (1.0, ("0", "01111", "0000000000")),
        (-1.0, ("1", "01111", "0000000000")),
        (0.5, ("0", "01110", "0000000000")),
        (3.0, ("0", "10000", "1000000000")),
        (2.75, ("0", "10000", "0110000000")),
        (-7.3, ("1", "10001", "1101001101")),  # rounded to nearest, not truncated
        (65504.0, ("0", "11110", "1111111111")),
        (2.0**-24, ("0", "00000", "0000000001")),  # smallest subnormal
        (2.0**-14, ("0", "00001", "0000000000")),  # smallest normal
        (np.inf, ("0", "11111", "0000000000")),
        (-np.inf, ("1", "11111", "0000000000")),
        (np.nan, ("0", "11111", "1000000000")),
    ],
)
def test_known_codes(value, expected):
    assert bits(value) == expected


def test_matches_numpy_half_precision_in_range():
    values = np.random.default_rng(0).uniform(-1000, 1000, size=10_000)
    np.testing.assert_array_equal(half_bits(values), values.astype(np.float16).view(np.uint16))


@pytest.mark.parametrize("magnitude", [1e-8, 1e-6, 1e-4, 1e-2, 1.0, 1e2, 1e4, 1e6, 1e8])
def test_positive_and_negative_magnitudes(magnitude):
    for value in (magnitude, -magnitude):
        sign, exponent, _ = bits(value)
        assert sign == ("1" if value < 0 else "0")  # small negatives keep their sign
        decoded = decode_floats(encode_floats(np.array([value])))[0]
        if magnitude > HALF_MAX:
            assert decoded == np.copysign(HALF_MAX, value)  # saturates, never wraps
            assert exponent == "11110"
        elif magnitude >= 2.0**-14:
            assert decoded == pytest.approx(value, rel=2.0**-11)
        else:
            assert abs(decoded - value) <= 2.0**-25  # subnormal or signed zero


def test_exponent_is_monotone_in_magnitude():
    magnitudes = np.logspace(-8, 8, 400)
    codes = half_bits(magnitudes)
    assert np.all(np.diff(codes.astype(np.int64)) >= 0)


def test_decode_inverts_encode_for_half_values():
    halves = np.random.default_rng(1).standard_normal(1000).astype(np.float16).astype(np.float64)
    np.testing.assert_array_equal(decode_floats(encode_floats(halves)), halves)


def test_encode_points_layout_and_absent_variables():
    X = np.array([[1.0, 2.0], [3.0, -4.0]])
    y = np.array([5.0, 6.0])
    out = encode_points(X, y, n_variables=3)
    assert out.shape == (2, N_BITS * 4) and out.dtype == np.float32
    np.testing.assert_array_equal(out[:, :16], encode_floats(X[:, 0]))
    np.testing.assert_array_equal(out[:, 32:48], encode_floats(np.zeros(2)))  # x_3 absent -> 0
    np.testing.assert_array_equal(out[:, 48:], encode_floats(y))
    with pytest.raises(ValueError, match="at most 1"):
        encode_points(X, y, n_variables=1)


def test_encode_points_of_a_batch_equals_each_set():
    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(4, 7, 2)), rng.normal(size=(4, 7))
    batch = encode_points(X, y, n_variables=3)
    assert batch.shape == (4, 7, N_BITS * 4)
    for i in range(4):
        np.testing.assert_array_equal(batch[i], encode_points(X[i], y[i], n_variables=3))
