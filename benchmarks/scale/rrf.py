"""Writing the RRF files: buffered line writers, then MRSAB and MRFILES from the counts."""
from __future__ import annotations

from pathlib import Path

from umls.derive_sample import write_mrfiles

from .source_model import SAB_INFO


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


def write_mrsab(writer: RRFWriter, atoms_per_source: dict[str, int], concepts_per_source: dict[str, int]) -> None:
    """MRSAB.RRF: one row per source, with its atom (TFR) and concept (CFR) counts."""
    rows = []
    for sab in sorted(SAB_INFO):
        lat, srl, son, pt, sy, _style, _kind = SAB_INFO[sab]
        ttyl = ",".join(sorted({pt, sy} | ({"FN"} if sab == "SNOMEDCT_US" else set()) | ({"AB"} if sab == "NCI" else set())))
        vsab = f"{sab}2025"
        # VCUI|RCUI|VSAB|RSAB|SON|SF|SVER|VSTART|VEND|IMETA|RMETA|SLC|SCC|SRL|TFR|CFR|CXTY|TTYL|ATNL|LAT|CENC|CURVER|SABIN|SSN|SCIT
        rows.append(f"||{vsab}|{sab}|{son}|{sab}|2025|||2025AA|||Content contact, {son}|{srl}|"
                    f"{atoms_per_source.get(sab, 0)}|{concepts_per_source.get(sab, 0)}||{ttyl}||{lat}|UTF-8|Y|Y|{son}|{son}, 2025 release (synthetic).|\n")
    (writer.folder / "MRSAB.RRF").write_text("".join(rows), encoding="utf-8", newline="\n")
    writer.rows["MRSAB.RRF"] = len(rows)


def finish(writer: RRFWriter, atoms_per_source: dict[str, int], concepts_per_source: dict[str, int]) -> None:
    """Close the streamed files, then write MRSAB and MRFILES (which lists the others)."""
    writer.close()
    write_mrsab(writer, atoms_per_source, concepts_per_source)
    write_mrfiles(writer.folder, writer.rows)
