"""Re-run the match-threshold calibration: `python -m graph.calibrate [labelled.json]`.

The labelled set is hand-made tool sets in which every input parameter and output field
may carry a `concept`; an output→input pair of two different tools of one domain is a true
dependency exactly when both carry the same concept. All such pairs are scored with the
loaded embedding model and the threshold that maximises F1 is chosen.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from domains.spec import ToolSchema
from graph import match
from llm.embeddings import embed, model_name

DATA = Path(__file__).with_name("calibration.json")
GRID = [round(0.30 + 0.01 * i, 2) for i in range(66)]  # 0.30 … 0.95


def _strip(entry: dict) -> dict:
    """A tool entry without the `concept` labels, ready for ToolSchema."""
    def clean(field: dict) -> dict:
        out = {k: v for k, v in field.items() if k != "concept"}
        if "fields" in out:
            out["fields"] = [clean(f) for f in out["fields"]]
        return out

    return {**entry, "parameters": [clean(p) for p in entry["parameters"]],
            "output": [clean(o) for o in entry["output"]]}


def _concepts(entry: dict) -> tuple[dict[str, str], dict[str, str]]:
    """Output path → concept and parameter name → concept of one tool entry."""
    outs: dict[str, str] = {}

    def walk(fields: list[dict], prefix: str) -> None:
        for f in fields:
            if f.get("concept"):
                outs[prefix + f["name"]] = f["concept"]
            walk(f.get("fields") or [], f"{prefix}{f['name']}.")

    walk(entry["output"], "")
    ins = {p["name"]: p["concept"] for p in entry["parameters"] if p.get("concept")}
    return outs, ins


def labelled_domain(domain: dict) -> tuple[list[ToolSchema], set[tuple[str, str, str, str]]]:
    """The tools of one labelled domain and its true (producer, output, consumer, parameter) pairs."""
    tools = [ToolSchema.model_validate(_strip(t)) for t in domain["tools"]]
    concepts = {t["name"]: _concepts(t) for t in domain["tools"]}
    truth = set()
    for producer, (outs, _) in concepts.items():
        for consumer, (_, ins) in concepts.items():
            if producer == consumer:
                continue
            for path, concept in outs.items():
                for name, wanted in ins.items():
                    if concept == wanted:
                        truth.add((producer, path, consumer, name))
    return tools, truth


def scored_pairs(domains: list[dict]) -> tuple[np.ndarray, np.ndarray]:
    """Scores (−1 where types are incompatible) and truth of every cross-tool pair in each domain."""
    scores, truth = [], []
    for domain in domains:
        tools, positives = labelled_domain(domain)
        outs = [s for t in tools for s in match.outputs(t)]
        ins = [s for t in tools for s in match.inputs(t)]
        table = match.scores(embed(match.texts(outs)), embed(match.texts(ins)))
        for i, o in enumerate(outs):
            for j, p in enumerate(ins):
                if o.tool != p.tool:
                    scores.append(float(table[i, j]) if match.compatible(o, p) else -1.0)
                    truth.append((o.tool, o.path, p.tool, p.path) in positives)
    return np.array(scores), np.array(truth, dtype=bool)


def measure(scores: np.ndarray, truth: np.ndarray, threshold: float) -> dict:
    predicted = scores >= threshold
    tp = int((predicted & truth).sum())
    fp = int((predicted & ~truth).sum())
    fn = int((~predicted & truth).sum())
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"threshold": threshold, "precision": round(precision, 4), "recall": round(recall, 4),
            "f1": round(f1, 4), "tp": tp, "fp": fp, "fn": fn}


def calibrate(path: Path = DATA) -> dict:
    """The F1-maximising threshold on a labelled set (the higher one on ties), with the sweep."""
    domains = json.loads(path.read_text())["domains"]
    scores, truth = scored_pairs(domains)
    sweep = [measure(scores, truth, t) for t in GRID]
    best = max(sweep, key=lambda row: (row["f1"], row["threshold"]))
    return {**best, "model": model_name(), "pairs": int(len(truth)), "positives": int(truth.sum()),
            "domains": len(domains), "tools": sum(len(d["tools"]) for d in domains), "sweep": sweep}


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m graph.calibrate", description=__doc__.splitlines()[0])
    parser.add_argument("data", nargs="?", type=Path, default=DATA)
    args = parser.parse_args()
    result = calibrate(args.data)
    print(f"model {result['model']}: {result['domains']} domains, {result['tools']} tools, "
          f"{result['pairs']} pairs, {result['positives']} true dependencies")
    print("threshold  precision  recall  f1")
    for row in result["sweep"]:
        if 0.6 <= row["threshold"] <= 0.9:
            mark = "  <- chosen" if row["threshold"] == result["threshold"] else ""
            print(f"{row['threshold']:9.2f}  {row['precision']:9.3f}  {row['recall']:6.3f}  {row['f1']:.3f}{mark}")
    print(f"chosen {result['threshold']:.2f}: precision {result['precision']:.3f}, recall {result['recall']:.3f}, "
          f"F1 {result['f1']:.3f} (tp {result['tp']}, fp {result['fp']}, fn {result['fn']})")


if __name__ == "__main__":
    main()
