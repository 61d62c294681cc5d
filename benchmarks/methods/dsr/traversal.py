"""A batch of partial pre-order traversals, grown one token per row at a time.

Besides the tokens, each row keeps the stack of operators whose children are not all
placed yet; from it come what the policy observes and the constraints use for the
next token: its *parent* (the operator it will be a child of), its *sibling* (the
first child of that operator, when the next token is a second child), whether a
trigonometric operator is among its ancestors, and the number of open slots
(*dangling*: a row is complete when it reaches 0).
"""

from __future__ import annotations

import numpy as np

from .library import Library

#: Parent or sibling of a token that has none (the first token, a first child).
EMPTY = -1


class PartialTraversals:
    """``n`` partial traversals of at most ``max_length`` tokens over ``library``.

    Attributes
    ----------
    tokens : ndarray of int, shape (n, max_length)
        Tokens so far, ``-1`` after each row's end.
    length : ndarray of int, shape (n,)
    dangling : ndarray of int, shape (n,)
        Open child slots; 1 for an empty row, 0 for a complete one.
    n_constants : ndarray of int, shape (n,)
        ``const`` tokens so far.
    """

    def __init__(self, library: Library, n: int, max_length: int):
        self.library = library
        self.tokens = np.full((n, max_length), -1, dtype=np.int64)
        self.length = np.zeros(n, dtype=np.int64)
        self.dangling = np.ones(n, dtype=np.int64)
        self.n_constants = np.zeros(n, dtype=np.int64)
        # Stack of open operators: token, children placed, first child's token.
        self._stack = np.full((n, max_length), -1, dtype=np.int64)
        self._filled = np.zeros((n, max_length), dtype=np.int64)
        self._first_child = np.full((n, max_length), EMPTY, dtype=np.int64)
        self._depth = np.zeros(n, dtype=np.int64)

    @classmethod
    def from_tokens(cls, library: Library, rows, max_length: int = 30) -> PartialTraversals:
        """Traversals holding the given token lists (rows may have different lengths)."""
        state = cls(library, len(rows), max_length)
        for position in range(max((len(row) for row in rows), default=0)):
            which = np.array([i for i, row in enumerate(rows) if position < len(row)])
            state.append(np.array([rows[i][position] for i in which]), rows=which)
        return state

    @property
    def finished(self) -> np.ndarray:
        return self.dangling == 0

    def _top(self):
        rows = np.flatnonzero(self._depth > 0)
        return rows, self._depth[rows] - 1

    @property
    def parent(self) -> np.ndarray:
        """Token of the next token's parent, :data:`EMPTY` where it has none."""
        parent = np.full(len(self.length), EMPTY, dtype=np.int64)
        rows, top = self._top()
        parent[rows] = self._stack[rows, top]
        return parent

    @property
    def sibling(self) -> np.ndarray:
        """Token of the next token's left sibling, :data:`EMPTY` where it has none."""
        sibling = np.full(len(self.length), EMPTY, dtype=np.int64)
        rows, top = self._top()
        second = self._filled[rows, top] == 1
        sibling[rows[second]] = self._first_child[rows[second], top[second]]
        return sibling

    @property
    def trig_ancestor(self) -> np.ndarray:
        """Whether a trigonometric operator is an ancestor of the next token."""
        on_stack = np.arange(self._stack.shape[1])[None, :] < self._depth[:, None]
        trig = self.library.trig[np.maximum(self._stack, 0)]
        return (trig & on_stack).any(axis=1)

    def append(self, token: np.ndarray, rows: np.ndarray | None = None) -> None:
        """Append ``token[k]`` to row ``rows[k]`` (default: every unfinished row, in order)."""
        if rows is None:
            rows = np.flatnonzero(~self.finished)
            token = np.asarray(token)[rows]
        rows, token = np.asarray(rows, dtype=np.int64), np.asarray(token, dtype=np.int64)
        if self.finished[rows].any():
            raise ValueError("Cannot append to a complete traversal.")
        arity = self.library.arity[token]
        self.tokens[rows, self.length[rows]] = token
        self.length[rows] += 1
        self.dangling[rows] += arity - 1
        self.n_constants[rows] += token == self.library.const_index
        # The token starts the subtree of its parent's next child slot.
        depth = self._depth[rows]
        first = (depth > 0) & (self._filled[rows, np.maximum(depth - 1, 0)] == 0)
        self._first_child[rows[first], depth[first] - 1] = token[first]
        # An operator opens a node; a terminal completes subtrees up the stack.
        opens = arity > 0
        pushed = rows[opens]
        self._stack[pushed, depth[opens]] = token[opens]
        self._filled[pushed, depth[opens]] = 0
        self._first_child[pushed, depth[opens]] = EMPTY
        self._depth[pushed] += 1
        completed = rows[~opens]
        while completed.size:
            completed = completed[self._depth[completed] > 0]
            top = self._depth[completed] - 1
            self._filled[completed, top] += 1
            closed = self._filled[completed, top] == self.library.arity[self._stack[completed, top]]
            completed = completed[closed]
            self._depth[completed] -= 1
