"""More features than the network has variables: what the network reads (a power-law
factor split off, combinations of the features, the most relevant ones, separable
parts), and the map of its candidates back to all features."""
