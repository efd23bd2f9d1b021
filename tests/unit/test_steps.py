"""The step-by-step tensors of attention (rnnsearch.translation.steps) are the ones the model computes:
the context is Σ_j α_ij h_j and what the decoder's own steps attend to, α is what teacher
forcing (the fused training loop included) and search give, rows sum to 1 and padding
weighs exactly 0, for every architecture and the fixed-context baseline."""

from __future__ import annotations

import pytest
import torch

from rnnsearch import kernels
from rnnsearch.model.attention import masked_softmax
from rnnsearch.model.scores import SCORES
from rnnsearch.text.batches import make_batch
from rnnsearch.translation.steps import decoder_steps
from tests.conftest import random_sources, tiny_model
from tests.unit.test_decoder import ARCHITECTURES

MODELS = {
    **{name: {"encoder": encoder, "decoder": decoder} for name, (encoder, decoder) in ARCHITECTURES.items()},
    **{f"score-{score}": {"score": score} for score in SCORES},
}


def batch_of(count: int = 4, vocab: int = 12):
    """Sources of 1 to 9 pieces and targets of 1 to 6, so both sides are padded."""
    sources = random_sources(count, vocab, seed=7)
    targets = random_sources(count, vocab, seed=8, max_len=6)
    return make_batch(list(zip(sources, targets)))


def search_steps(model, batch) -> tuple[list[torch.Tensor], list[torch.Tensor | None], list[torch.Tensor]]:
    """c_i, α_i and s_i as the decoder's search steps compute them, read from its attention."""
    attended = []
    hook = model.decoder.attention.register_forward_hook(lambda module, inputs, output: attended.append(output))
    states = []
    try:
        with torch.no_grad(), kernels.use(kernels.choose("cpu", purpose="search")):
            state = model.encode(batch.src, batch.src_lengths)
            for i in range(batch.tgt_in.size(1)):
                _, state, _ = model.step(batch.tgt_in[:, i], state)
                states.append(state.top)
    finally:
        hook.remove()
    return [context for context, _ in attended], [weights for _, weights in attended], states


@pytest.mark.parametrize("options", MODELS.values(), ids=MODELS.keys())
def test_the_contexts_weights_and_states_are_those_the_decoder_computes(options):
    model = tiny_model(**options)
    batch = batch_of()
    steps = decoder_steps(model, batch)
    contexts, weights, states = search_steps(model, batch)
    assert torch.allclose(steps["contexts"], torch.stack(contexts, 1), atol=1e-6)
    assert torch.allclose(steps["weights"], torch.stack(weights, 1), atol=1e-6)
    assert torch.allclose(steps["states"], torch.stack(states, 1), atol=1e-6)
    summed = torch.bmm(steps["weights"], steps["annotations"])  # c_i = Σ_j α_ij h_j
    assert torch.allclose(steps["contexts"], summed, atol=1e-6)
    padding = steps["padding"].unsqueeze(1).expand_as(steps["weights"])
    assert padding.any() and (steps["weights"][padding] == 0).all()
    assert torch.allclose(steps["weights"].sum(-1), torch.ones(steps["weights"].shape[:2]), atol=1e-6)
    assert torch.allclose(masked_softmax(steps["energies"], steps["padding"].unsqueeze(1)), steps["weights"])


def test_the_weights_are_those_of_the_fused_training_loop():
    model = tiny_model()
    batch = batch_of()
    with torch.enable_grad(), kernels.use(kernels.choose("cpu", purpose="train")):
        _, weights = model(batch.src, batch.src_lengths, batch.tgt_in)
    assert torch.allclose(decoder_steps(model, batch)["weights"], weights.detach(), atol=1e-5)


def test_the_fixed_context_model_has_one_context_and_no_energies_or_weights():
    model = tiny_model(score="none")
    steps = decoder_steps(model, batch_of())
    assert steps["energies"] is None and steps["weights"] is None
    contexts = steps["contexts"]
    assert torch.equal(contexts, contexts[:, :1].expand_as(contexts))
    summary = model.decoder.attention.summary(steps["annotations"], steps["padding"])
    assert torch.allclose(contexts[:, 0], summary)


def test_a_model_in_training_mode_is_read_without_dropout_and_left_in_training_mode():
    model = tiny_model(**MODELS["bahdanau"])
    model.decoder.dropout.p = 0.5
    model.train()
    batch = batch_of()
    first, second = decoder_steps(model, batch), decoder_steps(model, batch)
    assert model.training and torch.equal(first["contexts"], second["contexts"])
