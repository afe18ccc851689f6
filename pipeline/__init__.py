"""The orchestrator: `python -m pipeline NAME` builds a domain by running the stages in order
(agents' verified tools, the tool graph, the report page, the tasks); `python -m pipeline.author`
records a transcript from hand-written answers the same way. The stages never call each other."""
