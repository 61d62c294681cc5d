"""Training DSR: sample a batch, reward it, step the risk-seeking policy gradient.

Each iteration samples ``batch_size`` expressions from the policy, rewards them
(:mod:`.program`), keeps the top ``epsilon`` fraction (rewards at or above the
``1 - epsilon`` quantile, numpy's "higher" interpolation as in the authors' release)
and takes one Adam step on

    loss = mean over kept of (R - R_eps) * (-log p(expression))
           - entropy_weight * mean over kept of H(expression)

where ``R_eps`` (the quantile) is the baseline and ``H`` sums the entropy of the
masked token distribution over the expression's steps (Petersen et al., 2021: the
risk-seeking policy gradient with the entropy bonus). Training stops after ``n_expressions`` sampled expressions
(the budget counts every sample, repeated ones included), when an expression's
normalised MSE on the training data falls below ``threshold`` (the release's early
stop), or at the soft ``time_budget``, checked between expressions.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

import numpy as np
import torch

from .constraints import Constraints
from .library import NGUYEN_FUNCTION_SET, Library
from .policy import Policy, PolicyConfig, SampledBatch
from .program import Evaluation, Program, evaluate

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class DSRConfig:
    """Hyper-parameters; the defaults are the paper's for its Nguyen experiments (with
    ``const``, the token set of its benchmarks with constants)."""

    n_expressions: int = 2_000_000
    batch_size: int = 1000
    epsilon: float = 0.05
    entropy_weight: float = 0.005
    learning_rate: float = 0.0005
    hidden_size: int = 32
    function_set: tuple[str, ...] = NGUYEN_FUNCTION_SET
    const: bool = True
    constraints: Constraints = field(default_factory=Constraints)
    threshold: float = 1e-12
    time_budget: float | None = None

    def __post_init__(self):
        if self.n_expressions < 1 or self.batch_size < 1:
            raise ValueError("n_expressions and batch_size must be positive.")
        if not 0 < self.epsilon <= 1:
            raise ValueError(f"epsilon must be in (0, 1], got {self.epsilon}.")


@dataclass
class TrainingResult:
    """The best expression found and how the search went.

    ``stopped`` is ``"budget"``, ``"success"`` (NMSE below the threshold) or ``"time"``;
    ``best_rewards`` holds the best reward so far after each batch.
    """

    library: Library
    traversal: tuple[int, ...]
    constants: tuple[float, ...]
    reward: float
    n_expressions: int
    n_batches: int
    stopped: str
    best_rewards: list[float]


def risk_seeking_selection(rewards: np.ndarray, epsilon: float) -> tuple[np.ndarray, float]:
    """Mask of the samples kept for training (reward >= the (1 - epsilon) quantile) and
    the quantile, which is the baseline."""
    quantile = float(np.quantile(rewards, 1 - epsilon, method="higher"))
    return rewards >= quantile, quantile


def log_prob_and_entropy(policy: Policy, batch: SampledBatch) -> tuple[torch.Tensor, torch.Tensor]:
    """Log-probability of each traversal and the entropy summed over its steps."""
    logits = policy(batch.parents, batch.siblings, batch.allowed)
    log_probs = torch.log_softmax(logits, dim=-1)
    steps = torch.arange(logits.shape[1])[None, :] < torch.as_tensor(batch.lengths)[:, None]
    tokens = torch.as_tensor(np.maximum(batch.tokens, 0))
    chosen = log_probs.gather(-1, tokens[..., None])[..., 0]
    entropy = -(log_probs.exp() * log_probs).sum(-1)
    return (chosen * steps).sum(1), (entropy * steps).sum(1)


def risk_seeking_loss(
    log_prob: torch.Tensor, entropy: torch.Tensor, rewards: torch.Tensor, baseline: float, entropy_weight: float
) -> torch.Tensor:
    """The risk-seeking policy-gradient loss of the kept samples, with the entropy bonus."""
    return ((rewards - baseline) * -log_prob).mean() - entropy_weight * entropy.mean()


def train(X: np.ndarray, y: np.ndarray, config: DSRConfig, random_state: int = 0) -> TrainingResult:
    """Search for an expression of ``y`` over the columns of ``X`` (see the module docstring)."""
    start = time.perf_counter()
    library = Library(config.function_set, X.shape[1], const=config.const)
    generator = torch.Generator().manual_seed(int(random_state))
    policy = Policy(PolicyConfig.for_library(library, config.hidden_size), generator=generator)
    optimizer = torch.optim.Adam(policy.parameters(), lr=config.learning_rate)
    success_reward = 1.0 / (1.0 + np.sqrt(config.threshold))
    scale = float(np.std(y))
    cache: dict[tuple[int, ...], Evaluation] = {}
    best_traversal, best = None, Evaluation(-np.inf)
    best_rewards, n_sampled, stopped = [], 0, "budget"

    def out_of_time() -> bool:
        return config.time_budget is not None and time.perf_counter() - start > config.time_budget

    while n_sampled < config.n_expressions and stopped == "budget":
        n = min(config.batch_size, config.n_expressions - n_sampled)
        batch = policy.sample(library, config.constraints, n, generator)
        rewards = np.zeros(len(batch))
        for row in range(len(batch)):
            if best_traversal is not None and out_of_time():
                stopped = "time"
                break
            traversal = batch.traversal(row)
            if traversal not in cache:
                cache[traversal] = evaluate(Program(library, traversal), X, y, scale)
            rewards[row] = cache[traversal].reward
            n_sampled += 1
            if rewards[row] > best.reward or (rewards[row] == best.reward and len(traversal) < len(best_traversal)):
                best_traversal, best = traversal, cache[traversal]
        if best.reward >= success_reward:
            stopped = "success"
        best_rewards.append(best.reward)
        if stopped != "budget":
            break
        keep, baseline = risk_seeking_selection(rewards, config.epsilon)
        kept = batch.subset(np.flatnonzero(keep))
        log_prob, entropy = log_prob_and_entropy(policy, kept)
        kept_rewards = torch.as_tensor(rewards[keep], dtype=torch.float32)
        loss = risk_seeking_loss(log_prob, entropy, kept_rewards, baseline, config.entropy_weight)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        logger.debug("batch %d: best %.4f, quantile %.4f", len(best_rewards), best.reward, baseline)
    return TrainingResult(
        library, best_traversal, best.constants, best.reward, n_sampled, len(best_rewards), stopped, best_rewards
    )
