"""A folder of documents as a corpus: every ``.txt``, ``.md``, ``.html``/``.htm`` (and ``.pdf``
with the ``pdf`` extra, pypdf) file under it, in sorted path order, read as text.

HTML keeps its visible text (``<script>``/``<style>`` dropped) through the standard library's
:class:`html.parser.HTMLParser`; a PDF is its pages' text (``pypdf.PdfReader.extract_text``). The
passages are cut by the retrieval layer's chunker (``--chunk-size``/``--chunk-overlap`` tokens of
the embedder's tokenizer in ``index build``, whitespace words elsewhere: :func:`folder_passages`);
their ids are ``relative/path#n`` (n from 0) and each keeps its file.
"""

from __future__ import annotations

from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from ragdiag.data.chunks import ChunkSpec, WordTokenizer, split_documents
from ragdiag.errors import DataError
from ragdiag.io.fields import Reading, current_reading
from ragdiag.io.text_input import decode_utf8

TEXT_SUFFIXES = (".txt", ".md", ".markdown", ".html", ".htm")
PDF_SUFFIX = ".pdf"


@dataclass
class Documents:
    """The folder's documents: relative paths (POSIX) and their texts, in sorted path order."""

    root: Path
    paths: list[str]
    texts: list[str]
    skipped: list[str]  # files of another type, left out


class _VisibleText(HTMLParser):
    """The text of an HTML page outside ``script``, ``style`` and ``head`` (``title`` kept)."""

    HIDDEN = {"script", "style", "noscript", "template"}
    BLOCKS = {"p", "div", "br", "li", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "section", "article", "title"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.hidden = 0

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag in self.HIDDEN:
            self.hidden += 1
        elif tag in self.BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self.HIDDEN and self.hidden:
            self.hidden -= 1
        elif tag in self.BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self.hidden:
            self.parts.append(data)


def html_text(html: str) -> str:
    parser = _VisibleText()
    parser.feed(html)
    parser.close()
    lines = (" ".join(line.split()) for line in "".join(parser.parts).splitlines())
    return "\n".join(line for line in lines if line)


def pdf_text(path: Path) -> str:
    """The text of every page of a PDF (pypdf, the ``pdf`` extra)."""
    from ragdiag.extras import require

    require("pypdf")  # the install hint of the 'pdf' extra when it is missing
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        return "\n".join(page.extract_text() or "" for page in PdfReader(path).pages).strip()
    except (PdfReadError, OSError, ValueError) as err:
        raise DataError(f"{path}: not a readable PDF ({str(err)[:200]})") from None


def document_text(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix == PDF_SUFFIX:
        return pdf_text(path)
    text = decode_utf8(path, path.read_bytes())
    return html_text(text) if suffix in (".html", ".htm") else text.strip()


def read_folder(root: Path, pdf: bool = True) -> Documents:
    """Every document under ``root`` (hidden files and folders left out); no document is an error."""
    root = Path(root)
    paths, texts, skipped = [], [], []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        relative = path.relative_to(root)
        if any(part.startswith(".") for part in relative.parts):
            continue
        suffix = path.suffix.lower()
        if suffix in TEXT_SUFFIXES or (pdf and suffix == PDF_SUFFIX):
            paths.append(relative.as_posix())
            texts.append(document_text(path))
        else:
            skipped.append(relative.as_posix())
    if not paths:
        raise DataError(f"{root}: no documents (.txt, .md, .html, .pdf) in this folder"
                        + (f"; it holds {', '.join(skipped[:3])}" if skipped else ""))
    return Documents(root, paths, texts, skipped)


def is_document_folder(path: Path) -> bool:
    """A folder that is not a BEIR folder (no corpus.jsonl): a folder of documents."""
    path = Path(path)
    return path.is_dir() and not (path / "corpus.jsonl").is_file()


def passage_ids(paths: list[str], owners: list[int]) -> list[str]:
    """``relative/path#n`` for each passage (``owners[i]``: the document of passage i; n counts from 0)."""
    counts: dict[int, int] = {}
    ids = []
    for owner in owners:
        n = counts.get(owner, 0)
        counts[owner] = n + 1
        ids.append(f"{paths[owner]}#{n}")
    return ids


@dataclass
class FolderPassages:
    """The passages cut from a folder of documents: ids ``relative/path#n``, texts, each one's file."""

    ids: list[str]
    texts: list[str]
    sources: list[str]
    documents: Documents


def cut_folder(documents: Documents, tokenizer, spec: ChunkSpec) -> FolderPassages:
    """The folder's documents cut into windows of ``spec`` tokens of ``tokenizer`` (:mod:`ragdiag.data.chunks`)."""
    passages, owners = split_documents(documents.texts, tokenizer, spec)
    rows = owners.tolist()
    return FolderPassages(passage_ids(documents.paths, rows), passages, [documents.paths[o] for o in rows], documents)


def folder_passages(root: Path, reading: Reading | None = None) -> FolderPassages:
    """A folder of documents as a corpus for every command but ``index build``: passages of
    ``--chunk-size`` whitespace words, ``--chunk-overlap`` shared (the reading's; defaults 256 and 32),
    the cut of ``index build --embedder none`` at the same sizes, so the ids agree."""
    chosen = current_reading(reading)
    return cut_folder(read_folder(root), WordTokenizer(), ChunkSpec(chosen.chunk_size, chosen.chunk_overlap))
