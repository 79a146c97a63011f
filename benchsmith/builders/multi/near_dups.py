"""Near-duplicate questions across the whole pool, sub-quadratic, with the removed pairs logged.

The paper removed "more than 800 near duplicates" without saying how. Ours:

1. **text**: each question's text (stem and options; not the answer), and its stem alone, are
   normalised (NFKC, case folded, punctuation dropped, CJK characters split;
   :func:`~benchsmith.core.ngram_index.normalize_text`, LaTeX ``$`` and image tags removed)
   and cut into character ``ngram``-grams;
2. **candidates**: by default every pair at ``min_jaccard`` or above, exactly
   (:mod:`.exact_pairs`: prefix filtering, then a compiled intersection count); with
   ``candidates: lsh`` the MinHash route (3);
3. **MinHash LSH**: ``num_perm`` min-hashes of the gram set (a splitmix64 hash family over the
   grams' 64-bit hashes, vectorised over the whole pool): two texts agree on one min-hash with
   probability equal to their Jaccard similarity; the signature is cut into ``bands`` bands;
   two questions are candidates when they agree on a whole band of either signature (full text
   or stem; one sort per band),
   so the work grows with the pool and the pairs, not the pool squared. With 32 bands of 4 a
   pair at Jaccard 0.6 is found with probability 0.99, at 0.5 with 0.87
   (``1 - (1 - J^4)^32``);
4. **confirmation**: their images must match (both without images, or the same number each
   within ``image_bits`` bits of perceptual hash: the same text over another figure is another
   question), and then either the full texts' gram Jaccard is at least ``min_jaccard``
   (rule ``text``), or the **stems** are (options aside: one source lists four options, another
   thirteen, an OCR'd page reads them differently), both stems hold at least
   ``min_stem_chars`` characters (a bare "Which of these is right?" is no evidence) and the
   answers say the same thing (the answer options' texts, not their letters; rule ``stem``).
   Questions of one problem never count (they share a stem).

A 64-bit SimHash searched like the image hashes was tried first: on 40-character questions it
found only 27% of the pairs at Jaccard >= 0.6 within 6 bits (50% within 8), so exam texts,
which are short, get MinHash.

Duplicates form groups (union-find); each group keeps one question: a release question before
a crawled HTML page, an HTML page before an OCR'd scan; among scans the cleanest page
(:mod:`.scan_quality`: a blurred, noisy or skewed copy of a page loses to the clean scan); then
the one with more content (answer and analysis lengths), then the smallest id. Every removed
question gets a decision naming the kept one, why it was kept, the matched one, the rule and
both Jaccards.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from benchsmith.builders.multi.config import NearDuplicates
from benchsmith.builders.multi.exact_pairs import exact_similar_pairs
from benchsmith.builders.multi.questions import parse_options
from benchsmith.core.ngram_index import gram_hashes, normalize_text
from benchsmith.core.records import decision_record

STAGE = "near_duplicates"
_MARKUP = re.compile(r"\[IMAGE_\d+\]|\[MASK\]|\$")
_CHUNK = 1 << 13  # grams hashed at a time (x num_perm uint64 each: 8 MiB, cache-sized)
_SEED = 20240211


def normalized_chars(text: str) -> str:
    """The normalised text without spaces (CJK has no word gaps): what grams are cut from."""
    return normalize_text(_MARKUP.sub(" ", text)).replace(" ", "")


def question_grams(text: str, n: int) -> list[str]:
    """Character n-grams of the normalised text."""
    chars = normalized_chars(text)
    if len(chars) <= n:
        return [chars] if chars else []
    return [chars[i : i + n] for i in range(len(chars) - n + 1)]


_CODE_BITS = 21  # every Unicode code point fits in 21 bits
_SHORT = np.uint64(1 << 63)  # marks a whole text shorter than n (one gram), never a packed n-gram


def packed_grams(chars: str, n: int) -> np.ndarray:
    """The character ``n``-grams of ``chars`` (n <= 3) as exact 63-bit keys: the code points
    side by side, so two grams share a key only when they are the same gram (no hash, no
    collision), computed for the whole text at once; a text shorter than ``n`` is one gram."""
    points = np.frombuffer(chars.encode("utf-32-le"), dtype="<u4").astype(np.uint64)
    if points.size <= n:
        if not points.size:
            return np.zeros(0, dtype=np.uint64)
        key = np.uint64(0)
        for point in points:
            key = (key << np.uint64(_CODE_BITS)) | point
        return np.array([key | _SHORT], dtype=np.uint64)
    keys = points[: points.size - n + 1].copy()
    for offset in range(1, n):
        keys = (keys << np.uint64(_CODE_BITS)) | points[offset : points.size - n + 1 + offset]
    return keys


def gram_sets(texts: Sequence[str], n: int) -> list[np.ndarray]:
    """Each text's distinct gram keys, sorted: exact packed code points for n <= 3 (the
    default), else the grams' 64-bit hashes. Texts that normalise alike share one array."""
    done: dict[str, np.ndarray] = {}
    out = []
    for text in texts:
        chars = normalized_chars(text)
        if chars not in done:
            done[chars] = (
                np.unique(packed_grams(chars, n))
                if n <= 3
                else np.unique(gram_hashes(question_grams(text, n)))
            )
        out.append(done[chars])
    return out


def _mix(values: np.ndarray, seeds: np.ndarray) -> np.ndarray:
    """A 64-bit hash of every value under every seed (splitmix64's finaliser): (len, seeds)."""
    x = values[:, None] ^ seeds[None, :]
    shifted = np.empty_like(x)  # in place: the temporaries are the cost at this size
    for shift, multiplier in ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB)):
        np.right_shift(x, np.uint64(shift), out=shifted)
        np.bitwise_xor(x, shifted, out=x)
        np.multiply(x, np.uint64(multiplier), out=x)
    np.right_shift(x, np.uint64(31), out=shifted)
    return np.bitwise_xor(x, shifted, out=x)


def minhash_signatures(sets: Sequence[np.ndarray], num_perm: int) -> np.ndarray:
    """(texts, num_perm) min-hashes; an empty set keeps all-ones."""
    seeds = np.random.default_rng(_SEED).integers(0, 2**63, size=num_perm, dtype=np.uint64)
    out = np.full((len(sets), num_perm), np.iinfo(np.uint64).max, dtype=np.uint64)
    if not len(sets):
        return out
    lengths = np.array([len(s) for s in sets], dtype=np.int64)
    owners = np.repeat(np.arange(len(sets)), lengths)
    values = np.concatenate(sets).astype(np.uint64)
    with np.errstate(over="ignore"):
        for begin in range(0, values.size, _CHUNK):
            part = owners[begin : begin + _CHUNK]
            mixed = _mix(values[begin : begin + _CHUNK], seeds)
            # owners are sorted: reduce each text's run of rows with one reduceat
            starts = np.flatnonzero(np.r_[True, part[1:] != part[:-1]])
            mins = np.minimum.reduceat(mixed, starts, axis=0)
            rows = part[starts]
            out[rows] = np.minimum(out[rows], mins)
    return out


def lsh_candidates(signatures: np.ndarray, bands: int) -> np.ndarray:
    """Distinct pairs (i < j) agreeing on at least one whole band, as a (k, 2) array."""
    n, width = signatures.shape
    rows = width // bands
    found = []
    for band in range(bands):
        block = np.ascontiguousarray(signatures[:, band * rows : (band + 1) * rows])
        keys = block.view(np.dtype((np.void, block.dtype.itemsize * rows))).ravel()
        order = np.argsort(keys, kind="stable")
        ordered = keys[order]
        starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
        sizes = np.diff(np.r_[starts, n])
        for start, size in zip(starts[sizes > 1].tolist(), sizes[sizes > 1].tolist(), strict=True):
            members = np.sort(order[start : start + size])
            left, right = np.triu_indices(size, k=1)
            found.append(members[left] * n + members[right])
    if not found:
        return np.zeros((0, 2), dtype=np.int64)
    codes = np.unique(np.concatenate(found).astype(np.int64))
    return np.stack([codes // n, codes % n], axis=1)


def jaccard(a: np.ndarray, b: np.ndarray) -> float:
    if a.size == 0 and b.size == 0:
        return 1.0
    common = np.intersect1d(a, b, assume_unique=True).size
    return common / (a.size + b.size - common)


def images_match(a: Sequence[int], b: Sequence[int], bits: int) -> int | None:
    """The largest pHash distance between paired images, or None when they do not match."""
    if len(a) != len(b):
        return None
    worst = 0
    for x, y in zip(a, b, strict=False):
        distance = (int(x) ^ int(y)).bit_count()
        if distance > bits:
            return None
        worst = max(worst, distance)
    return worst


def full_text(row: dict[str, Any]) -> str:
    return row["text"] + "\n" + "\n".join(o["text"] for o in row["options"] or [])


def stem_text(row: dict[str, Any]) -> str:
    """The question without its options: shared problem text, then the question's own stem."""
    content = row["question_content"]
    if row.get("options"):
        content, _ = parse_options(content)
    shared = row.get("problem_content") or ""
    return f"{shared}\n{content}" if shared else content


def answer_meaning(row: dict[str, Any]) -> str:
    """What the answer says: the texts of the chosen options (letters differ between copies
    whose option lists differ), else the answer itself, normalised."""
    answer = (row.get("answer") or "").strip()
    options = {o["label"]: o["text"] for o in row.get("options") or []}
    letters = [c for c in answer if c.isalpha()]
    if options and letters and all(c in options for c in letters):
        return "|".join(sorted(normalized_chars(options[c]) for c in letters))
    return normalized_chars(answer)


@dataclass(frozen=True)
class DuplicatePair:
    left: int
    right: int
    jaccard: float  # full texts
    image_bits: int
    stem_jaccard: float = 0.0
    rule: str = "text"  # text | stem


def find_duplicate_pairs(
    rows: Sequence[dict[str, Any]], image_hashes: Sequence[Sequence[int]],
    settings: NearDuplicates,
) -> tuple[list[DuplicatePair], int]:  # fmt: skip
    """Confirmed duplicate pairs (index pairs into ``rows``) and the number of candidates."""
    texts = [full_text(r) for r in rows]
    stems = [stem_text(r) for r in rows]
    both = gram_sets([*texts, *stems], settings.ngram)  # alike texts share one array
    full, stem_sets = both[: len(texts)], both[len(texts) :]
    if all(a is b for a, b in zip(full, stem_sets, strict=True)):
        stem_sets = full  # every stem reads as its full text (no options): one search
    long_stem = [len(normalized_chars(t)) >= settings.min_stem_chars for t in stems]
    kinds = (full, stem_sets) if stem_sets is not full else (full,)
    if settings.candidates == "exact":
        found, checked = [], 0
        for sets in kinds:
            similar, _, count = exact_similar_pairs(sets, settings.min_jaccard)
            found += [similar, _empty_pairs(sets)]
            checked += count
    else:
        found = [lsh_candidates(minhash_signatures(sets, settings.num_perm), settings.bands)
                 for sets in kinds]  # fmt: skip
    candidates = np.unique(np.concatenate(found), axis=0) if len(found) > 1 else found[0]
    if settings.candidates != "exact":
        checked = len(candidates)
    pairs = []
    for i, j in candidates.tolist():
        if rows[i]["problem_id"] == rows[j]["problem_id"]:
            continue
        image_distance = images_match(image_hashes[i], image_hashes[j], settings.image_bits)
        if image_distance is None:
            continue
        similarity, stem_similarity = jaccard(full[i], full[j]), jaccard(stem_sets[i], stem_sets[j])
        if similarity >= settings.min_jaccard:
            rule = "text"
        elif (
            stem_similarity >= settings.min_jaccard
            and long_stem[i]
            and long_stem[j]
            and answer_meaning(rows[i]) == answer_meaning(rows[j])
        ):
            rule = "stem"
        else:
            continue
        pairs.append(DuplicatePair(i, j, round(similarity, 4), image_distance,
                                   round(stem_similarity, 4), rule))  # fmt: skip
    return pairs, checked


def _empty_pairs(sets: Sequence[np.ndarray]) -> np.ndarray:
    """Pairs of texts without a gram: the same (Jaccard 1 by :func:`jaccard`), as LSH's equal
    empty signatures make them; only matching images make them duplicates."""
    empty = np.flatnonzero([s.size == 0 for s in sets])
    left, right = np.triu_indices(empty.size, k=1)
    return np.stack([empty[left], empty[right]], axis=1).astype(np.int64)


SOURCE_ORDER = {"release": 0, "html": 1, "scan": 2}  # exact text first, OCR last


def keep_rank(row: dict[str, Any]) -> tuple:
    """Lower is kept first: release, then HTML, then scans (the cleanest page first), then
    richer content, then the smaller id."""
    richness = len(row.get("answer") or "") + len(row.get("analysis") or "")
    return (SOURCE_ORDER.get(row["source_kind"], len(SOURCE_ORDER)),
            -(row.get("scan_quality") or 0.0), -richness, row["question_id"])  # fmt: skip


def why_kept(kept: dict[str, Any], removed: dict[str, Any]) -> str:
    """The first rank component that put ``kept`` ahead, in words (for ``removed.jsonl``)."""
    a, b = keep_rank(kept), keep_rank(removed)
    if a[0] != b[0]:
        return f"{kept['source_kind']} copy preferred to a {removed['source_kind']} copy"
    if a[1] != b[1]:
        return (f"cleaner scan (page quality {-a[1]:.3f} against {-b[1]:.3f}: "
                "the other copy is blurred, noisy or skewed)")  # fmt: skip
    if a[2] != b[2]:
        return "more content (answer and analysis)"
    return "smaller id (the copies are otherwise equal)"


def remove_near_duplicates(
    rows: list[dict[str, Any]], image_hashes: Sequence[Sequence[int]], settings: NearDuplicates
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    """(kept rows, removed rows with their decision, summary)."""
    if not settings.enabled or len(rows) < 2:
        return rows, [], {"enabled": settings.enabled, "candidates": 0, "pairs": 0, "removed": 0}
    pairs, candidates = find_duplicate_pairs(rows, image_hashes, settings)
    parent = list(range(len(rows)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for pair in pairs:
        a, b = root(pair.left), root(pair.right)
        if a != b:
            parent[max(a, b)] = min(a, b)
    members: dict[int, list[int]] = {}
    for i in range(len(rows)):
        members.setdefault(root(i), []).append(i)
    keeper = {r: min(group, key=lambda i: keep_rank(rows[i])) for r, group in members.items()}
    best: dict[int, DuplicatePair] = {}
    for pair in pairs:  # the evidence shown for a removed question: its closest confirmed match
        for i in (pair.left, pair.right):
            closeness = (pair.jaccard, pair.stem_jaccard)
            if i not in best or closeness > (best[i].jaccard, best[i].stem_jaccard):
                best[i] = pair
    kept, removed = [], []
    for i, row in enumerate(rows):
        kept_index = keeper[root(i)]
        if kept_index == i:
            kept.append(row)
            continue
        pair = best[i]
        row = {**row, "decisions": [*row["decisions"], decision_record(
            STAGE, "removed", "NEAR_DUPLICATE",
            {"kept": rows[kept_index]["question_id"],
             "kept_because": why_kept(rows[kept_index], row),
             "matched": rows[pair.right if pair.left == i else pair.left]["question_id"],
             "rule": pair.rule,
             "jaccard": pair.jaccard,
             "stem_jaccard": pair.stem_jaccard,
             "image_bits": pair.image_bits})]}  # fmt: skip
        removed.append(row)
    summary = {"enabled": True, "candidates": candidates, "pairs": len(pairs),
               "removed": len(removed), "groups": sum(len(g) > 1 for g in members.values())}  # fmt: skip
    return kept, removed, summary
