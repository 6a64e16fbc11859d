"""Recommend's CPU beside its embedding network's (issue 33, item 5), in one process.

For batches of 20 queries this process has not seen, two CPU times
(``time.process_time``, every thread of the process) are taken in turn, batch by batch,
the order alternating: the embedding network alone on the batch, run as the service
runs it (its backend after ``serve()``: one query a run, on one thread, the tokenizer
included), and the whole recommend document of the batch with its explanation
(:func:`service.live.recommendation.recommendation` against the fit's public board), the
predictor set up as the service sets it up (:func:`features.embeddings.cache.cache_embeddings`:
the batch is new to its caches, so it is embedded once and looked up after). The goal is
the recommend's median at most :data:`GOAL_RATIO` times the network's: what is left
beside the network (topics, style, the prediction, its odds and explanation) at most a
fifth of it. Run alone: ``python -m bench.service.recommend_cpu FIT_DIR [BATCHES]``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bench.common import Row, make_row

__all__ = ["GOAL_RATIO", "CpuShare", "cpu_row", "measure"]

#: Recommend's CPU at most this many times its network's (issue 33).
GOAL_RATIO = 1.2


@dataclass(frozen=True)
class CpuShare:
    """Median CPU seconds of the network alone and of the whole recommend, per batch.

    Attributes
    ----------
    network_s, recommend_s : float
        Medians over the batches.
    ratios : tuple of float
        Each batch's recommend / network.
    """

    network_s: float
    recommend_s: float
    ratios: tuple[float, ...]

    @property
    def ratio(self) -> float:
        """Recommend's median over the network's."""
        return self.recommend_s / self.network_s


def measure(fit_dir: Path, batches: Sequence[list[str]]) -> CpuShare:
    """:class:`CpuShare` of ``batches`` (each new to this process) on the fit in ``fit_dir``.

    A first batch of the fit's own prompts warms the predictor (weights loaded, sessions
    made) and is not counted.
    """
    from features.embeddings.cache import CachedEmbedder, cache_embeddings
    from features.predictor import RatingPredictor
    from service.live.recommendation import recommendation
    from service.pipeline.artifacts import load_fit

    fit = load_fit(fit_dir)
    if fit.predictor_dir is None:
        raise ValueError(f"Argument 'fit_dir' must hold a rating predictor: {fit_dir} has none.")
    predictor = RatingPredictor.load(fit.predictor_dir)
    cache = cache_embeddings(predictor)  # the service's defaults
    embedder = predictor.profiler_.topic_model_.embedder_
    network = cache.embedder if isinstance(cache, CachedEmbedder) else embedder
    board = fit.leaderboards.get("bt", {}).get("models", [])
    recommendation(predictor, ["warm up: weights, sessions and tables"], board=board)
    network.embed(["warm up the network alone"])

    def cpu(task: Callable[..., object], *args: object, **kwargs: object) -> float:
        start = time.process_time()
        task(*args, **kwargs)
        return time.process_time() - start

    networks, recommends = [], []
    for i, batch in enumerate(batches):
        if i % 2:
            recommends.append(cpu(recommendation, predictor, batch, board=board))
            networks.append(cpu(network.embed, batch))
        else:
            networks.append(cpu(network.embed, batch))
            recommends.append(cpu(recommendation, predictor, batch, board=board))
    ratios = tuple(r / n for r, n in zip(recommends, networks, strict=True) if n > 0)
    return CpuShare(float(np.median(networks)), float(np.median(recommends)), ratios)


def cpu_row(share: CpuShare, data: str, p99: str | None, n_queries: int, quick: bool) -> Row:
    """The row of ``share``: ours the recommend's CPU, the reference its network's.

    ``p99`` is the latency of recommend at 4 clients measured in the same run, told beside.
    """
    beside = f"; POST /v1/recommend at 4 clients in this run: {p99}" if p99 else ""
    spread = np.percentile(share.ratios, [10, 90]) if share.ratios else (np.nan, np.nan)
    return make_row(
        f"recommend CPU: {n_queries} new queries, in one process, beside its embedding network's",
        data,
        ours=share.recommend_s,
        reference=share.network_s,
        goal=f"≤ {GOAL_RATIO}× network",
        met=None if quick else share.ratio <= GOAL_RATIO,
        notes=f"recommend / network = {share.ratio:.2f}× (medians of {len(share.ratios)} "
        f"batches, each new to the process; per batch p10-p90 {spread[0]:.2f}-{spread[1]:.2f}"
        "×); CPU time of the process (time.process_time), the network alone (the backend "
        "as served: one query a run, one thread) and the whole recommend document with its "
        "explanation (the predictor's caches as served) taken in turn on each batch; "
        "ratio = network / recommend" + beside,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Print :class:`CpuShare` of ``FIT_DIR``'s own prompts, ``BATCHES`` batches of 20."""
    import pandas as pd

    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        print("usage: python -m bench.service.recommend_cpu FIT_DIR [BATCHES]", file=sys.stderr)
        return 2
    fit_dir, n = Path(args[0]), int(args[1]) if len(args) > 1 else 20
    prompts = pd.read_parquet(fit_dir / "battles.parquet", columns=["prompt"])["prompt"]
    distinct = prompts.dropna().drop_duplicates().astype(str).tolist()
    batches = [distinct[i * 20 : (i + 1) * 20] for i in range(min(n, len(distinct) // 20))]
    share = measure(fit_dir, batches)
    print(
        f"network CPU {share.network_s * 1000:.1f} ms, recommend CPU "
        f"{share.recommend_s * 1000:.1f} ms, ratio {share.ratio:.3f} (medians of "
        f"{len(batches)} batches of 20)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
