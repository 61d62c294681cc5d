"""Neural symbolic regression that scales, as a scikit-learn estimator."""

__version__ = "0.1.0"
__all__ = ["NeSymReSRegressor", "__version__"]


def __getattr__(name):
    # Lazy, so that importing the expression core (e.g. in data-loader workers)
    # does not pull in scikit-learn and pandas.
    if name == "NeSymReSRegressor":
        from .estimator import NeSymReSRegressor

        return NeSymReSRegressor
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
