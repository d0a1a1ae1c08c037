"""SacreROUGE summaries jsonl: one object per summary,
``{"instance_id", "summarizer_id", "summarizer_type", "summary": {"text": [sentences]},
"references": [{"summarizer_id", "text": [sentences]}], "documents": [{"text": ...}]}``.

Texts are stored with their sentences separated by newlines. ``reference`` (one object)
and ``document`` (one object) are accepted as well as the plural lists. A reference or
document repeated on the lines of every system of an input must be the same each time.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from metaeval.errors import InputError
from metaeval.ingest.common import identifier, jsonl_objects, sha256
from metaeval.batch import DOCUMENT_COLUMNS, REFERENCE_COLUMNS, SUMMARY_COLUMNS, Batch

FORMAT = "summaries"


def parse(path: Path) -> Batch:
    file = str(path)
    summaries: dict[tuple[str, str], tuple[str, int]] = {}
    references: dict[tuple[str, str], tuple[str, int]] = {}
    documents: dict[tuple[str, int], tuple[str, int]] = {}
    systems: dict[str, str | None] = {}
    for line, obj in jsonl_objects(path):
        system = identifier(obj.get("summarizer_id"), file, line, "summarizer_id")
        input_ = identifier(obj.get("instance_id"), file, line, "instance_id")
        systems.setdefault(system, obj.get("summarizer_type"))
        if "summary" not in obj:
            raise InputError(file, line, "summary", "missing")
        text = _text(obj["summary"], file, line, "summary")
        if (system, input_) in summaries:
            raise InputError(file, line, "summary", f"summary of system={system} input={input_} "
                             f"already given on line {summaries[system, input_][1]}")
        summaries[system, input_] = (text, line)
        for field, items in _listed(obj, "references", "reference", file, line):
            for position, item in enumerate(items):
                where = f"{field}[{position}]"
                ref_id = item.get("summarizer_id", str(position)) if isinstance(item, dict) else str(position)
                ref_id = identifier(ref_id, file, line, f"{where}.summarizer_id")
                _put(references, (input_, ref_id), _text(item, file, line, where), line, file, where,
                     f"reference {ref_id} of input {input_}")
        for field, items in _listed(obj, "documents", "document", file, line):
            for position, item in enumerate(items):
                where = f"{field}[{position}]"
                _put(documents, (input_, position), _text(item, file, line, where), line, file, where,
                     f"document {position} of input {input_}")
    return Batch(
        file=file, format=FORMAT, sha256=sha256(path), options={},
        systems=pd.DataFrame({"name": list(systems), "type": list(systems.values())}),
        summaries=pd.DataFrame([(s, i, t, n) for (s, i), (t, n) in summaries.items()], columns=SUMMARY_COLUMNS),
        references=pd.DataFrame([(i, r, t, n) for (i, r), (t, n) in references.items()], columns=REFERENCE_COLUMNS),
        documents=pd.DataFrame([(i, p, t, n) for (i, p), (t, n) in documents.items()], columns=DOCUMENT_COLUMNS),
    )


def _listed(obj: dict, plural: str, singular: str, file: str, line: int):
    """The items under ``plural`` (a list) or ``singular`` (one item), if present."""
    if plural in obj:
        if not isinstance(obj[plural], list):
            raise InputError(file, line, plural, "expected a list")
        yield plural, obj[plural]
    elif singular in obj:
        yield singular, [obj[singular]]


def _text(value, file: str, line: int, field: str) -> str:
    """A text given as a string, a list of sentences, or an object with a ``text`` field."""
    if isinstance(value, dict):
        if "text" not in value:
            raise InputError(file, line, f"{field}.text", "missing")
        value, field = value["text"], f"{field}.text"
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(s, str) for s in value):
        return "\n".join(value)
    raise InputError(file, line, field, "expected a text: a string or a list of sentence strings")


def _put(store: dict, key, text: str, line: int, file: str, field: str, what: str) -> None:
    if key in store and store[key][0] != text:
        raise InputError(file, line, field, f"{what} differs from the one given on line {store[key][1]}")
    store.setdefault(key, (text, line))
