"""A tiny deterministic embedding for tests: hashed bag of words, no model, no network.

Used through the embedding spec `python:tests.indexer.toy_embedding:ToyEmbedding`. Texts sharing words get similar vectors, so dense retrieval still means something.
"""
from __future__ import annotations

import hashlib
import math
import re

from llama_index.core.base.embeddings.base import BaseEmbedding

DIMENSIONS = 64


def _vector(text: str) -> list[float]:
    vector = [0.0] * DIMENSIONS
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        vector[int(hashlib.md5(word.encode()).hexdigest(), 16) % DIMENSIONS] += 1.0
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]


class ToyEmbedding(BaseEmbedding):
    model_name: str = "toy"

    def _get_text_embedding(self, text: str) -> list[float]:
        return _vector(text)

    def _get_query_embedding(self, query: str) -> list[float]:
        return _vector(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return _vector(query)
