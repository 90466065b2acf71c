"""Synthetic, paper-scale inputs for an MMed-Bench-IR build: deterministic, streaming.

    python benchmarks/generate_scale.py --preset paper --out DIR --seed 0

Writes, under DIR (default benchmarks/out/scale-<preset>/):

  umls/MRCONSO.RRF MRSTY.RRF MRREL.RRF MRDEF.RRF MRSAB.RRF MRFILES.RRF
        genuine RRF (18 MRCONSO fields plus the trailing '|', ...): C+7-digit CUIs in
        increasing order, A/L/S/AT/R identifiers, several atoms per concept from several
        sources (PT, SY, MH, ET, FN, AB, ACR, ...), some suppressed (SUPPRESS=O/E/Y), a mix
        of LATs (mostly ENG; SPA, FRE, GER, JPN, RUS, CHI, ITA, POR, DUT), semantic types in
        DISO, CHEM, PROC, ANAT, GENE (+ LIVB, PHYS, DEVI), a PAR/CHD hierarchy six levels
        deep with sibling groups, sources above SRL 0 that a build must filter out.
  sources/xqa.jsonl, sources/evidence.jsonl
        'sample-jsonl' items: English questions from templates, native zh/ja/fr/ru/es
        questions (templates in those languages, the concept's atom in that language, an
        English pivot), each with an English answer or evidence passage (60-150 words);
        a few percent deliberate near-duplicates (same-language and cross-lingual).
  sources/background.jsonl
        the rest of the evidence corpus (abstract-style passages).
  tm/memory.jsonl
        translation memory en -> zh/ja/fr/ru/es for most English questions (same template
        in the target language, the concept's atom there where one exists), plus concept
        names (terms) for the concept-discrimination task.
  config.toml, languages.toml
        a build configuration with paths relative to DIR (the registry is copied from
        configs/languages.toml so that DIR is self-contained) and the preset's quotas.
  generation.json
        the counts (no clock time: two runs with the same seed give identical bytes).

Concept names are composed from morpheme lists written here (prefix + root + suffix ->
'hypernephritis', 'hepatonephritis'; organ adjective + lesion -> 'renal cyst'; drug stems
-> 'lorvastatin'; modifiers down the hierarchy -> 'severe chronic autoimmune nephritis'),
rendered in English, French, Spanish, German, Russian (Cyrillic), Japanese (kanji/kana)
and Chinese (Han), with gender agreement where the language has it. Everything is
streamed: the vocabulary is written tree by tree with bounded buffers, and only the few
thousand concepts that questions need are kept in memory, so the 'full' preset
(about 17M MRCONSO rows) runs in bounded memory.
"""
from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import sys
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # its sibling, when imported by path (tests)
from scale_addition import ADDITION_LANG, addition_config, write_addition_memory  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
REGISTRY = ROOT / "configs" / "languages.toml"
QUESTION_LANGS = ["zh", "ja", "fr", "ru", "es"]  # native / translated languages besides en


# ============================================================================ presets
@dataclass(frozen=True)
class Preset:
    name: str
    mrconso_rows: int  # generation stops at the first tree that reaches it (and min_concepts)
    xqa_en: int
    xqa_native: int  # per non-English language
    ev_en: int
    ev_native: int
    background: int  # evidence passages beyond the items' own
    terms_per_lang: int  # translation-memory entries for concept names, per language
    quotas: dict = field(default_factory=dict)
    tm_share: float = 0.88  # share of English questions with a memory entry, per language
    dup_share: float = 0.025  # same-language near-duplicates of English questions
    xdup_share: float = 0.007  # cross-lingual duplicates (a native question = an English one)
    exact_share: float = 0.003  # exact duplicates under another id
    min_concepts: int = 0  # ... and keeps going until the vocabulary has this many concepts


PAPER_QUOTAS = {"xqa": 1021, "evidence": 340, "cd": 829}
# 'full': the size of a full UMLS release, with the questions, passages, memory and quotas
# of 'paper' (issue #14: at least 16M MRCONSO rows and 3M concepts). A release of 2024AA has
# about 3.38M concepts from 187 source vocabularies (https://grokipedia.com/page/unified_medical_language_system,
# citing NLM); a 2017AA MRCONSO held about 3.4M CUIs (https://github.com/cambridgeltl/sapbert/issues/3).
# The language mix (COVERAGE, OTHER_SOURCES) is this generator's own estimate: published
# per-LAT counts of a recent release were not found (NLM's statistics page was not reachable
# from here); the one public per-language breakdown found is 2003AA's MRCON (82.6% English,
# then German, Spanish, Portuguese, Russian, ...: http://www.d.umn.edu/~mich0212/research/UMLS/umls-notes.txt),
# far older than SNOMED CT's Spanish edition, MedDRA's Japanese and HPO's Chinese.
PRESETS = {
    "tiny": Preset("tiny", 20_000, 260, 30, 130, 12, 1_400, 60, {"xqa": 50, "evidence": 20, "cd": 40}),
    "paper": Preset("paper", 3_050_000, 6_500, 500, 3_200, 200, 96_000, 2_000, PAPER_QUOTAS),
    "full": Preset("full", 17_000_000, 6_500, 500, 3_200, 200, 96_000, 2_000, PAPER_QUOTAS, min_concepts=3_000_000),
}


# ============================================================================ lexicon
def _rows(text: str) -> list[list[str]]:
    return [[c.strip() for c in line.split("|")] for line in text.strip().splitlines() if line.strip()]


def _ng(cell: str) -> tuple[str, str]:
    """'rein m' -> ('rein', 'm'): a noun and its gender."""
    word, g = cell.rsplit(" ", 1)
    return word, g


# Organs: en root | en adjective | en noun | fr root | fr adj | fr noun g | es root | es adj |
# es noun g | de root | de compound stem | de noun g | ru root | ru adj | ru noun g |
# ja root | ja noun | zh root | zh noun | Latin adjective
ORGANS = _rows("""
nephr|renal|kidney|néphr|rénal|rein m|nefr|renal|riñón m|Nephr|Nieren|Niere f|нефр|почечный|почка f|腎|腎臓|肾|肾脏|renalis
hepat|hepatic|liver|hépat|hépatique|foie m|hepat|hepático|hígado m|Hepat|Leber|Leber f|гепат|печёночный|печень f|肝|肝臓|肝|肝脏|hepaticus
cardi|cardiac|heart|cardi|cardiaque|cœur m|cardi|cardíaco|corazón m|Kardi|Herz|Herz n|карди|сердечный|сердце n|心|心臓|心|心脏|cardiacus
thyroid|thyroid|thyroid gland|thyroïd|thyroïdien|thyroïde f|tiroid|tiroideo|tiroides f|Thyreoid|Schilddrüsen|Schilddrüse f|тиреоид|тиреоидный|щитовидная железа f|甲状腺|甲状腺|甲状腺|甲状腺|thyroideus
gastr|gastric|stomach|gastr|gastrique|estomac m|gastr|gástrico|estómago m|Gastr|Magen|Magen m|гастр|желудочный|желудок m|胃|胃|胃|胃|gastricus
enter|intestinal|intestine|entér|intestinal|intestin m|enter|intestinal|intestino m|Enter|Darm|Darm m|энтер|кишечный|кишечник m|腸|腸|肠|肠|intestinalis
col|colonic|colon|col|colique|côlon m|col|colónico|colon m|Kol|Dickdarm|Dickdarm m|кол|ободочный|ободочная кишка f|結腸|結腸|结肠|结肠|colicus
pneum|pulmonary|lung|pneum|pulmonaire|poumon m|neum|pulmonar|pulmón m|Pneum|Lungen|Lunge f|пневм|лёгочный|лёгкое n|肺|肺|肺|肺|pulmonalis
bronch|bronchial|bronchus|bronch|bronchique|bronche f|bronqu|bronquial|bronquio m|Bronch|Bronchial|Bronchus m|бронх|бронхиальный|бронх m|気管支|気管支|支气管|支气管|bronchialis
neur|neural|nerve|neur|nerveux|nerf m|neur|nervioso|nervio m|Neur|Nerven|Nerv m|невр|нервный|нерв m|神経|神経|神经|神经|nervosus
encephal|cerebral|brain|encéphal|cérébral|cerveau m|encefal|cerebral|cerebro m|Enzephal|Hirn|Gehirn n|энцефал|мозговой|головной мозг m|脳|脳|脑|脑|cerebralis
myel|spinal|spinal cord|myél|médullaire|moelle épinière f|miel|medular|médula espinal f|Myel|Rückenmark|Rückenmark n|миел|спинномозговой|спинной мозг m|脊髄|脊髄|脊髓|脊髓|spinalis
oste|osseous|bone|osté|osseux|os m|oste|óseo|hueso m|Oste|Knochen|Knochen m|осте|костный|кость f|骨|骨|骨|骨|osseus
arthr|articular|joint|arthr|articulaire|articulation f|artr|articular|articulación f|Arthr|Gelenk|Gelenk n|артр|суставной|сустав m|関節|関節|关节|关节|articularis
my|muscular|muscle|my|musculaire|muscle m|mi|muscular|músculo m|My|Muskel|Muskel m|ми|мышечный|мышца f|筋|筋肉|肌|肌肉|muscularis
derm|cutaneous|skin|derm|cutané|peau f|derm|cutáneo|piel f|Derm|Haut|Haut f|дерм|кожный|кожа f|皮膚|皮膚|皮肤|皮肤|cutaneus
angi|vascular|blood vessel|angi|vasculaire|vaisseau sanguin m|angi|vascular|vaso sanguíneo m|Angi|Gefäß|Blutgefäß n|анги|сосудистый|кровеносный сосуд m|血管|血管|血管|血管|vascularis
aort|aortic|aorta|aort|aortique|aorte f|aort|aórtico|aorta f|Aort|Aorten|Aorta f|аорт|аортальный|аорта f|大動脈|大動脈|主动脉|主动脉|aorticus
pancreat|pancreatic|pancreas|pancréat|pancréatique|pancréas m|pancreat|pancreático|páncreas m|Pankreat|Bauchspeicheldrüsen|Bauchspeicheldrüse f|панкреат|панкреатический|поджелудочная железа f|膵|膵臓|胰|胰腺|pancreaticus
splen|splenic|spleen|splén|splénique|rate f|esplen|esplénico|bazo m|Splen|Milz|Milz f|сплен|селезёночный|селезёнка f|脾|脾臓|脾|脾脏|splenicus
cyst|vesical|urinary bladder|cyst|vésical|vessie f|cist|vesical|vejiga f|Zyst|Blasen|Harnblase f|цист|пузырный|мочевой пузырь m|膀胱|膀胱|膀胱|膀胱|vesicalis
prostat|prostatic|prostate|prostat|prostatique|prostate f|prostat|prostático|próstata f|Prostat|Prostata|Prostata f|простат|простатический|предстательная железа f|前立腺|前立腺|前列腺|前列腺|prostaticus
oophor|ovarian|ovary|ovar|ovarien|ovaire m|ovar|ovárico|ovario m|Oophor|Eierstock|Eierstock m|оофор|яичниковый|яичник m|卵巣|卵巣|卵巢|卵巢|ovaricus
metr|uterine|uterus|métr|utérin|utérus m|metr|uterino|útero m|Metr|Gebärmutter|Gebärmutter f|метр|маточный|матка f|子宮|子宮|子宫|子宫|uterinus
ophthalm|ocular|eye|ophtalm|oculaire|œil m|oftalm|ocular|ojo m|Ophthalm|Augen|Auge n|офтальм|глазной|глаз m|眼|眼|眼|眼|ocularis
ot|otic|ear|ot|otique|oreille f|ot|ótico|oído m|Ot|Ohr|Ohr n|от|ушной|ухо n|耳|耳|耳|耳|oticus
rhin|nasal|nose|rhin|nasal|nez m|rin|nasal|nariz f|Rhin|Nasen|Nase f|рин|носовой|нос m|鼻|鼻|鼻|鼻|nasalis
laryng|laryngeal|larynx|laryng|laryngé|larynx m|laring|laríngeo|laringe f|Laryng|Kehlkopf|Kehlkopf m|ларинг|гортанный|гортань f|喉頭|喉頭|喉|喉|laryngeus
esophag|esophageal|esophagus|œsophag|œsophagien|œsophage m|esofag|esofágico|esófago m|Ösophag|Speiseröhren|Speiseröhre f|эзофаг|пищеводный|пищевод m|食道|食道|食管|食管|oesophageus
adren|adrenal|adrenal gland|adrén|surrénal|glande surrénale f|adren|suprarrenal|glándula suprarrenal f|Adren|Nebennieren|Nebenniere f|адрен|надпочечниковый|надпочечник m|副腎|副腎|肾上腺|肾上腺|suprarenalis
lymphaden|lymphatic|lymph node|lymphadén|ganglionnaire|ganglion lymphatique m|linfaden|ganglionar|ganglio linfático m|Lymphaden|Lymphknoten|Lymphknoten m|лимфаден|лимфатический|лимфатический узел m|リンパ節|リンパ節|淋巴结|淋巴结|lymphaticus
cholecyst|gallbladder|gallbladder|cholécyst|vésiculaire|vésicule biliaire f|colecist|vesicular|vesícula biliar f|Cholezyst|Gallenblasen|Gallenblase f|холецист|желчнопузырный|желчный пузырь m|胆嚢|胆嚢|胆囊|胆囊|biliaris
mast|mammary|breast|mast|mammaire|sein m|mast|mamario|mama f|Mast|Brust|Brust f|маст|грудной|молочная железа f|乳腺|乳房|乳腺|乳房|mammarius
gingiv|gingival|gum|gingiv|gingival|gencive f|gingiv|gingival|encía f|Gingiv|Zahnfleisch|Zahnfleisch n|гингив|десневой|десна f|歯肉|歯肉|牙龈|牙龈|gingivalis
pleur|pleural|pleura|pleur|pleural|plèvre f|pleur|pleural|pleura f|Pleur|Pleura|Pleura f|плевр|плевральный|плевра f|胸膜|胸膜|胸膜|胸膜|pleuralis
urethr|urethral|urethra|urétr|urétral|urètre m|uretr|uretral|uretra f|Urethr|Harnröhren|Harnröhre f|уретр|уретральный|уретра f|尿道|尿道|尿道|尿道|urethralis
gloss|lingual|tongue|gloss|lingual|langue f|glos|lingual|lengua f|Gloss|Zungen|Zunge f|глосс|язычный|язык m|舌|舌|舌|舌|lingualis
phleb|venous|vein|phléb|veineux|veine f|fleb|venoso|vena f|Phleb|Venen|Vene f|флеб|венозный|вена f|静脈|静脈|静脉|静脉|venosus
""")

# Prefixes of single-word disorder names: en | fr | es | de | ru | ja | zh
PREFIXES = _rows("""
hyper|hyper|hiper|Hyper|гипер|過|高
hypo|hypo|hipo|Hypo|гипо|低|低
dys|dys|dis|Dys|дис|異形|异形
poly|poly|poli|Poly|поли|多発性|多发性
micro|micro|micro|Mikro|микро|微小|微小
macro|macro|macro|Makro|макро|巨大|巨大
pan|pan|pan|Pan|пан|汎|全
peri|péri|peri|Peri|пери|周囲|周围
endo|endo|endo|Endo|эндо|内|内
para|para|para|Para|пара|傍|旁
neo|néo|neo|Neo|нео|新生|新生
hemi|hémi|hemi|Hemi|геми|片側|偏侧
pseudo|pseudo|seudo|Pseudo|псевдо|偽|假性
""")

# Disorder suffixes: en | fr g | es g | de g | ru g | ja | zh | TUI | English gloss
DISO_SUFFIXES = _rows("""
itis|ite f|itis f|itis f|ит m|炎|炎|T047|inflammation of the {noun}
osis|ose f|osis f|ose f|оз m|症|病|T047|degeneration of the {noun}
opathy|opathie f|opatía f|opathie f|опатия f|障害|病|T047|
omegaly|omégalie f|omegalia f|omegalie f|омегалия f|肥大|肿大|T046|enlargement of the {noun}
algia|algie f|algia f|algie f|алгия f|痛|痛|T184|pain in the {noun}
oma|ome m|oma m|om n|ома f|腫|瘤|T191|tumor of the {noun}
oblastoma|oblastome m|oblastoma m|oblastom n|областома f|芽腫|母细胞瘤|T191|
ocarcinoma|ocarcinome m|ocarcinoma m|okarzinom n|окарцинома f|癌腫|癌肿|T191|
osclerosis|osclérose f|osclerosis f|osklerose f|осклероз m|硬化症|硬化症|T047|sclerosis of the {noun}
orrhagia|orragie f|orragia f|orrhagie f|оррагия f|出血症|出血症|T046|bleeding from the {noun}
ectasia|ectasie f|ectasia f|ektasie f|эктазия f|拡張症|扩张症|T046|dilatation of the {noun}
olithiasis|olithiase f|olitiasis f|olithiasis f|олитиаз m|結石症|结石病|T047|stones in the {noun}
omalacia|omalacie f|omalacia f|omalazie f|омаляция f|軟化症|软化症|T046|softening of the {noun}
optosis|optose f|optosis f|optose f|оптоз m|下垂症|下垂|T046|prolapse of the {noun}
ostenosis|osténose f|ostenosis f|ostenose f|остеноз m|狭窄症|狭窄症|T046|narrowing of the {noun}
oplasia|oplasie f|oplasia f|oplasie f|оплазия f|形成異常|发育异常|T019|abnormal development of the {noun}
otrophy|otrophie f|otrofia f|otrophie f|отрофия f|栄養障害|营养不良|T047|
orrhea|orrhée f|orrea f|orrhö f|оррея f|漏|溢|T184|discharge from the {noun}
""")

# Lesions (organ adjective + lesion): en | fr g | es g | de tail g | ru g | ja | zh | TUI
LESIONS = _rows("""
cyst|kyste m|quiste m|zyste f|киста f|嚢胞|囊肿|T047
abscess|abcès m|absceso m|abszess m|абсцесс m|膿瘍|脓肿|T047
infarction|infarctus m|infarto m|infarkt m|инфаркт m|梗塞|梗死|T047
hemorrhage|hémorragie f|hemorragia f|blutung f|кровотечение n|出血|出血|T046
stenosis|sténose f|estenosis f|stenose f|стеноз m|狭窄|狭窄|T046
insufficiency|insuffisance f|insuficiencia f|insuffizienz f|недостаточность f|機能不全|功能减退|T047
ulcer|ulcère m|úlcera f|ulkus n|язва f|潰瘍|溃疡|T047
polyp|polype m|pólipo m|polyp m|полип m|ポリープ|息肉|T191
lesion|lésion f|lesión f|läsion f|поражение n|病変|病变|T047
calculus|calcul m|cálculo m|stein m|камень m|結石|结石|T047
nodule|nodule m|nódulo m|knoten m|узел m|結節|结节|T033
atrophy|atrophie f|atrofia f|atrophie f|атрофия f|萎縮|萎缩|T046
hyperplasia|hyperplasie f|hiperplasia f|hyperplasie f|гиперплазия f|過形成|增生|T046
carcinoma|carcinome m|carcinoma m|karzinom n|карцинома f|癌|癌|T191
adenoma|adénome m|adenoma m|adenom n|аденома f|腺腫|腺瘤|T191
sarcoma|sarcome m|sarcoma m|sarkom n|саркома f|肉腫|肉瘤|T191
dysfunction|dysfonctionnement m|disfunción f|funktionsstörung f|дисфункция f|機能障害|功能障碍|T047
injury|traumatisme m|traumatismo m|verletzung f|травма f|損傷|损伤|T037
edema|œdème m|edema m|ödem n|отёк m|浮腫|水肿|T046
pain|douleur f|dolor m|schmerz m|боль f|疼痛|疼痛|T184
fibrosis|fibrose f|fibrosis f|fibrose f|фиброз m|線維症|纤维化|T046
""")

# Modifiers: en | fr (m or m/f) | es (m or m/f) | de (adjective stem, or fixed text for 'post') |
# ru (masculine, or fixed text) | ja | zh
ETIOLOGY = _rows("""
autoimmune|auto-immun|autoinmune|autoimmun|аутоиммунный|自己免疫性|自身免疫性
familial|familial|familiar|familiär|семейный|家族性|家族性
congenital|congénital|congénito|kongenital|врождённый|先天性|先天性
hereditary|héréditaire|hereditario|hereditär|наследственный|遺伝性|遗传性
idiopathic|idiopathique|idiopático|idiopathisch|идиопатический|特発性|特发性
infectious|infectieux|infeccioso|infektiös|инфекционный|感染性|感染性
drug-induced|médicamenteux|medicamentoso|medikamentös|лекарственный|薬剤性|药物性
post-traumatic|post-traumatique|postraumático|posttraumatisch|посттравматический|外傷後|创伤后
postoperative|postopératoire|posoperatorio|postoperativ|послеоперационный|術後|术后
alcoholic|alcoolique|alcohólico|alkoholisch|алкогольный|アルコール性|酒精性
viral|viral|vírico|viral|вирусный|ウイルス性|病毒性
bacterial|bactérien|bacteriano|bakteriell|бактериальный|細菌性|细菌性
toxic|toxique|tóxico|toxisch|токсический|中毒性|中毒性
ischemic|ischémique|isquémico|ischämisch|ишемический|虚血性|缺血性
obstructive|obstructif|obstructivo|obstruktiv|обструктивный|閉塞性|阻塞性
secondary|secondaire|secundario|sekundär|вторичный|続発性|继发性
primary|primitif|primario|primär|первичный|原発性|原发性
degenerative|dégénératif|degenerativo|degenerativ|дегенеративный|変性|退行性
granulomatous|granulomateux|granulomatoso|granulomatös|гранулематозный|肉芽腫性|肉芽肿性
metabolic|métabolique|metabólico|metabolisch|метаболический|代謝性|代谢性
neonatal|néonatal|neonatal|neonatal|неонатальный|新生児|新生儿
juvenile|juvénile|juvenil|juvenil|ювенильный|若年性|青少年
allergic|allergique|alérgico|allergisch|аллергический|アレルギー性|过敏性
eosinophilic|éosinophile|eosinofílico|eosinophil|эозинофильный|好酸球性|嗜酸性粒细胞性
necrotizing|nécrosant|necrotizante|nekrotisierend|некротизирующий|壊死性|坏死性
radiation-induced|radio-induit|inducido por radiación|strahleninduziert|лучевой|放射線誘発性|放射性
paraneoplastic|paranéoplasique|paraneoplásico|paraneoplastisch|паранеопластический|腫瘍随伴性|副肿瘤性
lymphocytic|lymphocytaire|linfocítico|lymphozytär|лимфоцитарный|リンパ球性|淋巴细胞性
""")
COURSE = _rows("""
acute|aigu|agudo|akut|острый|急性|急性
subacute|subaigu|subagudo|subakut|подострый|亜急性|亚急性
chronic|chronique|crónico|chronisch|хронический|慢性|慢性
recurrent|récurrent|recurrente|rezidivierend|рецидивирующий|再発性|复发性
progressive|progressif|progresivo|progredient|прогрессирующий|進行性|进行性
transient|transitoire|transitorio|transient|транзиторный|一過性|一过性
persistent|persistant|persistente|persistierend|персистирующий|持続性|持续性
intermittent|intermittent|intermitente|intermittierend|интермиттирующий|間欠性|间歇性
refractory|réfractaire|refractario|refraktär|рефрактерный|難治性|难治性
fulminant|fulminant|fulminante|fulminant|молниеносный|劇症|暴发性
latent|latent|latente|latent|латентный|潜在性|隐匿性
relapsing|rémittent|remitente|schubförmig|ремиттирующий|寛解再発性|缓解复发性
""")
SEVERITY = _rows("""
mild|léger/légère|leve|leicht|лёгкий|軽症|轻度
moderate|modéré|moderado|mittelschwer|умеренный|中等症|中度
severe|sévère|grave|schwer|тяжёлый|重症|重度
advanced|avancé|avanzado|fortgeschritten|распространённый|進行期|晚期
complicated|compliqué|complicado|kompliziert|осложнённый|合併症を伴う|复杂性
end-stage|terminal|terminal|terminal|терминальный|末期|终末期
""")
DISO_POST = _rows("""
with hemorrhage|avec hémorragie|con hemorragia|mit Blutung|с кровотечением|出血を伴う|伴出血的
with perforation|avec perforation|con perforación|mit Perforation|с перфорацией|穿孔を伴う|伴穿孔的
with obstruction|avec obstruction|con obstrucción|mit Obstruktion|с обструкцией|閉塞を伴う|伴梗阻的
with calcification|avec calcification|con calcificación|mit Verkalkung|с кальцификацией|石灰化を伴う|伴钙化的
with fistula|avec fistule|con fístula|mit Fistel|со свищом|瘻孔を伴う|伴瘘管的
with effusion|avec épanchement|con derrame|mit Erguss|с выпотом|滲出を伴う|伴积液的
""")

# Procedures: en | fr g | es g | de g | ru g | ja | zh | TUI
PROC_SUFFIXES = _rows("""
ectomy|ectomie f|ectomía f|ektomie f|эктомия f|摘出術|摘除术|T061
otomy|otomie f|otomía f|otomie f|отомия f|切開術|切开术|T061
oscopy|oscopie f|oscopia f|oskopie f|оскопия f|鏡検査|镜检查|T060
oplasty|oplastie f|oplastia f|oplastik f|опластика f|形成術|成形术|T061
ostomy|ostomie f|ostomía f|ostomie f|остомия f|瘻造設術|造口术|T061
ography|ographie f|ografía f|ographie f|ография f|造影検査|造影术|T060
opexy|opexie f|opexia f|opexie f|опексия f|固定術|固定术|T061
orrhaphy|orraphie f|orrafia f|orrhaphie f|орафия f|縫合術|缝合术|T061
ocentesis|ocentèse f|ocentesis f|ozentese f|оцентез m|穿刺|穿刺术|T060
olysis|olyse f|ólisis f|olyse f|олиз m|剥離術|松解术|T061
""")
PROC_NOUNS = _rows("""
biopsy|biopsie f|biopsia f|biopsie f|биопсия f|生検|活检|T060
transplantation|transplantation f|trasplante m|transplantation f|трансплантация f|移植|移植术|T061
resection|résection f|resección f|resektion f|резекция f|切除術|切除术|T061
ultrasonography|échographie f|ecografía f|sonographie f|ультразвуковое исследование n|超音波検査|超声检查|T060
scintigraphy|scintigraphie f|gammagrafía f|szintigraphie f|сцинтиграфия f|シンチグラフィ|闪烁显像|T060
embolization|embolisation f|embolización f|embolisation f|эмболизация f|塞栓術|栓塞术|T061
irradiation|irradiation f|irradiación f|bestrahlung f|облучение n|照射|放射治疗|T061
catheterization|cathétérisme m|cateterismo m|katheterisierung f|катетеризация f|カテーテル法|导管术|T061
drainage|drainage m|drenaje m|drainage f|дренирование n|ドレナージ|引流术|T061
lavage|lavage m|lavado m|spülung f|промывание n|洗浄|灌洗术|T061
function test|exploration fonctionnelle f|prueba funcional f|funktionstest m|функциональная проба f|機能検査|功能检查|T059
""")
PROC_PREFIXES = _rows("""
hemi|hémi|hemi|Hemi|геми|片側|偏侧
micro|micro|micro|Mikro|микро|微小|微小
endo|endo|endo|Endo|эндо|内|内
""")
APPROACH = _rows("""
laparoscopic|laparoscopique|laparoscópico|laparoskopisch|лапароскопический|腹腔鏡下|腹腔镜
endoscopic|endoscopique|endoscópico|endoskopisch|эндоскопический|内視鏡的|内镜下
percutaneous|percutané|percutáneo|perkutan|чрескожный|経皮的|经皮
open|à ciel ouvert/à ciel ouvert|abierto|offen|открытый|開放|开放性
robotic-assisted|robot-assisté|asistido por robot|robotergestützt|роботизированный|ロボット支援下|机器人辅助
image-guided|guidé par l'image/guidée par l'image|guiado por imagen|bildgesteuert|навигационный|画像誘導下|影像引导下
minimally invasive|mini-invasif|mínimamente invasivo/mínimamente invasiva|minimalinvasiv|малоинвазивный|低侵襲|微创
""")
EXTENT = _rows("""
partial|partiel|parcial|partiell|частичный|部分|部分
total|total|total|total|тотальный|全|全
radical|radical|radical|radikal|радикальный|根治的|根治性
bilateral|bilatéral|bilateral|bilateral|двусторонний|両側|双侧
subtotal|subtotal|subtotal|subtotal|субтотальный|亜全|次全
extended|élargi|ampliado|erweitert|расширенный|拡大|扩大
""")
SETTING = _rows("""
elective|programmé|programado|elektiv|плановый|待機的|择期
emergency|en urgence/en urgence|urgente|dringlich|экстренный|緊急|急诊
repeat|itératif|repetido|wiederholt|повторный|再|再次
ambulatory|ambulatoire|ambulatorio|ambulant|амбулаторный|外来|门诊
""")

# Anatomy: structures (organ adjective + structure): en | fr g | es g | de tail g | ru g | ja | zh
STRUCTURES = _rows("""
cortex|cortex m|corteza f|rinde f|кора f|皮質|皮质
capsule|capsule f|cápsula f|kapsel f|капсула f|被膜|被膜
artery|artère f|arteria f|arterie f|артерия f|動脈|动脉
duct|canal m|conducto m|gang m|проток m|管|管
lobe|lobe m|lóbulo m|lappen m|доля f|葉|叶
membrane|membrane f|membrana f|membran f|мембрана f|膜|膜
tissue|tissu m|tejido m|gewebe n|ткань f|組織|组织
epithelium|épithélium m|epitelio m|epithel n|эпителий m|上皮|上皮
parenchyma|parenchyme m|parénquima m|parenchym n|паренхима f|実質|实质
mucosa|muqueuse f|mucosa f|schleimhaut f|слизистая оболочка f|粘膜|黏膜
lymphatic vessel|vaisseau lymphatique m|vaso linfático m|lymphgefäß n|лимфатический сосуд m|リンパ管|淋巴管
interstitium|interstitium m|intersticio m|interstitium n|интерстиций m|間質|间质
""")
SIDE = _rows("""
left|gauche|izquierdo|link|левый|左|左
right|droit|derecho|recht|правый|右|右
""")
POSITION = _rows("""
upper|supérieur|superior|ober|верхний|上部|上部
lower|inférieur|inferior|unter|нижний|下部|下部
anterior|antérieur|anterior|vorder|передний|前部|前部
posterior|postérieur|posterior|hinter|задний|後部|后部
medial|médial|medial|medial|медиальный|内側|内侧
lateral|latéral|lateral|lateral|латеральный|外側|外侧
""")
DEPTH = _rows("""
superficial|superficiel|superficial|oberflächlich|поверхностный|浅|浅
deep|profond|profundo|tief|глубокий|深|深
""")

# Drugs: syllables en | ru | ja | zh (fr/es/de use the Latin spelling)
SYLLABLES = _rows("""
al|ал|アル|阿
ben|бен|ベン|苯
cor|кор|コル|可
da|да|ダ|达
el|эл|エル|依
fen|фен|フェン|芬
ga|га|ガ|加
ir|ир|イル|伊
ka|ка|カ|卡
lor|лор|ロル|洛
ma|ма|マ|马
ol|ол|オル|奥
pa|па|パ|帕
qui|кви|クイ|奎
sa|са|サ|沙
ta|та|タ|他
ur|ур|ウル|乌
va|ва|バ|伐
zo|зо|ゾ|佐
bri|бри|ブリ|布
dro|дро|ドロ|屈
fla|фла|フラ|氟
glo|гло|グロ|格
me|ме|メ|美
ni|ни|ニ|尼
ti|ти|ティ|替
vo|во|ボ|沃
zi|зи|ジ|齐
tra|тра|トラ|曲
pro|про|プロ|普
mo|мо|モ|莫
ce|це|セ|西
de|де|デ|地
su|су|ス|舒
ri|ри|リ|利
xe|ксе|キセ|昔
nor|нор|ノル|诺
tel|тел|テル|特
bu|бу|ブ|丁
ha|ха|ハ|哈
""")
# Eponyms (surname = two or three syllables + an ending): en | ru | ja | zh
EPONYM_ENDINGS = _rows("""
er|ер|ー|尔
in|ин|イン|因
son|сон|ソン|森
ard|ард|アード|德
ski|ский|スキー|斯基
ell|елл|エル|尔
""")
# Eponymous disorders: en | fr g | es g | de | ru | ja | zh | TUI ({n}: the surname in that script)
EPONYM_KINDS = _rows("""
{n} disease|maladie de {n} f|enfermedad de {n} f|{n}-Krankheit f|болезнь {n} f|{n}病|{n}病|T047
{n} syndrome|syndrome de {n} m|síndrome de {n} m|{n}-Syndrom n|синдром {n} m|{n}症候群|{n}综合征|T047
{n} tumor|tumeur de {n} f|tumor de {n} m|{n}-Tumor m|опухоль {n} f|{n}腫瘍|{n}瘤|T191
""")
# Share of disorder trees whose head is an eponym ("Crohn disease", "maladie de Crohn"): the
# surname is the one word a French, Spanish or German name shares with the English entry, as
# in real vocabularies, where eponyms (with drug names and loanwords) are most of what a
# translated disorder name has in common with its English entry.
EPONYM_SHARE = 0.12

# Drug stems: en | fr | es | de | ru | ja | zh | class en | class fr g | class es g | class de g |
# class ru g | class ja | class zh
DRUG_STEMS = _rows("""
vastatin|vastatine|vastatina|vastatin|вастатин|バスタチン|伐他汀|statin|statine f|estatina f|Statin n|статин m|スタチン系薬|他汀类药物
pril|pril|pril|pril|прил|プリル|普利|angiotensin-converting enzyme inhibitor|inhibiteur de l'enzyme de conversion m|inhibidor de la enzima convertidora m|ACE-Hemmer m|ингибитор ангиотензинпревращающего фермента m|アンジオテンシン変換酵素阻害薬|血管紧张素转换酶抑制剂
sartan|sartan|sartán|sartan|сартан|サルタン|沙坦|angiotensin receptor blocker|antagoniste des récepteurs de l'angiotensine m|antagonista de los receptores de angiotensina m|Angiotensin-Rezeptorblocker m|блокатор рецепторов ангиотензина m|アンジオテンシン受容体拮抗薬|血管紧张素受体拮抗剂
olol|olol|olol|olol|олол|ロール|洛尔|beta blocker|bêtabloquant m|betabloqueante m|Betablocker m|бета-адреноблокатор m|ベータ遮断薬|β受体阻滞剂
conazole|conazole|conazol|conazol|коназол|コナゾール|康唑|azole antifungal|antifongique azolé m|antifúngico azólico m|Azol-Antimykotikum n|азоловый противогрибковый препарат m|アゾール系抗真菌薬|唑类抗真菌药
cillin|cilline|cilina|cillin|циллин|シリン|西林|penicillin antibiotic|pénicilline f|penicilina f|Penicillin n|пенициллин m|ペニシリン系抗菌薬|青霉素类抗生素
mycin|mycine|micina|mycin|мицин|マイシン|霉素|macrolide antibiotic|macrolide m|macrólido m|Makrolid n|макролид m|マクロライド系抗菌薬|大环内酯类抗生素
vir|vir|vir|vir|вир|ビル|韦|antiviral agent|antiviral m|antiviral m|Virostatikum n|противовирусный препарат m|抗ウイルス薬|抗病毒药
tinib|tinib|tinib|tinib|тиниб|チニブ|替尼|tyrosine kinase inhibitor|inhibiteur de tyrosine kinase m|inhibidor de la tirosina cinasa m|Tyrosinkinase-Inhibitor m|ингибитор тирозинкиназы m|チロシンキナーゼ阻害薬|酪氨酸激酶抑制剂
zumab|zumab|zumab|zumab|зумаб|ズマブ|珠单抗|monoclonal antibody|anticorps monoclonal m|anticuerpo monoclonal m|monoklonaler Antikörper m|моноклональное антитело n|モノクローナル抗体|单克隆抗体
parin|parine|parina|parin|парин|パリン|肝素|heparin-like anticoagulant|anticoagulant héparinique m|anticoagulante heparínico m|Heparin-Antikoagulans n|гепариновый антикоагулянт m|ヘパリン系抗凝固薬|肝素类抗凝药
dronate|dronate|dronato|dronat|дронат|ドロネート|膦酸|bisphosphonate|bisphosphonate m|bisfosfonato m|Bisphosphonat n|бисфосфонат m|ビスホスホネート|双膦酸盐
floxacin|floxacine|floxacino|floxacin|флоксацин|フロキサシン|沙星|fluoroquinolone|fluoroquinolone f|fluoroquinolona f|Fluorchinolon n|фторхинолон m|フルオロキノロン系抗菌薬|氟喹诺酮类药物
dipine|dipine|dipino|dipin|дипин|ジピン|地平|calcium channel blocker|inhibiteur calcique m|antagonista del calcio m|Calciumantagonist m|блокатор кальциевых каналов m|カルシウム拮抗薬|钙通道阻滞剂
prazole|prazole|prazol|prazol|празол|プラゾール|拉唑|proton pump inhibitor|inhibiteur de la pompe à protons m|inhibidor de la bomba de protones m|Protonenpumpenhemmer m|ингибитор протонной помпы m|プロトンポンプ阻害薬|质子泵抑制剂
gliflozin|gliflozine|gliflozina|gliflozin|глифлозин|グリフロジン|格列净|sodium-glucose cotransporter inhibitor|inhibiteur du cotransporteur sodium-glucose m|inhibidor del cotransportador de sodio y glucosa m|Natrium-Glukose-Cotransporter-Hemmer m|ингибитор натрий-глюкозного котранспортёра m|ナトリウム・グルコース共輸送体阻害薬|钠-葡萄糖协同转运蛋白抑制剂
gliptin|gliptine|gliptina|gliptin|глиптин|グリプチン|格列汀|dipeptidyl peptidase inhibitor|inhibiteur de la dipeptidyl peptidase m|inhibidor de la dipeptidil peptidasa m|Dipeptidylpeptidase-Hemmer m|ингибитор дипептидилпептидазы m|ジペプチジルペプチダーゼ阻害薬|二肽基肽酶抑制剂
semide|sémide|semida|semid|семид|セミド|塞米|loop diuretic|diurétique de l'anse m|diurético de asa m|Schleifendiuretikum n|петлевой диуретик m|ループ利尿薬|袢利尿剂
""")
# Salts (fr invariant adjective, es agreeing adjective, de after a hyphen, ru genitive)
SALTS = _rows("""
sodium|sodique|sódico|Natrium|натрия|ナトリウム|钠
potassium|potassique|potásico|Kalium|калия|カリウム|钾
calcium|calcique|cálcico|Calcium|кальция|カルシウム|钙
magnesium|magnésique|magnésico|Magnesium|магния|マグネシウム|镁
""")
DOSE_FORMS = _rows("""
oral tablet|en comprimé oral|en comprimido oral|Tablette zum Einnehmen|таблетки для приёма внутрь|経口錠|口服片
oral solution|en solution buvable|en solución oral|Lösung zum Einnehmen|раствор для приёма внутрь|経口液|口服溶液
injectable solution|en solution injectable|en solución inyectable|Injektionslösung|раствор для инъекций|注射液|注射液
extended-release capsule|en gélule à libération prolongée|en cápsula de liberación prolongada|Retardkapsel|капсулы пролонгированного действия|徐放性カプセル|缓释胶囊
topical cream|en crème topique|en crema tópica|Creme zur äußerlichen Anwendung|крем для наружного применения|外用クリーム|外用乳膏
inhalation powder|en poudre pour inhalation|en polvo para inhalación|Inhalationspulver|порошок для ингаляций|吸入粉末剤|吸入粉雾剂
""")
STRENGTHS = ["5", "10", "20", "25", "40", "50", "100", "200", "250", "500"]

# Physiology and devices (en | fr g | es g | de tail g | ru g | ja | zh)
FUNCTIONS = _rows("""
clearance|clairance f|aclaramiento m|clearance f|клиренс m|クリアランス|清除率
secretion|sécrétion f|secreción f|sekretion f|секреция f|分泌|分泌
perfusion|perfusion f|perfusión f|perfusion f|перфузия f|灌流|灌注
motility|motilité f|motilidad f|motilität f|моторика f|運動性|运动功能
absorption|absorption f|absorción f|resorption f|всасывание n|吸収|吸收
blood flow|débit sanguin m|flujo sanguíneo m|durchblutung f|кровоток m|血流|血流
""")
DEVICES = _rows("""
stent|stent m|stent m|stent m|стент m|ステント|支架
catheter|cathéter m|catéter m|katheter m|катетер m|カテーテル|导管
implant|implant m|implante m|implantat n|имплант m|インプラント|植入物
prosthesis|prothèse f|prótesis f|prothese f|протез m|プロテーゼ|假体
electrode|électrode f|electrodo m|elektrode f|электрод m|電極|电极
drain|drain m|dren m|drain m|дренаж m|ドレーン|引流管
""")
DEVICE_MODS = _rows("""
temporary|temporaire|temporal|temporär|временный|一時的|临时
permanent|permanent|permanente|permanent|постоянный|永久的|永久性
biodegradable|biodégradable|biodegradable|bioresorbierbar|биоразлагаемый|生分解性|可降解
implantable|implantable|implantable|implantierbar|имплантируемый|植込み型|植入式
flexible|flexible|flexible|flexibel|гибкий|柔軟|柔性
coated|revêtu|recubierto|beschichtet|покрытый|コーティング|涂层
""")
GENUS_SUFFIXES = ["bacter", "coccus", "bacillus", "monas", "ella", "spira", "myces", "vibrio"]
EPITHETS = ["aureus", "minor", "major", "fragilis", "mobilis", "gracilis", "robustus", "viridans", "lentus", "rapidus"]

# Group roots and organ/class categories
GROUP_ROOTS = {
    # en | fr g | es g | de g | ru g | ja | zh | TUI
    "DISO": "disease|maladie f|enfermedad f|Krankheit f|болезнь f|疾患|疾病|T047",
    "CHEM": "pharmaceutical preparation|préparation pharmaceutique f|preparado farmacéutico m|Arzneimittelzubereitung f|лекарственный препарат m|医薬品|药物制剂|T121",
    "PROC": "therapeutic or diagnostic procedure|procédure diagnostique ou thérapeutique f|procedimiento diagnóstico o terapéutico m|diagnostisches oder therapeutisches Verfahren n|диагностическая или лечебная процедура f|診断・治療手技|诊断或治疗操作|T061",
    "ANAT": "anatomical structure|structure anatomique f|estructura anatómica f|anatomische Struktur f|анатомическая структура f|解剖学的構造|解剖结构|T017",
    "GENE": "gene|gène m|gen m|Gen n|ген m|遺伝子|基因|T028",
    "LIVB": "bacterium|bactérie f|bacteria f|Bakterium n|бактерия f|細菌|细菌|T007",
    "PHYS": "organ function|fonction d'organe f|función orgánica f|Organfunktion f|функция органа f|臓器機能|器官功能|T042",
    "DEVI": "medical device|dispositif médical m|dispositivo médico m|Medizinprodukt n|медицинское изделие n|医療機器|医疗器械|T074",
}
SEMANTIC_TYPES = {  # TUI -> (STN, STY), the UMLS Semantic Network
    "T017": ("A1.2", "Anatomical Structure"),
    "T019": ("A1.2.2.1", "Congenital Abnormality"),
    "T023": ("A1.2.3.1", "Body Part, Organ, or Organ Component"),
    "T024": ("A1.2.3.2", "Tissue"),
    "T028": ("A1.2.3.5", "Gene or Genome"),
    "T029": ("A2.1.5.2", "Body Location or Region"),
    "T033": ("A2.2", "Finding"),
    "T037": ("B2.3", "Injury or Poisoning"),
    "T042": ("B2.2.1.1.3", "Organ or Tissue Function"),
    "T046": ("B2.2.1.2", "Pathologic Function"),
    "T047": ("B2.2.1.2.1", "Disease or Syndrome"),
    "T059": ("B1.3.1.1", "Laboratory Procedure"),
    "T060": ("B1.3.1.2", "Diagnostic Procedure"),
    "T061": ("B1.3.1.3", "Therapeutic or Preventive Procedure"),
    "T074": ("A1.3.1", "Medical Device"),
    "T007": ("A1.1.2", "Bacterium"),
    "T109": ("A1.4.1.2.1", "Organic Chemical"),
    "T121": ("A1.4.1.1.1", "Pharmacologic Substance"),
    "T184": ("A2.2.2", "Sign or Symptom"),
    "T191": ("B2.2.1.2.1.2", "Neoplastic Process"),
    "T200": ("A1.3.3", "Clinical Drug"),
}


# ============================================================================ morphology
GI = {"m": 0, "f": 1, "n": 2}


def fr_forms(cell: str) -> tuple[str, str]:
    if "/" in cell:
        m, f = cell.split("/")
        return m, f
    m = cell
    if m.endswith("e"):
        f = m
    elif m.endswith("aigu"):
        f = m + "ë"
    elif m.endswith("ien"):
        f = m + "ne"
    elif m.endswith("eux"):
        f = m[:-1] + "se"
    elif m.endswith("if"):
        f = m[:-1] + "ve"
    elif m.endswith("el"):
        f = m + "le"
    else:
        f = m + "e"
    return m, f


def es_forms(cell: str) -> tuple[str, str]:
    if "/" in cell:
        m, f = cell.split("/")
        return m, f
    first, _, rest = cell.partition(" ")
    f = first[:-1] + "a" if first.endswith("o") else first
    return cell, (f + (" " + rest if rest else ""))


def de_forms(stem: str) -> tuple[str, str, str]:
    if stem.endswith("e"):
        return stem + "r", stem, stem + "s"
    return stem + "er", stem + "e", stem + "es"


def ru_forms(m: str) -> tuple[str, str, str]:
    if m.endswith(("ый", "ой")):
        s = m[:-2]
        return m, s + "ая", s + "ое"
    if m.endswith("ий"):
        s = m[:-2]
        if s[-1] in "гкх":
            return m, s + "ая", s + "ое"
        if s[-1] in "жшчщ":
            return m, s + "ая", s + "ее"
        return m, s + "яя", s + "ее"
    return m, m, m


_UNACCENT = str.maketrans("áéíóúàèìòùâêîôûäëïöü", "aeiouaeiouaeiouaeiou")


def derive(lang: str, text: str) -> str:
    """Italian and Portuguese from the Spanish name, Dutch from the German one: crude,
    but in the right script and recognisably of those languages."""
    if lang == "it":
        t = text.translate(_UNACCENT)
        for a, b in (("ción", "zione"), ("cion", "zione"), ("itis", "ite"), ("osis", "osi"), (" con ", " con "),
                     (" de ", " di "), ("quiste", "cisti"), ("ñ", "gn")):
            t = t.replace(a, b)
        return t
    if lang == "pt":
        t = text
        for a, b in (("ción", "ção"), ("itis", "ite"), ("osis", "ose"), ("ía", "ia"), (" con ", " com "),
                     ("ñ", "nh"), (" del ", " do ")):
            t = t.replace(a, b)
        return t
    if lang == "nl":
        t = text
        for a, b in (("ph", "f"), ("ä", "e"), ("ö", "eu"), ("ü", "u"), ("ß", "ss"), (" mit ", " met "), ("z", "z")):
            t = t.replace(a, b)
        return t[:1].lower() + t[1:] if t[:2] != t[:2].upper() else t
    raise ValueError(lang)


def join_root(root: str, suffix: str) -> str:
    """'cardi' + 'itis' -> 'carditis'; 'карди' + 'ит' -> 'кардит'."""
    if root and suffix and root[-1] in "iи" and suffix[0] in "iи":
        return root[:-1] + suffix
    return root + suffix


# ---------------------------------------------------------------------------- names
class Mod:
    """A modifier: per language a placement and a form (or forms by gender)."""

    __slots__ = ("key", "cat", "spec", "en")

    def __init__(self, key: str, cat: int, spec: dict):
        self.key, self.cat, self.spec = key, cat, spec
        self.en = spec["en"][1]


def adj_mod(row: list[str], cat: int) -> Mod:
    en, fr, es, de, ru, ja, zh = row
    return Mod(en, cat, {
        "en": ("pre", en), "fr": ("post", fr_forms(fr)), "es": ("post", es_forms(es)), "de": ("pre", de_forms(de)),
        "ru": ("pre", ru_forms(ru)), "ja": ("prejoin", ja), "zh": ("prejoin", zh)})


def post_mod(row: list[str], cat: int) -> Mod:
    en, fr, es, de, ru, ja, zh = row
    return Mod(en, cat, {"en": ("post", en), "fr": ("post", fr), "es": ("post", es), "de": ("post", de),
                         "ru": ("post", ru), "ja": ("prejoin", ja), "zh": ("prejoin", zh)})


def salt_mod(row: list[str], cat: int) -> Mod:
    en, fr, es, de, ru, ja, zh = row
    return Mod(en, cat, {"en": ("post", en), "fr": ("post", fr), "es": ("post", es_forms(es)), "de": ("hyphen", de),
                         "ru": ("post", ru), "ja": ("join", ja), "zh": ("join", zh)})


def form_mod(row: list[str], cat: int) -> Mod:
    en, fr, es, de, ru, ja, zh = row
    return Mod(en, cat, {"en": ("post", en), "fr": ("post", fr), "es": ("post", es), "de": ("post", de),
                         "ru": ("comma", ru), "ja": ("join", ja), "zh": ("join", zh)})


def strength_mod(n: str, cat: int) -> Mod:
    return Mod(n + " mg", cat, {"en": ("post", n + " mg"), "fr": ("post", n + " mg"), "es": ("post", n + " mg"),
                                "de": ("post", n + " mg"), "ru": ("post", n + " мг"), "ja": ("join", n + "mg"),
                                "zh": ("join", n + "毫克")})


@dataclass(frozen=True)
class Head:
    """The stem of a family of names: per language (text, gender); `langs` it can be said in."""

    key: str
    forms: dict  # lang -> (text, gender)
    tui: str
    gloss: str = ""  # an English descriptive synonym ('inflammation of the kidney'), or ''
    organ: str = ""  # English organ noun, for definitions
    langs: tuple = ("en", "fr", "es", "de", "ru", "ja", "zh", "it", "pt", "nl")


def render(head: Head, mods: tuple, lang: str) -> str:
    if lang in ("it", "pt"):
        return derive(lang, render(head, mods, "es"))
    if lang == "nl":
        return derive(lang, render(head, mods, "de"))
    text, g = head.forms[lang]
    gi = GI.get(g, 0)
    for m in mods:
        place, form = m.spec[lang]
        if isinstance(form, tuple):
            form = form[gi] if gi < len(form) else form[0]
        if place == "pre":
            text = form + " " + text
        elif place == "post":
            text = text + " " + form
        elif place == "prejoin":
            text = form + text
        elif place == "join":
            text = text + form
        elif place == "hyphen":
            text = text + "-" + form
        else:  # comma
            text = text + ", " + form
    return text


# ============================================================================ sources (SAB)
# SAB: LAT, SRL, SON, preferred TTY, synonym TTY, string style, code kind
SAB_INFO = {
    "MSH": ("ENG", 0, "Medical Subject Headings", "MH", "ET", "cap", "msh"),
    "NCI": ("ENG", 0, "NCI Thesaurus", "PT", "SY", "title", "nci"),
    "SNOMEDCT_US": ("ENG", 9, "SNOMED CT, US Edition", "PT", "SY", "cap", "sct"),
    "MDR": ("ENG", 3, "MedDRA", "PT", "LLT", "cap", "mdr"),
    "HPO": ("ENG", 0, "Human Phenotype Ontology", "PT", "SY", "cap", "hpo"),
    "DO": ("ENG", 0, "Human Disease Ontology", "PT", "SY", "lower", "do"),
    "ICD10CM": ("ENG", 4, "International Classification of Diseases, Tenth Revision, Clinical Modification", "PT", "ET", "cap", "icd"),
    "CHV": ("ENG", 0, "Consumer Health Vocabulary", "PT", "SY", "lower", "chv"),
    "RXNORM": ("ENG", 0, "RxNorm", "IN", "SY", "lower", "rx"),
    "MTHSPL": ("ENG", 0, "Metathesaurus FDA Structured Product Labels", "SU", "SY", "upper", "spl"),
    "CPT": ("ENG", 3, "CPT - Current Procedural Terminology", "PT", "SY", "cap", "cpt"),
    "FMA": ("ENG", 0, "Foundational Model of Anatomy", "PT", "SY", "cap", "fma"),
    "UWDA": ("ENG", 0, "University of Washington Digital Anatomist", "PT", "SY", "cap", "fma"),
    "HGNC": ("ENG", 0, "HUGO Gene Nomenclature Committee", "PT", "ACR", "keep", "hgnc"),
    "OMIM": ("ENG", 0, "Online Mendelian Inheritance in Man", "PT", "SY", "keep", "omim"),
    "NCBI": ("ENG", 0, "NCBI Taxonomy", "SCN", "SY", "keep", "ncbi"),
    "GO": ("ENG", 0, "Gene Ontology", "PT", "SY", "lower", "go"),
    "MSHFRE": ("FRE", 3, "Medical Subject Headings, French", "MH", "ET", "cap", "msh"),
    "MDRFRE": ("FRE", 3, "MedDRA, French", "PT", "LLT", "cap", "mdr"),
    "HPOFRE": ("FRE", 0, "Human Phenotype Ontology, French", "PT", "SY", "cap", "hpo"),
    "MSHSPA": ("SPA", 0, "Medical Subject Headings, Spanish", "MH", "ET", "cap", "msh"),
    "SCTSPA": ("SPA", 9, "SNOMED CT, Spanish Edition", "PT", "SY", "cap", "sct"),
    "MDRSPA": ("SPA", 3, "MedDRA, Spanish", "PT", "LLT", "cap", "mdr"),
    "HPOSPA": ("SPA", 0, "Human Phenotype Ontology, Spanish", "PT", "SY", "cap", "hpo"),
    "MSHGER": ("GER", 3, "Medical Subject Headings, German", "MH", "ET", "keep", "msh"),
    "MDRGER": ("GER", 3, "MedDRA, German", "PT", "LLT", "keep", "mdr"),
    "MMBDE": ("GER", 0, "German medical terminology (synthetic)", "PT", "SY", "keep", "mmb"),
    "MSHJPN": ("JPN", 3, "Medical Subject Headings, Japanese", "MH", "ET", "keep", "msh"),
    "MDRJPN": ("JPN", 3, "MedDRA, Japanese", "PT", "LLT", "keep", "mdr"),
    "HPOJPN": ("JPN", 0, "Human Phenotype Ontology, Japanese", "PT", "SY", "keep", "hpo"),
    "HPOCHI": ("CHI", 0, "Human Phenotype Ontology, Chinese", "PT", "SY", "keep", "hpo"),
    "MSHCHI": ("CHI", 3, "Medical Subject Headings, Chinese", "MH", "ET", "keep", "msh"),
    "MSHRUS": ("RUS", 0, "Medical Subject Headings, Russian", "MH", "ET", "lower", "msh"),
    "MDRRUS": ("RUS", 3, "MedDRA, Russian", "PT", "LLT", "cap", "mdr"),
    "MSHITA": ("ITA", 3, "Medical Subject Headings, Italian", "MH", "ET", "cap", "msh"),
    "MDRITA": ("ITA", 3, "MedDRA, Italian", "PT", "LLT", "cap", "mdr"),
    "MSHPOR": ("POR", 3, "Medical Subject Headings, Portuguese", "MH", "ET", "cap", "msh"),
    "MDRPOR": ("POR", 3, "MedDRA, Portuguese", "PT", "LLT", "cap", "mdr"),
    "MSHDUT": ("DUT", 3, "Medical Subject Headings, Dutch", "MH", "ET", "cap", "msh"),
    "MDRDUT": ("DUT", 3, "MedDRA, Dutch", "PT", "LLT", "cap", "mdr"),
}
ENG_SOURCES = {  # group -> [(SAB, probability of naming a concept)]
    "DISO": [("SNOMEDCT_US", .80), ("MSH", .55), ("NCI", .40), ("HPO", .35), ("DO", .30), ("MDR", .35), ("ICD10CM", .20), ("CHV", .12)],
    "CHEM": [("RXNORM", .60), ("SNOMEDCT_US", .60), ("MSH", .50), ("NCI", .40), ("MTHSPL", .20)],
    "PROC": [("SNOMEDCT_US", .80), ("MSH", .45), ("NCI", .35), ("MDR", .20), ("CPT", .15)],
    "ANAT": [("FMA", .70), ("SNOMEDCT_US", .60), ("MSH", .35), ("NCI", .30), ("UWDA", .30)],
    "GENE": [("HGNC", .90), ("NCI", .40), ("OMIM", .30)],
    "LIVB": [("NCBI", .90), ("SNOMEDCT_US", .50), ("MSH", .30)],
    "PHYS": [("GO", .50), ("MSH", .50), ("NCI", .40), ("SNOMEDCT_US", .50)],
    "DEVI": [("SNOMEDCT_US", .60), ("MSH", .40), ("NCI", .40), ("MDR", .10)],
}
ENG_OPEN = {"DISO": ["DO", "HPO", "MSH"], "CHEM": ["RXNORM", "MSH"], "PROC": ["MSH", "NCI"], "ANAT": ["FMA", "MSH"],
            "GENE": ["HGNC"], "LIVB": ["NCBI"], "PHYS": ["GO"], "DEVI": ["MSH"]}
OTHER_SOURCES = {  # lang -> [(SAB, groups, probability)]
    "fr": [("MSHFRE", "*", .60), ("MDRFRE", "DISO PROC", .30), ("HPOFRE", "DISO", .50)],
    "es": [("MSHSPA", "*", .55), ("SCTSPA", "*", .50), ("MDRSPA", "DISO PROC", .25), ("HPOSPA", "DISO", .40)],
    "de": [("MSHGER", "*", .60), ("MDRGER", "DISO PROC", .30), ("MMBDE", "DISO CHEM PROC", .30)],
    "ja": [("MSHJPN", "*", .50), ("MDRJPN", "DISO PROC", .40), ("HPOJPN", "DISO", .50)],
    "zh": [("HPOCHI", "DISO", .70), ("MSHCHI", "*", .40)],
    "ru": [("MSHRUS", "*", .70), ("MDRRUS", "DISO PROC", .35)],
    "it": [("MSHITA", "*", .70), ("MDRITA", "DISO PROC", .40)],
    "pt": [("MSHPOR", "*", .70), ("MDRPOR", "DISO PROC", .40)],
    "nl": [("MSHDUT", "*", .70), ("MDRDUT", "DISO PROC", .40)],
}
# A native question in a language names its concept with an open (SRL 0) atom of that language
OPEN_SOURCE = {"fr": {"DISO": "HPOFRE"}, "ja": {"DISO": "HPOJPN"}, "zh": {"DISO": "HPOCHI"},
               "es": {"DISO": "HPOSPA", "CHEM": "MSHSPA", "PROC": "MSHSPA", "ANAT": "MSHSPA"},
               "ru": {"DISO": "MSHRUS", "CHEM": "MSHRUS", "PROC": "MSHRUS", "ANAT": "MSHRUS"}}
COVERAGE = {  # group -> lang -> probability that a concept has atoms in that language
    "DISO": {"es": .40, "fr": .30, "de": .22, "ja": .20, "ru": .14, "zh": .09, "it": .12, "pt": .12, "nl": .08},
    "CHEM": {"es": .30, "fr": .20, "de": .15, "ja": .12, "ru": .10, "zh": .03, "it": .08, "pt": .10, "nl": .06},
    "PROC": {"es": .30, "fr": .20, "de": .15, "ja": .10, "ru": .08, "zh": .03, "it": .08, "pt": .08, "nl": .05},
    "ANAT": {"es": .20, "fr": .15, "de": .10, "ja": .05, "ru": .06, "zh": .02, "it": .05, "pt": .05, "nl": .03},
    "GENE": {"es": .02, "fr": .02, "de": .01, "ja": .01},
    "LIVB": {"es": .10, "fr": .10, "de": .10, "it": .05, "pt": .05, "nl": .05},
    "PHYS": {"es": .20, "fr": .15, "de": .10, "ja": .05, "ru": .05},
    "DEVI": {"es": .15, "fr": .10, "de": .10, "it": .05, "pt": .05, "nl": .05},
}
LAT_OF = {"en": "ENG", "fr": "FRE", "es": "SPA", "de": "GER", "ja": "JPN", "zh": "CHI", "ru": "RUS",
          "it": "ITA", "pt": "POR", "nl": "DUT"}
KEY_GROUPS = ("DISO", "CHEM", "PROC", "ANAT", "GENE")
FN_TAG = {"DISO": "disorder", "CHEM": "substance", "PROC": "procedure", "ANAT": "body structure",
          "GENE": "gene", "LIVB": "organism", "PHYS": "observable entity", "DEVI": "physical object"}
SMALL_WORDS = {"of", "the", "with", "and", "in", "for", "to", "by"}
_BRITISH = [(re.compile(r"hemorrh"), "haemorrh"), (re.compile(r"\bedema"), "oedema"), (re.compile(r"esophag"), "oesophag"),
            (re.compile(r"(?<=[a-z])emia\b"), "aemia"), (re.compile(r"\btumor\b"), "tumour"), (re.compile(r"orrhea\b"), "orrhoea"),
            (re.compile(r"ischemic"), "ischaemic"), (re.compile(r"ization\b"), "isation")]


def style(text: str, how: str) -> str:
    if how == "cap":
        return text[:1].upper() + text[1:] if text[:1].islower() else text
    if how == "title":
        return " ".join(w if w in SMALL_WORDS or not w[:1].islower() else w[:1].upper() + w[1:] for w in text.split(" "))
    if how == "upper":
        return text.upper()
    return text


def british(text: str) -> str:
    for rx, rep in _BRITISH:
        text = rx.sub(rep, text)
    return text


_WORD = re.compile(r"\w+")


def lui_key(text: str) -> str:
    return " ".join(sorted(_WORD.findall(text.lower())))


class Permuted:
    """Unique, scattered identifiers: prefix + fixed-width digits of a bijection of a counter."""

    def __init__(self, prefix: str, width: int, mult: int, offset: int):
        self.prefix, self.mod, self.mult, self.offset, self.n = prefix, 10 ** width, mult, offset, 0
        self.fmt = "%s%0" + str(width) + "d"

    def __call__(self) -> str:
        self.n += 1
        return self.fmt % (self.prefix, (self.n * self.mult + self.offset) % self.mod)


def code_for(kind: str, num: int) -> tuple[str, str, str, str]:
    """(SAUI, SCUI, SDUI, CODE) of a concept (CUI number `num`) in a source family."""
    h = (num * 2654435761 + _KIND_SALT[kind]) & 0xFFFFFFFF
    if kind == "msh":
        d = "D%06d" % (h % 1_000_000)
        return "", "M%07d" % (h % 10_000_000), d, d
    if kind == "sct":
        c = str(100000 + h % 900_000_000)
        return str(1_000_000 + h % 3_000_000_000), c, "", c
    if kind == "nci":
        c = "C%d" % (1000 + h % 190_000)
        return "", c, "", c
    if kind == "mdr":
        return "", "", "", "10%06d" % (h % 1_000_000)
    if kind == "hpo":
        c = "HP:%07d" % (h % 5_000_000)
        return "", c, "", c
    if kind == "do":
        c = "DOID:%d" % (h % 120_000)
        return "", c, "", c
    if kind == "icd":
        c = "%s%02d.%d" % ("ABCDEFGHIJKLMNOPQRSTUVWXYZ"[h % 26], (h >> 5) % 100, (h >> 12) % 10)
        return "", "", "", c
    if kind == "spl":
        c = "".join("0123456789ABCDEFGHJKLMNPQRSTUVWXYZ"[(h >> (3 * i)) % 34] for i in range(10))
        return "", c, "", c
    if kind == "hgnc":
        c = "HGNC:%d" % (h % 60_000)
        return "", c, "", c
    if kind == "go":
        c = "GO:%07d" % (h % 10_000_000)
        return "", c, "", c
    if kind == "mmb":
        c = "MMB%06d" % (h % 1_000_000)
        return "", c, "", c
    c = str(h % 10_000_000)
    return "", c, "", c


_KIND_SALT = {k: sum((i + 1) * ord(c) for i, c in enumerate(k)) * 7919 for k in {v[6] for v in SAB_INFO.values()}}


# ============================================================================ the vocabulary
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


class RRFWriter:
    """Buffered line writers for the RRF files."""

    def __init__(self, folder: Path):
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.files = {n: (folder / n).open("w", encoding="utf-8", newline="\n", buffering=1 << 20)
                      for n in ("MRCONSO.RRF", "MRSTY.RRF", "MRREL.RRF", "MRDEF.RRF")}
        self.buf = {n: [] for n in self.files}
        self.rows = {n: 0 for n in self.files}

    def add(self, name: str, lines: list[str]) -> None:
        b = self.buf[name]
        b.extend(lines)
        self.rows[name] += len(lines)
        if len(b) > 50_000:
            self.files[name].write("".join(b))
            b.clear()

    def close(self) -> None:
        for n, fh in self.files.items():
            fh.write("".join(self.buf[n]))
            self.buf[n].clear()
            fh.close()


class LinearPermutation:
    """i -> (a*i + c) mod n, a bijection of range(n): a random-looking order without a list."""

    def __init__(self, n: int, rng: random.Random):
        self.n = n
        a = rng.randrange(n // 3 + 1, max(n // 3 + 2, n)) if n > 2 else 1
        while _gcd(a, n) != 1:
            a += 1
        self.a, self.c = a, rng.randrange(n) if n else 0

    def __getitem__(self, i: int) -> int:
        return (self.a * i + self.c) % self.n


def _gcd(a: int, b: int) -> int:
    while b:
        a, b = b, a % b
    return a


class HeadSpace:
    """The heads of one group, enumerated without repetition in blocks (most natural first),
    each block in a seeded pseudo-random order."""

    def __init__(self, blocks: list[tuple[int, callable]], rng: random.Random):
        self.blocks = [(n, decode, LinearPermutation(n, rng)) for n, decode in blocks if n > 0]
        self.b, self.i = 0, 0

    def next(self):
        while self.b < len(self.blocks):
            n, decode, perm = self.blocks[self.b]
            if self.i < n:
                self.i += 1
                return decode(perm[self.i - 1])
            self.b, self.i = self.b + 1, 0
        return None


def _organ(o: list[str]) -> dict:
    keys = ["en_root", "en_adj", "en_noun", "fr_root", "fr_adj", "fr_noun", "es_root", "es_adj", "es_noun",
            "de_root", "de_stem", "de_noun", "ru_root", "ru_adj", "ru_noun", "ja_root", "ja_noun", "zh_root", "zh_noun", "la"]
    return dict(zip(keys, o))


ORG = [_organ(o) for o in ORGANS]


def single_head(prefix: list[str] | None, organs: list[dict], suf: list[str], tui: str, gloss: str, key: str) -> Head:
    """prefix + root(s) + suffix in every language; `suf` = en | fr g | es g | de g | ru g | ja | zh."""
    en_s = suf[0]
    (fr_s, fr_g), (es_s, es_g), (de_s, de_g), (ru_s, ru_g) = (_ng(suf[i]) for i in range(1, 5))
    ja_s, zh_s = suf[5], suf[6]

    def roots(field: str, link: str) -> str:
        parts = [o[field] for o in organs]
        out = parts[0]
        for p in parts[1:]:
            out = out + ("" if out.endswith(("o", "о")) else link) + p
        return out

    en_r, fr_r, es_r, ru_r = roots("en_root", "o"), roots("fr_root", "o"), roots("es_root", "o"), roots("ru_root", "о")
    de_r = organs[0]["de_root"] + "".join(("" if organs[0]["de_root"].endswith("o") else "o") + o["de_root"].lower() for o in organs[1:])
    ja_r = "".join(o["ja_root"] for o in organs)
    zh_r = "".join(o["zh_root"] for o in organs)
    p = prefix or ["", "", "", "", "", "", ""]
    de_word = (p[3] + de_r.lower()) if p[3] else de_r
    forms = {
        "en": (p[0] + join_root(en_r, en_s), ""), "fr": (p[1] + join_root(fr_r, fr_s), fr_g),
        "es": (p[2] + join_root(es_r, es_s), es_g), "de": (join_root(de_word, de_s), de_g),
        "ru": (p[4] + join_root(ru_r, ru_s), ru_g), "ja": (p[5] + ja_r + ja_s, ""), "zh": (p[6] + zh_r + zh_s, ""),
    }
    noun = " and ".join(o["en_noun"] for o in organs)
    return Head(key, forms, tui, gloss.format(noun=noun) if gloss and not prefix else "", noun)


def phrase_head(organ: dict, noun: list[str], tui: str, key: str) -> Head:
    """organ adjective + noun: 'renal cyst', 'kyste rénal', 'почечная киста', 'Nierenzyste', '腎嚢胞'."""
    fr_n, fr_g = _ng(noun[1])
    es_n, es_g = _ng(noun[2])
    de_n, de_g = _ng(noun[3])
    ru_n, ru_g = _ng(noun[4])
    fr_a = fr_forms(organ["fr_adj"])[GI[fr_g]]
    es_a = es_forms(organ["es_adj"])[GI[es_g]]
    ru_a = ru_forms(organ["ru_adj"])[GI[ru_g]]
    forms = {
        "en": (organ["en_adj"] + " " + noun[0], ""), "fr": (fr_n + " " + fr_a, fr_g), "es": (es_n + " " + es_a, es_g),
        "de": (organ["de_stem"] + de_n, de_g), "ru": (ru_a + " " + ru_n, ru_g),
        "ja": (organ["ja_root"] + noun[5], ""), "zh": (organ["zh_root"] + noun[6], ""),
    }
    return Head(key, forms, tui, "", organ["en_noun"])


def category_head(organ: dict, kind: str, key: str) -> Head:
    """An organ-level grouping concept: 'renal disorder', 'renal procedure'."""
    if kind == "DISO":
        forms = {"en": (organ["en_adj"] + " disorder", ""), "fr": ("trouble " + fr_forms(organ["fr_adj"])[0], "m"),
                 "es": ("trastorno " + es_forms(organ["es_adj"])[0], "m"), "de": (organ["de_stem"] + "erkrankung", "f"),
                 "ru": (ru_forms(organ["ru_adj"])[2] + " заболевание", "n"), "ja": (organ["ja_root"] + "疾患", ""),
                 "zh": (organ["zh_root"] + "疾病", "")}
        return Head(key, forms, "T047", "", organ["en_noun"])
    if kind == "PROC":
        forms = {"en": (organ["en_adj"] + " procedure", ""), "fr": ("intervention " + fr_forms(organ["fr_adj"])[1], "f"),
                 "es": ("procedimiento " + es_forms(organ["es_adj"])[0], "m"), "de": (organ["de_stem"] + "eingriff", "m"),
                 "ru": (ru_forms(organ["ru_adj"])[2] + " вмешательство", "n"), "ja": (organ["ja_root"] + "の処置", ""),
                 "zh": (organ["zh_root"] + "部手术", "")}
        return Head(key, forms, "T061", "", organ["en_noun"])
    # ANAT: the organ itself
    fr_n, fr_g = _ng(organ["fr_noun"])
    es_n, es_g = _ng(organ["es_noun"])
    de_n, de_g = _ng(organ["de_noun"])
    ru_n, ru_g = _ng(organ["ru_noun"])
    forms = {"en": (organ["en_noun"], ""), "fr": (fr_n, fr_g), "es": (es_n, es_g), "de": (de_n, de_g), "ru": (ru_n, ru_g),
             "ja": (organ["ja_noun"], ""), "zh": (organ["zh_noun"], "")}
    return Head(key, forms, "T023", "", organ["en_noun"])


def root_head(group: str) -> Head:
    en, fr, es, de, ru, ja, zh, tui = GROUP_ROOTS[group].split("|")
    forms = {"en": (en, ""), "fr": _ng(fr), "es": _ng(es), "de": _ng(de), "ru": _ng(ru), "ja": (ja, ""), "zh": (zh, "")}
    return Head("root:" + group, forms, tui)


def drug_head(sylls: list[list[str]], stem: list[str], key: str) -> Head:
    lat = "".join(s[0] for s in sylls)
    en, fr, es = lat + stem[0], lat + stem[1], lat + stem[2]
    forms = {"en": (en, ""), "fr": (fr, "f" if fr.endswith("ine") else "m"), "es": (es, "f" if es.endswith("a") else "m"),
             "de": ((lat + stem[3]).capitalize(), "n"), "ru": ("".join(s[1] for s in sylls) + stem[4], "m"),
             "ja": ("".join(s[2] for s in sylls) + stem[5], ""), "zh": ("".join(s[3] for s in sylls) + stem[6], "")}
    return Head(key, forms, "T121", "", stem[7])


def drug_class_head(stem: list[str]) -> Head:
    forms = {"en": (stem[7], ""), "fr": _ng(stem[8]), "es": _ng(stem[9]), "de": _ng(stem[10]), "ru": _ng(stem[11]),
             "ja": (stem[12], ""), "zh": (stem[13], "")}
    return Head("class:" + stem[0], forms, "T121", "", stem[7])


def gene_family_head(fam: str) -> Head:
    forms = {"en": (fam + " gene family", ""), "fr": ("famille de gènes " + fam, "f"), "es": ("familia de genes " + fam, "f"),
             "de": (fam + "-Genfamilie", "f"), "ru": ("семейство генов " + fam, "n"), "ja": (fam + "遺伝子ファミリー", ""),
             "zh": (fam + "基因家族", "")}
    return Head("fam:" + fam, forms, "T028", "", fam)


def gene_head(sym: str, fam: str) -> Head:
    forms = {"en": (sym + " gene", ""), "fr": ("gène " + sym, "m"), "es": ("gen " + sym, "m"), "de": (sym + "-Gen", "n"),
             "ru": ("ген " + sym, "m"), "ja": (sym + "遺伝子", ""), "zh": (sym + "基因", "")}
    return Head("gene:" + sym, forms, "T028", "", fam)


def eponym_head(sylls: list[list[str]], ending: list[str], kind: list[str], organ: dict, key: str) -> Head:
    """'Kavrell disease', 'maladie de Kavrell', 'болезнь Каврелл': the surname in every
    Latin-script language, transliterated in the others; attached to an organ category."""
    latin = ("".join(s[0] for s in sylls) + ending[0]).capitalize()
    ru = "".join(s[1] for s in sylls) + ending[1]
    ja = "".join(s[2] for s in sylls) + ending[2]
    zh = "".join(s[3] for s in sylls) + ending[3]
    forms = {"en": (kind[0].format(n=latin), "")}
    for lang, col in (("fr", 1), ("es", 2), ("de", 3), ("ru", 4)):
        text, g = _ng(kind[col])
        forms[lang] = (text.format(n=ru[:1].upper() + ru[1:] if lang == "ru" else latin), g)
    forms["ja"], forms["zh"] = (kind[5].format(n=ja), ""), (kind[6].format(n=zh), "")
    return Head(key, forms, kind[7], "", organ["en_noun"])


LATIN_ONLY = ("en", "fr", "es", "de", "it", "pt", "nl")


def latin_head(name: str, tui: str, key: str) -> Head:
    forms = {l: (name, "m") for l in ("en", "fr", "es", "de")}
    return Head(key, forms, tui, "", "", LATIN_ONLY)


# Modifier categories per group, in hierarchy order
MODS = {
    "DISO": [[adj_mod(r, 0) for r in ETIOLOGY], [adj_mod(r, 1) for r in COURSE],
             [adj_mod(r, 2) for r in SEVERITY] + [post_mod(r, 2) for r in DISO_POST]],
    "CHEM": [[salt_mod(r, 0) for r in SALTS], [form_mod(r, 1) for r in DOSE_FORMS], [strength_mod(s, 2) for s in STRENGTHS]],
    "PROC": [[adj_mod(r, 0) for r in APPROACH], [adj_mod(r, 1) for r in EXTENT], [adj_mod(r, 2) for r in SETTING]],
    "ANAT": [[adj_mod(r, 0) for r in SIDE], [adj_mod(r, 1) for r in POSITION], [adj_mod(r, 2) for r in DEPTH]],
    "DEVI": [[adj_mod(r, 0) for r in DEVICE_MODS]],
}
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
TUI_BY_STRUCTURE = {"tissue": "T024", "epithelium": "T024", "parenchyma": "T024", "mucosa": "T024", "interstitium": "T024"}
KIND_EN = {"T047": "disorder", "T046": "pathologic process", "T191": "neoplasm", "T184": "symptom",
           "T019": "developmental anomaly", "T037": "injury", "T033": "finding"}
FEATURES = ["inflammation", "progressive loss of function", "abnormal tissue growth", "structural change",
            "impaired blood supply", "fibrous tissue formation", "fluid accumulation", "recurrent pain",
            "cellular infiltration", "reduced secretory capacity", "tissue necrosis", "episodic obstruction"]


QUESTION_GROUP_WEIGHT = {"DISO": 1.0, "CHEM": 0.45, "PROC": 0.8, "ANAT": 0.5, "GENE": 0.35}
QUESTION_DEPTH_WEIGHT = {2: 1.0, 3: 0.8, 4: 0.4}
QUESTION_DEPTHS = {"DISO": (2, 3, 4), "PROC": (2, 3, 4), "CHEM": (2, 3), "ANAT": (2, 3), "GENE": (2,)}
ROLES = ["native:zh", "native:ja", "native:fr", "native:ru", "native:es", "en"]
ATOMS_PER_CONCEPT = 5.0  # measured; sizes the CUI gaps and the prior of the role rates


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
        self.spaces = self._head_spaces()

    # ------------------------------------------------------------------ identifiers
    def next_cui(self) -> str:
        self.cui_num += self.rng.randint(1, self.gap)
        if self.cui_num > 9_999_999:
            raise RuntimeError("CUI space exhausted: raise ATOMS_PER_CONCEPT")
        return "C%07d" % self.cui_num

    # ------------------------------------------------------------------ head spaces
    def _head_spaces(self) -> dict[str, HeadSpace]:
        rng = random.Random(self.rng.random())
        no, ns, nl, npx = len(ORG), len(DISO_SUFFIXES), len(LESIONS), len(PREFIXES) + 1

        def diso_simple(i):
            if i < npx * no * ns:
                p, rest = i % npx, i // npx
                o, s = rest % no, rest // no
                suf = DISO_SUFFIXES[s]
                h = single_head(PREFIXES[p - 1] if p else None, [ORG[o]], suf, suf[7], suf[8], f"d:{p}:{o}:{s}")
                return h, [o]
            i -= npx * no * ns
            o, le = i % no, i // no
            return phrase_head(ORG[o], LESIONS[le], LESIONS[le][7], f"l:{o}:{le}"), [o]

        def diso_compound(i, prefixed=False):
            p = 0
            if prefixed:
                p, i = i % (npx - 1) + 1, i // (npx - 1)
            o1, rest = i % no, i // no
            o2, s = rest % (no - 1), rest // (no - 1)
            o2 = o2 + 1 if o2 >= o1 else o2
            suf = DISO_SUFFIXES[s]
            h = single_head(PREFIXES[p - 1] if p else None, [ORG[o1], ORG[o2]], suf, suf[7], suf[8], f"c:{p}:{o1}:{o2}:{s}")
            return h, [o1, o2]

        npp, nps, npn = len(PROC_PREFIXES) + 1, len(PROC_SUFFIXES), len(PROC_NOUNS)

        def proc_simple(i):
            if i < npp * no * nps:
                p, rest = i % npp, i // npp
                o, s = rest % no, rest // no
                suf = PROC_SUFFIXES[s]
                return single_head(PROC_PREFIXES[p - 1] if p else None, [ORG[o]], suf, suf[7], "", f"p:{p}:{o}:{s}"), [o]
            i -= npp * no * nps
            o, k = i % no, i // no
            return phrase_head(ORG[o], PROC_NOUNS[k], PROC_NOUNS[k][7], f"pn:{o}:{k}"), [o]

        def proc_compound(i):
            o1, rest = i % no, i // no
            o2, s = rest % (no - 1), rest // (no - 1)
            o2 = o2 + 1 if o2 >= o1 else o2
            suf = PROC_SUFFIXES[s]
            return single_head(None, [ORG[o1], ORG[o2]], suf, suf[7], "", f"pc:{o1}:{o2}:{s}"), [o1, o2]

        nsy, nst = len(SYLLABLES), len(DRUG_STEMS)

        def drug(i, k):
            st, i = i % nst, i // nst
            sylls = []
            for _ in range(k):
                sylls.append(SYLLABLES[i % nsy])
                i //= nsy
            return drug_head(sylls, DRUG_STEMS[st], f"rx:{st}:" + "".join(s[0] for s in sylls)), [st]

        def anat(i):
            o, s = i % no, i // no
            st = STRUCTURES[s]
            return phrase_head(ORG[o], st + [TUI_BY_STRUCTURE.get(st[0], "T023")], TUI_BY_STRUCTURE.get(st[0], "T023"), f"a:{o}:{s}"), [o]

        letters = "ABCDEFGHIKLMNPRSTVWXZ"

        def gene_family(i):
            a, b, c = i % 21, (i // 21) % 21, (i // 441) % 21
            return letters[a] + letters[b] + letters[c] + ("" if i < 9261 else letters[(i // 9261) % 21])

        def genus(i):
            s1, rest = i % nsy, i // nsy
            s2, g = rest % nsy, rest // nsy
            return (SYLLABLES[s1][0] + SYLLABLES[s2][0] + GENUS_SUFFIXES[g]).capitalize()

        def eponym(i, k):
            kind, i = i % len(EPONYM_KINDS), i // len(EPONYM_KINDS)
            end, i = i % len(EPONYM_ENDINGS), i // len(EPONYM_ENDINGS)
            sylls = []
            for _ in range(k):
                sylls.append(SYLLABLES[i % nsy])
                i //= nsy
            o = (kind * 7 + end * 5 + sum(SYLLABLES.index(s) for s in sylls)) % no
            key = f"e:{kind}:{o}:{end}:" + "".join(s[0] for s in sylls)
            return eponym_head(sylls, EPONYM_ENDINGS[end], EPONYM_KINDS[kind], ORG[o], key), [o]

        def phys(i):
            o, k = i % no, i // no
            return phrase_head(ORG[o], FUNCTIONS[k] + ["T042"], "T042", f"f:{o}:{k}"), [o]

        def devi(i):
            o, k = i % no, i // no
            return phrase_head(ORG[o], DEVICES[k] + ["T074"], "T074", f"v:{o}:{k}"), [o]

        return {
            "DISO": HeadSpace([(npx * no * ns + no * nl, diso_simple), (no * (no - 1) * ns, diso_compound),
                               ((npx - 1) * no * (no - 1) * ns, lambda i: diso_compound(i, True))], rng),
            "PROC": HeadSpace([(npp * no * nps + no * npn, proc_simple), (no * (no - 1) * nps, proc_compound)], rng),
            "CHEM": HeadSpace([(nsy ** 2 * nst, lambda i: drug(i, 2)), (nsy ** 3 * nst, lambda i: drug(i, 3))], rng),
            "ANAT": HeadSpace([(no * len(STRUCTURES), anat)], rng),
            "GENE": HeadSpace([(21 ** 4, gene_family)], rng),
            "LIVB": HeadSpace([(nsy * nsy * len(GENUS_SUFFIXES), genus)], rng),
            "PHYS": HeadSpace([(no * len(FUNCTIONS), phys)], rng),
            "DEVI": HeadSpace([(no * len(DEVICES), devi)], rng),
            # last, so that the draws of the spaces above are those of a generator without it
            "DISO_EPONYM": HeadSpace([(nsy ** 2 * len(EPONYM_ENDINGS) * len(EPONYM_KINDS), lambda i: eponym(i, 2)),
                                      (nsy ** 3 * len(EPONYM_ENDINGS) * len(EPONYM_KINDS), lambda i: eponym(i, 3))], rng),
        }

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
        rng = self.rng
        cui = self.next_cui()
        num = self.cui_num
        en = render(head, mods, "en")
        role = self._role(group, depth) if question_ok else None
        words = en.split(" ")

        # ---- English atoms: (lat, sab, tty, text, forced)
        srcs = [s for s, p in ENG_SOURCES[group] if rng.random() < p] or [ENG_SOURCES[group][0][0]]
        if role and not any(SAB_INFO[s][1] == 0 for s in srcs):
            srcs.append(ENG_OPEN[group][0])
        atoms = []
        for s in srcs:
            info = SAB_INFO[s]
            atoms.append(("ENG", s, info[3], style(en, info[5])))
            if s == "SNOMEDCT_US":
                atoms.append(("ENG", s, "FN", style(en, "cap") + f" ({FN_TAG[group]})"))
            elif s == "HGNC" and head.key.startswith("gene:"):
                atoms.append(("ENG", s, "ACR", words[0]))
        variants = []
        if group in ("DISO", "PROC", "ANAT", "PHYS", "DEVI") and len(words) >= 2 and " with " not in en and rng.random() < .55:
            variants.append(words[-1] + ", " + " ".join(words[:-1]))  # MeSH-style inverted entry term
        b = british(en)
        if b != en and rng.random() < .8:
            variants.append(b)
        if head.gloss and not mods and rng.random() < .7:
            variants.append(head.gloss)
        if rng.random() < (.25 if len(words) == 1 and group in ("DISO", "PROC") else .03):
            variants.append(en + " NOS")
        open_srcs = [s for s in srcs if SAB_INFO[s][1] == 0]
        for v in variants:  # entry terms come mostly from the open sources that name the concept
            pool = open_srcs if open_srcs and rng.random() < .75 else srcs
            s = pool[rng.randrange(len(pool))]
            atoms.append(("ENG", s, SAB_INFO[s][4], style(v, SAB_INFO[s][5]) if s != "MTHSPL" else v.upper()))
        content = [w for w in words if w not in SMALL_WORDS]
        if len(content) >= 3 and rng.random() < .12 and all(w.isalpha() for w in content):
            s = "NCI" if "NCI" in srcs else srcs[0]
            atoms.append(("ENG", s, "AB", "".join(w[0] for w in content[:5]).upper()))

        # ---- other languages
        cov = COVERAGE.get(group, {})
        factor = 1.0 if depth <= 2 else max(0.35, 1.0 - 0.15 * (depth - 2))
        native = role[7:] if role and role.startswith("native:") else None
        open_langs = set()
        rendered = {}
        for lang, p in cov.items():
            if lang not in head.langs:
                continue
            forced = lang == native
            if not forced and rng.random() >= p * factor:
                continue
            applicable = [(s, q) for s, g, q in OTHER_SOURCES[lang] if g == "*" or group in g.split()]
            chosen = [s for s, q in applicable if rng.random() < q] or [applicable[0][0]]
            if forced and OPEN_SOURCE[lang][group] not in chosen:
                chosen.append(OPEN_SOURCE[lang][group])
            text = rendered[lang] = render(head, mods, lang)
            lat = LAT_OF[lang]
            for s in chosen:
                info = SAB_INFO[s]
                atoms.append((lat, s, info[3], style(text, info[5])))
                if info[1] == 0:
                    open_langs.add(lang)
            if lat in ("FRE", "SPA", "RUS", "ITA", "POR") and rng.random() < .1:
                s = chosen[-1]
                atoms.append((lat, s, SAB_INFO[s][4], style(text, "cap" if SAB_INFO[s][5] != "cap" else "lower")))

        # ---- rows
        rows = []
        luis: dict = {}
        suis: dict = {}
        pref_lui: dict = {}
        pf: dict = {}
        seen_sui = set()
        codes: dict = {}
        first_aui = ""
        name_en_key = None
        rank = self.preferred_en
        for lat, sab, tty, text in atoms:
            info = SAB_INFO[sab]
            k = (lat, lui_key(text))
            lui = luis.get(k)
            if lui is None:
                lui = luis[k] = self.lui()
            sui = suis.get((lat, text))
            if sui is None:
                sui = suis[(lat, text)] = self.sui()
            ts = "P" if pref_lui.setdefault(lat, lui) == lui else "S"
            first = pf.setdefault(lui, text)
            stt = "PF" if first == text else ("VC" if first.lower() == text.lower() else "VW")
            ispref = "N" if sui in seen_sui else "Y"
            seen_sui.add(sui)
            sup = "N"
            if not role:
                u = rng.random()
                sup = "O" if u < .015 else "E" if u < .019 else "Y" if u < .035 else "N"
                if sup != "N":
                    self.suppressed += 1
            kind = info[6]
            c = codes.get(kind)
            if c is None:
                c = codes[kind] = code_for(kind, num)
            saui = c[0] if kind == "sct" else ("T%06d" % (int(lui[1:]) % 1_000_000) if kind == "msh" else "")
            aui = self.aui()
            if not first_aui and lat == "ENG":
                first_aui = aui
            rows.append(f"{cui}|{lat}|{ts}|{lui}|{stt}|{sui}|{ispref}|{aui}|{saui}|{c[1]}|{c[2]}|{sab}|{tty}|{c[3]}|{text}|{info[1]}|{sup}||\n")
            self.tfr[sab] = self.tfr.get(sab, 0) + 1
            self.by_lat[lat] = self.by_lat.get(lat, 0) + 1
            if lat == "ENG" and info[1] == 0 and sup != "O":
                key = (ispref == "N", rank.index(sab) if sab in rank else len(rank), text)
                if name_en_key is None or key < name_en_key:
                    name_en_key = key
        for sab in {a[1] for a in atoms}:
            self.cfr[sab] = self.cfr.get(sab, 0) + 1
        self.w.add("MRCONSO.RRF", rows)

        # ---- semantic types, relations, definitions
        tuis = [tui]
        if group == "CHEM" and tui == "T121" and rng.random() < .5:
            tuis.append("T109")
        self.w.add("MRSTY.RRF", [f"{cui}|{t}|{SEMANTIC_TYPES[t][0]}|{SEMANTIC_TYPES[t][1]}|{self.atui()}||\n" for t in sorted(tuis)])
        rel_sab = srcs[0]
        rels = []
        for p in parents:
            rela, inv = ("isa", "inverse_isa") if rel_sab == "SNOMEDCT_US" else ("", "")
            rels.append(f"{cui}|{first_aui}|AUI|PAR|{p.cui}|{p.aui}|AUI|{rela}|{self.rui()}||{rel_sab}|{rel_sab}||Y|N||\n")
            rels.append(f"{p.cui}|{p.aui}|AUI|CHD|{cui}|{first_aui}|AUI|{inv}|{self.rui()}||{rel_sab}|{rel_sab}|||N||\n")
        if len(parents) > 1:
            self.multi_parent += 1
        if group == "DISO" and depth == 2 and rng.random() < .6:
            site = self.anat_organs.get(self._organ_index(head))
            if site is not None:
                rels.append(f"{cui}|{first_aui}|AUI|RO|{site.cui}|{site.aui}|AUI|has_finding_site|{self.rui()}||SNOMEDCT_US|SNOMEDCT_US|1|Y|N||\n")
                rels.append(f"{site.cui}|{site.aui}|AUI|RO|{cui}|{first_aui}|AUI|finding_site_of|{self.rui()}||SNOMEDCT_US|SNOMEDCT_US|1||N||\n")
        if rels:
            self.w.add("MRREL.RRF", rels)
        pdef = .45 if depth <= 2 else .25 if depth == 3 else .1
        if rng.random() < pdef:
            self.w.add("MRDEF.RRF", self._definitions(cui, first_aui, en, head, group, tui, parents, srcs))

        # ---- bookkeeping
        self.concepts += 1
        self.by_group[group] = self.by_group.get(group, 0) + 1
        self.by_depth[depth] = self.by_depth.get(depth, 0) + 1
        name_en = name_en_key[2] if name_en_key else ""
        if not role and name_en:
            role = self._term_role(group, depth, open_langs)
        if role:
            self._keep(cui, head, mods, group, tui, depth, en, name_en, atoms, role)
        if group in KEY_GROUPS and depth >= 2 and name_en:
            self.reservoir_seen += 1
            item = (en, group, tui, head.organ)
            if len(self.reservoir) < self.reservoir_size:
                self.reservoir.append(item)
            else:
                j = rng.randrange(self.reservoir_seen)
                if j < self.reservoir_size:
                    self.reservoir[j] = item
        return Ref(cui, first_aui, en)

    @staticmethod
    def _organ_index(head: Head) -> int:
        parts = head.key.split(":")
        return int(parts[2]) if parts[0] in ("d", "c", "e") else int(parts[1]) if parts[0] == "l" else -1

    def _keep(self, cui, head, mods, group, tui, depth, en, name_en, atoms, role) -> None:
        names, has_atom, genders = {}, {}, {}
        for l in QUESTION_LANGS + [ADDITION_LANG]:  # deterministic, no random draws: the others stay as they were
            lat = LAT_OF[l]
            opens = [(self.preferred[l].index(a[1]) if a[1] in self.preferred[l] else 99, a[3])
                     for a in atoms if a[0] == lat and SAB_INFO[a[1]][1] == 0]
            if opens:
                text = min(opens)[1]
                if l in ("fr", "es", "ru") and text[:1].isupper() and text[1:2].islower():
                    text = text[0].lower() + text[1:]
                names[l], has_atom[l] = text, True
            else:
                names[l], has_atom[l] = render(head, mods, l), False
            genders[l] = head.forms[l][1] if l in head.forms else ""
        self.kept.append(QConcept(cui, group, tui, depth, en, name_en, names, genders, has_atom, role))

    def _definitions(self, cui, aui, en, head, group, tui, parents, srcs) -> list[str]:
        rng = self.rng
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
        opens = [s for s in srcs if SAB_INFO[s][1] == 0 and SAB_INFO[s][0] == "ENG"] or ["MSH"]
        return [f"{cui}|{aui}|{self.atui()}||{opens[0]}|{text}|N||\n"]

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
        self.w.close()
        self._write_mrsab()
        self._write_mrfiles()

    # ------------------------------------------------------------------ MRSAB, MRFILES
    def _write_mrsab(self) -> None:
        rows = []
        for sab in sorted(SAB_INFO):
            lat, srl, son, pt, sy, _style, _kind = SAB_INFO[sab]
            ttyl = ",".join(sorted({pt, sy} | ({"FN"} if sab == "SNOMEDCT_US" else set()) | ({"AB"} if sab == "NCI" else set())))
            vsab = f"{sab}2025"
            # VCUI|RCUI|VSAB|RSAB|SON|SF|SVER|VSTART|VEND|IMETA|RMETA|SLC|SCC|SRL|TFR|CFR|CXTY|TTYL|ATNL|LAT|CENC|CURVER|SABIN|SSN|SCIT
            rows.append(f"||{vsab}|{sab}|{son}|{sab}|2025|||2025AA|||Content contact, {son}|{srl}|"
                        f"{self.tfr.get(sab, 0)}|{self.cfr.get(sab, 0)}||{ttyl}||{lat}|UTF-8|Y|Y|{son}|{son}, 2025 release (synthetic).|\n")
        (self.w.folder / "MRSAB.RRF").write_text("".join(rows), encoding="utf-8", newline="\n")
        self.w.rows["MRSAB.RRF"] = len(rows)

    def _write_mrfiles(self) -> None:
        from umls.derive_sample import write_mrfiles  # generate() put ROOT on sys.path

        write_mrfiles(self.w.folder, self.w.rows)


# ============================================================================ question templates
# {c} the concept's name; fr {le_c} {de_c} {a_c} {de_n}, es {el_c} {del_c} {al_c} carry the article;
# ru names the kind of concept ({kind}: genitive, {kind_nom}, {kind_acc}, {kind_ins}) before the
# quoted name, which stays in the nominative. {pop} a population phrase; numbers are shared
# by every language of one question (the numbers gate).
POPULATIONS = [
    {"en": "in adults older than {age}", "fr": "chez les adultes de plus de {age} ans", "es": "en adultos mayores de {age} años",
     "ru": "у взрослых старше {age} лет", "ja": "{age}歳以上の成人において", "zh": "在{age}岁以上的成人中"},
    {"en": "in children younger than {child}", "fr": "chez les enfants de moins de {child} ans", "es": "en niños menores de {child} años",
     "ru": "у детей младше {child} лет", "ja": "{child}歳以下の小児において", "zh": "在{child}岁以下的儿童中"},
    {"en": "in pregnant women at {week} weeks of gestation", "fr": "chez les femmes enceintes à {week} semaines de grossesse",
     "es": "en mujeres embarazadas de {week} semanas de gestación", "ru": "у беременных женщин на сроке {week} недель",
     "ja": "妊娠{week}週の妊婦において", "zh": "在妊娠{week}周的孕妇中"},
    {"en": "in patients with a body mass index above {bmi}", "fr": "chez les patients dont l'indice de masse corporelle dépasse {bmi}",
     "es": "en pacientes con un índice de masa corporal superior a {bmi}", "ru": "у пациентов с индексом массы тела выше {bmi}",
     "ja": "体格指数が{bmi}を超える患者において", "zh": "在体重指数超过{bmi}的患者中"},
    {"en": "in patients admitted to intensive care for more than {days} days",
     "fr": "chez les patients hospitalisés en soins intensifs depuis plus de {days} jours",
     "es": "en pacientes ingresados en cuidados intensivos durante más de {days} días",
     "ru": "у пациентов, находящихся в отделении интенсивной терапии более {days} дней",
     "ja": "{days}日以上集中治療室に入院している患者において", "zh": "在重症监护病房住院超过{days}天的患者中"},
    {"en": "in adults older than {age} living in nursing homes", "fr": "chez les adultes de plus de {age} ans vivant en maison de retraite",
     "es": "en adultos mayores de {age} años que viven en residencias", "ru": "у взрослых старше {age} лет, проживающих в домах престарелых",
     "ja": "介護施設に入所している{age}歳以上の成人において", "zh": "在养老院居住的{age}岁以上成人中"},
    {"en": "in patients followed for {years} years after diagnosis", "fr": "chez les patients suivis pendant {years} ans après le diagnostic",
     "es": "en pacientes seguidos durante {years} años tras el diagnóstico",
     "ru": "у пациентов, наблюдаемых в течение {years} лет после постановки диагноза",
     "ja": "診断後{years}年間経過観察された患者において", "zh": "在确诊后随访{years}年的患者中"},
    {"en": "in patients with a creatinine clearance below {crcl} mL/min",
     "fr": "chez les patients dont la clairance de la créatinine est inférieure à {crcl} mL/min",
     "es": "en pacientes con un aclaramiento de creatinina inferior a {crcl} mL/min",
     "ru": "у пациентов с клиренсом креатинина ниже {crcl} мл/мин",
     "ja": "クレアチニンクリアランスが{crcl} mL/min未満の患者において", "zh": "在肌酐清除率低于{crcl} mL/min的患者中"},
    {"en": "in adolescents aged {a1} to {a2}", "fr": "chez les adolescents âgés de {a1} à {a2} ans", "es": "en adolescentes de {a1} a {a2} años",
     "ru": "у подростков в возрасте от {a1} до {a2} лет", "ja": "{a1}～{a2}歳の青年において", "zh": "在{a1}至{a2}岁的青少年中"},
    {"en": "in patients followed in primary care for at least {years} years",
     "fr": "chez les patients suivis en soins primaires depuis au moins {years} ans",
     "es": "en pacientes atendidos en atención primaria durante al menos {years} años",
     "ru": "у пациентов, которые наблюдаются в первичном звене как минимум {years} лет",
     "ja": "{years}年以上プライマリケアで経過観察されている患者において", "zh": "在基层医疗机构随访至少{years}年的患者中"},
    {"en": "in women older than {age}", "fr": "chez les femmes de plus de {age} ans", "es": "en mujeres mayores de {age} años",
     "ru": "у женщин старше {age} лет", "ja": "{age}歳以上の女性において", "zh": "在{age}岁以上的女性中"},
    {"en": "in men aged {age} or older", "fr": "chez les hommes âgés de {age} ans ou plus", "es": "en hombres de {age} años o más",
     "ru": "у мужчин в возрасте {age} лет и старше", "ja": "{age}歳以上の男性において", "zh": "在{age}岁及以上的男性中"},
    {"en": "in patients with diabetes diagnosed more than {years} years ago",
     "fr": "chez les patients dont le diabète a été diagnostiqué il y a plus de {years} ans",
     "es": "en pacientes con diabetes diagnosticada hace más de {years} años",
     "ru": "у пациентов с диабетом, диагностированным более {years} лет назад",
     "ja": "{years}年以上前に糖尿病と診断された患者において", "zh": "在确诊糖尿病超过{years}年的患者中"},
    {"en": "in infants born before {week} weeks of gestation", "fr": "chez les nourrissons nés avant {week} semaines de grossesse",
     "es": "en lactantes nacidos antes de las {week} semanas de gestación", "ru": "у младенцев, родившихся до {week} недель гестации",
     "ja": "妊娠{week}週未満で出生した乳児において", "zh": "在妊娠{week}周前出生的婴儿中"},
    {"en": "in patients awaiting surgery for more than {days} days",
     "fr": "chez les patients en attente d'une intervention chirurgicale depuis plus de {days} jours",
     "es": "en pacientes que esperan una cirugía desde hace más de {days} días", "ru": "у пациентов, ожидающих операции более {days} дней",
     "ja": "{days}日を超えて手術を待っている患者において", "zh": "在等待手术超过{days}天的患者中"},
    {"en": "in athletes training more than {hours} hours a week", "fr": "chez les sportifs s'entraînant plus de {hours} heures par semaine",
     "es": "en deportistas que entrenan más de {hours} horas a la semana", "ru": "у спортсменов, тренирующихся более {hours} часов в неделю",
     "ja": "週{hours}時間を超えてトレーニングする運動選手において", "zh": "在每周训练超过{hours}小时的运动员中"},
    {"en": "in people who smoke more than {cig} cigarettes a day", "fr": "chez les personnes fumant plus de {cig} cigarettes par jour",
     "es": "en personas que fuman más de {cig} cigarrillos al día", "ru": "у людей, выкуривающих более {cig} сигарет в день",
     "ja": "一日に{cig}本を超えて喫煙する人において", "zh": "在每天吸烟超过{cig}支的人群中"},
    {"en": "in patients discharged from hospital within the past {weeks} weeks",
     "fr": "chez les patients sortis de l'hôpital au cours des {weeks} dernières semaines",
     "es": "en pacientes dados de alta del hospital en las últimas {weeks} semanas",
     "ru": "у пациентов, выписанных из стационара в течение последних {weeks} недель",
     "ja": "過去{weeks}週間以内に退院した患者において", "zh": "在过去{weeks}周内出院的患者中"},
]
# A template: (task, groups or '*', {lang: text})
TEMPLATES = [
    # ---------------------------------------------------------------- xqa, any kind of concept
    ("xqa", "*", {"en": "What is the clinical significance of {c} {pop}?",
                  "fr": "Quelle est la signification clinique {de_c} {pop} ?",
                  "es": "¿Cuál es la importancia clínica {del_c} {pop}?",
                  "ru": "Каково клиническое значение {kind} «{c}» {pop}?",
                  "ja": "{pop}、{c}の臨床的意義は何ですか？", "zh": "{pop}，{c}的临床意义是什么？"}),
    ("xqa", "*", {"en": "How should clinicians interpret findings related to {c} {pop}?",
                  "fr": "Comment les cliniciens doivent-ils interpréter les résultats liés {a_c} {pop} ?",
                  "es": "¿Cómo deben interpretar los clínicos los hallazgos relacionados con {el_c} {pop}?",
                  "ru": "Как врачам следует интерпретировать данные, связанные с {kind_ins} «{c}», {pop}?",
                  "ja": "{pop}、{c}に関連する所見を臨床医はどのように解釈すべきですか？",
                  "zh": "{pop}，临床医生应如何解读与{c}相关的检查结果？"}),
    ("xqa", "*", {"en": "Which laboratory tests are most useful when evaluating {c} {pop}?",
                  "fr": "Quels examens biologiques sont les plus utiles pour évaluer {le_c} {pop} ?",
                  "es": "¿Qué pruebas de laboratorio son más útiles para evaluar {el_c} {pop}?",
                  "ru": "Какие лабораторные исследования наиболее полезны для оценки {kind} «{c}» {pop}?",
                  "ja": "{pop}、{c}を評価する際に最も有用な臨床検査はどれですか？",
                  "zh": "{pop}，评估{c}时最有用的实验室检查有哪些？"}),
    ("xqa", "*", {"en": "What follow-up schedule is advised for {c} {pop}?",
                  "fr": "Quel calendrier de suivi est conseillé pour {le_c} {pop} ?",
                  "es": "¿Qué calendario de seguimiento se aconseja para {el_c} {pop}?",
                  "ru": "Какой график наблюдения рекомендуется в отношении {kind} «{c}» {pop}?",
                  "ja": "{pop}、{c}についてはどのような経過観察の間隔が勧められますか？",
                  "zh": "{pop}，针对{c}建议采用怎样的随访安排？"}),
    ("xqa", "*", {"en": "Which risk factors are most strongly associated with {c} {pop}?",
                  "fr": "Quels facteurs de risque sont le plus fortement associés {a_c} {pop} ?",
                  "es": "¿Qué factores de riesgo se asocian con más fuerza con {el_c} {pop}?",
                  "ru": "Какие факторы риска сильнее всего связаны с {kind_ins} «{c}» {pop}?",
                  "ja": "{pop}、{c}と最も強く関連する危険因子は何ですか？",
                  "zh": "{pop}，与{c}关联最密切的危险因素有哪些？"}),
    ("xqa", "*", {"en": "How often does {c} lead to hospital admission {pop}?",
                  "fr": "Quelle est la fréquence des hospitalisations liées {a_c} {pop} ?",
                  "es": "¿Con qué frecuencia {el_c} da lugar a un ingreso hospitalario {pop}?",
                  "ru": "Как часто {kind_nom} «{c}» приводит к госпитализации {pop}?",
                  "ja": "{pop}、{c}が入院につながる頻度はどの程度ですか？",
                  "zh": "{pop}，{c}导致住院的频率有多高？"}),
    ("xqa", "*", {"en": "What do current guidelines say about screening for {c} {pop}?",
                  "fr": "Que disent les recommandations actuelles sur le dépistage {de_c} {pop} ?",
                  "es": "¿Qué dicen las guías actuales sobre el cribado {del_c} {pop}?",
                  "ru": "Что говорят современные клинические рекомендации о скрининге {kind} «{c}» {pop}?",
                  "ja": "{pop}、{c}のスクリーニングについて現行のガイドラインは何を推奨していますか？",
                  "zh": "{pop}，现行指南对{c}的筛查有何建议？"}),
    ("xqa", "*", {"en": "What is the typical prognosis associated with {c} {pop}?",
                  "fr": "Quel est le pronostic habituel associé {a_c} {pop} ?",
                  "es": "¿Cuál es el pronóstico habitual asociado {al_c} {pop}?",
                  "ru": "Каков обычный прогноз, связанный с {kind_ins} «{c}», {pop}?",
                  "ja": "{pop}、{c}に伴う典型的な予後はどのようなものですか？",
                  "zh": "{pop}，{c}的典型预后如何？"}),
    # ---------------------------------------------------------------- xqa, disorders
    ("xqa", "DISO", {"en": "What is the recommended first-line treatment for {c} {pop}?",
                     "fr": "Quel est le traitement de première intention recommandé en cas {de_n} {pop} ?",
                     "es": "¿Cuál es el tratamiento de primera línea recomendado para {el_c} {pop}?",
                     "ru": "Какое лечение первой линии рекомендуется при заболевании «{c}» {pop}?",
                     "ja": "{pop}、{c}に対して推奨される第一選択の治療は何ですか？",
                     "zh": "{pop}，{c}的推荐一线治疗是什么？"}),
    ("xqa", "DISO", {"en": "Which symptoms should prompt evaluation for {c} {pop}?",
                     "fr": "Quels symptômes doivent faire évoquer le diagnostic {de_c} {pop} ?",
                     "es": "¿Qué síntomas deben motivar el estudio {del_c} {pop}?",
                     "ru": "Какие симптомы должны заставить заподозрить заболевание «{c}» {pop}?",
                     "ja": "{pop}、どのような症状があれば{c}の評価を行うべきですか？",
                     "zh": "{pop}，出现哪些症状时应评估{c}？"}),
    ("xqa", "DISO", {"en": "How is the diagnosis of {c} confirmed {pop}?",
                     "fr": "Comment confirme-t-on le diagnostic {de_c} {pop} ?",
                     "es": "¿Cómo se confirma el diagnóstico {del_c} {pop}?",
                     "ru": "Как подтверждается диагноз «{c}» {pop}?",
                     "ja": "{pop}、{c}の診断はどのように確定されますか？",
                     "zh": "{pop}，如何确诊{c}？"}),
    ("xqa", "DISO", {"en": "What complications commonly develop in patients with {c} within {months} months?",
                     "fr": "Quelles complications apparaissent fréquemment dans les {months} mois chez les patients atteints {de_n} ?",
                     "es": "¿Qué complicaciones aparecen con frecuencia en los {months} meses siguientes en pacientes con {c}?",
                     "ru": "Какие осложнения часто развиваются в течение {months} месяцев у пациентов с диагнозом «{c}»?",
                     "ja": "{c}の患者で{months}か月以内によく生じる合併症は何ですか？",
                     "zh": "{c}患者在{months}个月内常见哪些并发症？"}),
    ("xqa", "DISO", {"en": "Which drug classes are preferred for long-term management of {c} {pop}?",
                     "fr": "Quelles classes médicamenteuses sont privilégiées pour la prise en charge au long cours {de_c} {pop} ?",
                     "es": "¿Qué clases de fármacos se prefieren para el tratamiento a largo plazo {del_c} {pop}?",
                     "ru": "Каким классам препаратов отдают предпочтение при длительном лечении заболевания «{c}» {pop}?",
                     "ja": "{pop}、{c}の長期管理にはどの薬剤クラスが推奨されますか？",
                     "zh": "{pop}，{c}的长期管理首选哪些药物类别？"}),
    ("xqa", "DISO", {"en": "When is referral to a specialist warranted for {c} {pop}?",
                     "fr": "Quand une orientation vers un spécialiste est-elle justifiée en cas {de_n} {pop} ?",
                     "es": "¿Cuándo está justificada la derivación al especialista en caso de {c} {pop}?",
                     "ru": "Когда оправдано направление к специалисту при заболевании «{c}» {pop}?",
                     "ja": "{pop}、{c}ではどのような場合に専門医への紹介が必要ですか？",
                     "zh": "{pop}，{c}在什么情况下需要转诊至专科医生？"}),
    # ---------------------------------------------------------------- xqa, drugs
    ("xqa", "CHEM", {"en": "What is the usual starting dose of {c} {pop}?",
                     "fr": "Quelle est la dose initiale habituelle {de_c} {pop} ?",
                     "es": "¿Cuál es la dosis inicial habitual {del_c} {pop}?",
                     "ru": "Какова обычная начальная доза препарата «{c}» {pop}?",
                     "ja": "{pop}、{c}の通常の開始用量はどのくらいですか？",
                     "zh": "{pop}，{c}的常规起始剂量是多少？"}),
    ("xqa", "CHEM", {"en": "Which adverse effects of {c} require monitoring {pop}?",
                     "fr": "Quels effets indésirables {de_c} nécessitent une surveillance {pop} ?",
                     "es": "¿Qué efectos adversos {del_c} requieren vigilancia {pop}?",
                     "ru": "Какие нежелательные эффекты препарата «{c}» требуют контроля {pop}?",
                     "ja": "{pop}、{c}のどの副作用に注意して経過を見る必要がありますか？",
                     "zh": "{pop}，{c}的哪些不良反应需要监测？"}),
    ("xqa", "CHEM", {"en": "Should the dose of {c} be adjusted when daily intake exceeds {dose} mg {pop}?",
                     "fr": "Faut-il ajuster la dose {de_c} lorsque l'apport quotidien dépasse {dose} mg {pop} ?",
                     "es": "¿Debe ajustarse la dosis {del_c} cuando la ingesta diaria supera los {dose} mg {pop}?",
                     "ru": "Нужно ли корректировать дозу препарата «{c}», если суточное потребление превышает {dose} мг, {pop}?",
                     "ja": "{pop}、一日の摂取量が{dose} mgを超える場合、{c}の用量を調整すべきですか？",
                     "zh": "{pop}，每日摄入量超过{dose} mg时，是否应调整{c}的剂量？"}),
    ("xqa", "CHEM", {"en": "How does {c} interact with anticoagulant therapy {pop}?",
                     "fr": "Quelles sont les interactions {de_c} avec un traitement anticoagulant {pop} ?",
                     "es": "¿Cómo interactúa {el_c} con el tratamiento anticoagulante {pop}?",
                     "ru": "Как препарат «{c}» взаимодействует с антикоагулянтной терапией {pop}?",
                     "ja": "{pop}、{c}は抗凝固療法とどのように相互作用しますか？",
                     "zh": "{pop}，{c}与抗凝治疗有何相互作用？"}),
    ("xqa", "CHEM", {"en": "Can {c} be continued during pregnancy beyond {week} weeks?",
                     "fr": "Peut-on poursuivre {le_c} pendant la grossesse au-delà de {week} semaines ?",
                     "es": "¿Puede mantenerse {el_c} durante el embarazo más allá de las {week} semanas?",
                     "ru": "Можно ли продолжать приём препарата «{c}» во время беременности после {week} недель?",
                     "ja": "妊娠{week}週以降も{c}の投与を継続できますか？",
                     "zh": "妊娠{week}周以后能否继续使用{c}？"}),
    ("xqa", "CHEM", {"en": "What laboratory monitoring is required during the first {weeks} weeks of {c} therapy {pop}?",
                     "fr": "Quelle surveillance biologique est nécessaire pendant les {weeks} premières semaines de traitement par {c} {pop} ?",
                     "es": "¿Qué controles de laboratorio se requieren durante las primeras {weeks} semanas de tratamiento con {c} {pop}?",
                     "ru": "Какой лабораторный контроль необходим в первые {weeks} недель терапии препаратом «{c}» {pop}?",
                     "ja": "{pop}、{c}による治療開始後{weeks}週間はどのような臨床検査によるモニタリングが必要ですか？",
                     "zh": "{pop}，使用{c}治疗的前{weeks}周需要进行哪些实验室监测？"}),
    ("xqa", "CHEM", {"en": "Is {c} effective as add-on therapy after {months} months of inadequate response {pop}?",
                     "fr": "L'ajout {de_c} est-il efficace après {months} mois de réponse insuffisante {pop} ?",
                     "es": "¿Es eficaz añadir {el_c} tras {months} meses de respuesta insuficiente {pop}?",
                     "ru": "Эффективно ли добавление препарата «{c}» после {months} месяцев недостаточного ответа {pop}?",
                     "ja": "{pop}、{months}か月間効果が不十分な場合、{c}の追加投与は有効ですか？",
                     "zh": "{pop}，在{months}个月疗效欠佳后加用{c}是否有效？"}),
    # ---------------------------------------------------------------- xqa, procedures
    ("xqa", "PROC", {"en": "What are the most frequent complications after {c} {pop}?",
                     "fr": "Quelles sont les complications les plus fréquentes après {le_c} {pop} ?",
                     "es": "¿Cuáles son las complicaciones más frecuentes tras {el_c} {pop}?",
                     "ru": "Каковы наиболее частые осложнения после вмешательства «{c}» {pop}?",
                     "ja": "{pop}、{c}後に最も多い合併症は何ですか？",
                     "zh": "{pop}，{c}后最常见的并发症有哪些？"}),
    ("xqa", "PROC", {"en": "How should patients be prepared before {c} {pop}?",
                     "fr": "Comment préparer les patients avant {le_c} {pop} ?",
                     "es": "¿Cómo se debe preparar a los pacientes antes {del_c} {pop}?",
                     "ru": "Как следует готовить пациентов к вмешательству «{c}» {pop}?",
                     "ja": "{pop}、{c}の前に患者をどのように準備すべきですか？",
                     "zh": "{pop}，{c}前应如何为患者做准备？"}),
    ("xqa", "PROC", {"en": "What is the expected recovery time after {c} {pop}?",
                     "fr": "Quelle est la durée de récupération attendue après {le_c} {pop} ?",
                     "es": "¿Cuál es el tiempo de recuperación esperado tras {el_c} {pop}?",
                     "ru": "Каково ожидаемое время восстановления после вмешательства «{c}» {pop}?",
                     "ja": "{pop}、{c}後の回復に要する期間はどのくらいですか？",
                     "zh": "{pop}，{c}后预计需要多长时间恢复？"}),
    ("xqa", "PROC", {"en": "How long is the hospital stay after {c} {pop}?",
                     "fr": "Quelle est la durée d'hospitalisation après {le_c} {pop} ?",
                     "es": "¿Cuánto dura la estancia hospitalaria tras {el_c} {pop}?",
                     "ru": "Какова длительность госпитализации после вмешательства «{c}» {pop}?",
                     "ja": "{pop}、{c}後の入院期間はどのくらいですか？",
                     "zh": "{pop}，{c}后需住院多长时间？"}),
    ("xqa", "PROC", {"en": "Which patients benefit most from {c} within {days} days of presentation?",
                     "fr": "Quels patients bénéficient le plus {de_c} dans les {days} jours suivant la présentation ?",
                     "es": "¿Qué pacientes se benefician más {del_c} en los {days} días siguientes a la presentación?",
                     "ru": "Каким пациентам вмешательство «{c}» приносит наибольшую пользу в течение {days} дней после обращения?",
                     "ja": "受診後{days}日以内の{c}で最も恩恵を受けるのはどのような患者ですか？",
                     "zh": "就诊后{days}天内接受{c}，哪些患者获益最大？"}),
    # ---------------------------------------------------------------- evidence, any kind of concept
    ("evidence", "*", {"en": "Is {c} associated with higher {years}-year mortality {pop}?",
                       "fr": "Existe-t-il une association entre {le_c} et la mortalité à {years} ans {pop} ?",
                       "es": "¿Existe una asociación entre {el_c} y la mortalidad a {years} años {pop}?",
                       "ru": "Существует ли связь между {kind_ins} «{c}» и смертностью в течение {years} лет {pop}?",
                       "ja": "{pop}、{c}は{years}年死亡率の上昇と関連していますか？",
                       "zh": "{pop}，{c}是否与{years}年死亡率升高相关？"}),
    ("evidence", "*", {"en": "What evidence links {c} to cardiovascular events {pop}?",
                       "fr": "Quelles données relient {le_c} aux événements cardiovasculaires {pop} ?",
                       "es": "¿Qué datos relacionan {el_c} con los eventos cardiovasculares {pop}?",
                       "ru": "Какие данные связывают {kind_acc} «{c}» с сердечно-сосудистыми событиями {pop}?",
                       "ja": "{pop}、{c}と心血管イベントとの関連を示すエビデンスは何ですか？",
                       "zh": "{pop}，有哪些证据表明{c}与心血管事件相关？"}),
    ("evidence", "*", {"en": "Do randomized trials show that early recognition of {c} improves outcomes {pop}?",
                       "fr": "Les essais randomisés montrent-ils que la reconnaissance précoce {de_c} améliore les résultats {pop} ?",
                       "es": "¿Muestran los ensayos aleatorizados que el reconocimiento precoz {del_c} mejora los resultados {pop}?",
                       "ru": "Показывают ли рандомизированные исследования, что раннее выявление {kind} «{c}» улучшает исходы {pop}?",
                       "ja": "{pop}、{c}を早期に認識することで転帰が改善することはランダム化試験で示されていますか？",
                       "zh": "{pop}，随机试验是否表明及早识别{c}可改善结局？"}),
    ("evidence", "*", {"en": "What is the reported prevalence of {c} {pop} in cohort studies published after {year}?",
                       "fr": "Quelle est la prévalence rapportée {de_c} {pop} dans les études de cohorte publiées après {year} ?",
                       "es": "¿Cuál es la prevalencia notificada {del_c} {pop} en los estudios de cohortes publicados después de {year}?",
                       "ru": "Какова распространённость {kind} «{c}» {pop} по данным когортных исследований, опубликованных после {year} года?",
                       "ja": "{year}年以降に発表されたコホート研究では、{pop}、{c}の有病率はどの程度と報告されていますか？",
                       "zh": "根据{year}年以后发表的队列研究，{pop}，{c}的报告患病率是多少？"}),
    ("evidence", "*", {"en": "Does a structured follow-up programme reduce readmissions related to {c} {pop}?",
                       "fr": "Un programme de suivi structuré réduit-il les réhospitalisations liées {a_c} {pop} ?",
                       "es": "¿Reduce un programa de seguimiento estructurado los reingresos relacionados con {el_c} {pop}?",
                       "ru": "Снижает ли структурированная программа наблюдения число повторных госпитализаций, связанных с {kind_ins} «{c}», {pop}?",
                       "ja": "{pop}、構造化された経過観察プログラムにより{c}に関連する再入院は減少しますか？",
                       "zh": "{pop}，结构化随访方案能否减少与{c}相关的再入院？"}),
    ("evidence", "*", {"en": "How accurate is point-of-care testing for detecting {c} {pop}?",
                       "fr": "Quelle est la précision des tests au chevet du patient pour détecter {le_c} {pop} ?",
                       "es": "¿Qué precisión tienen las pruebas en el punto de atención para detectar {el_c} {pop}?",
                       "ru": "Насколько точны экспресс-тесты у постели больного для выявления {kind} «{c}» {pop}?",
                       "ja": "{pop}、{c}の検出においてポイントオブケア検査の精度はどの程度ですか？",
                       "zh": "{pop}，床旁检测对{c}的检出准确性如何？"}),
    # ---------------------------------------------------------------- evidence, disorders
    ("evidence", "DISO", {"en": "Does intensive therapy reduce relapse of {c} at {months} months {pop}?",
                          "fr": "Un traitement intensif réduit-il les rechutes {de_c} à {months} mois {pop} ?",
                          "es": "¿Reduce el tratamiento intensivo las recaídas {del_c} a los {months} meses {pop}?",
                          "ru": "Снижает ли интенсивная терапия частоту рецидивов заболевания «{c}» через {months} месяцев {pop}?",
                          "ja": "{pop}、集中的な治療は{months}か月時点での{c}の再発を減らしますか？",
                          "zh": "{pop}，强化治疗能否降低{c}在{months}个月时的复发率？"}),
    ("evidence", "DISO", {"en": "Is early surgery superior to watchful waiting for {c} {pop}?",
                          "fr": "La chirurgie précoce est-elle supérieure à la surveillance attentive en cas {de_n} {pop} ?",
                          "es": "¿Es la cirugía precoz superior a la espera vigilada en caso de {c} {pop}?",
                          "ru": "Превосходит ли ранняя операция выжидательную тактику при заболевании «{c}» {pop}?",
                          "ja": "{pop}、{c}に対して早期手術は経過観察よりも優れていますか？",
                          "zh": "{pop}，对于{c}，早期手术是否优于观察等待？"}),
    ("evidence", "DISO", {"en": "What proportion of patients with {c} achieve remission within {weeks} weeks of treatment?",
                          "fr": "Quelle proportion de patients atteints {de_n} obtient une rémission dans les {weeks} semaines suivant le traitement ?",
                          "es": "¿Qué proporción de pacientes con {c} alcanza la remisión en las {weeks} semanas posteriores al tratamiento?",
                          "ru": "Какая доля пациентов с диагнозом «{c}» достигает ремиссии в течение {weeks} недель лечения?",
                          "ja": "{c}の患者のうち、治療開始後{weeks}週以内に寛解に至る割合はどのくらいですか？",
                          "zh": "{c}患者中有多大比例在治疗{weeks}周内达到缓解？"}),
    ("evidence", "DISO", {"en": "Does exercise training improve quality of life in patients with {c} over {months} months?",
                          "fr": "L'entraînement physique améliore-t-il la qualité de vie des patients atteints {de_n} sur {months} mois ?",
                          "es": "¿Mejora el entrenamiento físico la calidad de vida de los pacientes con {c} a lo largo de {months} meses?",
                          "ru": "Улучшают ли физические тренировки качество жизни пациентов с диагнозом «{c}» в течение {months} месяцев?",
                          "ja": "運動療法は{months}か月にわたり{c}の患者の生活の質を改善しますか？",
                          "zh": "运动训练能否在{months}个月内改善{c}患者的生活质量？"}),
    # ---------------------------------------------------------------- evidence, drugs
    ("evidence", "CHEM", {"en": "Does {c} reduce the composite endpoint compared with placebo over {months} months {pop}?",
                          "fr": "Par rapport au placebo, observe-t-on une réduction du critère composite avec {le_c} sur {months} mois {pop} ?",
                          "es": "¿Reduce {el_c} el criterio de valoración compuesto frente a placebo a lo largo de {months} meses {pop}?",
                          "ru": "Снижает ли препарат «{c}» частоту комбинированной конечной точки по сравнению с плацебо в течение {months} месяцев {pop}?",
                          "ja": "{pop}、{c}はプラセボと比較して{months}か月間の複合エンドポイントを減少させますか？",
                          "zh": "{pop}，与安慰剂相比，{c}能否在{months}个月内降低复合终点发生率？"}),
    ("evidence", "CHEM", {"en": "Is a daily dose of {dose} mg of {c} safe {pop}?",
                          "fr": "Une dose quotidienne de {dose} mg {de_c} est-elle sûre {pop} ?",
                          "es": "¿Es segura una dosis diaria de {dose} mg {del_c} {pop}?",
                          "ru": "Безопасна ли суточная доза {dose} мг препарата «{c}» {pop}?",
                          "ja": "{pop}、{c}を一日{dose} mg投与することは安全ですか？",
                          "zh": "{pop}，每日服用{dose} mg {c}是否安全？"}),
    ("evidence", "CHEM", {"en": "How does {c} compare with standard therapy for preventing hospital admission {pop}?",
                          "fr": "Quelle est l'efficacité {de_c} par rapport au traitement standard pour prévenir les hospitalisations {pop} ?",
                          "es": "¿Cómo se compara {el_c} con el tratamiento estándar para prevenir ingresos hospitalarios {pop}?",
                          "ru": "Как препарат «{c}» соотносится со стандартной терапией в предотвращении госпитализаций {pop}?",
                          "ja": "{pop}、入院の予防において{c}は標準治療と比べてどうですか？",
                          "zh": "{pop}，在预防住院方面，{c}与标准治疗相比效果如何？"}),
    ("evidence", "CHEM", {"en": "Does adding {c} to usual care lower the risk of stroke within {years} years {pop}?",
                          "fr": "L'ajout {de_c} aux soins habituels réduit-il le risque d'accident vasculaire cérébral à {years} ans {pop} ?",
                          "es": "¿Reduce la adición {del_c} a la atención habitual el riesgo de ictus a {years} años {pop}?",
                          "ru": "Снижает ли добавление препарата «{c}» к стандартному лечению риск инсульта в течение {years} лет {pop}?",
                          "ja": "{pop}、通常治療に{c}を追加すると{years}年以内の脳卒中リスクは低下しますか？",
                          "zh": "{pop}，在常规治疗基础上加用{c}能否降低{years}年内的卒中风险？"}),
    # ---------------------------------------------------------------- evidence, procedures
    ("evidence", "PROC", {"en": "Do high-volume centres achieve lower {days}-day mortality for {c} {pop}?",
                          "fr": "Les centres à fort volume obtiennent-ils une mortalité à {days} jours plus faible pour {le_c} {pop} ?",
                          "es": "¿Logran los centros de alto volumen una menor mortalidad a {days} días para {el_c} {pop}?",
                          "ru": "Снижается ли {days}-дневная летальность после вмешательства «{c}» в центрах с большим объёмом операций {pop}?",
                          "ja": "{pop}、症例数の多い施設で{c}を行うと{days}日死亡率は低下しますか？",
                          "zh": "{pop}，在高手术量中心实施{c}能否降低{days}天死亡率？"}),
    ("evidence", "PROC", {"en": "What is the long-term success rate of {c} after {years} years {pop}?",
                          "fr": "Quel est le taux de succès à long terme {de_c} après {years} ans {pop} ?",
                          "es": "¿Cuál es la tasa de éxito a largo plazo {del_c} después de {years} años {pop}?",
                          "ru": "Какова долгосрочная эффективность вмешательства «{c}» через {years} лет {pop}?",
                          "ja": "{pop}、{c}の{years}年後の長期成功率はどのくらいですか？",
                          "zh": "{pop}，{c}在{years}年后的长期成功率是多少？"}),
    ("evidence", "PROC", {"en": "Is {c} cost-effective compared with conservative management {pop}?",
                          "fr": "Le rapport coût-efficacité {de_c} est-il favorable par rapport à une prise en charge conservatrice {pop} ?",
                          "es": "¿Es favorable la relación coste-efectividad {del_c} frente al tratamiento conservador {pop}?",
                          "ru": "Является ли вмешательство «{c}» экономически эффективным по сравнению с консервативным лечением {pop}?",
                          "ja": "{pop}、{c}は保存的治療と比べて費用対効果に優れていますか？",
                          "zh": "{pop}，与保守治疗相比，{c}是否具有成本效益？"}),
]
RU_KIND = {  # nominative, genitive, accusative, instrumental
    "DISO": ("заболевание", "заболевания", "заболевание", "заболеванием"),
    "CHEM": ("препарат", "препарата", "препарат", "препаратом"),
    "PROC": ("вмешательство", "вмешательства", "вмешательство", "вмешательством"),
    "ANAT": ("анатомическая структура", "анатомической структуры", "анатомическую структуру", "анатомической структурой"),
    "GENE": ("генетический маркер", "генетического маркера", "генетический маркер", "генетическим маркером"),
}
KIND_PASSAGE = {"DISO": "condition", "CHEM": "medicine", "PROC": "procedure", "ANAT": "anatomical structure", "GENE": "gene"}
WITH_PHRASE = {"DISO": "patients with", "CHEM": "patients treated with", "PROC": "patients undergoing",
               "ANAT": "patients with abnormalities of the", "GENE": "carriers of variants in the"}


def numbers(rng: random.Random) -> dict:
    return {"age": rng.randint(18, 90), "child": rng.randint(2, 16), "week": rng.randint(8, 38), "bmi": rng.randint(25, 49),
            "days": rng.randint(2, 45), "years": rng.randint(2, 25), "crcl": rng.randint(10, 59), "a1": rng.randint(11, 14),
            "a2": rng.randint(15, 19), "months": rng.randint(2, 48),
            "dose": rng.choice([5, 10, 15, 20, 25, 30, 40, 50, 60, 75, 80, 100, 120, 150, 200, 250, 300, 400, 500, 600, 750, 1000]),
            "weeks": rng.randint(2, 30), "year": rng.randint(1995, 2023), "cig": rng.randint(3, 60), "hours": rng.randint(5, 30)}


# An optional framing of the question (same in every language of one question)
LEAD_INS = [
    {"en": "A question from primary care: ", "fr": "Question issue des soins primaires : ", "es": "Pregunta desde atención primaria: ",
     "ru": "Вопрос из первичного звена: ", "ja": "プライマリケアからの質問：", "zh": "来自基层医疗的问题："},
    {"en": "From a multidisciplinary team meeting: ", "fr": "Question posée en réunion de concertation pluridisciplinaire : ",
     "es": "Desde una reunión del equipo multidisciplinar: ", "ru": "Вопрос с междисциплинарного консилиума: ",
     "ja": "多職種カンファレンスからの質問：", "zh": "来自多学科会诊的问题："},
    {"en": "For a clinical audit: ", "fr": "Pour un audit clinique : ", "es": "Para una auditoría clínica: ",
     "ru": "Для клинического аудита: ", "ja": "臨床監査のための質問：", "zh": "用于临床审计的问题："},
    {"en": "Asked by a junior doctor: ", "fr": "Question d'un interne : ", "es": "Pregunta de un médico residente: ",
     "ru": "Вопрос ординатора: ", "ja": "研修医からの質問：", "zh": "住院医师提问："},
    {"en": "Clinical question: ", "fr": "Question clinique : ", "es": "Pregunta clínica: ", "ru": "Клинический вопрос: ",
     "ja": "臨床上の疑問：", "zh": "临床问题："},
    {"en": "Evidence request: ", "fr": "Demande de données probantes : ", "es": "Solicitud de evidencia: ",
     "ru": "Запрос доказательных данных: ", "ja": "エビデンスの照会：", "zh": "证据检索请求："},
    {"en": "From a hospital pharmacy enquiry: ", "fr": "Question adressée à la pharmacie hospitalière : ",
     "es": "Consulta a la farmacia hospitalaria: ", "ru": "Запрос в больничную аптеку: ", "ja": "病院薬剤部への問い合わせ：",
     "zh": "医院药房咨询："},
    {"en": "Raised during a journal club: ", "fr": "Question soulevée lors d'un club de lecture : ",
     "es": "Planteada en una sesión bibliográfica: ", "ru": "Вопрос с журнального клуба: ", "ja": "抄読会で挙がった質問：",
     "zh": "期刊俱乐部中提出的问题："},
]
LEAD_IN_SHARE = 0.35
POP_SHARE = 0.45  # questions that name a population (the rest are shorter, like most real questions)
_NO_POP = re.compile(r",? ?\{pop\}[、，]?")


def fr_articles(name: str, g: str) -> dict:
    """Definite article and its contractions; {de_n} is 'de' without article ('atteints d'...')."""
    vowel = name[:1].lower() in "aeiouyhéèêâîôûœ"
    if vowel:
        return {"le_c": "l'" + name, "de_c": "de l'" + name, "a_c": "à l'" + name, "de_n": "d'" + name}
    if g == "f":
        return {"le_c": "la " + name, "de_c": "de la " + name, "a_c": "à la " + name, "de_n": "de " + name}
    return {"le_c": "le " + name, "de_c": "du " + name, "a_c": "au " + name, "de_n": "de " + name}


def es_articles(name: str, g: str) -> dict:
    if g == "f":
        return {"el_c": "la " + name, "del_c": "de la " + name, "al_c": "a la " + name}
    return {"el_c": "el " + name, "del_c": "del " + name, "al_c": "al " + name}


def render_question(template: dict, lang: str, name: str, group: str, gender: str, pop: dict, nums: dict) -> str:
    ctx = dict(nums)
    ctx["c"] = name
    tpl = template[lang]
    if pop is None:  # no population: drop the slot and the separator next to it
        tpl = _NO_POP.sub("", tpl)
    else:
        ctx["pop"] = pop[lang].format_map(nums)
    if lang == "fr":
        ctx.update(fr_articles(name, gender))
    elif lang == "es":
        ctx.update(es_articles(name, gender))
    elif lang == "ru":
        k = RU_KIND[group]
        ctx.update(kind_nom=k[0], kind=k[1], kind_acc=k[2], kind_ins=k[3])
    text = tpl.format_map(ctx)
    text = text[:1].upper() + text[1:]
    lead = nums.get("lead")
    return LEAD_INS[lead][lang] + text if lead is not None else text


# ============================================================================ passages
OPENERS = [
    "{Cap} is a {kind} that clinicians meet regularly, and decisions about it should rest on a careful assessment of the individual patient.",
    "For people affected by {c}, the right answer depends on age, coexisting conditions and the setting in which care is delivered.",
    "Questions about {c} come up often in clinics, and current recommendations offer a fairly consistent approach.",
    "Guidance on {c} has become more specific over the past decade as larger studies have been published.",
    "{Cap} deserves attention because its consequences are often underestimated in routine practice.",
]
BODY = [
    "In a cohort of {n} patients, about {pct}% showed a clinically important change within {months} months of the first assessment.",
    "Initial evaluation usually combines a focused history, a physical examination and a small set of laboratory tests.",
    "Reassessment every {weeks} weeks is advised until the situation is stable, with earlier review if symptoms progress.",
    "Older adults and people with several long-term conditions have a higher risk of complications and need closer follow-up.",
    "Treatment choices should weigh expected benefit against adverse effects, cost, the burden of monitoring and the patient's preferences.",
    "Specialist advice is recommended when the response is poor after {weeks} weeks or when the diagnosis remains uncertain.",
    "Observational data suggest that outcomes improve when care follows a written plan shared with the patient and the primary care team.",
    "Most guidelines grade this recommendation as moderate in strength, reflecting a limited number of randomised trials.",
    "Hospital admission was required in roughly {pct2}% of cases in one regional registry, mostly during the first year.",
    "Education about warning signs, adherence and lifestyle measures remains an important part of long-term management.",
    "Imaging is reserved for patients with atypical features or when the initial tests give conflicting results.",
    "Dose adjustments may be needed in people with reduced organ function, and interactions should be reviewed at each visit.",
    "In {pct3}% of cases the first presentation is non-specific, which explains delays of up to {months} months before a firm diagnosis.",
    "Shared decision-making tools have been shown to reduce decisional conflict without lengthening consultations.",
    "Costs are driven mainly by hospital stays, so strategies that prevent admission tend to be cost-effective.",
    "The benefit of treatment appears consistent across age groups, although evidence in people over {age} years is sparse.",
]
MENTIONS = [
    "Among {with_} {c}, the {pct4}% who received structured follow-up had fewer unplanned visits.",
    "Clinicians should document the course of {c} at each visit so that changes are recognised early.",
    "The natural history of {c} varies, and a minority of patients deteriorate rapidly despite standard care.",
    "Audit data show that recommendations for {c} are followed in only about {pct5}% of eligible patients.",
]
CLOSERS = [
    "In summary, a structured approach to {c} helps clinicians act early and avoid unnecessary tests.",
    "Overall, management of {c} should be individualised and reviewed as new evidence becomes available.",
    "People living with {c} benefit most when follow-up is planned from the outset.",
]
TITLES = [
    "{Cap}: practical answers for clinicians", "Clinical questions about {c}", "Managing {c}: what the evidence says",
    "{Cap}: assessment and follow-up", "Understanding {c} in everyday practice", "Key facts about {c}",
]
EV_BACKGROUND = [
    "is common in clinical practice, but the best strategy for its management remains uncertain",
    "carries a substantial burden of morbidity, and high-quality comparative data are scarce",
    "has mostly been studied in small single-centre series with short follow-up",
    "is increasingly recognised, yet its effect on long-term outcomes is poorly defined",
]
EV_DESIGN = [
    "We conducted a randomised controlled trial in {n} {who} at {centres} centres",
    "We performed a prospective cohort study of {n} {who} recruited from {centres} hospitals",
    "We analysed national registry data on {n} {who} treated between {y1} and {y2}",
    "We carried out a pragmatic multicentre trial in {n} {who} across {centres} sites",
    "We undertook a nested case-control study including {n} {who}",
]
EV_WHO = ["adults", "patients", "participants", "older adults", "outpatients", "hospitalised patients"]
EV_METHOD = [
    "The primary outcome was a composite of death or hospital admission at {months} months.",
    "Participants were followed for a median of {fu} months, and outcomes were adjudicated by an independent committee.",
    "Exposure was ascertained from medical records, and analyses were adjusted for age, sex and comorbidity.",
    "Randomisation was stratified by centre, and the analysis followed the intention-to-treat principle.",
]
EV_RESULT = [
    "The primary outcome occurred in {p1}% of the intervention group and {p2}% of the control group (hazard ratio {hr}, 95% CI {lo} to {hi}).",
    "The adjusted odds ratio for the primary outcome was {hr} (95% CI {lo} to {hi}), with similar estimates in sensitivity analyses.",
    "Mean quality-of-life scores improved by {d1} points, compared with {d2} points in the comparison group.",
    "Serious adverse events were reported in {p3}% of participants, and none was judged to be related to the intervention.",
    "Rates of readmission at {months} months were {p1}% and {p2}%, respectively.",
]
EV_CONCLUSION = [
    "Among {with_} {c}, the strategy studied reduced the risk of the primary outcome.",
    "These findings support routine assessment of {c} in this population.",
    "The association with {c} persisted after adjustment, but residual confounding cannot be excluded.",
    "Larger trials are needed before changing practice for {c}.",
]
EV_TITLE = [
    "{Cap} and clinical outcomes: a {design} of {n} {who}",
    "Outcomes associated with {c}: results of a {design}",
    "Effect of a structured strategy on {c}: a {design}",
    "{Cap} in {who}: a {design}",
]
EV_DESIGN_NAMES = ["randomised trial", "prospective cohort study", "registry analysis", "multicentre trial", "case-control study"]


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:]


def passage_numbers(rng: random.Random) -> dict:
    p1 = rng.randint(8, 45)
    lo = round(rng.uniform(0.45, 0.95), 2)
    hr = round(lo + rng.uniform(0.05, 0.25), 2)
    return {"n": rng.choice([rng.randint(60, 990), rng.randint(1000, 24000)]), "pct": rng.randint(5, 60),
            "pct2": rng.randint(3, 40), "pct3": rng.randint(10, 50), "pct4": rng.randint(30, 80), "pct5": rng.randint(20, 70),
            "months": rng.randint(3, 36), "weeks": rng.randint(2, 16), "age": rng.randint(70, 90), "centres": rng.randint(3, 120),
            "fu": rng.randint(6, 72), "y1": rng.randint(1998, 2010), "y2": rng.randint(2012, 2023), "p1": p1,
            "p2": p1 + rng.randint(2, 15), "p3": rng.randint(1, 12), "hr": f"{hr:.2f}", "lo": f"{lo:.2f}",
            "hi": f"{hr + (hr - lo) * rng.uniform(0.8, 1.3):.2f}", "d1": rng.randint(5, 15), "d2": rng.randint(1, 5)}


def words(text: str) -> int:
    return len(text.split())


def answer_passage(rng: random.Random, name: str, group: str) -> tuple[str, str]:
    """An English answer passage of 60-150 words that names the concept."""
    ctx = passage_numbers(rng)
    ctx.update(c=name, Cap=_cap(name), kind=KIND_PASSAGE.get(group, "condition"), with_=WITH_PHRASE.get(group, "patients with"))
    parts = [rng.choice(OPENERS)]
    body = rng.sample(BODY, 6)
    if rng.random() < .6:
        body.insert(rng.randrange(3), rng.choice(MENTIONS))
    target = rng.randint(70, 135)
    for s in body:
        if words(" ".join(parts)) >= target:
            break
        parts.append(s)
    parts.append(rng.choice(CLOSERS))
    text = " ".join(parts).format_map(ctx)
    while words(text) > 150:
        parts.pop(-2)
        text = " ".join(parts).format_map(ctx)
    return rng.choice(TITLES).format_map(ctx), text


def evidence_passage(rng: random.Random, name: str, group: str) -> tuple[str, str]:
    """An abstract-style English passage (Background / Methods / Results / Conclusion)."""
    ctx = passage_numbers(rng)
    d = rng.randrange(len(EV_DESIGN))
    ctx.update(c=name, Cap=_cap(name), who=rng.choice(EV_WHO), with_=WITH_PHRASE.get(group, "patients with"),
               design=EV_DESIGN_NAMES[d])
    results = rng.sample(EV_RESULT, 3)
    parts = [f"Background: {_cap(name)} {rng.choice(EV_BACKGROUND)}.", "Methods: " + EV_DESIGN[d] + ".", rng.choice(EV_METHOD),
             "Results: " + results[0], results[1], results[2], "Conclusion: " + rng.choice(EV_CONCLUSION)]
    text = " ".join(parts).format_map(ctx)
    while words(text) > 150:
        parts.pop(-2)
        text = " ".join(parts).format_map(ctx)
    if words(text) < 60:
        parts.insert(3, rng.choice([m for m in EV_METHOD if m not in parts]))
        text = " ".join(parts).format_map(ctx)
    return rng.choice(EV_TITLE).format_map(ctx), text


# ============================================================================ sources and memory
def _dumps(obj: dict) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(", ", ": ")) + "\n"


class JsonlWriter:
    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.fh = path.open("w", encoding="utf-8", newline="\n", buffering=1 << 20)
        self.buf: list[str] = []
        self.rows = 0

    def add(self, obj: dict) -> None:
        self.buf.append(_dumps(obj))
        self.rows += 1
        if len(self.buf) >= 20_000:
            self.fh.write("".join(self.buf))
            self.buf.clear()

    def close(self) -> None:
        self.fh.write("".join(self.buf))
        self.fh.close()


def tm_entry(rng: random.Random, source: str, target: str, lang: str) -> list[dict]:
    u = rng.random()
    base = {"source_lang": "en", "target_lang": lang, "source": source, "target": target}
    if u < .35:
        return [{**base, "origin": "human", "engine": "human", "status": "human-translated"}]
    if u < .80:
        return [{**base, "origin": "machine", "engine": rng.choice(["google", "deepl", "microsoft"]), "status": "machine-translated"}]
    engine = rng.choice(["deepl", "google"])
    out = [{**base, "origin": "machine", "engine": engine, "status": "machine-translated and verified"}]
    if rng.random() < .3:  # the raw output the post-editor accepted unchanged is kept too
        out.append({**base, "origin": "machine", "engine": engine, "status": "machine-translated"})
    return out


_VARIATIONS = [("What is the ", "What's the "), ("Which ", "What "), (" in adults ", " among adults "),
               (" in patients ", " among patients "), ("How should ", "How ought "), ("?", " today?")]


def near_duplicate(text: str, rng: random.Random) -> str:
    for a, b in rng.sample(_VARIATIONS, len(_VARIATIONS)):
        if a in text:
            return text.replace(a, b, 1)
    return text[:-1] + " today?"


def choose_template(rng: random.Random, task: str, group: str) -> dict:
    specific = [t[2] for t in TEMPLATES if t[0] == task and t[1] == group]
    generic = [t[2] for t in TEMPLATES if t[0] == task and t[1] == "*"]
    return rng.choice(specific if specific and rng.random() < .65 else generic)


@dataclass
class Item:
    id: str
    task: str
    lang: str
    text: str
    pivot: str | None
    passage: dict
    q: QConcept | None = None
    template: dict | None = None
    pop: dict | None = None
    nums: dict | None = None

    def record(self) -> dict:
        return {"id": self.id, "task": self.task, "lang": self.lang, "text": self.text, "pivot": self.pivot,
                "passages": [self.passage]}


def write_sources(vocab: Vocabulary, out: Path, preset: Preset, seed: int, registry: dict) -> dict:
    from schemas.config import Language
    from tasks.translation.gates import translation_gates

    rng = random.Random(f"sources:{seed}")
    langs = {code: Language(code=code, **entry) for code, entry in registry.items()}
    by_role: dict[str, list[QConcept]] = {}
    for q in vocab.kept:
        by_role.setdefault(q.role, []).append(q)
    counters = {"xqa": 0, "evidence": 0}
    prefix = {"xqa": "xqa", "evidence": "ev"}

    def passage(task: str, q: QConcept) -> dict:
        counters[task] += 1
        pid = f"{prefix[task]}-doc-{counters[task]:06d}"
        title, text = (answer_passage if task == "xqa" else evidence_passage)(rng, q.en, q.group)
        return {"id": pid, "title": title, "text": text}

    items: list[Item] = []
    ids: dict[tuple, int] = {}

    def new_id(task: str, lang: str) -> str:
        ids[(task, lang)] = ids.get((task, lang), 0) + 1
        return f"{prefix[task]}-{lang}-{ids[(task, lang)]:05d}"

    def make(task: str, lang: str, q: QConcept) -> Item:
        tpl = choose_template(rng, task, q.group)
        # short names get a population more often: a short text that differs only in its name is a near-duplicate
        share = POP_SHARE if len(q.en) >= 16 else 0.9
        pop, nums = (rng.choice(POPULATIONS) if rng.random() < share else None), numbers(rng)
        if rng.random() < LEAD_IN_SHARE:
            nums["lead"] = rng.randrange(len(LEAD_INS))
        en = render_question(tpl, "en", q.en, q.group, "", pop, nums)
        if lang == "en":
            return Item(new_id(task, lang), task, lang, en, None, passage(task, q), q, tpl, pop, nums)
        native = render_question(tpl, lang, q.names[lang], q.group, q.genders[lang], pop, nums)
        return Item(new_id(task, lang), task, lang, native, en, passage(task, q), q, tpl, pop, nums)

    # ---- English questions
    pool = by_role.get("en", [])
    rng.shuffle(pool)
    english = [make("xqa", "en", q) for q in pool[:preset.xqa_en]]
    english += [make("evidence", "en", q) for q in pool[preset.xqa_en:preset.xqa_en + preset.ev_en]]
    # ---- native questions
    natives = []
    for lang in QUESTION_LANGS:
        pool = by_role.get(f"native:{lang}", [])
        rng.shuffle(pool)
        natives += [make("xqa", lang, q) for q in pool[:preset.xqa_native]]
        natives += [make("evidence", lang, q) for q in pool[preset.xqa_native:preset.xqa_native + preset.ev_native]]
    # ---- deliberate duplicates: near-duplicate wording, exact copies, and cross-lingual copies
    n_en = len(english)
    dups = []
    for it in rng.sample(english, int(n_en * preset.dup_share)):
        dups.append(Item(new_id(it.task, "en"), it.task, "en", near_duplicate(it.text, rng), None, it.passage, it.q,
                         it.template, it.pop, it.nums))
    for it in rng.sample(english, int(n_en * preset.exact_share)):
        dups.append(Item(new_id(it.task, "en"), it.task, "en", it.text, None, it.passage, it.q, it.template, it.pop, it.nums))
    xdups = []
    for it in rng.sample(english, int((n_en + len(natives)) * preset.xdup_share)):
        lang = rng.choice(QUESTION_LANGS)
        native = render_question(it.template, lang, it.q.names[lang], it.q.group, it.q.genders[lang], it.pop, it.nums)
        xdups.append(Item(new_id(it.task, lang), it.task, lang, native, it.text, it.passage, it.q))
    english_all = english + dups

    # ---- write items
    files = {t: JsonlWriter(out / "sources" / f"{t}.jsonl") for t in ("xqa", "evidence")}
    for it in english_all + natives + xdups:
        files[it.task].add(it.record())
    for f in files.values():
        f.close()

    # ---- translation memory: the English questions, then concept names
    tm = JsonlWriter(out / "tm" / "memory.jsonl")
    tm_questions = {l: 0 for l in QUESTION_LANGS}
    from_atoms = 0  # targets naming the concept with its open vocabulary atom (else a translator's rendering)
    for it in english_all:
        for lang in QUESTION_LANGS:
            if rng.random() >= preset.tm_share:
                continue
            target = render_question(it.template, lang, it.q.names[lang], it.q.group, it.q.genders[lang], it.pop, it.nums)
            for e in tm_entry(rng, it.text, target, lang):
                tm.add(e)
            tm_questions[lang] += 1
            from_atoms += it.q.has_atom[lang]
    tm_terms = {l: 0 for l in QUESTION_LANGS}
    for q in vocab.kept:
        if not q.role.startswith("term:"):
            continue
        lang = q.role[5:]
        target = q.names[lang]
        if len(target.split()) >= 6 or (lang in ("zh", "ja") and len(target) >= 20):
            continue  # long names need language identification: keep the memory to short terms
        if translation_gates(q.name_en, target, langs["en"], langs[lang]):
            continue  # e.g. a gene name, Latin letters in a Cyrillic term
        for e in tm_entry(rng, q.name_en, target, lang):
            tm.add(e)
        tm_terms[lang] += 1
    tm.close()
    addition = write_addition_memory(out, english_all, POPULATIONS, _NO_POP, tm_entry, JsonlWriter, seed, preset.tm_share)

    # ---- background evidence passages
    bg = JsonlWriter(out / "sources" / "background.jsonl")
    question_concepts = [it.q for it in english + natives]
    reservoir = vocab.reservoir
    for i in range(1, preset.background + 1):
        if rng.random() < .1 and question_concepts:
            q = question_concepts[rng.randrange(len(question_concepts))]
            name, group = q.en, q.group
        else:
            name, group = reservoir[rng.randrange(len(reservoir))][:2]
        title, text = (evidence_passage if rng.random() < .8 else answer_passage)(rng, name, group)
        bg.add({"id": f"ev-bg-{i:07d}", "title": title, "text": text})
    bg.close()

    def count(task, pred):
        return sum(1 for it in english_all + natives + xdups if it.task == task and pred(it))

    return {
        "questions": {t: {l: count(t, lambda it, l=l: it.lang == l) for l in ["en"] + QUESTION_LANGS} for t in ("xqa", "evidence")},
        "questions_total": len(english_all) + len(natives) + len(xdups),
        "deliberate_duplicates": {"near": int(n_en * preset.dup_share), "exact": int(n_en * preset.exact_share),
                                  "cross_lingual": len(xdups)},
        "passages": {"xqa": counters["xqa"], "evidence": counters["evidence"], "background": preset.background,
                     "evidence_corpus": counters["evidence"] + preset.background},
        "memory": {"question_entries": tm_questions, "term_entries": tm_terms, "lines": tm.rows,
                   "question_targets_with_vocabulary_atom": round(from_atoms / max(1, sum(tm_questions.values())), 3)},
        "addition": addition,
    }


# ============================================================================ config
def write_config(out: Path, preset: Preset, seed: int) -> None:
    shutil.copyfile(REGISTRY, out / "languages.toml")
    q = preset.quotas
    text = f"""# Generated by benchmarks/generate_scale.py --preset {preset.name} --seed {seed}: synthetic
# inputs shaped like a paper-scale build. Paths are relative to this file.
version = "0.9.0-scale.{preset.name}"
seed = {seed}
languages = ["en", "zh", "ja", "fr", "ru", "es"]
registry = "languages.toml"
release_dir = "releases"
work_dir = ".mmedbench-cache"

[vocabulary]
format = "rrf"
path = "umls"
max_srl = 0

[[sources]]
format = "sample-jsonl"
path = "sources/xqa.jsonl"

[[sources]]
format = "sample-jsonl"
path = "sources/evidence.jsonl"

[[background]]
task = "evidence"
path = "sources/background.jsonl"

[translation]
memory = ["tm/memory.jsonl"]

[grounding]
key_groups = ["DISO", "CHEM", "PROC", "ANAT", "GENE"]
min_score = 0.8
quickumls_threshold = 0.8
quickumls_window = 6

[dedup]
num_perm = 128
threshold = 0.7

[tasks.xqa]
quota = {q["xqa"]}

[tasks.evidence]
quota = {q["evidence"]}

[tasks.cd]
quota = {q["cd"]}
distractors = 3

[splits]
dev_fraction = 0.0

[build]
shard_size = 2000
"""
    (out / "config.toml").write_text(text, encoding="utf-8", newline="\n")
    (out / f"config-add-{ADDITION_LANG}.toml").write_text(addition_config(text), encoding="utf-8", newline="\n")


# ============================================================================ main
def generate(preset: Preset, out: Path, seed: int = 0) -> dict:
    """Generate every input of a build under `out`; return the counts (no clock time)."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    out.mkdir(parents=True, exist_ok=True)
    with REGISTRY.open("rb") as fh:
        registry = tomllib.load(fh)["languages"]
    vocab = Vocabulary(out / "umls", preset, seed, registry)
    vocab.run()
    counts = {
        "preset": preset.name, "seed": seed,
        "umls": {"concepts": vocab.concepts, "rows": dict(sorted(vocab.w.rows.items())),
                 "concepts_by_group": dict(sorted(vocab.by_group.items())),
                 "concepts_by_depth": {str(k): v for k, v in sorted(vocab.by_depth.items())},
                 "atoms_by_lat": dict(sorted(vocab.by_lat.items(), key=lambda kv: -kv[1])),
                 "suppressed_atoms": vocab.suppressed, "concepts_with_two_parents": vocab.multi_parent,
                 "sources_above_srl_0": sorted(s for s, i in SAB_INFO.items() if i[1] > 0)},
    }
    counts.update(write_sources(vocab, out, preset, seed, registry))
    write_config(out, preset, seed)
    (out / "generation.json").write_text(json.dumps(counts, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return counts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", choices=sorted(PRESETS), default="tiny")
    ap.add_argument("--out", type=Path, default=None, help="output folder (default benchmarks/out/scale-<preset>)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    out = args.out or ROOT / "benchmarks" / "out" / f"scale-{args.preset}"
    t0 = time.perf_counter()
    counts = generate(PRESETS[args.preset], out, args.seed)
    elapsed = time.perf_counter() - t0
    u = counts["umls"]
    print(f"preset={args.preset} seed={args.seed} out={out}")
    print(f"umls: concepts={u['concepts']} " + " ".join(f"{k}={v}" for k, v in u["rows"].items()))
    print("      atoms by LAT: " + " ".join(f"{k}={v}" for k, v in u["atoms_by_lat"].items()))
    print("      concepts by group: " + " ".join(f"{k}={v}" for k, v in u["concepts_by_group"].items()))
    for task, by_lang in counts["questions"].items():
        print(f"questions {task}: " + " ".join(f"{k}={v}" for k, v in by_lang.items()))
    print(f"questions total={counts['questions_total']} deliberate duplicates: "
          + " ".join(f"{k}={v}" for k, v in counts["deliberate_duplicates"].items()))
    print("passages: " + " ".join(f"{k}={v}" for k, v in counts["passages"].items()))
    m = counts["memory"]
    print(f"memory: lines={m['lines']} questions " + " ".join(f"{k}={v}" for k, v in m["question_entries"].items())
          + " terms " + " ".join(f"{k}={v}" for k, v in m["term_entries"].items()))
    print(f"time={elapsed:.1f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
