"""
A first fit
===========

Fit ``y = x0*sin(x1)`` on 128 points.
"""

import numpy as np

from nesymres_sklearn import NeSymReSRegressor

rng = np.random.default_rng(0)
X = rng.uniform(1, 5, size=(128, 2))
y = X[:, 0] * np.sin(X[:, 1])
reg = NeSymReSRegressor(random_state=0).fit(X, y)
print(reg.expression_)
