"""fetch(): download with progress, resume, verification, atomic cache, mirror, no network."""

from __future__ import annotations

import hashlib
import http.server
import io
import socket
import threading
import zipfile

import pytest

from zoo.data.fetch import cache_from_mirror, fetch, locate, partial_note
from zoo.data.records import DatasetRecord, RemoteFile
from zoo.errors import InputError, ZooError

PAYLOAD = bytes(range(256)) * 4000  # 1 MB
SHA = hashlib.sha256(PAYLOAD).hexdigest()


class Server:
    """Serves ``files`` on 127.0.0.1 with HTTP Range support; records the requests."""

    def __init__(self):
        self.files: dict[str, bytes] = {}
        self.requests: list[tuple[str, str | None]] = []
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                owner.requests.append((self.path, self.headers.get("Range")))
                body = owner.files.get(self.path)
                if body is None:
                    self.send_error(404)
                    return
                start = 0
                if self.headers.get("Range"):
                    start = int(self.headers["Range"].split("=")[1].rstrip("-"))
                    if start >= len(body):
                        self.send_error(416)
                        return
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
                else:
                    self.send_response(200)
                self.send_header("Content-Length", str(len(body) - start))
                self.end_headers()
                self.wfile.write(body[start:])

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


@pytest.fixture
def server():
    srv = Server()
    yield srv
    srv.httpd.shutdown()
    srv.httpd.server_close()


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("ZOO_DATA_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ZOO_DATA_MIRROR", raising=False)


def make_record(urls, sha=SHA, name="blob.bin", member=None, partial=None) -> DatasetRecord:
    return DatasetRecord("toy", "Toy data", (RemoteFile(name, urls, sha, None, "", member,
                                                        partial_in_mirror=partial),),
                         "CC0", "nobody", "https://example.org", "toy/sub")


def unfinished(tmp_path, data: bytes, url: str):
    """A ``.part`` left by an interrupted download from ``url``."""
    part = tmp_path / "home" / "toy" / "sub" / "blob.bin.part"
    part.parent.mkdir(parents=True, exist_ok=True)
    part.write_bytes(data)
    part.with_name("blob.bin.part.url").write_text(url)
    return part


def closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/blob.bin"


def test_download_verifies_and_lands_atomically_in_the_cache(server, tmp_path, capsys):
    server.files["/blob.bin"] = PAYLOAD
    path = fetch(make_record([server.url + "/blob.bin"]), "blob.bin")
    assert path == tmp_path / "home" / "toy" / "sub" / "blob.bin"
    assert path.read_bytes() == PAYLOAD
    # no .part left; the stamp of the verified file
    assert sorted(p.name for p in path.parent.iterdir()) == [".blob.bin.verified", "blob.bin"]
    err = capsys.readouterr().err
    assert "blob.bin" in err and "100%" in err  # the progress bar
    # a second fetch is served from the cache, without a request
    assert fetch(make_record([server.url + "/blob.bin"]), "blob.bin") == path
    assert len(server.requests) == 1


def test_falls_back_to_the_next_url(server):
    server.files["/b"] = PAYLOAD
    path = fetch(make_record([server.url + "/missing", server.url + "/b"]), "blob.bin",
                 progress=False)
    assert path.read_bytes() == PAYLOAD
    assert [r[0] for r in server.requests] == ["/missing", "/b"]


def test_resumes_a_partial_download_with_a_range_request(server, tmp_path):
    server.files["/blob.bin"] = PAYLOAD
    part = unfinished(tmp_path, PAYLOAD[:300_000], server.url + "/blob.bin")
    path = fetch(make_record([server.url + "/blob.bin"]), "blob.bin", progress=False)
    assert server.requests == [("/blob.bin", "bytes=300000-")]
    assert path.read_bytes() == PAYLOAD
    assert sorted(p.name for p in path.parent.iterdir()) == [".blob.bin.verified", "blob.bin"]
    assert not part.exists()


def test_a_download_resumes_only_from_the_url_it_came_from(server, tmp_path):
    """An unfinished download from the second URL is resumed there, first; one whose source is
    not recorded, or is another URL, starts over: two hosts' bytes are never spliced."""
    server.files["/first"] = server.files["/second"] = PAYLOAD
    urls = [server.url + "/first", server.url + "/second"]
    unfinished(tmp_path, PAYLOAD[:100_000], urls[1])
    assert fetch(make_record(urls), "blob.bin", progress=False).read_bytes() == PAYLOAD
    assert server.requests == [("/second", "bytes=100000-")]
    server.requests.clear()
    for source in (None, server.url + "/elsewhere"):
        (tmp_path / "home" / "toy" / "sub" / "blob.bin").unlink()
        part = unfinished(tmp_path, b"y" * 100_000, source or urls[0])
        if source is None:
            part.with_name("blob.bin.part.url").unlink()
        assert fetch(make_record(urls), "blob.bin", progress=False).read_bytes() == PAYLOAD
        assert server.requests == [("/first", None)]
        server.requests.clear()


def test_a_part_file_longer_than_the_source_restarts(server, tmp_path):
    server.files["/blob.bin"] = PAYLOAD
    unfinished(tmp_path, b"x" * (len(PAYLOAD) + 10), server.url + "/blob.bin")
    path = fetch(make_record([server.url + "/blob.bin"]), "blob.bin", progress=False)
    assert path.read_bytes() == PAYLOAD
    assert [r[1] for r in server.requests] == [f"bytes={len(PAYLOAD) + 10}-", None]


def test_checksum_mismatch_refuses_and_moves_the_file_aside(server, tmp_path):
    server.files["/blob.bin"] = PAYLOAD[:-1] + b"!"
    with pytest.raises(ZooError) as err:
        fetch(make_record([server.url + "/blob.bin"]), "blob.bin", progress=False)
    msg = str(err.value)
    assert "toy" in msg and "blob.bin" in msg and SHA in msg
    assert hashlib.sha256(server.files["/blob.bin"]).hexdigest() in msg
    folder = tmp_path / "home" / "toy" / "sub"
    assert sorted(p.name for p in folder.iterdir()) == ["blob.bin.bad"]


def test_unknown_checksum_is_accepted(server):
    server.files["/blob.bin"] = b"anything"
    assert fetch(make_record([server.url + "/blob.bin"], sha=None), "blob.bin",
                 progress=False).read_bytes() == b"anything"


def test_member_of_a_downloaded_archive(server):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("top/inner.txt", "hello")
        zf.writestr("other.txt", "no")
    server.files["/a.zip"] = buf.getvalue()
    sha = hashlib.sha256(b"hello").hexdigest()
    path = fetch(make_record([server.url + "/a.zip"], sha=sha, name="inner.txt",
                             member="inner.txt"), "inner.txt", progress=False)
    assert path.read_text() == "hello"
    assert sorted(p.name for p in path.parent.iterdir()) == [".inner.txt.verified", "inner.txt"]


def test_truncated_archive_is_refused_and_moved_aside(server):
    server.files["/a.zip"] = b"PK\x03\x04 not really a zip"
    with pytest.raises(ZooError, match="toy.*inner.txt.*unreadable or lacks it"):
        fetch(make_record([server.url + "/a.zip"], sha=None, name="inner.txt",
                          member="inner.txt"), "inner.txt", progress=False)


def test_mirror_copy_is_used_in_place_and_verified(server, tmp_path, monkeypatch):
    mirror = tmp_path / "mirror"
    (mirror / "toy" / "sub").mkdir(parents=True)
    (mirror / "toy" / "sub" / "blob.bin").write_bytes(PAYLOAD)
    rec = make_record([server.url + "/blob.bin"], partial="half of it is missing")
    path = fetch(rec, "blob.bin", mirror=mirror)
    assert path == mirror / "toy" / "sub" / "blob.bin" and server.requests == []
    assert locate(rec, "blob.bin", mirror=mirror) == (path, "mirror")
    assert partial_note(rec, [path], mirror=mirror) == "half of it is missing"
    monkeypatch.setenv("ZOO_DATA_MIRROR", str(mirror))  # the environment variable works too
    assert fetch(rec, "blob.bin") == path
    (mirror / "toy" / "sub" / "blob.bin").write_bytes(b"tampered")
    with pytest.raises(InputError, match="mirror copy .* has sha256"):  # bad data: exit 2
        fetch(rec, "blob.bin")


def test_a_cached_file_is_verified_again_when_it_changed(server, tmp_path, monkeypatch, capsys):
    """A stamped file is used without hashing; one put in the cache by hand is hashed once and
    stamped; one that fails its sha256 is moved aside and fetched again."""
    import zoo.data.fetch as fetching

    server.files["/blob.bin"] = PAYLOAD
    rec = make_record([server.url + "/blob.bin"])
    cached = tmp_path / "home" / "toy" / "sub" / "blob.bin"
    cached.parent.mkdir(parents=True)
    cached.write_bytes(PAYLOAD)  # by hand: no stamp
    assert fetch(rec, "blob.bin") == cached and server.requests == []
    assert (cached.parent / ".blob.bin.verified").read_text().startswith(SHA)
    with monkeypatch.context() as m:  # stamped: not hashed again
        m.setattr(fetching, "sha256_of", lambda _: pytest.fail("hashed a stamped file"))
        assert fetch(rec, "blob.bin") == cached
    cached.write_bytes(PAYLOAD[:-1] + b"x")  # damaged in place: same size, new mtime
    assert fetch(rec, "blob.bin", progress=False) == cached
    assert cached.read_bytes() == PAYLOAD and len(server.requests) == 1
    assert (cached.parent / "blob.bin.bad").read_bytes() == PAYLOAD[:-1] + b"x"
    err = capsys.readouterr().err
    assert f"the cached {cached} has sha256" in err and "moved aside" in err


def test_a_damaged_cached_file_is_replaced_from_the_mirror(tmp_path):
    mirror = tmp_path / "mirror"
    (mirror / "toy" / "sub").mkdir(parents=True)
    (mirror / "toy" / "sub" / "blob.bin").write_bytes(PAYLOAD)
    cached = tmp_path / "home" / "toy" / "sub" / "blob.bin"
    cached.parent.mkdir(parents=True)
    cached.write_bytes(b"not it")
    rec = make_record([closed_port_url()])
    assert fetch(rec, "blob.bin", mirror=mirror) == mirror / "toy" / "sub" / "blob.bin"
    cached.write_bytes(b"not it")
    assert cache_from_mirror(rec, "blob.bin", mirror) == cached
    assert cached.read_bytes() == PAYLOAD


def test_no_network_names_dataset_file_and_mirror(tmp_path):
    with pytest.raises(ZooError) as err:
        fetch(make_record([closed_port_url()]), "blob.bin", progress=False)
    msg = str(err.value)
    assert "'toy'" in msg and "blob.bin" in msg and "ZOO_DATA_MIRROR" in msg
    assert not (tmp_path / "home" / "toy" / "sub" / "blob.bin").exists()


def test_missing_mirror_file_without_network(tmp_path):
    (tmp_path / "mirror").mkdir()
    with pytest.raises(ZooError, match=r"toy/sub/blob.bin is not there either"):
        fetch(make_record([closed_port_url()]), "blob.bin", mirror=tmp_path / "mirror",
              progress=False)


def test_unknown_file_name_suggests():
    with pytest.raises(InputError, match="did you mean 'blob.bin'"):
        fetch(make_record([]), "blob.bim")


def test_archive_without_the_member_is_moved_aside(server, tmp_path):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("other.txt", "no")
    server.files["/a.zip"] = buf.getvalue()
    with pytest.raises(ZooError, match="lacks it"):
        fetch(make_record([server.url + "/a.zip"], sha=None, name="inner.txt",
                          member="inner.txt"), "inner.txt", progress=False)
    assert sorted(p.name for p in (tmp_path / "home" / "toy" / "sub").iterdir()) == \
        ["inner.txt.archive.bad"]


def test_an_archive_without_the_member_passes_to_the_next_url(server, tmp_path):
    for name, members in (("/per-dataset.zip", {"other.txt": "no"}),
                          ("/whole.zip", {"all/inner.txt": "hello", "other.txt": "no"})):
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as zf:
            for member, text in members.items():
                zf.writestr(member, text)
        server.files[name] = buf.getvalue()
    rec = make_record([server.url + "/per-dataset.zip", server.url + "/whole.zip"], sha=None,
                      name="inner.txt", member="inner.txt")
    assert fetch(rec, "inner.txt", progress=False).read_text() == "hello"
    assert sorted(p.name for p in (tmp_path / "home" / "toy" / "sub").iterdir()) == [
        "inner.txt", "inner.txt.archive.bad"]


def test_an_archive_is_downloaded_once_for_the_files_of_its_part(server, tmp_path, capsys):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for member, text in (("A_TRAIN.ts", "a-train"), ("A_TEST.ts", "a-test"),
                             ("B_TRAIN.ts", "b-train"), ("C_TEST.ts", "c-test"),
                             ("C_TRAIN.ts", "c-train")):
            zf.writestr(f"top/{member}", text)
    server.files["/all.zip"] = buf.getvalue()

    def entry(member, text, part):
        return RemoteFile(member, (server.url + "/all.zip",), hashlib.sha256(text).hexdigest(),
                          member=member, part=part)

    rec = DatasetRecord("toy", "Toy data", (
        entry("A_TRAIN.ts", b"a-train", "A"), entry("A_TEST.ts", b"a-test", "A"),
        entry("A_VALID.ts", b"absent", "A"), entry("B_TRAIN.ts", b"b-train", "B"),
        entry("C_TEST.ts", b"not what the archive holds", None),
        entry("C_TRAIN.ts", b"c-train", None)), "CC0", "nobody", "https://example.org", "toy/sub")
    folder = tmp_path / "home" / "toy" / "sub"
    assert fetch(rec, "A_TRAIN.ts", progress=False).read_text() == "a-train"
    # the other file of part A came with it, verified and stamped; part B and the member the
    # archive lacks did not
    assert sorted(p.name for p in folder.iterdir()) == [
        ".A_TEST.ts.verified", ".A_TRAIN.ts.verified", "A_TEST.ts", "A_TRAIN.ts"]
    assert fetch(rec, "A_TEST.ts", progress=False).read_text() == "a-test"
    assert len(server.requests) == 1
    assert fetch(rec, "B_TRAIN.ts", progress=False).read_text() == "b-train"
    assert len(server.requests) == 2
    # a file that fails its check beside the one asked for is set aside with a warning
    assert fetch(rec, "C_TRAIN.ts", progress=False).read_text() == "c-train"
    assert (folder / "C_TEST.ts.bad").is_file() and not (folder / "C_TEST.ts").exists()
    assert "C_TEST.ts failed verification" in capsys.readouterr().err
