"""Neural-guided refinement with Operon (``pyoperon``): the network's fitted
candidates seed the population of Operon's genetic programming (``refine="operon"``).

Needs the ``operon`` extra: ``pip install "nesymres-sklearn[operon]"``.
"""
