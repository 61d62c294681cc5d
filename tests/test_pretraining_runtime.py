"""Runtime of a training process: its number of torch threads."""

import pytest

from pretraining.runtime import available_cores, training_threads


@pytest.mark.parametrize(
    "num_workers, cores, expected",
    [(0, 2, 2), (1, 2, 1), (2, 2, 1), (3, 2, 1), (1, 16, 15), (4, 16, 12)],
)
def test_the_training_process_takes_the_cores_its_workers_leave(num_workers, cores, expected):
    assert training_threads(num_workers, cores) == expected


def test_num_threads_wins_and_omp_num_threads_is_left_to_torch():
    assert training_threads(1, 2, num_threads=2) == 2
    assert training_threads(1, 2, num_threads=2, omp_num_threads="1") == 2
    assert training_threads(1, 16, omp_num_threads="4") is None
    assert training_threads(1, 16, omp_num_threads="") == 15


def test_available_cores_is_at_least_one():
    assert available_cores() >= 1
