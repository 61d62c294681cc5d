import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))

from models import tiny_model_folder  # noqa: E402


@pytest.fixture(scope="session")
def tiny_model():
    """Folder of a random tiny model with 3 variables."""
    return tiny_model_folder(3)


@pytest.fixture
def xy():
    rng = np.random.default_rng(0)
    X = rng.uniform(1, 5, size=(64, 2))
    return X, X[:, 0] * np.sin(X[:, 1])
