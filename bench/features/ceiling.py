"""How far can any predictor from queries get on a simulation? The ceilings of issue 5.

``plb evaluate`` scores new users' predicted ratings against their *fitted* ratings, a
fit to a few dozen votes, so part of every error is the fit's own noise. And a
simulated user's preferences hold parts no query shows: idiosyncratic tastes, and the
part of their answer-style taste their writing does not reflect. This script measures,
on the same split as ``plb evaluate --new-users 0.2 --seed 0``, three reference
predictors that know the simulator's truth:

* **true ratings**: the user's exact preferences, about the best any prediction of
  preferences can do;
* **true features**: a ridge regression, fitted on the training users, from the
  simulator's own topic mixture and writing style of each user (what topic and style
  features measure at best) to their true ratings; the truth is linear in both;
* **true features on target**: a ridge regression from the same features straight to
  the fitted ratings.

The first two are turned into the fit they are expected to produce after the user's
number of votes (as ``plb evaluate`` does for its own prediction), and all are scored as
MAE improvement over predicting the training users' mean. The feature references are
not hard bounds: a user's fitted ratings follow the topics their prompts actually had,
which the prompts show and the true mixture does not, so a predictor from the prompts
can edge past them. Run::

    plb simulate --out /tmp/sim500 --users 500 --seed 0
    python -m bench.features.ceiling /tmp/sim500 [more simulation folders]
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from sklearn.linear_model import RidgeCV

from data.simulation_files import load_simulation
from features.cold_start import expected_fit, split_users
from ranking.agreement import spearman_per_row
from ranking.io.frames import pairwise_from_battles, user_codes, vote_order
from ranking.pairwise import pair_share
from ranking.types import FloatArray, Method
from ranking.users import Shrinkage, aggregate_prior, fit_user_ratings

TARGETS: tuple[tuple[Method, str, Shrinkage], ...] = (
    ("bt", "shrunk", "cv"),
    ("elo", "shrunk", "cv"),
    ("elo", "plain", "none"),
)


def _ridge(x_train: FloatArray, y_train: FloatArray, x_test: FloatArray) -> FloatArray:
    model = RidgeCV(alphas=np.logspace(-3, 3, 13)).fit(x_train, y_train)
    return np.asarray(model.predict(x_test), dtype=np.float64)


def ceilings(folder: Path, *, fraction: float = 0.2, seed: int = 0) -> dict[str, float]:
    """MAE improvements over the mean of the three ideal predictors, per target."""
    sim = load_simulation(folder)
    battles = sim.battles.iloc[vote_order(sim.battles)]
    data = pairwise_from_battles(battles)
    users, names = user_codes(battles)
    test = split_users(names, fraction=fraction, rng=seed)
    train = data.select(~test[users])
    trained, tested = np.flatnonzero(~test), np.flatnonzero(test)
    truth = sim.user_ratings.reindex(index=list(names), columns=list(data.models)).to_numpy()
    features = np.hstack(
        [
            sim.user_topics.reindex(index=list(names)).to_numpy(),
            sim.user_styles.reindex(index=list(names)).filter(like="writing_").to_numpy(),
        ]
    )
    from_features = _ridge(features[trained], truth[trained], features[tested])
    deviation = truth[tested] - truth[trained].mean(axis=0)
    out = {
        "Spearman against the truth: true features": float(
            np.nanmean(spearman_per_row(from_features, truth[tested]))
        ),
        "R² of the true ratings: true features": float(
            1 - ((truth[tested] - from_features) ** 2).sum() / (deviation**2).sum()
        ),
    }
    share = pair_share(train)
    for method, target, shrinkage in TARGETS:
        aggregate = aggregate_prior(train, method)
        fitted = fit_user_ratings(
            data, users, len(names), method=method, shrinkage=shrinkage, prior=aggregate, rng=seed
        )
        y = fitted.ratings[tested]
        reached = expected_fit(method, shrinkage, fitted, tested, share, aggregate)
        assert reached is not None  # every target here has an expected fit
        _, reach = reached
        mean_error = np.abs(fitted.ratings[trained].mean(axis=0) - y).mean()
        found = {
            "true ratings": reach(truth[tested]),
            "true features": reach(from_features),
            "true features on target": _ridge(
                features[trained], fitted.ratings[trained], features[tested]
            ),
        }
        for name, predicted in found.items():
            out[f"{target} {method}: {name}"] = float(1 - np.abs(predicted - y).mean() / mean_error)
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.features.ceiling",
        description="MAE ceilings of predicting new users' fitted ratings on simulations "
        "(plb simulate folders): a Markdown table on stdout.",
    )
    parser.add_argument("folders", nargs="+", type=Path, help="plb simulate output folders")
    parser.add_argument("--new-users", type=float, default=0.2, help="held-out share (0.2)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the split (0)")
    args = parser.parse_args(argv)
    results = {f: ceilings(f, fraction=args.new_users, seed=args.seed) for f in args.folders}
    names = list(next(iter(results.values())))
    print("| ceiling | " + " | ".join(str(f) for f in results) + " |")
    print("|---|" + "---|" * len(results))
    for name in names:
        cells = []
        for values in results.values():
            value = values[name]
            plain = name.startswith(("Spearman", "R²"))
            cells.append(f"{value:.3f}" if plain else f"{value:+.1%}")
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
