"""
Several targets
===============

A ``y`` of shape ``(n, k)`` gives one equation per column, fitted independently (in
parallel with ``n_jobs``). ``expression_``, ``equations_`` and the other fitted
attributes become lists over the columns; ``predict`` returns ``(n, k)``.
"""

import matplotlib.pyplot as plt
import numpy as np

from nesymres_sklearn import NeSymReSRegressor

rng = np.random.default_rng(0)
X = rng.uniform(1, 4, size=(150, 2))
Y = np.c_[X[:, 0] * X[:, 1], np.sin(X[:, 0]) + X[:, 1] ** 2, np.exp(X[:, 1]) / X[:, 0]]

reg = NeSymReSRegressor(random_state=0).fit(X, Y)
for column, expression in enumerate(reg.expression_):
    print(f"y{column} = {expression}")
print(reg.predict(X[:2]).shape)

# %%
fig, axes = plt.subplots(1, 3, figsize=(9, 3))
predicted = reg.predict(X)
for column, ax in enumerate(axes):
    ax.scatter(Y[:, column], predicted[:, column], s=8)
    ax.axline((0, 0), slope=1, color="0.6", lw=1)
    ax.set_title(f"y{column} = {reg.expression_[column]}", fontsize=8)
    ax.set_xlabel("data")
axes[0].set_ylabel("prediction")
fig.tight_layout()
