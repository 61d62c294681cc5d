"""Clocks that tests inject where the code reads the time (never the wall clock)."""


class TickingClock:
    """A clock that moves one second each time it is read."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        self.now += 1.0
        return self.now
