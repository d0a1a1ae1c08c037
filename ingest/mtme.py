"""An mt-metrics-eval evaluation set directory (google-research/mt-metrics-eval, e.g. ``wmt23/``),
one language pair at a time::

    sources/LP.txt                       one source segment per line (or LP.jsonl, field "source")
    references/LP.REF.txt                one reference per segment (or .jsonl, field "target")
    system-outputs/LP/SYSTEM.txt         one translation per segment (or .jsonl, field "hypothesis")
    human-scores/LP.NAME.LEVEL.score     "SYSTEM SCORE" lines; SCORE may be None (missing)
    metric-scores/LP/NAME.LEVEL.score    likewise (NAME is the metric and its reference, BLEU-refA)

A ``.score`` file's lines of one system are its scores in segment order (the k-th line of a
system is segment k), as mt-metrics-eval's ``ReadScoreFile`` reads them; at LEVEL ``sys`` each
system has one line.

What becomes what:

- segment-level scores (LEVEL ``seg``): measure ``NAME.seg``, cell (system, input = the
  segment's index, 0-based as in mt-metrics-eval); ``None`` is a missing cell;
- system-level scores (LEVEL ``sys``): measure ``NAME.sys``, per system under the single input
  ``all`` (the per-system form of ``ingest table`` without an input column);
- human scores are human judgments (one annotator, ``0``), metric scores automatic scores;
- sources become documents (position 0 of their segment's input), references references (id
  REF), system outputs summaries (their system and segment).

Other levels (``doc``, ``domain``) and ``.rating`` files are not read (:func:`parse` lists them), nor
``documents/LP.docs`` (the documents and domains of the segments).
Every file is one batch (recorded in ``ingests`` with its sha256); errors name file, line, field.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from metaeval.errors import InputError
from metaeval.ingest.common import cells_frame, identifier, measures_frame, number_text, sha256, text_lines
from metaeval.ingest.table import SYSTEM_LEVEL_INPUT
from metaeval.batch import DOCUMENT_COLUMNS, REFERENCE_COLUMNS, SUMMARY_COLUMNS, Batch

FORMAT = "mtme"
LEVELS = ("seg", "sys")
HUMAN_ANNOTATOR = "0"
MISSING = "None"


@dataclass
class EvalSet:
    """The batches of one language pair of an evaluation set, and the files left unread."""

    lp: str
    n_segments: int
    batches: list[Batch]
    not_read: list[str] = field(default_factory=list)


def language_pairs(directory: Path) -> list[str]:
    """The language pairs of an evaluation set: the names of its ``sources/LP.txt|jsonl`` files."""
    if not directory.is_dir():
        raise InputError(str(directory), None, None, "not a directory (an mt-metrics-eval evaluation set, e.g. wmt23/)")
    sources = directory / "sources"
    if not sources.is_dir():
        raise InputError(str(directory), None, None, "not an mt-metrics-eval evaluation set: no sources/ directory")
    return sorted({p.stem for p in sources.iterdir() if p.suffix in (".txt", ".jsonl")})


def parse(directory: Path, lp: str | None = None, *, lower: Sequence[str] = ()) -> EvalSet:
    """The batches of language pair ``lp`` (optional when the set has only one)."""
    directory = Path(directory)
    lps = language_pairs(directory)
    if lp is None:
        if len(lps) != 1:
            raise InputError(str(directory), None, None,
                             f"the evaluation set has {len(lps)} language pairs ({', '.join(lps) or 'none'}): "
                             "choose one with --lp")
        lp = lps[0]
    elif lp not in lps:
        raise InputError(str(directory), None, None, f"no language pair {lp!r}; it has {', '.join(lps) or 'none'}")
    source_file = _one_of(directory / "sources", lp)
    sources = _texts(source_file, "source")
    n = len(sources)
    batches = [_batch(source_file, documents=pd.DataFrame(
        [(str(j), 0, t, line) for j, (line, t) in enumerate(sources) if t is not None], columns=DOCUMENT_COLUMNS))]
    not_read = []
    for path in sorted((directory / "references").glob(f"{lp}.*")):
        ref = path.name[len(lp) + 1:].rsplit(".", 1)[0]
        if path.suffix not in (".txt", ".jsonl") or "." in ref:
            not_read.append(str(path))
            continue
        texts = _lines_of(path, "target", n)
        batches.append(_batch(path, references=pd.DataFrame(
            [(str(j), ref, t, line) for j, (line, t) in enumerate(texts) if t is not None], columns=REFERENCE_COLUMNS)))
    outputs = directory / "system-outputs" / lp
    for path in sorted(outputs.iterdir()) if outputs.is_dir() else []:
        if path.suffix not in (".txt", ".jsonl"):
            not_read.append(str(path))
            continue
        system = identifier(path.stem, str(path), None, "system (file name)")
        texts = _lines_of(path, "hypothesis", n)
        summaries = pd.DataFrame([(system, str(j), t, line) for j, (line, t) in enumerate(texts) if t is not None],
                                 columns=SUMMARY_COLUMNS)
        batches.append(_batch(path, summaries=summaries, systems=[system]))
    for path in sorted((directory / "human-scores").glob(f"{lp}.*")):
        parts = path.name.split(".")
        if len(parts) < 4 or parts[-1] != "score" or parts[-2] not in LEVELS:
            not_read.append(str(path))
            continue
        name = ".".join(parts[1:-2])
        batches.append(_scores(path, name, parts[-2], n, human=True, lower=lower))
    metrics = directory / "metric-scores" / lp
    for path in sorted(metrics.iterdir()) if metrics.is_dir() else []:
        parts = path.name.rsplit(".", 2)
        if len(parts) != 3 or parts[2] != "score" or parts[1] not in LEVELS:
            not_read.append(str(path))
            continue
        batches.append(_scores(path, parts[0], parts[1], n, human=False, lower=lower))
    return EvalSet(lp, n, batches, not_read)


def _one_of(directory: Path, lp: str) -> Path:
    for suffix in (".txt", ".jsonl"):
        if (directory / f"{lp}{suffix}").is_file():
            return directory / f"{lp}{suffix}"
    raise InputError(str(directory), None, None, f"no {lp}.txt or {lp}.jsonl")


def _texts(path: Path, key: str) -> list[tuple[int, str | None]]:
    """(line, text) per segment: the lines of a .txt file (line ending removed), or the ``key``
    field of each line of a .jsonl file (null: no text)."""
    file = str(path)
    out = []
    for line, raw in text_lines(path):
        if path.suffix == ".jsonl":
            try:
                obj = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise InputError(file, line, None, f"malformed JSON: {exc.msg}") from None
            if not isinstance(obj, dict) or key not in obj:
                raise InputError(file, line, key, "missing")
            text = obj[key]
            if text is not None and not isinstance(text, str):
                raise InputError(file, line, key, "expected a string")
            out.append((line, text))
        else:
            out.append((line, raw.rstrip("\r\n")))
    return out


def _lines_of(path: Path, key: str, n: int) -> list[tuple[int, str | None]]:
    texts = _texts(path, key)
    if len(texts) != n:
        raise InputError(str(path), None, None, f"{len(texts)} segments; the source has {n}")
    return texts


def _scores(path: Path, name: str, level: str, n: int, *, human: bool, lower: Sequence[str]) -> Batch:
    file = str(path)
    measure = f"{name}.{level}"
    count: dict[str, int] = {}
    first: dict[str, int] = {}
    rows = []
    for line, raw in text_lines(path):
        if not raw.strip():
            continue
        tokens = raw.split()
        if len(tokens) != 2:
            raise InputError(file, line, None, f"expected 'SYSTEM SCORE', got {len(tokens)} fields")
        system = identifier(tokens[0], file, line, "system")
        position = count.get(system, 0)
        count[system] = position + 1
        first.setdefault(system, line)
        if tokens[1] == MISSING:
            continue
        value = number_text(tokens[1], file, line, "score")
        input_ = SYSTEM_LEVEL_INPUT if level == "sys" else str(position)
        rows.append((system, input_, measure, HUMAN_ANNOTATOR if human else None, value, line))
    expected = 1 if level == "sys" else n
    for system, c in count.items():
        if c != expected:
            what = "one line per system" if level == "sys" else f"{n} segments (the source's)"
            raise InputError(file, first[system], "system", f"system {system!r} has {c} scores; expected {what}")
    if not count:
        raise InputError(file, None, None, "no scores")
    if not rows:
        raise InputError(file, None, None, "every score is None")
    cells = cells_frame(rows, file, lambda m: "score")
    measures = measures_frame(cells, lower)
    return _batch(path, cells=cells, measures=measures, systems=list(count),
                  options={"level": level, "measure": measure, "human": human})


def _batch(path: Path, *, systems: Sequence[str] = (), options: dict | None = None, **frames) -> Batch:
    return Batch(file=str(path), format=FORMAT, sha256=sha256(path), options=options or {},
                 systems=pd.DataFrame({"name": list(systems), "type": None}), **frames)
