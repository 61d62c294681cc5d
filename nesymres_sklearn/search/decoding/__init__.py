"""From encoded points to scored skeletons: the model's beam search, sampling, and the
registry that names them."""
