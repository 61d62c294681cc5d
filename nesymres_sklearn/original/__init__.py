"""Everything about the authors' published checkpoints, as plug-ins of the core.

Importing this package registers

* their number encoding as ``"original"`` in :data:`nesymres_sklearn.network.encoding.ENCODINGS`
  (:mod:`.encoding`);
* their beam search as ``"original"`` in :data:`nesymres_sklearn.search.decoding.registry.DECODERS`
  (:mod:`.beam`);
* the conversion of their ``.ckpt`` files in :data:`nesymres_sklearn.network.weights.CONVERTERS`
  (:mod:`.checkpoint`).

The core holds no branches on any of them. :mod:`nesymres_sklearn.neural_search` (the
estimator's network side) imports this package.
"""

from ..network.weights import CONVERTERS
from . import beam, encoding
from .checkpoint import CHECKPOINT_SUFFIX, converted_folder

CONVERTERS[CHECKPOINT_SUFFIX] = converted_folder

__all__ = ["beam", "encoding", "converted_folder"]
