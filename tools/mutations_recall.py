"""The mutations of `tools.mutations` in chapter 11's code: linear attention, the delta rule
and its gate, the recall data and models."""

from __future__ import annotations

from tools.mutation_spec import Mutation

LINEAR = ("tests/test_linear_attention.py", "tests/test_properties_linear.py")
RECALL = ("tests/test_mqar.py", "tests/test_bad_inputs_ch11.py")

MUTATIONS = [
    Mutation(
        "linear-normaliser-dropped",
        "linear_attention.py",
        "return (scores @ v) / (scores.sum(-1, keepdim=True) + eps)",
        "return scores @ v",
        LINEAR,
    ),
    Mutation(
        "linear-parallel-not-causal",
        "linear_attention.py",
        "scores = scores.masked_fill(",
        "scores = scores if True else scores.masked_fill(",
        LINEAR,
    ),
    Mutation(
        "linear-recurrence-without-normaliser",
        "linear_attention.py",
        "den = (fq[:, :, t] * z).sum(-1, keepdim=True) + eps  # (B, H, 1)",
        "den = 1.0",
        LINEAR,
    ),
    Mutation(
        "feature-map-not-positive",
        "linear_attention.py",
        "return F.elu(x) + 1.0",
        "return F.elu(x) + 0.5",
        LINEAR,
    ),
    Mutation(
        "delta-rule-without-subtraction",
        "linear_attention.py",
        "new = beta[:, :, t, None] * (v[:, :, t] - old)",
        "new = beta[:, :, t, None] * v[:, :, t]",
        LINEAR,
    ),
    Mutation(
        "delta-parallel-wrong-triangle",
        "linear_attention.py",
        "u = torch.linalg.solve_triangular(system, beta[..., None] * v, upper=False)",
        "u = torch.linalg.solve_triangular(system.mT, beta[..., None] * v, upper=True)",
        LINEAR,
    ),
    Mutation(
        "gate-decays-after-the-read",
        "linear_attention.py",
        "new = beta[:, :, t, None] * (v[:, :, t] - old)",
        "new = beta[:, :, t, None] * (v[:, :, t] - old / alpha[:, :, t, None] "
        "if alpha is not None else v[:, :, t] - old)",
        LINEAR,
    ),
    Mutation(
        "state-bytes-forgets-normaliser",
        "linear_attention.py",
        "per_head = d_k * d_v + (d_k if normaliser else 0)",
        "per_head = d_k * d_v",
        LINEAR,
    ),
    Mutation(
        "mqar-answers-misaligned",
        "mqar.py",
        "targets[:, 2 * n_pairs :] = values.gather(1, asked)",
        "targets[:, 2 * n_pairs :] = values",
        RECALL,
    ),
    Mutation(
        "mqar-keys-repeat",
        "mqar.py",
        "keys = order[:, :n_pairs] + 1",
        "keys = torch.randint(1, half, (batch_size, n_pairs), generator=g)",
        RECALL,
    ),
    Mutation(
        "recall-conv-sees-the-future",
        "recall_models.py",
        "h = self.conv(x.transpose(1, 2))[..., :T].transpose(1, 2)",
        "h = self.conv(x.transpose(1, 2))[..., 1 : T + 1].transpose(1, 2)",
        RECALL,
    ),
    Mutation(
        "delta-keys-without-silu",
        "recall_models.py",
        "q, k = F.normalize(F.silu(q), dim=-1), F.normalize(F.silu(k), dim=-1)",
        "q, k = F.normalize(q, dim=-1), F.normalize(k, dim=-1)",
        RECALL,
    ),
    Mutation(
        "delta-write-bias-ignored",
        "recall_models.py",
        "nn.init.constant_(self.beta.bias, cfg.write_bias)",
        "nn.init.zeros_(self.beta.bias)",
        RECALL,
    ),
    Mutation(
        "gate-bias-ignored",
        "recall_models.py",
        "nn.init.constant_(self.alpha.bias, cfg.gate_bias)",
        "nn.init.constant_(self.alpha.bias, 3.0)",
        RECALL,
    ),
    Mutation(
        "hybrid-without-softmax",
        "recall_models.py",
        'return ("gated_delta",) * (n_layer - 1) + ("softmax",)',
        'return ("gated_delta",) * n_layer',
        RECALL,
    ),
]
