"""From a point set to fitted candidate equations: decoding, constants, selection."""
