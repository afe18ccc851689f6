"""The domain artifact and the data contracts every stage reads: the spec (spec.py), the policy
(policy.py), the DB-layer compiler (db_layer.py) and the runtime it writes into db.py with the
exceptions and default clock (db_runtime.py), tool schemas as JSON Schema and the argument check
(tool_schemas.py), the task file format (task_model.py, task.schema.json), the report page
(report_page.py); and one folder per synthesized domain."""
