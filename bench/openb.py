"""Time the openb validation protocol: one run per policy on one pod list and seed.

The protocol is bench/validate_openb.py's (the FGD simulator's: the 1,213 GPU
nodes, pods arriving one by one until 130 % of GPU capacity is requested);
this benchmark only times it and prints the GPU allocation at 130 % next to
each run's CPU seconds, without rewriting docs/VALIDATION.md. The baseline,
measured in the same run, is BestFit (the simplest score).

    python -m bench.openb [--family default] [--seed 42] [--policies fgd,bestfit,random]
"""

from __future__ import annotations

import argparse

from bench.validate_openb import run_one

BASELINE = "bestfit"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", default="default")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--policies", default="fgd,bestfit,random")
    args = parser.parse_args()
    policies = [p for p in args.policies.split(",") if p]
    seconds: dict[str, float] = {}
    for policy in policies:
        _, _, _, curve, cpu_seconds = run_one((args.family, policy, args.seed))
        seconds[policy] = cpu_seconds
        print(
            f"openb {args.family} seed {args.seed} {policy:<8} place CPU {cpu_seconds:6.2f} s, "
            f"GPU allocation at 130 % {curve[130]:.2f} %",
            flush=True,
        )
    if BASELINE in seconds:
        for policy, cpu_seconds in seconds.items():
            print(f"openb {policy:<8} × {BASELINE}: {cpu_seconds / seconds[BASELINE]:.2f}")


if __name__ == "__main__":
    main()
