"""Variant names: canonical formatting/parsing and the Graham (2015) grid."""

import pytest

from metaeval.analyses.text import GRAHAM_KINDS, KINDS, Variant, direction, graham_grid, js_name, variant_grid


def test_examples_from_the_issue():
    assert Variant("rouge-2", "recall", stem=True, stop=True).name == "rouge-2.recall[stem,stop]"
    assert Variant("rouge-l", "f1").name == "rouge-l.f1"
    assert Variant("rouge-su4", "precision", stem=True).name == "rouge-su4.precision[stem]"
    assert Variant("rouge-1", "f1", aggregation="max").name == "rouge-1.f1[maxref]"


def test_resplit_flag_only_for_rouge_lsum():
    v = Variant("rouge-lsum", "recall", stem=True, resplit=True, aggregation="max")
    assert v.name == "rouge-lsum.recall[stem,resplit,maxref]"
    assert Variant.parse(v.name) == v
    assert Variant.parse("rouge-lsum.recall[stem,resplit]") == Variant("rouge-lsum", "recall", stem=True, resplit=True)
    for name in ("rouge-l.recall[resplit]", "rouge-1.f1[stem,resplit]", "rouge-lsum.recall[resplit,stem]",
                 "rouge-lsum.recall[maxref,resplit]"):
        with pytest.raises(ValueError):
            Variant.parse(name)
    with pytest.raises(TypeError):
        Variant("rouge-lsum", "f1", resplit=1)


def test_round_trip_over_every_variant():
    every = variant_grid(kinds=KINDS) + variant_grid(kinds=KINDS, aggregation="max")
    names = [v.name for v in every]
    assert len(set(names)) == len(every) == len(KINDS) * 2 * 2 * 3 * 2
    assert [Variant.parse(n) for n in names] == every


def test_graham_grid_has_96_summary_level_variants():
    grid = graham_grid()
    assert len(grid) == 96 == 8 * 2 * 2 * 3  # x {mean, median} downstream = Graham's 192
    assert {v.kind for v in grid} == set(GRAHAM_KINDS)
    assert all(v.aggregation == "pooled" for v in grid)


@pytest.mark.parametrize(
    "bad",
    [
        "rouge-5.recall",
        "rouge-1.accuracy",
        "rouge-1.recall[]",
        "rouge-1.recall[stop,stem]",  # non-canonical order
        "rouge-1.recall[stem,stem]",
        "rouge-1.recall[lemma]",
        "rouge-1",
        "ROUGE-1.recall",
    ],
)
def test_parse_rejects_non_canonical_names(bad):
    with pytest.raises(ValueError):
        Variant.parse(bad)


def test_constructor_validates():
    with pytest.raises(ValueError):
        Variant("rouge-9", "f1")
    with pytest.raises(ValueError):
        Variant("rouge-1", "f1", aggregation="mean")
    with pytest.raises(TypeError):
        Variant("rouge-1", "f1", stem=1)


def test_directions():
    assert direction("rouge-2.recall[stem,stop]") == "higher"
    assert direction(js_name(2)) == "lower"
    assert direction(js_name(1, "document", stem=True, stop=True, smoothing=True)) == "lower"
    assert js_name(1, "document", stem=True, stop=True, smoothing=True) == "js-1.input[stem,stop,smooth]"
    assert direction("bleu") == direction("chrf") == "higher"
    with pytest.raises(ValueError):
        direction("rouge-1.recal")
    with pytest.raises(ValueError):
        direction("js-x")
