"""python -m export NAMES --format hf|verl|skyrl|tau2|awm|all [--holdout NAMES] [--out DIR] [--base-url URL] [--single-turn]

Writes exports/<name>/<format>/ (or DIR/<format>/ with --out) and prints each file written and
the seconds each format took. Exit status 2 when a domain cannot be exported. --single-turn
leaves out the tasks marked conversational (their request alone cannot be done: the agent must
ask the user), for trainers that run episodes without a simulated user. NAMES may name several
domains (comma-separated, a set such as set_a, or all): they make one dataset with `domain` as a
column (export/mixed.py), into exports/<names joined by +>/ by default; --holdout names the
domains whose tasks form the test split, every other domain's the train split.
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import sys
import time
from pathlib import Path

from domains import registry
from export import FORMATS, awm, hf, skyrl, tau2, verl
from export.mixed import export_mixed
from export.source import DEFAULT_BASE_URL, DomainSource, ExportError, read_domain

WRITERS = {"hf": hf.export, "verl": verl.export, "skyrl": skyrl.export, "tau2": tau2.export, "awm": awm.export}


def run(name: str | Path, formats: list[str], out: Path | None = None, base_url: str = DEFAULT_BASE_URL,
        single_turn: bool = False, holdout: str | None = None) -> dict[str, list[Path]]:
    """Export `formats` of one domain, or of several as one dataset (split by domain with
    `holdout`); each format's folder is replaced whole, and only once it is complete."""
    one = Path(name, "spec.json").is_file()
    try:
        names = [str(name)] if one else registry.expand(str(name))
        split = registry.split(names if one else str(name), holdout) if holdout else registry.Split(names, [])
    except LookupError as error:
        raise ExportError(str(error)) from None
    for note in split.notes:
        print(f"note: {note}", file=sys.stderr)

    def source_of(domain: str) -> DomainSource:
        source = read_domain(domain)
        if single_turn:
            source = dataclasses.replace(source, tasks=[t for t in source.tasks if t.mode != "conversational"])
        return source

    if len(names) == 1 and not holdout:
        source = source_of(names[0])
        return _write(formats, out or Path("exports") / source.name, len(source.tasks),
                      lambda fmt, folder: WRITERS[fmt](source, folder, base_url=base_url))
    splits = {"train": [source_of(d) for d in split.train]}
    if split.test:
        splits["test"] = [source_of(d) for d in split.test]
    label = str(name).replace(",", "+") + (f"-holdout-{holdout.replace(',', '+')}" if holdout else "")
    for side, sources in splits.items():
        print(f"{side}: {', '.join(f'{s.name} ({len(s.tasks)} tasks)' for s in sources)}", file=sys.stderr)
    return _write(formats, out or Path("exports") / label, sum(len(s.tasks) for g in splits.values() for s in g),
                  lambda fmt, folder: export_mixed(fmt, splits, folder, base_url, WRITERS[fmt]))


def _write(formats: list[str], root: Path, tasks: int, write) -> dict[str, list[Path]]:
    """`write(format, folder)` into a partial folder per format, renamed into place once complete."""
    written = {}
    for fmt in formats:
        folder, partial = root / fmt, root / f".{fmt}.partial"
        shutil.rmtree(partial, ignore_errors=True)
        started = time.perf_counter()
        try:
            paths = write(fmt, partial)
        except BaseException:
            shutil.rmtree(partial, ignore_errors=True)  # a failed export leaves the previous one as it was
            raise
        if folder.exists():
            shutil.rmtree(folder)
        partial.rename(folder)
        written[fmt] = [folder / path.relative_to(partial) for path in paths]
        print(f"{fmt}: {tasks} tasks, {len(written[fmt])} files in {folder} "
              f"({time.perf_counter() - started:.2f} s)", file=sys.stderr)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m export", description=__doc__.split("\n\n")[1])
    parser.add_argument("name", help="a built domain under domains/ or a path to one; or several as one dataset: "
                                     "names separated by commas, a set (set_a, set_b) or all")
    parser.add_argument("--format", default="all", choices=[*FORMATS, "all"])
    parser.add_argument("--out", type=Path, help="folder for the formats (default exports/<name>)")
    parser.add_argument("--base-url", default=DEFAULT_BASE_URL,
                        help="the worldsmith HTTP server verl and SkyRL rows point at (default %(default)s)")
    parser.add_argument("--holdout", help="domains (names, a set) whose tasks form the test split; the rest train")
    parser.add_argument("--single-turn", action="store_true", help="leave out the tasks that need the user's answers")
    args = parser.parse_args(argv)
    if not args.base_url.startswith(("http://", "https://")):
        parser.error(f"--base-url must be an http(s) URL, got {args.base_url!r}")
    started = time.perf_counter()
    try:
        written = run(args.name, list(FORMATS) if args.format == "all" else [args.format], args.out, args.base_url,
                      args.single_turn, args.holdout)
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
