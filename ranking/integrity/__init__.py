"""Voter integrity: the defences of the aggregate, as Chatbot Arena uses for its own board.

* :mod:`~ranking.integrity.daily_cap`: at most ``cap`` votes per user and UTC calendar
  day, the earliest ones, like FastChat's ``limit_user_votes``
  (:func:`~ranking.integrity.daily_cap.daily_cap_mask`).
* :mod:`~ranking.integrity.voters`: tests for anomalous voters, random clickers and
  brigaders (:func:`~ranking.integrity.voters.detect_anomalous_voters`), with the cohort
  test in :mod:`~ranking.integrity.cohorts`, the false-discovery control in
  :mod:`~ranking.integrity.fdr` and what they find in :mod:`~ranking.integrity.report`.
* :mod:`~ranking.integrity.standing`: which voters have standing, so that made-up
  voters are priced (:func:`~ranking.integrity.standing.established_mask`).

The service applies them to battle frames in :mod:`service.pipeline.integrity`. Each name
is imported from its module; the package itself imports nothing.
"""
