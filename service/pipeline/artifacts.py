"""The fit directory: what ``plb fit`` writes and ``plb report`` and the service read.

Layout (all files UTF-8 JSON or Parquet)::

    manifest.json     what was fitted, from what, when; the format version; ``truth``, the
                      truth file of ``plb simulate`` when fitted from a simulation
    leaderboard.json  {"bt": <leaderboard>, "elo": <leaderboard>}  (docs/SPEC.md section 3)
    summary.json      {"bt": {"cv": <users summary>, "none": ...}, "elo": {...}}
    users.parquet     one row per (method, shrinkage, user, model): rating, lower, upper,
                      battles, and p_best, rank_lower, rank_upper (the user's odds among
                      their listed models, from their posterior; NaN for Elo and for
                      models a plain fit does not list)
    agreement.parquet one row per (method, shrinkage, user): n_battles, spearman, kendall,
                      prior_sd, null_spearman (the user's mean Spearman when their votes are
                      re-drawn from the aggregate: ``ranking.noise``; NaN if not re-drawn)
    evaluation.json   the document of ``plb evaluate``
    battles.parquet   the battles fitted (docs/SPEC.md section 1 columns, labels as text), so that
                      the service can refit with the votes that arrive later
    topics/           the topic model of the users' queries (``TopicModel.save``), and its
                      readable summary ``topics/topics.json``; only when the log has prompts
    profiles.parquet  one row per user: the profile vector of ``features.profile``
    predictor/        the rating predictor (``RatingPredictor.save``) and its summary
                      ``predictor/predictor.json``; only when the log has prompts
    style_control.json  the Bradley-Terry board with the answers' style held equal, its
                      coefficients and the raw ratings of the same votes
                      (:mod:`service.pipeline.style`); only when the votes carry answers
    texts/            each distinct prompt's embedding and style row, kept by the hash of
                      its text for the next fit (:mod:`service.pipeline.text_store`); only
                      when the log has prompts
    history.json      the rating history: a board a period and the drift tests between
                      periods (:func:`service.pipeline.history.battle_history`); only when
                      the votes have a ``tstamp`` and enough of them for one period
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pandas as pd

from ranking.analysis import UserAnalysis
from ranking.users import user_rank_odds
from service.pipeline.config import FitConfig
from service.pipeline.history import HISTORY_FILE, NotDated, battle_history
from service.pipeline.style import STYLE_FILE
from service.pipeline.text_store import Shelf, write_shelves

__all__ = [
    "BATTLES_FILE",
    "FORMAT",
    "PREDICTOR_DIR",
    "TOPICS_DIR",
    "FitArtifacts",
    "analysis_frames",
    "load_fit",
    "write_fit",
]

#: fit-2: the rating predictor averages a model per style size (plb-rating-predictor/2).
FORMAT = "personal-leaderboard/fit-2"
BATTLES_FILE = "battles.parquet"
TOPICS_DIR = "topics"
PREDICTOR_DIR = "predictor"


class SavesToFolder(Protocol):
    """What the fit directory needs of a topic model: saving itself into a folder."""

    def save(self, path: str | Path) -> Path: ...


@dataclass(frozen=True)
class FitArtifacts:
    """The contents of a fit directory."""

    manifest: dict[str, Any]
    leaderboards: dict[str, Any]
    summaries: dict[str, Any]
    users: pd.DataFrame
    agreement: pd.DataFrame
    evaluation: dict[str, Any] | None
    topics: list[dict[str, Any]] | None = None
    profiles: pd.DataFrame | None = None
    root: Path | None = None
    topic_params: dict[str, Any] | None = None
    style_control: dict[str, Any] | None = None

    @property
    def config(self) -> FitConfig:
        """The configuration the fit was made with, as far as the directory records it
        (:meth:`FitConfig.recorded`): its seed, ``min_battles`` and topic settings."""
        return FitConfig.recorded(self.manifest, self.topic_params)

    @property
    def simulated(self) -> bool:
        """Whether the fit is of a simulated arena, whose models and users are made up.

        The manifest's ``simulated`` when it says so; else whether the fit was made with
        the truth of ``plb simulate`` (``plb fit --truth``, as ``plb serve --demo`` does):
        only a simulation knows its users' true ratings.
        """
        flag = self.manifest.get("simulated")
        if isinstance(flag, bool):
            return flag
        return self.manifest.get("truth") is not None

    @property
    def predictor_dir(self) -> Path | None:
        """The folder of the saved rating predictor, when the fit has one."""
        if self.root is None or not (self.root / PREDICTOR_DIR).is_dir():
            return None
        return self.root / PREDICTOR_DIR

    def read_history(self) -> dict[str, Any] | None:
        """The rating history (``history.json``), when the fit has one."""
        if self.root is None or not (self.root / HISTORY_FILE).exists():
            return None
        document: dict[str, Any] = json.loads(
            (self.root / HISTORY_FILE).read_text(encoding="utf-8")
        )
        return document

    def read_battles(self) -> pd.DataFrame | None:
        """The battles the fit was made from, when the directory keeps them."""
        if self.root is None or not (self.root / BATTLES_FILE).exists():
            return None
        return pd.read_parquet(self.root / BATTLES_FILE)

    @property
    def topic_model_dir(self) -> Path | None:
        """The folder of the saved topic model, when the fit has one."""
        if self.topics is None or self.root is None:
            return None
        return self.root / TOPICS_DIR


def analysis_frames(analysis: UserAnalysis) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Long tables of one :class:`UserAnalysis`: ratings per (user, model), and agreement."""
    r = analysis.ratings
    n_users, n_models = r.ratings.shape
    tags = {"method": r.method, "shrinkage": r.shrinkage}
    p_best, rank_lower, rank_upper = user_rank_odds(r)
    ratings = pd.DataFrame(
        {
            **tags,
            "user_id": np.repeat(np.array(analysis.users, dtype=object), n_models),
            "model": np.tile(np.array(r.models, dtype=object), n_users),
            "rating": r.ratings.ravel(),
            "lower": r.lower.ravel(),
            "upper": r.upper.ravel(),
            "battles": r.battles.ravel(),
            "p_best": p_best.ravel(),
            "rank_lower": rank_lower.ravel(),
            "rank_upper": rank_upper.ravel(),
        }
    )
    agreement = pd.DataFrame(
        {
            **tags,
            "user_id": np.array(analysis.users, dtype=object),
            "n_battles": r.n_battles,
            "spearman": analysis.spearman,
            "kendall": analysis.kendall,
            "prior_sd": np.nan if r.prior_sd is None else r.prior_sd,
            "null_spearman": (
                np.full(n_users, np.nan)
                if analysis.null_spearman is None
                else analysis.null_spearman
            ),
        }
    )
    return ratings, agreement


def _write_parquet(frame: pd.DataFrame, path: Path, *, index: bool = False) -> None:
    """Write ``frame`` to a Parquet file, its float columns without a dictionary.

    Parquet's writer tries a dictionary of every column's values first; for ratings,
    profiles and other real numbers, nearly all distinct, the dictionary is thrown away
    and costs most of the write: bench R's profiles (100,000 users, 207 columns) are
    written about five times faster without it. Labels, counts and texts keep theirs.
    The frame read back is the same either way.
    """
    columns = [(str(name), frame[name].dtype) for name in frame.columns]
    if index:
        columns += [
            (str(name), frame.index.get_level_values(i).dtype)
            for i, name in enumerate(frame.index.names)
            if name is not None
        ]
    keep = [name for name, dtype in columns if not pd.api.types.is_float_dtype(dtype)]
    frame.to_parquet(path, index=index, use_dictionary=keep)


def _write_json(path: Path, document: Any) -> None:
    path.write_text(json.dumps(document, indent=2, allow_nan=False) + "\n", encoding="utf-8")


def write_fit(
    out_dir: str | os.PathLike[str],
    *,
    manifest: dict[str, Any],
    analyses: Sequence[UserAnalysis],
    evaluation: dict[str, Any] | None,
    topic_model: SavesToFolder | None = None,
    profiles: pd.DataFrame | None = None,
    predictor: SavesToFolder | None = None,
    battles: pd.DataFrame | None = None,
    shelves: Sequence[Shelf] = (),
    style_control: dict[str, Any] | None = None,
) -> Path:
    """Write a fit directory atomically: into a temporary sibling, then renamed.

    An existing directory at ``out_dir`` is replaced only once everything is written,
    so a failure never leaves a half-written fit behind. ``profiles`` is a frame indexed
    by ``user_id``, one column per profile feature; ``battles`` is the battle frame
    fitted, kept so that the service can refit with later votes; ``shelves`` are the
    prompts' rows by text, kept for the next fit (under ``texts/``); ``style_control``
    the style-controlled board (``style_control.json``), when the votes carry answers.
    """
    out = Path(out_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    staging.chmod(0o755)  # mkdtemp makes it private; a fit is meant to be shared
    try:
        frames = [analysis_frames(a) for a in analyses]
        leaderboards = {a.ratings.method: a.aggregate.to_dict() for a in analyses}
        summaries: dict[str, dict[str, Any]] = {}
        for a in analyses:
            summaries.setdefault(a.ratings.method, {})[a.ratings.shrinkage] = a.summary.to_dict()
        _write_json(staging / "leaderboard.json", leaderboards)
        _write_json(staging / "summary.json", summaries)
        _write_parquet(pd.concat([f[0] for f in frames]), staging / "users.parquet")
        _write_parquet(pd.concat([f[1] for f in frames]), staging / "agreement.parquet")
        if evaluation is not None:
            _write_json(staging / "evaluation.json", evaluation)
        if topic_model is not None:
            topic_model.save(staging / TOPICS_DIR)
        if profiles is not None:
            _write_parquet(profiles, staging / "profiles.parquet", index=True)
        if predictor is not None:
            predictor.save(staging / PREDICTOR_DIR)
        if battles is not None:
            _write_parquet(_battles_for_parquet(battles), staging / BATTLES_FILE)
            _write_history(staging, battles)
        write_shelves(staging, shelves)
        if style_control is not None:
            _write_json(staging / STYLE_FILE, style_control)
        stamp = datetime.now(UTC).isoformat(timespec="seconds")
        _write_json(staging / "manifest.json", {"format": FORMAT, "created": stamp, **manifest})
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if out.exists():
        retired = Path(tempfile.mkdtemp(prefix=f".{out.name}.old.", dir=out.parent))
        out.rename(retired / out.name)
        staging.rename(out)
        shutil.rmtree(retired)
    else:
        staging.rename(out)
    return out


def _write_history(folder: Path, battles: pd.DataFrame) -> None:
    """Write the rating history of ``battles`` into ``folder``, when they are dated and
    hold enough votes for one period."""
    try:
        history = battle_history(battles)
    except NotDated:
        return
    if history is not None:
        _write_json(folder / HISTORY_FILE, history.to_dict())


def _battles_for_parquet(battles: pd.DataFrame) -> pd.DataFrame:
    """The battle frame with every label of mixed or object type as nullable text.

    Parquet needs one type a column; a label read from JSON can mix numbers and text.
    """
    frame = battles.copy()
    for column in frame.columns:
        if frame[column].dtype == object:
            frame[column] = frame[column].astype("string")
    return frame


def load_fit(fit_dir: str | os.PathLike[str]) -> FitArtifacts:
    """Read a fit directory written by :func:`write_fit`.

    Raises
    ------
    ValueError
        If the directory is missing, incomplete or of another format.
    """
    root = Path(fit_dir)
    try:
        manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
        if manifest.get("format") != FORMAT:
            raise ValueError(f"{root}: not a fit directory of format {FORMAT!r}")
        leaderboards = json.loads((root / "leaderboard.json").read_text(encoding="utf-8"))
        summaries = json.loads((root / "summary.json").read_text(encoding="utf-8"))
        users = pd.read_parquet(root / "users.parquet")
        agreement = pd.read_parquet(root / "agreement.parquet")
        evaluation_path = root / "evaluation.json"
        evaluation = (
            json.loads(evaluation_path.read_text(encoding="utf-8"))
            if evaluation_path.exists()
            else None
        )
        topics_path = root / TOPICS_DIR / "topics.json"
        summary = (
            json.loads(topics_path.read_text(encoding="utf-8")) if topics_path.exists() else None
        )
        topics = None if summary is None else summary["topics"]
        topic_params = None if summary is None else summary.get("params")
        profiles_path = root / "profiles.parquet"
        profiles = pd.read_parquet(profiles_path) if profiles_path.exists() else None
        style_path = root / STYLE_FILE
        style_control = (
            json.loads(style_path.read_text(encoding="utf-8")) if style_path.exists() else None
        )
    except FileNotFoundError as error:
        raise ValueError(
            f"{root} is not a complete fit directory (missing {Path(error.filename).name}); "
            "run 'plb fit BATTLES --out DIR' first"
        ) from None
    except (json.JSONDecodeError, KeyError, OSError) as error:
        raise ValueError(f"{root}: cannot read the fit ({error})") from None
    return FitArtifacts(
        manifest,
        leaderboards,
        summaries,
        users,
        agreement,
        evaluation,
        topics,
        profiles,
        root,
        topic_params,
        style_control,
    )
