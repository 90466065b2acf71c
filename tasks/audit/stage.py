"""Stage: audit a release folder using nothing but the folder; the checks are in `checks.py`."""
from __future__ import annotations

from pathlib import Path

from schemas.config import Language
from schemas.records import AuditReport
from tasks.audit.checks import (
    Release,
    check_concept_overlap,
    check_confusion_consistency,
    check_counts,
    check_hashes,
    check_language,
    check_licence,
    check_pivot_queries,
    check_qrels,
    check_query_overlap,
    check_schemas,
    check_tiers,
    check_trivial_match,
)


def audit_release(root: Path, name: str | None = None) -> AuditReport:
    root = Path(root)
    rel = Release(root)
    cfg = rel.manifest_raw.get("config", {})
    registry = {k: Language.model_validate(v) for k, v in rel.manifest_raw.get("languages", {}).items()}
    checks = [check_hashes(rel), check_schemas(rel), check_concept_overlap(rel),
              check_query_overlap(rel, registry, cfg.get("dedup", {"threshold": 0.7, "num_perm": 128}), cfg.get("seed", 0)),
              check_qrels(rel), check_pivot_queries(rel), check_language(rel, registry, cfg.get("langid_backend", "langdetect"))]
    tiers, _ = check_tiers(rel, registry)
    checks += [tiers, check_trivial_match(rel), check_confusion_consistency(rel), check_counts(rel), check_licence(rel)]
    return AuditReport(release=name or root.name, version=str(rel.manifest_raw.get("version", "?")),
                       passed=all(c.passed for c in checks), checks=checks)


def report_markdown(report: AuditReport) -> str:
    lines = [f"# Audit of release {report.version}", "", f"Result: {'PASSED' if report.passed else 'FAILED'}", "",
             "| check | result | detail |", "|---|---|---|"]
    for c in report.checks:
        lines.append(f"| {c.name} | {'pass' if c.passed else 'FAIL'} | {c.detail} |")
    for c in report.checks:
        if c.failures:
            lines += ["", f"## {c.name}", ""] + [f"- {f}" for f in c.failures]
    return "\n".join(lines) + "\n"
