"""attnbook.serving and attnbook.blocks (chapter 9) under random workloads: shared prefixes,
duplicate prompts, the same block after a different head, tight pools, token budgets, chunked
and whole prefills, varied n / stop / max_new_tokens, requests arriving while others run.

After every engine step the pool must be consistent (each block's reference count equals the
number of running tables holding it, the free queue holds exactly the unreferenced blocks, the
prefix index and its inverse agree) and the batch holds at most max_batch samples; at the end
every block is free again, and every request's samples equal `GPT.generate`'s token for token.

A seeded loop rather than Hypothesis: one workload costs about a second, so the suite runs a
fixed handful of seeds (a failure names its seed); `ATTNBOOK_SERVING_WORKLOADS=N` runs N.
"""

from __future__ import annotations

import os
import random
from collections import Counter

import pytest
import torch

from attnbook.blocks import BlockPool
from attnbook.gpt import GPT, GPTConfig
from attnbook.serving import Engine, Request

pytestmark = pytest.mark.usefixtures("one_thread")

VOCAB, CONTEXT = 11, 32
WORKLOADS = int(os.environ.get("ATTNBOOK_SERVING_WORKLOADS", "6"))


@pytest.fixture(scope="module")
def model() -> GPT:
    """Two layers, grouped-query heads, rotary positions, float64; parameters scaled by 8 so
    that attention is sharp and a key computed after other tokens changes the samples."""
    torch.manual_seed(0)
    config = GPTConfig(
        vocab_size=VOCAB,
        block_size=CONTEXT,
        n_layer=2,
        n_head=4,
        n_embd=16,
        n_kv_head=2,
        positions="rope",
    )
    gpt = GPT(config).double().eval()
    with torch.no_grad():
        for p in gpt.parameters():
            p.mul_(8)
    return gpt


def reference(model: GPT, request: Request) -> list[list[int]]:
    """The request's n samples as GPT.generate writes them (sample i seeded seed + i), each cut
    after its first stop token."""
    samples = []
    for i in range(request.n):
        g = torch.Generator().manual_seed(request.seed + i)
        ids = model.generate(
            torch.tensor([request.prompt]),
            request.max_new_tokens,
            request.temperature,
            request.top_k,
            generator=g,
        )[0, len(request.prompt) :].tolist()
        if request.stop is not None and request.stop in ids:
            ids = ids[: ids.index(request.stop) + 1]
        samples.append(ids)
    return samples


def check_pool(engine: Engine) -> None:
    """The pool's invariants between two steps."""
    pool = engine.pool
    held = Counter(b for s in engine.running for b in s.table.blocks)
    for b in range(pool.num_blocks):
        assert pool.refs[b] == held.get(b, 0), (
            f"block {b}: refs {pool.refs[b]}, held {held.get(b, 0)}"
        )
    unreferenced = {b for b in range(pool.num_blocks) if pool.refs[b] == 0}
    assert set(pool.free_queue) == unreferenced
    assert len(pool.cached) == len(pool.hash_of)
    for key, b in pool.cached.items():
        assert pool.hash_of[b] == key


def random_prompt(
    rng: random.Random, heads: list[list[int]], earlier: list[Request], size: int
) -> list[int]:
    """A prompt that often shares tokens with an earlier one: a duplicate, a shared head, or an
    earlier prompt whose first block is replaced (its later blocks then follow another head)."""
    kind = rng.random()
    if kind < 0.2 and earlier:
        return list(rng.choice(earlier).prompt)
    if kind < 0.4 and earlier:
        other = list(rng.choice(earlier).prompt)
        if len(other) >= 2 * size:
            return [rng.randrange(1, VOCAB) for _ in range(size)] + other[size:]
    head = list(rng.choice(heads)) if kind < 0.75 else []
    tail = [rng.randrange(1, VOCAB) for _ in range(rng.randrange(0, 8))]
    return (head + tail)[:20] or [1]


def workload(rng: random.Random) -> tuple[int, list[Request]]:
    size = rng.choice([1, 2, 3, 4])
    heads = [
        [rng.randrange(1, VOCAB) for _ in range(rng.randrange(1, 10))] for _ in range(3)
    ]
    requests: list[Request] = []
    for _ in range(rng.randrange(3, 9)):
        prompt = random_prompt(rng, heads, requests, size)
        room = CONTEXT + 1 - len(prompt)
        requests.append(
            Request(
                prompt,
                max_new_tokens=rng.randrange(1, min(12, room) + 1),
                stop=rng.choice([None, None, 0, 3]),
                n=rng.choice([1, 1, 1, 2, 3]),
                temperature=rng.choice([1.0, 0.7]),
                top_k=rng.choice([None, 4]),
                seed=rng.randrange(1000),
            )
        )
    return size, requests


@pytest.mark.parametrize("seed", range(WORKLOADS))
def test_random_workload_keeps_the_pool_consistent_and_matches_generate(
    model: GPT, seed: int
) -> None:
    rng = random.Random(seed)
    size, requests = workload(rng)
    # the longest sequence's blocks: the tightest pool that can still serve it alone
    need = max(-(-(len(r.prompt) + r.max_new_tokens - 1) // size) for r in requests)
    blocks = rng.choice([need, need + 1, need + 3, 4 * need])
    max_batch = rng.choice([3, 4, 8])
    requests = [r for r in requests if r.n <= max_batch]
    chunked = rng.random() < 0.7
    budget = rng.choice([None, 3, 5, 16])
    if (
        not chunked and budget is not None
    ):  # a whole prefill must fit in one step's budget
        budget = max(
            budget, max(len(r.prompt) + r.max_new_tokens - 1 for r in requests)
        )
    pool = BlockPool(blocks, size, 2, 4, n_layer=2, dtype=torch.float64)
    engine = Engine(
        model,
        pool,
        max_batch,
        prefix_cache=rng.random() < 0.8,
        token_budget=budget,
        chunked=chunked,
    )

    pending, ids = list(requests), []
    steps = 0
    while pending or engine.waiting or engine.running:
        while pending and (
            rng.random() < 0.5 or not (engine.waiting or engine.running)
        ):
            ids.append(engine.add(pending.pop(0)))
        engine.step()
        check_pool(engine)
        assert len(engine.running) <= max_batch  # samples, forked twins included
        steps += 1
        assert steps < 2000, "the engine stopped making progress"

    assert pool.num_free == blocks
    for rid, request in zip(ids, requests, strict=True):
        assert engine.outputs[rid] == reference(model, request), (
            f"request {rid}: {request}"
        )
