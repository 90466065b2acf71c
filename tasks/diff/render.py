"""A ReleaseDiff as Markdown (for people) and JSON (for tools)."""
from __future__ import annotations

import json

from schemas.diff import CellCounts, IdDiff, ReleaseDiff

MAX_IDS = 10  # ids listed per kind in Markdown; the JSON has them all


def diff_json(diff: ReleaseDiff) -> str:
    return json.dumps(diff.model_dump(mode="json"), ensure_ascii=False, sort_keys=True, indent=2) + "\n"


def _ids(ids: list[str]) -> str:
    shown = ", ".join(f"`{i}`" for i in ids[:MAX_IDS])
    return shown + (f" and {len(ids) - MAX_IDS} more" if len(ids) > MAX_IDS else "")


def _count(old: CellCounts | None, new: CellCounts | None, key: str) -> str:
    a = getattr(old, key) if old else None
    b = getattr(new, key) if new else None
    if a == b:
        return str(a)
    return f"{'-' if a is None else a} → {'-' if b is None else b}"


def _pm(d: IdDiff) -> str:
    return f"+{len(d.added)} −{len(d.removed)} ~{len(d.changed)}"


def _value(v) -> str:
    return "-" if v is None else f"`{json.dumps(v, ensure_ascii=False, sort_keys=True)}`"


def diff_markdown(diff: ReleaseDiff) -> str:
    lines = [f"# Release diff {diff.old_version} → {diff.new_version}", "",
             f"Builds `{diff.old_build_id[:12]}` → `{diff.new_build_id[:12]}`."]
    if diff.identical:
        return "\n".join(lines + ["", "The releases are identical.", ""])
    lines += ["", "## Cells", "",
              f"- added: {', '.join(diff.cells_added) or 'none'}",
              f"- removed: {', '.join(diff.cells_removed) or 'none'}",
              f"- changed: {', '.join(diff.cells_changed) or 'none'}",
              f"- unchanged: {len(diff.cells_unchanged)}", "",
              "| cell | status | queries | documents | qrels | queries +/−/~ | documents +/−/~ | qrels +/− |",
              "|---|---|---|---|---|---|---|---|"]
    for c in diff.cells:
        detail = (_pm(c.queries), _pm(c.documents), f"+{len(c.qrels.added)} −{len(c.qrels.removed)}") if c.status == "changed" else ("", "", "")
        lines.append(f"| {c.cell} | {c.status} | {_count(c.old, c.new, 'queries')} | {_count(c.old, c.new, 'documents')} "
                     f"| {_count(c.old, c.new, 'qrels')} | {' | '.join(detail)} |")
    for c in diff.cells:
        if c.status != "changed":
            continue
        lines += ["", f"### {c.cell}", ""]
        for what, d in (("queries", c.queries), ("documents", c.documents)):
            if d.added:
                lines.append(f"- {what} added ({len(d.added)}): {_ids(d.added)}")
            if d.removed:
                lines.append(f"- {what} removed ({len(d.removed)}): {_ids(d.removed)}")
            for ch in d.changed[:MAX_IDS]:
                text = f" (text {ch.old_text_sha256} → {ch.new_text_sha256})" if "text" in ch.fields else ""
                lines.append(f"- {what[:-1] if what == 'documents' else 'query'} `{ch.id}` changed: {', '.join(ch.fields)}{text}")
            if len(d.changed) > MAX_IDS:
                lines.append(f"- and {len(d.changed) - MAX_IDS} more changed {what}")
        for what, rows in (("added", c.qrels.added), ("removed", c.qrels.removed)):
            if rows:
                shown = ", ".join(f"`{r.query_id}`→`{r.corpus_id}` ({r.score}, {r.split})" for r in rows[:MAX_IDS])
                lines.append(f"- qrels {what} ({len(rows)}): {shown}" + (f" and {len(rows) - MAX_IDS} more" if len(rows) > MAX_IDS else ""))
        if c.queries.empty and c.documents.empty and c.qrels.empty:
            lines.append("- same rows; only derived files differ (see Files)")
    s = diff.confusion_sets
    if not s.empty:
        lines += ["", "## Confusion sets", "", f"{_pm(s)}"]
        if s.added:
            lines.append(f"- added ({len(s.added)}): {_ids(s.added)}")
        if s.removed:
            lines.append(f"- removed ({len(s.removed)}): {_ids(s.removed)}")
        if s.changed:
            lines.append(f"- changed ({len(s.changed)}): {_ids([c.id for c in s.changed])}")
    for title, rows in (("Configuration", diff.config), ("Vocabulary sources", diff.vocabulary_sources)):
        if rows:
            lines += ["", f"## {title}", "", "| key | change | old | new |", "|---|---|---|---|"]
            lines += [f"| {r.key} | {r.kind} | {_value(r.old)} | {_value(r.new)} |" for r in rows]
    if diff.code_version is not None:
        lines += ["", "## Code", "", f"{diff.code_version.old} → {diff.code_version.new}"]
    whole = {c + "/" for c in diff.cells_added + diff.cells_removed}  # their files are all new or gone
    files = [f for f in diff.files if not any(f.path.startswith(w) for w in whole)]
    for title, rows in (("Inputs", diff.inputs), ("Files", files)):
        if rows:
            lines += ["", f"## {title}", "", "| path | change |", "|---|---|"]
            lines += [f"| {r.path} | {r.kind}{f' from {r.old_path}' if r.old_path else ''} |" for r in rows]
    return "\n".join(lines) + "\n"
