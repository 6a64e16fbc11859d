"""The topic model at scale: fitted on a sample of the distinct prompts, applied to all.

Clustering a million and a half distinct prompts, and counting the words of each for
its topic's name, costs minutes (249 s of CPU on 1.5 million prompts); the topics found
on a random sample fit the prompts they never saw as well as the full fit fits its own
(benchmark X, ``bench/features/topic_sample.py``: from 5,000 prompts on, the mean cosine of every
prompt to its topic's centre is the full fit's, and the agreement with the full fit is
within k-means' own variation from seed to seed).
:func:`fit_sample` draws that sample (none where the prompts are no more than the
limit, so small fits are fitted on every prompt, as before), and
:func:`predict_in_batches` gives every other prompt its topic from the fitted model,
batch by batch, with a progress bar.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from ranking.progress import Progress, start

__all__ = ["BATCH", "MAX_FIT_DOCUMENTS", "fit_sample", "predict_in_batches"]

#: Distinct prompts the topic model is fitted on at most (see :func:`fit_sample`): ten
#: times where quality stopped improving in benchmark X, nearly free at that margin (a
#: fit on 1.5 million prompts spends 17-20 s of CPU for any sample of 20,000 to 100,000),
#: and above the demo, the tests and benchmark E, which are fitted on every prompt.
MAX_FIT_DOCUMENTS = 100_000
#: Distinct prompts given their topics at a time after a fit on a sample.
BATCH = 50_000

#: Topic of each of some distinct prompts, from their texts and embeddings.
Predict = Callable[[list[str], npt.NDArray[np.floating]], npt.NDArray[np.intp]]


def fit_sample(n_docs: int, limit: int | None, seed: int) -> npt.NDArray[np.intp] | None:
    """The distinct prompts to fit on: ``limit`` of ``n_docs``, drawn at random.

    Parameters
    ----------
    n_docs : int
        Distinct prompts.
    limit : int or None
        Most prompts to fit on; None for no limit.
    seed : int
        Seed of the draw (the topic model's ``random_state``).

    Returns
    -------
    ndarray of int or None
        Sorted positions of the sample, or None where every prompt is fitted (``n_docs``
        no more than ``limit``).
    """
    if limit is None or n_docs <= limit:
        return None
    chosen = np.random.default_rng(seed).choice(n_docs, size=limit, replace=False)
    return np.sort(chosen).astype(np.intp)


def predict_in_batches(
    predict: Predict,
    docs: list[str],
    vectors: npt.NDArray[np.floating],
    rows: npt.NDArray[np.intp],
    progress: Progress | None = None,
    batch: int = BATCH,
) -> npt.NDArray[np.intp]:
    """Topics of ``docs[rows]``, :data:`BATCH` prompts at a time.

    Parameters
    ----------
    predict : callable
        Topics of some prompts from their texts and embedding rows.
    docs : list of str
        Distinct prompts.
    vectors : ndarray of shape (len(docs), d)
        Their embeddings.
    rows : ndarray of int
        The positions to predict.
    progress : Progress, optional
        Told of the stage ``"topics of the other prompts"``, in prompts.
    batch : int
        Prompts a batch.

    Returns
    -------
    ndarray of int
        The topic of each of ``rows``, in their order.
    """
    advance = start(progress, "topics of the other prompts", int(rows.size), "prompts")
    topics = np.empty(rows.size, dtype=np.intp)
    for begin in range(0, rows.size, batch):
        part = rows[begin : begin + batch]
        topics[begin : begin + part.size] = predict([docs[i] for i in part], vectors[part])
        advance(int(part.size))
    return topics
