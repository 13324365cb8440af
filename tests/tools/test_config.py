"""The TOML settings file and threshold values."""

from __future__ import annotations

from pathlib import Path

import pytest
from kernelwatch.config import Config, load_config, parse_fraction, threshold_for
from kernelwatch.errors import InputError

EXAMPLE = """\
[compare]
threshold = "5%"
alpha = 0.01
min_repetitions = 5
noise_multiplier = 3

[[compare.thresholds]]
match = "^BM_Transfer/"
threshold = "10%"

[[compare.thresholds]]
match = "/4096/"
threshold = 0.2
"""


@pytest.mark.parametrize(
    ("text", "value"),
    [("5%", 0.05), ("0.05", 0.05), (0.05, 0.05), ("12.5%", 0.125), ("0", 0.0), (1, 1.0)],
)
def test_parse_fraction(text, value) -> None:
    assert parse_fraction(text, "t") == pytest.approx(value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("5", "write a fraction"),
        ("abc", "not a number"),
        ("-1%", "out of range"),
        ("nan", "out of range"),
        (True, "not a number"),
    ],
)
def test_parse_fraction_rejects(text, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_fraction(text, "t")


def test_load_example(tmp_path: Path) -> None:
    path = tmp_path / "kernelwatch.toml"
    path.write_text(EXAMPLE)
    config = load_config(path)
    assert (config.threshold, config.alpha, config.min_repetitions, config.noise_multiplier) == (
        0.05,
        0.01,
        5,
        3.0,
    )
    assert threshold_for("BM_Transfer/4096/x", config.rules, 0.05) == 0.10  # first match wins
    assert threshold_for("BM_Copy/4096/x", config.rules, 0.05) == 0.2
    assert threshold_for("BM_Copy/8/x", config.rules, 0.05) == 0.05


def test_empty_config_keeps_defaults(tmp_path: Path) -> None:
    path = tmp_path / "k.toml"
    path.write_text("")
    assert load_config(path) == Config()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[compare\n", "invalid TOML"),
        ("[compare]\nthreshhold = 0.1\n", "unknown key\\(s\\) in \\[compare\\]: threshhold"),
        ("[compare]\nmin_repetitions = 0\n", "min_repetitions must be a positive integer"),
        ("[compare]\nalpha = 'x'\n", "alpha must be a number"),
        ("[[compare.thresholds]]\nmatch = '('\nthreshold = 0.1\n", "bad regex"),
        ("[[compare.thresholds]]\nmatch = 'x'\n", "exactly the keys 'match' and 'threshold'"),
        ("compare = 3\n", "\\[compare\\] must be a table"),
        ("[[compare.thresholds]]\nmatch = 5\nthreshold = 0.1\n", "match must be a regex string"),
        ("[compare]\nnoise_multiplier = inf\n", "noise_multiplier must be a finite number"),
        ("[compare]\nalpha = nan\n", "alpha must be a finite number"),
        ("[compare]\nthreshold = inf\n", "threshold inf: write a fraction"),
        ("[compare]\nmin_repetitions = 1" + "0" * 5000 + "\n", "an integer of too many digits"),
        ("[bogus]\nx = 1\n", "unknown table\\(s\\) or key\\(s\\): bogus"),
        ("threshold = 0.1\n", "unknown table\\(s\\) or key\\(s\\): threshold"),
        ("a = " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply"),
        (
            "[[compare.thresholds]]\nmatch = 'a{99999999999}'\nthreshold = 0.1\n",
            "bad regex: too large to compile",
        ),
    ],
)
def test_bad_config(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "k.toml"
    path.write_text(text)
    with pytest.raises(InputError, match=message):
        load_config(path)


def test_missing_config(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read"):
        load_config(tmp_path / "absent.toml")
