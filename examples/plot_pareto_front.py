"""
The Pareto front
================

Every candidate of a fit has a complexity and a loss. ``nesymres_sklearn.plot.pareto``
draws them, joins those that no simpler candidate beats (the Pareto front) and marks
the selected equation. ``predict(X, index=i)`` and ``sympy(i)`` reach any row.
"""

import matplotlib.pyplot as plt
import numpy as np

from nesymres_sklearn import NeSymReSRegressor
from nesymres_sklearn.plot import pareto

rng = np.random.default_rng(0)
X = rng.uniform(0.5, 4, size=(200, 2))
y = X[:, 0] ** 2 / X[:, 1] + np.log(X[:, 0])
y += rng.normal(0, 0.01 * y.std(), len(y))  # a little noise: longer candidates fit it

reg = NeSymReSRegressor(random_state=0).fit(X, y)
print("selected:", reg.equation(precision=4))

# %%
# The front, simplest first: past the law, more tokens buy little accuracy, and the
# selection's price per token (``complexity_penalty``) stops there.
front = reg.equations_[reg.equations_["pareto"]].sort_values("complexity")
for index, row in front.iterrows():
    print(f"{row['complexity']:3d} tokens  log FVU {row['log_fvu']:7.2f}  {reg.equation(precision=3, index=index)}")

# %%
ax = pareto(reg)
ax.set_title("candidates of one fit")
plt.tight_layout()

# %%
# Any row of the table can be used: here the simplest candidate of the front.
simplest = front.index[0]
print(reg.sympy(simplest), reg.predict(X[:3], index=simplest))
