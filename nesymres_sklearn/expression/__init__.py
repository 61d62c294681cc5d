"""Expressions: the operator table, tokens, prefix notation, compiled programs, skeletons.

The lowest layer: it imports neither torch nor anything else of the package.
"""
