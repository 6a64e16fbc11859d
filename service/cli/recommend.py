"""``plb recommend``: the ranking of a user known only by queries, and perhaps a few votes."""

from __future__ import annotations

import argparse
import gzip
import json
import textwrap
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from service.cli import progress
from service.cli.commands import COMMANDS
from service.cli.common import add_output_options, emit, load_battles
from service.cli.errors import UsageError
from service.cli.tables import format_table, odds_line
from service.live.recommendation import recommendation, unknown_models, vote_prompts
from service.pipeline.artifacts import FitArtifacts, load_fit

if TYPE_CHECKING:
    import pandas as pd

    from features.predictor import RatingPredictor

__all__ = ["add_parser", "load_predictor_and_votes", "read_queries"]

_JSONL_SUFFIXES = (".jsonl", ".jsonl.gz")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``plb recommend``."""
    parser = subparsers.add_parser(
        "recommend",
        help=COMMANDS["recommend"].help,
        description="Predict a user's ranking of the models from their queries with the "
        "rating predictor of a 'plb fit' directory; with --votes, sharpen the prediction "
        "with that user's own votes (a few move it, many dominate).",
    )
    parser.add_argument("fit_dir", metavar="DIR", help="a fit directory of 'plb fit --out DIR'")
    parser.add_argument(
        "--queries",
        required=True,
        metavar="FILE",
        help="the user's queries, UTF-8 (gzip when the name ends in .gz): JSON Lines with a "
        "string 'prompt' in each object when the name ends in .jsonl or .jsonl.gz, or when "
        "every non-blank line is a JSON object; otherwise plain text, one query a line. "
        "Blank lines are skipped",
    )
    parser.add_argument(
        "--votes",
        metavar="FILE",
        help="a battle log of the user's own votes (.jsonl, .json, .csv or .parquet, each "
        "optionally .gz), all taken as one user's; their prompts are added to the queries",
    )
    parser.add_argument(
        "--prompt",
        metavar="TEXT",
        help="rank the models for this one prompt and this user: the prompt's topic and "
        "embedding, the user's style (from the queries) and votes",
    )
    add_output_options(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> None:
    """Execute ``plb recommend``."""
    queries = read_queries(args.queries)
    if args.prompt is not None and not args.prompt.strip():
        raise UsageError("--prompt: is blank")
    fit, predictor, votes = load_predictor_and_votes(args)
    n_prompts = len(queries) + (0 if votes is None else len(vote_prompts(votes)))
    progress.note(f"predicting from {n_prompts:,} queries")
    from features.embeddings.cache import cache_embeddings  # loaded with the predictor

    # The answer reads each query thrice (its topic and components, then the explanation's
    # topics and closeness): embedded once, kept for the rest, the backend as fitted
    cache_embeddings(predictor, n_prompts + 1, serve=False)
    board = fit.leaderboards.get("bt", {}).get("models", [])
    document = recommendation(predictor, queries, votes, board=board, prompt=args.prompt)
    if args.prompt is None:
        emit(document, format_recommendation(document, predictor.confidence), args.format)
        return
    text = format_recommendation(document, predictor.confidence)
    emit(document, prompt_head(document) + "\n" + text, args.format)


def prompt_head(document: dict[str, Any]) -> str:
    """The line above a per-prompt ranking: what the prompt was read as, by the name a
    person would use, or that no topic fits it closely (its explanation's topic)."""
    explained = (document.get("explanation") or {}).get("topics") or []
    if explained and not explained[0].get("fits", True):
        return "For this prompt (none of our topics fits it closely)"
    topic = document["prompt_topic"]
    name = explained[0].get("name") if explained else None
    return f"For this prompt (read as {name or 'topic ' + str(topic['topic'])}: {topic['label']})"


def load_predictor_and_votes(
    args: argparse.Namespace,
) -> tuple[FitArtifacts, RatingPredictor, pd.DataFrame | None]:
    """The fit of ``args.fit_dir``, its rating predictor and the battles of ``--votes``.

    Raises
    ------
    UsageError
        For a fit without a rating predictor, or a ``--votes`` file without a vote or
        naming a model the predictor does not know.
    """
    fit = load_fit(args.fit_dir)
    if fit.predictor_dir is None:
        raise UsageError(
            f"the fit in {args.fit_dir} has no rating predictor (it was made without prompts "
            "or with --no-features); rerun 'plb fit' on a log with prompts"
        )
    votes = None
    if args.votes:
        try:
            votes = load_battles([args.votes], skip_invalid=False)
        except UsageError as error:  # no vote left in it: say which option named the file
            raise UsageError(f"--votes: {error}") from None

    from features.predictor import RatingPredictor  # heavy imports: only for these commands

    predictor = RatingPredictor.load(fit.predictor_dir)
    unknown = [] if votes is None else unknown_models(votes, predictor.models_)
    if unknown:
        raise UsageError(
            f"--votes: {args.votes} names model {unknown[0]!r}, which the fit does not "
            f"know (it knows {', '.join(predictor.models_)})"
        )
    return fit, predictor, votes


def read_queries(path: str) -> list[str]:
    """The queries of ``--queries FILE``, blank lines skipped; see ``plb recommend --help``.

    Raises
    ------
    UsageError
        For a missing or unreadable file, one that is not UTF-8, a JSON Lines record
        without a string ``prompt``, or a file without any query.
    """
    file = Path(path)
    try:
        data = file.read_bytes()
        text = (gzip.decompress(data) if file.name.endswith(".gz") else data).decode("utf-8")
    except FileNotFoundError:
        raise UsageError(f"--queries: no such file: {path}") from None
    except UnicodeDecodeError as error:
        raise UsageError(
            f"--queries: {path} is not UTF-8 text (byte {error.start}: {error.reason})"
        ) from None
    except (OSError, EOFError, zlib.error) as error:
        raise UsageError(f"--queries: cannot read {path}: {error}") from None
    lines = [(number, line) for number, line in enumerate(text.split("\n"), 1) if line.strip()]
    if file.name.endswith(_JSONL_SUFFIXES) or (lines and all(_is_object(s) for _, s in lines)):
        queries = [_prompt(line, number, path) for number, line in lines]
    else:
        queries = [line.strip() for _, line in lines]
    queries = [q for q in queries if q.strip()]
    if not queries:
        raise UsageError(f"--queries: {path} holds no queries")
    return queries


def _is_object(line: str) -> bool:
    try:
        return isinstance(json.loads(line), dict)
    except (ValueError, RecursionError):
        return False


def _prompt(line: str, number: int, path: str) -> str:
    try:
        record = json.loads(line)
    except ValueError as error:
        raise UsageError(f"--queries: {path} line {number} is not JSON ({error})") from None
    except RecursionError:
        raise UsageError(f"--queries: {path} line {number} is JSON nested too deeply") from None
    prompt = record.get("prompt") if isinstance(record, dict) else None
    if not isinstance(prompt, str):
        shown = record.get("prompt") if isinstance(record, dict) else record
        raise UsageError(f"--queries: {path} line {number} needs a string 'prompt', not {shown!r}")
    try:
        prompt.encode("utf-8")
    except UnicodeEncodeError as error:  # "\ud800" in JSON
        raise UsageError(
            f"--queries: {path} line {number}: 'prompt' {prompt[:40]!r} is not valid Unicode "
            f"text (a lone surrogate at character {error.start})"
        ) from None
    return prompt


def format_recommendation(document: dict[str, Any], confidence: float = 0.95) -> str:
    """The recommended ranking as a table, best first."""
    n_queries, n_votes = document["n_queries"], document["n_votes"]
    if document["source"] == "blended":
        head = f"Your ranking (blended: {n_queries:,} queries, {n_votes:,} votes)"
    elif document["source"] == "aggregate":
        head = (
            f"The public ranking: your {n_queries:,} queries don't separate you from "
            "everyone yet (people's earlier queries did not predict their later votes)"
        )
    else:
        head = f"Your ranking (predicted from {n_queries:,} queries)"
    rows = [
        (m["rank"], m["model"], float(m["rating"]), f"{m['lower']:.1f} .. {m['upper']:.1f}")
        for m in document["models"]
    ]
    foot = (
        f"{confidence:.0%} intervals; a user's ratings stray about {document['prior_sd']:.1f} "
        "points (one sd) from a prediction by queries alone"
    )
    if document["source"] == "aggregate":
        foot = f"{confidence:.0%} intervals of the public ranking"
    odds = [(m["model"], m["p_best"], m["rank_lower"], m["rank_upper"]) for m in document["models"]]
    text = (
        head
        + "\n"
        + odds_line(odds, confidence)
        + "\n\n"
        + format_table(("rank", "model", "rating", f"{confidence:.0%} interval"), rows)
        + "\n\n"
        + foot
    )
    explanation = document.get("explanation")
    return text if explanation is None else text + "\n\n" + format_explanation(explanation)


def format_explanation(explanation: dict[str, Any]) -> str:
    """Why this ranking, in plain sentences (``explanation.sentences``), one a paragraph:
    what the queries (or the prompt) are about, how the user writes, what moved each top
    model in rating points, and the note."""
    head = "Why, for this prompt:" if explanation.get("scope") == "prompt" else "Why:"
    lines = [head]
    for sentence in explanation.get("sentences") or []:
        lines += textwrap.wrap(str(sentence), 88, initial_indent="  ", subsequent_indent="    ")
    return "\n".join(lines)
