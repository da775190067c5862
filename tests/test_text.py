"""Tests of attnbook.text (chapter 6). The download path is tested against a local HTTP
server on 127.0.0.1, never the internet."""

import hashlib
import importlib.resources

import pytest
import torch
from pytest_httpserver import HTTPServer

import attnbook.text
from attnbook.text import (
    STDLIB_MODULES,
    TINY_SHAKESPEARE_SHA256,
    ChecksumError,
    CharTokenizer,
    get_batch,
    load_corpus,
    load_python_corpus,
    load_tiny_shakespeare,
    split_train_val,
)

TEXT = "First Citizen:\nBefore we proceed any further, hear me speak.\n" * 20
SHA = hashlib.sha256(TEXT.encode()).hexdigest()


@pytest.fixture()
def server(httpserver_ipv4: HTTPServer) -> HTTPServer:
    """pytest-httpserver on 127.0.0.1 (a free port): /input.txt is the text, /bad.txt is not."""
    httpserver_ipv4.expect_request("/input.txt").respond_with_data(TEXT)
    httpserver_ipv4.expect_request("/bad.txt").respond_with_data(TEXT + "tampered")
    return httpserver_ipv4


def test_python_corpus_is_offline_and_deterministic():
    text = load_python_corpus(STDLIB_MODULES[:3])
    assert text.startswith("# ---- argparse ----") and len(text) > 10_000
    assert text == load_python_corpus(STDLIB_MODULES[:3])
    with pytest.raises(ValueError, match="no pure-Python source"):
        load_python_corpus(["math"])  # a compiled module


def test_shipped_copy_is_the_checked_text():
    text = load_tiny_shakespeare()  # no network: the copy inside the package
    assert hashlib.sha256(text.encode()).hexdigest() == TINY_SHAKESPEARE_SHA256
    assert len(text) == 1_115_394 and text.startswith(
        "First Citizen:\nBefore we proceed"
    )
    assert len(set(text)) == 65 and text.isascii()
    assert load_corpus() == text and load_corpus("shakespeare") == text
    # packed deterministically: the gzip header's time stamp is 0
    gz = (
        importlib.resources.files("attnbook")
        .joinpath("data/tinyshakespeare.txt.gz")
        .read_bytes()
    )
    assert gz[:2] == b"\x1f\x8b" and gz[4:8] == bytes(4)


def test_shipped_copy_tampered_missing_or_not_gzip(monkeypatch):
    with pytest.raises(FileNotFoundError, match="an install without its data files"):
        load_tiny_shakespeare(shipped="data/no_such_file.gz")
    with pytest.raises(ChecksumError, match="not a valid gzip file"):
        load_tiny_shakespeare(shipped="data/README.md")
    monkeypatch.setattr(attnbook.text, "_shipped_bytes", lambda resource: TEXT.encode())
    with pytest.raises(ChecksumError, match="expected " + TINY_SHAKESPEARE_SHA256):
        load_tiny_shakespeare()
    # the same bytes, checked against their own hash
    assert load_tiny_shakespeare(sha256=SHA) == TEXT


def test_corpus_names_and_conflicting_sources(tmp_path):
    with pytest.raises(ValueError, match="corpus must be one of"):
        load_corpus("shakespear")
    with pytest.raises(ValueError, match="either path .* or download=True"):
        load_tiny_shakespeare(path=tmp_path / "x.txt", download=True)


def test_download_is_checked_and_cached(server, tmp_path):
    cache = tmp_path / "cache"
    text = load_tiny_shakespeare(
        download=True, cache_dir=cache, url=server.url_for("/input.txt"), sha256=SHA
    )
    assert text == TEXT and (cache / "tinyshakespeare.txt").is_file()
    assert len(server.log) == 1
    # second call: served from the cache, no request, even though the URL is now dead
    assert (
        load_tiny_shakespeare(
            download=True,
            cache_dir=cache,
            url=server.url_for("/missing.txt"),
            sha256=SHA,
        )
        == TEXT
    )
    assert len(server.log) == 1


def test_corrupt_cache_is_downloaded_again(server, tmp_path):
    (tmp_path / "tinyshakespeare.txt").write_text("not the text")
    assert (
        load_tiny_shakespeare(
            download=True,
            cache_dir=tmp_path,
            url=server.url_for("/input.txt"),
            sha256=SHA,
        )
        == TEXT
    )
    assert (
        len(server.log) == 1 and (tmp_path / "tinyshakespeare.txt").read_text() == TEXT
    )


def test_bad_checksum_is_a_clear_error_and_not_cached(server, tmp_path):
    cache = tmp_path / "cache2"
    with pytest.raises(ChecksumError, match="expected " + SHA):
        load_tiny_shakespeare(
            download=True, cache_dir=cache, url=server.url_for("/bad.txt"), sha256=SHA
        )
    assert len(server.log) == 1
    # no file, no temporary left behind
    assert not cache.exists() or not list(cache.iterdir())


def test_local_path_missing_or_corrupt(tmp_path):
    with pytest.raises(FileNotFoundError, match="no Tiny Shakespeare file"):
        load_tiny_shakespeare(path=tmp_path / "nope.txt")
    p = tmp_path / "copy.txt"
    p.write_text(TEXT)
    assert load_tiny_shakespeare(path=p, sha256=SHA) == TEXT
    with pytest.raises(ChecksumError):
        load_tiny_shakespeare(path=p)  # the real Tiny Shakespeare checksum


def test_tokenizer_round_trip_and_unknown_characters():
    tok = CharTokenizer.from_text(TEXT)
    ids = tok.encode("hear me")
    assert ids.dtype == torch.long and tok.decode(ids) == "hear me"
    with pytest.raises(ValueError, match="not in the vocabulary: 'Zé'"):
        tok.encode("Zé hear")
    with pytest.raises(ValueError, match="token ids outside"):
        tok.decode([0, tok.vocab_size])


def test_split_and_batches():
    data = torch.arange(100)
    train, val = split_train_val(data, 0.1)
    assert len(train) == 90 and torch.equal(val, torch.arange(90, 100))
    x, y = get_batch(
        train, block_size=8, batch_size=4, generator=torch.Generator().manual_seed(0)
    )
    assert x.shape == y.shape == (4, 8) and torch.equal(y, x + 1)
    with pytest.raises(ValueError, match="more than block_size"):
        get_batch(val, block_size=10, batch_size=2)


def test_bpe_merges_the_most_frequent_pair_first_and_round_trips():
    from attnbook.bpe import bpe_segment, learn_bpe

    text = "lower lowest newer newest low low"
    merges = learn_bpe(text, 4)
    # the first merge is a pair with the highest count over the pieces
    counts = {}
    for piece in ["lower", " lowest", " newer", " newest", " low", " low"]:
        for a, b in zip(piece, piece[1:]):
            counts[a, b] = counts.get((a, b), 0) + 1
    assert counts[merges[0]] == max(counts.values())
    assert len(merges) == 4 and all(len(a) >= 1 and len(b) >= 1 for a, b in merges)
    tokens = bpe_segment(text, merges)
    assert "".join(tokens) == text
    assert len(tokens) < len(text)
    assert bpe_segment(text, []) == list(text)  # no merges: characters
    assert learn_bpe("ab", 10) == [("a", "b")]  # stops when no pair is left
    # merges never cross a piece boundary: a space starts a new piece, a newline run is its own
    assert all(
        " " not in t[1:]
        for t in bpe_segment("a b a b a b", learn_bpe("a b a b a b", 5))
    )


def test_bpe_on_real_text_shortens_it_and_generalises():
    from attnbook.bpe import bpe_segment, learn_bpe

    text = load_python_corpus(STDLIB_MODULES[:2])
    train, val = text[:60_000], text[60_000:90_000]
    merges = learn_bpe(train, 100)
    assert len(merges) == 100 and len(set(merges)) == 100
    tokens = bpe_segment(val, merges)
    assert "".join(tokens) == val
    # indentation and common words become single tokens
    assert len(tokens) < 0.7 * len(val)
    with pytest.raises(TypeError, match="text must be a str"):
        learn_bpe(b"bytes", 3)
    with pytest.raises(ValueError, match="num_merges must be >= 0"):
        learn_bpe("abc", -1)
    with pytest.raises(ValueError, match="merges must be pairs"):
        bpe_segment("abc", [("a", "b", "c")])
