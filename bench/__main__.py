"""Run the benchmarks, each printing its own figures: `python -m bench [NAME ...]` (all by default)."""

import argparse
import importlib

BENCHES = ["domain", "graph", "mutation", "reward", "runtime", "ray", "rollouts", "tasks", "families", "export"]


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help=f"benchmarks to run, of: {', '.join(BENCHES)} (default: all)")
    chosen = parser.parse_args().names or BENCHES
    if unknown := [name for name in chosen if name not in BENCHES]:
        parser.error(f"no benchmark named {', '.join(unknown)}; choose from {', '.join(BENCHES)}")
    for name in chosen:
        print(f"\n== {name} ==", flush=True)
        importlib.import_module(f"bench.{name}").main()


if __name__ == "__main__":
    main()
