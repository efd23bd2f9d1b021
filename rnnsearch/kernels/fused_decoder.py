"""Training's decoder loop for the paper's model — Bahdanau wiring, one GRU layer, the
additive score — as one autograd function with a hand-written backward pass.

The loop computes, for i = 1 … T, the same arithmetic as `BahdanauWiring.step`
(model/wirings.py), the reference it is tested against (docs/model.md §3):

    e_ij = v_aᵀ tanh(W_a s_{i-1} + U_a h_j);  α_i = softmax(e_i);  c_i = Σ_j α_ij h_j
    s_i  = GRU(s_{i-1}, [E y_{i-1} ; c_i])

and, with coverage, e_ij = v_aᵀ tanh(W_a s_{i-1} + U_a h_j + V_a C_{i-1,j}) with
C_i = C_{i-1} + α_i. The coverage adds a pass over the score's tensor forward and one
backward, and a (B, S) gradient that flows back through time: ∂L/∂C_{i-1} is step i's
own term plus ∂L/∂C_i, and ∂L/∂α_i gains ∂L/∂C_i.

Why a second implementation: recorded by autograd, every step is some forty small
operations, each with its own bookkeeping in the backward pass, and the weights that
every step shares (W_a, W_hh and the context's share of W_ih) get their gradient as
one small product per step, summed step by step. Here the forward pass keeps what the
backward pass needs in time-major buffers, the backward pass walks back through time
once, writing each step's gate gradients into one (T, B, ·) buffer, and the shared
weights' gradients are formed after the loop as one product each over all T·B rows.

The score's (B, S, n) tensor is the largest thing a step touches. As in
`additive.recomputed`, it is recomputed in the backward pass rather than kept for
every step, and it lives in one buffer reused by every step, not in fresh memory the
system must map in each time. tanh(x) = 2σ(2x) − 1 (see sigmoid_tanh.py), so the loop keeps
σ(2(W_a s + U_a h_j)) only: the doubled keys are formed once per batch, v_aᵀ tanh is
2 v_aᵀσ − Σ v_a, and 1 − tanh² is 4σ(1 − σ). A step then passes over that tensor three
times forward and seven times backward, where the general loop passes six and fourteen
times.

It runs where it was measured to pay: under autograd, in fp32, on the CPU (the CPU
training kernels, kernels/__init__.py). The general step loop stays the reference;
tests hold the two to the same losses and gradients.
"""

from __future__ import annotations

import torch
from torch.autograd.function import once_differentiable

from rnnsearch.kernels.sigmoid_tanh import tanh_


def attentive_gru(
    gates: torch.Tensor,
    initial: torch.Tensor,
    keys: torch.Tensor,
    annotations: torch.Tensor,
    padding: torch.Tensor,
    *,
    query_weight: torch.Tensor,
    v: torch.Tensor,
    context_weight: torch.Tensor,
    weight_hh: torch.Tensor,
    bias_hh: torch.Tensor,
    coverage: torch.Tensor | None = None,
    coverage_weight: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """s_i (B, T, D), c_i (B, T, A) and α_i (B, T, S) for every i, from E y_{i-1}'s share
    of the GRU's input gates with b_ih (B, T, 3D), s_0 (B, D), the keys U_a h_j (B, S, n),
    the annotations h_j (B, S, A) and their padding (B, S); W_a (n, D), v_a (n), the
    context's share of W_ih (3D, A), W_hh (3D, D) and b_hh (3D); with coverage, C_0
    (B, S) and V_a (n)."""
    return _AttentiveGRU.apply(
        gates,
        initial,
        keys,
        annotations,
        padding,
        query_weight,
        v,
        context_weight,
        weight_hh,
        bias_hh,
        coverage,
        coverage_weight,
    )


class _AttentiveGRU(torch.autograd.Function):
    """gates (B, T, 3D): E y_{i-1}'s share of the GRU's input gates, with b_ih; s_0 (B, D);
    keys U_a h_j (B, S, n); annotations h_j (B, S, A); padding (B, S); W_a (n, D); v_a (n);
    the context's share of W_ih (3D, A); W_hh (3D, D); b_hh (3D); C_0 (B, S) and V_a (n)
    with coverage, else None."""

    @staticmethod
    def forward(
        ctx,
        gates,
        initial,
        keys,
        annotations,
        padding,
        query_weight,
        v,
        context_weight,
        weight_hh,
        bias_hh,
        coverage,
        coverage_weight,
    ):
        batch, steps, size = gates.size(0), gates.size(1), initial.size(1)
        covers = coverage is not None
        coverages = keys.new_empty(steps + 1 if covers else 0, batch, keys.size(1))  # C_0 … C_T
        if covers:
            coverages[0], doubled_coverage_weight = coverage, coverage_weight * 2
        states = initial.new_empty(steps + 1, batch, size)  # s_0 … s_T
        states[0] = initial
        contexts = annotations.new_empty(steps, batch, annotations.size(2))
        weights = annotations.new_empty(steps, batch, annotations.size(1))
        queries = keys.new_empty(steps, batch, keys.size(2))  # W_a s_{i-1}
        reset_update = initial.new_empty(steps, batch, 2 * size)  # r_i and z_i
        candidates = initial.new_empty(steps, batch, size)  # ñ_i
        recurrent_candidates = initial.new_empty(steps, batch, size)  # W_hn s_{i-1} + b_hn
        lowest = torch.finfo(weights.dtype).min
        doubled_keys, v_sum = keys * 2, v.sum()
        sigmoids = keys.new_empty(keys.shape)  # σ(2(W_a s_{i-1} + U_a h_j)), one buffer for every step
        for i in range(steps):
            previous = states[i]
            torch.mm(previous, query_weight.t(), out=queries[i])
            torch.add(doubled_keys, queries[i].unsqueeze(1), alpha=2, out=sigmoids)
            if covers:  # + V_a C_{i-1,j}
                sigmoids.addcmul_(coverages[i].unsqueeze(2), doubled_coverage_weight)
            energies = torch.matmul(sigmoids.sigmoid_(), v).mul_(2).sub_(v_sum)  # e_ij = v_aᵀ(2σ − 1): (B, S)
            torch.ops.aten._softmax.out(energies.masked_fill_(padding, lowest), -1, False, out=weights[i])  # α_ij
            if covers:
                torch.add(coverages[i], weights[i], out=coverages[i + 1])  # C_i = C_{i-1} + α_i
            torch.bmm(weights[i].unsqueeze(1), annotations, out=contexts[i].unsqueeze(1))  # c_i
            input_gates = torch.addmm(gates[:, i], contexts[i], context_weight.t())
            recurrent_gates = torch.addmm(bias_hh, previous, weight_hh.t())
            torch.add(input_gates[:, : 2 * size], recurrent_gates[:, : 2 * size], out=reset_update[i]).sigmoid_()
            recurrent_candidates[i] = recurrent_gates[:, 2 * size :]
            reset = reset_update[i, :, :size]
            tanh_(torch.addcmul(input_gates[:, 2 * size :], reset, recurrent_candidates[i], out=candidates[i]))
            torch.sub(previous, candidates[i], out=states[i + 1]).mul_(reset_update[i, :, size:]).add_(candidates[i])
        buffers = states, contexts, weights, queries, reset_update, candidates, recurrent_candidates, coverages
        ctx.coverage_weight = coverage_weight
        ctx.save_for_backward(keys, annotations, padding, query_weight, v, context_weight, weight_hh, *buffers)
        return states[1:].transpose(0, 1), contexts.transpose(0, 1), weights.transpose(0, 1)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_states, grad_contexts, grad_weights):
        keys, annotations, padding, query_weight, v, context_weight, weight_hh, *buffers = ctx.saved_tensors
        states, contexts, weights, queries, reset_update, candidates, recurrent_candidates, coverages = buffers
        coverage = _CoverageGradients(ctx.coverage_weight, coverages, 4 * v)
        steps, batch, size = candidates.shape
        grad_gates = reset_update.new_empty(steps, batch, 3 * size)  # ∂/∂(input gates)
        grad_recurrent_candidates = torch.empty_like(candidates)  # ∂/∂(W_hn s_{i-1} + b_hn)
        grad_queries = torch.empty_like(queries)
        grad_keys = torch.zeros_like(keys)  # ∂/∂(U_a h_j), without the factor 4 v_a that every step shares
        doubled_keys, four_v, sigmoids = keys * 2, 4 * v, torch.empty_like(keys)
        grad_annotations, grad_v = torch.zeros_like(annotations), torch.zeros_like(v)
        grad_state = torch.zeros_like(states[0])  # ∂/∂s_i from the steps after i
        for i in reversed(range(steps)):
            grad = grad_state if grad_states is None else grad_state + grad_states[:, i]
            previous, candidate = states[i], candidates[i]
            reset, update = reset_update[i, :, :size], reset_update[i, :, size:]
            gates = grad_gates[i]
            grad_state = grad * update  # s_i = ñ + z (s_{i-1} − ñ)
            torch.ops.aten.sigmoid_backward.grad_input(
                grad * (previous - candidate), update, grad_input=gates[:, size : 2 * size]
            )
            torch.ops.aten.tanh_backward.grad_input(grad - grad_state, candidate, grad_input=gates[:, 2 * size :])
            torch.mul(gates[:, 2 * size :], reset, out=grad_recurrent_candidates[i])
            torch.ops.aten.sigmoid_backward.grad_input(
                gates[:, 2 * size :] * recurrent_candidates[i], reset, grad_input=gates[:, :size]
            )
            grad_state = torch.addmm(grad_state, gates[:, : 2 * size], weight_hh[: 2 * size])
            grad_state = torch.addmm(grad_state, grad_recurrent_candidates[i], weight_hh[2 * size :])
            grad_context = torch.mm(gates, context_weight)
            if grad_contexts is not None:
                grad_context += grad_contexts[:, i]
            alpha = weights[i]
            grad_alpha = coverage.into_weights(torch.bmm(annotations, grad_context.unsqueeze(2)).squeeze(2))
            if grad_weights is not None:
                grad_alpha += grad_weights[:, i]
            grad_annotations.baddbmm_(alpha.unsqueeze(2), grad_context.unsqueeze(1))
            grad_energies = torch.ops.aten._softmax_backward_data(grad_alpha, alpha, -1, alpha.dtype)
            grad_energies.masked_fill_(padding, 0.0)
            recomputed = torch.add(doubled_keys, queries[i].unsqueeze(1), alpha=2, out=sigmoids)  # recomputed
            coverage.add_to_scores(recomputed, i).sigmoid_()
            grad_v.addmv_(sigmoids.flatten(0, 1).t(), grad_energies.flatten(), alpha=2).sub_(grad_energies.sum())
            torch.addcmul(sigmoids, sigmoids, sigmoids, value=-1, out=sigmoids).mul_(grad_energies.unsqueeze(2))
            grad_keys += sigmoids  # σ(1 − σ) ∂e: 1 − tanh² = 4σ(1 − σ)
            coverage.from_scores(sigmoids, i)
            torch.sum(sigmoids, 1, out=grad_queries[i]).mul_(four_v)
            grad_state = torch.addmm(grad_state, grad_queries[i], query_weight)
        grad_keys.mul_(four_v)
        previous_states, rows = states[:-1].flatten(0, 1), grad_gates.flatten(0, 1)
        return (
            grad_gates.transpose(0, 1),
            grad_state,
            grad_keys,
            grad_annotations,
            None,
            grad_queries.flatten(0, 1).t() @ previous_states,
            grad_v,
            rows.t() @ contexts.flatten(0, 1),
            *_recurrent_gradients(rows[:, : 2 * size], grad_recurrent_candidates, previous_states),  # W_hh, b_hh
            *coverage.gradients(),  # C_0, V_a
        )


class _CoverageGradients:
    """The coverage's part of the backward pass, walking back through time with it: the
    gradient of the coverage C_i that later steps read, and of V_a. Without coverage
    (V_a None) every method does nothing and the gradients are None."""

    def __init__(self, coverage_weight: torch.Tensor | None, coverages: torch.Tensor, four_v: torch.Tensor):
        self.weight, self.coverages, self.four_v = coverage_weight, coverages, four_v
        if coverage_weight is not None:
            self.doubled_weight, self.scaled_weight = coverage_weight * 2, four_v * coverage_weight
            self.grad_coverage = coverages.new_zeros(coverages.shape[1:])  # ∂L/∂C_i, from the steps after i
            self.grad_weight = torch.zeros_like(coverage_weight)  # without the factor 4 v_a

    def into_weights(self, grad_alpha: torch.Tensor) -> torch.Tensor:
        """∂L/∂α_i += ∂L/∂C_i, in place, since C_i = C_{i-1} + α_i."""
        if self.weight is not None:
            grad_alpha += self.grad_coverage
        return grad_alpha

    def add_to_scores(self, doubled: torch.Tensor, i: int) -> torch.Tensor:
        """2(W_a s + U_a h_j) → 2(W_a s + U_a h_j + V_a C_{i-1,j}), in place."""
        if self.weight is not None:
            doubled.addcmul_(self.coverages[i].unsqueeze(2), self.doubled_weight)
        return doubled

    def from_scores(self, grad_scores: torch.Tensor, i: int) -> None:
        """Step i's share, from σ(1 − σ) ∂e (B, S, n): ∂L/∂C_{i-1} = its own term + ∂L/∂C_i."""
        if self.weight is not None:
            self.grad_weight.addmv_(grad_scores.flatten(0, 1).t(), self.coverages[i].flatten())
            self.grad_coverage.add_(torch.matmul(grad_scores, self.scaled_weight))

    def gradients(self) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        """∂L/∂C_0 and ∂L/∂V_a, or None without coverage."""
        if self.weight is None:
            return None, None
        return self.grad_coverage, self.grad_weight.mul_(self.four_v)


def _recurrent_gradients(
    grad_reset_update: torch.Tensor, grad_recurrent_candidates: torch.Tensor, previous_states: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """∂/∂W_hh and ∂/∂b_hh, one product over all T·B rows: from the gradients of the reset
    and update gates (T·B, 2D), of W_hn s_{i-1} + b_hn (T, B, D), and s_{i-1} (T·B, D)."""
    grad_candidates = grad_recurrent_candidates.flatten(0, 1)
    grad_weight_hh = torch.cat([grad_reset_update.t() @ previous_states, grad_candidates.t() @ previous_states])
    grad_bias_hh = torch.cat([grad_reset_update.sum(0), grad_candidates.sum(0)])
    return grad_weight_hh, grad_bias_hh
