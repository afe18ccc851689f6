"""Run every benchmark in turn; each prints its own figures."""

import importlib
import sys

BENCHES = ["domain", "graph", "mutation", "reward", "runtime", "ray", "rollouts", "tasks", "export"]


def main() -> None:
    chosen = sys.argv[1:] or BENCHES
    for name in chosen:
        print(f"\n== {name} ==", flush=True)
        importlib.import_module(f"bench.{name}").main()


if __name__ == "__main__":
    main()
