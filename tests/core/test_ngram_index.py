"""N-gram decontamination against reference corpora written as .txt / .jsonl(.gz) files."""

from __future__ import annotations

import gzip
import json

import pytest

from benchsmith.core.errors import SourceError
from benchsmith.core.ngram_index import (
    NgramIndex,
    find_contaminated,
    normalize_text,
    text_grams,
)

PASSAGE = (
    "The quick brown fox jumps over the lazy dog while the farmer watches from the porch "
    "and drinks a cup of strong black coffee before sunrise."
)


@pytest.fixture
def corpus(tmp_path):
    (tmp_path / "passage.txt").write_text(PASSAGE, encoding="utf-8")
    records = [
        {"text": "Which planet is known as the red planet?"},
        {"text": "A completely unrelated sentence about quantum chromodynamics and gluon fields."},
        {"text": "short one"},
    ]
    jsonl = tmp_path / "questions.jsonl"
    jsonl.write_text("\n".join(json.dumps(r) for r in records) + "\n\n", encoding="utf-8")
    with gzip.open(tmp_path / "more.jsonl.gz", "wt", encoding="utf-8") as handle:
        handle.write(json.dumps({"text": "你好世界今天天气很好我们去公园散步吧"}) + "\n")
    return [tmp_path / "passage.txt", jsonl, tmp_path / "more.jsonl.gz"]


def test_normalisation():
    assert normalize_text("  Hello,\tWORLD!!  it's\n3.5% ") == "hello world it s 3 5"
    assert normalize_text("ＡＢＣ　ｄｅｆ") == "abc def"  # NFKC: full-width letters and space
    assert normalize_text("你好，世界") == "你 好 世 界"


def test_grams_and_short_texts():
    assert text_grams("a b c d e", n=3) == ["a b c", "b c d", "c d e"]
    assert text_grams("one two three four", n=8, min_words=4) == ["one two three four"]
    assert text_grams("one two three", n=8, min_words=4) == []


def test_a_copied_question_is_fully_matched_even_with_other_case_and_punctuation(corpus):
    index = NgramIndex.from_files(corpus, n=8)
    copied = "the QUICK brown fox -- jumps over the lazy dog, while the farmer watches"
    result = index.overlap(copied)
    assert result.matched == result.total == 6 and result.fraction == 1.0
    assert result.example == "the quick brown fox jumps over the lazy"


def test_partial_and_unrelated_questions(corpus):
    index = NgramIndex.from_files(corpus, n=8)
    partial = index.overlap("over the lazy dog while the farmer watches, said nobody in the story")
    assert 0 < partial.matched < partial.total
    assert partial.fraction == pytest.approx(partial.matched / partial.total)
    unrelated = index.overlap("how many legs does a spider have in total when fully grown")
    assert unrelated.matched == 0 and unrelated.example is None


def test_short_questions_match_only_whole_short_documents(corpus):
    index = NgramIndex.from_files(corpus, n=8, min_words=4)
    same = index.overlap("Which planet is known as the red planet")
    assert (same.matched, same.total) == (1, 1)
    assert index.overlap("planet known as the red").matched == 0
    assert index.overlap("short one").total == 0  # fewer than min_words: never scored


def test_grams_do_not_cross_document_boundaries(tmp_path):
    one, two = tmp_path / "one.txt", tmp_path / "two.txt"
    one.write_text("alpha beta gamma delta", encoding="utf-8")
    two.write_text("epsilon zeta eta theta", encoding="utf-8")
    index = NgramIndex.from_files([one, two], n=8)
    assert index.overlap("alpha beta gamma delta epsilon zeta eta theta").matched == 0
    assert index.overlap("alpha beta gamma delta").matched == 1


def test_chinese_questions_match_by_characters(corpus):
    index = NgramIndex.from_files(corpus, n=8)
    result = index.overlap("今天天气很好，我们去公园")
    assert result.matched == result.total > 0


def test_text_field_is_configurable(tmp_path):
    path = tmp_path / "exam.jsonl"
    records = [{"question": "What is the boiling point of water at sea level?", "text": "x"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    index = NgramIndex.from_files([path], n=8, text_field="question")
    assert index.overlap("what is the boiling point of water at sea level").fraction == 1.0
    assert NgramIndex.from_files([path], n=8).overlap("what is the boiling point").total == 1
    assert NgramIndex.from_files([path], n=8).overlap("what is the boiling point").matched == 0


def test_find_contaminated_applies_both_thresholds(corpus):
    index = NgramIndex.from_files(corpus, n=8)
    questions = {
        "copied": " ".join(PASSAGE.split()[:14]),
        "partial": "over the lazy dog while the farmer watches, said nobody in the story",
        "clean": "how many legs does a spider have in total when fully grown",
    }
    assert list(find_contaminated(questions, index)) == ["copied", "partial"]
    assert list(find_contaminated(questions, index, min_fraction=0.9)) == ["copied"]
    assert find_contaminated(questions, index, min_matches=100) == {}


def test_memory_is_one_uint64_per_distinct_gram():
    index = NgramIndex.from_texts([PASSAGE, PASSAGE], n=8)
    words = len(normalize_text(PASSAGE).split())
    assert len(index) == words - 8 + 1
    assert index.hashes.dtype.name == "uint64" and index.hashes.nbytes == 8 * len(index)


def test_malformed_jsonl_line_names_file_and_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"text": "fine"}\n\n{"text": broken}\n', encoding="utf-8")
    with pytest.raises(SourceError, match="line 3 is not valid JSON") as err:
        NgramIndex.from_files([path])
    assert str(path) in str(err.value) and "fix:" in str(err.value)


def test_missing_or_non_string_field_names_the_line(tmp_path):
    path = tmp_path / "fields.jsonl"
    path.write_text('{"text": "fine"}\n{"body": "no text"}\n', encoding="utf-8")
    with pytest.raises(SourceError, match="line 2: no string field 'text'"):
        NgramIndex.from_files([path])
    path.write_text('{"text": 42}\n', encoding="utf-8")
    with pytest.raises(SourceError, match="line 1"):
        NgramIndex.from_files([path])


def test_unreadable_and_unsupported_files(tmp_path):
    latin = tmp_path / "latin1.txt"
    latin.write_bytes("café crème".encode("latin-1"))
    with pytest.raises(SourceError, match="cannot read") as err:
        NgramIndex.from_files([latin])
    assert str(latin) in str(err.value)
    csv = tmp_path / "corpus.csv"
    csv.write_text("text\nhello", encoding="utf-8")
    with pytest.raises(SourceError, match="unsupported"):
        NgramIndex.from_files([csv])
    with pytest.raises(SourceError, match="not found"):
        NgramIndex.from_files([tmp_path / "absent.txt"])
    broken_gz = tmp_path / "broken.jsonl.gz"
    broken_gz.write_bytes(b"\x1f\x8b\x08\x00garbage")
    with pytest.raises(SourceError, match="cannot read"):
        NgramIndex.from_files([broken_gz])
