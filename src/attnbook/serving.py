"""A tiny serving engine: continuous batching over a paged cache (chapter 9; vLLM, Kwon et
al. 2023; Orca's iteration-level scheduling, Yu et al. 2022).

Requests wait in a queue. Every `step` the scheduler admits waiting requests while the batch
has room and the pool has blocks (first come, first served), runs each newcomer's prompt
through the model (prefill), then decodes one token for every other running sequence in one
batched forward pass, each sequence at its own position, reading its keys and values through
its block table (`paged.paged_attention`). A sequence that finishes frees its blocks at once,
and the next waiting request takes its place in the following step.

Blocks are shared, not copied: the parallel samples of one prompt share the prompt's blocks,
and with `prefix_cache=True` a request whose prompt starts with the full blocks of an earlier
one (a shared system prompt) reuses them. A shared block is copied before a sequence writes
into it (`paged.BlockTable.grow`).

Memory policies (`reserve`): "none" takes blocks as tokens arrive (paging) and, when the pool
runs dry, preempts the newest running sequence (its blocks are freed; it is recomputed when
readmitted); "max" reserves the model's context at admission, "request" the request's own
prompt + max_new_tokens, as systems without paging must.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import cast

import torch
from torch import Tensor

from ._checks import positive_int
from .gpt import GPT, Block, sample_next_token
from .multihead import merge_heads, split_heads
from .paged import BlockPool, BlockTable, paged_attention
from .positional import apply_rope, embed_tokens

__all__ = ["Request", "Engine", "RESERVE"]

RESERVE = ("none", "max", "request")


@dataclass
class Request:
    """A prompt (token ids) and how to answer it: up to `max_new_tokens` tokens, ending early
    after a `stop` token; `n` samples, sample i drawn with a generator seeded `seed + i`
    (`temperature`, `top_k` as in `gpt.sample_next_token`; top_k=1 is greedy)."""

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


@dataclass
class _Sequence:
    """One sample being answered: its tokens so far, how many are in the cache."""

    request_id: int
    sample: int
    tokens: list[int]
    generated: int
    generator: torch.Generator
    table: BlockTable
    cached: int = 0
    output: list[int] = field(default_factory=list)


class Engine:
    """Serves `Request`s with `model` (a GPT with rotary or no positions, in eval mode) from
    `pool` (a `BlockPool` with the model's layers, key/value heads and head width), at most
    `max_batch` sequences at a time. `add` queues a request, `step` runs one iteration,
    `run` steps until every request is answered and returns the outputs."""

    def __init__(
        self,
        model: GPT,
        pool: BlockPool,
        max_batch: int,
        reserve: str = "none",
        prefix_cache: bool = False,
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
        if not isinstance(pool, BlockPool):
            raise TypeError(f"pool must be a BlockPool, got {type(pool).__name__}")
        heads = cfg.n_kv_head or cfg.n_head
        if (pool.n_layer, pool.n_head, pool.d_head) != (
            cfg.n_layer,
            heads,
            cfg.n_embd // cfg.n_head,
        ):
            raise ValueError(
                f"the pool holds {pool.n_layer} layers of {pool.n_head} heads of width "
                f"{pool.d_head}; the model needs {cfg.n_layer}, {heads} and "
                f"{cfg.n_embd // cfg.n_head}"
            )
        if reserve not in RESERVE:
            raise ValueError(f"reserve must be one of {RESERVE}, got {reserve!r}")
        self.model, self.pool = model.eval(), pool
        self.max_batch = positive_int("max_batch", max_batch)
        self.reserve, self.prefix_cache = reserve, bool(prefix_cache)
        self.requests: list[Request] = []
        self.waiting: deque[_Sequence] = deque()
        self.running: list[_Sequence] = []
        self.outputs: dict[int, list[list[int]]] = {}
        # the tokens up to the end of a full prompt block -> the block that holds them
        self.prefix_blocks: dict[tuple[int, ...], int] = {}
        # per step: sequences running, token slots held, tokens cached; preemptions
        self.trace: list[tuple[int, int, int]] = []
        # per step: the request ids prefilled, and those decoded
        self.history: list[tuple[list[int], list[int]]] = []
        self.preemptions = 0

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
        if not all(
            isinstance(t, int) and 0 <= t < cfg.vocab_size for t in request.prompt
        ):
            raise ValueError(f"prompt ids must be ints in [0, {cfg.vocab_size})")
        rid = len(self.requests)
        self.requests.append(request)
        self.outputs[rid] = [[] for _ in range(request.n)]
        self.waiting.append(self._new_sequence(rid, 0, list(request.prompt)))
        return rid

    def _new_sequence(self, rid: int, sample: int, tokens: list[int]) -> _Sequence:
        seed = self.requests[rid].seed + sample
        generator = torch.Generator().manual_seed(seed)
        return _Sequence(rid, sample, tokens, 0, generator, BlockTable(self.pool))

    # -- the scheduler ---------------------------------------------------------------------
    def step(self) -> None:
        """Admit what fits and prefill each newcomer, then decode one token for every
        sequence that was running before, in one batched pass; free what finished."""
        decode = list(self.running)
        while (seq := self._admit()) is not None:
            logits = self._forward([seq])  # (1, vocab)
            self._register_prefix(seq)
            twins = [seq] + [self._fork(seq, i) for i in range(1, self._n(seq))]
            for twin in twins:
                self._sample(twin, logits[0])
        decode = self._make_room([s for s in decode if s in self.running])
        prefilled = [s.request_id for s in self.running if s not in decode]
        self.history.append((prefilled, [s.request_id for s in decode]))
        if decode:
            logits = self._forward(decode)  # (B, vocab)
            for seq, row in zip(decode, logits):
                self._sample(seq, row)
        self.trace.append(
            (
                len(self.running),
                self.pool.num_used * self.pool.block_size,
                sum(len(s.table) for s in self.running),
            )
        )
        for seq in [s for s in self.running if self._done(s)]:
            self.running.remove(seq)
            self.outputs[seq.request_id][seq.sample] = seq.output
            self._release(seq)

    def run(self, max_steps: int = 100_000) -> dict[int, list[list[int]]]:
        """Step until every request is answered: {request id: [tokens of each sample]}."""
        for _ in range(max_steps):
            if not self.waiting and not self.running:
                return self.outputs
            self.step()
        raise RuntimeError(f"requests still open after {max_steps} steps")

    def _n(self, seq: _Sequence) -> int:
        """Samples to fork from `seq` after its prefill: the request's n, once."""
        fresh = seq.sample == 0 and seq.generated == 0
        return self.requests[seq.request_id].n if fresh else 1

    def _admit(self) -> _Sequence | None:
        """The first waiting sequence, running, if it fits (first come, first served)."""
        if not self.waiting:
            return None
        seq, size = self.waiting[0], self.pool.block_size
        n = self._n(seq)
        if len(self.running) + n > self.max_batch:
            return None
        reused = self._lookup_prefix(seq)
        if self.reserve == "none":  # its tokens, and a copy of the last block per twin
            need = -(-len(seq.tokens) // size) - len(reused) + (n - 1)
        else:
            need = -(-self._reservation(seq) // size) - len(reused)
        if need > self.pool.num_free:
            return None
        self.waiting.popleft()
        self.pool.share(reused)
        seq.table.blocks = list(reused)
        seq.table.length = seq.cached = len(reused) * size
        if self.reserve != "none":
            seq.table.reserve(self._reservation(seq))
        self.running.append(seq)
        return seq

    def _reservation(self, seq: _Sequence) -> int:
        """Tokens a preallocating policy reserves for seq at admission."""
        request = self.requests[seq.request_id]
        if self.reserve == "max":
            return self.model.config.block_size
        return len(request.prompt) + request.max_new_tokens - 1

    def _lookup_prefix(self, seq: _Sequence) -> list[int]:
        """Live blocks that hold seq's leading full blocks of tokens, as many as match
        (leaving at least one token to compute, for its logits)."""
        if not self.prefix_cache:
            return []
        size, found = self.pool.block_size, []
        for i in range((len(seq.tokens) - 1) // size):
            block = self.prefix_blocks.get(tuple(seq.tokens[: (i + 1) * size]))
            if block is None:
                break
            found.append(block)
        return found

    def _register_prefix(self, seq: _Sequence) -> None:
        """Make seq's full prompt blocks findable by later requests (while they live)."""
        if self.prefix_cache:
            size = self.pool.block_size
            prompt = self.requests[seq.request_id].prompt
            for i in range(len(prompt) // size):
                key = tuple(prompt[: (i + 1) * size])
                self.prefix_blocks.setdefault(key, seq.table.blocks[i])

    def _release(self, seq: _Sequence) -> None:
        """Free seq's blocks; forget prefixes whose blocks went back to the pool."""
        seq.table.free()
        for key in [k for k, b in self.prefix_blocks.items() if self.pool.refs[b] == 0]:
            del self.prefix_blocks[key]

    def _fork(self, seq: _Sequence, sample: int) -> _Sequence:
        """Sample `sample` of seq's request: the same tokens and blocks (shared)."""
        twin = self._new_sequence(seq.request_id, sample, list(seq.tokens))
        twin.table, twin.cached = seq.table.fork(), seq.cached
        self.running.append(twin)
        return twin

    def _make_room(self, decode: list[_Sequence]) -> list[_Sequence]:
        """Each decoding sequence is about to write one token: into a new block, or a copy
        of a shared one, when its last is full or shared. Without a free block for it,
        preempt the newest running sequence (perhaps itself) until there is one."""
        size, claimed = self.pool.block_size, 0
        for seq in decode:
            while seq in self.running:
                i = seq.cached // size
                own = (
                    i < len(seq.table.blocks)
                    and self.pool.refs[seq.table.blocks[i]] == 1
                )
                if own or self.pool.num_free > claimed:
                    claimed += not own
                    break
                self._preempt(self.running[-1])
        return [s for s in decode if s in self.running]

    def _preempt(self, seq: _Sequence) -> None:
        """Free seq's blocks and queue it first, to be recomputed from its tokens (its
        admission sets what is cached anew)."""
        self.running.remove(seq)
        self._release(seq)
        self.waiting.appendleft(seq)
        self.preemptions += 1

    def _done(self, seq: _Sequence) -> bool:
        request = self.requests[seq.request_id]
        stopped = request.stop is not None and seq.output[-1] == request.stop
        return stopped or seq.generated == request.max_new_tokens

    def _sample(self, seq: _Sequence, logits: Tensor) -> None:
        request = self.requests[seq.request_id]
        token = int(
            sample_next_token(
                logits[None], request.temperature, request.top_k, seq.generator
            )
        )
        seq.tokens.append(token)
        seq.output.append(token)
        seq.generated += 1

    # -- the model -------------------------------------------------------------------------
    @torch.no_grad()
    def _forward(self, seqs: list[_Sequence]) -> Tensor:
        """Run each sequence's uncached tokens (all the same count: a prompt when one
        sequence is prefilled, one token each when decoding) -> next-token logits (B, vocab)."""
        model, pool = self.model, self.pool
        T = len(seqs[0].tokens) - seqs[0].cached
        new = torch.tensor([s.tokens[s.cached :] for s in seqs])  # (B, T)
        positions = torch.tensor([s.cached for s in seqs])[:, None] + torch.arange(T)
        where = [s.table.grow(T) for s in seqs]
        blocks = torch.cat([b for b, _ in where])  # (B*T,)
        slots = torch.cat([s for _, s in where])
        width = max(len(s.table.blocks) for s in seqs)
        tables = torch.tensor(  # (B, width), short rows padded with their first block
            [
                s.table.blocks + s.table.blocks[:1] * (width - len(s.table.blocks))
                for s in seqs
            ]
        )
        lengths = torch.tensor([len(s.table) for s in seqs])
        x = embed_tokens(model.tok_emb, None, new, scale=model.config.embedding_scale)
        for layer, block in enumerate(cast(list[Block], list(model.blocks))):
            attn = block.attn
            h = block.ln_1(x)  # (B, T, C)
            q = split_heads(attn.W_q(h), attn.n_head)  # (B, H, T, d)
            k = split_heads(attn.W_k(h), attn.n_kv_head)  # (B, H_kv, T, d)
            v = split_heads(attn.W_v(h), attn.n_kv_head)
            if attn.rope:
                q, k = _rotate(q, positions), _rotate(k, positions)
            # (B*T, H_kv, d): the new tokens into their slots, then read by block table
            pool.write(
                layer,
                blocks,
                slots,
                k.transpose(1, 2).flatten(0, 1),
                v.transpose(1, 2).flatten(0, 1),
            )
            heads = paged_attention(q, pool, layer, tables, lengths)  # (B, H, T, d)
            x = x + attn.W_o(merge_heads(heads))  # the rest is Block.forward's
            x = x + block.mlp(block.ln_2(x))
        for seq in seqs:
            seq.cached = len(seq.tokens)
        return model.head(model.ln_f(x[:, -1]))  # (B, vocab)


def _rotate(x: Tensor, positions: Tensor) -> Tensor:
    """RoPE on x (B, H, T, d) with each row's own positions (B, T)."""
    B, H, T, d = x.shape
    flat = x.transpose(0, 1).reshape(H, B * T, d)  # every row's tokens in one line
    return apply_rope(flat, positions.reshape(-1)).reshape(H, B, T, d).transpose(0, 1)
