"""Benchmarks: `make bench` runs them all; `python -m bench.<name>` runs one."""
