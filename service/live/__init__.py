"""The live service in parts, over one :class:`~service.live.engine.Engine`.

* :mod:`~service.live.engine`: the parts over one store and fit directory, and the calls
  that take more than one part.
* :mod:`~service.live.versions`: the version held, published from the fit, polled.
* :mod:`~service.live.history`: every battle known, the fit's and the store's.
* :mod:`~service.live.reads`: boards, live Elo, segments, user boards, recommend.
* :mod:`~service.live.writes`: ingestion, the catalogue, personal refits, tokens.
* :mod:`~service.live.priors`: a voter's predicted prior, via the predictor's public API.
* :mod:`~service.live.refits`: refits on all battles and the background loop.
* :mod:`~service.live.errors`: what the API turns into 422, 404 and 409.

Published versions are :class:`~service.pipeline.snapshot.Snapshot` documents; a
version as readers use it is :class:`~service.live.served.Served`. Each name is imported from
its module; the package itself imports nothing, so that importing one light part,
:mod:`~service.live.next_battle` for ``plb next-battle`` among them, does not load the
engine and the topic model with it.
"""
