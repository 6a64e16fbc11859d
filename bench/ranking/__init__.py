"""Benchmarks of the ranking maths: boards, intervals, per-user fits, integrity, ingest."""
