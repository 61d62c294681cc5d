"""
A first fit
===========

Fit ``y = x0*sin(x1)`` from 128 points with the bundled model, read the selected
equation and the candidate table ``equations_``, and compare the equation's predictions
with the data, inside the training box and outside it.
"""

import matplotlib.pyplot as plt
import numpy as np

from nesymres_sklearn import NeSymReSRegressor

rng = np.random.default_rng(0)
X = rng.uniform(1, 5, size=(128, 2))
y = X[:, 0] * np.sin(X[:, 1])

reg = NeSymReSRegressor(random_state=0).fit(X, y)
print(reg.expression_)

# %%
# ``equations_`` holds every candidate, best first: its expression, the loss on the
# training points, the complexity (prefix tokens) and where it came from.
print(reg.equations_[["expression", "loss", "complexity", "origin"]].head())

# %%
# A symbolic law holds outside the training box too: predict on ``x1`` up to 8.
grid = np.linspace(0, 8, 200)
X_new = np.c_[np.full_like(grid, 3.0), grid]
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.plot(grid, 3.0 * np.sin(grid), color="0.6", lw=4, label="truth, x0 = 3")
ax.plot(grid, reg.predict(X_new), color="C0", label=f"fitted: {reg.equation(precision=4)}")
ax.axvspan(1, 5, color="C0", alpha=0.08, label="training range of x1")
ax.set_xlabel("x1")
ax.set_ylabel("y")
ax.legend(loc="lower left")
fig.tight_layout()
