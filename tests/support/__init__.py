"""Reusable test code: local OpenAI-compatible endpoints, scripted domains and tasks, the fixture
domain's builder, and the probes run under the trainers' environment."""
