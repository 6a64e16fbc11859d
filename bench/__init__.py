"""Benchmarks of the ranking code against FastChat-style and choix references.

``python -m bench.run [--quick] [NAME ...]`` runs them and writes ``bench/RESULTS.md``.
Each benchmark module exposes ``run(quick: bool) -> list[Row]`` (:class:`bench.common.Row`):
:mod:`bench.ranking.aggregate` (issue 2) and :mod:`bench.ranking.per_user` (issue 3).
"""
