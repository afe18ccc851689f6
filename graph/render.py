"""The graph for people: an SVG drawn from a seeded networkx layout, and a report page.

The picture shows the tool level only (parameter links are listed on the page): labelled
boxes for tools (filled when the tool writes), arrows producer → consumer coloured by
provenance, solid for data flow and dashed for condition or state dependencies, and a
legend. Boxes are pushed apart until no two overlap, so every label stays readable. In a
dense graph the matched arrows fade behind the refinement's, and an adjacency matrix
below the drawing gives the exact reading (every edge also carries a tooltip with its
reason). Coordinates are rounded, so the same graph gives the same bytes.
"""

from __future__ import annotations

import math
from xml.sax.saxutils import escape

import networkx as nx
import numpy as np

from graph import model

SEED = 7
FONT = 13
CHAR = 7.6  # mean advance of a lower-case sans-serif character at FONT px, a slight overestimate
BOX_H = 28
GAP_X, GAP_Y = 28, 26
CELL = 16  # side of an adjacency-matrix cell
MATRIX_MAX = 80  # beyond this many tools the matrix is too large to read
COLOURS = {"embedding": "#1f77b4", "llm": "#e6550d", "rule": "#2ca02c"}
LABELS = {"embedding": "matched by embeddings", "llm": "added by LLM refinement", "rule": "linked by orphan rule"}
WRITE_FILL, READ_FILL, ISOLATED = "#fdebd0", "#ffffff", "#d62728"


def box_width(name: str) -> float:
    return len(name) * CHAR + 20


def _separate(xy: np.ndarray, widths: np.ndarray) -> np.ndarray:
    """Push overlapping boxes apart along the cheaper axis until none overlap."""
    xy = xy.copy()
    n = len(xy)
    order = np.arange(n)
    for _ in range(500):
        dx = xy[:, None, 0] - xy[None, :, 0]
        dy = xy[:, None, 1] - xy[None, :, 1]
        need_x = (widths[:, None] + widths[None, :]) / 2 + GAP_X - np.abs(dx)
        need_y = BOX_H + GAP_Y - np.abs(dy)
        overlap = (need_x > 0) & (need_y > 0) & (order[:, None] != order[None, :])
        if not overlap.any():
            break
        # Ties (same coordinate) are broken by index so the result does not depend on float noise.
        sx = np.where(dx == 0, np.sign(order[:, None] - order[None, :]), np.sign(dx))
        sy = np.where(dy == 0, np.sign(order[:, None] - order[None, :]), np.sign(dy))
        along_x = need_x < need_y  # the cheaper way out
        push_x = np.where(overlap & along_x, sx * need_x / 2 + sx * 0.5, 0).sum(axis=1)
        push_y = np.where(overlap & ~along_x, sy * need_y / 2 + sy * 0.5, 0).sum(axis=1)
        xy[:, 0] += push_x * 0.5
        xy[:, 1] += push_y * 0.5
    return xy


def _distances(h: nx.Graph) -> dict[str, dict[str, float]]:
    """Shortest-path lengths, with unconnected pairs placed a little beyond the longest path."""
    lengths = dict(nx.all_pairs_shortest_path_length(h))
    far = max((d for row in lengths.values() for d in row.values()), default=1) + 1
    return {u: {v: float(lengths[u].get(v, far)) for v in h} for u in h}


def layout(g: nx.DiGraph) -> dict[str, tuple[float, float]]:
    """Box centres in pixels, top-left margin included, for the tool nodes."""
    tools = model.tools(g)
    if not tools:
        return {}
    h = nx.Graph()
    h.add_nodes_from(tools)
    h.add_edges_from((u, v) for u, v, _ in model.tool_edges(g))
    # A seeded spring layout, evened out by Kamada-Kawai so that dense clusters do not clump.
    pos = nx.spring_layout(h, seed=SEED, k=1.6 / math.sqrt(len(tools)), iterations=300)
    if len(tools) > 2:
        pos = nx.kamada_kawai_layout(h, pos=pos, dist=_distances(h))
    widths = np.array([box_width(t) for t in tools])
    span = max(800.0, 280.0 * math.sqrt(len(tools)))
    xy = np.array([pos[t] for t in tools], dtype=float) * np.array([span / 2, span / 2.5])
    xy = np.round(_separate(xy, widths), 1)
    xy[:, 0] -= (xy[:, 0] - widths / 2).min() - 30
    xy[:, 1] -= xy[:, 1].min() - BOX_H / 2 - 60
    return {t: (float(x), float(y)) for t, (x, y) in zip(tools, xy)}


def _clip(centre: tuple[float, float], toward: tuple[float, float], width: float) -> tuple[float, float]:
    """Where the ray from a box centre toward a point leaves the box (plus a small margin)."""
    (cx, cy), (tx, ty) = centre, toward
    dx, dy = tx - cx, ty - cy
    if dx == 0 and dy == 0:
        return centre
    half_w, half_h = width / 2 + 3, BOX_H / 2 + 3
    scale = min(half_w / abs(dx) if dx else math.inf, half_h / abs(dy) if dy else math.inf)
    return cx + dx * scale, cy + dy * scale


def _f(v: float) -> str:
    return f"{v:.1f}"


def _tip(u: str, v: str, d: dict) -> str:
    score = "" if d["score"] is None else f", score {d['score']:.2f}"
    return f"{u} → {v}: {d['provenance']}, {'/'.join(d['dimensions'])}{score}. {d['reason']}".strip()


def _edges(g: nx.DiGraph, pos: dict, edges: list) -> list[str]:
    """Arrows between boxes. In a dense graph matched edges fade so that the refinement's stand out."""
    dense = len(edges) > 3 * len(pos)
    out = ['<g id="edges">']
    layer = {"embedding": 0, "rule": 1, "llm": 2}  # the refinement's arrows on top
    for u, v, d in sorted(edges, key=lambda e: (layer[e[2]["provenance"]], e[0], e[1])):
        (ux, uy), (vx, vy) = pos[u], pos[v]
        bend = 22.0 if g.has_edge(v, u) else 0.0  # a pair of opposite edges bows apart
        length = math.hypot(vx - ux, vy - uy) or 1.0
        cx = (ux + vx) / 2 - (vy - uy) / length * bend
        cy = (uy + vy) / 2 + (vx - ux) / length * bend
        sx, sy = _clip((ux, uy), (cx, cy), box_width(u))
        ex, ey = _clip((vx, vy), (cx, cy), box_width(v))
        faint = dense and d["provenance"] == "embedding"
        opacity, width = ("0.22", "1") if faint else ("0.85", "1.8" if dense else "1.6")
        dash = "" if "data_flow" in d["dimensions"] else ' stroke-dasharray="6,4"'
        out.append(f'<path d="M{_f(sx)},{_f(sy)} Q{_f(cx)},{_f(cy)} {_f(ex)},{_f(ey)}" fill="none" '
                   f'stroke="{COLOURS[d["provenance"]]}" stroke-width="{width}" stroke-opacity="{opacity}"{dash} '
                   f'marker-end="url(#arrow-{d["provenance"]})"><title>{escape(_tip(u, v, d))}</title></path>')
    out.append("</g>")
    return out


def _boxes(g: nx.DiGraph, pos: dict, linked: set[str]) -> list[str]:
    out = ['<g id="tools">']
    for tool, (x, y) in pos.items():
        w = box_width(tool)
        node = g.nodes[tool]
        fill = WRITE_FILL if node["mutates"] else READ_FILL
        stroke = f'stroke="{ISOLATED}" stroke-width="2.5"' if tool not in linked else 'stroke="#444444" stroke-width="1.2"'
        out.append(f'<g><title>{escape(tool + ": " + node["description"])}</title>'
                   f'<rect x="{_f(x - w / 2)}" y="{_f(y - BOX_H / 2)}" width="{_f(w)}" height="{BOX_H}" rx="6" '
                   f'fill="{fill}" {stroke}/>'
                   f'<text x="{_f(x)}" y="{_f(y + 4.5)}" text-anchor="middle">{escape(tool)}</text></g>')
    out.append("</g>")
    return out


def _matrix(g: nx.DiGraph, edges: list, top: float) -> tuple[list[str], float, float]:
    """Adjacency matrix (row produces for column), the exact reading of a dense drawing.

    Returns the SVG lines, the width and the bottom it reaches."""
    tools = model.tools(g)
    label = max(box_width(t) for t in tools) - 10
    left, head = 30 + label, top + 60 + label
    cells = {(u, v): d for u, v, d in edges}
    out = ['<g id="matrix">',
           f'<text x="30" y="{_f(top + 22)}" font-size="16" font-weight="bold">Dependencies as a matrix: '
           f'the row tool runs before the column tool</text>',
           f'<text x="30" y="{_f(top + 42)}">A filled cell is a data flow, an outlined one a condition or state '
           f'dependency only; colours as in the legend.</text>']
    for i, t in enumerate(tools):
        y = head + i * CELL
        out.append(f'<text x="{_f(left - 6)}" y="{_f(y + CELL - 4)}" text-anchor="end">{escape(t)}</text>')
        x = left + i * CELL
        out.append(f'<text transform="translate({_f(x + CELL - 4)},{_f(head - 6)}) rotate(-90)">{escape(t)}</text>')
    for i, u in enumerate(tools):
        for j, v in enumerate(tools):
            x, y = left + j * CELL, head + i * CELL
            d = cells.get((u, v))
            if d is None:
                fill = "#f3f3f3" if i != j else "#dddddd"
                out.append(f'<rect x="{_f(x)}" y="{_f(y)}" width="{CELL - 1}" height="{CELL - 1}" fill="{fill}"/>')
                continue
            colour = COLOURS[d["provenance"]]
            fill = colour if "data_flow" in d["dimensions"] else "#ffffff"
            out.append(f'<rect x="{_f(x + 0.5)}" y="{_f(y + 0.5)}" width="{CELL - 2}" height="{CELL - 2}" '
                       f'fill="{fill}" stroke="{colour}" stroke-width="1.5"><title>{escape(_tip(u, v, d))}</title></rect>')
    out.append("</g>")
    return out, left + len(tools) * CELL + 20, head + len(tools) * CELL + 20


def svg(g: nx.DiGraph) -> str:
    pos = layout(g)
    edges = model.tool_edges(g)
    linked = {t for u, v, _ in edges for t in (u, v)}
    right = max([x + box_width(t) / 2 for t, (x, _) in pos.items()] or [300.0])
    bottom = max([y + BOX_H / 2 for _, y in pos.values()] or [100.0])
    legend_x = right + 40
    width, height = legend_x + 270, max(bottom + 30, 330)
    matrix: list[str] = []
    if 1 < len(pos) <= MATRIX_MAX:
        matrix, matrix_width, height = _matrix(g, edges, height + 20)
        width = max(width, matrix_width)
    name = g.graph.get("name", "domain")
    title = f"{name}: {len(pos)} tools, {len(edges)} dependencies"
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_f(width)}" height="{_f(height)}" '
        f'viewBox="0 0 {_f(width)} {_f(height)}" font-family="DejaVu Sans, Arial, Helvetica, sans-serif" '
        f'font-size="{FONT}">',
        f"<title>{escape(title)}</title>",
        "<defs>",
    ]
    for prov, colour in COLOURS.items():
        out.append(f'<marker id="arrow-{prov}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="9" '
                   f'markerHeight="9" markerUnits="userSpaceOnUse" orient="auto">'
                   f'<path d="M0,0 L10,5 L0,10 z" fill="{colour}"/></marker>')
    out += ["</defs>", f'<rect width="{_f(width)}" height="{_f(height)}" fill="#ffffff"/>',
            f'<text x="30" y="32" font-size="18" font-weight="bold">{escape(title)}</text>']
    out += _edges(g, pos, edges) + _boxes(g, pos, linked) + _legend(legend_x, 60) + matrix
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _legend(x: float, y: float) -> list[str]:
    rows = [f'<g id="legend"><rect x="{_f(x)}" y="{_f(y)}" width="250" height="250" rx="6" fill="#f7f7f7" '
            f'stroke="#bbbbbb"/>', f'<text x="{_f(x + 12)}" y="{_f(y + 22)}" font-weight="bold">Legend</text>']
    line_y = y + 46
    for prov, colour in COLOURS.items():
        rows.append(f'<line x1="{_f(x + 12)}" y1="{_f(line_y)}" x2="{_f(x + 52)}" y2="{_f(line_y)}" '
                    f'stroke="{colour}" stroke-width="2" marker-end="url(#arrow-{prov})"/>')
        rows.append(f'<text x="{_f(x + 62)}" y="{_f(line_y + 4)}">{LABELS[prov]}</text>')
        line_y += 24
    rows.append(f'<line x1="{_f(x + 12)}" y1="{_f(line_y)}" x2="{_f(x + 52)}" y2="{_f(line_y)}" stroke="#555555" '
                f'stroke-width="2"/><text x="{_f(x + 62)}" y="{_f(line_y + 4)}">data flow</text>')
    line_y += 24
    rows.append(f'<line x1="{_f(x + 12)}" y1="{_f(line_y)}" x2="{_f(x + 52)}" y2="{_f(line_y)}" stroke="#555555" '
                f'stroke-width="2" stroke-dasharray="6,4"/>'
                f'<text x="{_f(x + 62)}" y="{_f(line_y + 4)}">condition or state only</text>')
    line_y += 22
    for label, fill, stroke in (("tool that reads", READ_FILL, "#444444"), ("tool that writes", WRITE_FILL, "#444444"),
                                ("isolated tool", READ_FILL, ISOLATED)):
        rows.append(f'<rect x="{_f(x + 12)}" y="{_f(line_y - 2)}" width="40" height="18" rx="4" fill="{fill}" '
                    f'stroke="{stroke}" stroke-width="1.5"/><text x="{_f(x + 62)}" y="{_f(line_y + 12)}">{label}</text>')
        line_y += 26
    rows.append("</g>")
    return rows


def _cell(value) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def report_page(g: nx.DiGraph, numbers: dict) -> str:
    """graph.md: the picture, the statistics, the refinement's decisions, every edge, the parameters."""
    name = g.graph.get("name", "domain")
    lines = [f"# {name}: tool dependency graph", "",
             "Tools are connected producer → consumer. Matched edges come from embedding similarity of "
             f"output fields and input parameters ({numbers['embedding_model']}, threshold "
             f"{numbers['threshold']}), then an LLM added and pruned edges along data flow, "
             "pre/post-conditions and shared state; orphan identifiers were linked by rule or made external.",
             "", "![tool dependency graph](graph.svg)", "", "## Statistics", "", "| measure | value |", "|---|---|"]
    edges, params = numbers["edges"], numbers["parameters"]
    rows = [
        ("tools", numbers["tools"]),
        ("input parameters (internal / external)", f"{params['input']} ({params['internal']} / {params['external']})"),
        ("output fields", params["output"]),
        ("tool edges (embedding / llm / rule)", f"{edges['total']} ({edges['embedding']} / {edges['llm']} / {edges['rule']})"),
        ("parameter links (embedding / llm / rule)", " / ".join(str(v) for v in numbers["parameter_edges"].values())),
        ("edges by kind (flow / precondition / state; an edge counts under each kind it carries)",
         " / ".join(str(v) for v in numbers["kinds"].values())),
        ("pruned candidate links (refinement / echo / failure list)",
         f"{numbers['pruned']['total']} ({numbers['pruned']['llm']} / {numbers['pruned']['echo']} / "
         f"{numbers['pruned']['failure_list']})"),
        ("tool pairs linked both ways", numbers["two_way_pairs"]),
        ("tools by role (create / read / update / delete)", " / ".join(str(v) for v in numbers["crud"].values())),
        ("density", numbers["density"]),
        ("weakly connected components", numbers["components"]),
        ("isolated tools", ", ".join(numbers["isolated_tools"]) or "none"),
        ("orphan parameters (linked / made external)", f"{numbers['orphans']['linked']} / {numbers['orphans']['external']}"),
        ("tools no chain can reach", ", ".join(numbers["unsampleable_tools"]) or "none"),
    ]
    lines += [f"| {a} | {_cell(b)} |" for a, b in rows]
    added = [f"| {u} | {v} | {e['dimension']} | {e['provenance']} | "
             f"{e['output'] + ' → ' + e['parameter'] if e['dimension'] == 'data_flow' else ''} | {_cell(e['reason'])} |"
             for u, v, d in model.tool_edges(g) for e in d["evidence"] if e["provenance"] != "embedding"]
    lines += ["", "## Added by refinement", "", "What the LLM (llm) and the orphan rule (rule) added, reason by reason.", ""]
    lines += (["| producer | consumer | dimension | provenance | parameter link | reason |", "|---|---|---|---|---|---|"]
              + added) if added else ["None."]
    pruned = g.graph.get("pruned", [])
    lines += ["", "## Pruned candidates", ""]
    if pruned:
        lines += ["| producer.output | consumer.parameter | score | rule | reason |", "|---|---|---|---|---|"]
        lines += [f"| {p['producer']}.{p['output']} | {p['consumer']}.{p['parameter']} | "
                  f"{'' if p['score'] is None else format(p['score'], '.2f')} | {p.get('rule', 'llm')} | "
                  f"{_cell(p['reason'])} |" for p in pruned]
    else:
        lines.append("None.")
    lines += ["", "## All edges", "", "| producer | consumer | provenance | dimensions | score | parameter links | reason |",
              "|---|---|---|---|---|---|---|"]
    for u, v, d in model.tool_edges(g):
        flows = ", ".join(f"{e['output']} → {e['parameter']}" for e in d["evidence"] if e["dimension"] == "data_flow")
        score = "" if d["score"] is None else f"{d['score']:.2f}"
        lines.append(f"| {u} | {v} | {d['provenance']} | {', '.join(d['dimensions'])} | {score} | "
                     f"{_cell(flows)} | {_cell(d['reason'])} |")
    lines += ["", "## Input parameters", "", "| tool | parameter | required | role | why | orphan |",
              "|---|---|---|---|---|---|"]
    for tool in model.tools(g):
        for param in model.inputs_of(g, tool):
            d = g.nodes[param]
            orphan = d.get("resolution") or ""
            lines.append(f"| {tool} | {d['name']} | {'yes' if d['required'] else 'no'} | {d.get('role', '')} | "
                         f"{_cell(d.get('role_reason', ''))} | {orphan} |")
    return "\n".join(lines) + "\n"
