"""Where generated code is judged: procedural tests run in the sandbox package (verification.sandbox, tool_worker), verdicts, and the state-diff reward."""
