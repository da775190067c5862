"""Tests of attnbook.text (chapter 6). The download path is tested against a local HTTP
server on 127.0.0.1, never the internet."""
import functools
import hashlib
import http.server
import threading

import pytest
import torch

from attnbook.text import (
    STDLIB_MODULES, ChecksumError, CharTokenizer, get_batch, load_python_corpus,
    load_tiny_shakespeare, split_train_val,
)

TEXT = "First Citizen:\nBefore we proceed any further, hear me speak.\n" * 20
SHA = hashlib.sha256(TEXT.encode()).hexdigest()


@pytest.fixture()
def server(tmp_path):
    (tmp_path / "input.txt").write_text(TEXT)
    (tmp_path / "bad.txt").write_text(TEXT + "tampered")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    handler.log_message = lambda *a: None
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    httpd.requests = 0
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def test_python_corpus_is_offline_and_deterministic():
    text = load_python_corpus(STDLIB_MODULES[:3])
    assert text.startswith("# ---- argparse ----") and len(text) > 10_000
    assert text == load_python_corpus(STDLIB_MODULES[:3])
    with pytest.raises(ValueError, match="no pure-Python source"):
        load_python_corpus(["math"])  # a compiled module


def test_download_is_checked_and_cached(server, tmp_path):
    cache = tmp_path / "cache"
    text = load_tiny_shakespeare(cache_dir=cache, url=f"{server}/input.txt", sha256=SHA)
    assert text == TEXT and (cache / "tinyshakespeare.txt").is_file()
    # second call: served from the cache even though the URL is now dead
    assert load_tiny_shakespeare(cache_dir=cache, url=f"{server}/missing.txt", sha256=SHA) == TEXT


def test_bad_checksum_is_a_clear_error_and_not_cached(server, tmp_path):
    cache = tmp_path / "cache2"
    with pytest.raises(ChecksumError, match="expected " + SHA):
        load_tiny_shakespeare(cache_dir=cache, url=f"{server}/bad.txt", sha256=SHA)
    assert not (cache / "tinyshakespeare.txt").exists() and not list(cache.glob("*.part"))


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
    x, y = get_batch(train, block_size=8, batch_size=4, generator=torch.Generator().manual_seed(0))
    assert x.shape == y.shape == (4, 8) and torch.equal(y, x + 1)
    with pytest.raises(ValueError, match="more than block_size"):
        get_batch(val, block_size=10, batch_size=2)
