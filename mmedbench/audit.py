"""Auditing a release folder from Python: the public entry point behind `mmedbench audit`.

    from mmedbench.audit import audit_release
    report = audit_release("releases/0.1.0")
    print(report.passed, [c.name for c in report.checks if not c.passed])
"""
from __future__ import annotations

from tasks.audit.stage import audit_release

__all__ = ["audit_release"]
