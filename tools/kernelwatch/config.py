"""The compare settings file (TOML): defaults, and per-benchmark thresholds matched by regex.

[compare]
threshold = "5%"
alpha = 0.05
min_repetitions = 5
noise_multiplier = 2

[[compare.thresholds]]
match = "^BM_Transfer/"      # Python regex, searched in the benchmark name
threshold = "10%"

[run]
serial = ["^BM_Transfer/"]   # host-bound: measured one GPU at a time (run --gpus)
"""

from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kernelwatch.errors import InputError, compile_regex
from kernelwatch.files import Input, check_input_file

_TABLES = frozenset({"compare", "run"})
_TOP_KEYS = frozenset({"threshold", "alpha", "min_repetitions", "noise_multiplier", "thresholds"})
_RULE_KEYS = frozenset({"match", "threshold"})
_RUN_KEYS = frozenset({"serial"})


@dataclass(frozen=True)
class ThresholdRule:
    pattern: re.Pattern[str]
    threshold: float


@dataclass(frozen=True)
class Config:
    """Values from a settings file; None where the file leaves the built-in default."""

    threshold: float | None = None
    alpha: float | None = None
    min_repetitions: int | None = None
    noise_multiplier: float | None = None
    rules: tuple[ThresholdRule, ...] = ()
    serial: tuple[re.Pattern[str], ...] = ()  # [run] serial: host-bound benchmarks
    # The file read (load_config); None: the built-in defaults. Not a setting: not compared.
    source: Path | None = field(default=None, compare=False)

    def read(self) -> Input:
        """The file, among the inputs of the command that read it (files.check_outputs): a
        report written over --config or the suite's kernelwatch.toml replaced its thresholds."""
        return Input("the settings file", self.source)

    def over(self, name: str, given: Any, default: Any) -> Any:
        """The precedence of every command: the command line's value (None: not given) over
        this file's `name` over `default`."""
        found = getattr(self, name)
        return given if given is not None else found if found is not None else default

    @property
    def name(self) -> str:
        """The file, as a report says where a setting came from: its name, briefly."""
        return self.source.name if self.source is not None else "the settings file"

    def origin(self, name: str, given: Any, option: str, default: str) -> str:
        """Where `over` takes `name` from, in the words a report prints beside it: `option`
        (given on the command line), this file's name, or `default` (its words)."""
        if given is not None:
            return option
        return self.name if getattr(self, name) is not None else default


def parse_fraction(value: Any, what: str) -> float:
    """Read "5%", 0.05 or "0.05" as 0.05. A bare number above 1 is refused as ambiguous."""
    text = str(value).strip()
    try:
        if text.endswith("%"):
            fraction = float(text[:-1]) / 100.0
        elif isinstance(value, bool):
            raise ValueError
        else:
            fraction = float(text)
            if fraction > 1:
                raise InputError(f"{what} {text}: write a fraction (0.05) or a percentage (5%)")
    except ValueError:
        raise InputError(f"{what} {text!r}: not a number or percentage") from None
    if not (0 <= fraction < 10):  # catches NaN too
        raise InputError(f"{what} {text}: out of range")
    return fraction


def load_config(path: str | Path) -> Config:
    file = Path(path)
    where = f"config {file}"
    check_input_file(file, "a TOML settings file")
    try:
        with file.open("rb") as handle:
            data = tomllib.load(handle)
    except OSError as exc:
        raise InputError(f"{where}: cannot read: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{where}: invalid TOML: {exc}") from None
    except ValueError:  # an integer of more digits than Python reads (sys.get_int_max_str_digits)
        raise InputError(f"{where}: invalid TOML: an integer of too many digits") from None
    except RecursionError:
        raise InputError(f"{where}: invalid TOML: arrays or tables nested too deeply") from None
    unknown_tables = set(data) - _TABLES
    if unknown_tables:
        raise InputError(
            f"{where}: unknown table(s) or key(s): {', '.join(sorted(unknown_tables))} "
            "(a settings file holds [compare] and [run])"
        )
    section = data.get("compare", {})
    if not isinstance(section, dict):
        raise InputError(f"{where}: [compare] must be a table")
    unknown = set(section) - _TOP_KEYS
    if unknown:
        raise InputError(f"{where}: unknown key(s) in [compare]: {', '.join(sorted(unknown))}")

    rules = []
    raw_rules = section.get("thresholds", [])
    if not isinstance(raw_rules, list):
        raise InputError(f"{where}: compare.thresholds must be an array of tables")
    for number, rule in enumerate(raw_rules, 1):
        label = f"{where}: compare.thresholds #{number}"
        if not isinstance(rule, dict) or set(rule) != _RULE_KEYS:
            raise InputError(f"{label}: needs exactly the keys 'match' and 'threshold'")
        if not isinstance(rule["match"], str):
            raise InputError(f"{label}: match must be a regex string")
        pattern = compile_regex(rule["match"], f"{label}: match")
        rules.append(
            ThresholdRule(pattern, parse_fraction(rule["threshold"], f"{label}: threshold"))
        )

    def optional(key: str, kind: type) -> Any:
        if key not in section:
            return None
        value = section[key]
        if kind is int and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise InputError(f"{where}: {key} must be a positive integer")
        if kind is float:
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise InputError(f"{where}: {key} must be a number >= 0")
            if not math.isfinite(value):  # TOML has inf and nan
                raise InputError(f"{where}: {key} must be a finite number")
            return float(value)
        return value

    threshold = section.get("threshold")
    serial = _serial(data.get("run", {}), where)
    return Config(
        threshold=None if threshold is None else parse_fraction(threshold, f"{where}: threshold"),
        alpha=optional("alpha", float),
        min_repetitions=optional("min_repetitions", int),
        noise_multiplier=optional("noise_multiplier", float),
        rules=tuple(rules),
        serial=serial,
        source=file,
    )


def _serial(section: Any, where: str) -> tuple[re.Pattern[str], ...]:
    if not isinstance(section, dict):
        raise InputError(f"{where}: [run] must be a table")
    unknown = set(section) - _RUN_KEYS
    if unknown:
        raise InputError(f"{where}: unknown key(s) in [run]: {', '.join(sorted(unknown))}")
    patterns = section.get("serial", [])
    if not isinstance(patterns, list) or not all(isinstance(p, str) for p in patterns):
        raise InputError(f"{where}: run.serial must be an array of regex strings")
    return tuple(compile_regex(p, f"{where}: run.serial") for p in patterns)


def threshold_for(name: str, rules: tuple[ThresholdRule, ...], default: float) -> float:
    """The first rule whose regex matches the benchmark name wins; else the default."""
    for rule in rules:
        if rule.pattern.search(name):
            return rule.threshold
    return default
