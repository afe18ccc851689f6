"""The LLM stages that build a domain's tools (schema, database, policy, code, tests, debug, mutation
gate) and their LangGraph wiring; the gateway they call is llm/."""
