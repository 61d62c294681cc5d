"""Full ``sympy.simplify`` against SymPy's automatic evaluation in the generator (a script,
not a test).

Samples trees with the paper's generator settings and turns each into a skeleton twice,
with ``simplification="full"`` and ``"automatic"``: time per tree on one core, how often
the two skeletons are identical, and their lengths. Writes
``benchmarks/results/pretraining/simplification-benchmark.md``.

Usage::

    python -m benchmarks.studies.bench_simplification [--n-trees 1000] [--seed 0]
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

import numpy as np

from pretraining.generator import (
    GeneratedSkeleton,
    GeneratorConfig,
    compact_variables,
    sample_tree,
    simplify_to_skeleton,
    tree_to_prefix,
)

RESULTS = Path(__file__).resolve().parents[1] / "results" / "pretraining" / "simplification-benchmark.md"


def sample_prefixes(n_trees: int, seed: int, config: GeneratorConfig) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    return [tree_to_prefix(compact_variables(sample_tree(rng, config)), rng, config) for _ in range(n_trees)]


def skeletons(prefixes, config: GeneratorConfig) -> tuple[list, float]:
    start = time.perf_counter()
    results = [simplify_to_skeleton(prefix, config) for prefix in prefixes]
    return results, (time.perf_counter() - start) / len(prefixes)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n-trees", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    prefixes = sample_prefixes(args.n_trees, args.seed, GeneratorConfig())
    full, full_seconds = skeletons(prefixes, GeneratorConfig(simplification="full"))
    automatic, automatic_seconds = skeletons(prefixes, GeneratorConfig(simplification="automatic"))
    both = [
        (f.tokens, a.tokens)
        for f, a in zip(full, automatic)
        if isinstance(f, GeneratedSkeleton) and isinstance(a, GeneratedSkeleton)
    ]
    same = sum(f == a for f, a in both)
    differ = [(len(a) - len(f)) for f, a in both if f != a]
    outcome = sum(
        (isinstance(f, GeneratedSkeleton)) == (isinstance(a, GeneratedSkeleton)) for f, a in zip(full, automatic)
    )
    lines = [
        "# Generator simplification: `sympy.simplify` against automatic evaluation",
        "",
        f"Command: `python -m benchmarks.studies.bench_simplification --n-trees {args.n_trees} --seed {args.seed}`  ",
        f"Machine: {platform.machine()}, one core, Python {platform.python_version()}; "
        f"paper generator settings, {args.n_trees} trees; load average at the end "
        f"{' / '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} cores.",
        "",
        "| mode | ms per tree | skeletons kept |",
        "|---|---:|---:|",
        f"| full (`sympy.simplify`, the paper) | {full_seconds * 1e3:.2f} | "
        f"{sum(isinstance(f, GeneratedSkeleton) for f in full)} |",
        f"| automatic (evaluation on construction) | {automatic_seconds * 1e3:.2f} | "
        f"{sum(isinstance(a, GeneratedSkeleton) for a in automatic)} |",
        "",
        f"- Speed-up: {full_seconds / automatic_seconds:.1f}x.",
        f"- Same outcome (kept or rejected) for {outcome} of {args.n_trees} trees.",
        f"- Of the {len(both)} trees kept by both, {same} ({100 * same / max(len(both), 1):.1f}%) give the "
        "identical skeleton.",
        f"- Where they differ ({len(differ)} trees), the automatic skeleton is on average "
        f"{np.mean(differ) if differ else 0:+.2f} tokens longer than the simplified one "
        f"(median {np.median(differ) if differ else 0:+.0f}).",
        "",
    ]
    RESULTS.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
