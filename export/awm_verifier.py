"""The verifier an AWM entry carries, in AWM's code mode: compares the final DB with the expected one.

This file is emitted as source, after an `EXPECTED = json.loads(...)` line, so it uses only
sqlite3, json and re (what AWM's verifier sandbox allows) and nothing from the project.

EXPECTED, per table (tables listed parents first): `pk`, `columns` {column: exempt|hard|semantic},
`refs` {column: table it points at}, and the changes the reference solution makes: `inserted`
rows, `updated` {pk: {column: value}}, `deleted` pks. Like worldsmith's reward, it compares what
changed: every expected change must be found and nothing else may change (exempt columns:
generated ids and timestamps, ignored). Inserted rows are matched by content, and references
to inserted rows are followed through the matching, so other generated ids still pass. Semantic
columns must be equal after normalisation (case, spacing, end punctuation); worldsmith's own
reward also accepts close paraphrases by embedding similarity, which this code cannot load.
"""

import json  # noqa: F401  (used by the EXPECTED line emitted above this code)
import re
import sqlite3

_DATETIME = re.compile(r"^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2})?)(?:\.0*)?$")


def _norm(value, policy):
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)):
        return round(float(value), 9)
    if isinstance(value, str):
        match = _DATETIME.match(value)
        if match:
            clock = match.group(2) if len(match.group(2)) == 8 else match.group(2) + ":00"
            return match.group(1) + "T" + clock
        if policy == "semantic":
            return re.sub(r"\s+", " ", value).strip().rstrip(".!").casefold()
    return value


def _rows(path, table, pk):
    connection = sqlite3.connect("file:" + path + "?mode=ro", uri=True)
    try:
        connection.row_factory = sqlite3.Row
        return {row[pk]: dict(row) for row in connection.execute('SELECT * FROM "' + table + '"')}
    finally:
        connection.close()


def verify_task_completion(initial_db_path, final_db_path, final_answer=""):
    checks = []
    mapping = {}  # (table, expected pk) -> pk the episode gave the inserted row
    initial, final = {}, {}
    for name, table in EXPECTED["tables"].items():  # noqa: F821  (defined by the emitted header)
        initial[name] = _rows(initial_db_path, name, table["pk"])
        final[name] = _rows(final_db_path, name, table["pk"])

    def expected_value(table, column, value):
        target = table["refs"].get(column)
        return mapping.get((target, value), value) if target else value

    def same(table, row, expected):
        return all(_norm(row.get(c), table["columns"].get(c)) == _norm(expected_value(table, c, v), table["columns"].get(c))
                   for c, v in expected.items() if table["columns"].get(c, "hard") != "exempt")

    for name, table in EXPECTED["tables"].items():  # noqa: F821
        new = [pk for pk in final[name] if pk not in initial[name]]
        for expected in table["inserted"]:
            found = next((pk for pk in new if same(table, final[name][pk], expected)), None)
            checks.append((f"{name}: insert {expected.get(table['pk'])}", found is not None))
            if found is not None:
                new.remove(found)
                mapping[(name, expected.get(table["pk"]))] = found
        checks += [(f"{name}: unexpected insert {pk}", False) for pk in new]
    for name, table in EXPECTED["tables"].items():  # noqa: F821
        for pk, before in initial[name].items():
            after = final[name].get(pk)
            if pk in table["deleted"]:
                checks.append((f"{name}: delete {pk}", after is None))
            elif after is None:
                checks.append((f"{name}: unexpected delete {pk}", False))
            else:
                wanted = {**before, **table["updated"].get(pk, {})}
                label = "update" if pk in table["updated"] else "unchanged"
                checks.append((f"{name}: {label} {pk}", same(table, after, wanted)))
    failed = [label for label, ok in checks if not ok]
    return {"result": "complete" if not failed else "others", "passed": len(checks) - len(failed),
            "total": len(checks), "failed": failed[:20]}
