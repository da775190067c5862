"""Golden values: fixed seeds give known losses, token ids and logits (chapters 1, 6 and 7).

The invariants elsewhere say what must hold for any weights; these pin what this code computes,
so a change that keeps every invariant but alters the arithmetic (an initialisation, a scale,
which parameters decay, a mask one path forgets) fails here. Everything runs in float64 on one
thread, where machines differ by ~1e-15, so a relative tolerance of 1e-6 is robust across CPUs
and still ~1e4 times finer than the changes `python -m tools.mutations` makes. The MLP
classifiers build float32 features, so theirs is 1e-4. Regenerate a table only for a change
that is meant to alter the numbers, and say so in the commit.
"""

from __future__ import annotations

import pytest
import torch

from attnbook.cars import MODEL_KINDS, build_model, train_classifier
from attnbook.gpt import GPT, GPTConfig
from attnbook.lookup import LookupHead, train_lookup_head
from attnbook.text import get_batch
from attnbook.train import TrainConfig, train_loop

pytestmark = pytest.mark.usefixtures("one_thread")

# options -> losses at steps 0, 3, 6, 9 and 11; 12 greedy and 12 sampled ids
GPT_GOLDEN = {
    "learned": (
        [2.416091122, 2.368581313, 2.452736186, 2.331182135, 2.374690754],
        [4, 4, 4, 4, 4, 4, 4, 4, 5, 5, 5, 7],
        [0, 4, 10, 0, 5, 7, 0, 8, 5, 10, 6, 8],
    ),
    "sinusoidal": (
        [2.393577824, 2.393008162, 2.379949395, 2.398169192, 2.404077906],
        [4, 4, 4, 4, 4, 4, 4, 4, 8, 8, 8, 4],
        [0, 4, 10, 0, 5, 7, 0, 8, 5, 10, 6, 8],
    ),
    "rope": (
        [2.406585611, 2.364227054, 2.431430143, 2.385322487, 2.380169946],
        [3, 4, 4, 5, 6, 6, 0, 0, 0, 0, 0, 8],
        [0, 4, 10, 0, 5, 7, 0, 8, 10, 10, 6, 8],
    ),
    "alibi": (
        [2.406710251, 2.365048429, 2.425867671, 2.372024432, 2.401605345],
        [3, 4, 4, 5, 5, 6, 0, 8, 3, 4, 4, 4],
        [0, 8, 10, 1, 5, 7, 0, 8, 10, 10, 6, 8],
    ),
    "none": (
        [2.406583873, 2.364099048, 2.430730203, 2.384756984, 2.384480332],
        [3, 4, 5, 6, 0, 0, 0, 8, 3, 3, 3, 4],
        [0, 4, 10, 1, 5, 7, 0, 8, 10, 10, 6, 8],
    ),
    "gqa": (
        [2.406347104, 2.349661466, 2.37658903, 2.365559289, 2.455808873],
        [4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4],
        [0, 4, 10, 0, 5, 7, 0, 8, 10, 10, 6, 8],
    ),
    "bidirectional": (
        [2.417410125, 2.364289545, 2.429583323, 2.285784288, 2.345999415],
        [4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4],
        [0, 4, 10, 0, 5, 7, 0, 8, 5, 10, 6, 8],
    ),
}
CLASSIFIER_GOLDEN = {  # kind -> logits of the first 6 sentences after 10 steps
    "bag of words": [
        -0.054462872,
        0.29045269,
        -0.039426498,
        -0.14166601,
        0.002597129,
        0.41133904,
    ],
    "position x word": [
        -0.15683413,
        0.24068952,
        0.059868962,
        -0.29835555,
        -0.21958657,
        0.2988072,
    ],
    "n-grams": [
        -0.21254915,
        0.37908185,
        0.014631677,
        -0.36710364,
        -0.08331722,
        0.51794738,
    ],
    "attention + learned positions": [
        -0.85263869,
        0.64290838,
        -0.07713921,
        -0.97484826,
        0.092398485,
        0.66994028,
    ],
    "attention + sinusoidal": [
        -1.573264,
        0.99442754,
        0.073429401,
        -1.2467324,
        -0.50892019,
        0.74295772,
    ],
    "attention + RoPE": [
        -1.1953124,
        0.85534269,
        -0.022072256,
        -1.214778,
        -1.0917974,
        0.4477101,
    ],
    "attention without positions": [
        -1.1923247,
        0.88929,
        -0.023790826,
        -1.2161667,
        -1.0900131,
        0.42479496,
    ],
}
LOOKUP_GOLDEN = [
    1.1657359,
    1.099461499,
    1.083919936,
    1.087712611,
    1.047389176,
    1.032309601,
    0.9851984299,
    0.9068429164,
    0.9068429164,
]  # losses at steps 0, 2, ..., 14 and the last

# A strong weight decay and a large learning rate make every choice of the optimiser visible
# within a dozen steps.
RECIPE = TrainConfig(
    max_iters=12,
    batch_size=4,
    learning_rate=1e-2,
    min_lr=1e-3,
    warmup_iters=2,
    weight_decay=0.5,
    eval_interval=12,
    seed=0,
)
GPT_OPTIONS = {
    "learned": {},
    "sinusoidal": {"positions": "sinusoidal"},
    "rope": {"positions": "rope"},
    "alibi": {"positions": "alibi"},
    "none": {"positions": "none"},
    "gqa": {"positions": "rope", "n_kv_head": 2},
    "bidirectional": {"causal": False},
}


@pytest.mark.parametrize("name", GPT_OPTIONS)
def test_gpt_losses_and_generated_ids(name):
    data = torch.randint(0, 11, (400,), generator=torch.Generator().manual_seed(1))
    torch.manual_seed(0)
    config = GPTConfig(
        vocab_size=11,
        block_size=16,
        n_layer=2,
        n_head=4,
        n_embd=16,
        **GPT_OPTIONS[name],
    )
    model = GPT(config).double()
    losses: list[float] = []

    def loss_fn(m, batch):
        loss = m(*batch)[1]
        losses.append(loss.item())
        return loss

    train_loop(model, lambda g: get_batch(data, 16, 4, g), RECIPE, loss_fn=loss_fn)
    prompt = data[None, :5]
    greedy = model.generate(prompt, 12, top_k=1)[0, 5:].tolist()  # with the KV cache
    sampled = model.generate(prompt, 12, generator=torch.Generator().manual_seed(3))[
        0, 5:
    ].tolist()
    want_losses, want_greedy, want_sampled = GPT_GOLDEN[name]
    assert losses[::3] + losses[-1:] == pytest.approx(want_losses, rel=1e-6)
    assert greedy == want_greedy and sampled == want_sampled
    assert (
        model.generate(prompt, 12, top_k=1, use_cache=False)[0, 5:].tolist()
        == want_greedy
    )


@pytest.mark.parametrize("kind", MODEL_KINDS)
def test_car_classifier_logits_after_training(kind):
    g = torch.Generator().manual_seed(2)
    # ids 0 and 1 are padding and unknown
    ids = torch.randint(2, 15, (24, 9), generator=g)
    lengths = torch.randint(3, 10, (24,), generator=g)
    # right-padded, as encode_batch does
    ids[torch.arange(9)[None, :] >= lengths[:, None]] = 0
    labels = (ids[:, 0] > ids[:, 1]).float()
    torch.manual_seed(0)
    model = build_model(kind, 15, max_len=12)
    attention = kind.startswith("attention")
    if attention:
        model, labels = model.double(), labels.double()
    recipe = TrainConfig(
        max_iters=10,
        batch_size=8,
        learning_rate=5e-3,
        min_lr=5e-4,
        warmup_iters=2,
        weight_decay=0.5,
        eval_interval=10,
        seed=0,
    )
    train_classifier(model, ids, labels, recipe)
    with torch.no_grad():
        logits = model(ids[:6]).tolist()
    assert logits == pytest.approx(
        CLASSIFIER_GOLDEN[kind], rel=1e-6 if attention else 1e-4, abs=1e-7
    )


def test_lookup_head_losses():
    torch.manual_seed(0)
    head = LookupHead(4, 3, d_model=8).double()
    losses = train_lookup_head(head, steps=15, batch_size=16, seed=0)
    assert losses[::2] + losses[-1:] == pytest.approx(LOOKUP_GOLDEN, rel=1e-6)
