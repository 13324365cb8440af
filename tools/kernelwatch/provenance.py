"""What a result's context says about how it was made, where that decides what it may be used
for: a run slowed on purpose (the harness's --kernelwatch_inject, the selftest's control and
slowed runs) measures the selftest, not the code, and is never a baseline; a run anchored
(`run --anchor`, anchor.py) was judged against the baseline's commit measured on its own card,
not against the committed baseline's numbers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# The harness records --kernelwatch_inject=REGEX:FRACTION under this key (bench/harness
# context.cpp); the selftest records its runs' roles (selftest.ROLE_KEY, LEVEL_KEY).
HARNESS_INJECT_KEY = "kernelwatch_inject"
SELFTEST_ROLE_KEY = "kernelwatch_selftest_role"
SELFTEST_LEVEL_KEY = "kernelwatch_selftest_level"
# `run --anchor` records here whether and how its verdict was anchored (one phrase).
ANCHOR_KEY = "kernelwatch_anchor"


def slowed_on_purpose(context: Mapping[str, Any]) -> str | None:
    """How the run was slowed down on purpose (one phrase), or None for an ordinary run."""
    inject = context.get(HARNESS_INJECT_KEY)
    if inject not in (None, ""):
        return f"made with --kernelwatch_inject={inject}"
    role = context.get(SELFTEST_ROLE_KEY)
    if role in ("inject", "control"):
        level = context.get(SELFTEST_LEVEL_KEY)
        what = f"a selftest {role} run" + (f" (slowed by {level})" if level else "")
        return what
    return None


def anchoring(context: Mapping[str, Any]) -> str | None:
    """How the run's verdict was anchored ("anchored on <commit> (...)"), or why it was not
    although it should have been ("not anchored: ..."); None where anchoring was not wanted."""
    phrase = context.get(ANCHOR_KEY)
    return phrase if isinstance(phrase, str) and phrase else None
