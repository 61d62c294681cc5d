"""Neural symbolic regression that scales, as a scikit-learn estimator."""

__version__ = "0.1.0"

from .estimator import NeSymReSRegressor  # noqa: E402

__all__ = ["NeSymReSRegressor", "__version__"]
