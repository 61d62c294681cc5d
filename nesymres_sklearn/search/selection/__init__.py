"""From fitted candidates to the equation a user reads: scores, the table, pruning, the
test of each variable's support, and readable constants."""
