"""Stage: audit a release folder using nothing but the folder; the checks are in `checks.py`."""
from __future__ import annotations

import json
import os
from pathlib import Path

from common.errors import AuditFailedError
from common.jsonio import atomic_write
from schemas.config import Language
from schemas.parameters import AuditParameters
from schemas.records import AuditCheck, AuditReport
from tasks.audit.checks import (
    Release,
    check_concept_overlap,
    check_confusion_consistency,
    check_counts,
    check_hashes,
    check_identity,
    check_language,
    check_licence,
    check_pivot_queries,
    check_qrels,
    check_query_overlap,
    check_schemas,
    check_tiers,
    check_trivial_match,
    check_twins,
    check_file_kinds,
    check_card_links,
    check_stored_report,
    report_markdown,
)
from tasks.audit.card_check import check_card


def _guarded(name: str, check, *args) -> AuditCheck:
    """A check that cannot even run on what it reads (a record that breaks its schema, say,
    which `schemas` reports by line) fails, and the audit goes on: a tampered release is a
    failed audit, never a crash."""
    try:
        return check(*args)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        return AuditCheck(name=name, passed=False, detail="1 failure(s)",
                          failures=[f"could not run on this release ({type(exc).__name__}: {exc})"])


def audit_release(root: Path, name: str | None = None, stored_report: bool = True) -> AuditReport:
    """Every check on the release folder `root`. `stored_report`: whether the release holds
    the report of the audit at its build (a published release does; the build's own audit,
    which writes it, passes False and its `audit_report` check says so)."""
    root = Path(os.path.abspath(root))  # `mmedbench audit .` names the folder by its own name
    rel = Release(root)
    cfg = rel.manifest_raw.get("config", {})
    registry = {}
    for k, v in rel.manifest_raw.get("languages", {}).items():
        try:
            registry[k] = Language.model_validate(v)
        except ValueError:  # its cells fail `language_and_script`: not in the registry
            pass
    checks = [_guarded("hashes", check_hashes, rel), _guarded("manifest_identity", check_identity, rel, name),
              _guarded("schemas", check_schemas, rel), _guarded("concept_overlap", check_concept_overlap, rel),
              _guarded("query_overlap", check_query_overlap, rel, registry,
                       cfg.get("dedup", {"threshold": 0.7, "num_perm": 128}), cfg.get("seed", 0)),
              _guarded("qrels_integrity", check_qrels, rel), _guarded("pivot_queries", check_pivot_queries, rel),
              _guarded("language_and_script", check_language, rel, registry, cfg.get("langid_backend", "langdetect")),
              _guarded("tier_ordering", lambda r, g: check_tiers(r, g)[0], rel, registry),
              _guarded("trivial_match", check_trivial_match, rel), _guarded("confusion_sets", check_confusion_consistency, rel),
              _guarded("counts", check_counts, rel), _guarded("licence_policy", check_licence, rel),
              _guarded("twins", check_twins, rel), _guarded("file_kinds", check_file_kinds, rel),
              _guarded("card_links", check_card_links, rel), _guarded("card", check_card, rel)]
    if stored_report:
        checks.append(_guarded("audit_report", check_stored_report, rel, list(checks)))
    else:
        checks.append(AuditCheck(name="audit_report", passed=True, detail="written by this audit, at the build"))
    return AuditReport(release=name or root.name, version=str(rel.manifest_raw.get("version", "?")),
                       passed=all(c.passed for c in checks), checks=checks)


def audit_draft(p: AuditParameters, upstream: dict) -> AuditReport | None:
    """Stage: audit the written release (`upstream["write"]`, tasks/release/stage.Draft)
    before it is published, and write the reports into it. A failed audit publishes
    nothing (AuditFailedError, exit 1)."""
    draft = upstream["write"]
    if draft.done:  # published already: its audit passed then
        return None
    with draft.on_error():
        audit = audit_release(draft.tmp, name=draft.version, stored_report=False)
        with atomic_write(draft.tmp / "audit_report.json") as fh:
            fh.write(json.dumps(audit.model_dump(mode="json"), ensure_ascii=False, sort_keys=True, indent=2) + "\n")
        with atomic_write(draft.tmp / "audit_report.md") as fh:
            fh.write(report_markdown(audit))
        if not audit.passed:
            failed = [f"{c.name}: {c.failures[0]}" for c in audit.checks if not c.passed]
            raise AuditFailedError(draft.final, f"the built release fails its audit ({' | '.join(failed)}); nothing was published")
    return audit
