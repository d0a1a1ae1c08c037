"""MQM weighting, scores from error rows, span markers and character-level span agreement
(issue 36, pure part), against an independent restatement of the released weighting."""

from __future__ import annotations

import pytest

from metaeval.analyses import mqm
from metaeval.ingest import mqm as mqm_file


def released_weight(severity, category):
    """The released default written out by hand: the most specific of the five specs."""
    s, c = severity.lower(), category.lower()
    if s == "major" and (c == "non-translation!" or c.startswith("non-translation!/")):
        return 25.0
    if s == "minor" and (c == "fluency/punctuation" or c.startswith("fluency/punctuation/")):
        return 0.1
    return {"major": 5.0, "minor": 1.0, "neutral": 0.0}.get(s, 0.0)


ROWS = [  # segment, rater, severity, category
    ("s1", "r1", "Major", "Accuracy/Mistranslation"),
    ("s1", "r1", "Minor", "Fluency/Punctuation"),
    ("s1", "r1", "Major", "Non-translation!"),
    ("s1", "r2", "Minor", "Fluency/Grammar"),
    ("s2", "r1", "No-error", "No-error"),
    ("s2", "r2", "Neutral", "Other"),
    ("s3", "r2", "minor", "fluency/punctuation"),
]


def test_released_weighting_and_scores():
    weights = mqm.parse_weights(mqm.DEFAULT_WEIGHTS)
    for _, _, sev, cat in ROWS:
        assert mqm.error_weight(weights, sev, cat) == released_weight(sev, cat)
    out = mqm.rater_scores(*zip(*ROWS), weights=weights)
    scores = {(s, r): v for s, r, v in zip(out.segment, out.rater, out.score)}
    assert scores == {("s1", "r1"): -30.1, ("s1", "r2"): -1.0, ("s2", "r1"): 0.0, ("s2", "r2"): 0.0,
                      ("s3", "r2"): -0.1}
    assert out.segment_means() == {"s1": pytest.approx(-15.55), "s2": 0.0, "s3": -0.1}
    assert mqm.weighting_name(mqm.DEFAULT_WEIGHTS) == "mqm"
    assert mqm.weighting_name("major:10 minor:1") == "mqm[major:10,minor:1]"


def test_weight_specs_refused():
    for bad in ("", "major", "major:x", "major:1 major:2", "major/:1",
                "major:-1", "minor/fluency:-0.5", "major:1 minor:2", "neutral:1 minor:0.5", "critical:4 major:5"):
        with pytest.raises(ValueError):
            mqm.parse_weights(bad)


def test_markers():
    assert mqm_file.strip_markers("a <v>bad</v> word <v>x</v>") == ("a bad word x", [(2, 5), (11, 12)])
    assert mqm_file.strip_markers("no error") == ("no error", [])
    for bad in ("a <v>b", "a </v>b", "<v>a <v>b</v></v>"):
        with pytest.raises(ValueError):
            mqm_file.strip_markers(bad)
