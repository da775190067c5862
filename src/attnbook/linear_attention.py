"""Attention with a state of fixed size: linear attention and the delta rule (chapter 11).

Shapes follow `attnbook.attention.attend`: q, k (B, H, T, d_k), v (B, H, T, d_v); the row-vector
convention of the course, so the state S is (B, H, d_k, d_v) and a query reads it as q S.

Linear attention (Katharopoulos et al. 2020) replaces exp(q.k) by phi(q).phi(k) with the
feature map phi(x) = elu(x) + 1 (positive, so the normaliser is never 0). Its causal output

    y_t = phi(q_t) S_t / (phi(q_t) . z_t + eps),  S_t = S_{t-1} + phi(k_t)^T v_t,  z_t = z_{t-1} + phi(k_t)

is computed two ways: `linear_attention_recurrent` (one token at a time, a state of fixed
size) and `linear_attention_parallel` (the masked T x T matrix, as softmax attention).

The delta rule (Schlag et al. 2021; gated: Yang et al., Gated DeltaNet) writes v_t at key k_t
after removing what k_t read before; in this module's convention, the transpose of the
papers' S_t = S_{t-1}(alpha_t (I - beta_t k_t k_t^T)) + beta_t v_t k_t^T (S there is d_v x d_k):

    S_t = alpha_t S_{t-1} + beta_t k_t^T (v_t - alpha_t k_t S_{t-1}),   y_t = q_t S_t

with beta_t the write strength and alpha_t in (0, 1] the gate that decays the old state
(alpha = 1: the plain delta rule). `delta_rule_recurrent` loops over tokens;
`delta_rule_parallel` solves one triangular system for all of them at once.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from ._checks import floating, positive_int, tensor
from .masks import causal_mask

__all__ = [
    "elu_feature_map",
    "linear_attention_recurrent",
    "linear_attention_parallel",
    "delta_rule_recurrent",
    "delta_rule_parallel",
    "state_bytes",
]

LinearState = tuple[Tensor, Tensor]  # S (B, H, d_k, d_v), z (B, H, d_k)


def elu_feature_map(x: Tensor) -> Tensor:
    """phi(x) = elu(x) + 1, elementwise: positive, and close to 1 + x near 0.

    Chapter 11.
    """
    return F.elu(x) + 1.0


def _check_qkv(q: object, k: object, v: object) -> tuple[Tensor, Tensor, Tensor]:
    """q, k (B, H, T, d_k) and v (B, H, T, d_v) of one floating dtype, or a clear error."""
    q = tensor("q", q, "(B, H, T, d_k)", dims=(4,))
    k = tensor("k", k, "(B, H, T, d_k)", dims=(4,))
    v = tensor("v", v, "(B, H, T, d_v)", dims=(4,))
    for name, t in (("q", q), ("k", k), ("v", v)):
        floating(name, t)
    if not q.dtype == k.dtype == v.dtype:
        raise TypeError(
            f"q, k and v must have the same dtype, got {q.dtype}, {k.dtype} and {v.dtype}"
        )
    if q.shape != k.shape:
        raise ValueError(
            f"q and k must have the same shape (B, H, T, d_k), got {tuple(q.shape)} "
            f"and {tuple(k.shape)}"
        )
    if v.shape[:3] != k.shape[:3]:
        raise ValueError(
            f"v must have the batch, heads and tokens of k, got v {tuple(v.shape)} "
            f"and k {tuple(k.shape)}"
        )
    if k.shape[-1] == 0 or v.shape[-1] == 0:
        raise ValueError(
            f"need d_k >= 1 and d_v >= 1, got k {tuple(k.shape)}, v {tuple(v.shape)}"
        )
    return q, k, v


def _check_state(state: object, k: Tensor, v: Tensor) -> LinearState:
    if not (isinstance(state, tuple) and len(state) == 2):
        raise TypeError("state must be a tuple (S, z) from an earlier call, or None")
    S, z = state
    B, H, _, d_k = k.shape
    want_S, want_z = (B, H, d_k, v.shape[-1]), (B, H, d_k)
    if not isinstance(S, Tensor) or tuple(S.shape) != want_S:
        raise ValueError(f"state S must have shape {want_S}")
    if not isinstance(z, Tensor) or tuple(z.shape) != want_z:
        raise ValueError(f"state z must have shape {want_z}")
    return S, z


def linear_attention_recurrent(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    state: LinearState | None = None,
    eps: float = 1e-6,
) -> tuple[Tensor, LinearState]:
    """Causal linear attention one token at a time: (B, H, T, d_v) outputs and the state
    (S (B, H, d_k, d_v), z (B, H, d_k)) after the last token, to continue from (decoding).
    q and k are raw: the feature map is applied here.

    Chapter 11.
    """
    q, k, v = _check_qkv(q, k, v)
    B, H, T, d_k = k.shape
    fq, fk = elu_feature_map(q), elu_feature_map(k)
    if state is None:
        S = k.new_zeros(B, H, d_k, v.shape[-1])
        z = k.new_zeros(B, H, d_k)
    else:
        S, z = _check_state(state, k, v)
    outputs = []
    for t in range(T):
        S = S + fk[:, :, t, :, None] * v[:, :, t, None, :]  # outer product (d_k, d_v)
        z = z + fk[:, :, t]
        num = (fq[:, :, t, :, None] * S).sum(-2)  # phi(q_t) S_t: (B, H, d_v)
        den = (fq[:, :, t] * z).sum(-1, keepdim=True) + eps  # (B, H, 1)
        outputs.append(num / den)
    y = torch.stack(outputs, dim=2) if outputs else v.new_zeros(B, H, 0, v.shape[-1])
    return y, (S, z)


def linear_attention_parallel(
    q: Tensor, k: Tensor, v: Tensor, eps: float = 1e-6
) -> Tensor:
    """Causal linear attention on all tokens at once: the (T, T) matrix phi(Q) phi(K)^T with
    its upper triangle zeroed, each row divided by its sum (+ eps), times V: (B, H, T, d_v).

    Chapter 11.
    """
    q, k, v = _check_qkv(q, k, v)
    T = k.shape[2]
    scores = elu_feature_map(q) @ elu_feature_map(k).transpose(-2, -1)  # (B, H, T, T)
    scores = scores.masked_fill(~causal_mask(T, device=q.device), 0.0)
    return (scores @ v) / (scores.sum(-1, keepdim=True) + eps)


def _check_gates(
    beta: object, alpha: object, k: Tensor
) -> tuple[Tensor, Tensor | None]:
    want = tuple(k.shape[:3])
    beta = tensor("beta", beta, "(B, H, T)", dims=(3,))
    if tuple(beta.shape) != want or beta.dtype != k.dtype:
        raise ValueError(
            f"beta must have shape (B, H, T) = {want} and dtype {k.dtype}, got "
            f"{tuple(beta.shape)} {beta.dtype}"
        )
    if alpha is None:
        return beta, None
    alpha = tensor("alpha", alpha, "(B, H, T)", dims=(3,))
    if tuple(alpha.shape) != want or alpha.dtype != k.dtype:
        raise ValueError(
            f"alpha must have shape (B, H, T) = {want} and dtype {k.dtype}, got "
            f"{tuple(alpha.shape)} {alpha.dtype}"
        )
    if not bool(((alpha > 0) & (alpha <= 1)).all()):
        raise ValueError("alpha (the decay gate) must lie in (0, 1]")
    return beta, alpha


def delta_rule_recurrent(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    beta: Tensor,
    alpha: Tensor | None = None,
    state: Tensor | None = None,
) -> tuple[Tensor, Tensor]:
    """The (gated) delta rule one token at a time: outputs (B, H, T, d_v) and the final state
    S (B, H, d_k, d_v). beta (B, H, T): write strengths; alpha (B, H, T) in (0, 1] or None:
    the decay gate. Keys are used as given (a model normalises them first).

    Chapter 11.
    """
    q, k, v = _check_qkv(q, k, v)
    beta, alpha = _check_gates(beta, alpha, k)
    B, H, T, d_k = k.shape
    if state is None:
        S = k.new_zeros(B, H, d_k, v.shape[-1])
    else:
        S = tensor("state", state, "(B, H, d_k, d_v)", dims=(4,))
        if tuple(S.shape) != (B, H, d_k, v.shape[-1]):
            raise ValueError(f"state must have shape {(B, H, d_k, v.shape[-1])}")
    outputs = []
    for t in range(T):
        if alpha is not None:
            S = alpha[:, :, t, None, None] * S  # forget a little of everything
        k_t = k[:, :, t]  # (B, H, d_k)
        old = (k_t[..., None] * S).sum(-2)  # what k_t reads now: k_t S (B, H, d_v)
        new = beta[:, :, t, None] * (v[:, :, t] - old)  # the correction to write
        S = S + k_t[..., None] * new[..., None, :]  # k_t^T (correction)
        outputs.append((q[:, :, t, :, None] * S).sum(-2))  # q_t S_t
    y = torch.stack(outputs, dim=2) if outputs else v.new_zeros(B, H, 0, v.shape[-1])
    return y, S


def delta_rule_parallel(
    q: Tensor, k: Tensor, v: Tensor, beta: Tensor, alpha: Tensor | None = None
) -> Tensor:
    """The (gated) delta rule for all tokens at once (B, H, T, d_v), equal to the recurrence.

    The state is a sum of writes, S_t = sum_{i<=t} D[t, i] k_i^T u_i with D[t, i] the decay
    alpha_{i+1} ... alpha_t, and each correction u_t = beta_t (v_t - sum_{i<t} D[t, i]
    (k_t . k_i) u_i) depends on the earlier ones linearly: (I + diag(beta) L) U = diag(beta) V
    with L the strictly lower triangle of (K K^T) * D, one triangular solve. Float32/64.

    Chapter 11.
    """
    q, k, v = _check_qkv(q, k, v)
    beta, alpha = _check_gates(beta, alpha, k)
    T = k.shape[2]
    below = causal_mask(T, device=k.device)  # key i <= query t
    if alpha is None:
        decay = below.to(k.dtype)
    else:
        g = torch.log(alpha).cumsum(-1)  # (B, H, T): log of alpha_1 ... alpha_t
        diff = g[..., :, None] - g[..., None, :]  # g_t - g_i, (B, H, T, T)
        decay = torch.exp(diff.masked_fill(~below, float("-inf")))
    strict = (
        (k @ k.transpose(-2, -1))
        * decay
        * (~torch.eye(T, dtype=torch.bool, device=k.device))
    )
    system = (
        torch.eye(T, dtype=k.dtype, device=k.device) + beta[..., :, None] * strict
    )  # (B, H, T, T)
    u = torch.linalg.solve_triangular(system, beta[..., None] * v, upper=False)
    return ((q @ k.transpose(-2, -1)) * decay) @ u


def state_bytes(
    n_layer: int,
    n_head: int,
    d_k: int,
    d_v: int,
    bytes_per_number: int,
    normaliser: bool = True,
    batch_size: int = 1,
) -> int:
    """Bytes of the fixed state of `n_layer` layers of `n_head` heads: S (d_k x d_v) per head,
    plus z (d_k) with the linear-attention normaliser. It does not grow with the text
    (compare `attnbook.caches.kv_cache_bytes`, which grows with every token).

    Chapter 11.
    """
    for name, value in (
        ("n_layer", n_layer),
        ("n_head", n_head),
        ("d_k", d_k),
        ("d_v", d_v),
        ("bytes_per_number", bytes_per_number),
        ("batch_size", batch_size),
    ):
        positive_int(name, value)
    per_head = d_k * d_v + (d_k if normaliser else 0)
    return n_layer * n_head * per_head * bytes_per_number * batch_size
