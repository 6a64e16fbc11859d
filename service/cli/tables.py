"""Plain-text tables for the terminal."""

from __future__ import annotations

from collections.abc import Sequence

from ranking.types import Leaderboard

__all__ = ["format_leaderboard", "format_matrix", "format_table", "odds_line"]


def format_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """Align columns: text left, numbers right."""
    cells = [[str(h) for h in headers]] + [[_cell(v) for v in row] for row in rows]
    numeric = [
        all(isinstance(row[i], int | float) for row in rows) if rows else False
        for i in range(len(headers))
    ]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = []
    for r in cells:
        parts = [
            c.rjust(w) if num else c.ljust(w) for c, w, num in zip(r, widths, numeric, strict=True)
        ]
        lines.append("  ".join(parts).rstrip())
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _cell(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.1f}"
    return str(value)


def format_leaderboard(board: Leaderboard, battles: str | None = None) -> str:
    """The leaderboard as an aligned table with a one-line header.

    ``battles`` replaces ``"N battles"`` in the header, e.g. to say what the log left out
    (:func:`service.cli.common.battles_phrase`).
    """
    pct = f"{board.confidence:.0%}"
    counted = battles or f"{board.n_battles:,} battles"
    title = f"{board.method.upper()} leaderboard: {len(board.models)} models, {counted}"
    if board.interval != "none":
        title += f", {pct} {board.interval} intervals"
    rows = [
        (m.rank, m.model, m.rating, m.lower, m.upper, m.battles, m.wins, m.losses, m.ties)
        for m in board.models
    ]
    headers = ("rank", "model", "rating", "lower", "upper", "battles", "wins", "losses", "ties")
    table = title + "\n\n" + format_table(headers, rows)
    if board.provisional:
        fewer = f"fewer than {board.min_votes} votes" if board.min_votes else "too few votes"
        lines = [
            f"Provisional, not ranked ({len(board.provisional)} "
            f"model{'s' if len(board.provisional) != 1 else ''} with {fewer}):",
            "",
            format_table(
                ("model", "battles", "wins", "losses", "ties"),
                [(m.model, m.battles, m.wins, m.losses, m.ties) for m in board.provisional],
            ),
        ]
        table += "\n\n" + "\n".join(lines)
    return table


def format_matrix(board: Leaderboard) -> str:
    """Predicted win probability of each row model against each column model (in %)."""
    matrix = board.win_matrix()
    n = len(board.models)
    headers = ["model"] + [str(j + 1) for j in range(n)]
    rows = [
        [f"{i + 1}. {m.model}"] + [round(100 * matrix[i, j]) if i != j else "-" for j in range(n)]
        for i, m in enumerate(board.models)
    ]
    return "Predicted win probability (%) of the row model against the column model\n\n" + (
        format_table(headers, rows)
    )


def _percent(p: float) -> str:
    return "<1%" if 0.0 < p < 0.005 else f"{p:.0%}"


def odds_line(
    odds: Sequence[tuple[str, float, int, int]], confidence: float, shown: int = 3
) -> str:
    """The likeliest best models in a line, with their rank ranges.

    ``odds`` holds ``(model, p_best, rank_lower, rank_upper)`` rows; at most ``shown``
    are named, those with a chance of being the best. ``plb leaderboard`` and ``plb
    recommend`` print it above their tables.
    """
    ranked = sorted(odds, key=lambda m: -m[1])
    top = [m for m in ranked[:shown] if m[1] > 0.0] or ranked[:1]
    parts = [f"{model} {_percent(p)} ({lo}-{hi})" for model, p, lo, hi in top]
    return f"Likeliest best ({confidence:.0%} rank range): " + ", ".join(parts)
