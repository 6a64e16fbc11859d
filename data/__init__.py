"""Data for trying the project out: a simulated arena with known truth, and a sample.

``simulate`` draws users with topic mixtures, writing styles and tastes, models with
topic strengths and answer styles, and the votes between them, and keeps the truth an
estimator must recover (``from data.simulate import simulate``); ``prompts`` and
``real_prompts`` write the votes' queries, the former from the text bank
``prompt_bank.json`` (package data); ``sample/`` is a bundled simulated log
(``battles.jsonl.gz``, ``truth.json``, ``queries.txt``).

Nothing is re-exported here: the function ``simulate`` shares its module's name, and
``data.simulate`` must stay the module (``import data.simulate`` rebinds it).
"""
