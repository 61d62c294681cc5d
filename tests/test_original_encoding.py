"""The authors' number encoding, vocabulary and prefix decoding, against reference vectors."""

from __future__ import annotations

import numpy as np
import pytest
import sympy
from original_checkpoints import REFERENCE_VOCABULARY

from nesymres_sklearn.expression.prefix import prefix_to_sympy
from nesymres_sklearn.expression.program import PrefixProgram
from nesymres_sklearn.network.encoding import encode_floats
from nesymres_sklearn.network.vocabulary import Vocabulary
from nesymres_sklearn.original.beam import hypothesis_tokens
from nesymres_sklearn.original.checkpoint import ORIGINAL_TOKENS
from nesymres_sklearn.original.encoding import original_bits

# Reference encoding vectors (float32 input): value -> (sign value, exponent bits, mantissa bits).
ENCODING_VECTORS = [
    (0.0, 0.0, "00000", "0000000000"),
    (1.0, 0.0, "01111", "0000000000"),
    (-1.0, 1.0, "01111", "0000000000"),
    (0.5, 0.0, "01110", "0000000000"),
    (3.0, 0.0, "10000", "1000000000"),
    (2.75, 0.0, "10000", "0110000000"),
    (-7.3, 1.0, "10001", "1101001100"),
    (1e-6, 0.0, "11011", "0000110001"),
    (-0.0005, 0.0, "00100", "0000011000"),
    (np.float32(-0.001), 0.5, "00101", "0000011000"),
    (1e5, 0.0, "11111", "1000011010"),
    (131072.0, 0.0, "00000", "0000000000"),
    (np.nextafter(np.float32(32), np.float32(0)), 0.0, "10100", "1111111111"),
]


@pytest.mark.parametrize("value, sign, exponent, mantissa", ENCODING_VECTORS)
def test_original_encoding_vectors(value, sign, exponent, mantissa):
    bits = original_bits(np.array([value], dtype=np.float32))[0]
    assert bits[0] == sign
    assert "".join(str(int(b)) for b in bits[1:6]) == exponent
    assert "".join(str(int(b)) for b in bits[6:]) == mantissa
    np.testing.assert_array_equal(encode_floats(np.array([value]), "original")[0], 2 * (bits - 0.5))


def float32_fields(values):
    """The equivalent bit-level description: sign bit, (biased exponent - 112) mod 32,
    top 10 of the 23 mantissa bits; zero is all zeros."""
    raw = np.asarray(values, dtype=np.float32).view(np.uint32)
    exponent = ((raw >> 23 & 0xFF).astype(np.int64) - 112) % 32
    mantissa = raw >> 13 & 0x3FF
    zero = np.asarray(values) == 0
    return raw >> 31, np.where(zero, 0, exponent), np.where(zero, 0, mantissa)


@pytest.mark.parametrize("scale", [10.0, 5e4])
def test_original_encoding_is_float32_truncation(scale):
    values = np.random.default_rng(0).uniform(-scale, scale, 20_000).astype(np.float32)
    values = values[(values <= -0.001) | (values >= 0)]  # small negatives get the positive sign
    values = values[values != np.float32(-0.001)]
    bits = original_bits(values).astype(np.int64)
    sign, exponent, mantissa = float32_fields(values)
    np.testing.assert_array_equal(bits[:, 0], sign)
    np.testing.assert_array_equal(bits[:, 1:6] @ (1 << np.arange(4, -1, -1)), exponent)
    np.testing.assert_array_equal(bits[:, 6:] @ (1 << np.arange(9, -1, -1)), mantissa)


def test_original_encoding_casts_to_float32_first():
    value = 1 + 2.0**-10 - 2.0**-40  # float32 rounds it up to 1 + 2**-10: mantissa 0000000001
    assert original_bits(np.array([value]))[0, 6:].tolist() == [0.0] * 9 + [1.0]


def test_original_vocabulary_ids():
    vocab = Vocabulary(tuple(ORIGINAL_TOKENS))
    assert dict(enumerate(vocab.tokens)) == REFERENCE_VOCABULARY
    assert (vocab.pad_id, vocab.sos_id, vocab.eos_id, vocab.constant_id) == (0, 1, 2, 3)
    assert vocab.arities[7] == 1  # abs


# Hypothesis ids -> the original's expression string (None: skipped as invalid).
PREFIX_VECTORS = [
    ([1, 18, 4, 20, 4], "((x_1)*(sin(x_1)))"),
    ([1, 9, 3, 18, 3, 4], "((c0)+((c1)*(x_1)))"),
    ([1, 18, 4, 19, 5, 27], "((x_1)*((x_2)**(-1)))"),
    ([1, 22, 9, 19, 4, 30, 3], "(sqrt(((x_1)**(2))+(c0)))"),
    ([1, 7, 6], "(Abs(x_3))"),
    ([1, 18, 3, 4, 4], None),  # leftover token
    ([1, 9, 4], None),  # incomplete
    ([1, 20, 0], None),  # padding id
    ([1, 20, 45], None),  # an output slot without a token
]


@pytest.mark.parametrize("ids, expected", PREFIX_VECTORS)
def test_original_prefix_decoding(ids, expected):
    tokens = hypothesis_tokens(ids, Vocabulary(tuple(ORIGINAL_TOKENS)), n_features=3)
    if expected is None:
        assert tokens is None
        return
    names = {f"x_{i}": sympy.Symbol(f"x_{i}", real=True) for i in (1, 2, 3)}
    names.update({f"c{i}": sympy.Symbol(f"c_{i}", real=True) for i in (0, 1)})
    assert prefix_to_sympy(tokens) == sympy.sympify(expected, locals=names)


def test_hypotheses_with_variables_the_data_lacks_are_dropped():
    vocab = Vocabulary(tuple(ORIGINAL_TOKENS))
    assert hypothesis_tokens([1, 9, 4, 5], vocab, n_features=2) == ("add", "x_1", "x_2")
    assert hypothesis_tokens([1, 9, 4, 6], vocab, n_features=2) is None


def test_abs_is_evaluated_with_its_derivative():
    program = PrefixProgram(["abs", "mul", "c", "x_1"])
    X = np.array([[-2.0], [3.0]])
    values, jacobian = program.value_and_jacobian(X, [1.5])
    np.testing.assert_allclose(values, [3.0, 4.5])
    np.testing.assert_allclose(jacobian[:, 0], [2.0, 3.0])
