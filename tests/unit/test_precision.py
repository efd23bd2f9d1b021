"""bfloat16 training: the forward pass under autocast, everything that must stay fp32 in fp32."""

import copy

import pytest
import torch

from rnnsearch.config import config_from_dict
from rnnsearch.errors import UserError
from rnnsearch.text.batches import make_batch, source_tensors
from rnnsearch.training.loop import StepContext, training_step
from rnnsearch.training.loss import Objective
from tests.conftest import random_sources, tiny_model


def _pairs(seed: int) -> list[tuple[list[int], list[int]]]:
    sources = random_sources(12, 20, seed=seed, min_len=3, max_len=10)
    targets = random_sources(12, 20, seed=seed + 1, min_len=2, max_len=9)
    return list(zip(sources, targets))


def test_a_bf16_step_makes_nearly_the_fp32_update_and_keeps_fp32_weights():
    reference = tiny_model(vocab=20, seed=5).train()
    mixed = copy.deepcopy(reference)
    batch = make_batch(_pairs(seed=3))
    before = [p.detach().clone() for p in reference.parameters()]
    fp32_loss, tokens = training_step(
        StepContext(reference, torch.optim.SGD(reference.parameters(), lr=0.1), Objective(0.1), 1.0), batch
    )
    bf16_loss, same_tokens = training_step(
        StepContext(mixed, torch.optim.SGD(mixed.parameters(), lr=0.1), Objective(0.1), 1.0, precision="bf16"), batch
    )
    assert same_tokens == tokens
    assert bf16_loss != fp32_loss  # the products really ran in bfloat16
    assert bf16_loss == pytest.approx(fp32_loss, rel=0.03)
    fp32_update = torch.cat([(p.detach() - b).flatten() for p, b in zip(reference.parameters(), before)])
    bf16_update = torch.cat([(p.detach() - b).flatten() for p, b in zip(mixed.parameters(), before)])
    assert all(p.dtype == torch.float32 for p in mixed.parameters())
    assert torch.nn.functional.cosine_similarity(fp32_update, bf16_update, dim=0) > 0.97


def test_attention_weights_stay_fp32_under_autocast_and_give_padding_exactly_zero():
    model = tiny_model(vocab=20, seed=2)
    sources = random_sources(6, 20, seed=4, min_len=2, max_len=9)
    src, lengths = source_tensors(sources)
    tgt_in = torch.randint(4, 20, (len(sources), 5))
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        _, weights = model(src, lengths, tgt_in)
    assert weights.dtype == torch.float32
    assert torch.allclose(weights.sum(-1), torch.ones(weights.shape[:2]), atol=1e-6)
    padded = torch.arange(src.size(1)) >= lengths.unsqueeze(1)
    assert bool((weights.masked_select(padded.unsqueeze(1).expand_as(weights)) == 0).all())


def test_an_unknown_precision_is_a_one_line_error_naming_the_key():
    tree = {
        "data": {"train": {"src": "a", "tgt": "b"}, "valid": {"src": "c", "tgt": "d"}},
        "train": {"precision": "fp16"},
    }
    with pytest.raises(UserError) as excinfo:
        config_from_dict(tree)
    message = str(excinfo.value)
    assert "train.precision" in message and "\n" not in message
