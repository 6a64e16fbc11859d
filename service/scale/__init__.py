"""``plb fit`` on a Dask cluster (``plb fit --scheduler ADDRESS``): orchestration only.

The numerics stay in ``ranking`` and ``features``; this package reads the battle logs
as partitions on the workers (:mod:`service.scale.partitions`), runs the per-partition
work there (:mod:`service.scale.tasks`) and the small global fits on the client
(:mod:`service.scale.fit`). Its functions import Dask, an optional extra
(``pip install personal-leaderboard[dask]``), when they run; nothing outside this package
imports it, and the local ``plb fit`` never does.
"""

from __future__ import annotations

from service.scale.cluster import ClusterError, connect, describe
from service.scale.fit import DistributedFit, fit_distributed

__all__ = ["ClusterError", "DistributedFit", "connect", "describe", "fit_distributed"]
