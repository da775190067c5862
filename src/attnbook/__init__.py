"""attnbook: the code behind the course *Understanding Attention*.

Each module is derived step by step in one chapter of the book and then imported by every
later chapter and by the exercises' tests:

- ``attnbook.attention``   chapter 1: scaled dot-product attention, a self-attention layer,
                           row entropy of attention weights; ``attend``, the one softmax
                           attention that every later chapter's layers call (its input
                           checks: ``attention_checks``)
- ``attnbook.lookup``      chapter 1: a lookup-table task and one head trained on it
- ``attnbook.cross``       chapter 1: additive (Bahdanau) scores; cross-attention trained
                           to reverse a sequence
- ``attnbook.plot``        every chapter: attention heatmaps with token labels
- ``attnbook.notebook``    every chapter: verdicts against a tolerance, deliberate errors, glue
- ``attnbook.explore``     chapters 1, 3, 6, 7, 9, 10: interactive attention views in the
                           page (``explore_inputs``: what it accepts; ``explore_labels``:
                           its axis labels; ``explore_picture``: its picture)
- ``attnbook.blockwise``   chapter 2: exact attention over key blocks with an online softmax
- ``attnbook.timing``      chapters 2, 8, 11: the best of a few timings, growth rates
- ``attnbook.multihead``   chapter 3: multi-head attention, split/merge heads (its input
                           checks: ``multihead_checks``)
- ``attnbook.multihead_weights``  chapter 3: the fused input projection, torch's layout
- ``attnbook.marked_pairs``  chapter 3: two marked letters, two questions for two heads
- ``attnbook.masks``       chapters 4, 8, 9: causal and padding masks, additive-mask
                           conversions; sliding-window and position masks (8, 9)
- ``attnbook.positional``  chapters 5, 8: sinusoidal, learned and rotary position
                           information; ALiBi's distance penalty (8)
- ``attnbook.config``      chapters 6-9: ``GPTConfig``, every model the tiny GPT's blocks
                           build (positions, grouped heads, partial RoPE, latent attention)
- ``attnbook.gpt``         chapter 6: the transformer block, a tiny GPT, KV cache; its
                           sampler (temperature, top-k, top-p) is in ``sampling``
- ``attnbook.layers``      chapters 6, 8: GPT-2's MLP, RMSNorm and SwiGLU
- ``attnbook.text``        chapter 6: corpora (Tiny Shakespeare as shipped, Python source), tokenizer
- ``attnbook.bpe``         chapter 6: a small byte-pair encoding against the characters
- ``attnbook.device``      chapter 6: CPU, CUDA or MPS, and moving batches there
- ``attnbook.data``        chapters 2, 3, 6-11: the shipped corpus, benchmark records, weights
- ``attnbook.ngram``       chapter 6: n-gram count models, the yardsticks of the tiny GPT
- ``attnbook.train``       chapter 6: the one training loop (also chapter 7's), loss estimates
                           (what a run records: ``train_log``)
- ``attnbook.cars``        chapter 7: car-sentence pairs, three splits, seven classifiers
- ``attnbook.gqa``         chapter 8: grouped-query attention, the key/value cache's bytes
- ``attnbook.memory``      chapters 2, 8, 9: the peak bytes of tensors a computation holds;
                           reserved against paged cache bytes
- ``attnbook.blocks``      chapter 9: the block manager (pool, tables, prefix caching)
- ``attnbook.paged``       chapter 9: attention over a paged cache (gather, batch cache)
- ``attnbook.serving``     chapter 9: a serving engine (continuous batching, chunked prefill);
                           each sample in flight (``serving_sequence``), what a run
                           measures (``serving_stats``)
- ``attnbook.roofline``    chapter 9: bytes and operations of a decode step
- ``attnbook.caches``      chapters 6-9, 11: the key/value cache family (plain, quantised,
                           fp8, streaming, latent)
- ``attnbook.streaming``   chapter 9: rolling and attention-sink caches, the shipped RoPE GPTs
- ``attnbook.kvquant``     chapter 9: 2, 4 and 8-bit codes, packed (keys per channel, values per token)
- ``attnbook.latent``      chapter 9: multi-head latent attention, cache sizes by kind
- ``attnbook.attn_only``   chapter 10: an attention-only transformer (no MLP, no norm)
- ``attnbook.induction``   chapter 10: repeated-token data, previous-token, induction,
                           copying and composition scores of heads
- ``attnbook.induction_run``  chapter 10: the training recipe, head scores, ablation effects
- ``attnbook.hooks``       chapters 6, 7, 10: attention weights and per-head outputs read
                           with forward hooks, zero and mean ablation of heads
- ``attnbook.circuits``    chapter 10: path ablation and the circuits of a trained model
- ``attnbook.linear_attention``  chapter 11: linear attention and the delta rule, recurrent
                           and parallel
- ``attnbook.mqar``        chapter 11: multi-query associative recall, the recall run
- ``attnbook.recall_models``  chapter 11: softmax, linear, delta-rule and hybrid models
                           of one width
- ``attnbook.recall_view``  chapter 11: what a fixed state returns for each stored key as
                           pairs are added, an interactive view with its picture
- ``attnbook.exercise_checks``  the public checks of the graded exercises (the engine that
                           grades them is the distribution ``attnbook-grader``)
"""

from importlib.metadata import PackageNotFoundError, version

try:  # the version lives in pyproject.toml only
    __version__ = version("attnbook")
except PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "unknown"
