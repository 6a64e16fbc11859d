"""Benchmarks of the service: under load (G), soak (I), the Dask fit (H, R), plb's speed (U)."""
