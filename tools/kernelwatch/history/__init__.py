"""The results history: every ingested run in one SQLite database (standard library only).

Layout (schema version 4; docs/history.md says why it is shaped so):

    meta(key PRIMARY KEY, value)                 schema_version lives here (and, once a run
                                                 was removed, the largest id removed)
    runs(id, content_hash UNIQUE, source, gpu_slug, gpu_name, git_commit, run_date, date,
         ingested_at, benchmarks, context,       one row per ingested result file
         run_key UNIQUE where given)
    benchmarks(id, name UNIQUE)                  names, stored once
    metrics(id, name UNIQUE)                     real_time, cpu_time, counters
    run_benchmarks(run_id, benchmark_id, repetitions, from_aggregates, error, skipped)
    samples(benchmark_id, metric_id, run_id, repetition, value)   one value per row, times in ns
    replaced_results(content_hash PRIMARY KEY, run_id, run_key)  the results that a later
                                                 attempt under their key replaced

Opening a database applies the missing migrations (MIGRATIONS, version -> statements) in one
transaction; a database written by a newer kernelwatch (a larger schema_version) is refused.
An ingest is one transaction too: all of a run or nothing. A run is identified by the sha256
of its canonical JSON (context + benchmarks), so ingesting the same file twice is a no-op; and by
its key where one is given (`ingest --key`: one workflow run's result of one GPU), under which a
re-run's result replaces the first attempt's; a result so replaced stays replaced.

    schema.py    the migrations, and opening a database (read-only, or migrated)
    intake.py    ingesting a run: one transaction, all of it or nothing; removing runs
    queries.py   the runs, and one benchmark's series of one metric; those two as JSON
                 documents (`history list|show --format json`)
"""

from kernelwatch.history.intake import (
    Ingested,
    content_hash,
    ingest,
    load_run,
    moment,
    normalized_date,
    remove,
    stored_run,
)
from kernelwatch.history.queries import (
    Point,
    Run,
    failed_runs,
    gpu_slugs,
    metric_key,
    runs,
    runs_document,
    runs_without_gpu,
    series,
    series_document,
    slowed_runs,
    summary,
    texts,
)
from kernelwatch.history.schema import (
    MIGRATIONS,
    SCHEMA_VERSION,
    damaged,
    database,
    default_path,
    found_path,
    open_db,
    schema_version,
)

__all__ = [
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "Ingested",
    "Point",
    "Run",
    "content_hash",
    "damaged",
    "database",
    "failed_runs",
    "default_path",
    "found_path",
    "gpu_slugs",
    "ingest",
    "load_run",
    "metric_key",
    "moment",
    "normalized_date",
    "open_db",
    "remove",
    "runs",
    "runs_document",
    "runs_without_gpu",
    "schema_version",
    "series",
    "series_document",
    "slowed_runs",
    "stored_run",
    "summary",
    "texts",
]
