"""The graph for people: tools laid out by role, only informative edges drawn, and a report page.

The picture has three columns: tools that create above tools that read, the identifiers
passed between tools, tools that update above tools that delete (a tool's role is
graph.model.crud_role).
A value flow into an internal parameter is drawn through its identifier: producer →
`application_id` → consumer, so ten producers and seventeen consumers of one identifier
take 27 arrows, not 170. Precondition edges (dashed) and state edges (dotted) are drawn
tool to tool. Flows into values a user can state are left out of the drawing; the
adjacency matrix below it keeps every tool edge, coloured by provenance, and every arrow
and cell carries a tooltip with its reasons. Coordinates are rounded, so the same graph
gives the same bytes.
"""

from __future__ import annotations

from xml.sax.saxutils import escape

import networkx as nx

from graph import model

FONT = 13
CHAR = 7.6  # mean advance of a lower-case sans-serif character at FONT px, a slight overestimate
BOX_H = 28
ROW = 40  # vertical distance between two boxes of a column
GAP_X = 150  # horizontal room between columns, where the arrows run
TOP = 110
MARGIN = 150  # left of the first column: room for the arcs between tools of that column
CELL = 16  # side of an adjacency-matrix cell
MATRIX_MAX = 80  # beyond this many tools the matrix is too large to read
COLOURS = {"embedding": "#1f77b4", "llm": "#e6550d", "rule": "#2ca02c"}
LABELS = {"embedding": "matched by embeddings", "llm": "added by LLM refinement", "rule": "linked by orphan rule"}
KIND_STYLE = {"flow": ("#1f77b4", ""), "precondition": ("#e6550d", ' stroke-dasharray="7,4"'),
              "state": ("#2ca02c", ' stroke-dasharray="2,3"')}
WRITE_FILL, READ_FILL, HUB_FILL, ISOLATED = "#fdebd0", "#ffffff", "#e8f1fa", "#d62728"


def box_width(name: str) -> float:
    return len(name) * CHAR + 20


def _f(v: float) -> str:
    return f"{v:.1f}"


def _identifier(name: str) -> str:
    return name[:-1] if name.endswith("_ids") else name


def drawn(g: nx.DiGraph) -> tuple[dict[str, set[tuple[str, str]]], list[tuple[str, str, str]]]:
    """What the picture draws: identifier → {(producer, consumer)} for flows into internal
    parameters, and (producer, consumer, kind) for precondition and state edges."""
    hubs: dict[str, set[tuple[str, str]]] = {}
    direct = []
    for u, v, d in model.tool_edges(g):
        for e in d["evidence"]:
            if e["dimension"] == "data_flow" and g.nodes[model.param_id(v, "in", e["parameter"])].get("role") == "internal":
                hubs.setdefault(_identifier(e["parameter"]), set()).add((u, v))
        for kind in ("precondition", "state"):
            if kind in d["kinds"]:
                direct.append((u, v, kind))
    return hubs, direct


def layout(g: nx.DiGraph, hubs: list[str]) -> tuple[dict[str, tuple[float, float]], list[tuple[str, float, float]]]:
    """Centres of tool boxes and identifier hubs (hubs keyed "#name"), and the role headings.

    Three columns: create above read on the left, identifiers in the middle, update above
    delete on the right, so that every arrow through an identifier joins adjacent columns."""
    by_role = {c: [t for t in model.tools(g) if g.nodes[t].get("crud", "read") == c] for c in model.CRUD}
    columns = [[("create", by_role["create"]), ("read", by_role["read"])],
               [("identifiers", ["#" + h for h in sorted(hubs)])],
               [("update", by_role["update"]), ("delete", by_role["delete"])]]
    rows = [sum(len(items) + 1 for _, items in col) for col in columns]
    pos, headings, x = {}, [], MARGIN
    for col, count in zip(columns, rows):
        width = max([box_width(i.lstrip("#")) for _, items in col for i in items] + [box_width("identifiers")])
        centre = x + width / 2
        y = TOP + (max(rows) - count) * ROW / 2
        for heading, items in col:
            headings.append((heading, round(centre, 1), round(y + BOX_H / 2 + 4, 1)))
            y += ROW
            for item in items:
                pos[item] = (round(centre, 1), round(y + BOX_H / 2, 1))
                y += ROW
        x += width + GAP_X
    return pos, headings


def _arrow(a: tuple[float, float], wa: float, b: tuple[float, float], wb: float, colour: str, dash: str,
           tip: str, middle: float, bend: float = 0.0, opacity: str = "0.75") -> str:
    """A curve from the side of box a to the side of box b that faces it; within one column it
    leaves and enters on the outer side (away from `middle`), bowing outwards."""
    (ax, ay), (bx, by) = a, b
    if abs(ax - bx) < 1:
        side = -1 if ax < middle else 1
        sx, ex = ax + side * wa / 2, bx + side * wb / 2
        edge = min(sx, ex) if side < 0 else max(sx, ex)
        cx, cy = edge + side * (30 + abs(by - ay) * 0.2), (ay + by) / 2
    else:
        direction = 1 if bx > ax else -1
        sx, ex = ax + direction * wa / 2, bx - direction * wb / 2
        cx, cy = (sx + ex) / 2, (ay + by) / 2 + bend
    return (f'<path d="M{_f(sx)},{_f(ay)} Q{_f(cx)},{_f(cy)} {_f(ex)},{_f(by)}" fill="none" stroke="{colour}" '
            f'stroke-width="1.5" stroke-opacity="{opacity}"{dash} marker-end="url(#arrow-{colour[1:]})">'
            f'<title>{escape(tip)}</title></path>')


def _tip(u: str, v: str, d: dict) -> str:
    score = "" if d["score"] is None else f", score {d['score']:.2f}"
    return f"{u} → {v}: {d['provenance']}, {'/'.join(d['kinds'])}{score}. {d['reason']}".strip()


def _drawing(g: nx.DiGraph, pos: dict, hubs: dict, direct: list, middle: float) -> list[str]:
    out = ['<g id="edges">']
    width = {k: box_width(k.lstrip("#")) for k in pos}
    colour, dash = KIND_STYLE["flow"]
    for hub, pairs in sorted(hubs.items()):
        key = "#" + hub
        for producer in sorted({u for u, _ in pairs}):
            consumers = ", ".join(sorted(v for u, v in pairs if u == producer))
            out.append(_arrow(pos[producer], width[producer], pos[key], width[key], colour, dash,
                              f"{producer} returns {hub}, which {consumers} take", middle, opacity="0.55"))
        for consumer in sorted({v for _, v in pairs}):
            producers = ", ".join(sorted(u for u, v in pairs if v == consumer))
            out.append(_arrow(pos[key], width[key], pos[consumer], width[consumer], colour, dash,
                              f"{consumer} takes {hub} from {producers}", middle, opacity="0.55"))
    for u, v, kind in direct:
        colour, dash = KIND_STYLE[kind]
        out.append(_arrow(pos[u], width[u], pos[v], width[v], colour, dash, _tip(u, v, g.edges[u, v]), middle,
                          bend=-30.0))
    out.append("</g>")
    return out


def _boxes(g: nx.DiGraph, pos: dict, linked: set[str]) -> list[str]:
    out = ['<g id="tools">']
    for item, (x, y) in pos.items():
        if item.startswith("#"):
            name = item[1:]
            out.append(f'<g class="identifier"><title>{escape(name)}: an identifier passed from tools on its left '
                       f'to the tools it points to</title><ellipse cx="{_f(x)}" cy="{_f(y)}" '
                       f'rx="{_f(box_width(name) / 2)}" ry="{BOX_H / 2}" fill="{HUB_FILL}" stroke="#1f77b4"/>'
                       f'<text x="{_f(x)}" y="{_f(y + 4.5)}" text-anchor="middle" font-style="italic">'
                       f'{escape(name)}</text></g>')
            continue
        w = box_width(item)
        node = g.nodes[item]
        fill = WRITE_FILL if node["mutates"] else READ_FILL
        stroke = f'stroke="{ISOLATED}" stroke-width="2.5"' if item not in linked else 'stroke="#444444" stroke-width="1.2"'
        out.append(f'<g><title>{escape(item + ": " + node["description"])}</title>'
                   f'<rect x="{_f(x - w / 2)}" y="{_f(y - BOX_H / 2)}" width="{_f(w)}" height="{BOX_H}" rx="6" '
                   f'fill="{fill}" {stroke}/>'
                   f'<text x="{_f(x)}" y="{_f(y + 4.5)}" text-anchor="middle">{escape(item)}</text></g>')
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
           f'<text x="30" y="{_f(top + 42)}">Every tool edge. A filled cell carries a data flow, an outlined one a '
           f'precondition or state only; blue: matched by embeddings, orange: added by the LLM, green: orphan rule.</text>']
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
    hubs, direct = drawn(g)
    pos, headings = layout(g, list(hubs))
    middle = headings[2][1]
    edges = model.tool_edges(g)
    linked = {t for u, v, _ in edges for t in (u, v)}
    right = max([x + box_width(k.lstrip("#")) / 2 for k, (x, _) in pos.items()] or [300.0]) + MARGIN
    bottom = max([y + BOX_H / 2 for _, y in pos.values()] or [TOP])
    legend_x = right + 60
    width, height = legend_x + 290, max(bottom + 30, TOP + 330)
    matrix: list[str] = []
    if 1 < len(model.tools(g)) <= MATRIX_MAX:
        matrix, matrix_width, height = _matrix(g, edges, height + 20)
        width = max(width, matrix_width)
    name = g.graph.get("name", "domain")
    arrows = sum(len({u for u, _ in p}) + len({v for _, v in p}) for p in hubs.values()) + len(direct)
    title = (f"{name}: {len(model.tools(g))} tools by role; {len(hubs)} identifiers passed between them, "
             f"{len(direct)} precondition or state edges ({len(edges)} tool edges in the matrix)")
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_f(width)}" height="{_f(height)}" '
        f'viewBox="0 0 {_f(width)} {_f(height)}" font-family="DejaVu Sans, Arial, Helvetica, sans-serif" '
        f'font-size="{FONT}">',
        f"<title>{escape(title)}</title>",
        "<defs>",
    ]
    for colour in sorted({c for c, _ in KIND_STYLE.values()} | set(COLOURS.values())):
        out.append(f'<marker id="arrow-{colour[1:]}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="9" '
                   f'markerHeight="9" markerUnits="userSpaceOnUse" orient="auto">'
                   f'<path d="M0,0 L10,5 L0,10 z" fill="{colour}"/></marker>')
    out += ["</defs>", f'<rect width="{_f(width)}" height="{_f(height)}" fill="#ffffff"/>',
            f'<text x="30" y="32" font-size="18" font-weight="bold">{escape(title)}</text>',
            f'<text x="30" y="54">{arrows} arrows drawn; flows into values a user states are only in the matrix.</text>']
    for heading, x, y in headings:
        out.append(f'<text x="{_f(x)}" y="{_f(y)}" text-anchor="middle" font-weight="bold" '
                   f'fill="#555555">{heading}</text>')
    out += _drawing(g, pos, hubs, direct, middle) + _boxes(g, pos, linked) + _legend(legend_x, TOP) + matrix
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _legend(x: float, y: float) -> list[str]:
    rows = [f'<g id="legend"><rect x="{_f(x)}" y="{_f(y)}" width="270" height="230" rx="6" fill="#f7f7f7" '
            f'stroke="#bbbbbb"/>', f'<text x="{_f(x + 12)}" y="{_f(y + 22)}" font-weight="bold">Legend</text>']
    line_y = y + 46
    for kind, text in (("flow", "passes an identifier"), ("precondition", "establishes a precondition"),
                       ("state", "writes state the other reads")):
        colour, dash = KIND_STYLE[kind]
        rows.append(f'<line x1="{_f(x + 12)}" y1="{_f(line_y)}" x2="{_f(x + 52)}" y2="{_f(line_y)}" '
                    f'stroke="{colour}" stroke-width="2"{dash} marker-end="url(#arrow-{colour[1:]})"/>')
        rows.append(f'<text x="{_f(x + 62)}" y="{_f(line_y + 4)}">{text}</text>')
        line_y += 24
    line_y -= 4
    for label, fill, stroke in (("tool that reads", READ_FILL, "#444444"), ("tool that writes", WRITE_FILL, "#444444"),
                                ("isolated tool", READ_FILL, ISOLATED)):
        rows.append(f'<rect x="{_f(x + 12)}" y="{_f(line_y - 2)}" width="40" height="18" rx="4" fill="{fill}" '
                    f'stroke="{stroke}" stroke-width="1.5"/><text x="{_f(x + 62)}" y="{_f(line_y + 12)}">{label}</text>')
        line_y += 26
    rows.append(f'<ellipse cx="{_f(x + 32)}" cy="{_f(line_y + 7)}" rx="20" ry="9" fill="{HUB_FILL}" stroke="#1f77b4"/>'
                f'<text x="{_f(x + 62)}" y="{_f(line_y + 12)}">identifier (internal parameter)</text>')
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
             "pre/post-conditions and shared state; links that echo a tool's own input or feed forward a list of "
             "failures were pruned by rule (graph/prune.py); orphan identifiers were linked by rule or made external. "
             "The picture draws tools by role and only informative edges; the matrix under it keeps every edge.",
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
    added = [f"| {u} | {v} | {model.KINDS[e['dimension']]} | {e['provenance']} | "
             f"{e['output'] + ' → ' + e['parameter'] if e['dimension'] == 'data_flow' else ''} | {_cell(e['reason'])} |"
             for u, v, d in model.tool_edges(g) for e in d["evidence"] if e["provenance"] != "embedding"]
    lines += ["", "## Added by refinement", "", "What the LLM (llm) and the orphan rule (rule) added, reason by reason.", ""]
    lines += (["| producer | consumer | kind | provenance | parameter link | reason |", "|---|---|---|---|---|---|"]
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
    lines += ["", "## All edges", "", "| producer | consumer | provenance | kinds | score | parameter links | reason |",
              "|---|---|---|---|---|---|---|"]
    for u, v, d in model.tool_edges(g):
        flows = ", ".join(f"{e['output']} → {e['parameter']}" for e in d["evidence"] if e["dimension"] == "data_flow")
        score = "" if d["score"] is None else f"{d['score']:.2f}"
        lines.append(f"| {u} | {v} | {d['provenance']} | {', '.join(d['kinds'])} | {score} | "
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
