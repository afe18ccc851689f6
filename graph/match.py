"""Semantic parameter matching: output fields → input parameters, scored by embeddings.

Every input parameter and every output field (nested fields of arrays of objects included,
addressed by a dotted path such as `jobs.job_id`) is a slot. A slot is embedded twice: its
name alone ("job id") and its full text ("job id (string): Identifier of the job"). The
score of an output→input pair is the mean of the two cosines: the name carries most of the
signal in generated schemas, the description separates look-alike names. A pair of two
different tools with compatible types whose score reaches the threshold is a data-flow edge
producer → consumer.

Calibration (`python -m graph.calibrate`, data in graph/calibration.json: 7 hand-made
domains, 63 tools, 3,838 cross-tool output→input pairs of which 198 are labelled true
dependencies): with the bundled all-MiniLM-L6-v2 the F1-maximising threshold is 0.78,
at precision 0.972 and recall 0.874 (F1 0.920; 173 true positives, 5 false positives,
25 false negatives). Misses are role-named identifiers (`owner_id` fed by `user_id`,
`archived_task_ids` feeding `task_id`), which the LLM refinement adds; false positives are
look-alike fields (`doctor_id` → `patient_id`), which it prunes. A model without a
measured threshold is calibrated on the same data when first used.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from domains.spec import OutputField, ToolSchema

# Measured by graph.calibrate; the numbers are in the module docstring.
THRESHOLDS: dict[str, float] = {"all-MiniLM-L6-v2": 0.78}
# Weight of the name cosine in a pair's score; the rest is the full-text cosine.
NAME_WEIGHT = 0.5


@dataclass(frozen=True)
class Slot:
    """An input parameter or an output field of one tool."""

    tool: str
    path: str  # parameter name, or dotted path of an output field
    type: str
    description: str
    items: str | None = None  # element type of an array parameter; "object" for an array output with fields

    @property
    def name(self) -> str:
        return self.path.rsplit(".", 1)[-1]


@dataclass(frozen=True)
class Match:
    producer: str
    output: str
    consumer: str
    parameter: str
    score: float


def inputs(tool: ToolSchema) -> list[Slot]:
    return [Slot(tool.name, p.name, p.type, p.description, p.items) for p in tool.parameters]


def outputs(tool: ToolSchema) -> list[Slot]:
    """Every output field, depth first; fields nested in arrays or objects get a dotted path."""
    def walk(fields: list[OutputField], prefix: str):
        for f in fields:
            yield Slot(tool.name, prefix + f.name, f.type, f.description, "object" if f.fields else None)
            if f.fields:
                yield from walk(f.fields, f"{prefix}{f.name}.")

    return list(walk(tool.output, ""))


def name_text(slot: Slot) -> str:
    return slot.name.replace("_", " ")


def full_text(slot: Slot) -> str:
    return f"{name_text(slot)} ({slot.type}): {slot.description}".strip()


def texts(slots: list[Slot]) -> list[str]:
    """The strings to embed for a list of slots: all names, then all full texts."""
    return [name_text(s) for s in slots] + [full_text(s) for s in slots]


SCALARS = {"string", "integer", "number", "boolean"}


def compatible(output: Slot, parameter: Slot) -> bool:
    """Whether an output's value can be passed as the parameter: the same type, integer for number,
    an element collected into an array parameter, or one element picked from a list of scalars
    (an output array without fields, e.g. `archived_application_ids`)."""
    if output.type == parameter.type:
        return True
    if {output.type, parameter.type} <= {"integer", "number"}:
        return True
    if parameter.type == "array" and parameter.items == output.type:
        return True
    return output.type == "array" and output.items is None and parameter.type in SCALARS


def scores(out_vectors: np.ndarray, in_vectors: np.ndarray) -> np.ndarray:
    """Pair scores from the vectors laid out as `texts` gives them (names first, then full texts)."""
    n_out, n_in = len(out_vectors) // 2, len(in_vectors) // 2
    names = out_vectors[:n_out] @ in_vectors[:n_in].T
    full = out_vectors[n_out:] @ in_vectors[n_in:].T
    return NAME_WEIGHT * names + (1 - NAME_WEIGHT) * full


def match(outs: list[Slot], ins: list[Slot], out_vectors: np.ndarray, in_vectors: np.ndarray,
          threshold: float) -> list[Match]:
    """Every cross-tool, type-compatible output→input pair scoring at least `threshold`, sorted."""
    if not outs or not ins:
        return []
    table = scores(out_vectors, in_vectors)
    found = []
    for i, j in zip(*np.nonzero(table >= threshold)):
        o, p = outs[i], ins[j]
        if o.tool != p.tool and compatible(o, p):
            found.append(Match(o.tool, o.path, p.tool, p.path, round(float(table[i, j]), 4)))
    return sorted(found, key=lambda m: (m.producer, m.output, m.consumer, m.parameter))


@lru_cache(maxsize=None)
def threshold_for(model: str) -> float:
    """The calibrated threshold of an embedding model; an unmeasured model is calibrated now."""
    if model in THRESHOLDS:
        return THRESHOLDS[model]
    from graph.calibrate import calibrate

    result = calibrate()
    print(f"graph: no stored threshold for {model}; calibrated {result['threshold']:.2f} "
          f"(precision {result['precision']:.3f}, recall {result['recall']:.3f})", file=sys.stderr)
    return result["threshold"]
