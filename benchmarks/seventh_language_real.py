"""A seventh language added to the real-data configuration, built, published and audited (issue 45).

    PYTHONPATH=. .venv/bin/python benchmarks/seventh_language_real.py [CONFIG] OUTDIR [--work-dir DIR] [--no-build] [--no-own-cases]
    CONFIG  default configs/shared-real.toml

../shared/data holds no seventh language's real data (no HPO table, glossary or CasiMedicos
files beyond en/es/fr), so the language is the made-up one of tests/flows/test_made_up_language.py
(code `xq`, German words from tests/data/lang-de, tests/made_up_language.py), added exactly as
docs/adding-a-language.md tells a contributor, with configuration and data only:

1. the registry entry, in a copy of the config's registry (OUTDIR/languages.toml);
2. the code appended to `languages`;
3. its names, two of the blocks an OBO real-data config accepts:
   - a `[[vocabulary.name_lists]]` table keyed by CUI (OUTDIR/names/xq-names.tsv: the CUI and
     name of every atom of tests/data/lang-de/MRCONSO.de.RRF); a CUI the real vocabulary lacks is
     counted and dropped (`no_english_name`), as a contributor's list would be;
   - a `[[vocabulary.glossaries]]` file in MeSpEn's layout (OUTDIR/names/xq-glossary.tsv:
     tm_terms_de.jsonl's English -> German pairs), each reaching a concept only through an
     exact English name of exactly one concept;
4. its own CasiMedicos-format cases (OUTDIR/casimedicos/{EN,XQ}/test.tsv: the language's file
   tab-separated with a fourth column, a few lines space-separated, a BOM and CRLF) as a separate
   `[[sources]]` entry with files {en, xq}, native xq, keyed by the answer as the config reads
   CasiMedicos, and `id_prefix = "xqcases"` (its ids would repeat the config's CasiMedicos ids).

Every relative path of the config becomes absolute (so the copy works from OUTDIR; checked by
loading both through schemas/config.py and comparing every resolved input), release_dir and
work_dir go inside OUTDIR (--work-dir overrides the latter). Then `mmedbench build --config
OUTDIR/<name>-xq.toml` and `mmedbench audit RELEASE --json OUTDIR/audit.json` run, and it prints
per cell of the new language its queries (test and dev), what build_report.json says of it
(cells short of quota, the name sources' counts), and the audit's tier_ordering reading of cd/xq.
Exit: the build's or audit's non-zero code when either fails; 2 with one line when ../shared/data
is missing or the config cannot be read. Nothing downloads.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from common.errors import InputError  # noqa: E402
from schemas.config import LoadedConfig, load_config  # noqa: E402
from tests.made_up_language import CASES, CODE, DE, REGISTRY_ENTRY, SAB, token_file  # noqa: E402

SHARED_DATA = ROOT.parent / "shared" / "data"
DEFAULT_CONFIG = ROOT / "configs" / "shared-real.toml"
NAMES_SAB, GLOSSARY_SAB = SAB, f"{SAB}GLOS"
LICENCE = "apache-2.0"  # tests/data/lang-de and the cases were written for this project's tests
# a config line naming a path: `key = "..."`; the keys whose values the loader resolves against the config
_PATH_LINE = re.compile(r'^(\s*(?:path|registry|release_dir|work_dir)\s*=\s*)"([^"]*)"(.*)$')
_LIST_ITEM = re.compile(r'^(\s*)"([^"]*)"(\s*,?\s*(?:#.*)?)$')  # one path per line inside `memory = [...]`
_LANGUAGES = re.compile(r'^languages\s*=\s*\[([^\]]*)\]', re.M)


# ------------------------------------------------------------------------------ pure pieces


def absolute_paths(text: str, base: Path) -> str:
    """The config text with every path it names (vocabulary, name lists, glossaries, sources,
    background, translation memories, registry, release and work dirs) made absolute against
    `base`, the config's folder; comments and layout kept."""
    out, in_memory = [], False
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        end = line[len(body):]
        m = _PATH_LINE.match(body)
        if m and not Path(m.group(2)).is_absolute():
            body = f'{m.group(1)}"{(base / m.group(2)).resolve()}"{m.group(3)}'
        if re.match(r"^\s*memory\s*=\s*\[", body):
            in_memory = "]" not in body
            body = re.sub(r'"([^"]+)"', lambda mm: f'"{(base / mm.group(1)).resolve()}"'
                          if not Path(mm.group(1)).is_absolute() else mm.group(0), body)
        elif in_memory:
            item = _LIST_ITEM.match(body)
            if item and not Path(item.group(2)).is_absolute():
                body = f'{item.group(1)}"{(base / item.group(2)).resolve()}"{item.group(3)}'
            in_memory = "]" not in body
        out.append(body + end)
    return "".join(out)


def with_language(text: str, code: str) -> str:
    """`languages` with `code` appended (once)."""
    m = _LANGUAGES.search(text)
    if m is None:
        raise ValueError("the config has no one-line `languages = [...]`")
    codes = re.findall(r'"([^"]+)"', m.group(1))
    if code in codes:
        return text
    listed = ", ".join(f'"{c}"' for c in [*codes, code])
    return text[:m.start()] + f"languages = [{listed}]" + text[m.end():]


def set_key(text: str, key: str, value: str) -> str:
    """A top-level `key = "..."` line set to `value` (the line must exist before the first table)."""
    pattern = re.compile(rf'^{key}\s*=\s*"[^"]*"', re.M)
    if not pattern.search(text[:text.index("\n[")]):
        raise ValueError(f"the config has no top-level `{key} = \"...\"`")
    return pattern.sub(f'{key} = "{value}"', text, count=1)


def name_rows(mrconso: str) -> list[tuple[str, str]]:
    """(CUI, name) of every MRCONSO line, in file order, repeats dropped."""
    rows: list[tuple[str, str]] = []
    for line in mrconso.splitlines():
        if line.strip():
            f = line.split("|")
            if (f[0], f[14]) not in rows:
                rows.append((f[0], f[14]))
    return rows


def glossary_lines(memory_jsonl: str) -> list[str]:
    """English -> target term pairs of a translation memory in MeSpEn's glossary layout
    (`count english<TAB>term<TAB>`, the count right-aligned), English the source side."""
    pairs = [json.loads(line) for line in memory_jsonl.splitlines() if line.strip()]
    return [f"{1:>7} {p['source']}\t{p['target']}\t" for p in pairs if p["source_lang"] == "en"]


def language_blocks(names: Path, glossary: Path, casimedicos: Path | None) -> str:
    """The TOML a contributor appends: the language's name list, glossary and (unless None) source."""
    blocks = f'''
# ---- the seventh language `{CODE}` (benchmarks/seventh_language_real.py; docs/adding-a-language.md)
# Its names keyed by CUI: a CUI the vocabulary lacks and no list names in English is dropped
[[vocabulary.name_lists]]
path = "{names}"
format = "delimited"
delimiter = "\\t"
lang = "{CODE}"
sab = "{NAMES_SAB}"
licence = "{LICENCE}"
name_column = "name"
cui_column = "cui"

# Its term pairs: a term reaches the one concept whose English name its English side is
[[vocabulary.glossaries]]
path = "{glossary}"
format = "glossary"
lang = "{CODE}"
sab = "{GLOSSARY_SAB}"
licence = "{LICENCE}"
'''
    if casimedicos is None:
        return blocks
    return blocks + f'''
# Its own clinical cases, in CasiMedicos' layout as another publisher ships them (tabs, a fourth
# column, a BOM, CRLF), asked in the language with the English case the pivot
[[sources]]
format = "casimedicos"
path = "{casimedicos}"
licence = "{LICENCE}"
options = {{ files = {{ en = "EN", {CODE} = "{CODE.upper()}" }}, native = "{CODE}" }}
key_concepts = "answer"
id_prefix = "{CODE}cases"
'''


def tier_reading(detail: str, cell: str) -> str:
    """The part of tier_ordering's detail about `cell` ("cd/xq pivots ... | ..."), else ''."""
    for part in detail.split("|"):
        at = part.find(f"{cell} ")
        if at >= 0 and (at == 0 or part[at - 1] in " :"):
            return part[at:].strip()
    return ""


# ------------------------------------------------------------------------------ the edges


def write_config(config: Path, outdir: Path, work_dir: Path | None = None, own_cases: bool = True) -> Path:
    """OUTDIR/<config stem>-xq.toml with the language added, and its data beside it.
    `own_cases` False: without the language's CasiMedicos-format source (see --no-own-cases)."""
    loaded = load_config(config)
    outdir.mkdir(parents=True, exist_ok=True)
    outdir = outdir.resolve()
    registry = outdir / "languages.toml"
    registry.write_text(loaded.resolve(loaded.config.registry).read_text(encoding="utf-8") + REGISTRY_ENTRY, encoding="utf-8")
    names_dir = outdir / "names"
    names_dir.mkdir(exist_ok=True)
    names = names_dir / f"{CODE}-names.tsv"
    names.write_text("cui\tname\n" + "".join(f"{c}\t{n}\n" for c, n in name_rows(
        (DE / "MRCONSO.de.RRF").read_text(encoding="utf-8"))), encoding="utf-8")
    glossary = names_dir / f"{CODE}-glossary.tsv"
    glossary.write_text("".join(f"{line}\n" for line in glossary_lines(
        (DE / "tm_terms_de.jsonl").read_text(encoding="utf-8"))), encoding="utf-8")
    casimedicos = outdir / "casimedicos"
    for folder, cases in CASES.items():
        (casimedicos / folder).mkdir(parents=True, exist_ok=True)
        (casimedicos / folder / "test.tsv").write_bytes(token_file(cases, tabs=folder != "EN"))
    text = absolute_paths(loaded.path.read_text(encoding="utf-8"), loaded.base)
    text = with_language(text, CODE)
    text = set_key(text, "registry", str(registry))
    text = set_key(text, "release_dir", str(outdir / "releases"))
    text = set_key(text, "work_dir", str(work_dir.resolve() if work_dir else outdir / "work"))
    text = text.rstrip("\n") + "\n" + language_blocks(names, glossary, casimedicos if own_cases else None)
    out = outdir / f"{loaded.path.stem}-{CODE}.toml"
    out.write_text(text, encoding="utf-8")
    check_same_inputs(loaded, load_config(out), [names, glossary, *([casimedicos] if own_cases else [])])
    return out


def check_same_inputs(original: LoadedConfig, copy: LoadedConfig, own_paths: list[Path]) -> None:
    """The copy names every input the original names, at the same place, and beside them only
    the language's own files (`own_paths`): a path rewritten wrongly stops here, not an hour into a build."""
    def inputs(loaded: LoadedConfig) -> list[str]:
        c, r = loaded.config, loaded.resolve
        found = [r(c.vocabulary.path)]
        found += [r(x.path) for x in (*c.vocabulary.code_names, *c.vocabulary.name_lists, *c.vocabulary.glossaries)]
        found += [r(s.path) for s in (*c.sources, *c.background)] + [r(m) for m in c.translation.memory]
        return [str(p) for p in found]

    old, new = inputs(original), inputs(copy)
    own = [str(copy.resolve(p)) for p in own_paths]
    if [p for p in new if p not in own] != old or len(new) != len(old) + len(own):
        raise SystemExit(f"error: {copy.path}: its inputs differ from {original.path}'s beyond the language's own files")


def cell_lines(release: Path, code: str) -> list[str]:
    """Per cell of the language: queries (dev), realization, what build_report.json says of it."""
    manifest = json.loads((release / "manifest.json").read_text(encoding="utf-8"))
    report = json.loads((release / "build_report.json").read_text(encoding="utf-8"))
    lines = []
    for cell in sorted(c for c in manifest["cells"] if c.endswith(f"/{code}")):
        info = manifest["cells"][cell]
        short = report.get("cells_short_of_quota", {}).get(cell)
        lines.append(f"{cell}: {info.get('queries', 0)} queries ({info.get('dev_queries', 0)} dev), "
                     f"{info.get('documents', 0)} documents; {info.get('realization', '')}"
                     + (f"; short of quota: {short}" if short else ""))
    for sab in (NAMES_SAB, GLOSSARY_SAB):
        counts = report.get("vocabulary_name_lists", {}).get(sab)
        if counts:
            lines.append(f"{sab} ({counts['kind']}): {counts['rows_read']} rows read, {counts['names_added']} names added "
                         f"to {counts['concepts_named']} concepts; dropped {json.dumps(counts['dropped'], sort_keys=True)}")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="+", metavar="[CONFIG] OUTDIR")
    ap.add_argument("--work-dir", type=Path, help="the build's cache (default OUTDIR/work)")
    ap.add_argument("--no-build", action="store_true", help="write the config and its data only")
    ap.add_argument("--no-own-cases", action="store_true",
                    help="leave out the language's own CasiMedicos-format source (a second casimedicos source beside "
                         "the config's, its ids prefixed by `id_prefix`)")
    args = ap.parse_args(argv)
    if len(args.paths) > 2:
        ap.error("expected [CONFIG] OUTDIR")
    config, outdir = (Path(args.paths[0]), Path(args.paths[1])) if len(args.paths) == 2 else (DEFAULT_CONFIG, Path(args.paths[0]))
    if not SHARED_DATA.is_dir():
        print(f"error: {SHARED_DATA}: not found (the real-data configuration reads ../shared/data)", file=sys.stderr)
        return 2
    try:
        cfg = write_config(config, outdir, args.work_dir, own_cases=not args.no_own_cases)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"config: {cfg}", flush=True)
    if args.no_build:
        return 0
    cli = [sys.executable, "-m", "mmedbench.cli"]
    build = subprocess.run([*cli, "build", "--config", str(cfg)], cwd=ROOT)
    if build.returncode:
        print(f"build failed (exit {build.returncode})", file=sys.stderr)
        return build.returncode
    loaded = load_config(cfg)
    release = loaded.resolve(loaded.config.release_dir) / loaded.config.version
    audit_json = cfg.parent / "audit.json"
    audit = subprocess.run([*cli, "audit", str(release), "--json", str(audit_json)], cwd=ROOT)
    for line in cell_lines(release, CODE):
        print(line)
    if audit_json.exists():
        stored = json.loads(audit_json.read_text(encoding="utf-8"))
        tiers = next((c for c in stored["checks"] if c["name"] == "tier_ordering"), None)
        if tiers is not None:
            print(f"tier_ordering ({'passed' if tiers['passed'] else 'FAILED'}): "
                  f"{tier_reading(tiers['detail'], f'cd/{CODE}') or '(no reading of cd/' + CODE + ')'}")
    if audit.returncode:
        print(f"audit failed (exit {audit.returncode})", file=sys.stderr)
        return audit.returncode
    return 0


if __name__ == "__main__":
    sys.exit(main())
