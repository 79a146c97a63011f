"""``croissant.json``: Croissant 1.1 (JSON-LD) metadata written next to every dataset card.

Tools that read Croissant (``mlcroissant``, dataset search, loaders) see the folder's parquet
files (a ``cr:FileObject`` each, with its sha256), one record set per config whose fields mirror
the ``datasets`` features (images as ``sc:ImageObject`` from the image struct's bytes, lists as
arrays, structs as sub-fields, the split from the file path), the Responsible-AI fields that apply
(how the data was collected and preprocessed, its limitations and biases, the licence of each
source) and the lineage we keep: the dataset is ``prov:wasDerivedFrom`` its sources, and the
``provenance`` column is declared as each record's ``prov:wasDerivedFrom`` (``equivalentProperty``
on the field), so the per-row lineage is visible to any tool that reads the file. Nothing here
depends on the time of the build: the same folder gives the same bytes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import datasets

from benchsmith.core.hashing import sha256_file
from benchsmith.hf.layout import SplitWritten

CONFORMS_TO = ["http://mlcommons.org/croissant/1.1", "http://mlcommons.org/croissant/RAI/1.0"]
PARQUET = "application/x-parquet"

CONTEXT: dict[str, Any] = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "sc": "https://schema.org/",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "dct": "http://purl.org/dc/terms/",
    "prov": "http://www.w3.org/ns/prov#",
    **{term: f"cr:{term}" for term in (
        "arrayShape", "citeAs", "column", "containedIn", "equivalentProperty", "extract", "field",
        "fileProperty", "fileObject", "fileSet", "format", "includes", "isArray", "isLiveDataset",
        "jsonPath", "key", "md5", "parentField", "path", "recordSet", "references", "regex",
        "repeated", "replace", "samplingRate", "separator", "source", "subField", "transform")},
    "conformsTo": "dct:conformsTo",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "name": {"@container": "@language"},
    "description": {"@container": "@language"},
}  # fmt: skip

SCALARS = {"string": "sc:Text", "large_string": "sc:Text", "bool": "sc:Boolean",
           "float16": "sc:Float", "float32": "sc:Float", "float64": "sc:Float",
           "date32": "sc:Date", "timestamp[s]": "sc:DateTime"}  # fmt: skip


def _data_type(feature: Any) -> str:
    if isinstance(feature, datasets.Image):
        return "sc:ImageObject"
    if isinstance(feature, datasets.ClassLabel):
        return "sc:Integer"
    dtype = getattr(feature, "dtype", "string")
    return "sc:Integer" if "int" in dtype else SCALARS.get(dtype, "sc:Text")


def _is_nested(feature: Any) -> bool:
    return isinstance(feature, (dict, list, datasets.List, datasets.LargeList, datasets.Sequence))


def field_of(record_id: str, name: str, feature: Any, source: dict[str, Any],
             column: str | None = None) -> dict[str, Any]:  # fmt: skip
    """A ``cr:Field`` for one feature: a struct (or a list of structs) has a sub-field per scalar
    member (read with a JSON path into the column); a list is an array; an image is read from the
    image struct's ``bytes``. Members nested deeper (a list inside a struct) are named in the
    description only: Croissant readers take one level of sub-fields."""
    field_id = f"{record_id}/{name}"
    out: dict[str, Any] = {"@type": "cr:Field", "@id": field_id, "name": name}
    inner, array = feature, False
    if isinstance(feature, (datasets.List, datasets.LargeList, datasets.Sequence, list)):
        inner, array = (feature[0] if isinstance(feature, list) else feature.feature), True
    if array:
        out["isArray"], out["arrayShape"], out["repeated"] = True, "-1", True
    if isinstance(inner, dict) and column is None:
        flat = {k: v for k, v in inner.items() if not _is_nested(v)}
        out["dataType"] = "sc:ItemList" if array else "sc:Thing"
        out["subField"] = [field_of(field_id, k, v, source, name) for k, v in flat.items()]
        deeper = [k for k in inner if k not in flat]
        if deeper:
            out["description"] = (f"also holds {', '.join(deeper)} (nested lists or records; "
                                  "read them from the parquet column)")  # fmt: skip
        return out
    out["dataType"] = _data_type(inner)
    extract: dict[str, Any] = {**source, "extract": {"column": column or name}}
    json_path = ".".join(p for p in (name if column else "",
                                     "bytes" if isinstance(inner, datasets.Image) else "") if p)  # fmt: skip
    if json_path:
        extract["transform"] = {"jsonPath": json_path}
    out["source"] = extract
    if isinstance(inner, datasets.ClassLabel):
        out["description"] = "class index: " + ", ".join(
            f"{k}={n}" for k, n in enumerate(inner.names))  # fmt: skip
    return out


def file_set(config: str) -> dict[str, Any]:
    """A config's shards (every split), as the record set reads them."""
    return {"@type": "cr:FileSet", "@id": f"{config}-parquet", "name": f"{config}-parquet",
            "encodingFormat": PARQUET, "includes": f"data/{config}/*.parquet"}  # fmt: skip


def record_set(config: str, features: datasets.Features, splits: list[SplitWritten]
               ) -> dict[str, Any]:  # fmt: skip
    source = {"fileSet": {"@id": f"{config}-parquet"}}
    fields = [{
        "@type": "cr:Field", "@id": f"{config}/split", "name": "split", "dataType": "sc:Text",
        "description": "the split, from the file name",
        "source": {**source, "extract": {"fileProperty": "filename"},
                   "transform": {"regex": r"^([^-]+)-.*\.parquet$"}},
    }]  # fmt: skip
    for name, feature in features.items():
        field = field_of(config, name, feature, source)
        if name == "provenance":
            field["equivalentProperty"] = "prov:wasDerivedFrom"
            field["description"] = (
                f"{field.get('description', '')}; " if field.get("description") else "") + (
                "per-record lineage (prov:wasDerivedFrom): the source files, with their sha256, "
                "the parameters and the code this row was derived from; `benchsmith audit` "
                "re-derives the row from them")  # fmt: skip
        fields.append(field)
    counts = ", ".join(f"{s.split}: {s.num_examples}" for s in splits)
    return {"@type": "cr:RecordSet", "@id": config, "name": config,
            "description": f"config {config} ({counts} rows)", "field": fields}  # fmt: skip


def croissant(folder: Path, metadata: dict[str, Any], info: dict[str, Any],
              written: list[SplitWritten], features: dict[str, datasets.Features],
              rai: dict[str, Any], license_text: str) -> dict[str, Any]:  # fmt: skip
    """The JSON-LD document for a folder being published (``folder``: its staging copy)."""
    distribution = []
    for split in written:
        for rel in split.files:
            # the digest the writer computed while writing the shard, else read from the file
            # (an audit, a copied config); streamed: shards are up to 256 MiB each
            digest = split.digests.get(rel) or sha256_file(folder / rel)
            distribution.append({"@type": "cr:FileObject", "@id": rel, "name": rel,
                                 "contentUrl": rel, "encodingFormat": PARQUET,
                                 "contentSize": f"{(folder / rel).stat().st_size} B",
                                 "sha256": digest})  # fmt: skip
    by_config: dict[str, list[SplitWritten]] = {}
    for split in written:
        by_config.setdefault(split.config, []).append(split)
    distribution += [file_set(config) for config in by_config]
    sources = rai.get("sources") or [{"name": s} for s in metadata.get("source_datasets") or []]
    licence = metadata.get("license_link") or metadata.get("license")
    doc = {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": CONFORMS_TO,
        "name": metadata.get("pretty_name") or info.get("family"),
        "description": rai.get("description") or metadata.get("pretty_name") or "",
        "version": info.get("version"),
        "license": licence,
        "url": "README.md",
        "keywords": metadata.get("tags") or [],
        "inLanguage": metadata.get("language") or [],
        "creator": {"@type": "sc:Organization", "name": "benchsmith"},
        "citeAs": rai.get("cite_as") or "",
        "prov:wasDerivedFrom": [
            {
                "@type": "prov:Entity",
                "name": s["name"],
                **({"license": s["license"]} if s.get("license") else {}),
                **({"url": s["url"]} if s.get("url") else {}),
            }
            for s in sources
        ],  # fmt: skip
        "prov:wasGeneratedBy": {
            "@type": "prov:Activity",
            "name": f"benchsmith {info.get('benchsmith_version', '')} "
            f"{info.get('family', '')} build",
            "description": f"code revision {info.get('code_revision')}",
        },  # fmt: skip
        "rai:dataCollection": rai.get("collection") or "",
        "rai:dataCollectionType": rai.get("collection_type") or "Derived from existing datasets",
        "rai:dataPreprocessingProtocol": rai.get("preprocessing") or "",
        "rai:dataLimitations": rai.get("limitations") or "",
        "rai:dataBiases": rai.get("biases") or "",
        "rai:dataUseCases": rai.get("use_cases") or "Evaluation of multimodal language models.",
        "rai:personalSensitiveInformation": rai.get("personal") or "",
        "rai:dataReleaseMaintenancePlan": (
            "Versioned releases: each version is tagged and never changed; `dvc repro` rebuilds "
            "it byte for byte from the sources and `benchsmith audit` re-derives every row."
        ),
        "rai:dataLicense": license_text.strip() or str(licence or ""),
        "distribution": distribution,
        "recordSet": [record_set(c, features[c], s) for c, s in by_config.items()],
    }
    return {k: v for k, v in doc.items() if v not in ("", None, [])}


RAI_KEYS = {"collection": "rai:dataCollection", "preprocessing": "rai:dataPreprocessingProtocol",
            "limitations": "rai:dataLimitations", "biases": "rai:dataBiases",
            "personal": "rai:personalSensitiveInformation", "cite_as": "citeAs"}  # fmt: skip


def carried_rai(source_dir: Path, stages: str) -> dict[str, Any]:
    """A curated folder's statement: its source's (from the source's ``croissant.json``), with
    the curation stages added to the preprocessing; empty when the source has none."""
    path = Path(source_dir) / "croissant.json"
    if not path.is_file():
        return {}
    try:
        source = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    rai = {key: source[term] for key, term in RAI_KEYS.items() if source.get(term)}
    rai["sources"] = [{k: v for k, v in s.items() if k in ("name", "url", "license")}
                      for s in source.get("prov:wasDerivedFrom") or []]  # fmt: skip
    rai["preprocessing"] = " ".join(t for t in (rai.get("preprocessing"), stages) if t)
    return rai


def croissant_text(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
