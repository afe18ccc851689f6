"""Semantic fields: the embedding similarity of two normalised texts, and the threshold a match
needs, calibrated per embedding model on labelled pairs (semantic_pairs.json)."""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from llm import embeddings
from verification.reward.values import normalize_text

PairLabel = Literal["paraphrase", "unrelated", "related", "junk", "contradiction"]

SEMANTIC_PAIRS = Path(__file__).with_name("semantic_pairs.json")

# Calibrated on semantic_pairs.json (`calibrate()`), texts normalised as in `normalize_text`.
# all-MiniLM-L6-v2, cosine similarity (min / median / max), share accepted at 0.655:
#   paraphrase     (32 pairs)  0.288 / 0.776 / 0.946   78%
#   unrelated      (13 pairs)  0.038 / 0.103 / 0.226    0%
#   related        (10 pairs)  0.309 / 0.503 / 0.616    0%   same topic, different content
#   junk           (18 pairs)  0.000 / 0.111 / 0.648    0%   placeholders, bare keywords
#   contradiction  ( 5 pairs)  0.271 / 0.904 / 0.985   80%   not used for calibration
# The classes overlap between 0.29 and 0.65: terse paraphrases sharing no words score below
# keyword lists and same-topic notes. The most accurate threshold is 0.655 (0.904 on the 73
# calibration pairs; 0.877 at 0.6, 0.808 at 0.5); ties would go to the stricter value,
# because a false accept rewards a wrong answer while a false reject only withholds credit
# from wording far from the reference. Contradictions pass: polarity belongs in hard fields.
CALIBRATED_THRESHOLDS: dict[str, float] = {"all-MiniLM-L6-v2": 0.655}


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


_VECTORS: dict[str, np.ndarray] = {}  # normalised text -> unit vector of the active model
_MAX_CACHED = 200_000


def embed_missing(texts: Iterable[str]) -> None:
    missing = sorted({t for t in texts if t and t not in _VECTORS})
    if not missing:
        return
    if len(_VECTORS) + len(missing) > _MAX_CACHED:
        _VECTORS.clear()
    _VECTORS.update(zip(missing, embeddings.embed(missing)))


def vectors(texts: list[str]) -> np.ndarray:
    embed_missing(texts)
    return np.stack([_VECTORS[t] for t in texts])


def text_similarity(a: str, b: str) -> float:
    """Cosine similarity of two texts after normalisation."""
    na, nb = normalize_text(a), normalize_text(b)
    if na == nb:
        return 1.0
    if not na or not nb:
        return 0.0
    va, vb = vectors([na, nb])
    return float(va @ vb)


class SemanticPair(_Model):
    label: PairLabel
    a: str
    b: str


class Calibration(_Model):
    model: str
    threshold: float
    accuracy: float = Field(description="on paraphrase vs unrelated/related/junk pairs")
    similarity: dict[str, tuple[float, float, float]] = Field(description="label -> (min, median, max)")
    accepted: dict[str, float] = Field(description="label -> share of pairs accepted at the threshold")


def load_semantic_pairs(path: Path = SEMANTIC_PAIRS) -> list[SemanticPair]:
    return [SemanticPair.model_validate(p) for p in json.loads(path.read_text())["pairs"]]


def threshold_accuracy(pairs: list[SemanticPair], similarities: list[float], threshold: float) -> float:
    """Share of calibration pairs (contradictions left out) classified right at `threshold`."""
    scored = [(s >= threshold) == (p.label == "paraphrase")
              for p, s in zip(pairs, similarities) if p.label != "contradiction"]
    return sum(scored) / len(scored)


def pair_similarities(pairs: list[SemanticPair]) -> list[float]:
    """Each pair's similarity as a semantic field sees it, embedding all texts in one batch."""
    embed_missing(normalize_text(t) for p in pairs for t in (p.a, p.b))
    return [text_similarity(p.a, p.b) for p in pairs]


def calibrate(pairs: list[SemanticPair] | None = None) -> Calibration:
    """The most accurate threshold on labelled pairs for the active model; ties go to the stricter."""
    pairs = load_semantic_pairs() if pairs is None else pairs
    sims = pair_similarities(pairs)
    values = sorted({s for p, s in zip(pairs, sims) if p.label != "contradiction"})
    candidates = [(lo + hi) / 2 for lo, hi in zip(values, values[1:])] or values
    threshold = max(candidates, key=lambda t: (threshold_accuracy(pairs, sims, t), t))
    by_label: dict[str, list[float]] = defaultdict(list)
    for p, s in zip(pairs, sims):
        by_label[p.label].append(s)
    return Calibration(
        model=embeddings.model_name(),
        threshold=round(threshold, 4),
        accuracy=threshold_accuracy(pairs, sims, threshold),
        similarity={k: (min(v), statistics.median(v), max(v)) for k, v in by_label.items()},
        accepted={k: sum(s >= threshold for s in v) / len(v) for k, v in by_label.items()},
    )


@lru_cache(maxsize=None)
def _threshold_for(model: str) -> float:
    if model in CALIBRATED_THRESHOLDS:
        return CALIBRATED_THRESHOLDS[model]
    return calibrate().threshold  # another model: calibrate it on the same labelled pairs


def semantic_threshold() -> float:
    """The calibrated threshold of the active embedding model (loads the model)."""
    return _threshold_for(embeddings.model_name())
