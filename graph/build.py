"""The graph stage: match, refine, prune, classify; and its outputs graph.json, graph.svg, graph.md."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import networkx as nx

from domains.spec import DomainSpec
from graph import model
from graph.classify import classify
from graph.match import inputs, match, outputs, texts, threshold_for
from graph.prune import prune_uninformative
from graph.refine import refine
from graph.render import report_page, svg
from graph.sampler import sampleable
from llm import LLM
from llm.embeddings import embed, model_name


def build_graph(spec: DomainSpec, tools: list[str], llm: LLM, cache_dir: Path | None = None) -> nx.DiGraph:
    """The dependency graph of the given (verified) tools of a domain."""
    schemas = [spec.tool(t) for t in sorted(set(tools))]
    g = model.skeleton(schemas, spec.tool_tables)
    started = time.perf_counter()
    outs = [s for t in schemas for s in outputs(t)]
    ins = [s for t in schemas for s in inputs(t)]
    out_vectors, in_vectors = embed(texts(outs), cache_dir), embed(texts(ins), cache_dir)
    threshold = threshold_for(model_name())
    found = match(outs, ins, out_vectors, in_vectors, threshold)
    for m in found:
        model.add_evidence(g, m.producer, m.consumer, "data_flow", "embedding", "", m.output, m.parameter, m.score)
    print(f"graph: {len(found)} parameter matches above {threshold:.2f} with {model_name()} "
          f"({time.perf_counter() - started:.1f}s)", file=sys.stderr)
    refine(g, spec, llm)
    prune_uninformative(g)
    classify(g, spec)
    g.graph.update(name=spec.name, embedding_model=model_name(), threshold=threshold)
    return g


def stats(g: nx.DiGraph) -> dict:
    """The numbers a person checks first; they go into report.json under "graph"."""
    tools = model.tools(g)
    edges = model.tool_edges(g)
    flows = [d for _, _, d in g.edges(data=True) if d["type"] == "flow"]
    params = [d for _, d in g.nodes(data=True) if d["type"] == "param"]
    ins = [d for d in params if d["direction"] == "in"]
    tool_graph = nx.DiGraph()
    tool_graph.add_nodes_from(tools)
    tool_graph.add_edges_from((u, v) for u, v, _ in edges)
    ok = sampleable(g)
    n = len(tools)
    pruned = g.graph.get("pruned", [])
    two_way = sum(tool_graph.has_edge(v, u) for u, v in tool_graph.edges) // 2
    return {
        "tools": n,
        "parameters": {"input": len(ins), "output": len(params) - len(ins),
                       "internal": sum(d.get("role") == "internal" for d in ins),
                       "external": sum(d.get("role") == "external" for d in ins)},
        "edges": {"total": len(edges), **{p: sum(d["provenance"] == p for _, _, d in edges) for p in model.PROVENANCES}},
        "parameter_edges": {p: sum(d["provenance"] == p for d in flows) for p in model.PROVENANCES},
        # An edge counts under every kind it carries (a flow that also establishes a precondition).
        "kinds": {k: sum(k in d["kinds"] for _, _, d in edges) for k in model.KINDS.values()},
        "pruned": {"total": len(pruned), **{r: sum(e.get("rule", "llm") == r for e in pruned)
                                            for r in ("llm", "echo", "failure_list")}},
        "two_way_pairs": two_way,
        "crud": {r: sum(g.nodes[t]["crud"] == r for t in tools) for r in model.CRUD},
        "density": round(len(edges) / (n * (n - 1)), 4) if n > 1 else 0.0,
        "components": nx.number_weakly_connected_components(tool_graph) if n else 0,
        "isolated_tools": sorted(nx.isolates(tool_graph)),
        "orphans": {r: sum(d.get("resolution") == r for d in ins) for r in ("linked", "external")},
        "unsampleable_tools": sorted(set(tools) - ok),
        "embedding_model": g.graph.get("embedding_model"),
        "threshold": g.graph.get("threshold"),
    }


def write_graph(graph: nx.DiGraph, out_dir: Path) -> dict:
    """Write graph.json, graph.svg and graph.md into out_dir; return the stats."""
    out_dir.mkdir(parents=True, exist_ok=True)
    numbers = stats(graph)
    (out_dir / "graph.json").write_text(model.to_json(graph))
    (out_dir / "graph.svg").write_text(svg(graph))
    (out_dir / "graph.md").write_text(report_page(graph, numbers))
    return numbers


def graph_stage(folder: Path, spec: DomainSpec, verified: list[str], llm: LLM) -> dict:
    """The graph stage on a built domain's folder: graph.json, graph.svg and graph.md written, and
    the statistics put under "graph" in report.json; returns them."""
    numbers = write_graph(build_graph(spec, verified, llm, cache_dir=folder / ".embeddings"), folder)
    report_path = folder / "report.json"
    report = json.loads(report_path.read_text())  # re-read: keep whatever else changed meanwhile
    report["graph"] = numbers
    report_path.write_text(json.dumps(report, indent=2, sort_keys=True) + "\n")
    return numbers


def load_graph(path: Path) -> nx.DiGraph:
    """A graph written by write_graph (its graph.json)."""
    return model.from_json(path.read_text())
