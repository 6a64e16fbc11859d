"""A person's taste in answers: per-user style coefficients shrunk toward the aggregate's.

Style control (:mod:`ranking.style_control`) fits one coefficient vector ``beta`` for
everyone: a vote's log-odds are ``theta_a - theta_b + x . beta``, with ``x`` the vote's
style covariates (model_a's answer against model_b's: longer, more headers, ...). Here
each user ``u`` has their own::

    logit P(a beats b | u) = offset + x . beta_u,   beta_u ~ N(beta, I / alpha)

``offset`` is whatever the ratings say of the pair (the style-controlled aggregate's
``theta_a - theta_b``, or the user's own ratings), ``beta`` the aggregate's coefficients
and ``1 / sqrt(alpha)`` the typical size of a user's departure from them. As for the
per-user ratings (:mod:`ranking.shrinkage`), ``alpha`` is one scalar learnt from all users'
votes by held-out log-loss (``folds``-fold over every user's votes, the default of the
ratings), by the summed Laplace evidence, or by how well each user's earlier votes predict
their later ones (``"later"``), and searched by
:func:`ranking.shrinkage.search_log_alpha` over the same range: a user with 10 votes stays
near the aggregate, one with 300 mostly speaks for themself. Ties count half a win each
way, as everywhere.

Each user's fit is a ``p``-dimensional ridge logistic regression (``p`` the style
features, a handful), solved for all users at once by damped Newton steps on the ``(U, p,
p)`` Hessians; its Laplace posterior gives each coefficient's interval, and whether the
user's taste is distinguishable from the aggregate's (the interval of ``beta_u - beta``,
which adds the aggregate's own variance where it is given, excludes zero).

**The fallback rule.** Per-user taste is worth showing only where it predicts held-out
votes better than the aggregate's coefficients.
:func:`~ranking.personal_style.fit.fit_user_style` scores both on the same held-out votes
(the folds, or with ``"later"`` each user's later votes: the learnt ``alpha`` against
``beta_u = beta``), and where the per-user coefficients do not win by at least
:data:`~ranking.personal_style.results.MIN_GAIN_SE` standard errors of the paired
difference (clustered by user), every user is given the aggregate's coefficients and
``personal`` is False: the product then says that everyone's taste is used.

The parts, each imported from its module (the package itself imports nothing):

* :mod:`~ranking.personal_style.results`: :class:`~ranking.personal_style.results.UserStyle`,
  :class:`~ranking.personal_style.results.StylePrior`,
  :class:`~ranking.personal_style.results.HeldOutGain` and the settings;
* :mod:`~ranking.personal_style.posterior`: the coefficients and their Laplace posterior at
  a given prior;
* :mod:`~ranking.personal_style.alpha`: the prior precision learnt, and the held-out gain;
* :mod:`~ranking.personal_style.fit`: the whole fit with the fallback rule
  (:func:`~ranking.personal_style.fit.fit_user_style`);
* :mod:`~ranking.personal_style.predict`: win probabilities, a person's strengths and the
  log-loss of votes.
"""
