"""The mutations of `tools.mutations` in the teaching code: attention, the views, the blocks
around attention (chapters 1-8), the training loop and the device code."""

from __future__ import annotations

from tools.mutation_spec import Mutation

MUTATIONS = [
    # the four the code review found surviving the whole unit suite
    Mutation(
        "alibi-drops-padding-mask",
        "multihead.py",
        "            mask,\n            is_causal=is_causal,",
        "            None if self.alibi else mask,\n            is_causal=is_causal,",
    ),
    Mutation(
        "sqrt-c-scaling-removed",
        "config.py",
        "return math.sqrt(self.n_embd) if scale else None",
        "return None",
    ),
    Mutation(
        "residual-projection-init-removed",
        "gpt.py",
        "nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))",
        "pass",
    ),
    Mutation(
        "weight-decay-on-layernorm-and-biases",
        "train.py",
        '"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}',
        '"params": [p for p in params if p.dim() < 2], "weight_decay": cfg.weight_decay}',
    ),
    # the four the review's tests already caught
    Mutation("causal-band-top-left", "masks.py", ".tril(T_k - T)", ".tril()"),
    Mutation(
        "warm-up-off-by-one",
        "train.py",
        "cfg.learning_rate * (it + 1) / cfg.warmup_iters",
        "cfg.learning_rate * it / cfg.warmup_iters",
    ),
    Mutation(
        "classifier-ignores-padding",
        "cars/models.py",
        "block(x, key_mask=key_mask)",
        "block(x, key_mask=None)",
    ),
    Mutation(
        "ngram-backoff-weight-dropped",
        "ngram.py",
        "discount * u_h * p) / safe",
        "discount * p) / safe",
    ),
    # the attention view: its defaults (the code review's E1, E2) and its own picture
    Mutation(
        "view-opens-on-the-first-query",
        "explore.py",
        "query = n_q - 1 if query is None else query",
        "query = 0 if query is None else query",
        ("tests/test_explore_picture.py",),
    ),
    Mutation(
        "view-breaks-lines-between-words",
        "explore.py",
        'if token == "\\n" and not self._spaced(tokens):',
        'if token == "\\n":',
        ("tests/test_explore_picture.py",),
    ),
    Mutation(
        "view-live-part-not-hidden",
        "explore.py",
        '<div class="attnx-live" hidden="hidden">',
        '<div class="attnx-live">',
        ("tests/test_explore_picture.py",),
    ),
    Mutation(
        "view-without-its-picture",
        "explore.py",
        'f\'<img class="attnx-picture" src="{uri}" alt="{alt}" \'',
        'f\'<img class="attnx-picture" alt="{alt}" \'',
        ("tests/test_explore_picture.py",),
    ),
    Mutation(
        "view-script-keeps-the-picture",
        "data/explore.js",
        "if (picture) { picture.remove(); }",
        "",
        ("tests/test_explore_picture.py",),
    ),
    Mutation(
        "view-keeps-per-layer-lines-everywhere",
        "explore.py",
        'js = _PER_LAYER.sub("", js)',
        "js = js",
        ("tests/test_explore.py",),
    ),
    Mutation(
        "view-opens-on-the-first-sequence",
        "explore.py",
        "self.tokens = self.layer_tokens[layer]",
        "self.tokens = self.layer_tokens[0]",
        ("tests/test_explore.py",),
    ),
    Mutation(
        "view-map-labels-the-first-sequence",
        "explore_labels.py",
        "f\"{labels('q', n_q, query_lists[opening])}</div>\"",
        "f\"{labels('q', n_q, query_lists[0])}</div>\"",
        ("tests/test_explore.py",),
    ),
    Mutation(
        "view-map-labels-too-dense",
        "explore_labels.py",
        "return next(k for k in STEPS if k * pitch >= LINE)",
        "return next(k for k in STEPS if k * pitch >= FONT)",
        ("tests/test_explore.py",),
    ),
    # more
    Mutation(
        "scores-not-scaled",
        "attention.py",
        "q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])",
        "q @ k.transpose(-2, -1)",
    ),
    Mutation(
        "all-masked-row-guard-removed",
        "attention.py",
        "scores = scores.masked_fill(~has_key, 0.0)",
        "scores = scores",
    ),
    Mutation(
        "kv-heads-interleaved",
        "attention.py",
        "expanded = x[:, :, None].expand(B, H_kv, n_rep, T, d)",
        "expanded = x[:, None].expand(B, n_rep, H_kv, T, d)",
    ),
    Mutation(
        "rope-ignores-cache-offset",
        "multihead.py",
        "seen = 0 if kv_cache is None else len(kv_cache)",
        "seen = 0",
    ),
    Mutation(
        "cache-appends-in-front",
        "caches.py",
        "torch.cat([self.k, k], dim=-2)",
        "torch.cat([k, self.k], dim=-2)",
    ),
    Mutation(
        "attention-dropout-in-eval",
        "multihead.py",
        "dropout_p=self.dropout if self.training else 0.0",
        "dropout_p=self.dropout",
    ),
    Mutation(
        "weights-not-tied", "gpt.py", "self.head.weight = self.tok_emb.weight", "pass"
    ),
    Mutation(  # every block's attention would materialise its weights, hooks or not
        "block-attention-always-explicit",
        "gpt.py",
        "need_weights=False,",
        "need_weights=True,",
        ("tests/test_serving.py",),
    ),
    Mutation(
        "mlp-skips-its-layernorm",
        "gpt.py",
        "x = x + self.mlp(self.ln_2(x))",
        "x = x + self.mlp(x)",
    ),
    Mutation("no-gradient-clipping", "train.py", "if cfg.grad_clip:", "if False:"),
    Mutation(
        "masked-mean-divides-by-T",
        "cars/models.py",
        "real.sum(dim=1).clamp(min=1).to(x.dtype)",
        "x.shape[1]",
    ),
    Mutation(
        "sinusoidal-ignores-offset",
        "positional.py",
        "self.pe[offset : offset + T]",
        "self.pe[:T]",
    ),
    Mutation(
        "alibi-slopes-of-the-wrong-half",
        "positional.py",
        "powers(2 * P)[0::2]",
        "powers(2 * P)[1::2]",
    ),
    Mutation(
        "lookup-head-blind-to-letters",
        "lookup.py",
        "x = self.letter(letter) + self.slot(slot)",
        "x = self.slot(slot)",
    ),
    Mutation(
        "reversal-target-not-reversed",
        "cross.py",
        "target = source.flip(-1)  # target[:, t]",
        "target = source  # target[:, t]",
        ("tests/test_cross.py",),
    ),
    Mutation(
        "additive-score-without-tanh",
        "cross.py",
        "hidden = torch.tanh(self.W_a(q).unsqueeze(-2) + self.U_a(k).unsqueeze(-3))",
        "hidden = self.W_a(q).unsqueeze(-2) + self.U_a(k).unsqueeze(-3)",
        ("tests/test_cross.py",),
    ),
    Mutation(
        "scores-hook-ignores-the-mask",
        "attention.py",
        "return _weigh(scores, v, mask, 0.0, guard=True)",
        "return _weigh(scores, v, None, 0.0, guard=True)",
        ("tests/test_cross.py",),
    ),
    # chapter 8: RMSNorm and SwiGLU
    Mutation(
        "rmsnorm-divides-by-the-mean-not-the-rms",
        "layers.py",
        "inv_rms = torch.rsqrt(x32.pow(2).mean(dim=-1, keepdim=True) + self.eps)",
        "inv_rms = torch.rsqrt(x32.mean(dim=-1, keepdim=True).abs() + self.eps)",
        ("tests/test_layers.py",),
    ),
    Mutation(
        "swiglu-gates-the-wrong-branch",
        "layers.py",
        "hidden = F.silu(self.gate(x)) * self.up(x)  # (..., h)",
        "hidden = self.gate(x) * F.silu(self.up(x))  # (..., h)",
        ("tests/test_layers.py",),
    ),
    # the training loop's bookkeeping and device code (the code review's survivors)
    Mutation(
        "fp16-clips-scaled-gradients",
        "device.py",
        "self.scaler.unscale_(optimizer)",
        "pass",
        ("tests/test_device.py",),
    ),
    Mutation(
        "training-time-keeps-the-last-segment",
        "train_log.py",
        "self.result.train_seconds += time.perf_counter() - self.since",
        "self.result.train_seconds = time.perf_counter() - self.since",
        ("tests/test_train.py",),
    ),
    Mutation(
        "time-budget-forgets-earlier-segments",
        "train_log.py",
        "elapsed = result.train_seconds + time.perf_counter()",
        "elapsed = time.perf_counter()",
        ("tests/test_train.py",),
    ),
    Mutation(
        "tokens-per-second-counts-windows",
        "train.py",
        "result.iters * cfg.batch_size * block_size /",
        "result.iters * cfg.batch_size /",
        ("tests/test_train.py",),
    ),
    Mutation(
        "steps-in-the-mode-the-model-came-in",
        "train.py",
        "    model.train()\n",
        "",
        ("tests/test_train.py",),
    ),
    Mutation(
        "evaluations-in-training-mode",
        "train_log.py",
        "with evaluating(self.model):",
        "if True:",
        ("tests/test_train.py",),
    ),
    Mutation(
        "attend-copies-shared-heads",
        "attention.py",
        "    gqa = n_rep > 1\n",
        "    k, v, gqa = repeat_kv(k, n_rep), repeat_kv(v, n_rep), False\n",
        ("tests/test_attend.py",),
    ),
    # the code review's (round 7) survivors G7 and C7
    Mutation(
        "residual-dropout-after-attention-removed",
        "gpt.py",
        "x = x + self.dropout(a)",
        "x = x + a",
        ("tests/test_gpt.py",),
    ),
    Mutation(  # the review's F1: a latent model's generate built plain caches
        "generate-builds-plain-caches",
        "gpt.py",
        "                    caches = self.new_caches()",
        "                    caches = [KVCache() for _ in self.blocks]",
        ("tests/test_gpt_config.py",),
    ),
    Mutation(
        "mla-config-takes-kv-heads",
        "config.py",
        "        if self.n_kv_head is not None:\n            raise",
        "        if False:\n            raise",
        ("tests/test_bad_inputs_ch9.py",),
    ),
]
