"""The PyTorch re-implementation of deep symbolic regression (benchmarks.methods.dsr)."""

import numpy as np
import pytest
import sympy
import torch

from benchmarks.methods import METHODS
from benchmarks.methods.dsr import DSRAdapter, training
from benchmarks.methods.dsr.constraints import Constraints
from benchmarks.methods.dsr.library import Library
from benchmarks.methods.dsr.policy import Policy, PolicyConfig
from benchmarks.methods.dsr.program import Program, evaluate, reward
from benchmarks.methods.dsr.training import DSRConfig, risk_seeking_loss, risk_seeking_selection, train
from benchmarks.methods.dsr.traversal import EMPTY, PartialTraversals


@pytest.fixture(autouse=True)
def one_torch_thread():
    # As the runner does for every fit: small batches are slower with more threads.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture
def library():
    return Library(n_variables=2, const=True)


def allowed_names(library, prefix, **bounds):
    state = PartialTraversals.from_tokens(library, [library.tokens(prefix)])
    mask = Constraints(**bounds).allowed(library, state)[0]
    return {name for name, ok in zip(library.names, mask) if ok}


# Library and traversals ------------------------------------------------------------


def test_library_tables(library):
    assert library.names == ["add", "sub", "mul", "div", "sin", "cos", "exp", "log", "x1", "x2", "const"]
    assert list(library.arity) == [2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0]
    assert library.names[library.inverse[library.names.index("exp")]] == "log"
    assert library.names[library.inverse[library.names.index("log")]] == "exp"
    assert list(library.names[i] for i in np.flatnonzero(library.trig)) == ["sin", "cos"]
    assert library.n_parents == 8 and library.parent_index[library.names.index("x1")] == -1
    assert library.variable(library.names.index("x2")) == 1 and library.variable(library.const_index) is None
    assert Library().names[-1] == "x1"  # the Nguyen library: no const
    with pytest.raises(ValueError, match="Unknown operators"):
        Library(["add", "tan"])


def test_traversal_parents_siblings_and_dangling(library):
    rows = [[], ["add", "x1"], ["sin"], ["mul", "sin", "x1"], ["add", "x1", "x2"], ["div", "cos", "x1", "exp"]]
    state = PartialTraversals.from_tokens(library, [library.tokens(r) for r in rows])
    name = lambda t: None if t == EMPTY else library.names[t]
    assert [name(t) for t in state.parent] == [None, "add", "sin", "mul", None, "exp"]
    assert [name(t) for t in state.sibling] == [None, "x1", None, "sin", None, None]
    assert list(state.dangling) == [1, 1, 1, 1, 0, 1]
    assert list(state.trig_ancestor) == [False, False, True, False, False, False]
    assert list(state.finished) == [False, False, False, False, True, False]
    with pytest.raises(ValueError, match="complete"):
        state.append(np.array([library.tokens(["x1"])[0]]), rows=np.array([4]))


# Constraints -----------------------------------------------------------------------


def test_first_token_and_minimum_length(library):
    operators = {"add", "sub", "mul", "div", "sin", "cos", "exp", "log"}
    # Terminals would end the expression before its 4th token.
    assert allowed_names(library, []) == operators
    assert allowed_names(library, ["add", "x1"]) == operators
    assert allowed_names(library, ["sin", "sin"], min_length=1) >= {"x1", "x2"}
    # A terminal here ends the expression at exactly 4 tokens.
    assert {"x1", "x2"} <= allowed_names(library, ["add", "x1", "exp"])
    # Not the last open slot: terminals are fine.
    assert {"x1", "x2", "const"} <= allowed_names(library, ["add"])


def test_maximum_length(library):
    # 2 tokens, 3 open slots, at most 5 tokens: only terminals fit.
    assert allowed_names(library, ["add", "add"], max_length=5, min_length=1) == {"x1", "x2", "const"}
    # 2 tokens, 2 open slots, at most 5: a unary operator still fits, a binary one not.
    allowed = allowed_names(library, ["add", "x1", "add"], max_length=6, min_length=1)
    assert {"sin", "exp"} <= allowed and not {"add", "mul"} & allowed


def test_inverse_unary_operators(library):
    assert "log" not in allowed_names(library, ["exp"]) and "exp" in allowed_names(library, ["exp"])
    assert "exp" not in allowed_names(library, ["log"]) and "log" in allowed_names(library, ["log"])
    # Only direct children: exp(x + log(x)) is allowed.
    assert "log" in allowed_names(library, ["exp", "add", "x1"])


def test_no_trigonometric_descendants_of_trigonometric_operators(library):
    for prefix in (["sin"], ["cos"], ["sin", "add", "x1"], ["mul", "x1", "cos", "exp"]):
        allowed = allowed_names(library, prefix)
        assert not {"sin", "cos"} & allowed and {"exp", "add"} <= allowed
    # Once the trigonometric subtree is complete, a sibling subtree may use trig again.
    assert {"sin", "cos"} <= allowed_names(library, ["add", "sin", "x1"])


def test_constants_are_never_the_only_children(library):
    assert "const" not in allowed_names(library, ["sin"])  # unary: its only child
    assert "const" not in allowed_names(library, ["add", "const"])  # binary: const, const
    assert "const" in allowed_names(library, ["add", "x1"], min_length=1)
    assert "const" in allowed_names(library, ["add"])
    assert "const" in allowed_names(library, ["add", "const", "mul"])
    # At most three constants.
    assert "const" in allowed_names(library, ["add", "mul", "const", "x1", "mul", "const", "add"])
    assert "const" not in allowed_names(library, ["add", "mul", "const", "x1", "mul", "const", "add", "const"])


# Sampling --------------------------------------------------------------------------


def _tree(library, tokens, position=0):
    """(token, children, end) of the subtree starting at position."""
    children, end = [], position + 1
    for _ in range(library.arity[tokens[position]]):
        child = _tree(library, tokens, end)
        children.append(child)
        end = child[2]
    return tokens[position], children, end


def _violations(library, node, trig_above=False):
    token, children, _ = node
    name = library.names[token]
    if library.trig[token] and trig_above:
        yield f"trig under trig: {name}"
    child_tokens = [child[0] for child in children]
    if children and all(t == library.const_index for t in child_tokens):
        yield f"only constants under {name}"
    if len(children) == 1 and library.inverse[token] == child_tokens[0]:
        yield f"{library.names[child_tokens[0]]} under {name}"
    for child in children:
        yield from _violations(library, child, trig_above or bool(library.trig[token]))


@pytest.mark.parametrize("max_length", [30, 8])
def test_sampled_traversals_are_complete_valid_and_within_bounds(library, max_length):
    constraints = Constraints(max_length=max_length)
    generator = torch.Generator().manual_seed(0)
    policy = Policy(PolicyConfig.for_library(library), generator=generator)
    with torch.no_grad():  # random LSTM weights: a less uniform policy than the zero start
        for parameter in policy.cell.parameters():
            parameter.normal_(0, 1, generator=generator)
    batch = policy.sample(library, constraints, 1000, generator)
    assert batch.lengths.min() >= 4 and batch.lengths.max() <= max_length
    for row in range(len(batch)):
        tokens = batch.traversal(row)
        root = _tree(library, tokens)
        assert root[2] == len(tokens) == batch.lengths[row]  # one complete tree, nothing after it
        assert (batch.tokens[row, len(tokens) :] == -1).all()
        assert sum(t == library.const_index for t in tokens) <= constraints.max_constants
        assert list(_violations(library, root)) == [], Program(library, tokens)
        Program(library, tokens)  # compiles


# Reward, constants and programs ------------------------------------------------------


def test_reward_is_one_over_one_plus_nrmse():
    y = np.array([1.0, 2.0, 3.0, 4.0])
    assert reward(y, y) == 1.0
    assert reward(y, np.full(4, y.mean())) == pytest.approx(0.5)  # NRMSE of the mean is 1
    assert reward(y, y + np.std(y)) == pytest.approx(0.5)
    assert reward(y, np.array([1.0, np.nan, 3.0, 4.0])) == 0.0
    assert reward(np.ones(3), np.zeros(3)) == pytest.approx(0.5)  # constant y: RMSE over 1


def test_floating_point_errors_make_an_expression_invalid():
    library = Library()
    X = np.linspace(0.5, 2, 10)[:, None]
    # exp(log(0 * x)) is finite in numpy but raises "divide by zero": reward 0, as in the release.
    program = Program(library, library.tokens(["exp", "mul", "log", "mul", "sub", "x1", "x1", "x1", "x1"]))
    assert evaluate(program, X, np.zeros(10)).reward == 0.0
    assert np.isfinite(program(X)).all()  # predictions stay as numpy computes them


def test_constants_are_fitted_by_bfgs():
    library = Library(n_variables=1, const=True)
    X = np.linspace(-1, 1, 20)[:, None]
    program = Program(library, library.tokens(["add", "mul", "const", "x1", "const"]))
    fitted = evaluate(program, X, 2.5 * X[:, 0] - 1.0)
    assert fitted.reward == pytest.approx(1.0) and np.allclose(fitted.constants, [2.5, -1.0], atol=1e-5)
    x = sympy.Symbol("x_1", real=True)
    assert sympy.simplify(program.sympy(fitted.constants) - (fitted.constants[0] * x + fitted.constants[1])) == 0


def test_program_matches_its_sympy_expression():
    library = Library(n_variables=2)
    program = Program(library, library.tokens(["sub", "mul", "x1", "sin", "x2", "div", "exp", "x1", "x2"]))
    x1, x2 = sympy.symbols("x_1 x_2", real=True)
    assert sympy.simplify(program.sympy() - (x1 * sympy.sin(x2) - sympy.exp(x1) / x2)) == 0
    X = np.random.default_rng(0).uniform(0.5, 2, (10, 2))
    assert np.allclose(program(X), X[:, 0] * np.sin(X[:, 1]) - np.exp(X[:, 0]) / X[:, 1])
    with pytest.raises(ValueError, match="complete"):
        Program(library, library.tokens(["add", "x1"]))


# Risk-seeking policy gradient ----------------------------------------------------------


def test_risk_seeking_selection_keeps_the_top_epsilon():
    rewards = np.random.default_rng(0).permutation(np.arange(100) / 100)
    keep, baseline = risk_seeking_selection(rewards, 0.05)
    assert keep.sum() == 5 and baseline == 0.95 and (rewards[keep] >= 0.95).all()
    keep, baseline = risk_seeking_selection(np.array([0.1, 0.9, 0.9, 0.2]), 0.05)
    assert list(keep) == [False, True, True, False] and baseline == 0.9  # ties are kept


def test_risk_seeking_loss():
    log_prob = torch.tensor([-1.0, -2.0], requires_grad=True)
    entropy = torch.tensor([3.0, 5.0], requires_grad=True)
    loss = risk_seeking_loss(log_prob, entropy, torch.tensor([0.9, 0.5]), 0.5, 0.005)
    assert loss.item() == pytest.approx((0.4 * 1.0 + 0.0 * 2.0) / 2 - 0.005 * 4.0)
    loss.backward()
    # The sample at the baseline gets no policy-gradient push; both get the entropy bonus.
    assert log_prob.grad.tolist() == pytest.approx([-0.2, 0.0])
    assert entropy.grad.tolist() == pytest.approx([-0.0025, -0.0025])


def test_training_steps_only_on_the_top_epsilon_samples(monkeypatch):
    seen = []
    original = training.risk_seeking_loss

    def spy(log_prob, entropy, rewards, baseline, entropy_weight):
        seen.append((len(log_prob), rewards.numpy().copy(), baseline))
        return original(log_prob, entropy, rewards, baseline, entropy_weight)

    monkeypatch.setattr(training, "risk_seeking_loss", spy)
    X = np.linspace(-1, 1, 20)[:, None]
    train(X, np.sin(X[:, 0]) * X[:, 0] ** 3, DSRConfig(n_expressions=600, batch_size=200, const=False))
    assert len(seen) == 3
    for n_kept, rewards, baseline in seen:
        assert 10 <= n_kept < 200 and len(rewards) == n_kept and (rewards >= baseline).all()


# Training and the adapter ------------------------------------------------------------


@pytest.mark.slow
def test_training_is_deterministic_for_a_seed():
    X = np.linspace(-1, 1, 20)[:, None]
    y = np.exp(X[:, 0]) * X[:, 0]
    config = DSRConfig(n_expressions=200, batch_size=100)  # two batches: the second is drawn after a training step
    first, again, other = (train(X, y, config, random_state=seed) for seed in (3, 3, 4))
    assert first.traversal == again.traversal and first.constants == again.constants
    assert first.best_rewards == again.best_rewards
    assert (other.traversal, other.best_rewards) != (first.traversal, first.best_rewards)


@pytest.mark.slow
def test_recovers_a_simple_target():
    X = np.random.default_rng(0).uniform(-1, 1, (20, 1))
    result = train(X, X[:, 0] + X[:, 0] ** 2, DSRConfig(n_expressions=20_000, const=False), random_state=0)
    assert result.stopped == "success" and result.n_expressions < 20_000
    x = sympy.Symbol("x_1", real=True)
    assert sympy.simplify(Program(result.library, result.traversal).sympy() - (x + x**2)) == 0


@pytest.mark.slow
def test_adapter():
    assert METHODS["dsr"] is DSRAdapter and DSRAdapter.check_installed() is None
    assert DSRAdapter.expected_cost(4000, 128) > DSRAdapter.expected_cost(1000, 128)
    X = np.random.default_rng(0).uniform(1, 5, (64, 2))
    y = X[:, 0] * X[:, 1]
    adapter = DSRAdapter(800, time_budget=60, random_state=0, batch_size=200, max_length=12).fit(X, y)
    assert adapter.result_.n_expressions <= 800 and max(adapter.result_.best_rewards) <= 1
    assert len(adapter.result_.traversal) <= 12
    prediction = adapter.predict(X)
    assert prediction.shape == (64,)
    symbols = {s.name for s in sympy.sympify(adapter.expression()).free_symbols}
    assert symbols <= {"x_1", "x_2"}
    # The time budget is a soft stop between expressions: none left, one expression.
    assert DSRAdapter(10_000, time_budget=0.0).fit(X, y).result_.stopped == "time"


def test_the_nguyen_study_counts_equal_expressions_as_recovered_and_tabulates_them():
    import pandas as pd

    from benchmarks.datasets import load_dataset
    from benchmarks.studies.dsr_nguyen import is_recovered, markdown, summary_table

    rows = pd.DataFrame(
        {"equation": ["Nguyen-1", "Nguyen-1"], "value": [1000, 1000], "status": ["ok", "ok"],
         "expression": ["x_1*(x_1**2 + x_1 + 1)", "x_1**3 + x_1"], "a1_iid": [1.0, 0.0], "fit_time": [2.0, 4.0]}
    )  # fmt: skip
    table = summary_table(rows)
    assert table[["runs", "recovered", "ours", "paper"]].iloc[0].tolist() == [2, 1, 50.0, 100]
    nguyen_1 = next(e for e in load_dataset("nguyen") if e.name == "Nguyen-1")
    assert not is_recovered("", nguyen_1) and not is_recovered("x_1 +", nguyen_1)
    report = markdown(table, "python -m benchmarks.studies.dsr_nguyen")
    assert "| Nguyen-1 | `x_1**3 + x_1**2 + x_1` | 1/2 (50%) | 3 / 4 | 100% |" in report
