"""``plb fit`` on a Dask cluster (``plb fit --scheduler ADDRESS``): orchestration only.

The fit is the pipeline's own (:func:`service.pipeline.fit.fit_all`); this package
reads the battle logs into partitions by user (:mod:`service.scale.local_read`, or on
the workers: :mod:`service.scale.partitions`) and is the fit's executor on a cluster
(:mod:`service.scale.executor`): the per-partition work runs on the workers
(:mod:`service.scale.tasks`), the small global fits on the client
(:mod:`service.scale.fit`). The numerics stay in ``ranking`` and ``features``. Its
functions import Dask, an optional extra (``pip install personal-leaderboard[dask]``),
when they run; nothing outside this package imports it, and the local ``plb fit`` never
does.
"""

from __future__ import annotations

from service.scale.cluster import ClusterError, connect, describe
from service.scale.fit import DistributedFit, fit_distributed

__all__ = ["ClusterError", "DistributedFit", "connect", "describe", "fit_distributed"]
