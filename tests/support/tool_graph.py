"""Small hand-made tool graphs: a job board's ten tools and the data flows between them."""

from __future__ import annotations

from domains.spec import ToolSchema
from graph import model


def make_graph(tools: dict[str, tuple[list[tuple[str, bool, str]], list[str]]],
               flows: list[tuple[str, str, str, str]], relations: list[tuple[str, str]] = ()):
    """tools: name → ([(parameter, required, role)], [outputs]); flows: (producer, output, consumer, parameter)."""
    schemas = [ToolSchema(name=name, description=name, mutates=False,
                          parameters=[{"name": p, "type": "string", "description": p, "required": req}
                                      for p, req, _ in params],
                          output=[{"name": o, "type": "string"} for o in outs])
               for name, (params, outs) in tools.items()]
    g = model.skeleton(schemas, {})
    for name, (params, _) in tools.items():
        for p, _, role in params:
            g.nodes[model.param_id(name, "in", p)]["role"] = role
    for producer, output, consumer, parameter in flows:
        model.add_evidence(g, producer, consumer, "data_flow", "embedding", "", output, parameter, 0.9)
    for producer, consumer in relations:
        model.add_evidence(g, producer, consumer, "condition", "llm", "needs it first")
    return g


JOBS = make_graph(
    {
        "search_jobs": ([("keywords", True, "external"), ("location", False, "external")], ["job_id", "company_id"]),
        "get_job": ([("job_id", True, "internal")], ["job_id", "company_id"]),
        "get_company": ([("company_id", True, "internal")], ["company_id"]),
        "upload_resume": ([("content", True, "external")], ["resume_id"]),
        "list_resumes": ([], ["resume_id"]),
        "submit_application": ([("job_id", True, "internal"), ("resume_id", True, "internal"),
                                ("note", False, "external")], ["application_id"]),
        "list_applications": ([("status", False, "external")], ["application_id", "job_id"]),
        "withdraw_application": ([("application_id", True, "internal")], ["application_id"]),
        "schedule_interview": ([("application_id", True, "internal"), ("date", True, "external")], ["interview_id"]),
        "clear_history": ([], []),
    },
    [("search_jobs", "job_id", "get_job", "job_id"), ("search_jobs", "job_id", "submit_application", "job_id"),
     ("search_jobs", "company_id", "get_company", "company_id"), ("get_job", "company_id", "get_company", "company_id"),
     ("get_job", "job_id", "submit_application", "job_id"), ("upload_resume", "resume_id", "submit_application", "resume_id"),
     ("list_resumes", "resume_id", "submit_application", "resume_id"),
     ("submit_application", "application_id", "withdraw_application", "application_id"),
     ("submit_application", "application_id", "schedule_interview", "application_id"),
     ("list_applications", "application_id", "withdraw_application", "application_id"),
     ("list_applications", "application_id", "schedule_interview", "application_id"),
     ("list_applications", "job_id", "get_job", "job_id")],
    [("search_jobs", "clear_history"), ("upload_resume", "list_resumes")],
)
