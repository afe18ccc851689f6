"""python -m export NAME --format hf|verl|skyrl|tau2|awm|all [--out DIR] [--base-url URL] [--single-turn]

Writes exports/<name>/<format>/ (or DIR/<format>/ with --out) and prints each file written and
the seconds each format took. Exit status 2 when the domain cannot be exported. --single-turn
leaves out the tasks marked conversational (their request alone cannot be done: the agent must
ask the user), for trainers that run episodes without a simulated user.
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import sys
import time
from pathlib import Path

from export import FORMATS, awm, hf, skyrl, tau2, verl
from export.source import DEFAULT_BASE_URL, ExportError, read_domain

WRITERS = {"hf": hf.export, "verl": verl.export, "skyrl": skyrl.export, "tau2": tau2.export, "awm": awm.export}


def run(name: str, formats: list[str], out: Path | None = None, base_url: str = DEFAULT_BASE_URL,
        single_turn: bool = False) -> dict[str, list[Path]]:
    """Export `formats` of domain `name`; each format's folder is replaced whole, and only once it is complete."""
    source = read_domain(name)
    if single_turn:
        source = dataclasses.replace(source, tasks=[t for t in source.tasks if t.mode != "conversational"])
    root = out or Path("exports") / source.name
    written = {}
    for fmt in formats:
        folder, partial = root / fmt, root / f".{fmt}.partial"
        shutil.rmtree(partial, ignore_errors=True)
        started = time.perf_counter()
        try:
            paths = WRITERS[fmt](source, partial, base_url=base_url)
        except BaseException:
            shutil.rmtree(partial, ignore_errors=True)  # a failed export leaves the previous one as it was
            raise
        if folder.exists():
            shutil.rmtree(folder)
        partial.rename(folder)
        written[fmt] = [folder / path.relative_to(partial) for path in paths]
        print(f"{fmt}: {len(source.tasks)} tasks, {len(written[fmt])} files in {folder} "
              f"({time.perf_counter() - started:.2f} s)", file=sys.stderr)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m export", description=__doc__.split("\n\n")[1])
    parser.add_argument("name", help="a built domain under domains/, or a path to one")
    parser.add_argument("--format", default="all", choices=[*FORMATS, "all"])
    parser.add_argument("--out", type=Path, help="folder for the formats (default exports/<name>)")
    parser.add_argument("--base-url", default=DEFAULT_BASE_URL,
                        help="the worldsmith HTTP server verl and SkyRL rows point at (default %(default)s)")
    parser.add_argument("--single-turn", action="store_true", help="leave out the tasks that need the user's answers")
    args = parser.parse_args(argv)
    if not args.base_url.startswith(("http://", "https://")):
        parser.error(f"--base-url must be an http(s) URL, got {args.base_url!r}")
    started = time.perf_counter()
    try:
        written = run(args.name, list(FORMATS) if args.format == "all" else [args.format], args.out, args.base_url,
                      args.single_turn)
    except ExportError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for paths in written.values():
        for path in paths:
            print(path)
    print(f"exported in {time.perf_counter() - started:.2f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
