"""The one rule for eval mode: dropout off in the block, the mode before restored after."""

import pytest
import torch
from torch import nn

from rnnsearch.model.modes import evaluating


@pytest.mark.parametrize("training", [True, False])
def test_the_mode_before_the_block_is_restored_however_it_ends(training):
    model = nn.Sequential(nn.Dropout(0.5)).train(training)
    with evaluating(model):
        assert not model.training and not model[0].training
        ones = torch.ones(1000)
        assert torch.equal(model(ones), ones)  # dropout off
    assert model.training == model[0].training == training
    with pytest.raises(KeyboardInterrupt), evaluating(model):
        raise KeyboardInterrupt
    assert model.training == training
