"""Tests of the ``data`` package (the synthetic arena)."""
