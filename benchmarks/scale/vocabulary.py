"""The vocabulary: a UMLS-shaped Metathesaurus streamed to RRF, tree by tree.

Genuine RRF (18 MRCONSO fields plus the trailing '|', ...): C+7-digit CUIs in increasing
order, A/L/S/AT/R identifiers, several atoms per concept from several sources (PT, SY, MH,
ET, FN, AB, ACR, ...), some suppressed (SUPPRESS=O/E/Y), a mix of LATs (mostly ENG; SPA,
FRE, GER, JPN, RUS, CHI, ITA, POR, DUT), semantic types in DISO, CHEM, PROC, ANAT, GENE
(+ LIVB, PHYS, DEVI), a PAR/CHD hierarchy six levels deep with sibling groups, sources
above SRL 0 that a build must filter out. Buffers are bounded, and only the few thousand
concepts that questions need are kept in memory, so the 'full' preset (about 17M MRCONSO
rows) runs in bounded memory.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from .addition import ADDITION_LANG
from .heads import (MODS, ORG, category_head, drug_class_head, gene_family_head, gene_head,
                    head_spaces, latin_head, root_head)
from .lexicon import DRUG_STEMS, EPITHETS, EPONYM_SHARE, FEATURES, KIND_EN, SEMANTIC_TYPES, Head, render
from .presets import QUESTION_LANGS, Preset
from .rrf import RRFWriter, finish
from .source_model import (COVERAGE, ENG_OPEN, ENG_SOURCES, FN_TAG, KEY_GROUPS, LAT_OF, OPEN_SOURCE, OTHER_SOURCES,
                           SAB_INFO, SMALL_WORDS, Permuted, british, code_for, lui_key, style)

# Children per node by depth (a uniform draw from the list)
CHILDREN = {
    "DISO": {2: [0, 1, 1, 2, 2, 3, 3, 4, 5], 3: [0, 0, 1, 1, 2, 2, 3], 4: [0, 0, 0, 1, 1, 2]},
    "PROC": {2: [0, 1, 1, 2, 2, 3, 4], 3: [0, 0, 1, 1, 2, 3], 4: [0, 0, 1, 1, 2]},
    "CHEM": {2: [0, 0, 1, 1, 2, 3], 3: [0, 1, 1, 2, 3], 4: [0, 0, 1, 2]},
    "ANAT": {2: [0, 1, 2, 2], 3: [0, 1, 2, 3], 4: [0, 0, 1, 2]},
    "DEVI": {2: [0, 1, 2, 3]},
}
# Relative number of trees started per group (a tree: a head and its descendants)
TREE_WEIGHTS = {"DISO": 0.30, "CHEM": 0.38, "PROC": 0.14, "ANAT": 0.05, "GENE": 0.012, "LIVB": 0.03, "PHYS": 0.02, "DEVI": 0.02}
QUESTION_GROUP_WEIGHT = {"DISO": 1.0, "CHEM": 0.45, "PROC": 0.8, "ANAT": 0.5, "GENE": 0.35}
QUESTION_DEPTH_WEIGHT = {2: 1.0, 3: 0.8, 4: 0.4}
QUESTION_DEPTHS = {"DISO": (2, 3, 4), "PROC": (2, 3, 4), "CHEM": (2, 3), "ANAT": (2, 3), "GENE": (2,)}
ROLES = ["native:zh", "native:ja", "native:fr", "native:ru", "native:es", "en"]
ATOMS_PER_CONCEPT = 5.0  # measured; sizes the CUI gaps and the prior of the role rates


@dataclass
class Ref:
    """What a child needs of its parent (and the question stage of a concept)."""

    cui: str
    aui: str  # its first English atom (relations are asserted between atoms)
    en: str


@dataclass
class QConcept:
    """A concept kept for the question / passage / memory stage."""

    cui: str
    group: str
    tui: str
    depth: int
    en: str  # the name questions and passages use (an open English atom, lower-case form)
    name_en: str  # the English name the builder will choose (for concept-name memory entries)
    names: dict  # lang -> text: an open atom in that language if there is one, else the rendered name
    genders: dict  # lang -> gender of the head noun (fr, es)
    has_atom: dict  # lang -> bool (open atom)
    role: str


@dataclass
class NewConcept:
    """A concept while it is being written: what emit's steps pass to one another."""

    cui: str
    num: int  # the CUI's number (codes derive from it)
    head: Head
    mods: tuple
    group: str
    tui: str
    depth: int
    parents: list[Ref]
    en: str  # its English name as rendered
    role: str | None
    srcs: list[str] | None = None  # the English sources that name it
    atoms: list[tuple] | None = None  # (LAT, SAB, TTY, text)
    first_aui: str = ""


class Vocabulary:
    """Streams a UMLS-shaped vocabulary to RRF, tree by tree; keeps only what questions need."""

    def __init__(self, out: Path, preset: Preset, seed: int, registry: dict):
        self.rng = random.Random(f"vocabulary:{seed}")
        self.preset = preset
        self.target = preset.mrconso_rows
        self.w = RRFWriter(out)
        self.est_concepts = max(1000, int(self.target / ATOMS_PER_CONCEPT), preset.min_concepts)
        self.gap = max(1, int(1.6 * 9_400_000 / self.est_concepts) - 1)
        self.cui_num = self.rng.randint(5, 200)
        self.aui = Permuted("A", 8, 73939133, 10_000_019)
        self.lui = Permuted("L", 8, 48271 * 97, 1_234_567)
        self.sui = Permuted("S", 8, 16807 * 13, 7_654_321)
        self.atui = Permuted("AT", 9, 69621 * 7, 11_111_111)
        self.rui = Permuted("R", 9, 40692 * 11, 22_222_222)
        self.preferred_en = registry["en"]["preferred_sources"]
        self.preferred = {l: registry[l]["preferred_sources"] for l in QUESTION_LANGS + [ADDITION_LANG]}
        self.concepts = 0
        self.by_group: dict[str, int] = {}
        self.by_depth: dict[int, int] = {}
        self.tfr: dict[str, int] = {}  # atoms per source
        self.cfr: dict[str, int] = {}  # concepts per source
        self.by_lat: dict[str, int] = {}
        self.suppressed = 0
        self.multi_parent = 0
        # questions: what each role still needs, and how much eligible weight has gone by
        n = preset
        self.need = {"en": int((n.xqa_en + n.ev_en) * 1.12) + 20,
                     **{f"native:{l}": int((n.xqa_native + n.ev_native) * 1.15) + 6 for l in QUESTION_LANGS},
                     **{f"term:{l}": n.terms_per_lang for l in QUESTION_LANGS}}
        self.taken = {r: 0 for r in self.need}
        self.seen = {r: 0.0 for r in self.need}
        self.kept: list[QConcept] = []
        self.reservoir: list[tuple] = []
        self.reservoir_size = 20_000 if self.target < 100_000 else 60_000
        self.reservoir_seen = 0
        # hierarchy
        self.roots: dict[str, Ref] = {}
        self.categories: dict[tuple, Ref] = {}
        self.anat_organs: dict[int, Ref] = {}
        self.spaces = head_spaces(random.Random(self.rng.random()))

    # ------------------------------------------------------------------ identifiers
    def next_cui(self) -> str:
        self.cui_num += self.rng.randint(1, self.gap)
        if self.cui_num > 9_999_999:
            raise RuntimeError("CUI space exhausted: raise ATOMS_PER_CONCEPT")
        return "C%07d" % self.cui_num

    # ------------------------------------------------------------------ roles
    def _role(self, group: str, depth: int) -> str | None:
        if group not in QUESTION_DEPTHS or depth not in QUESTION_DEPTHS[group]:
            return None
        w = QUESTION_GROUP_WEIGHT[group] * QUESTION_DEPTH_WEIGHT[depth]
        rows = self.w.rows["MRCONSO.RRF"]
        remaining = max(0, self.target - rows)
        u = self.rng.random()
        acc = 0.0
        for role in ROLES:
            if role != "en" and group not in OPEN_SOURCE[role[7:]]:
                continue
            self.seen[role] += w
            left = self.need[role] - self.taken[role]
            if left <= 0:
                continue
            rate = (self.seen[role] + 100.0) / (rows + 1000.0)
            expected = rate * remaining
            acc += min(1.0, w * left / max(expected, w))
            if u < acc:
                self.taken[role] += 1
                return role
        return None

    def _term_role(self, group: str, depth: int, open_langs: set) -> str | None:
        if group not in KEY_GROUPS or depth < 2 or depth > 4:
            return None
        rows = self.w.rows["MRCONSO.RRF"]
        remaining = max(0, self.target - rows)
        u = self.rng.random()
        acc = 0.0
        for l in QUESTION_LANGS:
            if l in open_langs:
                continue
            role = "term:" + l
            self.seen[role] += 1
            left = self.need[role] - self.taken[role]
            if left <= 0:
                continue
            rate = (self.seen[role] + 100.0) / (rows + 1000.0)
            acc += min(1.0, left / max(rate * remaining, 1.0))
            if u < acc:
                self.taken[role] += 1
                return role
        return None

    # ------------------------------------------------------------------ one concept
    def emit(self, head: Head, mods: tuple, group: str, tui: str, depth: int, parents: list[Ref],
             question_ok: bool = True) -> Ref:
        """Write one concept (atoms, semantic types, relations, maybe a definition); keep it
        if a question, a memory entry or a background passage needs it."""
        cui = self.next_cui()
        en = render(head, mods, "en")
        role = self._role(group, depth) if question_ok else None
        c = NewConcept(cui, self.cui_num, head, mods, group, tui, depth, parents, en, role)
        c.srcs, c.atoms = self._english_atoms(c)
        open_langs = self._other_atoms(c)
        name_en = self._write_atoms(c)
        self._write_types_and_relations(c)
        pdef = .45 if depth <= 2 else .25 if depth == 3 else .1
        if self.rng.random() < pdef:
            self.w.add("MRDEF.RRF", self._definitions(c))
        self.concepts += 1
        self.by_group[group] = self.by_group.get(group, 0) + 1
        self.by_depth[depth] = self.by_depth.get(depth, 0) + 1
        if not role and name_en:
            role = self._term_role(group, depth, open_langs)
        if role:
            self._keep(c, name_en, role)
        if group in KEY_GROUPS and depth >= 2 and name_en:
            self._sample_background((en, group, tui, head.organ))
        return Ref(cui, c.first_aui, en)

    def _english_atoms(self, c: NewConcept) -> tuple[list[str], list[tuple]]:
        """The English sources that name the concept and their atoms: (LAT, SAB, TTY, text)."""
        rng, group, en = self.rng, c.group, c.en
        words = en.split(" ")
        srcs = [s for s, p in ENG_SOURCES[group] if rng.random() < p] or [ENG_SOURCES[group][0][0]]
        if c.role and not any(SAB_INFO[s][1] == 0 for s in srcs):
            srcs.append(ENG_OPEN[group][0])
        atoms = []
        for s in srcs:
            info = SAB_INFO[s]
            atoms.append(("ENG", s, info[3], style(en, info[5])))
            if s == "SNOMEDCT_US":
                atoms.append(("ENG", s, "FN", style(en, "cap") + f" ({FN_TAG[group]})"))
            elif s == "HGNC" and c.head.key.startswith("gene:"):
                atoms.append(("ENG", s, "ACR", words[0]))
        open_srcs = [s for s in srcs if SAB_INFO[s][1] == 0]
        for v in self._english_variants(c, words):  # entry terms come mostly from the open sources that name it
            pool = open_srcs if open_srcs and rng.random() < .75 else srcs
            s = pool[rng.randrange(len(pool))]
            atoms.append(("ENG", s, SAB_INFO[s][4], style(v, SAB_INFO[s][5]) if s != "MTHSPL" else v.upper()))
        content = [w for w in words if w not in SMALL_WORDS]
        if len(content) >= 3 and rng.random() < .12 and all(w.isalpha() for w in content):
            s = "NCI" if "NCI" in srcs else srcs[0]
            atoms.append(("ENG", s, "AB", "".join(w[0] for w in content[:5]).upper()))
        return srcs, atoms

    def _english_variants(self, c: NewConcept, words: list[str]) -> list[str]:
        """Entry terms: MeSH-style inverted, British spelling, the gloss, '... NOS'."""
        rng, en = self.rng, c.en
        variants = []
        if c.group in ("DISO", "PROC", "ANAT", "PHYS", "DEVI") and len(words) >= 2 and " with " not in en and rng.random() < .55:
            variants.append(words[-1] + ", " + " ".join(words[:-1]))  # MeSH-style inverted entry term
        b = british(en)
        if b != en and rng.random() < .8:
            variants.append(b)
        if c.head.gloss and not c.mods and rng.random() < .7:
            variants.append(c.head.gloss)
        if rng.random() < (.25 if len(words) == 1 and c.group in ("DISO", "PROC") else .03):
            variants.append(en + " NOS")
        return variants

    def _other_atoms(self, c: NewConcept) -> set[str]:
        """Atoms in the other languages (appended to c.atoms); the languages with an open atom."""
        rng, group = self.rng, c.group
        factor = 1.0 if c.depth <= 2 else max(0.35, 1.0 - 0.15 * (c.depth - 2))
        native = c.role[7:] if c.role and c.role.startswith("native:") else None
        open_langs = set()
        for lang, p in COVERAGE.get(group, {}).items():
            if lang not in c.head.langs:
                continue
            forced = lang == native
            if not forced and rng.random() >= p * factor:
                continue
            applicable = [(s, q) for s, g, q in OTHER_SOURCES[lang] if g == "*" or group in g.split()]
            chosen = [s for s, q in applicable if rng.random() < q] or [applicable[0][0]]
            if forced and OPEN_SOURCE[lang][group] not in chosen:
                chosen.append(OPEN_SOURCE[lang][group])
            text = render(c.head, c.mods, lang)
            lat = LAT_OF[lang]
            for s in chosen:
                info = SAB_INFO[s]
                c.atoms.append((lat, s, info[3], style(text, info[5])))
                if info[1] == 0:
                    open_langs.add(lang)
            if lat in ("FRE", "SPA", "RUS", "ITA", "POR") and rng.random() < .1:
                s = chosen[-1]
                c.atoms.append((lat, s, SAB_INFO[s][4], style(text, "cap" if SAB_INFO[s][5] != "cap" else "lower")))
        return open_langs

    def _write_atoms(self, c: NewConcept) -> str:
        """MRCONSO rows of the atoms; returns the English name the builder will choose ('' if none)."""
        rows = []
        ids = _AtomIds()
        name_en_key = None
        rank = self.preferred_en
        for lat, sab, tty, text in c.atoms:
            ts, lui, stt, sui, ispref = ids.lexical(self, lat, text)
            sup = self._suppress() if not c.role else "N"
            kind = SAB_INFO[sab][6]
            codes = ids.codes.get(kind)
            if codes is None:
                codes = ids.codes[kind] = code_for(kind, c.num)
            saui = codes[0] if kind == "sct" else ("T%06d" % (int(lui[1:]) % 1_000_000) if kind == "msh" else "")
            aui = self.aui()
            if not c.first_aui and lat == "ENG":
                c.first_aui = aui
            srl = SAB_INFO[sab][1]
            rows.append(f"{c.cui}|{lat}|{ts}|{lui}|{stt}|{sui}|{ispref}|{aui}|{saui}|{codes[1]}|{codes[2]}|{sab}|{tty}|"
                        f"{codes[3]}|{text}|{srl}|{sup}||\n")
            self.tfr[sab] = self.tfr.get(sab, 0) + 1
            self.by_lat[lat] = self.by_lat.get(lat, 0) + 1
            if lat == "ENG" and srl == 0 and sup != "O":
                key = (ispref == "N", rank.index(sab) if sab in rank else len(rank), text)
                if name_en_key is None or key < name_en_key:
                    name_en_key = key
        for sab in {a[1] for a in c.atoms}:
            self.cfr[sab] = self.cfr.get(sab, 0) + 1
        self.w.add("MRCONSO.RRF", rows)
        return name_en_key[2] if name_en_key else ""

    def _suppress(self) -> str:
        """SUPPRESS of an atom of a concept no question names: mostly N, some O, E, Y."""
        u = self.rng.random()
        sup = "O" if u < .015 else "E" if u < .019 else "Y" if u < .035 else "N"
        if sup != "N":
            self.suppressed += 1
        return sup

    def _write_types_and_relations(self, c: NewConcept) -> None:
        """MRSTY rows, then PAR/CHD to the parents and, for some disorders, a finding site."""
        rng, cui, aui = self.rng, c.cui, c.first_aui
        tuis = [c.tui]
        if c.group == "CHEM" and c.tui == "T121" and rng.random() < .5:
            tuis.append("T109")
        self.w.add("MRSTY.RRF", [f"{cui}|{t}|{SEMANTIC_TYPES[t][0]}|{SEMANTIC_TYPES[t][1]}|{self.atui()}||\n" for t in sorted(tuis)])
        rel_sab = c.srcs[0]
        rels = []
        for p in c.parents:
            rela, inv = ("isa", "inverse_isa") if rel_sab == "SNOMEDCT_US" else ("", "")
            rels.append(f"{cui}|{aui}|AUI|PAR|{p.cui}|{p.aui}|AUI|{rela}|{self.rui()}||{rel_sab}|{rel_sab}||Y|N||\n")
            rels.append(f"{p.cui}|{p.aui}|AUI|CHD|{cui}|{aui}|AUI|{inv}|{self.rui()}||{rel_sab}|{rel_sab}|||N||\n")
        if len(c.parents) > 1:
            self.multi_parent += 1
        if c.group == "DISO" and c.depth == 2 and rng.random() < .6:
            site = self.anat_organs.get(self._organ_index(c.head))
            if site is not None:
                rels.append(f"{cui}|{aui}|AUI|RO|{site.cui}|{site.aui}|AUI|has_finding_site|{self.rui()}||SNOMEDCT_US|SNOMEDCT_US|1|Y|N||\n")
                rels.append(f"{site.cui}|{site.aui}|AUI|RO|{cui}|{aui}|AUI|finding_site_of|{self.rui()}||SNOMEDCT_US|SNOMEDCT_US|1||N||\n")
        if rels:
            self.w.add("MRREL.RRF", rels)

    def _sample_background(self, item: tuple) -> None:
        """Reservoir sampling of the concepts background passages may name."""
        self.reservoir_seen += 1
        if len(self.reservoir) < self.reservoir_size:
            self.reservoir.append(item)
        else:
            j = self.rng.randrange(self.reservoir_seen)
            if j < self.reservoir_size:
                self.reservoir[j] = item

    @staticmethod
    def _organ_index(head: Head) -> int:
        parts = head.key.split(":")
        return int(parts[2]) if parts[0] in ("d", "c", "e") else int(parts[1]) if parts[0] == "l" else -1

    def _keep(self, c: NewConcept, name_en: str, role: str) -> None:
        names, has_atom, genders = {}, {}, {}
        for l in QUESTION_LANGS + [ADDITION_LANG]:  # deterministic, no random draws: the others stay as they were
            lat = LAT_OF[l]
            opens = [(self.preferred[l].index(a[1]) if a[1] in self.preferred[l] else 99, a[3])
                     for a in c.atoms if a[0] == lat and SAB_INFO[a[1]][1] == 0]
            if opens:
                text = min(opens)[1]
                if l in ("fr", "es", "ru") and text[:1].isupper() and text[1:2].islower():
                    text = text[0].lower() + text[1:]
                names[l], has_atom[l] = text, True
            else:
                names[l], has_atom[l] = render(c.head, c.mods, l), False
            genders[l] = c.head.forms[l][1] if l in c.head.forms else ""
        self.kept.append(QConcept(c.cui, c.group, c.tui, c.depth, c.en, name_en, names, genders, has_atom, role))

    def _definitions(self, c: NewConcept) -> list[str]:
        rng, en, group, tui, head, parents = self.rng, c.en, c.group, c.tui, c.head, c.parents
        cap = en[:1].upper() + en[1:]
        parent = parents[0].en if parents else ""
        organ = head.organ or "body"
        if group == "DISO":
            f1, f2 = rng.sample(FEATURES, 2)
            kind = KIND_EN.get(tui, "disorder")
            text = rng.choice([
                f"{cap}: a {kind} of the {organ} characterized by {f1} and {f2}.",
                f"A {kind} affecting the {organ}, with {f1} and {f2}; a form of {parent}.",
                f"{cap} is a {kind} of the {organ} in which {f1} leads to {f2}.",
            ])
        elif group == "CHEM":
            text = rng.choice([f"{cap} is a {organ} used in clinical practice; it is given by mouth or by injection.",
                               f"A {organ} whose dose is adjusted to renal function; a form of {parent}."])
        elif group == "PROC":
            text = rng.choice([f"{cap}: a procedure performed on the {organ}.",
                               f"A procedure on the {organ}, a variant of {parent}."])
        elif group == "ANAT":
            text = f"{cap}: a part of the {organ}."
        elif group == "GENE":
            text = f"{cap}: a protein-coding gene of the {organ} gene family."
        else:
            text = f"{cap}: a {SEMANTIC_TYPES[tui][1].lower()}."
        opens = [s for s in c.srcs if SAB_INFO[s][1] == 0 and SAB_INFO[s][0] == "ENG"] or ["MSH"]
        return [f"{c.cui}|{c.first_aui}|{self.atui()}||{opens[0]}|{text}|N||\n"]

    # ------------------------------------------------------------------ trees
    def root(self, group: str) -> Ref:
        if group not in self.roots:
            h = root_head(group)
            self.roots[group] = self.emit(h, (), group, h.tui, 0, [], question_ok=False)
        return self.roots[group]

    def category(self, group: str, key) -> Ref:
        ref = self.categories.get((group, key))
        if ref is None:
            if group in ("DISO", "PROC"):
                h = category_head(ORG[key], group, f"cat:{group}:{key}")
            elif group == "ANAT":
                h = category_head(ORG[key], "ANAT", f"organ:{key}")
            else:  # CHEM: a drug class
                h = drug_class_head(DRUG_STEMS[key])
            ref = self.categories[(group, key)] = self.emit(h, (), group, h.tui, 1, [self.root(group)], question_ok=False)
            if group == "ANAT":
                self.anat_organs[key] = ref
        return ref

    def children(self, group: str, head: Head, mods: tuple, ref: Ref, tui: str, depth: int, next_cat: int) -> None:
        table = CHILDREN.get(group, {})
        if depth not in table or depth >= 5:
            return
        cats = MODS[group]
        if next_cat >= len(cats):
            return
        rng = self.rng
        used = set()
        for _ in range(rng.choice(table[depth])):
            c = next_cat if (rng.random() < .7 or next_cat == len(cats) - 1) else rng.randrange(next_cat + 1, len(cats))
            mod = cats[c][rng.randrange(len(cats[c]))]
            if mod.key in used:
                continue
            used.add(mod.key)
            child_mods = mods + (mod,)
            child_tui = "T200" if group == "CHEM" and c >= 1 else tui
            child = self.emit(head, child_mods, group, child_tui, depth + 1, [ref])
            self.children(group, head, child_mods, child, child_tui, depth + 1, c + 1)

    def tree(self, group: str) -> bool:
        nxt = self.spaces[group].next()
        if nxt is None:
            return False
        rng = self.rng
        if group == "GENE":
            fam = nxt
            fref = self.emit(gene_family_head(fam), (), group, "T028", 1, [self.root(group)], question_ok=False)
            for k in range(1, rng.randint(3, 25) + 1):
                self.emit(gene_head(f"{fam}{k}", fam), (), group, "T028", 2, [fref])
            return True
        if group == "LIVB":
            genus = nxt
            gref = self.emit(latin_head(genus, "T007", "genus:" + genus), (), group, "T007", 1, [self.root(group)])
            epithets = [o["la"] for o in ORG] + EPITHETS
            for e in rng.sample(epithets, rng.randint(2, 6)):
                self.emit(latin_head(f"{genus} {e}", "T007", f"sp:{genus}:{e}"), (), group, "T007", 2, [gref])
            return True
        if group == "DISO" and rng.random() < EPONYM_SHARE:
            nxt = self.spaces["DISO_EPONYM"].next() or nxt  # the drawn head stays unused: space enough
        head, keys = nxt
        if group in ("PHYS", "DEVI"):
            ref = self.emit(head, (), group, head.tui, 1, [self.root(group)])
            if group == "DEVI":
                self.children(group, head, (), ref, head.tui, 2, 0)
            return True
        parents = [self.category(group, k) for k in keys]
        ref = self.emit(head, (), group, head.tui, 2, parents)
        self.children(group, head, (), ref, head.tui, 2, 0)
        return True

    def run(self) -> None:
        groups = list(TREE_WEIGHTS)
        weights = [TREE_WEIGHTS[g] for g in groups]
        for g in groups:
            self.root(g)
        while self.w.rows["MRCONSO.RRF"] < self.target or self.concepts < self.preset.min_concepts:
            g = self.rng.choices(groups, weights)[0]
            if not self.tree(g):
                weights[groups.index(g)] = 0.0
                if not any(weights):
                    raise RuntimeError("every head space is exhausted")
        finish(self.w, self.tfr, self.cfr)


class _AtomIds:
    """Lexical identifiers within one concept: a LUI per normalized string, a SUI per string,
    the preferred LUI per language and the preferred form per LUI."""

    def __init__(self):
        self.luis: dict = {}
        self.suis: dict = {}
        self.pref_lui: dict = {}
        self.pf: dict = {}
        self.seen_sui: set = set()
        self.codes: dict = {}  # code kind -> (SAUI, SCUI, SDUI, CODE)

    def lexical(self, vocab: Vocabulary, lat: str, text: str) -> tuple[str, str, str, str, str]:
        """(TS, LUI, STT, SUI, ISPREF) of an atom, in the order of the concept's atoms."""
        k = (lat, lui_key(text))
        lui = self.luis.get(k)
        if lui is None:
            lui = self.luis[k] = vocab.lui()
        sui = self.suis.get((lat, text))
        if sui is None:
            sui = self.suis[(lat, text)] = vocab.sui()
        ts = "P" if self.pref_lui.setdefault(lat, lui) == lui else "S"
        first = self.pf.setdefault(lui, text)
        stt = "PF" if first == text else ("VC" if first.lower() == text.lower() else "VW")
        ispref = "N" if sui in self.seen_sui else "Y"
        self.seen_sui.add(sui)
        return ts, lui, stt, sui, ispref
