"""Text corpora and character-level tokenisation for the tiny GPT (chapter 6).

The default corpus needs no download: the source code of a fixed list of pure-Python modules
of the running interpreter's standard library (always on disk, offline, on Colab and Binder).
Tiny Shakespeare is downloaded on request, its sha256 checked, and cached.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import tempfile
import urllib.request
from collections.abc import Iterable, Sequence
from pathlib import Path

import torch
from torch import Tensor

__all__ = [
    "STDLIB_MODULES", "load_python_corpus", "TINY_SHAKESPEARE_URL", "TINY_SHAKESPEARE_SHA256",
    "ChecksumError", "load_tiny_shakespeare", "CharTokenizer", "split_train_val", "get_batch",
]

STDLIB_MODULES: tuple[str, ...] = (
    "argparse", "ast", "bisect", "calendar", "collections", "configparser", "contextlib",
    "copy", "csv", "dataclasses", "difflib", "enum", "fnmatch", "fractions", "functools",
    "gettext", "glob", "heapq", "inspect", "ipaddress", "json.decoder", "json.encoder",
    "logging", "optparse", "pathlib", "pprint", "queue", "random", "shlex", "shutil",
    "statistics", "string", "tarfile", "textwrap", "tokenize", "typing", "uuid", "zipfile",
)

TINY_SHAKESPEARE_URL = "https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt"
TINY_SHAKESPEARE_SHA256 = "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed"


class ChecksumError(ValueError):
    """A downloaded or cached file does not have the expected sha256."""


def load_python_corpus(modules: Iterable[str] = STDLIB_MODULES) -> str:
    """Concatenated source of the given standard-library modules (pure Python only)."""
    parts = []
    for name in modules:
        spec = importlib.util.find_spec(name)
        origin = getattr(spec, "origin", None)
        if origin is None or not origin.endswith(".py"):
            raise ValueError(f"module {name!r} has no pure-Python source file (origin: {origin})")
        parts.append(f"# ---- {name} ----\n" + Path(origin).read_text(encoding="utf-8"))
    return "\n".join(parts)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "attnbook"


def load_tiny_shakespeare(path: str | Path | None = None, cache_dir: str | Path | None = None,
                          url: str = TINY_SHAKESPEARE_URL,
                          sha256: str = TINY_SHAKESPEARE_SHA256, timeout: float = 60.0) -> str:
    """Tiny Shakespeare as a string.

    With `path`, read that local copy. Otherwise use `cache_dir/tinyshakespeare.txt`
    (default ~/.cache/attnbook), downloading it from `url` first if it is not cached.
    Every copy is checked against `sha256`; a mismatch raises ChecksumError and a bad
    download is never cached.
    """
    if path is not None:
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"no Tiny Shakespeare file at {path}")
        if (got := _sha256(path)) != sha256:
            raise ChecksumError(f"{path} has sha256 {got}, expected {sha256}")
        return path.read_text(encoding="utf-8")
    cache = Path(cache_dir) if cache_dir is not None else _default_cache_dir()
    target = cache / "tinyshakespeare.txt"
    if target.is_file() and _sha256(target) == sha256:
        return target.read_text(encoding="utf-8")
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=cache, delete=False, suffix=".part") as tmp:
        try:
            with urllib.request.urlopen(url, timeout=timeout) as response:
                tmp.write(response.read())
        except Exception:
            os.unlink(tmp.name)
            raise
    got = _sha256(Path(tmp.name))
    if got != sha256:
        os.unlink(tmp.name)
        raise ChecksumError(f"download from {url} has sha256 {got}, expected {sha256}")
    os.replace(tmp.name, target)
    return target.read_text(encoding="utf-8")


class CharTokenizer:
    """One token per character; the vocabulary is fixed when the tokenizer is made."""

    def __init__(self, chars: Sequence[str]) -> None:
        if len(set(chars)) != len(chars) or any(len(c) != 1 for c in chars):
            raise ValueError("chars must be distinct single characters")
        self.chars = list(chars)
        self.index = {c: i for i, c in enumerate(self.chars)}

    @classmethod
    def from_text(cls, text: str) -> "CharTokenizer":
        return cls(sorted(set(text)))

    @property
    def vocab_size(self) -> int:
        return len(self.chars)

    def encode(self, text: str) -> Tensor:
        """str -> (len(text),) long tensor; characters outside the vocabulary are an error."""
        unknown = sorted(set(text) - self.index.keys())
        if unknown:
            raise ValueError(f"{len(unknown)} characters are not in the vocabulary: "
                             f"{''.join(unknown)[:40]!r}")
        return torch.tensor([self.index[c] for c in text], dtype=torch.long)

    def decode(self, ids: Iterable[int] | Tensor) -> str:
        ids = ids.tolist() if isinstance(ids, Tensor) else list(ids)
        bad = [i for i in ids if not 0 <= i < len(self.chars)]
        if bad:
            raise ValueError(f"token ids outside [0, {len(self.chars)}): {bad[:5]}")
        return "".join(self.chars[i] for i in ids)


def split_train_val(data: Tensor, val_fraction: float = 0.1) -> tuple[Tensor, Tensor]:
    """First (1 - val_fraction) of the tokens for training, the rest for validation."""
    if not 0 < val_fraction < 1:
        raise ValueError(f"val_fraction must be in (0, 1), got {val_fraction}")
    n = int(len(data) * (1 - val_fraction))
    return data[:n], data[n:]


def get_batch(data: Tensor, block_size: int, batch_size: int,
              generator: torch.Generator | None = None) -> tuple[Tensor, Tensor]:
    """Random windows: x (B, T) and y (B, T) = x shifted by one token."""
    if len(data) <= block_size:
        raise ValueError(f"need more than block_size={block_size} tokens, got {len(data)}")
    starts = torch.randint(len(data) - block_size, (batch_size,), generator=generator)  # (B,)
    offsets = torch.arange(block_size)  # (T,)
    x = data[starts[:, None] + offsets]  # (B, T)
    y = data[starts[:, None] + offsets + 1]  # (B, T)
    return x, y
