"""The LLM stages of the domain-foundation pipeline (schema, database, code, tests, debug), the litellm gateway with record/replay, and their LangGraph wiring."""
