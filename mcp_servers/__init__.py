"""A verified domain served as episodes: in process, and over MCP (stdio or HTTP).

runtime.py       Environment and Episode, the in-process API (tasks, rewards, resets)
pool.py          the episode processes (lifecycle), over sandbox.forkserver
episode_process.py, episode_db.py   an episode process's confined side; episode_files.py its files
monitor.py       replaces episode processes that died
schemas.py       what the agent sees of a tool, and argument validation
server.py        the FastMCP server, the agent's surface: tools and instructions only
http_app.py      many episodes over HTTP: the trainer's control API (bearer token) and one
                 MCP endpoint per episode (the agent's, no token)
control_token.py the control API's credential: where the server takes it, how clients send it
http_process.py  the HTTP server in a child process with a fresh token (evaluations, tests)
sample_state.py  a consistent starting state assembled from the procedural tests
__main__.py      python -m mcp_servers NAME [--task ID] [--transport stdio|http]
"""
