"""Baselines: one committed result per GPU model, `baselines/<gpu-slug>/`.

    baselines/nvidia-h100-80gb-hbm3-sm90/result.json     the suite's result (with repetitions)
    baselines/nvidia-h100-80gb-hbm3-sm90/noise.json      each benchmark's noise (noise/)
    baselines/nvidia-h100-80gb-hbm3-sm90/manifest.json   commit, date, driver, runtime, command,
                                                         and the history of updates

A run is compared with the baseline of its exact GPU model (name and compute capability), never
with another one. Files are only written by `kernelwatch baseline update`.

    store.py     the folders: slugs, listing, finding the baseline of a GPU model
    pool.py      runs of one build on several cards or hosts pooled into one result
    update.py    `baseline update`: check, build the new files, write them as a whole; what it
                 refuses (a file twice, a part for the whole, ...)
    against.py   a run's baseline, restricted and with its stored noise, ready to compare; a
                 result's rows by benchmark, a result restricted to some benchmarks
    show.py      `baseline show`'s text: provenance, updates, the stored noise per level; the
                 JSON documents of `baseline list|show --format json`

What a comparison needs (store, against) loads with the package; update and show load at their
first use (module __getattr__; pool.py is update's), so that `compare` loads none of their code.
"""

from typing import TYPE_CHECKING, Any

from kernelwatch import loaded_at_first_use
from kernelwatch.baseline.against import (
    Against,
    against,
    groups,
    ran_a_part,
    read_as_given,
    read_result,
    restrict,
    result_documents,
)
from kernelwatch.baseline.store import (
    GPU_KEYS,
    HOW_TO_CREATE,
    NO_GPU,
    Entry,
    NoBaseline,
    available_text,
    check_root,
    context_slug,
    default_root,
    entries,
    find,
    found_root,
    gpu_slug,
    holds_result,
    may_create_root,
    read_manifest,
    resolve,
)

if TYPE_CHECKING:
    from kernelwatch.baseline.show import describe, list_document, show_document
    from kernelwatch.baseline.update import DEFAULT_MIN_REPETITIONS, Update, prepare_update, write

_LOADED_AT_FIRST_USE = {
    "describe": "show",
    "list_document": "show",
    "show_document": "show",
    "DEFAULT_MIN_REPETITIONS": "update",
    "Update": "update",
    "prepare_update": "update",
    "write": "update",
}


def __getattr__(name: str) -> Any:
    return loaded_at_first_use(__name__, _LOADED_AT_FIRST_USE, name)


__all__ = [
    "DEFAULT_MIN_REPETITIONS",
    "GPU_KEYS",
    "HOW_TO_CREATE",
    "NO_GPU",
    "Against",
    "Entry",
    "NoBaseline",
    "Update",
    "against",
    "available_text",
    "check_root",
    "context_slug",
    "default_root",
    "describe",
    "entries",
    "find",
    "holds_result",
    "found_root",
    "gpu_slug",
    "groups",
    "list_document",
    "may_create_root",
    "prepare_update",
    "ran_a_part",
    "read_as_given",
    "read_manifest",
    "resolve",
    "read_result",
    "restrict",
    "result_documents",
    "show_document",
    "write",
]
