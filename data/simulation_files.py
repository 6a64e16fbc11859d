"""A simulation's files: ``battles.jsonl.gz`` (docs/SPEC.md section 1 fields plus
``topic``) and ``truth.json``, written byte for byte the same for the same simulation."""

from __future__ import annotations

import gzip
import json
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
from pyarrow import json as pa_json

from data.real_prompts import CHOICE_STRENGTH
from data.truth import Simulation, SimulationParams, Truth

__all__ = ["load_simulation", "load_truth", "write_simulation"]

_TRUTH_FORMAT = "plb-simulation-truth"
_COLUMNS = ("battle_id", "user_id", "prompt", "model_a", "model_b", "winner", "tstamp", "topic")


def _frame_json(frame: pd.DataFrame, digits: int) -> dict[str, Any]:
    return {
        "index": [str(i) for i in frame.index],
        "columns": [str(c) for c in frame.columns],
        "data": np.round(frame.to_numpy(dtype=float), digits).tolist(),
    }


def _series_json(series: pd.Series, digits: int) -> dict[str, float]:
    return {str(k): round(float(v), digits) for k, v in series.items()}


def _frame_from(obj: Mapping[str, Any], index_name: str | None = None) -> pd.DataFrame:
    index = pd.Index([str(i) for i in obj["index"]], name=index_name)
    return pd.DataFrame(
        np.asarray(obj["data"], dtype=float).reshape(len(index), -1),
        index=index,
        columns=list(obj["columns"]),
    )


def _json_values(column: pd.Series) -> list[str]:
    """JSON text of each value; only strings that need escaping go through ``json.dumps``."""
    if pd.api.types.is_float_dtype(column) and np.isfinite(column.to_numpy()).all():
        return [repr(x) for x in column.tolist()]  # shortest exact form, unlike to_json
    if not pd.api.types.is_string_dtype(column):
        return [json.dumps(x) for x in column.tolist()]
    values = column.astype(str)
    out = [f'"{v}"' for v in values.tolist()]
    for i in np.flatnonzero(values.str.contains(r'["\\\x00-\x1f]', regex=True)).tolist():
        out[i] = json.dumps(values.iloc[i], ensure_ascii=False)
    return out


def _write_jsonl_gz(frame: pd.DataFrame, path: Path, compresslevel: int) -> None:
    """JSON Lines, gzip with a zero mtime (same frame, same bytes); compress in a thread."""
    keys = [json.dumps(str(c)).replace("{", "{{").replace("}", "}}") for c in frame.columns]
    line = "{{" + ",".join(f"{k}:{{}}" for k in keys) + "}}\n"
    with (
        gzip.GzipFile(path, "wb", compresslevel=compresslevel, mtime=0) as fh,
        ThreadPoolExecutor(max_workers=1) as pool,  # zlib releases the GIL
    ):
        pending: Future[int] | None = None
        for start in range(0, len(frame), 100_000):
            part = frame.iloc[start : start + 100_000]
            columns = [_json_values(part[c]) for c in part.columns]
            data = "".join(line.format(*row) for row in zip(*columns, strict=True)).encode()
            if pending is not None:
                pending.result()
            pending = pool.submit(fh.write, data)
        if pending is not None:
            pending.result()


def write_simulation(
    sim: Simulation, out_dir: str | Path, *, compresslevel: int = 3
) -> dict[str, Path]:
    """Write a simulation as ``battles.jsonl.gz`` and ``truth.json`` in ``out_dir``.

    Parameters
    ----------
    sim : Simulation
        What :func:`simulate` returned.
    out_dir : str or Path
        Directory, created when missing; existing files of those names are replaced.
    compresslevel : int
        gzip level of the battles (1 fastest .. 9 smallest); writing is deterministic.

    Returns
    -------
    dict
        ``{"battles": path, "truth": path}``.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"battles": out / "battles.jsonl.gz", "truth": out / "truth.json"}
    _write_jsonl_gz(sim.battles, paths["battles"], compresslevel)
    winners = sim.battles["winner"].value_counts(normalize=True)
    truth = {
        "format": _TRUTH_FORMAT,
        "version": 1,
        "seed": sim.seed,
        "definition": "rating = 1000 + 400/ln(10) * (EU - mean EU); EU is a user's expected "
        "utility (natural-log strength) under their own topic mixture; the population's "
        "is the mean of the users' ratings (users weighted equally).",
        "summary": {
            "users": len(sim.user_ratings),
            "battles": len(sim.battles),
            "mean_spearman": round(sim.mean_spearman(), 4),
            "tie_share": round(
                float(winners.get("tie", 0.0) + winners.get("tie (bothbad)", 0.0)), 4
            ),
        },
        "models": list(sim.models),
        "topics": list(sim.topics),
        "params": asdict(sim.params),
        "population_ratings": _series_json(sim.population_ratings, 3),
        "user_ratings": _frame_json(sim.user_ratings, 3),
        "user_topics": _frame_json(sim.user_topics, 5),
        "user_styles": _frame_json(sim.user_styles, 4),
        "model_quality": _series_json(sim.model_quality, 5),
        "model_topic_strength": _frame_json(sim.model_topic_strength, 5),
        "model_styles": _frame_json(sim.model_styles, 5),
        "model_popularity": _series_json(sim.model_popularity, 6),
        "topic_world": _frame_json(sim.topic_world, 5),
    }
    if sim.prompts is not None:
        truth["prompts"] = sim.prompts
        truth["prompt_choice"] = (
            "within the vote's topic, P(prompt p) is proportional to "
            f"exp({CHOICE_STRENGTH} * writing[u] . traits[p]) (data/real_prompts.py)"
        )
    if sim.attackers is not None:
        truth["attackers"] = {str(k): str(v) for k, v in sim.attackers.items()}
        truth["brigade_model"] = sim.brigade_model
    paths["truth"].write_text(json.dumps(truth, separators=(",", ":")) + "\n", encoding="utf-8")
    return paths


def load_truth(path: str | Path) -> Truth:
    """Read ``truth.json`` (or the ``truth.json`` inside a directory) back.

    Parameters
    ----------
    path : str or Path
        The file, or the directory :func:`write_simulation` wrote.

    Returns
    -------
    Truth
        As written, up to the rounding of the file (3 decimals for ratings).
    """
    file = Path(path)
    if file.is_dir():
        file = file / "truth.json"
    try:
        obj = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"Cannot read truth file {str(file)!r}: {exc}") from exc
    if not isinstance(obj, dict) or obj.get("format") != _TRUTH_FORMAT:
        raise ValueError(f"File {str(file)!r} is not a simulation truth file.")
    raw = dict(obj["params"])
    raw["population_style"] = tuple(raw["population_style"])
    series = {k: pd.Series(obj[k], dtype=float, name=name) for k, name in
              [("population_ratings", "rating"), ("model_quality", "quality"),
               ("model_popularity", "popularity")]}  # fmt: skip
    return Truth(
        models=tuple(obj["models"]),
        topics=tuple(obj["topics"]),
        user_ratings=_frame_from(obj["user_ratings"], "user_id"),
        population_ratings=series["population_ratings"],
        user_topics=_frame_from(obj["user_topics"], "user_id"),
        user_styles=_frame_from(obj["user_styles"], "user_id"),
        model_quality=series["model_quality"],
        model_topic_strength=_frame_from(obj["model_topic_strength"]),
        model_styles=_frame_from(obj["model_styles"]),
        model_popularity=series["model_popularity"],
        topic_world=_frame_from(obj["topic_world"]),
        params=SimulationParams(**raw),
        seed=obj["seed"],
        attackers=None
        if "attackers" not in obj
        else pd.Series(
            list(obj["attackers"].values()),
            index=pd.Index(list(obj["attackers"]), name="user_id"),
            name="attack",
            dtype=object,
        ),
        brigade_model=obj.get("brigade_model"),
        prompts=obj.get("prompts"),
    )


def load_simulation(out_dir: str | Path) -> Simulation:
    """Read back what :func:`write_simulation` wrote in ``out_dir``.

    Parameters
    ----------
    out_dir : str or Path
        Directory holding ``battles.jsonl.gz`` and ``truth.json``.

    Returns
    -------
    Simulation
    """
    folder = Path(out_dir)
    truth = load_truth(folder / "truth.json")
    schema = pa.schema([(c, pa.float64() if c == "tstamp" else pa.string()) for c in _COLUMNS])
    try:
        with pa.input_stream(folder / "battles.jsonl.gz", compression="gzip") as stream:
            table = pa_json.read_json(stream, parse_options=pa_json.ParseOptions(schema))
    except (OSError, pa.ArrowInvalid) as exc:
        raise ValueError(f"Cannot read battles in {str(folder)!r}: {exc}") from exc
    battles = table.to_pandas().astype({c: "str" for c in _COLUMNS if c != "tstamp"})
    return Simulation(**{f.name: getattr(truth, f.name) for f in fields(Truth)}, battles=battles)
