"""Aggregate and per-user Elo and Bradley-Terry ratings from pairwise votes.

Pure numerics over arrays (``types``, ``pairwise``, ``bt``, ``elo``, ``intervals``,
``leaderboard``, ``users``, ``shrinkage``, ``agreement``, ``evaluation``, ``analysis``);
``ingest``, ``validation`` and ``frames`` are the only modules that touch files and
pandas: they turn battle logs into the arrays the rest works on.
"""
