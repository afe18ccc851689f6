"""The runtime every compiled DB layer (db.py) carries, and the names it defines that the rest of
worldsmith relies on: the exceptions a tool may declare and the default episode clock.

The tool code, the procedural tests, the policy and the task stage all speak of these names;
they are defined once here and written into each db.py from here.
"""

from __future__ import annotations

from typing import Literal, get_args

# The exceptions a tool may declare, subclasses of db.py's ToolError.
ErrorName = Literal["NotFound", "InvalidInput", "Conflict", "PreconditionFailed"]

# The episode clock: what db.now(session) reads when a task (or a test) sets no `now`.
DEFAULT_NOW = "2025-03-01T09:00:00"
CLOCK_SOURCE = 'session.info["now"]'  # set per episode from the task's `now` (per test from ToolTest.now)
CLOCK_READ = "db.now(session) / db.today(session)"

_EXCEPTIONS = "".join(f"\n\nclass {name}(ToolError):\n    pass\n" for name in get_args(ErrorName))

RUNTIME = '''
class ToolError(Exception):
    """Base of the exceptions a tool declares; the message is shown to the agent."""
''' + _EXCEPTIONS + f'''

DEFAULT_NOW = "{DEFAULT_NOW}"
''' + '''

def now(session: Session) -> datetime:
    """The episode clock: fixed per episode so that runs are reproducible."""
    return datetime.fromisoformat(session.info.get("now", DEFAULT_NOW))


def today(session: Session) -> date:
    return now(session).date()


def next_id(session: Session, model: type[SQLModel]) -> str:
    """The next generated primary key of a table: PREFIX-0001, PREFIX-0002, ..."""
    prefix = ID_PREFIX[model.__tablename__]
    pk = getattr(model, PRIMARY_KEY[model.__tablename__])
    highest = 0
    for (key,) in session.execute(select(pk).where(pk.startswith(prefix + "-"))):
        tail = key[len(prefix) + 1:]
        if tail.isdigit():
            highest = max(highest, int(tail))
    return f"{prefix}-{highest + 1:04d}"


def parse_date(value: object, field: str) -> date:
    """Parse a YYYY-MM-DD argument or raise InvalidInput naming the field."""
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    try:
        return date.fromisoformat(str(value))
    except ValueError:
        raise InvalidInput(f"{field} must be a date in YYYY-MM-DD format, got {value!r}") from None


def parse_datetime(value: object, field: str) -> datetime:
    """Parse an ISO date-time (YYYY-MM-DDTHH:MM:SS or YYYY-MM-DD) or raise InvalidInput."""
    if isinstance(value, datetime):
        return value
    try:
        return datetime.fromisoformat(str(value))
    except ValueError:
        raise InvalidInput(f"{field} must be a date-time in YYYY-MM-DDTHH:MM:SS format, got {value!r}") from None


def get_or_raise(session: Session, model: type[SQLModel], key: object) -> SQLModel:
    row = session.get(model, key)
    if row is None:
        raise NotFound(f"{model.__tablename__} {key!r} does not exist")
    return row


def _json(value: object) -> object:
    return value.isoformat() if isinstance(value, (date, datetime)) else value


def to_dict(row: SQLModel) -> dict:
    """A row as JSON-ready data (dates as ISO strings), in column order."""
    return {c: _json(getattr(row, c)) for c in COLUMNS[row.__tablename__]}


def _from_json(table: str, row: dict) -> dict:
    out = {}
    for column, value in row.items():
        kind = COLUMN_TYPES[table].get(column)
        if kind is None:
            raise InvalidInput(f"{table} has no column {column!r}")
        if value is not None and kind == "date":
            value = parse_date(value, f"{table}.{column}")
        elif value is not None and kind == "datetime":
            value = parse_datetime(value, f"{table}.{column}")
        out[column] = value
    return out


def load_state(session: Session, state: dict) -> None:
    """Insert a state (table -> rows of JSON values) in foreign-key order."""
    unknown = set(state) - set(MODELS)
    if unknown:
        raise InvalidInput(f"unknown tables: {sorted(unknown)}")
    for table in TABLE_ORDER:
        for row in state.get(table, []):
            session.add(MODELS[table](**_from_json(table, row)))
        session.flush()


def dump_state(session: Session) -> dict:
    """Every table's rows as JSON values, ordered by primary key."""
    out = {}
    for table in TABLE_ORDER:
        model = MODELS[table]
        rows = session.exec(select(model).order_by(getattr(model, PRIMARY_KEY[table]))).all()
        out[table] = [to_dict(r) for r in rows]
    return out


def create_all(engine) -> None:
    Base.metadata.create_all(engine)
'''
