"""Style control: Bradley-Terry with the style differences of each vote's two answers.

The model (LMArena's contextual Bradley-Terry, FastChat's ``fit_contextual_bt``)::

    P(a beats b) = sigmoid(theta_a - theta_b + x . beta)

where ``x`` holds the vote's style covariates (``model_a``'s answer against
``model_b``'s: :func:`features.answer_style.style_differences`) and ``beta`` what a unit
of each is worth. ``theta`` is then a model's strength *with the style of its answers
held equal*. A tie counts as half a win and half a loss, as on the raw board.

Two pitfalls of the arenas are avoided by construction:

* the ratings get exactly the raw board's negligible prior (``alpha``, which only keeps
  them finite and centred: :mod:`ranking.bt`) and the coefficients none beyond a
  negligible ``beta_alpha``: a real L2 penalty on both (FastChat) shrinks the ratings
  along with the coefficients;
* :func:`~ranking.style_control.board.fit_style_leaderboard` fits the raw board beside
  the controlled one on the same votes with the same weights, prior and interval method,
  so the two differ by the control alone (arena-rank's raw and controlled boards also
  differ by reweighting).

Intervals are the raw board's: the moderated sandwich (:mod:`ranking.intervals`) of the
joint parameters, or a multinomial bootstrap of the votes; odds and rank ranges are read
off the same Gaussian draws or replicates (:mod:`ranking.odds`).

The parts, each imported from its module (the package itself imports nothing):
:mod:`~ranking.style_control.fit` (the joint fit, its covariance and log-loss),
:mod:`~ranking.style_control.board` (the controlled board beside the raw one) and
:mod:`~ranking.style_control.results` (what they give).
"""
