"""Text corpora and character-level tokenisation for the tiny GPT (chapter 6).

The default corpus is Tiny Shakespeare, shipped inside the package (gzipped, its sha256
checked at every load), so the text, the vocabulary and the split are the same on every
Python release and machine, offline too. It can also be downloaded (pooch, sha256 checked,
cached). The source code of a list of standard-library modules is an optional second corpus:
it needs nothing but the interpreter, but it changes with the Python release.
Subword tokens (byte-pair encoding, `learn_bpe` and `bpe_segment`) live in `attnbook.bpe`
and are importable from here too.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.resources
import importlib.util
import logging
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

import torch
from torch import Tensor

from ._checks import positive_float, positive_int, tensor
from .bpe import bpe_segment, learn_bpe  # chapter 6 imports them with the text tools
from .device import as_device, to_device

__all__ = [
    "STDLIB_MODULES",
    "load_python_corpus",
    "TINY_SHAKESPEARE_URL",
    "TINY_SHAKESPEARE_SHA256",
    "ChecksumError",
    "SHIPPED_TINY_SHAKESPEARE",
    "load_tiny_shakespeare",
    "CORPORA",
    "load_corpus",
    "CharTokenizer",
    "split_train_val",
    "get_batch",
    "learn_bpe",
    "bpe_segment",
]

STDLIB_MODULES: tuple[str, ...] = (
    "argparse",
    "ast",
    "bisect",
    "calendar",
    "collections",
    "configparser",
    "contextlib",
    "copy",
    "csv",
    "dataclasses",
    "difflib",
    "enum",
    "fnmatch",
    "fractions",
    "functools",
    "gettext",
    "glob",
    "heapq",
    "inspect",
    "ipaddress",
    "json.decoder",
    "json.encoder",
    "logging",
    "optparse",
    "pathlib",
    "pprint",
    "queue",
    "random",
    "shlex",
    "shutil",
    "statistics",
    "string",
    "tarfile",
    "textwrap",
    "tokenize",
    "typing",
    "uuid",
    "zipfile",
)

TINY_SHAKESPEARE_URL = "https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt"
TINY_SHAKESPEARE_SHA256 = (
    "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed"
)
# the copy inside the package (data/README.md: provenance and licence); the sha256 above is
# that of the uncompressed text
SHIPPED_TINY_SHAKESPEARE = "data/tinyshakespeare.txt.gz"


class ChecksumError(ValueError):
    """A shipped, downloaded or cached file does not have the expected sha256.

    Chapter 6.
    """


def load_python_corpus(modules: Iterable[str] = STDLIB_MODULES) -> str:
    """Concatenated source of the given standard-library modules (pure Python only).

    Chapter 6.
    """
    if isinstance(modules, str):
        raise TypeError(
            f"modules must be a list of module names, not the single string {modules!r}"
        )
    parts = []
    for name in modules:
        if not isinstance(name, str):
            raise TypeError(
                f"modules must hold module names (str), got {type(name).__name__} {name!r}"
            )
        try:
            spec = importlib.util.find_spec(name)
        except ModuleNotFoundError:
            spec = None
        if spec is None:
            raise ValueError(f"modules: no module named {name!r} in this interpreter")
        origin = getattr(spec, "origin", None)
        if origin is None or not origin.endswith(".py"):
            raise ValueError(
                f"module {name!r} has no pure-Python source file (origin: {origin})"
            )
        parts.append(f"# ---- {name} ----\n" + Path(origin).read_text(encoding="utf-8"))
    return "\n".join(parts)


def _default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "attnbook"


def _check_sha256(sha256: str) -> None:
    if (
        not isinstance(sha256, str)
        or len(sha256) != 64
        or set(sha256.lower()) - set("0123456789abcdef")
    ):
        raise ValueError(f"sha256 must be 64 hexadecimal digits, got {sha256!r}")


def _shipped_bytes(resource: str) -> bytes:
    """The uncompressed bytes of a gzipped file inside the package."""
    ref = importlib.resources.files("attnbook").joinpath(resource)
    if not ref.is_file():
        raise FileNotFoundError(
            f"the package has no {resource}: an install without its data "
            "files? Reinstall attnbook, or pass download=True"
        )
    try:
        return gzip.decompress(ref.read_bytes())
    except (OSError, EOFError) as err:  # gzip.BadGzipFile is an OSError
        raise ChecksumError(
            f"the shipped {resource} is not a valid gzip file ({err})"
        ) from None


def load_tiny_shakespeare(
    path: str | Path | None = None,
    *,
    download: bool = False,
    cache_dir: str | Path | None = None,
    url: str = TINY_SHAKESPEARE_URL,
    sha256: str = TINY_SHAKESPEARE_SHA256,
    timeout: float = 60.0,
    shipped: str = SHIPPED_TINY_SHAKESPEARE,
) -> str:
    """Tiny Shakespeare as a string (chapter 6): 1,115,394 characters of plays.

    By default the copy shipped inside the package (`shipped`, gzipped). With `path`, that
    local plain-text copy. With `download=True`, `cache_dir/tinyshakespeare.txt` (default
    ~/.cache/attnbook), downloaded from `url` first if it is not cached. Every copy is
    checked against `sha256`; a mismatch raises ChecksumError and a bad download is never
    cached (pooch downloads to a temporary file, checks it, then moves it).
    """
    _check_sha256(sha256)
    positive_float("timeout", timeout)
    if path is not None and download:
        raise ValueError("pass either path (a local copy) or download=True, not both")
    if path is None and not download:
        raw = _shipped_bytes(shipped)
        if (got := hashlib.sha256(raw).hexdigest()) != sha256:
            raise ChecksumError(
                f"the shipped {shipped} has sha256 {got}, expected {sha256}"
            )
        return raw.decode("utf-8")
    if path is not None:
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"no Tiny Shakespeare file at {path}")
        if (got := hashlib.sha256(path.read_bytes()).hexdigest()) != sha256:
            raise ChecksumError(f"{path} has sha256 {got}, expected {sha256}")
        return path.read_text(encoding="utf-8")
    import pooch  # only the download needs it

    cache = Path(cache_dir) if cache_dir is not None else _default_cache_dir()
    target = cache / "tinyshakespeare.txt"
    downloader = pooch.HTTPDownloader(timeout=timeout, progressbar=False)
    quiet = pooch.get_logger()
    level = quiet.level
    # no "Downloading ... to <local path>" line in the notebooks
    quiet.setLevel(logging.WARNING)
    try:
        pooch.retrieve(
            url,
            known_hash=f"sha256:{sha256}",
            fname=target.name,
            path=cache,
            downloader=downloader,
        )
    except ValueError as err:  # pooch's hash mismatch; the bad file has been deleted
        raise ChecksumError(
            f"download from {url} does not match the expected sha256: "
            f"expected {sha256} ({err})"
        ) from None
    finally:
        quiet.setLevel(level)
    return target.read_text(encoding="utf-8")


CORPORA = ("shakespeare", "python")


def load_corpus(name: str = "shakespeare") -> str:
    """A training text by name (chapters 6 and 8): "shakespeare", the shipped Tiny
    Shakespeare (the same everywhere), or "python", this interpreter's standard-library
    source (`load_python_corpus`, which differs between Python releases)."""
    if name == "shakespeare":
        return load_tiny_shakespeare()
    if name == "python":
        return load_python_corpus()
    raise ValueError(f"corpus must be one of {CORPORA}, got {name!r}")


class CharTokenizer:
    """One token per character; the vocabulary is fixed when the tokenizer is made.

    Chapters 6 and 8.
    """

    def __init__(self, chars: Sequence[str]) -> None:
        if len(chars) == 0:
            raise ValueError(
                "chars must not be empty: a vocabulary needs at least one character"
            )
        if any(not isinstance(c, str) or len(c) != 1 for c in chars):
            raise ValueError(
                f"chars must be single characters (str of length 1), got {list(chars)[:5]!r}"
            )
        if len(set(chars)) != len(chars):
            raise ValueError("chars must be distinct: the same character appears twice")
        self.chars = list(chars)
        self.index = {c: i for i, c in enumerate(self.chars)}

    @classmethod
    def from_text(cls, text: str) -> CharTokenizer:
        return cls(sorted(set(text)))

    @property
    def vocab_size(self) -> int:
        return len(self.chars)

    def encode(self, text: str) -> Tensor:
        """str -> (len(text),) long tensor; characters outside the vocabulary are an error."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        unknown = sorted(set(text) - self.index.keys())
        if unknown:
            raise ValueError(
                f"{len(unknown)} characters are not in the vocabulary: "
                f"{''.join(unknown)[:40]!r}"
            )
        return torch.tensor([self.index[c] for c in text], dtype=torch.long)

    def decode(self, ids: Iterable[int] | Tensor) -> str:
        if isinstance(ids, Tensor):
            if (
                ids.dim() > 1
                or ids.dtype.is_floating_point
                or ids.dtype.is_complex
                or ids.dtype == torch.bool
            ):
                raise TypeError(
                    f"ids must be a 1-D tensor of integer token ids, got shape "
                    f"{tuple(ids.shape)} and dtype {ids.dtype}"
                )
            ids = ids.tolist()
        ids = list(ids)
        if any(isinstance(i, bool) or not isinstance(i, int) for i in ids):
            raise TypeError(f"ids must be integer token ids, got {ids[:5]!r}")
        bad = [i for i in ids if not 0 <= i < len(self.chars)]
        if bad:
            raise ValueError(f"token ids outside [0, {len(self.chars)}): {bad[:5]}")
        return "".join(self.chars[i] for i in ids)


def split_train_val(data: Tensor, val_fraction: float = 0.1) -> tuple[Tensor, Tensor]:
    """First (1 - val_fraction) of the tokens for training, the rest for validation.

    Chapters 6-10.
    """
    tensor("data", data, "(N,) tensor of token ids", dims=(1,))
    if not 0 < val_fraction < 1:
        raise ValueError(f"val_fraction must be in (0, 1), got {val_fraction}")
    n = int(len(data) * (1 - val_fraction))
    if n == 0 or n == len(data):
        raise ValueError(
            f"data of {len(data)} tokens is too short to split with "
            f"val_fraction={val_fraction}: one part would be empty"
        )
    return data[:n], data[n:]


def get_batch(
    data: Tensor,
    block_size: int,
    batch_size: int,
    generator: torch.Generator | None = None,
    device: str | torch.device | None = None,
) -> tuple[Tensor, Tensor]:
    """Random windows: x (B, T) and y (B, T) = x shifted by one token.

    The windows are cut where `data` lives and then moved to `device` (default: stay there).
    For a GPU run, put `data` on the GPU once: only the B start positions then cross to it.
    The starts are drawn on the generator's device, so a CPU generator draws the same
    windows whatever device `data` is on.

    Chapters 6, 8 and 9.
    """
    tensor("data", data, "(N,) tensor of token ids", dims=(1,))
    positive_int("block_size", block_size)
    positive_int("batch_size", batch_size)
    if len(data) <= block_size:
        raise ValueError(
            f"need more than block_size={block_size} tokens, got {len(data)}"
        )
    where = generator.device if generator is not None else data.device
    starts = torch.randint(
        len(data) - block_size, (batch_size,), generator=generator, device=where
    )  # (B,)
    (starts,) = to_device((starts,), data.device)
    offsets = torch.arange(block_size, device=data.device)  # (T,)
    x = data[starts[:, None] + offsets]  # (B, T)
    y = data[starts[:, None] + offsets + 1]  # (B, T)
    if device is None:
        return x, y
    x, y = to_device((x, y), as_device(device))
    return x, y
