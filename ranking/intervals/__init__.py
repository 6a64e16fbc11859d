"""Confidence intervals for ratings, one family a module, and interval ranks.

* :mod:`~ranking.intervals.sandwich`: the Bradley-Terry sandwich (robust) covariance,
  moderated toward the model-based one, and its normal intervals.
* :mod:`~ranking.intervals.bt_bootstrap`: the Bradley-Terry bootstrap.
* :mod:`~ranking.intervals.elo_bootstrap`: the Elo bootstrap (FastChat's method).
* :mod:`~ranking.intervals.summary`: what every family shares: normal and percentile
  intervals, the summary of a set of replicates, interval ranks.

Each name is imported from its module; the package itself imports nothing.
"""
