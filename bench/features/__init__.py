"""Benchmarks of the query features: topics, the rating predictor, personal answers."""
