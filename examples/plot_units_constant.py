"""
Units and a physical constant
=============================

With the units of the columns, the network reads dimensionless groups of the features,
candidates whose dimensions do not match are set aside, and the fewest physical
constants that close the units join the law. Here the relativistic mass
``m0/sqrt(1 - v**2/c**2)``: the speed of light is found from the units alone, and the
law is written with ``c``.
"""

import matplotlib.pyplot as plt
import numpy as np

from nesymres_sklearn import NeSymReSRegressor

rng = np.random.default_rng(1)
X = np.c_[rng.uniform(1, 5, 100), rng.uniform(-2.5e8, 2.5e8, 100)]  # rest mass (kg), speed (m/s)
y = X[:, 0] / np.sqrt(1 - X[:, 1] ** 2 / 299792458.0**2)

reg = NeSymReSRegressor(beam_size=8, random_state=0).fit(X, y, X_units=["kg", "m/s"], y_units="kg")
print(reg.expression_)
print(reg.physical_constants_)
print("groups:", reg.pi_groups_)

# %%
# The law, with its constant, predicts up to the speed of light, beyond the training
# speeds.
speed = np.linspace(0, 0.99 * 299792458.0, 200)
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.plot(speed / 299792458.0, 1 / np.sqrt(1 - speed**2 / 299792458.0**2), color="0.6", lw=4, label="truth")
ax.plot(speed / 299792458.0, reg.predict(np.c_[np.ones_like(speed), speed]), color="C0", label=str(reg.expression_))
ax.axvspan(0, 2.5e8 / 299792458.0, color="C0", alpha=0.08, label="training speeds")
ax.set_xlabel("v / c")
ax.set_ylabel("mass of 1 kg at rest (kg)")
ax.legend(loc="upper left")
fig.tight_layout()
