"""The JUnit XML view of a compare Report: one test case per benchmark; failing verdicts fail."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from kernelwatch.compare import Report, Verdict
from kernelwatch.render import suite_statement


def render_junit(report: Report, command: str = "compare") -> str:
    """JUnit XML: one test case per benchmark; regressions (and other failing verdicts) fail.
    A slowdown that does not fail (SLOWER: not confirmed by a re-run, host-bound against
    another host, unverified under 2x) passes, with the reason in <system-out>. A regression of
    the suite as a whole is one more failing test case, `geomean`. A MISSING or non-failing
    ERROR row, and one `ab` did not measure (IDENTICAL), is a skipped test case."""
    suite_name = f"kernelwatch.{command}.{report.metric.key}"
    counts = {"failures": 0, "errors": 0, "skipped": 0}
    cases = []
    for c in report.comparisons:
        case = ET.Element("testcase", classname=suite_name, name=c.shown_name, time="0")
        message = f"{c.verdict.value}: {c.reason}"
        if c.verdict is Verdict.ERROR and c.failed:
            ET.SubElement(case, "error", message=message, type=c.verdict.value).text = message
            counts["errors"] += 1
        elif c.failed:
            ET.SubElement(case, "failure", message=message, type=c.verdict.value).text = message
            counts["failures"] += 1
        elif c.verdict in (Verdict.MISSING, Verdict.ERROR, Verdict.IDENTICAL):
            ET.SubElement(case, "skipped", message=message)
            counts["skipped"] += 1
        else:
            ET.SubElement(case, "system-out").text = message
        cases.append(case)
    whole = report.suite
    if whole is not None and whole.regression:
        case = ET.Element("testcase", classname=suite_name, name="geomean", time="0")
        message = f"REGRESSION: {suite_statement(report)}"
        ET.SubElement(case, "failure", message=message, type="REGRESSION").text = message
        counts["failures"] += 1
        cases.append(case)
    root = ET.Element("testsuites", name="kernelwatch")
    attributes = {
        "name": suite_name,
        "tests": str(len(cases)),
        **{k: str(v) for k, v in counts.items()},
        "time": "0",
    }
    suite = ET.SubElement(root, "testsuite", attributes)
    suite.extend(cases)
    ET.indent(root)
    text = ET.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + _xml_chars(text) + "\n"


# What XML 1.0 does not allow in a document at all, escaped or not (C0 controls but tab, LF
# and CR; lone surrogates; U+FFFE and U+FFFF): shown as text escapes instead.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_chars(text: str) -> str:
    return _NOT_XML.sub(
        lambda m: (
            f"\\x{ord(m.group()):02x}" if ord(m.group()) < 256 else f"\\u{ord(m.group()):04x}"
        ),
        text,
    )
