import numpy as np
import pytest

from nesymres_sklearn.expression.tokens import token_arity, variable_index
from nesymres_sklearn.network.vocabulary import Vocabulary, default_tokens

PAPER_TABLE = {  # appendix A, with x, y, z written x_1, x_2, x_3
    "<pad>": 0,
    "<sos>": 1,
    "<eos>": 2,
    "x_1": 3,
    "x_2": 4,
    "x_3": 5,
    "c": 6,
    "acos": 7,
    "add": 8,
    "asin": 9,
    "atan": 10,
    "cos": 11,
    "cosh": 12,
    "coth": 13,
    "div": 14,
    "exp": 15,
    "ln": 16,
    "mul": 17,
    "pow": 18,
    "sin": 19,
    "sinh": 20,
    "sqrt": 21,
    "tan": 22,
    "tanh": 23,
    "-3": 24,
    "-2": 25,
    "-1": 26,
    "0": 27,
    "1": 28,
    "2": 29,
    "3": 30,
    "4": 31,
    "5": 32,
}


def test_default_vocabulary_is_the_paper_table():
    vocab = Vocabulary.default(3)
    assert vocab.ids == PAPER_TABLE
    assert (vocab.pad_id, vocab.sos_id, vocab.eos_id, vocab.constant_id) == (0, 1, 2, 6)


@pytest.mark.parametrize("n", [1, 2, 5, 12])
def test_number_of_variables_comes_from_the_tokens(n):
    vocab = Vocabulary.default(n)
    assert vocab.n_variables == n
    assert len(vocab) == 30 + n
    assert vocab.ids["c"] == 3 + n


def test_arities():
    vocab = Vocabulary.default(2)
    arity = dict(zip(vocab.tokens, vocab.arities.tolist()))
    assert arity["add"] == 2 and arity["pow"] == 2 and arity["sin"] == 1
    assert arity["x_2"] == 0 and arity["c"] == 0 and arity["-3"] == 0
    assert arity["<eos>"] == -1
    assert token_arity("foo") is None
    assert variable_index("x_10") == 9 and variable_index("x_0") is None


def test_encode_decode_round_trip():
    vocab = Vocabulary.default(3)
    prefix = ["add", "mul", "c", "x_1", "sin", "x_3"]
    ids = vocab.encode(prefix)
    assert vocab.decode([vocab.sos_id, *ids, vocab.eos_id, vocab.pad_id]) == prefix
    with pytest.raises(ValueError, match="'x_4' is not in the vocabulary"):
        vocab.encode(["x_4"])


@pytest.mark.parametrize(
    "tokens, message",
    [
        (["<pad>", "<sos>", "<eos>", "x_1"], "required token 'c'"),
        (default_tokens(1) + ["foo"], "Unknown vocabulary token 'foo'"),
        (default_tokens(1) + ["x_3"], "without gaps"),
        (default_tokens(1) + ["add"], "unique"),
        (["<pad>"], "required token"),
    ],
)
def test_invalid_vocabularies_are_rejected(tokens, message):
    with pytest.raises(ValueError, match=message):
        Vocabulary(tuple(tokens))


def test_arities_array_dtype():
    assert Vocabulary.default().arities.dtype == np.int64
