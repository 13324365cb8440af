"""Small pieces of the page's HTML shared by its sections: dates as a reader reads them, inline
SVG capped at its natural size."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any


def svg_with_width(svg: str) -> str:
    """Cap an inline SVG at its natural size (its viewBox is in points; 1 pt = 4/3 px)."""
    match = re.search(r'viewBox="0 0 ([0-9.]+) ([0-9.]+)"', svg[:400])
    if not match:
        return svg
    width = float(match.group(1)) * 4 / 3
    return svg.replace("<svg ", f'<svg style="max-width: {width:.0f}px" ', 1)


def when(value: Any) -> str:
    """An ISO 8601 date as `2026-11-21 06:25 UTC` (as written when it is not one, or naive)."""
    text = str(value or "")
    try:
        moment = dt.datetime.fromisoformat(text.strip())
        if moment.tzinfo is None:
            return moment.strftime("%Y-%m-%d %H:%M")
        return moment.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    except (ValueError, OverflowError):  # OverflowError: the zone moves it past year 1 or 9999
        return text
