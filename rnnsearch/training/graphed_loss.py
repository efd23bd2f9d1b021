"""The training step's decoder and loss, replayed as CUDA graphs on a GPU.

With Multi30k-sized batches a GPU spends a training step launching kernels: the
decoder runs its attention and recurrence once per target position, forward and
backward, each a handful of small kernels. Here each batch shape's decoder forward
and backward are captured once (`torch.cuda.make_graphed_callables`) and replayed.

The encoder stays eager: its cuDNN RNN reads packed sequences whose layout depends on
every sentence's length. Its annotations are then padded to a grid of shapes (rows to
a multiple of ROW_MULTIPLE, source and target positions to a multiple of
POSITION_MULTIPLE), so that a few dozen shapes cover a corpus. Padded source positions
are masked as always, padded rows attend to nothing real, and padded target positions
(<pad>) count for nothing in the loss: the loss and the gradients are those of the
batch itself. The loss is `training.loss.translation_loss`, the function eager steps
run, so the objective's every translation term is replayed: the cross-entropy and,
with guided alignment, the guided term, whose links enter as a dense matrix of α's
padded shape. Each shape keeps what its backward pass needs, so GPU memory grows with
the number of shapes met; `train.cuda_graphs: false` turns this off.
"""

from __future__ import annotations

from typing import cast

import torch
import torch.nn.functional as F
from torch import nn

from rnnsearch.kernels.capture import garbage_collector_paused
from rnnsearch.model.seq2seq import RNNSearch
from rnnsearch.reserved import PAD
from rnnsearch.text.batches import Batch
from rnnsearch.training.loss import Objective, guide_links, translation_loss

ROW_MULTIPLE = 16
POSITION_MULTIPLE = 8


class DecoderLoss(nn.Module):
    """The objective's translation terms (`translation_loss`), from the encoder's
    annotations and summary: target positions holding <pad> count for nothing, and the
    guided term, where the objective has one, reads the links as a dense matrix."""

    def __init__(self, model: RNNSearch, objective: Objective):
        super().__init__()
        self.model, self.objective = model, objective

    def forward(
        self,
        annotations: torch.Tensor,
        summary: torch.Tensor,
        padding: torch.Tensor,
        tgt_in: torch.Tensor,
        tgt_out: torch.Tensor,
        links: torch.Tensor | None = None,
    ) -> torch.Tensor:
        decoder = self.model.decoder
        readout, weights = decoder(tgt_in, decoder.initial_state(annotations, summary, padding))
        return translation_loss(self.model, self.objective, readout, weights, tgt_out, links)


def fixed_shape_inputs(
    annotations: torch.Tensor,
    summary: torch.Tensor,
    batch: Batch,
    longest_source: int,
    links: torch.Tensor | None = None,
) -> tuple[torch.Tensor, ...]:
    """DecoderLoss's inputs for `batch` (and its dense `links`, if any), padded to the grid
    of shapes; source positions no further than `longest_source`, beyond which some
    alignment models cannot reach."""
    rows, source, target = annotations.size(0), annotations.size(1), batch.tgt_in.size(1)
    extra_rows = _round_up(rows, ROW_MULTIPLE) - rows
    extra_source = max(source, min(_round_up(source, POSITION_MULTIPLE), longest_source)) - source
    extra_target = _round_up(target, POSITION_MULTIPLE) - target
    lengths = F.pad(batch.src_lengths, (0, extra_rows))  # padded rows: no real position
    padding = torch.arange(source + extra_source, device=lengths.device).unsqueeze(0) >= lengths.unsqueeze(1)
    inputs = (
        F.pad(annotations, (0, 0, 0, extra_source, 0, extra_rows)),
        F.pad(summary, (0, 0, 0, extra_rows)),
        padding,
        F.pad(batch.tgt_in, (0, extra_target, 0, extra_rows), value=PAD),
        F.pad(batch.tgt_out, (0, extra_target, 0, extra_rows), value=PAD),
    )
    if links is None:
        return inputs
    return (*inputs, F.pad(links, (0, extra_source, 0, extra_target, 0, extra_rows)))


class GraphedLoss:
    """`sequence_loss` for one model and objective on a GPU: the encoder eager, then the
    decoder and the objective's translation terms for the batch's shape as CUDA graphs,
    captured when the shape is first met. A guided objective replays its guided term on
    every batch, with a matrix of zeros where a batch carries no links, so that one graph
    serves a shape whether or not it does.

    All shapes share one memory pool: their graphs run one after another, and what one
    keeps between its forward and backward replays is kept alive, so no other reuses it.
    Captures run on a forked random-number generator: the warm-up passes a capture
    makes draw no dropout masks from the run's own stream, which therefore does not
    depend on when shapes are first met (a resumed run meets them at other steps).
    """

    def __init__(self, model: RNNSearch, objective: Objective, longest_source: int):
        if objective.aligner is not None or not objective.translation:
            raise ValueError("the alignment module's terms are computed eagerly; this objective has them")
        self.model, self.objective, self.longest_source = model, objective, longest_source
        self.graphed: dict[tuple[int, ...], nn.Module] = {}
        self.pool = torch.cuda.graph_pool_handle()
        # The decoder's parameters gather their gradients in nodes made while capturing, on
        # the capture's stream, and kept by the graphs; the replayed backward pass hands
        # them gradients from the training stream. That costs a stream synchronisation, not
        # a wrong result, so autograd need not warn about it at every run.
        torch.autograd.graph.set_warn_on_accumulate_grad_stream_mismatch(False)

    def __call__(self, batch: Batch) -> tuple[torch.Tensor, int]:
        """Summed loss over the batch's target tokens, and how many there are."""
        annotations, summary = self.model.encoder(batch.src, batch.src_lengths)
        links = None
        if self.objective.guided_alignment_weight:
            shape = (annotations.size(0), batch.tgt_out.size(1), annotations.size(1))  # α's
            links = guide_links(batch, self.objective, shape)
            links = annotations.new_zeros(shape, dtype=torch.float32) if links is None else links
        inputs = fixed_shape_inputs(annotations, summary, batch, self.longest_source, links)
        shape = (*inputs[0].shape[:2], inputs[3].size(1))
        if shape not in self.graphed:
            self.graphed[shape] = self._capture(inputs)
        return self.graphed[shape](*inputs), batch.target_tokens

    def _capture(self, inputs: tuple[torch.Tensor, ...]) -> nn.Module:
        samples = tuple(t.detach().clone().requires_grad_(t.requires_grad) for t in inputs)
        with (
            garbage_collector_paused(),
            torch.random.fork_rng(devices=[inputs[0].device.index]),
            torch.enable_grad(),
        ):
            graphed = torch.cuda.make_graphed_callables(
                DecoderLoss(self.model, self.objective), samples, pool=self.pool, allow_unused_input=True
            )
            return cast(nn.Module, graphed)  # a module given, a module returned


def _round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple
