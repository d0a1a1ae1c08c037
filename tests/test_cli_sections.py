"""`metaeval --help` in sections (issue 44 item 6): every command in the section of what it
answers (a family's declared topic, a command's own), start here first (demo, evaluate, report in
that order), each command's summary whole and on one line of a 100-column terminal."""

from __future__ import annotations

import re

import click
import pytest
from click.testing import CliRunner

from metaeval.cli import app, sections
from metaeval.runs.engine.families import FAMILIES, TOPICS, Family, register


def _listing(width: int) -> str:
    result = CliRunner().invoke(app.main, ["--help"], terminal_width=width)
    assert result.exit_code == 0, result.output
    return result.output


def _sections(text: str) -> dict[str, list[str]]:
    """Section title -> the names of the commands listed under it, in order."""
    found, title = {}, None
    for line in text.splitlines():
        if line and not line.startswith(" ") and line.endswith(":") and title != "Usage":
            title = line[:-1]
            found[title] = []
        elif title and (m := re.match(r"^  (\S+)  ", line)) and title != "Options":
            found[title].append(m.group(1))
    return found


def test_every_command_is_listed_once_in_a_declared_section():
    listed = _sections(_listing(100))
    names = [n for title, found in listed.items() if title != "Options" for n in found]
    assert sorted(names) == sorted(n for n, c in app.main.commands.loaded.items() if not c.hidden) or \
        sorted(names) == sorted(app.main.commands.names())
    assert len(names) == len(set(names))
    assert sections.OTHER[1] not in listed
    titles = [t for t in listed if t != "Options"]
    assert titles == [t for t in TOPICS.values() if t in titles]        # the declared order
    assert listed[TOPICS["start"]] == list(sections.START)


def test_a_family_command_is_in_its_familys_section():
    listed = _sections(_listing(100))
    where = {name: title for title, names in listed.items() for name in names}
    for name, family in FAMILIES.items():
        if name in where:
            assert where[name] == TOPICS[family.topic], name


def test_every_summary_is_whole_and_one_line_at_100_columns():
    text = _listing(100)
    index = app.main.commands.index()
    for name, entry in index.items():
        assert len(entry["summary"]) <= sections.SUMMARY_WIDTH, (name, entry["summary"])
        assert not entry["summary"].endswith("..."), name
        assert re.search(rf"^  {re.escape(name)} +{re.escape(entry['summary'])}$", text, re.M), name
    narrow = _listing(60)
    for entry in index.values():           # wrapped on a narrow terminal, never cut
        assert " ".join(entry["summary"].split()) in " ".join(narrow.split())


def test_a_family_with_an_undeclared_topic_is_refused():
    class Nowhere(Family):
        name = "nowhere-family"
        topic = "elsewhere"

    with pytest.raises(ValueError, match="topic 'elsewhere' is not one of"):
        register(Nowhere)
    assert "nowhere-family" not in FAMILIES


def test_a_command_declares_its_own_topic():
    command = sections.topic("storage")(click.Command("x", help="Do x. Then y."))
    assert sections.section_of(command, None, TOPICS) == [list(TOPICS).index("storage"), "Storage"]
    assert sections.summary(command) == "Do x."
    assert sections.section_of(click.Command("y"), None, TOPICS)[1] == sections.OTHER[1]


@pytest.mark.parametrize("group", ["ingest", "plot", "drop", "rename", "simulate", "index"])
def test_a_groups_commands_are_listed_whole_on_one_line(group):
    result = CliRunner().invoke(app.main, [group, "--help"], terminal_width=100)
    assert result.exit_code == 0, result.output
    listing = result.output.split("Commands:\n", 1)[1]
    command = app.main.commands[group]
    for name, sub in command.commands.items():
        text = sections.summary(sub)
        assert len(text) <= sections.SUMMARY_WIDTH and not text.endswith("..."), (group, name, text)
        assert re.search(rf"^  {re.escape(name)} +{re.escape(text)}$", listing, re.M), (group, name)
