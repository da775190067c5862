"""The mutations of `tools.mutations` in chapter 9's code: the block manager, the paged,
quantised, streaming and latent caches, the serving engine, blockwise attention's window."""

from __future__ import annotations

from tools.mutation_spec import Mutation

PREFIX = ("tests/test_serving_prefix.py",)

MUTATIONS = [
    # chapter 9: the block manager, the paged caches, the serving engine, blockwise
    # attention's window
    Mutation(
        "freed-table-keeps-its-blocks",
        "blocks.py",
        "self.blocks, self.length = [], 0",
        "self.length = 0",
        ("tests/test_paged.py",),
    ),
    Mutation(
        "release-frees-a-block-twice",
        "blocks.py",
        'if self.refs[b] < (n if action == "release" else 1):',
        "if self.refs[b] < 1:",
        ("tests/test_paged.py",),
    ),
    Mutation(
        "shared-block-written-without-a-copy",
        "blocks.py",
        "elif pool.refs[self.blocks[i]] > 1:",
        "elif False:",
        ("tests/test_paged.py", "tests/test_serving.py"),
    ),
    Mutation(
        "share-counts-a-duplicate-once",
        "blocks.py",
        "self.refs[b] += n",
        "self.refs[b] += 1",
        ("tests/test_serving.py", "tests/test_paged.py"),
    ),
    Mutation(
        "freed-blocks-reused-most-recent-first",
        "blocks.py",
        "block = next(iter(self.free_queue))",
        "block = next(reversed(self.free_queue))",
        ("tests/test_serving.py",),
    ),
    Mutation(
        "evicted-block-keeps-its-prefix",
        "blocks.py",
        "del self.cached[self.hash_of.pop(block)]",
        "pass",
        ("tests/test_serving.py",),
    ),
    Mutation(
        "paged-cache-counts-every-layer",
        "paged.py",
        "return self.table.nbytes // self.pool.n_layer",
        "return self.table.nbytes",
        ("tests/test_caches.py", "tests/test_paged.py"),
    ),
    Mutation(
        "ragged-batch-masked-by-the-longest",
        "paged.py",
        "return position_mask(positions, torch.arange(len(self)))[:, None]",
        "return position_mask(positions.amax(0).expand_as(positions), "
        "torch.arange(len(self)))[:, None]",
        ("tests/test_paged.py", "tests/test_serving.py"),
    ),
    Mutation(
        "window-edge-block-left-unmasked",
        "blockwise.py",
        "ks > last - window)",
        "ks >= last - window)",
        ("tests/test_blockwise.py",),
    ),
    Mutation(
        "batch-rotated-at-the-first-row-position",
        "serving.py",
        "positions = torch.tensor([s.cached for s in seqs])[:, None] + torch.arange(T)",
        "positions = seqs[0].cached + torch.arange(T).expand(len(seqs), T)",
        ("tests/test_serving.py",),
    ),
    Mutation(
        "finished-sequence-keeps-its-blocks",
        "serving.py",
        "self.outputs[seq.request_id][seq.sample] = seq.output\n            seq.table.free()",
        "self.outputs[seq.request_id][seq.sample] = seq.output",
        ("tests/test_serving.py",),
    ),
    Mutation(
        "shared-prefix-not-referenced",
        "blocks.py",
        "        self.refs[block] += 1\n        return block",
        "        return block",
        ("tests/test_serving.py",),
    ),
    Mutation(
        "prefix-hit-writes-from-position-0",
        "serving.py",
        "seq.table.length = seq.cached = start",
        "seq.cached = start",
        ("tests/test_serving.py",),
    ),
    Mutation(
        "prefix-hit-covers-the-whole-prompt",
        "serving.py",
        "for i in range((len(seq.tokens) - 1) // size):",
        "for i in range(len(seq.tokens) // size):",
        ("tests/test_serving.py",),
    ),
    Mutation(
        "preempted-sequence-queued-last",
        "serving.py",
        "self.waiting.appendleft(seq)",
        "self.waiting.append(seq)",
        ("tests/test_serving.py",),
    ),
    Mutation(
        "oldest-sequence-preempted",
        "serving.py",
        "self._preempt(self.running[-1])",
        "self._preempt(self.running[0])",
        ("tests/test_serving.py",),
    ),
    Mutation(
        "twins-admitted-without-room-for-their-copies",
        "serving.py",
        "need = -(-(start + chunk) // size) - len(found) + (n - 1)",
        "need = -(-(start + chunk) // size) - len(found)",
        ("tests/test_serving.py",),
    ),
    Mutation(
        "budget-ignored-by-newcomers",
        "serving.py",
        "chunk = min(len(seq.tokens) - start, budget)",
        "chunk = len(seq.tokens) - start",
        ("tests/test_serving.py",),
    ),
    Mutation(
        "values-quantised-inside-their-window",
        "caches.py",
        "old = values.shape[-2] - R  # values leaving the window: quantised per token",
        "old = values.shape[-2]  # values leaving the window: quantised per token",
        ("tests/test_kvquant.py",),
    ),
    Mutation(
        "keys-quantised-a-group-at-a-time-not-the-residual",
        "caches.py",
        "while recent.shape[-2] >= R:  # R keys gathered: quantise them, group by group",
        "while recent.shape[-2] >= G:  # R keys gathered: quantise them, group by group",
        ("tests/test_kvquant.py",),
    ),
    Mutation(
        "attention-output-loses-the-scaled-residual-init",
        "gpt.py",
        'name.endswith("attn.W_o.weight")',
        'name.endswith("attn.W_o.bias")',
        ("tests/test_latent.py",),
    ),
    Mutation(
        "swiglu-ignores-its-dropout",
        "layers.py",
        "        self.proj = nn.Linear(hidden, n_embd, bias=bias)  # W_down (h, C)\n"
        "        self.dropout = nn.Dropout(dropout)",
        "        self.proj = nn.Linear(hidden, n_embd, bias=bias)  # W_down (h, C)\n"
        "        self.dropout = nn.Dropout(0.0)",
        ("tests/test_layers.py",),
    ),
    Mutation(
        "revived-blocks-not-counted-at-admission",
        "serving.py",
        "if need + revived > self.pool.num_free:",
        "if need > self.pool.num_free:",
        ("tests/test_serving.py",),
    ),
    # chapter 9: the three the code review found surviving, then the key lines of the
    # quantised, streaming and latent caches
    Mutation(
        "rolling-keeps-the-sinks",
        "streaming.py",
        "StreamingCache(capacity, kept)",
        "StreamingCache(capacity, sinks)",
    ),
    Mutation(
        "latent-scale-ignores-rope",
        "latent.py",
        "math.sqrt(query.shape[-1] / (self.d_head + self.d_rope))",
        "math.sqrt(query.shape[-1] / self.d_head)",
    ),
    Mutation(
        "mask-with-cache-ignores-cache-length",
        "multihead_checks.py",
        "key.shape[1] + (0 if kv_cache is None else len(kv_cache)),",
        "key.shape[1],",
    ),
    Mutation(
        "codes-packed-last-first",
        "kvquant.py",
        "packed |= codes[..., j::per_byte] << (j * bits)",
        "packed |= codes[..., j::per_byte] << ((per_byte - 1 - j) * bits)",
    ),
    Mutation(
        "keys-per-token-in-the-channel-layout",
        "caches.py",
        "quantize_packed(group[:, :, None], self.bits, -2)",
        "quantize_packed(group[:, :, None], self.bits, -1)",
    ),
    Mutation(
        "values-per-channel",
        "caches.py",
        "new = quantize_packed(values[:, :, :old], self.bits, -1)",
        "new = quantize_packed(values[:, :, :old], self.bits, -2)",
    ),
    Mutation(
        "full-group-kept-in-the-residual",
        "caches.py",
        "while recent.shape[-2] >= R:  # R keys gathered: quantise them, group by group",
        "while recent.shape[-2] > R:  # R keys gathered: quantise them, group by group",
    ),
    Mutation(
        "fp8-cache-stores-float32",
        "caches.py",
        "k.to(torch.float8_e4m3fn), v.to(torch.float8_e4m3fn)",
        "k, v",
    ),
    Mutation(
        "streaming-evicts-the-newest",
        "caches.py",
        "torch.arange(self.sinks + excess, len(self))",
        "torch.arange(self.sinks, len(self) - excess)",
    ),
    Mutation(
        "streaming-query-one-slot-late",
        "multihead.py",
        "q = self.rotate(q, torch.arange(n - T, n, device=q.device))",
        "q = self.rotate(q, torch.arange(n - T + 1, n + 1, device=q.device))",
    ),
    Mutation(
        "reencode-sinks-drops-the-sinks",
        "streaming.py",
        "[streams[:, : min(kept, t + 1)], streams[:, recent : t + 1]], dim=1",
        "[streams[:, recent : t + 1]], dim=1",
    ),
    Mutation(
        "partial-rope-rotates-the-rest",
        "multihead.py",
        "torch.cat([apply_rope(x[..., :r], positions), x[..., r:]], dim=-1)",
        "torch.cat([x[..., :r], apply_rope(x[..., r:], positions)], dim=-1)",
    ),
    Mutation(
        "absorbed-flops-at-head-width",
        "latent.py",
        "pairs = 2 * H * T_q * T_k * (d_latent + d_rope + d_latent)",
        "pairs = 2 * H * T_q * T_k * (d_head + d_rope + d_head)",
    ),
    Mutation(
        "start-token-model-loses-its-token",
        "streaming.py",
        "vocab_size = tok.vocab_size + (start_id is not None)",
        "vocab_size = tok.vocab_size",
    ),
    # the prefix cache's chain, the batch limit and the step log (tests/test_serving_prefix.py)
    Mutation(
        "prefix-hash-not-chained",
        "blocks.py",
        "return hashlib.sha256(parent + repr(tokens).encode()).digest()",
        "return hashlib.sha256(repr(tokens).encode()).digest()",
        (*PREFIX, "tests/test_serving_properties.py"),
    ),
    Mutation(
        "full-block-cached-a-token-late",
        "serving.py",
        "while self.prefix_cache and (len(seq.keys) + 1) * size <= seq.cached:",
        "while self.prefix_cache and (len(seq.keys) + 1) * size < seq.cached:",
        PREFIX,
    ),
    Mutation(
        "batch-never-filled",
        "serving.py",
        "if sum(map(self._n, self.running)) + n > self.max_batch:",
        "if sum(map(self._n, self.running)) + n >= self.max_batch:",
        PREFIX,
    ),
    Mutation(
        "one-token-prompt-logged-as-decoding",
        "serving.py",
        "(s.request_id, n, n == 1 and bool(s.output))",
        "(s.request_id, n, n == 1)",
        PREFIX,
    ),
    Mutation(
        "duplicate-key-repoints-the-cache",
        "blocks.py",
        "if key not in self.cached and block not in self.hash_of:",
        "if block not in self.hash_of:",
        ("tests/test_blocks.py", *PREFIX),
    ),
    # the engine's attention (issue 49, item 3): rows of one length take the fused kernel
    Mutation(
        "rows-of-one-length-masked-anyway",
        "paged.py",
        "            self.uniform\n            and positions.shape in shapes",
        "            False\n            and positions.shape in shapes",
        ("tests/test_serving.py::test_rows_of_one_length_take_the_fused_kernel",),
    ),
    Mutation(
        "rows-of-one-length-read-empty-slots",
        "paged.py",
        "keys, values = keys[:, :, : self.width], values[:, :, : self.width]",
        "pass",
        ("tests/test_serving.py",),
    ),
]
