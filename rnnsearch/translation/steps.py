"""The tensors of attention, step by step, for given sentences: what docs/model.md §2
writes as equations, taken from the model while it runs.

    h_j   annotations    the encoder's output, [→h_j ; ←h_j]
    e_ij  energies       a(query_i, h_j), the alignment model's score
    α_ij  weights        softmax_j(e_ij), padding exactly 0
    c_i   contexts       Σ_j α_ij h_j
    s_i   states         the decoder's state after step i (its last layer's)

Nothing is computed here: the model encodes the sources (`RNNSearch.encode`) and its
decoder runs its own teacher-forced step loop (`model.wirings.step_by_step`, the
reference path that the fused and batched paths are tested against), reading the given
targets. The energies are the output of the alignment model's score module, read with
a forward hook while that loop runs, so no other path pays for them.

With Bahdanau's wiring (the paper's), step i attends with s_{i-1} (s_0 is
`initial_states`); with Luong's, it updates first and attends with s_i. The
fixed-context baseline (model.attention: none) has no energies and no weights, and its
context is the same c at every step.

    steps = rnnsearch.attention_steps(model, ["Ein Hund läuft.", "Ein Hund."])
    one = steps.sentence(0)       # unpadded: one.weights is (target pieces, source pieces)
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any, cast

import torch

from rnnsearch import kernels
from rnnsearch.arguments import checked_strings
from rnnsearch.decoding.inputs import END
from rnnsearch.errors import ArgumentTypeError, ArgumentValueError, UserError
from rnnsearch.model.attention import Attention
from rnnsearch.model.modes import evaluating
from rnnsearch.model.seq2seq import RNNSearch
from rnnsearch.model.wirings import step_by_step
from rnnsearch.text.batches import Batch, make_batch
from rnnsearch.translation.translator import Translator, check_source_lengths


@dataclass(frozen=True)
class AttentionSteps:
    """The step-by-step tensors of a batch of sentences (B of them), padded; fp32 on the CPU.

    annotations     h_j   (B, S, A)
    energies        e_ij  (B, T, S), or None without an alignment model; at padded
                    positions, what the score gives there, which the softmax masks
    weights         α_ij  (B, T, S), or None without an alignment model; each row sums
                    to 1 over the real positions and is exactly 0 at padding
    contexts        c_i   (B, T, A)
    states          s_i   (B, T, D), the decoder's last layer after step i
    initial_states  s_0   (B, D)
    padding               (B, S) True at padded source positions
    source_tokens, target_tokens: each sentence's pieces, </s> last (S_k and T_k of them)
    """

    annotations: torch.Tensor
    energies: torch.Tensor | None
    weights: torch.Tensor | None
    contexts: torch.Tensor
    states: torch.Tensor
    initial_states: torch.Tensor
    padding: torch.Tensor
    source_tokens: list[list[str]]
    target_tokens: list[list[str]]

    def sentence(self, k: int) -> AttentionSteps:
        """Sentence k alone, without padding: tensors (S_k, A), (T_k, S_k), … and token lists of one.

        k is an int (a NumPy integer too), from 0; a bool, a float or a str is refused."""
        if isinstance(k, bool) or not isinstance(k, numbers.Integral):
            raise ArgumentTypeError(f"k: expected an int, the index of a sentence, got {type(k).__name__}")
        k = int(k)
        if not 0 <= k < len(self.source_tokens):
            raise ArgumentValueError(f"k: {k} is not the index of one of {len(self.source_tokens)} sentences")
        s, t = len(self.source_tokens[k]), len(self.target_tokens[k])
        return AttentionSteps(
            annotations=self.annotations[k, :s],
            energies=None if self.energies is None else self.energies[k, :t, :s],
            weights=None if self.weights is None else self.weights[k, :t, :s],
            contexts=self.contexts[k, :t],
            states=self.states[k, :t],
            initial_states=self.initial_states[k],
            padding=self.padding[k, :s],
            source_tokens=[self.source_tokens[k]],
            target_tokens=[self.target_tokens[k]],
        )


def attention_steps(translator: Translator, sources: list[str], targets: list[str] | None = None) -> AttentionSteps:
    """The step-by-step tensors of `translator`'s model reading each source and, teacher-
    forced, its target: the given `targets`, or without them the model's own translations
    (as `translate` gives them, read back into pieces). One model on PyTorch, not an
    ensemble or an exported package; text, not speech."""
    if not isinstance(translator, Translator):
        raise ArgumentTypeError(
            f"translator: expected a Translator (rnnsearch.load(MODEL_DIR)), got {type(translator).__name__}"
        )
    model = translator.model
    if not isinstance(model, RNNSearch) or translator.src_subwords is None:
        raise UserError("attention_steps reads one text model on PyTorch: not an ensemble, a package or speech")
    sources = checked_strings(sources, "sources", example='a list such as ["Ein Hund."]')
    if targets is None:
        targets = [translation.text for translation in translator.translate(sources)]
    targets = checked_strings(targets, "targets", example='a list such as ["A dog."]')
    if len(targets) != len(sources) or not sources:
        raise ArgumentValueError(f"targets: {len(targets)} targets for {len(sources)} sources (at least one)")
    source_ids = translator.src_subwords.encode(sources)
    check_source_lengths(source_ids, translator.search.max_source_length)
    target_ids = translator.tgt_subwords.encode(targets)
    batch = make_batch(list(zip(source_ids, target_ids))).to(translator.device)
    steps: dict[str, Any] = decoder_steps(model, batch)
    return AttentionSteps(
        **steps,
        source_tokens=[translator.src_subwords.pieces(ids) + [END] for ids in source_ids],
        target_tokens=[translator.tgt_subwords.pieces(ids) + [END] for ids in target_ids],
    )


@torch.no_grad()
def decoder_steps(model: RNNSearch, batch: Batch) -> dict[str, torch.Tensor | None]:
    """The tensors of AttentionSteps for a batch, from the model in eval mode (dropout
    off) with the search's kernels; the model's mode is restored after."""
    energies: list[torch.Tensor] = []
    attention = model.decoder.attention
    hook = None
    if isinstance(attention, Attention):  # a model with an alignment model: its energies e_ij
        hook = attention.score.register_forward_hook(lambda module, inputs, output: energies.append(output))
    try:
        with evaluating(model), kernels.use(kernels.choose(batch.src.device, purpose="search")):
            state = model.encode(batch.src, batch.src_lengths)
            embedded = model.decoder.embedding(batch.tgt_in)
            states, contexts, weights, _ = step_by_step(model.decoder.wiring, model.decoder, embedded, state)
    finally:
        if hook is not None:
            hook.remove()
    return {
        "annotations": state.annotations.float().cpu(),
        "energies": torch.cat(energies, dim=1).float().cpu() if energies else None,
        "weights": None if weights[0] is None else torch.stack(cast(list[torch.Tensor], weights), 1).float().cpu(),
        "contexts": torch.stack(contexts, 1).float().cpu(),
        "states": torch.stack(states, 1).float().cpu(),
        "initial_states": state.top.float().cpu(),
        "padding": state.padding.cpu(),
    }
