"""``GET /report``: the research report of the served fit, where its operator wrote one.

``plb report DIR --out DIR/report.html`` writes it into the fit directory the service
serves; the service then answers it as it is (a self-contained page: inline style and
SVG, no script, nothing loaded from elsewhere). Putting it there is what publishes it:
the report shows a few users' boards by their ids, so the service serves no report that
its operator did not place. Without one the route answers 404 saying how to write it.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, HTTPException, status
from fastapi.responses import FileResponse

from service.api.deps import SettingsDep

__all__ = ["REPORT_FILE", "report_path", "router"]

#: The report's file name in the fit directory.
REPORT_FILE = "report.html"

#: The report needs its inline style sheet and inline SVG figures, and nothing else.
_REPORT_POLICY = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'self'"
)

router = APIRouter(tags=["web"])


def report_path(fit_dir: Path | None) -> Path | None:
    """The report file of the fit directory ``fit_dir``, or None where there is none."""
    if fit_dir is None:
        return None
    path = Path(fit_dir) / REPORT_FILE
    return path if path.is_file() else None


@router.get("/report", include_in_schema=False)
def report(settings: SettingsDep) -> FileResponse:
    """The research report of the served fit directory (404 where none was written)."""
    path = report_path(settings.fit_dir)
    if path is None:
        raise HTTPException(
            status.HTTP_404_NOT_FOUND,
            "no report of the served fit: write one with "
            f"'plb report FIT_DIR --out FIT_DIR/{REPORT_FILE}' (it is public once there)",
        )
    return FileResponse(
        path,
        media_type="text/html; charset=utf-8",
        headers={"Content-Security-Policy": _REPORT_POLICY, "Cache-Control": "no-cache"},
    )
