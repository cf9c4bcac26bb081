"""Ingestion: every file type, broken and empty files, re-ingestion, folders, the CLI command."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from toolweave.cli import main
from toolweave.cli.progress import ProgressBar
from toolweave.tools.search import SqliteDocumentStore, ingest, read_document
from toolweave.tools.search.readers import ReadError


def minimal_pdf(*pages: str, title: str = "") -> bytes:
    """A valid PDF with one text line per page (Helvetica), built by hand."""
    objects: list[bytes] = []
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(len(pages)))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode())
    font = 3 + 2 * len(pages)
    for i, text in enumerate(pages):
        escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        stream = f"BT /F1 12 Tf 72 720 Td ({escaped}) Tj ET".encode()
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {4 + 2 * i} 0 R"
            f" /Resources << /Font << /F1 {font} 0 R >> >> >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    info = None
    if title:
        objects.append(f"<< /Title ({title}) >>".encode())
        info = len(objects)
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    trailer = f"<< /Size {len(objects) + 1} /Root 1 0 R" + (f" /Info {info} 0 R" if info else "")
    out.write(f"trailer\n{trailer} >>\nstartxref\n{xref}\n%%EOF\n".encode())
    return out.getvalue()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "notes.txt").write_text("Plain page one.\fPlain page two.", encoding="utf-8")
    (docs / "guide.md").write_text(
        "---\ntitle: Guide\nurl: https://x.example/guide\nlang: en\n---\n"
        "# Guide\nFirst page.\n<!-- page -->\nSecond page.\n",
        encoding="utf-8",
    )
    (docs / "sub" / "page.html").write_text(
        "<html><head><title>Opening hours</title><style>p{color:red}</style>"
        "<script>var x = 'secret';</script></head><body><h2>Pharmacy</h2>"
        "<p>Open 8:00-18:00.</p><!-- page --><p>Closed on Sundays.</p></body></html>",
        encoding="utf-8",
    )
    (docs / "sub" / "leaflet.pdf").write_bytes(
        minimal_pdf("Parking costs 500 Ft.", "Night parking is free.", title="Leaflet")
    )
    (docs / ".hidden").mkdir()
    (docs / ".hidden" / "skip.md").write_text("Never read.", encoding="utf-8")
    (docs / "image.png").write_bytes(b"\x89PNG")
    return docs


def test_each_file_type_reads_into_pages():
    md = read_document("g.md", b"---\ntitle: T\n---\nA.\n<!-- page -->\nB.\fC.", document_id="g")
    assert (md.name, md.pages) == ("T", ("A.", "B.", "C."))
    txt = read_document("n.txt", "Első.\fMásodik.".encode(), document_id="n")
    assert (txt.name, txt.pages) == ("n", ("Első.", "Második."))
    html = read_document(
        "p.html",
        b"<title> Hours </title><script>x()</script><h1>Top</h1><p>Open.</p><!--page--><p>Two.</p>",
        document_id="p",
    )
    assert html.name == "Hours"
    assert html.pages == ("## Top\nOpen.", "Two.")
    pdf = read_document("l.pdf", minimal_pdf("One (1).", "Two.", title="L"), document_id="l")
    assert (pdf.name, pdf.pages) == ("L", ("One (1).", "Two."))


@pytest.mark.parametrize(
    ("name", "data", "reason"),
    [
        ("empty.txt", b"", "empty file"),
        ("blank.md", b"  \n\n", "empty file"),
        ("broken.pdf", b"%PDF-1.4 this is garbage \x00\x01", "broken PDF"),
        ("garbage.pdf", bytes(range(256)) * 4, "broken PDF"),
        ("front-only.md", b"---\ntitle: x\n---\n", "no text"),
        ("image.gif", b"GIF89a", "unsupported file type"),
    ],
)
def test_unreadable_files_raise_a_short_reason(name, data, reason):
    with pytest.raises(ReadError, match=reason):
        read_document(name, data, document_id=name)


def test_a_folder_is_ingested_recursively_and_hidden_files_are_passed_over(folder: Path):
    store = SqliteDocumentStore()
    seen: list[tuple[int, int, str]] = []
    report = ingest([folder], store, domain="test", progress=lambda *a: seen.append(a))
    names = sorted(Path(p).name for p in report.ingested)
    assert names == ["guide.md", "leaflet.pdf", "notes.txt", "page.html"]
    assert report.skipped == []
    assert report.ok
    assert report.pages == 8
    assert report.domain == "test"
    assert [s[:2] for s in seen] == [(1, 4), (2, 4), (3, 4), (4, 4)]
    pdf_id = str((folder / "sub" / "leaflet.pdf").resolve())
    assert store.page(pdf_id, 2) == "Night parking is free."
    assert store.document(pdf_id).url.startswith("file://")
    hits = store.search("parking")
    assert {(d.document_id, d.page) for d in hits} == {(pdf_id, 1), (pdf_id, 2)}
    assert "secret" not in " ".join(store.page(d, p) or "" for d, p in [(pdf_id, 1)])


def test_a_broken_pdf_and_an_empty_file_are_reported_and_the_rest_ingested(folder: Path):
    (folder / "broken.pdf").write_bytes(b"\x00garbage, not a PDF\xff" * 10)
    (folder / "empty.txt").write_bytes(b"")
    store = SqliteDocumentStore()
    report = ingest([folder], store)
    skipped = {Path(s.path).name: s.reason for s in report.skipped}
    assert skipped.keys() == {"broken.pdf", "empty.txt"}
    assert skipped["broken.pdf"].startswith("broken PDF")
    assert skipped["empty.txt"] == "empty file"
    assert len(report.ingested) == 4
    assert str((folder / "broken.pdf").resolve()) not in store.document_ids()


def test_reingesting_a_changed_file_replaces_its_pages(tmp_path: Path):
    path = tmp_path / "doc.md"
    path.write_text(
        "Old one.\n<!-- page -->\nOld two.\n<!-- page -->\nOld three.", encoding="utf-8"
    )
    store = SqliteDocumentStore()
    ingest([path], store)
    path.write_text("New only page.", encoding="utf-8")
    report = ingest([path], store)
    doc_id = str(path.resolve())
    assert report.ingested == [doc_id]
    assert store.pages_of(doc_id) == [1]
    assert store.page(doc_id, 1) == "New only page."
    assert store.search("old") == []
    assert len(store) == 1


def test_a_store_error_skips_that_document_only(tmp_path: Path):
    (tmp_path / "a.txt").write_text("Alpha.", encoding="utf-8")
    (tmp_path / "b.txt").write_text("Beta.", encoding="utf-8")

    class Refusing(SqliteDocumentStore):
        def add_documents(self, documents):  # type: ignore[no-untyped-def]
            documents = list(documents)
            if any(doc.document_id.endswith("b.txt") for doc in documents):
                raise RuntimeError("disk full")
            return super().add_documents(documents)

    store = Refusing()
    report = ingest([tmp_path], store)
    assert [Path(p).name for p in report.ingested] == ["a.txt"]
    assert [(Path(s.path).name, s.reason) for s in report.skipped] == [
        ("b.txt", "store error (RuntimeError)")
    ]
    assert len(store) == 1


def test_progress_bar_draws_on_a_terminal_only():
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    quiet = io.StringIO()
    ProgressBar(quiet)(1, 1, "a.txt")
    assert quiet.getvalue() == ""
    tty = Tty()
    bar = ProgressBar(tty)
    bar(1, 2, "a.txt")
    bar(2, 2, "b.txt")
    assert tty.getvalue().startswith("\ringesting [")
    assert tty.getvalue().endswith("\n")
    assert "2/2 b.txt" in tty.getvalue()


# --- the CLI --------------------------------------------------------------------------------


def test_cli_ingest_then_ask_the_new_domain(folder: Path, tmp_path: Path, capsys, monkeypatch):
    data = tmp_path / "data"
    monkeypatch.setenv("TOOLWEAVE_DATA_DIR", str(data))
    assert main(["ingest", str(folder), "--domain", "leaflets"]) == 0
    out = capsys.readouterr().out
    assert "ingested 4 document(s), 8 page(s)" in out
    assert (data / "documents" / "leaflets.sqlite").is_file()
    assert main(["domains"]) == 0
    assert "leaflets" in capsys.readouterr().out.split()
    assert main(["ask", "--domain", "leaflets", "How much does parking cost?"]) == 0
    answer = capsys.readouterr().out
    assert "500 Ft" in answer


def test_cli_ask_finds_a_domain_ingested_under_an_explicit_data_dir(
    folder: Path, tmp_path: Path, capsys, monkeypatch
):
    monkeypatch.setenv("TOOLWEAVE_DATA_DIR", str(tmp_path / "default"))
    data = str(tmp_path / "elsewhere")
    assert main(["ingest", str(folder), "--domain", "leaflets", "--data-dir", data]) == 0
    capsys.readouterr()
    assert main(["ask", "--domain", "leaflets", "--data-dir", data, "How much is parking?"]) == 0
    assert "500 Ft" in capsys.readouterr().out
    assert main(["ask", "--domain", "leaflets", "How much is parking?"]) == 2


def test_cli_ingest_partial_success_exits_1_and_names_the_skipped_file(
    folder: Path, tmp_path: Path, capsys
):
    (folder / "broken.pdf").write_bytes(b"not a pdf at all")
    code = main(["ingest", str(folder), "--domain", "docs", "--data-dir", str(tmp_path / "d")])
    assert code == 1
    err = capsys.readouterr().err
    assert "broken.pdf: broken PDF" in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["ingest", "/no/such/path", "--domain", "docs"], "no such file or folder: /no/such/path"),
        (["ingest", ".", "--domain", "Bad Name"], "domain names are"),
        (["ingest", ".", "--domain", "korhaz"], "bundled domain"),
        (["ingest", "--domain", "docs"], "required"),
    ],
)
def test_cli_ingest_bad_input_exits_2_with_one_line(args, message, capsys, tmp_path: Path):
    assert main([*args, "--data-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("toolweave: error: ")
    assert message in err
