"""Tasks: seed tool chains grown into verifiable tasks (initial state, instruction, reward spec).

The task file format (`domains/<name>/tasks/<id>.json`) is the contract the MCP runtime and
trainers read; see `domains.task_model.Task`.
"""
