"""Where generated code is judged: the AST guard, the sandbox worker, procedural tests, and the state-diff reward."""
