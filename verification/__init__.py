"""Where generated code is judged: procedural tests run through the sandbox package
(verification.sandbox, tool_worker), verdicts, the mutation gate, and the state-diff reward."""
