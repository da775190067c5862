"""attnbook.serving (chapter 9): the batched engine answers every request exactly as the
one-sequence cached path does, shares blocks without ever showing a sequence another's keys,
and holds memory by its policy; attnbook.roofline's decode-step costs."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from attnbook import attention
from attnbook.gpt import GPT, GPTConfig
from attnbook.multihead import KVCache
from attnbook.blocks import BlockPool, BlockTable
from attnbook.paged import gather_blocks
from attnbook.roofline import decode_step_cost
from attnbook.serving import Engine, Request

pytestmark = pytest.mark.usefixtures("one_thread")

VOCAB, CONTEXT = 13, 40


@pytest.fixture(scope="module")
def model() -> GPT:
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
    return GPT(config).double().eval()


def pool(blocks: int, size: int = 4) -> BlockPool:
    return BlockPool(blocks, size, 2, 4, n_layer=2, dtype=torch.float64)


def requests() -> list[Request]:
    """Prompts of 1 to 17 tokens, a common 9-token start on three, answers of 3 to 20
    tokens, some ended early by token 0, two with parallel samples; sampled at T = 1."""
    g = torch.Generator().manual_seed(1)
    common = torch.randint(1, VOCAB, (9,), generator=g).tolist()
    out = []
    for i, n_prompt in enumerate([5, 1, 17, 12, 3, 9, 14, 7]):
        prompt = torch.randint(1, VOCAB, (n_prompt,), generator=g).tolist()
        if i in (3, 5, 6):
            prompt = common + prompt[: n_prompt - 9]
        out.append(
            Request(
                prompt,
                max_new_tokens=3 + (7 * i) % 18,
                stop=0 if i % 3 == 1 else None,
                n=3 if i in (2, 5) else 1,
                seed=10 * i,
            )
        )
    return out


def generate(model: GPT, request: Request) -> list[list[int]]:
    """Each sample as GPT.generate with its KV caches writes it, cut after the stop token."""
    outs = []
    for i in range(request.n):
        g = torch.Generator().manual_seed(request.seed + i)
        ids = model.generate(
            torch.tensor([request.prompt]),
            request.max_new_tokens,
            request.temperature,
            request.top_k,
            generator=g,
        )[0, len(request.prompt) :].tolist()
        if request.stop in ids:
            ids = ids[: ids.index(request.stop) + 1]
        outs.append(ids)
    return outs


@pytest.mark.parametrize(
    "blocks, max_batch, prefix_cache",
    [(200, 16, False), (200, 4, True), (11, 16, True)],
    ids=["roomy", "batch-4", "tight-pool-preempts"],
)
def test_the_engine_answers_as_generate_does(
    model: GPT, blocks: int, max_batch: int, prefix_cache: bool
) -> None:
    """Token for token, every sample of every request (float64: no near-tie can flip)."""
    engine = Engine(model, pool(blocks), max_batch, prefix_cache=prefix_cache)
    for request in requests():
        engine.add(request)
    outputs = engine.run()
    for rid, request in enumerate(requests()):
        assert outputs[rid] == generate(model, request), f"request {rid}"
    assert engine.pool.num_free == blocks
    assert max(running for running, _, _ in engine.stats.trace) <= max_batch
    assert (engine.stats.preemptions > 0) == (blocks == 11)


def test_the_engine_serves_without_dropout_and_leaves_the_callers_mode(
    model: GPT,
) -> None:
    """A model handed over in training mode, with dropout: served as in eval mode (the
    answers of `generate` there), and in training mode again after every pass."""
    torch.manual_seed(0)
    dropping = GPT(replace(model.config, dropout=0.5)).double()
    dropping.load_state_dict(model.state_dict())
    engine = Engine(dropping.train(), pool(200), 16)
    request = requests()[2]  # 17 prompt tokens, 3 samples
    engine.add(request)
    outputs = engine.run()
    assert dropping.training and all(m.training for m in dropping.modules())
    assert outputs[0] == generate(dropping.eval(), request)


def test_the_stats_say_when_each_request_arrived_and_got_each_token(model: GPT) -> None:
    """Requests added one per step, a roomy pool and no budget: each prompt is read and its
    first token sampled in the step it arrived in, then one token per step (every sample of
    request 2's three); the engine's `history`, `trace`, `scheduled` are its stats'."""
    engine, reqs = Engine(model, pool(200), 16), requests()[:3]
    for request in reqs:
        engine.add(request)
        engine.step()
    outputs, stats = engine.run(), engine.stats
    assert stats.arrivals == [0, 1, 2]
    for rid in range(3):
        for sample, steps in enumerate(stats.token_steps[rid]):
            assert steps == list(range(rid, rid + len(outputs[rid][sample])))
    assert len(stats.history) == len(stats.scheduled) == len(stats.trace)
    # step s: request s's prompt, one token of each earlier request still running
    for s in range(3):
        decoding = sum(s in stats.token_steps[r][0] for r in range(s))
        assert stats.scheduled[s] == len(reqs[s].prompt) + decoding


def own_keys(model: GPT, tokens: list[int]) -> list[torch.Tensor]:
    """Each layer's keys of `tokens`, computed alone with the contiguous cache."""
    caches = [KVCache() for _ in model.blocks]
    with torch.no_grad():
        model(torch.tensor([tokens]), kv_caches=caches)
    return [c.k[0] for c in caches]  # (H_kv, T, d) each


@pytest.mark.parametrize("prefix_cache", [False, True])
def test_no_sequence_ever_reads_another_sequences_keys(
    model: GPT, prefix_cache: bool
) -> None:
    """After every step, what each running sequence's block table leads to (its first
    `cached` slots, every layer) is the keys of its own tokens, computed alone."""
    engine = Engine(model, pool(16), 6, prefix_cache=prefix_cache)
    for request in requests():
        engine.add(request)
    checked = 0
    while engine.waiting or engine.running:
        engine.step()
        for seq in engine.running:
            n = seq.cached
            want = own_keys(model, seq.tokens[:n])
            table = seq.table.tensor()[None]
            for layer in range(2):
                got = gather_blocks(engine.pool.k[layer], table)[0, :, :n]
                torch.testing.assert_close(got, want[layer])
            checked += 1
    assert checked > 100


def test_a_shared_prompt_is_held_once_and_samples_share_it(model: GPT) -> None:
    """Three requests with one 12-token start (3 blocks of 4) and a request of 4 samples:
    the prefix cache and the forks hold shared blocks once, with their reference counts."""
    common = list(range(1, 13))
    engine = Engine(model, pool(60), 8, prefix_cache=True)
    engine.add(Request(common + [1, 2], 6, seed=0))
    engine.add(Request([3, 4, 5, 6, 7, 8], 6, n=4, seed=9))
    engine.step()  # both prefilled: the first's three full blocks are cached
    first = list(engine.running[0].table.blocks)
    samples = [s.table.blocks for s in engine.running[1:]]
    assert len(samples) == 4 and all(t == samples[0] for t in samples)
    assert [engine.pool.refs[b] for b in samples[0]] == [4, 4]
    assert engine.pool.num_used == 4 + 2
    for i in (1, 2):
        engine.add(Request(common + [i + 1, 2], 6, seed=i))
    engine.step()  # the newcomers find the common blocks; the samples copy their last
    tables = [s.table.blocks for s in engine.running]
    assert tables[0][:3] == first[:3] == tables[5][:3] == tables[6][:3]
    assert [engine.pool.refs[b] for b in first[:3]] == [3, 3, 3]
    samples = [s.table.blocks for s in engine.running[1:5]]
    assert len({t[0] for t in samples}) == 1 and len({t[1] for t in samples}) == 4
    alone = 3 * 4 + 4 * 2  # blocks the sequences would hold each for itself
    assert engine.pool.num_used == 4 + 1 + 4 + 2 < alone
    engine.run()
    assert engine.pool.num_free == 60


def test_a_prefix_outlives_its_holders(model: GPT) -> None:
    """A finished request's full blocks stay cached in the free queue: the same prompt
    sent afterwards reuses them (at least one token is left to compute, so a prompt of
    whole blocks finds all but its last), and answers as generate does."""
    engine = Engine(model, pool(30), 4, prefix_cache=True)
    prompt = list(range(1, 9))  # two whole blocks
    first = Request(prompt + [9, 10, 11], 5, seed=3)
    engine.add(first)
    engine.step()
    held = list(engine.running[0].table.blocks[:2])
    engine.run()
    assert engine.pool.num_free == 30 and engine.stats.blocks_found == 0
    again = [Request(prompt + [9, 10, 11], 5, seed=4), Request(prompt, 4, seed=5)]
    for request in again:
        engine.add(request)
    engine.step()
    tables = [s.table.blocks for s in engine.running]
    assert tables[0][:2] == held and tables[1][0] == held[0] != tables[1][1]
    assert engine.stats.blocks_found == 3 and engine.stats.blocks_looked_up == 2 + 3
    outputs = engine.run()
    for rid, request in enumerate([first, *again]):
        assert outputs[rid] == generate(model, request)


def test_cached_blocks_are_evicted_least_recently_freed_first() -> None:
    """A freed table's blocks join the free queue last block first; new blocks come from
    the front, and taking a block out of the queue for something else forgets its key."""
    blocks = pool(5)
    table = BlockTable(blocks)
    table.grow(12)  # blocks 0, 1, 2
    for b, key in zip(table.blocks, (b"a", b"b", b"c")):
        blocks.cache_block(b, key)
    other = blocks.allocate()  # block 3
    table.free()
    blocks.release([other])
    assert list(blocks.free_queue) == [4, 2, 1, 0, 3]
    assert blocks.allocate() == 4 and set(blocks.cached) == {b"a", b"b", b"c"}
    assert blocks.allocate() == 2 and set(blocks.cached) == {b"a", b"b"}  # evicted
    assert blocks.take_cached(b"a") == 0 and blocks.refs[0] == 1
    assert list(blocks.free_queue) == [1, 3]  # a taken block leaves the queue
    assert blocks.allocate() == 1 and set(blocks.cached) == {b"a"}
    with pytest.raises(KeyError):
        blocks.take_cached(b"b")


def test_shared_references_count_duplicates() -> None:
    """share([b, b]) adds two references: the block stays in use until three releases."""
    blocks = pool(3)
    b = blocks.allocate()
    blocks.share([b, b])
    assert blocks.refs[b] == 3
    blocks.release([b])
    blocks.release([b])
    assert blocks.num_free == 2
    blocks.release([b])
    assert blocks.num_free == 3


@pytest.mark.parametrize(
    "blocks, budget, chunked",
    [(200, 5, True), (200, CONTEXT, False), (11, 4, True)],
    ids=["chunks-of-5", "unchunked", "chunks-of-4-tight-pool"],
)
def test_a_token_budget_splits_prompts_and_changes_no_answer(
    model: GPT, blocks: int, budget: int, chunked: bool
) -> None:
    """Each step computes at most `token_budget` tokens, decodes first; long prompts are read
    in chunks over several steps (or wait for a step with room, unchunked); every answer is
    still generate's, token for token."""
    engine = Engine(
        model, pool(blocks), 16, prefix_cache=True, token_budget=budget, chunked=chunked
    )
    for request in requests():
        engine.add(request)
    outputs = engine.run()
    for rid, request in enumerate(requests()):
        assert outputs[rid] == generate(model, request), f"request {rid}"
    assert engine.pool.num_free == blocks and max(engine.stats.scheduled) <= budget
    split = max(len([1 for reading, _ in engine.stats.history if 2 in reading]), 0)
    assert (split > 1) == chunked  # request 2's 17-token prompt: in chunks, or whole


def test_a_preempted_sequence_is_the_newest_and_goes_first_in_the_queue(
    model: GPT,
) -> None:
    """When the pool runs dry, the newest running sequence is preempted and queued ahead of
    the requests still waiting (so that it is readmitted first)."""
    engine = Engine(model, pool(8), 4)
    for i in range(6):
        engine.add(Request([1 + i, 2, 3, 4, 5], 12, seed=i))
    seen = 0
    while engine.waiting or engine.running:
        before = [s.request_id for s in engine.running]
        engine.step()
        k, seen = engine.stats.preemptions - seen, engine.stats.preemptions
        if k:  # the k newest, in their order, ahead of the rest
            assert [s.request_id for s in list(engine.waiting)[:k]] == before[-k:]
            assert len(engine.waiting) > k
    assert seen > 0


def test_parallel_samples_are_admitted_with_room_for_their_copies(model: GPT) -> None:
    """A request of n samples needs its prompt's blocks and one copy of the last per extra
    sample: with one block too few it waits for the running request to finish."""
    engine = Engine(model, pool(6), 8)
    engine.add(Request(list(range(1, 10)), 2, seed=0))  # 3 blocks
    engine.add(Request([1, 2, 3, 4, 5, 6], 3, n=3, seed=1))  # 2 blocks + 2 copies
    engine.step()
    assert [s.request_id for s in engine.waiting] == [1]
    outputs = engine.run()
    assert outputs[1] == generate(model, engine.requests[1])
    assert engine.stats.preemptions == 0


@pytest.mark.parametrize(
    "positions, rope_dims", [("rope", None), ("rope", 2), ("none", None)]
)
def test_every_multi_head_model_is_served_exactly(
    positions: str, rope_dims: int | None
) -> None:
    """Full and partial rotary positions and none, grouped-query heads, RMSNorm/SwiGLU
    blocks: the engine runs the model's own blocks, so each answers as generate does."""
    torch.manual_seed(1)
    config = GPTConfig(
        VOCAB, CONTEXT, 2, 4, 16, n_kv_head=2, positions=positions, rope_dims=rope_dims
    )
    if positions == "rope" and rope_dims is None:
        config = GPTConfig(VOCAB, CONTEXT, 2, 4, 16, positions=positions, mlp="swiglu")
    built = GPT(config)
    for p in built.parameters():  # large weights: a wrong position shows in every token
        p.data.mul_(8)
    served = built.double().eval()
    heads = config.n_kv_head or config.n_head
    engine = Engine(served, BlockPool(40, 4, heads, 4, 2, torch.float64), 8)
    reqs = requests()[:5]
    for request in reqs:
        engine.add(request)
    outputs = engine.run()
    assert outputs == {rid: generate(served, r) for rid, r in enumerate(reqs)}


def test_rows_of_one_length_take_the_fused_kernel(
    model: GPT, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One sequence, or the samples of one prompt, need no mask: every step of theirs runs
    PyTorch's fused attention (the explicit path, which materialises the weights, never
    runs); rows of different lengths in one step keep their mask and the explicit path.
    Either way the answers are generate's."""
    explicit = []
    original = attention._explicit

    def counted(*args: object) -> object:
        explicit.append(args[3] is not None)  # (q, k, v, mask, ...): a mask came
        return original(*args)

    monkeypatch.setattr(attention, "_explicit", counted)
    alone = [Request([3, 1, 4, 1, 5, 9, 2], 6, seed=4), Request([2, 7], 5, n=3, seed=1)]
    for request in alone:  # one at a time: every step's rows share one length
        engine = Engine(model, pool(30), 8)
        engine.add(request)
        assert engine.run() == {0: generate(model, request)}
    assert explicit == []
    engine = Engine(model, pool(30), 8)
    # together: a decode step holds rows of 8, 3, 3 and 3 tokens, then 9, 4, 4, 4...
    for request in alone:
        engine.add(request)
    assert engine.run() == {i: generate(model, r) for i, r in enumerate(alone)}
    assert explicit and all(explicit)


def test_latent_attention_is_refused_before_anything_runs() -> None:
    """The engine reads the model's kind from its config, not from its classes."""
    mla = dict(positions="rope", attention="mla", d_latent=8, rope_dims=4)
    config = GPTConfig(VOCAB, CONTEXT, 2, 4, 16, **mla)
    with pytest.raises(ValueError, match="attention='mla'.*caches latents"):
        Engine(GPT(config), BlockPool(8, 4, 4, 4, 2), 4)


def test_preallocation_holds_memory_it_does_not_use(model: GPT) -> None:
    """reserve='max' holds the model's context per sequence, 'request' its prompt + answer,
    'none' only the blocks its tokens fill; with a fixed pool fewer run at once."""
    reqs = [Request([1 + i % 5] * 3, 8, seed=i) for i in range(6)]
    in_flight = {}
    for reserve in ("max", "request", "none"):
        engine = Engine(model, pool(20), 16, reserve=reserve)
        for r in reqs:
            engine.add(r)
        engine.step()
        running, held, cached = engine.stats.trace[0]
        per_seq = {"max": CONTEXT, "request": 12, "none": 4}[reserve]
        assert held == running * per_seq and cached == running * 3
        outputs = engine.run()
        assert outputs == {i: generate(model, r) for i, r in enumerate(reqs)}
        in_flight[reserve] = running
    assert in_flight == {"max": 2, "request": 6, "none": 6}


def test_decode_step_cost_counts_bytes_and_flops() -> None:
    mha = decode_step_cost("MHA", 2, 4, 8, context=10, batch=3, bytes_per_number=2)
    assert mha["cache_bytes"] == 3 * 10 * 2 * (2 * 4 * 8) * 2
    assert mha["attention_flops"] == 3 * 10 * 2 * 4 * (4 * 8)
    assert mha["attention_intensity"] == 1.0  # fp16 MHA decode: one FLOP per byte
    gqa = decode_step_cost("GQA", 2, 4, 8, 10, 3, n_kv_head=1, bytes_per_number=2)
    assert gqa["attention_intensity"] == 4.0  # 4 query heads per cached head
    mla = decode_step_cost(
        "MLA", 60, 128, 128, 100, d_latent=512, d_rope=64, bytes_per_number=2
    )
    assert mla["cache_bytes"] == 100 * 60 * 576 * 2
    assert mla["attention_intensity"] == pytest.approx(128 * (2 * 576 + 1024) / 1152)
    weights = decode_step_cost("MHA", 2, 4, 8, 10, batch=5, n_params=1000)
    assert weights["weight_bytes"] == 2000 and weights["weight_flops"] == 10_000
    assert weights["intensity"] == pytest.approx(
        (weights["attention_flops"] + 10_000) / (weights["cache_bytes"] + 2000)
    )
