"""The bundled domains: where they live, which exist, and what a user's list of names means.

A bundled domain is a folder under the domains root holding `spec.json` and `tools.py`; the list
is read from the folder, never written down. The root is this package's folder, or the folder
the WORLDSMITH_DOMAINS environment variable names (tests point it at a temporary copy).

A user names domains as `all` (every bundled one), a set's name, or names separated by commas,
mixed freely: `set_a`, `job_seeking,pet_care`, `set_a,email_management`. The sets are ScaleEnv's
Table 5 stability sets; both hold job_seeking, so holding one out of the other moves job_seeking
to the held-out side, and `split` says so.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from domains.spec import IDENT_HELP, valid_name

ROOT_ENV = "WORLDSMITH_DOMAINS"
ALL = "all"
# ScaleEnv, Table 5: two 4-domain training sets compared for stability.
SETS: dict[str, tuple[str, ...]] = {
    "set_a": ("wedding_planning", "knowledge_management", "job_seeking", "healthcare_telemedicine"),
    "set_b": ("express_logistics", "job_seeking", "email_management", "pet_care"),
}


class UnknownDomain(LookupError):
    """A name that is no bundled domain (or not a valid name); the message lists what there is."""


def root() -> Path:
    """The folder holding one folder per domain."""
    override = os.environ.get(ROOT_ENV)
    return Path(override).resolve() if override else Path(__file__).resolve().parent


def folder(name: str) -> Path:
    """Where domain `name` lives (or will, once built): a folder under the root."""
    if not valid_name(name):
        raise UnknownDomain(f"{name!r} is not a valid domain name: {IDENT_HELP}")
    return root() / name


def is_bundled(name: str) -> bool:
    return valid_name(name) and (root() / name / "spec.json").is_file() and (root() / name / "tools.py").is_file()


def bundled() -> list[str]:
    """Every bundled domain's name, sorted."""
    base = root()
    return sorted(p.name for p in base.iterdir() if p.is_dir() and is_bundled(p.name)) if base.is_dir() else []


def described() -> str:
    """The bundled domains and the sets, for a message."""
    sets = "; ".join(f"{name} = {', '.join(members)}" for name, members in SETS.items())
    return f"bundled: {', '.join(bundled()) or 'none'} (sets: {sets}; {ALL!r}: every bundled domain)"


def resolve(domain: str | Path) -> Path:
    """A domain folder from a bundled name or a path to a folder with spec.json."""
    path = Path(domain)
    if (path / "spec.json").is_file():
        return path.resolve()
    if valid_name(str(domain)) and (root() / str(domain) / "spec.json").is_file():
        return root() / str(domain)
    raise FileNotFoundError(f"no domain {str(domain)!r}: expected domains/{domain}/spec.json "
                            f"(build it with `make domain NAME={domain}`) or a path to a domain folder; {described()}")


def expand(names: str | Iterable[str]) -> list[str]:
    """A user's list (`all`, set names, names; comma-separated or already split) as domain names,
    in the order given, each once. Names are checked as names, not for being built: a build
    names domains that do not exist yet. `all` means the bundled ones."""
    parts = names.split(",") if isinstance(names, str) else [p for n in names for p in n.split(",")]
    out: list[str] = []
    for part in (p.strip() for p in parts):
        if not part:
            continue
        members = bundled() if part == ALL else SETS.get(part, (part,))
        for name in members:
            if not valid_name(name):
                raise UnknownDomain(f"{name!r} is not a domain name ({IDENT_HELP}) nor {ALL!r} or a set; {described()}")
            if name not in out:
                out.append(name)
    if not out:
        raise UnknownDomain(f"no domain named in {names!r}; {described()}")
    return out


def require_bundled(names: Iterable[str]) -> list[str]:
    """`names` when each is a bundled domain; else UnknownDomain naming the missing ones."""
    names = list(names)
    missing = [n for n in names if not is_bundled(n)]
    if missing:
        raise UnknownDomain(f"no domain {', '.join(map(repr, missing))}: expected domains/<name>/spec.json and tools.py "
                            f"(build it with `make domain NAME=<name>`); {described()}")
    return names


@dataclass(frozen=True)
class Split:
    """Domains for training and held-out domains for testing; `notes` says what moved and why."""

    train: list[str]
    test: list[str]
    notes: list[str] = field(default_factory=list)


def split(names: str | Iterable[str], holdout: str | Iterable[str]) -> Split:
    """Every domain of `names` and `holdout`: the held-out ones are the test side, the rest train.
    A held-out domain that a named training set also holds (job_seeking, in both Table 5 sets)
    goes to test only, and a note says so."""
    train_side, test = expand(names), expand(holdout)
    notes = []
    asked = [p.strip() for n in ([names] if isinstance(names, str) else names) for p in n.split(",")]
    for name in (n for n in train_side if n in test):
        owners = [s for s in asked if s in SETS and name in SETS[s]] + (["all"] if ALL in asked else [])
        if owners and name not in asked:
            notes.append(f"{name} is in {' and '.join(owners)} and also held out: it is held out (test rows "
                         f"only), so the training side has no {name}")
    train = [n for n in train_side if n not in test]
    if not train:
        raise UnknownDomain(f"holding out {', '.join(test)} leaves no domain to train on")
    return Split(train, test, notes)
