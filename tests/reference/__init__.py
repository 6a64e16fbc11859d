"""Reference implementations our code is checked (tests) and timed (bench/) against.

Each is independent of the code it checks, or the code before it was replaced: the
FastChat-style Bradley-Terry fit and choix (:mod:`tests.reference.bradley_terry`), the
NumPy per-user Bradley-Terry (:mod:`tests.reference.per_user_bt`) and online Elo
(:mod:`tests.reference.elo`) before their compiled kernels, and arenas whose drift is known
(:mod:`tests.reference.drift_arena`). The benchmarks import them from here: they sit below
both the tests and ``bench/``, and import only the project's packages.
"""
