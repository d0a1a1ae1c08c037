"""What every input format shares: reading lines, validating ids and numbers, naming
measures, classifying them as human or automatic, and catching duplicate cells."""

from __future__ import annotations

import fnmatch
import hashlib
import json
import math
import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from typing import TYPE_CHECKING

from metaeval.errors import InputError
from metaeval.batch import CELL_COLUMNS, MEASURE_COLUMNS
from metaeval.names import problem as name_problem
from metaeval.names import strip as strip_spaces

if TYPE_CHECKING:  # imported where used: the votes' ingest reads and stores without pandas
    import pandas as pd


def sha256(path: Path, text: dict | None = None, delimiter: bytes = b",") -> str:
    """The file's sha256. With ``text`` (a CSV or TSV file), also what the table ingest checks of
    its text, from the same blocks: whether it has a quote character (``quoted``) or a carriage
    return not followed by a newline (``bare_cr``), how many ``delimiter`` s (a comma, a tab)
    it holds (``commas``), how many newlines (``newlines``) and whether its last byte is one
    (``ends_newline``): with the records DuckDB reads, what tells each record's line."""
    digest = hashlib.sha256()
    quoted, commas, crs, crlfs, previous, newlines = False, 0, 0, 0, b"", 0
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
            if text is not None:
                quoted = quoted or b'"' in block
                commas += block.count(delimiter)  # 11 ms for 27 MB of votes, numpy's compare and count 26 ms
                newlines += block.count(b"\n")
                if b"\r" in block or previous == b"\r":  # (most files have no carriage return at all)
                    crs += block.count(b"\r")
                    crlfs += block.count(b"\r\n") + (previous == b"\r" and block[:1] == b"\n")
                previous = block[-1:]
    if text is not None:
        text.update(quoted=quoted, commas=commas, bare_cr=crs != crlfs, newlines=newlines,
                    ends_newline=previous == b"\n")
    return digest.hexdigest()


def text_lines(path: Path) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of each physical line, line ending kept, decoded as UTF-8
    (a byte order mark opening the file, as some editors and spreadsheets write, is dropped);
    a clear error naming the line for bytes that are not UTF-8."""
    with open(path, "rb") as f:
        for number, raw in enumerate(f, start=1):
            try:
                yield number, raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(str(path), number, None,
                                 f"not UTF-8 text (byte {raw[exc.start]:#04x} at byte {exc.start + 1} of the line); "
                                 "save the file as UTF-8") from None


def jsonl_objects(path: Path) -> Iterator[tuple[int, dict]]:
    """``(line number, object)`` for each non-blank line; a clear error for anything else."""
    seen = False
    for number, text in text_lines(path):
        if not text.strip():
            continue
        try:
            obj = json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_unique_keys,
                             parse_float=_json_float)
        except _Underflow as exc:
            raise InputError(str(path), number, _number_path(text, exc.text), _underflow(exc.text, 0.0)) from None
        except _DuplicateKey as exc:
            field, key = _duplicate_path(text) or (None, exc.key)
            raise InputError(str(path), number, field,
                             f"the key {key!r} is given more than once in a JSON object "
                             "(JSON readers would silently keep one of the values); keep one") from None
        except (json.JSONDecodeError, ValueError) as exc:
            raise InputError(str(path), number, None, f"malformed JSON: {exc}") from None
        if not isinstance(obj, dict):
            raise InputError(str(path), number, None, f"expected a JSON object, got {type(obj).__name__}")
        _check_unicode(obj, str(path), number)
        seen = True
        yield number, obj
    if not seen:
        raise InputError(str(path), None, None, "the file is empty")


def is_json_array(path: Path) -> bool:
    """Whether the file's first character other than white space is ``[`` (a JSON array of
    records, as AlpacaEval writes its annotations, rather than JSON lines)."""
    with open(path, "rb") as f:
        head = f.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    return head[:1] == b"["


def json_array_objects(path: Path) -> Iterator[tuple[int, dict]]:
    """``(line number, object)`` of each record of a JSON array (the line its ``{`` is on),
    checked as :func:`jsonl_objects` checks a line's; a clear error naming the line for anything
    else. The file is read whole (the array is one JSON value)."""
    file = str(path)
    text = "".join(t for _, t in text_lines(path))
    decoder = json.JSONDecoder(parse_constant=_reject_constant, object_pairs_hook=_unique_keys)
    pos = text.index("[") + 1
    line, counted = 1 + text.count("\n", 0, pos), pos
    seen, expect_value = False, True
    while True:
        while pos < len(text) and text[pos] in " \t\r\n":
            pos += 1
        line, counted = line + text.count("\n", counted, pos), pos
        if pos >= len(text):
            raise InputError(file, line, None, "malformed JSON: the array is not closed (no ']')")
        if text[pos] == "]":
            if seen and expect_value:
                raise InputError(file, line, None, "malformed JSON: a ',' before ']'")
            rest = text[pos + 1:].strip()
            if rest:
                raise InputError(file, line + text.count("\n", pos, pos + 1 + text[pos + 1:].index(rest[0])), None,
                                 "malformed JSON: text after the array's closing ']'")
            break
        if not expect_value:
            if text[pos] != ",":
                raise InputError(file, line, None, f"malformed JSON: expected ',' or ']' between records, "
                                 f"got {text[pos]!r}")
            pos, expect_value = pos + 1, True
            continue
        try:
            obj, end = decoder.raw_decode(text, pos)
        except _DuplicateKey as exc:
            raise InputError(file, line, None, f"the key {exc.key!r} is given more than once in a JSON object "
                             "(JSON readers would silently keep one of the values); keep one") from None
        except (json.JSONDecodeError, ValueError) as exc:
            raise InputError(file, line, None, f"malformed JSON: {exc}") from None
        if not isinstance(obj, dict):
            raise InputError(file, line, None, f"expected a JSON object, got {type(obj).__name__}")
        _check_unicode(obj, file, line)
        seen, expect_value = True, False
        yield line, obj
        pos = end
    if not seen:
        raise InputError(file, None, None, "the file is empty (an array without records)")


def _check_unicode(obj: dict, file: str, line: int) -> None:
    """A JSON string escape of half a surrogate pair (``"\\ud800"``) decodes to a string that is
    not Unicode text and cannot be stored: an error naming the first field that has one."""
    try:
        json.dumps(obj, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        field, text = _surrogate_path(obj, "")
        bad = next(c for c in text if "\ud800" <= c <= "\udfff")
        raise InputError(file, line, field or None,
                         f"the escape \\u{ord(bad):04x} is half of a UTF-16 surrogate pair, not a character "
                         f"(in {text!r}); write the character itself or its full pair") from None


def _surrogate_path(value, path: str) -> tuple[str, str] | None:
    """``(path, text)`` of the first key or string in ``value`` that has a lone surrogate."""
    def bad(text: str) -> bool:
        return any("\ud800" <= c <= "\udfff" for c in text)

    if isinstance(value, str):
        return (path, value) if bad(value) else None
    if isinstance(value, dict):
        for key, child in value.items():
            child_path = f"{path}.{key}" if path else key
            found = (child_path, key) if bad(key) else _surrogate_path(child, child_path)
            if found:
                return found
    elif isinstance(value, list):
        for i, child in enumerate(value):
            found = _surrogate_path(child, f"{path}[{i}]")
            if found:
                return found
    return None


def _reject_constant(name: str):
    raise ValueError(f"{name} is not a number the warehouse accepts")


class _Underflow(ValueError):
    def __init__(self, text: str):
        super().__init__(text)
        self.text = text


def _json_float(text: str) -> float:
    """A JSON number with a fraction or an exponent, refused (:class:`_Underflow`) where it
    underflows as :func:`number_text` refuses it."""
    value = float(text)
    if _underflows(text, value):
        raise _Underflow(text)
    return value


def _number_path(text: str, number: str) -> str | None:
    """The path (as :func:`_duplicate_path` writes it) of the first number written ``number`` in
    the JSON ``text`` (for the message only)."""
    marker = object()

    def find(value, path: str):
        if value is marker:
            return path
        children = (((f"{path}.{k}" if path else k, v) for k, v in value.items()) if isinstance(value, dict)
                    else ((f"{path}[{i}]", v) for i, v in enumerate(value)) if isinstance(value, list) else ())
        for child_path, child in children:
            found = find(child, child_path)
            if found is not None:
                return found
        return None

    try:
        return find(json.loads(text, parse_constant=lambda c: None,
                               parse_float=lambda t: marker if t == number else 0.0), "")
    except ValueError:
        return None


class _DuplicateKey(ValueError):
    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, object]]) -> dict:
    """A JSON object as a dict; a key given twice (which ``json`` would let the last win)
    is an error."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return obj


class _Repeated(dict):
    repeated: str


def _mark_repeated(pairs: list[tuple[str, object]]) -> dict:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        keys = [k for k, _ in pairs]
        obj = _Repeated(obj)
        obj.repeated = next(k for i, k in enumerate(keys) if k in keys[:i])
    return obj


def _duplicate_path(text: str) -> tuple[str, str] | None:
    """``(path, key)`` of the first repeated key of a line that has one, the path as
    ``metrics.rouge-2.f1`` or ``references[0].text`` (computed for the message only)."""
    def join(path: str, key: str) -> str:
        return f"{path}.{key}" if path else key

    def find(value, path: str):
        children = (((join(path, k), v) for k, v in value.items()) if isinstance(value, dict)
                    else ((f"{path}[{i}]", v) for i, v in enumerate(value)) if isinstance(value, list) else ())
        for child_path, child in children:  # inner objects first, as the parser meets them
            found = find(child, child_path)
            if found:
                return found
        if isinstance(value, _Repeated):
            return join(path, value.repeated), value.repeated
        return None

    try:
        return find(json.loads(text, parse_constant=lambda c: None, object_pairs_hook=_mark_repeated), "")
    except ValueError:
        return None


def identifier(value, file: str, line: int | None, field: str) -> str:
    """A system / input / annotator id: a non-empty string, stripped of surrounding whitespace,
    with no control character inside (:func:`check_name`; integers are accepted as text). A
    float is refused, even ``1.0``: as text it would be ``1.0``, not the ``1`` the same id is in
    a CSV file."""
    if isinstance(value, float):
        raise InputError(file, line, field, f"expected an id (string or integer), got the float {value!r}: "
                         "store ids as strings or integers (a float 1.0 is not the id 1)")
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        got = "missing" if value is None else f"{type(value).__name__} {value!r}"
        raise InputError(file, line, field, f"expected an id (string), got {got}")
    text = strip_spaces(str(value))
    if not text:
        raise InputError(file, line, field, "the id is empty")
    return check_name(text, file, line, field, "id")


def identifiers(file: str) -> Callable[[object, int | None, str], str]:
    """:func:`identifier` for the fields of ``file``, ``(value, line, field)``, each distinct text
    checked once (a million votes among 150 systems name each system thousands of times; checking
    every character of every name on every vote was 41 % of the ingest's time): the same ids, the
    same errors (a text refused is refused where it first occurs, as it is not remembered)."""
    known: dict[str, str] = {}

    def check(value, line: int | None, field: str) -> str:
        if type(value) is not str:
            return identifier(value, file, line, field)
        got = known.get(value)
        if got is None:
            got = known[value] = identifier(value, file, line, field)
        return got

    return check


def check_name(name: str, file: str, line: int | None, field: str, what: str = "name") -> str:
    """``name`` (an id, a measure name), refused as :func:`metaeval.names.problem` says (a control
    character or a line separator anywhere, another space than U+0020 at an end): they print as
    nothing, break the line of every listing, table and error message that shows it, or make two
    names look the same."""
    problem = name_problem(name, what)
    if problem:
        raise InputError(file, line, field, problem)
    return name


def number(value, file: str, line: int | None, field: str) -> float:
    """A finite real number of magnitude at most :data:`MAX_ABS_VALUE` from a typed source
    (JSON, Parquet): strings and booleans are not numbers, even when they spell one."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        if isinstance(value, str):
            got = f"the string {value!r} (write numbers without quotes)"
        else:
            got = ("null (a missing value; pandas writes a NaN as null in Parquet and JSON): leave it out"
                   if value is None else f"{type(value).__name__} {value!r}")
        raise InputError(file, line, field, f"expected a number, got {got}")
    try:
        return _finite(float(value), file, line, field)
    except OverflowError:  # an integer beyond the largest double
        raise InputError(file, line, field, f"the integer of {len(str(abs(value)))} digits is too large "
                         "to store as a number") from None


# A number as CSV tools write and read it: ASCII digits, an optional sign, point and
# exponent. Python's float() also takes digit separators (1_000), non-ASCII digits and
# 'infinity'/'nan', which other readers of the same file would not take as numbers alike.
_PLAIN_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_NON_FINITE = re.compile(r"[+-]?(?:inf|infinity|nan)", re.IGNORECASE)
_ASCII_SPACE = " \t\r\n\f\v"


def number_text(text, file: str, line: int | None, field: str) -> float:
    """A finite real number of magnitude at most :data:`MAX_ABS_VALUE` written as text (a CSV
    field): a plain decimal number, spaces around it allowed; ``1_000``, non-ASCII digits and
    the like are errors."""
    if text is None:
        raise InputError(file, line, field, "expected a number, got nothing")
    plain = text.strip(_ASCII_SPACE)
    if _NON_FINITE.fullmatch(plain):
        return _finite(float(plain), file, line, field)
    if not _PLAIN_NUMBER.fullmatch(plain):
        try:
            float(plain)  # Python would read it: say why it is refused
            hint = (" (digit separators '_' are not accepted)" if "_" in plain
                    else " (only plain decimal numbers such as 0.5, -2 or 1e-3, in ASCII digits, are accepted)")
        except ValueError:
            hint = ""
        raise InputError(file, line, field, f"expected a number, got {text!r}{hint}")
    value = float(plain)
    if _underflows(plain, value):
        raise InputError(file, line, field, _underflow(plain, value))
    return _finite(value, file, line, field)


def _underflows(text: str, value: float) -> bool:
    """Whether the number written ``text`` is not zero but reads as 0 or a subnormal ``value``."""
    return abs(value) < MIN_NORMAL and any(d in _NONZERO for d in text.lower().partition("e")[0])


def _underflow(text: str, value: float) -> str:
    return (f"the value {text} underflows to {value!r} as a double (below {MIN_NORMAL:.4g}, the smallest normal "
            "one): it would be stored as " + ("0" if value == 0 else "a subnormal, losing digits")
            + "; fix the value or its unit")


#: The smallest positive normal double: a non-zero value written smaller underflows (to 0, or to a
#: subnormal that keeps fewer digits), which the reader refuses rather than store a 0 silently.
MIN_NORMAL = 2.2250738585072014e-308
_NONZERO = frozenset("123456789")


#: The largest magnitude of a value the warehouse stores. Far beyond any score or judgment, and
#: small enough that every sum, mean and sum of squares over up to 1e8 values stays finite
#: (1e8 * (1e150)**2 = 1e308): values near the largest double (1.2e308) were stored, and the
#: ``system_means`` view's average of two of them was inf.
MAX_ABS_VALUE = 1e150


def _finite(value: float, file: str, line: int | None, field: str) -> float:
    if math.isnan(value):
        raise InputError(file, line, field, "the value NaN is not finite (not a number; a missing value is "
                         "left out: no row for it in a long table, an empty cell in a wide one)")
    if not math.isfinite(value):
        raise InputError(file, line, field, f"the value {value} is not finite")
    if abs(value) > MAX_ABS_VALUE:
        raise InputError(file, line, field, f"the value {value!r} is beyond the largest magnitude stored, "
                         f"{MAX_ABS_VALUE:g} (sums and means of such values overflow); no score is this large: "
                         "fix the value or its unit")
    return value


def replicate_number(value, file: str, line: int | None, field: str = "replicate") -> int | None:
    """A run number as given (None: not given): a non-negative integer, else an InputError naming
    the file, line and field."""
    if value is None or (isinstance(value, str) and not value.strip()) or value != value:
        return None
    if isinstance(value, bool) or not (isinstance(value, (int, str)) or (isinstance(value, float) and value.is_integer())):
        raise InputError(file, line, field, f"the run number must be a non-negative integer; got {value!r}")
    text = str(int(value)) if isinstance(value, float) else str(value).strip()
    if not text.isdigit() or not text.isascii() or int(text) > 2**31 - 1:
        raise InputError(file, line, field, f"the run number must be a non-negative integer; got {value!r}")
    return int(text)


def matches(name: str, globs: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, g) for g in globs)


def measures_frame(cells: pd.DataFrame, lower: Sequence[str]) -> pd.DataFrame:
    """One row per measure in ``cells``: its kind (human if it has annotators) and direction."""
    import pandas as pd

    if cells.empty:
        return pd.DataFrame(columns=MEASURE_COLUMNS)
    kinds = cells.groupby("measure", sort=True)["annotator"].agg(lambda a: "human" if a.notna().any() else "automatic")
    names = kinds.index.astype(str)
    return pd.DataFrame({
        "name": names,
        "kind": kinds.to_numpy(),
        "direction": ["lower" if matches(n, lower) else "higher" for n in names],
    })


def cells_frame(rows: list[tuple], file: str, field: Callable[[str], str] = lambda measure: "value",
                runs: bool = False) -> pd.DataFrame:
    """Rows ``(system, input, measure, annotator, value, line)`` as a frame, with no
    cell given twice (the error names both lines, and the field ``field(measure)``). ``runs``:
    the rows end with a run number (``replicate``, part of the key: a run of a cell once)."""
    import pandas as pd

    cells = pd.DataFrame(rows, columns=RUN_COLUMNS if runs else CELL_COLUMNS)
    if cells.empty:
        raise InputError(file, None, None, "no values found")
    key = ["system", "input", "measure", "annotator", *(["replicate"] if runs else [])]
    dup = cells.duplicated(key, keep=False)
    if dup.any():
        first = cells[dup].sort_values("line").iloc[0]
        same = cells[dup & (cells["system"] == first.system) & (cells["input"] == first.input)
                     & (cells["measure"] == first.measure)]
        if runs:
            same = same[same["replicate"] == first.replicate]
        lines = ", ".join(str(n) for n in same["line"])
        who = f" annotator={first.annotator}" if pd.notna(first.annotator) else ""
        who += f" replicate={first.replicate}" if runs and pd.notna(first.replicate) and first.replicate else ""
        raise InputError(file, int(first.line), field(first.measure),
                         f"cell system={first.system} input={first.input} measure={first.measure}{who} "
                         f"is given more than once (lines {lines})")
    return cells


#: Rows of a file staged at a time by :func:`stage_rows` (memory bounded whatever the file's size).
CHUNK = 200_000
STAGED_COLUMNS = [*CELL_COLUMNS, "seq"]
#: The cell rows of a file with a run column: a score's run number (``replicate``) after its line.
RUN_COLUMNS = [*CELL_COLUMNS, "replicate"]


def stage_rows(con, name: str, rows: Iterator[tuple], chunk: int | None = None, runs: bool = False) -> int:
    """Cell rows ``(system, input, measure, annotator, value, line)`` into a new temporary
    table ``name`` of ``con`` (with ``seq``, their order), :data:`CHUNK` at a time; how many.
    ``runs``: the rows end with a run number (:data:`RUN_COLUMNS`), staged as ``replicate``."""
    import pandas as pd

    run = ", replicate INTEGER" if runs else ""
    con.execute(f"CREATE OR REPLACE TEMP TABLE {name} (system VARCHAR, input VARCHAR, measure VARCHAR, "
                f"annotator VARCHAR, value DOUBLE, line BIGINT{run}, seq BIGINT)")
    columns = [*RUN_COLUMNS, "seq"] if runs else STAGED_COLUMNS
    count, block, chunk = 0, [], chunk or CHUNK

    def flush() -> None:
        con.register("_chunk", pd.DataFrame([(*r, count - len(block) + i) for i, r in enumerate(block)],
                                            columns=columns))
        con.execute(f"INSERT INTO {name} SELECT * FROM _chunk")
        con.unregister("_chunk")
        block.clear()

    for row in rows:
        block.append(row)
        count += 1
        if len(block) >= chunk:
            flush()
    if block:
        flush()
    return count


def check_staged_cells(con, name: str, file: str, field: Callable[[str], str] = lambda measure: "value",
                       runs: bool = False) -> None:
    """:func:`cells_frame`'s checks, with its errors, on rows staged by :func:`stage_rows`:
    no rows, a cell given twice (``runs``: a run of a cell given twice)."""
    if not con.execute(f"SELECT EXISTS (SELECT 1 FROM {name})").fetchall()[0][0]:
        raise InputError(file, None, None, "no values found")
    run = "replicate" if runs else "CAST(NULL AS INTEGER)"
    key = f"system, input, measure, annotator, {run}"
    first = con.execute(f"SELECT system, input, measure, annotator, {run} FROM {name} GROUP BY {key} "
                        "HAVING count(*) > 1 ORDER BY min((line, seq)) LIMIT 1").fetchall()
    if not first:
        return
    system, input_, measure, annotator, replicate = first[0]
    same = {"s": system, "i": input_, "m": measure}
    rows = con.execute(
        f"""WITH cell AS (SELECT annotator, {run} AS run, line, seq FROM {name}
                          WHERE system = $s AND input = $i AND measure = $m),
                 twice AS (SELECT annotator, run FROM cell GROUP BY annotator, run HAVING count(*) > 1)
            SELECT line FROM cell WHERE EXISTS (SELECT 1 FROM twice WHERE twice.annotator IS NOT DISTINCT FROM
                                                cell.annotator AND twice.run IS NOT DISTINCT FROM cell.run)
            ORDER BY seq""", same).fetchall()
    lines = [r[0] for r in rows]
    who = f" annotator={annotator}" if annotator is not None else ""
    who += f" replicate={replicate}" if replicate else ""
    raise InputError(file, int(min(lines)), field(measure),
                     f"cell system={system} input={input_} measure={measure}{who} "
                     f"is given more than once (lines {', '.join(str(n) for n in lines)})")


def check_globs_used(globs: Sequence[str], measures: Sequence[str], option: str, files: Sequence[str]) -> None:
    """A ``--human``/``--lower`` pattern that matches no measure is almost surely a typo."""
    for g in globs:
        if not any(fnmatch.fnmatchcase(m, g) for m in measures):
            raise InputError(", ".join(files), None, None,
                             f"{option} {g!r} matches no measure (measures: {', '.join(sorted(set(measures))[:30])})")
