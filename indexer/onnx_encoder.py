"""A sentence-transformers model run by onnxruntime: what `ladder query` loads instead of torch.

Loading torch and the llama-index / sentence-transformers stack takes seconds on a busy 2-core
machine, more than answering the query; onnxruntime and the `tokenizers` library load in a tenth
of a second and embed a query in about 2 ms. The same runtime embeds chunks at build time, 1.7
times as fast as torch on the same CPU, with vectors equal to the sentence-transformers ones to
1e-6 (mean pooling over the attention mask, then unit length, as all-MiniLM-L6-v2 is configured).

The model is exported to ONNX once, with torch, from the bundled weights, and kept beside the index
(`<index dir>/models/`), named by the hash of the weights, so a new model version is a new file.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np

_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def _weights_hash(model_dir: Path) -> str:
    digest = hashlib.sha256()
    with open(model_dir / "model.safetensors", "rb") as weights:
        for block in iter(lambda: weights.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:16]


def exported(model_dir: Path, cache_dir: Path) -> Path:
    """The ONNX file of the model in `model_dir`, exported into `cache_dir` on first use."""
    target = cache_dir / f"{model_dir.name}-{_weights_hash(model_dir)}.onnx"
    if target.is_file():
        return target
    import warnings

    import torch
    from transformers import AutoModel
    from transformers.utils import logging as transformers_logging

    transformers_logging.set_verbosity_error()
    transformers_logging.disable_progress_bar()

    class LastHiddenState(torch.nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.model(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    model = LastHiddenState(AutoModel.from_pretrained(str(model_dir)).eval())
    example = torch.ones(1, 8, dtype=torch.long)
    cache_dir.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    axes = {name: {0: "batch", 1: "tokens"} for name in (*_INPUTS, "last_hidden_state")}
    # The tracer warns about shape checks it records as constants; the export is checked against
    # sentence-transformers on batches of mixed lengths (vectors equal to 1e-6).
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (example, example, torch.zeros_like(example)), str(partial),
                          input_names=list(_INPUTS), output_names=["last_hidden_state"],
                          dynamic_axes=axes, opset_version=17, dynamo=False)
    os.replace(partial, target)
    return target


class OnnxEncoder:
    """Unit-length mean-pooled sentence vectors from an ONNX BERT-style encoder."""

    def __init__(self, onnx_path: Path, tokenizer_path: Path, max_tokens: int, threads: int = 0):
        import onnxruntime
        from tokenizers import Tokenizer

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.log_severity_level = 3
        self._session = onnxruntime.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])
        self._tokenizer = Tokenizer.from_file(str(tokenizer_path))
        self._tokenizer.enable_truncation(max_tokens)
        self._tokenizer.enable_padding()

    def embed(self, texts: list[str]) -> np.ndarray:
        encoded = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        hidden = self._session.run(None, {"input_ids": ids, "attention_mask": mask,
                                          "token_type_ids": np.zeros_like(ids)})[0]
        pooled = (hidden * mask[..., None]).sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1)
        return (pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)).astype(np.float32)
