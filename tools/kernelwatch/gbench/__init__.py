"""Reading one Google Benchmark JSON file (1.7 or 1.8, the layout before 1.5, or an nvbench file
mapped to one) into validated columns.

    jsonfile.py   the file to a parsed document (orjson when installed), every failure one line
    reader.py     a document to FileColumns: the fast path, else the row-by-row one
    fast.py       the usual file: one lean pass over the rows, then checks on whole columns
    stream.py     a large usual file a part of its rows at a time (never all as dicts)
    rows.py       any file, row by row: the first invalid row is the message (and the rows of
                  the layout before 1.5 as 1.5 writes them; the row of a failed benchmark)
    columns.py    FileColumns, time units, and how value rows become columns of doubles

A 10,000-benchmark file has 140,000 rows, so the usual file is read by the fast path. Anything
unusual or invalid sends the file through the row-by-row path, which handles every case and
words the exact message.
"""

from kernelwatch.gbench.columns import TIME_KEYS, TIME_UNITS, FileColumns
from kernelwatch.gbench.jsonfile import read_json
from kernelwatch.gbench.reader import check_envelope, read_document, read_file, read_streamed
from kernelwatch.gbench.rows import failed_row

__all__ = [
    "TIME_KEYS",
    "TIME_UNITS",
    "FileColumns",
    "check_envelope",
    "failed_row",
    "read_document",
    "read_file",
    "read_json",
    "read_streamed",
]
