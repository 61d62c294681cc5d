"""Deep symbolic regression (DSR), re-implemented in PyTorch for the benchmarks.

Petersen, Landajuela, Mundhenk, Santiago, Kim and Kim, "Deep symbolic regression:
Recovering mathematical expressions from data via risk-seeking policy gradients",
ICLR 2021. The authors' package (``dso``) needs TensorFlow 1.x, hence Python <= 3.7,
so the benchmarks run this re-implementation of the paper's algorithm instead (CPU
torch, deterministic for a given ``random_state``):

- :mod:`.library`: the operator table and the token library of a search;
- :mod:`.traversal`: partial pre-order traversals (parents, siblings, open slots);
- :mod:`.constraints`: the in-situ constraints, as a mask on the next token;
- :mod:`.policy`: the LSTM policy and its constrained sampling;
- :mod:`.program`: evaluation, reward ``1 / (1 + NRMSE)``, BFGS constants, SymPy;
- :mod:`.training`: the risk-seeking policy gradient and the training loop;
- :mod:`.adapter`: :class:`DSRAdapter`, the benchmark method ``dsr``.

Its validation on Nguyen-1..8 against the paper's recovery rates is the study
:mod:`benchmarks.studies.dsr_nguyen`.
"""

from .adapter import DSRAdapter

__all__ = ["DSRAdapter"]
