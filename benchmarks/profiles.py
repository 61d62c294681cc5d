"""Named run profiles: which datasets, methods, settings and budgets a run covers.

- ``quick``: a few equations and tiny budgets; the test suite runs it end to end (a
  test marked slow).
- ``laptop``: AI-Feynman and Nguyen with modest sweeps that finish in well under an
  hour on a 2-core CPU (the committed run of ``docs/benchmarks.md``).
- ``points``: accuracy against the number of training points (the paper's figure),
  for NeSymReS, the Gaussian process and DSR at fixed settings.
- ``anytime``: accuracy against time per fit on AI-Feynman and Nguyen over seeds
  0-2: NeSymReS at time budgets of 0.3, 1, 3 and 10 s against Operon at 10k, 50k, 200k
  and 1M evaluations.
- ``hybrid``: the network seeding Operon (``nesymres-operon``) against Operon alone
  with the same settings (``operon-timed``) and the network alone
  (``nesymres-anytime``) at equal wall-clock budgets of 1, 3 and 10 s, seeds 0-2, on
  AI-Feynman, Nguyen, SOOSE and the many-variable AI-Feynman set.
- ``noise``: SRBench's ground-truth track: Gaussian noise of 0, 0.001, 0.01 and 0.1
  times the RMS of the training targets on AI-Feynman and Nguyen, seeds 0-2, the
  network seeding Operon against Operon alone, both with a 1 s budget.
- ``validation``: the validation sets (held-out skeletons of the pretraining bank),
  for choosing models and settings; never reported as results.
- ``full``: the paper's comparison: every dataset, the paper's hyper-parameter ranges
  (table "Hyper-parameters that vary to increase the amount of compute"), meant for a
  cluster (``--backend dask`` or ``ray``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace


@dataclass(frozen=True)
class Profile:
    """What a run covers.

    Parameters
    ----------
    datasets : dict
        Dataset name -> list of equation names, or ``None`` for all of them.
    methods : dict
        Method name -> values of its swept hyper-parameter.
    n_points : tuple of int
        Training-set sizes (the paper's default is 128).
    seeds : tuple of int
        Seeds of the training points and of the methods.
    time_limit : float
        Hard per-fit limit in seconds (the fit is killed and recorded as a timeout).
    time_budget : float
        Soft per-fit budget handed to methods that take one (NeSymReS' constant
        fitting, gplearn's generations, Operon's and PySR's time limits).
    method_options : dict
        Method name -> extra keyword arguments of its adapter.
    noise : tuple of float
        Levels of Gaussian noise on the training targets, in units of their RMS.
    """

    datasets: dict
    methods: dict
    n_points: tuple = (128,)
    seeds: tuple = (0,)
    time_limit: float = 600.0
    time_budget: float = 300.0
    method_options: dict = field(default_factory=dict)
    noise: tuple = (0.0,)

    def with_overrides(self, **changes) -> Profile:
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


PROFILES = {
    "quick": Profile(
        datasets={"aifeynman": ["AIF-05", "AIF-13"], "nguyen": ["Nguyen-1"]},
        methods={
            "nesymres": (1,),
            "gplearn": (64,),
            "gpr": (1,),
            "operon": (2000,),
            "dsr": (100,),
            "pysr": (5,),
        },
        time_limit=60.0,
        time_budget=5.0,
        method_options={"gplearn": {"generations": 3}, "nesymres": {"n_restarts": 1}},
    ),
    "laptop": Profile(
        datasets={"aifeynman": None, "nguyen": None},
        methods={
            "nesymres": (1, 4, 16, 32),
            "gplearn": (1024, 2048, 4096),
            "gpr": (8, 16, 32),
            "operon": (10_000, 100_000),
            # Expressions sampled: 1 and 4 batches of 1000 (the paper: 2M on Nguyen); the 8 s
            # soft budget stops 4,000 early where BFGS on the constants is slow.
            "dsr": (1_000, 4_000),
            "pysr": (10, 40),
        },
        time_limit=30.0,
        time_budget=8.0,
    ),
    "points": Profile(
        datasets={"aifeynman": None, "nguyen": None},
        methods={"nesymres": (4,), "gpr": (8,), "dsr": (1_000,)},
        n_points=(16, 32, 64, 128, 256, 512),
        time_limit=30.0,
        time_budget=8.0,
    ),
    "anytime": Profile(
        datasets={"aifeynman": None, "nguyen": None},
        methods={
            "nesymres-anytime": (0.3, 1.0, 3.0, 10.0),
            "operon": (10_000, 50_000, 200_000, 1_000_000),
        },
        seeds=(0, 1, 2),
        time_limit=60.0,
        time_budget=10.0,
    ),
    "hybrid": Profile(
        datasets={name: None for name in ("aifeynman", "nguyen", "soose-wc", "soose-nc", "soose-fc", "aifeynman-many")},
        methods={
            "nesymres-operon": (1.0, 3.0, 10.0),
            "operon-timed": (1.0, 3.0, 10.0),
            "nesymres-anytime": (1.0, 3.0, 10.0),
        },
        seeds=(0, 1, 2),
        time_limit=60.0,
        time_budget=10.0,
    ),
    "noise": Profile(
        datasets={"aifeynman": None, "nguyen": None},
        methods={"nesymres-operon": (1.0,), "operon-timed": (1.0,)},
        seeds=(0, 1, 2),
        noise=(0.0, 0.001, 0.01, 0.1),
        time_limit=60.0,
        time_budget=10.0,
    ),
    "validation": Profile(
        datasets={"validation-wc": None, "validation-fc": None},
        methods={"nesymres": (32,)},
        time_limit=30.0,
        time_budget=8.0,
    ),
    "full": Profile(
        datasets={name: None for name in ("aifeynman", "nguyen", "soose-wc", "soose-nc", "soose-fc")},
        methods={
            "nesymres": tuple(2**k for k in range(0, 9)),
            "gplearn": tuple(2**k for k in range(10, 16)),
            "gpr": (8, 16, 32),
            "operon": (10_000, 100_000, 1_000_000),
            "dsr": tuple(1_000 * 2**k for k in range(2, 8)),
            "pysr": (10, 40, 160),
        },
        time_limit=3600.0,
        time_budget=1800.0,
        method_options={"gplearn": {"generations": 20}},
    ),
}


def get_profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f"Unknown profile {name!r}; expected one of {sorted(PROFILES)}.") from None
