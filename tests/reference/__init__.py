"""Reference implementations the tests check our code against, and the benchmarks time it
against: the NumPy per-user Bradley-Terry (:mod:`tests.reference.per_user_bt`) and online
Elo (:mod:`tests.reference.elo`) as they were before their compiled kernels, and arenas
whose drift is known (:mod:`tests.reference.drift_arena`).

They import only the project's packages, so both the tests and ``bench/`` import them from
here. A reference only a benchmark uses stays in ``bench/`` (:mod:`bench.reference`: the
FastChat-style fit and choix, whose ``choix`` import ``make lint``'s deptry must see).
"""
