"""Adapters that put a served worldsmith domain where trainers already are.

They run in the trainers' own environment (`.venv-trainers`: openenv-core, verifiers), which
pins other mcp and fastmcp versions than the core, and talk to a worldsmith HTTP server
(`python -m mcp_servers NAME --transport http`) over its control API and per-episode MCP
endpoints: the core never imports a trainer library, and no adapter imports the core. The
control API needs the server's token: every adapter reads it from WORLDSMITH_CONTROL_TOKEN
(`trainers.control.Control(url, token=...)` takes it directly); the MCP endpoints get none.

- `trainers.openenv_server`: an OpenEnv environment server (HTTP and WebSocket).
- `trainers.verifiers_env`: `load_environment(...)` for verifiers, through that server.
- `trainers.verl_tools`: verl's multi-turn tool and interaction classes, and their configs.
"""
