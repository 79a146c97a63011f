"""Stage ``image_duplicates``: the same picture twice in a sample, or across splits.

Every image of the samples still kept is fingerprinted (sha256 of decoded pixels, 64-bit
perceptual hash; :mod:`benchsmith.images.hashes`) and compared within its sample and against
the reference splits (``against_splits``): exact pixel matches and pHash near duplicates at
Hamming distance <= ``near_threshold`` are dropped, as are images that cannot be decoded. The
same picture in two samples of the curated split is reported, not removed: many benchmarks ask
several questions about one image.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from benchsmith.core.executor import EXECUTORS
from benchsmith.core.settings import setting
from benchsmith.stages.base import Stage, StageContext, StageDecision, StageResult


@dataclass(frozen=True)
class ImageSettings:
    enabled: bool = setting(True, "check for duplicate images", flag_name="--no-image-check",
                            off_switch=True)  # fmt: skip
    near_threshold: int = setting(4, "pHash Hamming distance counted as a near duplicate",
                                  minimum=0, maximum=64)  # fmt: skip
    against_splits: tuple[str, ...] = setting(
        (), "reference split(s) for cross-split duplicates (e.g. support when curating query)",
        flag_name="--against-split", metavar="SPLIT",
    )  # fmt: skip
    workers: int = setting(1, "image hashing processes, or Ray tasks at once", minimum=0,
                           flag_name="--image-workers", shapes_output=False)  # fmt: skip
    executor: str = setting(
        "local", "where images are hashed: local processes or a Ray cluster ($RAY_ADDRESS, else "
        "a Ray started here); the same decisions and bytes either way", choices=EXECUTORS,
        flag_name="--image-executor", shapes_output=False,
    )  # fmt: skip


def _hash_view(view: Any, wanted: set[str] | None, settings: ImageSettings):
    """Hashes keyed by (sample id, image position); images stream through in batches."""
    from benchsmith.images.hashes import hash_images

    items = (
        ((sample.sample_id, k), data)
        for sample in view.iter_samples(with_images=True, only=wanted)
        for k, data in enumerate(sample.images)
    )
    return hash_images(items, workers=settings.workers, executor=settings.executor)


class ImageDuplicatesStage(Stage):
    name = "image_duplicates"
    title = "Duplicate images"
    summary = (
        "exact (decoded pixels) and near (perceptual hash) duplicates within a sample and "
        "against --against-split splits."
    )
    params_key = "images"
    settings_type = ImageSettings
    reasons = {
        "DUPLICATE_IMAGE": "an image is pixel-identical to another image of the sample or of a "
        "reference split",
        "NEAR_DUPLICATE_IMAGE": "an image is a perceptual-hash near duplicate of another "
        "(Hamming <= threshold)",
        "UNREADABLE_IMAGE": "an image could not be decoded",
    }
    card_section = """\
## Duplicate images

{{ report.images_hashed }} images hashed (sha256 of decoded pixels; 64-bit
perceptual hash, near duplicate at Hamming distance <= {{ report.near_threshold }}),
within each sample{% if report.against_splits %} and against split(s) {{ report.against_splits | join(", ") }}{% endif %}.
Findings: {% for k, n in report.findings.items() %}{{ k }} {{ n }}{% if not loop.last %}, {% endif %}{% else %}none{% endfor %}. Unreadable images: {{ report.unreadable }}.
"""

    def skip_reason(
        self, samples: Sequence[Any], settings: ImageSettings, context: StageContext
    ) -> str | None:
        columns = context.view.columns
        if columns.image is None and columns.image_join is None:
            return "no image column"
        return None if settings.enabled else "disabled"

    def run(
        self, samples: Sequence[Any], settings: ImageSettings, context: StageContext
    ) -> StageResult:
        from benchsmith.hf.dataset_view import DatasetView
        from benchsmith.images.duplicates import (
            duplicates_across,
            duplicates_within,
            duplicates_within_samples,
        )

        view = context.view
        alive = [s.sample_id for s in samples]
        hashes, errors = _hash_view(view, set(alive), settings)
        per_sample: dict[str, list] = {sid: [] for sid in alive}
        for (sid, _k), value in sorted(hashes.items()):
            per_sample[sid].append(value)
        findings = list(duplicates_within_samples(per_sample, settings.near_threshold))
        for split in settings.against_splits:
            other = DatasetView(view.dataset_dir, view.config, split, view.columns)
            reference, ref_errors = _hash_view(other, None, settings)
            found = duplicates_across(hashes, reference, settings.near_threshold)
            findings.extend(replace(f, scope=f"across_splits:{split}") for f in found)
            errors.update({("reference", split, *k): v for k, v in ref_errors.items()})
        evidence: dict[str, list] = {}
        for f in findings:
            within = f.scope == "within_sample"
            sid = f.sample_id if within else f.a[0]
            evidence.setdefault(sid, []).append(
                {
                    "kind": f.kind,
                    "scope": f.scope,
                    "image": f.a if within else f.a[1],
                    "other": f.b if within else f"{f.b[0]}#{f.b[1]}",
                    "distance": f.distance,
                }
            )
        decisions: dict[str, StageDecision] = {}
        for sid, items in evidence.items():
            exact = any(i["kind"] == "exact" for i in items)
            reason = "DUPLICATE_IMAGE" if exact else "NEAR_DUPLICATE_IMAGE"
            decisions[sid] = StageDecision(sid, "drop", reason, {"findings": items})
        unreadable = 0
        for key, message in errors.items():
            if key[0] == "reference":
                continue  # an unreadable reference image cannot leak; counted in the report
            unreadable += 1
            decisions[key[0]] = StageDecision(
                key[0], "drop", "UNREADABLE_IMAGE", {"image": key[1], "error": message}
            )
        same_split = [
            f for f in duplicates_within(hashes, settings.near_threshold) if f.a[0] != f.b[0]
        ]
        report = {
            "near_threshold": settings.near_threshold,
            "against_splits": list(settings.against_splits),
            "images_hashed": len(hashes),
            "unreadable": unreadable,
            "unreadable_reference": len(errors) - unreadable,
            "findings": dict(sorted(Counter(f"{f.kind}/{f.scope}" for f in findings).items())),
            "across_samples_in_split": dict(sorted(Counter(f.kind for f in same_split).items())),
        }
        return StageResult(decisions, report)


IMAGE_DUPLICATES = ImageDuplicatesStage()
