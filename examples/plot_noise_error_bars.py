"""
Noisy data and error bars
=========================

On noisy data the constants of the selected equation carry an uncertainty.
``constants_std_`` holds their standard errors (the delta method on the fitted
constants) and ``predict(X, return_std=True)`` the standard deviation of a fresh point
at each ``X``.
"""

import matplotlib.pyplot as plt
import numpy as np

from nesymres_sklearn import NeSymReSRegressor

rng = np.random.default_rng(0)
x = rng.uniform(0, 4, size=(100, 1))
y = 1.7 * np.sin(1.2 * x[:, 0]) + rng.normal(0, 0.05, 100)  # noise: 0.05 standard deviation

reg = NeSymReSRegressor(random_state=0).fit(x, y)
print("equation:", reg.equation(precision=4))
print("skeleton:", reg.equations_.loc[reg.best_index_, "skeleton"])
print("standard errors of its constants:", np.round(reg.constants_std_, 4))

# %%
# ``return_std=True`` gives a fresh point's standard deviation: the constants'
# uncertainty carried through the law, plus the residual noise. The band, two of them,
# is about the noise where the data are and widens outside them.
grid = np.linspace(-1, 6, 200)[:, None]
mean, std = reg.predict(grid, return_std=True)
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.scatter(x[:, 0], y, s=10, color="0.5", label="noisy data")
ax.plot(grid[:, 0], mean, color="C0", label="fitted law")
ax.fill_between(grid[:, 0], mean - 2 * std, mean + 2 * std, color="C0", alpha=0.25, label="± 2 standard deviations")
ax.set_xlabel("x0")
ax.set_ylabel("y")
ax.legend()
fig.tight_layout()
