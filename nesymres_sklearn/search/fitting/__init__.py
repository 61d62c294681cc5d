"""Fitting the constants of skeletons: Levenberg-Marquardt on compiled programs, the
candidates of one decoding (the network's skeletons, the baseline, the exact polynomial, the
scaled variants)."""
