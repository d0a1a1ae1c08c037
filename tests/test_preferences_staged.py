"""`ingest preferences` through DuckDB's reader (ingest/preferences_staged.py): the rows it stages
are the Python reader's (:func:`preferences.parse`) row for row, lines included; what it cannot
vouch for is read by the Python reader; a refusal names the file, line and field, however deep in
the file, and writes nothing."""

from __future__ import annotations

import duckdb
import pytest

from metaeval.core import Store
from metaeval.errors import InputError
from metaeval.ingest import preferences, preferences_staged
from metaeval.ingest.table_staged import Unsure
from metaeval.runs import Warehouse

NATIVE = "input,system_a,system_b,judge,order,winner,kind\n"
ARENA = "model_a,model_b,winner\n"


def _write(path, text: str, encoding: str = "utf-8"):
    path.write_bytes(text.encode(encoding))
    return path


def _staged(path, judge=None) -> list[tuple]:
    con = duckdb.connect()
    preferences_staged.stage(con, path, judge, preferences._check_native_columns)
    return con.execute(f"SELECT {', '.join(preferences.COLUMNS)} FROM _staged_preferences ORDER BY line").fetchall()


def _parsed(path, judge=None) -> list[tuple]:
    frame = preferences.parse(path, judge)
    return [tuple(None if v != v else v for v in row) for row in frame[preferences.COLUMNS].itertuples(index=False)]


def _votes(n: int, systems: int = 7) -> list[str]:
    winners = ["model_a", "model_b", "tie", "tie (bothbad)"]
    return [f"m{i % systems},m{(i * 3 + 1) % systems if (i * 3 + 1) % systems != i % systems else (i + 1) % systems},"
            f"{winners[i * 7 % 4]}" for i in range(n)]


CASES = {
    "arena.csv": ARENA + "\n".join(_votes(300)) + "\n",
    "arena_no_final_newline.csv": ARENA + "\n".join(_votes(40)),
    "arena_bom_crlf.csv": "\ufeff" + ARENA.replace("\n", "\r\n") + "\r\n".join(_votes(50)) + "\r\n",
    "arena_words.csv": ARENA + "b,a, Model_A\na,c,TIE\nc,b,tie (bothbad)\nb,c,model_b \n",
    "arena_questions.csv": "question_id,model_a,model_b,winner,judge,turn\n"
                           "q1,b,a,model_a,u1,1\n,a,b,tie,,2\nq1,a,b,model_b,u2,1\n7,c,a,model_a,u1,3\n",
    "native.csv": NATIVE + "d1,S2,S1,gpt,ab,a,\nd1,S1,S2,gpt,ab,tie, \nd1,S1,S2,ann,BA,b,Human\nd2,É,S1,gpt,ba,B,automatic\n",
    "native.tsv": NATIVE.replace(",", "\t") + "d1\tS2\tS1\tgpt\tab\ta\t\nd2\tS1\tS2\tann\tba\ttie\thuman\n",
    "native_no_kind.csv": "judge,winner,order,system_b,system_a,input\ng,a,ab,S1,S2,d1\ng,b,ba,S1,S2,d2\n",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_duckdb_stages_the_python_readers_rows(tmp_path, name):
    path = _write(tmp_path / name, CASES[name])
    assert _staged(path) == _parsed(path)
    if name.startswith("arena"):
        assert _staged(path, "gpt") == _parsed(path, "gpt")


UNUSUAL = {  # read right, by the Python reader: DuckDB's cannot vouch for the lines or the values
    "blank_lines.csv": ARENA + "a,b,model_a\n\nb,c,tie\n\n",
    "quoted.csv": ARENA + '"a",b,model_a\nb,"c, d",tie\n',
    "spaces.csv": ARENA + " a ,b,model_a\nb,c,tie\n",
    "twice.csv": "question_id," + ARENA + "q,a,b,model_a\nq,a,b,model_a\n",
    "empty.csv": ARENA,
    "case.csv": "Winner," + ARENA + "x,a,b,tie\n",
    "unnamed.csv": "," + ARENA + "x,a,b,tie\n",
    "alpaca.csv": "generator_1,generator_2,preference,instruction\na,b,1.5,hi\n",
}


@pytest.mark.parametrize("name", sorted(UNUSUAL))
def test_what_duckdb_cannot_vouch_for_is_left_to_the_python_reader(db, tmp_path, name):
    path = _write(tmp_path / name, UNUSUAL[name])
    with pytest.raises(Unsure):
        _staged(path, "gpt")
    with Warehouse(db) as wh:
        try:
            expected = _parsed(path, "gpt")
        except InputError as exc:
            with pytest.raises(InputError) as refused:
                preferences.ingest(wh, "x", path, judge="gpt")
            assert str(refused.value) == str(exc)
            return
        preferences.ingest(wh, "x", path, judge="gpt")
        stored = wh.sql("SELECT i.name AS input FROM preferences p JOIN inputs i USING (input_id) ORDER BY input")
        assert sorted(stored["input"]) == sorted(r[1] for r in expected)
    if name == "blank_lines.csv":
        assert [r[1] for r in expected] == ["vote-2", "vote-4"]      # the physical lines, blank ones counted


def _refused(db, path, **options) -> str:
    with Warehouse(db) as wh:
        with pytest.raises(InputError) as refused:
            preferences.ingest(wh, "x", path, **options)
        counts = wh.sql("SELECT (SELECT count(*) FROM preferences) + (SELECT count(*) FROM systems) "
                        "+ (SELECT count(*) FROM inputs) + (SELECT count(*) FROM datasets) AS n")["n"].iloc[0]
    assert counts == 0, "nothing is written on refusal"
    return str(refused.value)


@pytest.mark.parametrize("bad, field, why", [
    ("m1,m2,model_c", "winner", "expected one of model_a, model_b, tie, tie (bothbad), got 'model_c'"),
    ("m1,m\x072,tie", "model_b", "control character U+0007"),
    ("m3,m3,tie", "model_b", "model_a and model_b are both 'm3'"),
    ("m1,,tie", "model_b", "the id is empty"),
    ("m1,m2,\xff", None, "not UTF-8"),
])
def test_a_bad_vote_deep_in_a_large_file_is_named_by_its_line(db, tmp_path, bad, field, why):
    votes = _votes(60_000)
    votes[45_677] = bad                                   # line 45 679: the header is line 1
    text = ARENA + "\n".join(votes) + "\n"
    path = tmp_path / "votes.csv"
    if bad.endswith("\xff"):
        path.write_bytes(text.replace("\xff", "").encode().replace(b"m1,m2,\n", b"m1,m2,\xff\n", 1))
        assert path.read_bytes().count(b"\xff") == 1
    else:
        _write(path, text)
    message = _refused(db, path)
    assert message.startswith(f"{path}:45679: " + (f"field {field!r}: " if field else "")), message
    assert why in message


def test_a_bad_row_of_a_native_file_is_named_by_its_line(db, tmp_path):
    rows = [f"d{i},S1,S2,gpt,ab,a," for i in range(5000)]
    rows[3210] = "d3210,S1,S2,gpt,sideways,a,"
    path = _write(tmp_path / "p.csv", NATIVE + "\n".join(rows) + "\n")
    assert _refused(db, path).startswith(f"{path}:3212: field 'order': expected one of ab, ba, got 'sideways'")
    rows[3210] = "d1,S2,S1,gpt,ba,b,"                       # the same judgment as line 3 (d1, S1 vs S2, ab)
    path = _write(tmp_path / "q.csv", NATIVE + "\n".join(rows) + "\n")
    assert _refused(db, path).startswith(f"{path}:3212: field 'winner': judge 'gpt' already judged input 'd1'")


def _stored(db) -> dict:
    with Warehouse(db) as wh:
        return {t: wh.con.execute(f"SELECT {cols} FROM {t} ORDER BY ALL").fetchall() for t, cols in [
            ("datasets", "dataset_id, name"), ("systems", "*"), ("inputs", "*"), ("preferences", "*"),
            ("ingests", "* EXCLUDE (ingested_at, command)")]}


def test_votes_each_their_own_input_are_stored_as_the_merge_stores_them(tmp_path, monkeypatch):
    """An arena vote table without question_id into a dataset without inputs (_insert_votes: ids
    taken from the inputs' sequence at once) stores the rows, ids included, that the general path
    (preferences_insert_inputs + _merge) stores, after other datasets and before later ingests."""
    arena = _write(tmp_path / "arena.csv", CASES["arena_bom_crlf.csv"])
    native = _write(tmp_path / "native.csv", CASES["native.csv"])

    def ingests(db):
        Store.create(db).close()
        with Warehouse(db) as wh:
            preferences.ingest(wh, "first", native)
            preferences.ingest(wh, "votes", arena)
            preferences.ingest(wh, "votes", arena)                      # again: changes nothing
            preferences.ingest(wh, "judged", arena, judge="gpt", replicate=2)
            preferences.ingest(wh, "first", arena, allow_new=True)      # inputs stored: merged
            preferences.ingest(wh, "last", native)
        return _stored(db)

    real, used = preferences._insert_votes, []
    monkeypatch.setattr(preferences, "_insert_votes", lambda *args: used.append(args[1]) or real(*args))
    fast = ingests(tmp_path / "fast.duckdb")
    assert len(used) == 2                                          # "votes" the first time, "judged"
    assert len(fast["inputs"]) == 3 * 50 + 2 * 2 and len(fast["preferences"]) == 3 * 50 + 2 * 4
    assert len(fast["ingests"]) == 5
    Store.create(tmp_path / "refused.duckdb").close()
    with Warehouse(tmp_path / "refused.duckdb") as wh:       # an error after the votes' inserts: nothing written
        with pytest.raises(ZeroDivisionError):
            preferences.ingest(wh, "votes", arena, before_commit=lambda: 1 / 0)
        assert wh.con.execute("SELECT (SELECT count(*) FROM systems) + (SELECT count(*) FROM inputs) "
                              "+ (SELECT count(*) FROM preferences)").fetchall() == [(0,)]
    calls = []
    monkeypatch.setattr(preferences, "_insert_votes", lambda *args: calls.append(args))
    staged = preferences_staged.stage
    monkeypatch.setattr(preferences_staged, "stage", lambda *args: (*staged(*args)[:3], False))
    assert ingests(tmp_path / "merged.duckdb") == fast and not calls
