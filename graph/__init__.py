"""The tool dependency graph: parameter embeddings, LLM refinement, internal/external parameters,
the chain sampler and validator, the picture."""
