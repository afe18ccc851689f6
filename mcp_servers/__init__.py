"""A verified domain served as episodes: in process, and over MCP (stdio or HTTP).

runtime.py       Environment and Episode, the in-process API (tasks, rewards, resets)
pool.py          the episode processes (lifecycle), over sandbox.forkserver
episode_process.py, episode_db.py   an episode process's confined side; episode_files.py its files
monitor.py       replaces episode processes that died
schemas.py       what the agent sees of a tool, and argument validation
server.py        the FastMCP server: the tools, and the trainer's resources
http_app.py      many episodes over HTTP: control API and one MCP endpoint per episode
sample_state.py  a consistent starting state assembled from the procedural tests
__main__.py      python -m mcp_servers NAME [--task ID] [--transport stdio|http]
"""
