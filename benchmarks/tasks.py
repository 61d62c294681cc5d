"""What a benchmark run is made of: tasks, the rows they produce, and planning.

A task is one fit: one method at one value of its swept hyper-parameter, on one
equation, with one number of training points, one seed and one level of target noise
(:meth:`benchmarks.datasets.Equation.target_noise`; 0 in files written before it
existed). Its key (the ``KEY``
columns of its row) identifies it in a result file, so a run can skip the tasks
already done. :func:`plan_tasks` lists every task of a profile in a stable order;
:func:`pending`, :func:`split_not_installed` and :func:`longest_first` narrow and order
that list for the runner.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import pandas as pd

from .datasets import N_TEST_POINTS, Equation, load_dataset
from .methods import get_method
from .profiles import Profile

#: Columns of a result row (and of the result CSV), in order.
COLUMNS = [
    "dataset",
    "equation",
    "method",
    "parameter",
    "value",
    "setting",
    "n_points",
    "seed",
    "noise",
    "status",
    "fit_time",
    "total_time",
    "a1_iid",
    "a1_ood",
    "a2_iid",
    "a2_ood",
    "close_iid",
    "close_ood",
    "r2_iid",
    "r2_ood",
    "solution",
    "model_size",
    "relative_size",
    "expression",
    "true_expression",
    "error",
]
#: Columns that identify a task in a result file.
KEY = ["dataset", "equation", "method", "value", "n_points", "seed", "noise"]


def task_key(dataset, equation, method, value, n_points, seed, noise=0.0) -> tuple:
    """The key of a task from its ``KEY`` values, as read from a CSV or from a task; a
    missing noise level (empty or NaN) is 0."""
    noise = 0.0 if noise is None or noise == "" or pd.isna(noise) else float(noise)
    return (str(dataset), str(equation), str(method), float(value), int(n_points), int(seed), noise)


@dataclass(frozen=True)
class Task:
    """One fit: a method at one setting on one equation."""

    equation: Equation
    method: str
    value: float
    n_points: int = 128
    seed: int = 0
    time_budget: float | None = None
    options: dict = field(default_factory=dict, hash=False, compare=False)
    n_test_points: int = N_TEST_POINTS
    noise: float = 0.0

    def __str__(self) -> str:
        where = f"{self.equation.dataset}/{self.equation.name}"
        return f"{self.method}={self.value} on {where} ({self.n_points} points, seed {self.seed}, noise {self.noise:g})"

    @property
    def key(self) -> tuple:
        equation = self.equation
        return task_key(equation.dataset, equation.name, self.method, self.value, self.n_points, self.seed, self.noise)

    def base_row(self) -> dict:
        """The columns of the task's row that do not depend on the fit."""
        adapter = get_method(self.method)
        return {
            "dataset": self.equation.dataset,
            "equation": self.equation.name,
            "method": self.method,
            "parameter": adapter.parameter,
            "value": self.value,
            "setting": f"{adapter.parameter}={self.value}",
            "n_points": self.n_points,
            "seed": self.seed,
            "noise": self.noise,
            "true_expression": self.equation.expression,
        }


def plan_tasks(profile: Profile, max_equations: int | None = None) -> list[Task]:
    """Every task of a profile, in a stable order (datasets, equations, methods, values,
    points, seeds, noise levels)."""
    tasks = []
    for dataset, names in profile.datasets.items():
        equations = load_dataset(dataset)
        if names is not None:
            by_name = {e.name: e for e in equations}
            missing = [n for n in names if n not in by_name]
            if missing:
                raise ValueError(f"Dataset {dataset} has no equations {missing}.")
            equations = [by_name[n] for n in names]
        if max_equations is not None:
            equations = equations[:max_equations]
        for equation in equations:
            for method, values in profile.methods.items():
                get_method(method)
                options = profile.method_options.get(method, {})
                for value, n_points, seed, noise in itertools.product(
                    values, profile.n_points, profile.seeds, profile.noise
                ):
                    task = Task(equation, method, value, n_points, seed, profile.time_budget, options, noise=noise)
                    tasks.append(task)
    return tasks


def pending(tasks: list[Task], done: set) -> list[Task]:
    """The tasks whose key is not in ``done`` (see :func:`benchmarks.results.read_done`)."""
    return [task for task in tasks if task.key not in done]


def split_not_installed(tasks: list[Task]) -> tuple[list[Task], list[dict]]:
    """``(runnable, rows)``: the tasks whose method can run here, and a
    ``status="not_installed"`` row with the reason for each of the others."""
    reasons = {}
    for method in dict.fromkeys(task.method for task in tasks):
        reason = get_method(method).check_installed()
        if reason is not None:
            reasons[method] = f"not installed: {reason}"
    runnable = [task for task in tasks if task.method not in reasons]
    rows = [
        {**task.base_row(), "status": "not_installed", "error": reasons[task.method]}
        for task in tasks
        if task.method in reasons
    ]
    return runnable, rows


def longest_first(tasks: list[Task]) -> list[Task]:
    """The tasks by decreasing expected cost (ties in planning order): starting the long
    fits first keeps every worker busy to the end of the run."""
    return sorted(tasks, key=lambda task: -get_method(task.method).expected_cost(task.value, task.n_points))
