"""A tiny serving engine: continuous batching over a paged cache (chapter 9; vLLM, Kwon et
al. 2023; Orca's iteration-level scheduling, Yu et al. 2022; chunked prefill as in Sarathi,
Agrawal et al. 2024, and vLLM V1's scheduler).

Requests wait in a queue. Every `step` the scheduler picks the tokens to compute: first those
of the running sequences (one each when decoding), oldest first, then waiting requests, first
come first served, while the batch, the pool and the step's `token_budget` have room. With a
budget, a prompt longer than what is left is split into chunks over several steps
(`chunked=True`, as vLLM V1 always does) or waits for a step with room for all of it
(`chunked=False`). The model runs its own blocks (`GPT.forward`) over a
`paged.PagedBatchCache`: each row at its own positions, reading its own blocks (rows of one
length, such as one sequence or the samples of one prompt, need no mask and take PyTorch's
fused attention kernel; rows of different lengths are masked). A sequence
that finishes frees its blocks at once, and the next waiting request takes its place in the
following step.

Blocks are shared, not copied: the parallel samples of one prompt share the prompt's blocks,
and with `prefix_cache=True` every full block of computed tokens is cached under a hash of
its tokens chained to the hash of the block before it (`blocks.block_hash`; vLLM's
automatic prefix caching). A later request that starts with the same tokens reuses the
blocks, even after their first holder has finished, until the pool hands them out again,
least recently freed first. A shared block is copied before a sequence writes into it
(`blocks.BlockTable.grow`).

Memory policies (`reserve`): "none" takes blocks as tokens arrive (paging) and, when the pool
runs dry, preempts the newest running sequence (its blocks are freed; it is recomputed when
readmitted); "max" reserves the model's context at admission, "request" the request's own
prompt + max_new_tokens, as systems without paging must.

`step` reads as scheduling, the model's forward pass and sampling; what chapter 9 measures
of a run (steps, tokens per step, preemptions, prefix-cache hits) the engine reports to its
`stats` (`serving_stats.EngineStats`). Each sample in flight is a `serving_sequence.Sequence`.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import torch
from torch import Tensor

from ._checks import positive_int
from .blocks import BlockPool, BlockTable, block_hash
from .gpt import GPT
from .sampling import sample_next_token
from .multihead import MultiHeadAttention
from .paged import PagedBatchCache
from .serving_sequence import Sequence
from .serving_stats import EngineStats

__all__ = ["Request", "Engine", "RESERVE"]

RESERVE = ("none", "max", "request")


@dataclass
class Request:
    """A prompt (token ids) and how to answer it: up to `max_new_tokens` tokens, ending early
    after a `stop` token; `n` samples, sample i drawn with a generator seeded `seed + i`
    (`temperature`, `top_k` as in `sampling.sample_next_token`; top_k=1 is greedy).

    Chapter 9.
    """

    prompt: list[int]
    max_new_tokens: int
    stop: int | None = None
    n: int = 1
    temperature: float = 1.0
    top_k: int | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.prompt, list) or not self.prompt:
            raise ValueError("prompt must be a non-empty list of token ids")
        positive_int("max_new_tokens", self.max_new_tokens)
        positive_int("n", self.n)


class Engine:
    """Serves `Request`s with `model` (a GPT with rotary or no positions and multi-head
    attention; run in eval mode, the caller's mode restored after each pass) from `pool` (a
    `BlockPool` with the model's layers, key/value heads and head width), at most `max_batch` sequences and `token_budget` tokens (None:
    no limit) per step. `add` queues a request, `step` runs one iteration, `run` steps until
    every request is answered and returns the outputs. What chapter 9 measures of the run
    is in `stats` (`serving_stats.EngineStats`)."""

    def __init__(
        self,
        model: GPT,
        pool: BlockPool,
        max_batch: int,
        reserve: str = "none",
        prefix_cache: bool = False,
        token_budget: int | None = None,
        chunked: bool = True,
    ) -> None:
        if not isinstance(model, GPT):
            raise TypeError(
                f"model must be an attnbook GPT, got {type(model).__name__}"
            )
        cfg = model.config
        if cfg.positions not in ("rope", "none"):
            raise ValueError(
                f"the engine serves models with positions 'rope' or 'none', got "
                f"{cfg.positions!r}"
            )
        if cfg.attention != "mha":
            raise ValueError(
                f"the engine's pool holds per-head keys and values, for attention='mha'; "
                f"this model's config says attention={cfg.attention!r} (latent attention "
                "caches latents: decode it one sequence at a time with a LatentCache)"
            )
        if not isinstance(pool, BlockPool):
            raise TypeError(f"pool must be a BlockPool, got {type(pool).__name__}")
        attn = model.blocks[0].attn
        assert isinstance(attn, MultiHeadAttention)
        if (pool.n_layer, pool.n_head, pool.d_head) != (
            cfg.n_layer,
            attn.n_kv_head,
            attn.d_k,
        ):
            raise ValueError(
                f"the pool holds {pool.n_layer} layers of {pool.n_head} heads of width "
                f"{pool.d_head}; the model needs {cfg.n_layer}, {attn.n_kv_head} and "
                f"{attn.d_k}"
            )
        if reserve not in RESERVE:
            raise ValueError(f"reserve must be one of {RESERVE}, got {reserve!r}")
        self.model, self.pool = model, pool
        self.max_batch = positive_int("max_batch", max_batch)
        self.token_budget = (
            None if token_budget is None else positive_int("token_budget", token_budget)
        )
        self.reserve, self.prefix_cache = reserve, bool(prefix_cache)
        self.chunked = bool(chunked)
        self.requests: list[Request] = []
        self.waiting: deque[Sequence] = deque()
        self.running: list[Sequence] = []
        self.outputs: dict[int, list[list[int]]] = {}
        self.stats = EngineStats()

    # -- requests ------------------------------------------------------------------------
    def add(self, request: Request) -> int:
        """Queue a request; returns its id (the key of its outputs)."""
        if not isinstance(request, Request):
            raise TypeError(f"request must be a Request, got {type(request).__name__}")
        cfg = self.model.config
        total = len(request.prompt) + request.max_new_tokens - 1  # tokens ever cached
        if total > cfg.block_size:
            raise ValueError(
                f"prompt ({len(request.prompt)}) + max_new_tokens "
                f"({request.max_new_tokens}) - 1 exceeds the model's context "
                f"{cfg.block_size}"
            )
        held = cfg.block_size if self.reserve == "max" else total
        if -(-held // self.pool.block_size) > self.pool.num_blocks:
            raise ValueError(f"a request of {held} tokens does not fit in the pool")
        if request.n > self.max_batch:
            raise ValueError(
                f"n={request.n} samples cannot run together in batches of "
                f"{self.max_batch}"
            )
        if request.n > 1 and self.reserve != "none":
            raise ValueError(
                "parallel samples (n > 1) share their prompt's blocks: reserve='none' only"
            )
        budget = self.token_budget
        if budget is not None and not self.chunked and total > budget:
            raise ValueError(
                f"unchunked, a prompt and the tokens it may have to recompute ({total}) "
                f"must fit in one step's token_budget={budget}"
            )
        if not all(
            isinstance(t, int) and 0 <= t < cfg.vocab_size for t in request.prompt
        ):
            raise ValueError(f"prompt ids must be ints in [0, {cfg.vocab_size})")
        rid = len(self.requests)
        self.requests.append(request)
        self.outputs[rid] = [[] for _ in range(request.n)]
        self.stats.arrived(rid, request.n)
        self.waiting.append(self._new_sequence(rid, 0, list(request.prompt)))
        return rid

    def _new_sequence(self, rid: int, sample: int, tokens: list[int]) -> Sequence:
        seed = self.requests[rid].seed + sample
        generator = torch.Generator().manual_seed(seed)
        return Sequence(rid, sample, tokens, generator, BlockTable(self.pool))

    # -- the scheduler ---------------------------------------------------------------------
    def step(self) -> None:
        """Schedule the step's tokens (running sequences first, then newcomers), run them
        through the model, sample where a sequence's tokens are all in, free what finished."""
        plan = self._schedule()
        self.stats.planned(
            [(s.request_id, n, n == 1 and bool(s.output)) for s, n in plan]
        )
        for T in sorted({n for _, n in plan}):  # rows of equal length run together
            group = [s for s, n in plan if n == T]
            for seq, logits in zip(group, self._forward(group, T)):
                self._computed(seq, T)
                if seq.cached == len(seq.tokens):  # all its tokens are in: sample
                    twins = [self._fork(seq, i) for i in range(1, self._n(seq))]
                    for each in [seq, *twins]:
                        self._sample(each, logits)
        self.stats.ended(
            len(self.running),
            self.pool.num_used * self.pool.block_size,
            sum(len(s.table) for s in self.running),
        )
        for seq in [s for s in self.running if self._done(s)]:
            self.running.remove(seq)
            self.outputs[seq.request_id][seq.sample] = seq.output
            seq.table.free()

    def _schedule(self) -> list[tuple[Sequence, int]]:
        """The step's plan: (sequence, tokens it computes), the running sequences first
        (oldest first; making room may preempt the newest), then newcomers, within the
        token budget. Each planned sequence holds the blocks its tokens go to."""
        budget = self.token_budget or self.model.config.block_size * self.max_batch
        plan: list[tuple[Sequence, int]] = []
        for seq in list(self.running):  # oldest first; the newest may be preempted
            n = min(len(seq.tokens) - seq.cached, budget)
            if seq in self.running and n > 0 and self._make_room(seq, n):
                plan.append((seq, n))
                budget -= n
        while budget > 0 and (admitted := self._admit(budget)) is not None:
            plan.append(admitted)
            budget -= admitted[1]
        # preemption takes the newest running sequence, newer than every planned one
        assert all(s in self.running for s, _ in plan), (
            "a planned sequence was preempted"
        )
        return plan

    def run(self, max_steps: int = 100_000) -> dict[int, list[list[int]]]:
        """Step until every request is answered: {request id: [tokens of each sample]}."""
        for _ in range(max_steps):
            if not self.waiting and not self.running:
                return self.outputs
            self.step()
        raise RuntimeError(f"requests still open after {max_steps} steps")

    def _n(self, seq: Sequence) -> int:
        """Samples to fork from `seq` once its prompt is in: the request's n, once."""
        fresh = seq.sample == 0 and not seq.output
        return self.requests[seq.request_id].n if fresh else 1

    def _admit(self, budget: int) -> tuple[Sequence, int] | None:
        """The first waiting sequence, running, and the tokens it reads this step, if it
        fits in the batch, the budget and the pool (first come, first served)."""
        if not self.waiting:
            return None
        seq, size = self.waiting[0], self.pool.block_size
        n = self._n(seq)  # with the twins the running ones will fork
        if sum(map(self._n, self.running)) + n > self.max_batch:
            return None
        keys, found = self._prefix_keys(seq), []
        for key in keys:  # the leading blocks the prefix cache holds
            if key not in self.pool.cached:
                break
            found.append(self.pool.cached[key])
        start = len(found) * size
        chunk = min(len(seq.tokens) - start, budget)
        if chunk < len(seq.tokens) - start and not self.chunked:
            return None
        revived = sum(
            self.pool.refs[b] == 0 for b in found
        )  # taken from the free queue
        if self.reserve == "none":  # its tokens, and a copy of the last block per twin
            need = -(-(start + chunk) // size) - len(found) + (n - 1)
        else:
            need = -(-self._reservation(seq) // size) - len(found)
        if need + revived > self.pool.num_free:
            return None
        self.waiting.popleft()
        self.stats.admitted(len(keys), len(found))
        seq.keys = keys[: len(found)]
        seq.table.blocks = [self.pool.take_cached(key) for key in seq.keys]
        seq.table.length = seq.cached = start
        if self.reserve != "none":
            seq.table.reserve(self._reservation(seq))
        seq.table.grow(chunk)
        self.running.append(seq)
        return seq, chunk

    def _reservation(self, seq: Sequence) -> int:
        """Tokens a preallocating policy reserves for seq at admission."""
        request = self.requests[seq.request_id]
        if self.reserve == "max":
            return self.model.config.block_size
        return len(request.prompt) + request.max_new_tokens - 1

    def _prefix_keys(self, seq: Sequence) -> list[bytes]:
        """The keys of seq's leading full blocks, leaving at least one token to compute (for
        its logits); none without the prefix cache."""
        if not self.prefix_cache:
            return []
        size, keys, parent = self.pool.block_size, [], b""
        for i in range((len(seq.tokens) - 1) // size):
            parent = block_hash(parent, seq.tokens[i * size : (i + 1) * size])
            keys.append(parent)
        return keys

    def _computed(self, seq: Sequence, n: int) -> None:
        """seq's next n tokens are in its blocks: cache the blocks they filled."""
        seq.cached += n
        size = self.pool.block_size
        while self.prefix_cache and (len(seq.keys) + 1) * size <= seq.cached:
            i = len(seq.keys)
            parent = seq.keys[-1] if seq.keys else b""
            seq.keys.append(block_hash(parent, seq.tokens[i * size : (i + 1) * size]))
            self.pool.cache_block(seq.table.blocks[i], seq.keys[-1])

    def _fork(self, seq: Sequence, sample: int) -> Sequence:
        """Sample `sample` of seq's request: the same tokens and blocks (shared)."""
        twin = self._new_sequence(seq.request_id, sample, list(seq.tokens))
        twin.table, twin.cached = seq.table.fork(), seq.cached
        twin.keys = list(seq.keys)
        self.running.append(twin)
        return twin

    def _make_room(self, seq: Sequence, n: int) -> bool:
        """Blocks for seq's next n tokens: new ones past its last, and a copy of a shared
        block it writes into. Without enough free blocks, preempt the newest running
        sequence (perhaps seq itself) until there are. Takes them; False if seq is gone."""
        size, blocks = self.pool.block_size, seq.table.blocks
        first, last = seq.cached // size, (seq.cached + n - 1) // size
        shared = sum(self.pool.refs[b] > 1 for b in blocks[first : last + 1])
        need = max(0, last + 1 - len(blocks)) + shared
        while seq in self.running:
            if need <= self.pool.num_free:
                seq.table.grow(n)
                return True
            self._preempt(self.running[-1])
        return False

    def _preempt(self, seq: Sequence) -> None:
        """Free seq's blocks and queue it first, to be recomputed from its tokens (its
        admission sets what is cached anew)."""
        self.running.remove(seq)
        seq.table.free()
        seq.cached, seq.keys = 0, []
        self.waiting.appendleft(seq)
        self.stats.preempted()

    def _done(self, seq: Sequence) -> bool:
        request = self.requests[seq.request_id]
        stopped = request.stop is not None and seq.output[-1:] == [request.stop]
        return stopped or len(seq.output) == request.max_new_tokens

    def _sample(self, seq: Sequence, logits: Tensor) -> None:
        request = self.requests[seq.request_id]
        token = int(
            sample_next_token(
                logits[None], request.temperature, request.top_k, seq.generator
            )
        )
        seq.tokens.append(token)
        seq.output.append(token)
        self.stats.sampled(seq.request_id, seq.sample)

    # -- the model -------------------------------------------------------------------------
    @torch.no_grad()
    def _forward(self, seqs: list[Sequence], T: int) -> Tensor:
        """The model's forward pass on each sequence's next T tokens (their blocks already
        taken), every row at its own positions -> each row's last logits (B, vocab)."""
        new = torch.tensor([s.tokens[s.cached : s.cached + T] for s in seqs])  # (B, T)
        positions = torch.tensor([s.cached for s in seqs])[:, None] + torch.arange(T)
        width = max(len(s.table.blocks) for s in seqs)
        tables = torch.tensor(  # (B, width), short rows padded with their first block
            [
                s.table.blocks + s.table.blocks[:1] * (width - len(s.table.blocks))
                for s in seqs
            ]
        )
        lengths = positions[:, -1] + 1  # (B,): each row's tokens with the new ones
        caches = [
            PagedBatchCache(self.pool, layer, tables, lengths)
            for layer in range(self.pool.n_layer)
        ]
        training = self.model.training
        self.model.eval()  # no dropout while serving; the caller's mode comes back after
        try:
            logits, _ = self.model(new, kv_caches=list(caches), positions=positions)
        finally:
            self.model.train(training)
        return logits[:, -1]  # (B, vocab)
